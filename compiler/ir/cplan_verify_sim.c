/*
 * Symbolic execution of one point of a lane (cplan_verify_internal.h).  The plan is invariant
 * under every translation of the grid, so all points run in lock step through the same states,
 * each the translate of point 0's: point 0 is run alone, and the message it receives from
 * offset d is its own matching send towards -d translated by d (the values' source points moved
 * by d, their chunks permuted as the input's digits say).  A value is the input chunk it holds
 * and the set of points that contributed it, as disjoint boxes of cyclic intervals, so that a
 * sum over 131,072 ranks is one box, not a list.  Message passing on a lane is a network of
 * deterministic processes over FIFOs: if the lock step stops, every schedule stops, which is
 * the deadlock the explicit verifier would find.
 */
#include "cplan_verify_internal.h"

#include <string.h>

typedef struct {
    int32_t s[ACC_CPLAN_MAX_DIMS], len[ACC_CPLAN_MAX_DIMS];
} cv_box_t;

typedef struct {
    uint32_t chunk, nbox, first;
} cv_val_t;

/* Messages between point 0 and the point at offset `off`: the values sent towards it (in
 * order, msg_at[j] the first of message j's msg_cnt[j]) and how many were received from it. */
typedef struct {
    uint32_t off;
    uint32_t nsent, nrecv;
    uint32_t *vals, nvals, capv;
    uint32_t *msg_at, *msg_cnt, *msg_op, capm;
} cv_conn_t;

typedef struct {
    const cv_lane_t *L;
    const acc_cplan_t *cp;
    cv_val_t *vals;
    uint32_t nvals, capvals;
    cv_box_t *boxes;
    uint32_t nboxes, capboxes;
    uint32_t *loc[ACC_BUF_COUNT];
    uint32_t psize[ACC_BUF_COUNT];
    cv_conn_t *conns;
    uint32_t nconns, capconns;
    uint32_t pc;
    int rank0;
} cv_sim_t;

static acc_status_t nomem(void)
{
    return acc_error_set(ACC_ERR_NOMEM, "out of memory proving a class plan");
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
    uint32_t c = *cap ? *cap : 16;
    void *q;
    if (need <= *cap)
        return 1;
    while (c < need)
        c *= 2;
    if (!(q = acc_mem_realloc_array(*p, c, size)))
        return 0;
    *p = q;
    *cap = c;
    return 1;
}

static acc_status_t fail(const cv_sim_t *S, const char *fmt, ...) ACC_PRINTF(2, 3);
static acc_status_t fail(const cv_sim_t *S, const char *fmt, ...)
{
    char text[512];
    const acc_cop_t *o = &S->L->cls->ops[S->pc];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    return acc_error_set(ACC_ERR_VERIFY, "lane %d op %u (%s), at every point (rank %d first): %s",
                         S->L->lane, S->pc, acc_op_name((acc_opcode_t)o->code), S->rank0, text);
}

/* ---- values ---------------------------------------------------------------------------------- */

static uint32_t new_val(cv_sim_t *S, uint32_t chunk, const cv_box_t *b, uint32_t n)
{
    cv_val_t *v;
    if (!grow((void **)&S->vals, &S->capvals, S->nvals + 1, sizeof(cv_val_t)) ||
        !grow((void **)&S->boxes, &S->capboxes, S->nboxes + n, sizeof(cv_box_t)))
        return 0;
    v = &S->vals[S->nvals];
    v->chunk = chunk;
    v->nbox = n;
    v->first = S->nboxes;
    if (n) /* value 0 has no box, and the box array may not exist yet */
        memcpy(&S->boxes[S->nboxes], b, (size_t)n * sizeof(cv_box_t));
    S->nboxes += n;
    return S->nvals++;
}

static int cyc_meet(int32_t as, int32_t al, int32_t bs, int32_t bl, int32_t m)
{
    int32_t ab = ((bs - as) % m + m) % m, ba = ((as - bs) % m + m) % m;
    return ab < al || ba < bl;
}

static int boxes_meet(const acc_cplan_t *cp, const cv_box_t *a, const cv_box_t *b)
{
    int d;
    for (d = 0; d < cp->ndims; d++)
        if (!cyc_meet(a->s[d], a->len[d], b->s[d], b->len[d], cp->dims[d]))
            return 0;
    return 1;
}

/* Two boxes that differ in one dimension only, where they abut, become one. */
static int merge(const acc_cplan_t *cp, cv_box_t *a, const cv_box_t *b)
{
    int d, k = -1;
    for (d = 0; d < cp->ndims; d++) {
        if (a->s[d] == b->s[d] && a->len[d] == b->len[d])
            continue;
        if (k >= 0)
            return 0;
        k = d;
    }
    if (k < 0 || a->len[k] + b->len[k] > cp->dims[k])
        return 0;
    if ((a->s[k] + a->len[k]) % cp->dims[k] == b->s[k]) {
        a->len[k] += b->len[k];
        return 1;
    }
    if ((b->s[k] + b->len[k]) % cp->dims[k] == a->s[k]) {
        a->s[k] = b->s[k];
        a->len[k] += b->len[k];
        return 1;
    }
    return 0;
}

/* The union of values a and b of one chunk; 0 with *dup set when a point is in both. */
static uint32_t val_union(cv_sim_t *S, uint32_t a, uint32_t b, int *dup)
{
    const acc_cplan_t *cp = S->cp;
    cv_box_t tmp[64];
    uint32_t na = S->vals[a].nbox, nb = S->vals[b].nbox, n, i, j;
    const cv_box_t *A = &S->boxes[S->vals[a].first], *B = &S->boxes[S->vals[b].first];
    int again = 1;

    *dup = 0;
    for (i = 0; i < na; i++)
        for (j = 0; j < nb; j++)
            if (boxes_meet(cp, &A[i], &B[j])) {
                *dup = 1;
                return 0;
            }
    if (na + nb > sizeof(tmp) / sizeof(tmp[0]))
        return 0;
    memcpy(tmp, A, na * sizeof(cv_box_t));
    memcpy(tmp + na, B, nb * sizeof(cv_box_t));
    n = na + nb;
    while (again) {
        again = 0;
        for (i = 0; i < n && !again; i++)
            for (j = i + 1; j < n && !again; j++)
                if (merge(cp, &tmp[i], &tmp[j])) {
                    tmp[j] = tmp[--n];
                    again = 1;
                }
    }
    return new_val(S, S->vals[a].chunk, tmp, n);
}

/* The value v as the point at offset t holds it. */
static uint32_t val_translate(cv_sim_t *S, uint32_t v, uint32_t t)
{
    const acc_cplan_t *cp = S->cp;
    cv_box_t tmp[64];
    uint32_t n = S->vals[v].nbox, i, y = t;
    int32_t off[ACC_CPLAN_MAX_DIMS];
    int d;

    if (!v || !t)
        return v;
    for (d = cp->ndims - 1; d >= 0; d--) {
        off[d] = (int32_t)(y % (uint32_t)cp->dims[d]);
        y /= (uint32_t)cp->dims[d];
    }
    if (n > sizeof(tmp) / sizeof(tmp[0]))
        return 0;
    memcpy(tmp, &S->boxes[S->vals[v].first], n * sizeof(cv_box_t));
    for (i = 0; i < n; i++)
        for (d = 0; d < cp->ndims; d++)
            tmp[i].s[d] = (tmp[i].s[d] + off[d]) % cp->dims[d];
    return new_val(S, cv_permute(S->L, ACC_BUF_IN, S->vals[v].chunk, t), tmp, n);
}

static uint64_t volume(const cv_sim_t *S, uint32_t v)
{
    uint64_t total = 0, b;
    uint32_t i;
    int d;
    for (i = 0; i < S->vals[v].nbox; i++) {
        const cv_box_t *x = &S->boxes[S->vals[v].first + i];
        for (b = 1, d = 0; d < S->cp->ndims; d++)
            b *= (uint64_t)x->len[d];
        total += b;
    }
    return total;
}

/* Is v exactly {point}? */
static int val_single(const cv_sim_t *S, uint32_t v, uint32_t point)
{
    const cv_box_t *x = &S->boxes[S->vals[v].first];
    int d;
    if (volume(S, v) != 1)
        return 0;
    for (d = S->cp->ndims - 1; d >= 0; d--) {
        if ((uint32_t)x->s[d] != point % (uint32_t)S->cp->dims[d])
            return 0;
        point /= (uint32_t)S->cp->dims[d];
    }
    return 1;
}

/* ---- memory of point 0 -------------------------------------------------------------------- */

/* Storage and chunk of logical chunk c of buf at point 0 (acc_plan.h, "In place"). */
static uint32_t *loc(cv_sim_t *S, uint8_t buf, uint32_t c)
{
    const acc_cplan_t *cp = S->cp;
    if (S->L->inplace && buf != ACC_BUF_SCRATCH) {
        if (cp->coll == ACC_COLL_REDUCE_SCATTER)
            return buf == ACC_BUF_OUT ? &S->loc[ACC_BUF_IN][(uint32_t)S->rank0 * cp->out_chunks + c]
                                      : &S->loc[ACC_BUF_IN][c];
        if (buf == ACC_BUF_IN)
            return cp->coll == ACC_COLL_ALLGATHER
                       ? &S->loc[ACC_BUF_OUT][(uint32_t)S->rank0 * cp->in_chunks + c]
                       : &S->loc[ACC_BUF_OUT][c];
    }
    return &S->loc[buf][c];
}

static acc_status_t setup(cv_sim_t *S)
{
    const acc_cplan_t *cp = S->cp;
    cv_box_t self;
    uint32_t i;
    int b, d;

    S->psize[ACC_BUF_IN] = cp->in_chunks;
    S->psize[ACC_BUF_OUT] = cp->out_chunks;
    S->psize[ACC_BUF_SCRATCH] = cp->scratch_chunks;
    for (b = 0; b < ACC_BUF_COUNT; b++)
        if (!(S->loc[b] = acc_mem_calloc((size_t)S->psize[b] + 1, sizeof(uint32_t))))
            return nomem();
    /* Value 0 is "nothing written". */
    memset(&self, 0, sizeof(self));
    for (d = 0; d < ACC_CPLAN_MAX_DIMS; d++)
        self.len[d] = 1;
    if (!new_val(S, 0, &self, 0) && S->nvals != 1)
        return nomem();
    for (i = 0; i < cp->in_chunks; i++) {
        uint32_t v = new_val(S, i, &self, 1);
        if (!v)
            return nomem();
        *loc(S, ACC_BUF_IN, i) = v;
    }
    return ACC_OK;
}

/* ---- connections -------------------------------------------------------------------------- */

static cv_conn_t *conn(cv_sim_t *S, uint32_t off)
{
    uint32_t i;
    for (i = 0; i < S->nconns; i++)
        if (S->conns[i].off == off)
            return &S->conns[i];
    if (!grow((void **)&S->conns, &S->capconns, S->nconns + 1, sizeof(cv_conn_t)))
        return NULL;
    memset(&S->conns[S->nconns], 0, sizeof(cv_conn_t));
    S->conns[S->nconns].off = off;
    return &S->conns[S->nconns++];
}

static acc_status_t push(cv_sim_t *S, cv_conn_t *c, const uint32_t *vals, uint32_t cnt)
{
    uint32_t *a, *b;
    if (!grow((void **)&c->vals, &c->capv, c->nvals + cnt, sizeof(uint32_t)) ||
        !grow((void **)&c->msg_at, &c->capm, c->nsent + 1, sizeof(uint32_t)))
        return nomem();
    if (!(a = acc_mem_realloc_array(c->msg_cnt, c->capm, sizeof(uint32_t))))
        return nomem();
    c->msg_cnt = a;
    if (!(b = acc_mem_realloc_array(c->msg_op, c->capm, sizeof(uint32_t))))
        return nomem();
    c->msg_op = b;
    memcpy(c->vals + c->nvals, vals, cnt * sizeof(uint32_t));
    c->msg_at[c->nsent] = c->nvals;
    c->msg_cnt[c->nsent] = cnt;
    c->msg_op[c->nsent] = S->pc;
    c->nvals += cnt;
    c->nsent++;
    return ACC_OK;
}

/* ---- one operation --------------------------------------------------------------------------- */

static int receives(unsigned code)
{
    return code == ACC_OP_RECV || code == ACC_OP_RECV_REDUCE_COPY ||
           code == ACC_OP_RECV_COPY_SEND || code == ACC_OP_RECV_REDUCE_SEND ||
           code == ACC_OP_RECV_REDUCE_COPY_SEND;
}

static int sends(unsigned code)
{
    return code == ACC_OP_SEND || code == ACC_OP_RECV_COPY_SEND ||
           code == ACC_OP_RECV_REDUCE_SEND || code == ACC_OP_RECV_REDUCE_COPY_SEND;
}

static acc_status_t reduce(cv_sim_t *S, uint32_t a, uint32_t b, uint32_t *out)
{
    int dup;
    if (!a || !b)
        return fail(S, "reduces a chunk that holds nothing (never written)");
    if (S->vals[a].chunk != S->vals[b].chunk)
        return fail(S,
                    "combines in[%u] with in[%u]: a reduction must combine contributions to "
                    "one chunk",
                    S->vals[a].chunk, S->vals[b].chunk);
    *out = val_union(S, a, b, &dup);
    if (dup)
        return fail(S, "adds a contribution to in[%u] twice", S->vals[a].chunk);
    return *out ? ACC_OK : nomem();
}

/* Source and destination of a local operation are the same chunks or disjoint ones. */
static int partial_overlap(cv_sim_t *S, acc_ref_t s, acc_ref_t d)
{
    uint32_t *s0 = loc(S, s.buf, s.off), *d0 = loc(S, d.buf, d.off);
    int same =
        S->L->inplace ? (s.buf == ACC_BUF_SCRATCH) == (d.buf == ACC_BUF_SCRATCH) : s.buf == d.buf;
    if (!same || (s0 == d0 && s.cnt == d.cnt))
        return 0;
    return s0 < d0 + d.cnt && d0 < s0 + s.cnt;
}

/* The range whose values an operation sends: the source of send and recv_reduce_send, the
 * destination of the forwarding forms that write one. */
static const acc_cref_t *sent_range(const acc_cop_t *o)
{
    return o->code == ACC_OP_SEND || o->code == ACC_OP_RECV_REDUCE_SEND ? &o->src : &o->dst;
}

/* Value k of message m from offset d: the sender at d read its range's chunk k, which is
 * point 0's chunk pi_{-d} of it, the j-th of point 0's own send. */
static acc_status_t message_value(cv_sim_t *S, const cv_conn_t *in, uint32_t m, uint32_t d,
                                  uint32_t k, uint32_t *out)
{
    const acc_cplan_t *cp = S->cp;
    const acc_cref_t *r = sent_range(&S->L->cls->ops[in->msg_op[m]]);
    uint32_t j = k, v;
    if (in->msg_cnt[m] > 1 && d) {
        uint32_t mine = acc_cplan_ref_at(cp, S->L->lane, 0, r).off;
        uint32_t theirs = acc_cplan_ref_at(cp, S->L->lane, d, r).off + k;
        j = cv_permute(S->L, r->buf, theirs, cv_negate(cp, d)) - mine;
        if (j >= in->msg_cnt[m])
            return acc_error_set(ACC_ERR_INTERNAL,
                                 "class proof: lane %d op %u's range is not carried onto itself",
                                 S->L->lane, in->msg_op[m]);
    }
    v = in->vals[in->msg_at[m] + j];
    *out = val_translate(S, v, d);
    return v && !*out ? nomem() : ACC_OK;
}

static acc_status_t step(cv_sim_t *S, uint32_t *tmp)
{
    const acc_cplan_t *cp = S->cp;
    const acc_cop_t *o = &S->L->cls->ops[S->pc];
    acc_ref_t src = acc_cplan_ref_at(cp, S->L->lane, 0, &o->src);
    acc_ref_t dst = acc_cplan_ref_at(cp, S->L->lane, 0, &o->dst);
    cv_conn_t *in = NULL, *from = NULL, *out = NULL, *back = NULL;
    uint32_t cnt = 0, k, d = 0, e = 0, a, m = 0;
    acc_status_t st = ACC_OK;

    if (o->dst.cnt && dst.buf == ACC_BUF_IN && !S->L->inplace)
        return fail(S, "writes the input buffer, which a collective must leave unchanged out "
                       "of place");
    if (o->src.cnt && o->dst.cnt && src.cnt != dst.cnt)
        return fail(S, "src has %u chunks but dst %u", src.cnt, dst.cnt);
    if (o->src.cnt && o->dst.cnt && partial_overlap(S, src, dst))
        return fail(S, "src and dst overlap in part");
    if (receives(o->code)) {
        d = cv_offset(cp, &o->peer);
        if (!(in = conn(S, cv_negate(cp, d))) || !(from = conn(S, d)))
            return nomem();
        if (in->nsent <= from->nrecv)
            return fail(S,
                        "deadlock: every point waits for a message from the point at offset "
                        "%u, which never sends it",
                        d);
        m = from->nrecv;
        cnt = o->code == ACC_OP_RECV_REDUCE_SEND ? src.cnt : dst.cnt;
        if (in->msg_cnt[m] != cnt)
            return fail(S, "receives %u chunks but the matching send sends %u", cnt,
                        in->msg_cnt[m]);
    }
    if (sends(o->code)) {
        e = cv_offset(cp, o->code == ACC_OP_SEND ? &o->peer : &o->peer2);
        if (!(out = conn(S, e)) || !(back = conn(S, cv_negate(cp, e))))
            return nomem();
        if (in && (!(in = conn(S, cv_negate(cp, d))) || !(from = conn(S, d))))
            return nomem();
        if (out->nsent - back->nrecv >= (uint32_t)cp->slots)
            return fail(S,
                        "deadlock: every point's connection to offset %u is full (%d slots) "
                        "and nobody receives",
                        e, cp->slots);
    }
    switch (o->code) {
    case ACC_OP_SEND:
        for (k = 0; k < src.cnt; k++)
            tmp[k] = *loc(S, src.buf, src.off + k);
        return push(S, out, tmp, src.cnt);
    case ACC_OP_COPY:
        for (k = 0; k < src.cnt; k++)
            tmp[k] = *loc(S, src.buf, src.off + k);
        for (k = 0; k < src.cnt; k++)
            *loc(S, dst.buf, dst.off + k) = tmp[k];
        return ACC_OK;
    case ACC_OP_REDUCE:
        for (k = 0; k < src.cnt && st == ACC_OK; k++)
            if ((st = reduce(S, *loc(S, dst.buf, dst.off + k), *loc(S, src.buf, src.off + k),
                             &a)) == ACC_OK)
                *loc(S, dst.buf, dst.off + k) = a;
        return st;
    default:
        break;
    }
    /* The received values are the sender's: point 0's own send, translated by d. */
    for (k = 0; k < cnt && st == ACC_OK; k++) {
        uint32_t t;
        if ((st = message_value(S, in, m, d, k, &t)) != ACC_OK)
            return st;
        if (o->code == ACC_OP_RECV || o->code == ACC_OP_RECV_COPY_SEND)
            tmp[k] = t;
        else
            st = reduce(S, *loc(S, src.buf, src.off + k), t, &tmp[k]);
    }
    if (st != ACC_OK)
        return st;
    if (o->code != ACC_OP_RECV_REDUCE_SEND)
        for (k = 0; k < cnt; k++)
            *loc(S, dst.buf, dst.off + k) = tmp[k];
    from->nrecv++;
    return out ? push(S, out, tmp, cnt) : ACC_OK;
}

/* ---- the postcondition ------------------------------------------------------------------------
 */

/* Is out chunk k this lane's to check: written by it, or (lane 0) by no lane, when it keeps
 * what it held at the start? */
static int owns(const cv_sim_t *S, uint32_t k)
{
    const cv_lane_t *L = S->L;
    uint8_t s = cv_storage(S->cp, L->inplace, ACC_BUF_OUT);
    int32_t w = L->owner[(size_t)s * L->owner_size + cv_key(L, ACC_BUF_OUT, k) % L->owner_size];
    return w == L->lane || (w == -1 && L->lane == 0);
}

static acc_status_t check_post(cv_sim_t *S)
{
    const acc_cplan_t *cp = S->cp;
    int reduces = acc_coll_reduces(cp->coll);
    uint32_t k, chunk, v, C;
    uint32_t src = 0;

    for (k = 0; k < cp->out_chunks; k++) {
        v = *loc(S, ACC_BUF_OUT, k);
        if (cp->coll == ACC_COLL_ALLGATHER) {
            C = cp->in_chunks;
            chunk = k % C;
            src = acc_cplan_point(cp, S->L->lane, (int)(k / C));
        } else {
            chunk =
                cp->coll == ACC_COLL_REDUCE_SCATTER ? (uint32_t)S->rank0 * cp->out_chunks + k : k;
        }
        if (!owns(S, k))
            continue;
        if (!v || S->vals[v].chunk != chunk ||
            (reduces ? volume(S, v) != (uint64_t)cp->nranks : !val_single(S, v, src)))
            return acc_error_set(ACC_ERR_VERIFY,
                                 "lane %d: chunk out[%u] of rank %d (and its translates) does "
                                 "not hold %s in[%u]%s",
                                 S->L->lane, k, S->rank0,
                                 reduces ? "the sum over every rank of" : "the right rank's", chunk,
                                 v ? "" : " (it holds nothing)");
    }
    return ACC_OK;
}

acc_status_t cv_sim_lane(const cv_lane_t *L)
{
    cv_sim_t S;
    uint32_t *tmp = NULL, maxcnt = 1, i;
    acc_status_t st;
    int b;

    memset(&S, 0, sizeof(S));
    S.L = L;
    S.cp = L->cp;
    S.rank0 = acc_cplan_rank(L->cp, L->lane, 0);
    for (i = 0; i < L->cls->nops; i++) {
        if (L->cls->ops[i].src.cnt > maxcnt)
            maxcnt = L->cls->ops[i].src.cnt;
        if (L->cls->ops[i].dst.cnt > maxcnt)
            maxcnt = L->cls->ops[i].dst.cnt;
    }
    if (!(tmp = acc_mem_alloc((size_t)maxcnt * sizeof(uint32_t)))) {
        st = nomem();
        goto out;
    }
    if ((st = setup(&S)) != ACC_OK)
        goto out;
    for (S.pc = 0; S.pc < L->cls->nops && st == ACC_OK; S.pc++)
        st = step(&S, tmp);
    if (st != ACC_OK)
        goto out;
    /* Every message sent is received: none is left in a connection at the end. */
    for (i = 0; i < S.nconns && st == ACC_OK; i++) {
        cv_conn_t *back = conn(&S, cv_negate(S.cp, S.conns[i].off));
        if (!back)
            st = nomem();
        else if (S.conns[i].nsent != back->nrecv)
            st = acc_error_set(ACC_ERR_VERIFY,
                               "lane %d: every point sends %u messages to offset %u, which "
                               "receives %u of them",
                               L->lane, S.conns[i].nsent, S.conns[i].off, back->nrecv);
    }
    if (st == ACC_OK)
        st = check_post(&S);
out:
    for (i = 0; i < S.nconns; i++) {
        acc_mem_free(S.conns[i].vals);
        acc_mem_free(S.conns[i].msg_at);
        acc_mem_free(S.conns[i].msg_cnt);
        acc_mem_free(S.conns[i].msg_op);
    }
    acc_mem_free(S.conns);
    for (b = 0; b < ACC_BUF_COUNT; b++)
        acc_mem_free(S.loc[b]);
    acc_mem_free(S.vals);
    acc_mem_free(S.boxes);
    acc_mem_free(tmp);
    return st;
}
