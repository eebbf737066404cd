/* The verifier's execution of a plan: every lane of every rank runs its operations in order,
 * blocking as acc_plan.h says (a dependency not yet completed, an empty incoming connection, a
 * full outgoing one, a counter below the value waited for), and each operation moves symbolic
 * values between chunks.
 *
 * Every blocking condition, once true, stays true until the blocked lane itself acts (a
 * connection has one sending and one receiving lane, counters only grow, completed operations
 * stay completed), so whether a plan deadlocks, and what each operation sees, does not depend on
 * the order in which lanes are run: one run decides for all schedules, given that conflicting
 * memory accesses are ordered (plan_verify_order.c checks that on the way). */
#include "plan_verify_internal.h"

#include <string.h>

enum { STEP_DONE = 1, STEP_BLOCKED = 2 };

static acc_status_t nomem(void)
{
    return acc_error_set(ACC_ERR_NOMEM, "out of memory verifying a plan");
}

static uint64_t conn_key(int from, int to, int lane)
{
    return ((uint64_t)(uint32_t)from << 36) | ((uint64_t)(uint32_t)to << 10) | (uint32_t)lane;
}

static uint64_t ctr_key(const pv_t *v, int from, int to, uint32_t slot)
{
    return (((uint64_t)(uint32_t)from * (uint32_t)v->nranks + (uint32_t)to) << 16) | slot;
}

static int sends(unsigned code)
{
    return code == ACC_OP_SEND || code == ACC_OP_RECV_COPY_SEND ||
           code == ACC_OP_RECV_REDUCE_SEND || code == ACC_OP_RECV_REDUCE_COPY_SEND;
}

static int receives(unsigned code)
{
    return code >= ACC_OP_RECV && code <= ACC_OP_RECV_REDUCE_COPY_SEND;
}

/* On a quotient, a connection from a rank outside the period is its translate's from inside:
 * (from, to) moved back by from's distance s from the period (*shift: what the receiver moves
 * the messages by). */
static void conn_norm(const pv_t *v, int *from, int *to, uint32_t *shift)
{
    int s = v->quot ? *from - *from % v->nexec : 0;
    if (v->quot && v->quot->xor_mode) { /* rank 0 alone: (from, to) is (0, to ^ from) moved */
        *shift = (uint32_t)*from;
        *to ^= *from;
        *from = 0;
        return;
    }
    *shift = (uint32_t)s;
    *from -= s;
    *to = (int)(((int64_t)*to - s + v->nranks) % v->nranks);
}

/* The connection for (from, to, lane), created on first sight. */
static acc_status_t conn_at(pv_t *v, int from, int to, int lane, size_t *cap, uint32_t *out)
{
    uint32_t shift;
    uint64_t key;
    conn_norm(v, &from, &to, &shift);
    key = conn_key(from, to, lane);
    uint32_t c = pv_map_get(&v->conn_map, key);
    acc_status_t st;
    if (c == PV_NONE) {
        void *p = v->conns;
        if (acc_array_reserve(&p, cap, (size_t)v->nconns + 1, sizeof(pv_conn_t)) != ACC_OK)
            return nomem();
        v->conns = p;
        c = v->nconns++;
        memset(&v->conns[c], 0, sizeof(pv_conn_t));
        v->conns[c].from = from;
        v->conns[c].to = to;
        v->conns[c].lane = lane;
        /* The one rank of the period that receives on it: to's translate. */
        v->conns[c].rto = to % v->nexec;
        v->conns[c].shift =
            v->quot && v->quot->xor_mode
                ? (uint32_t)(v->conns[c].rto ^ to)
                : (uint32_t)(((int64_t)v->conns[c].rto - to + v->nranks) % v->nranks);
        if ((st = pv_map_put(&v->conn_map, key, c)) != ACC_OK)
            return st;
    }
    *out = c;
    return ACC_OK;
}

static acc_status_t ctr_at(pv_t *v, int from, int to, uint32_t slot, size_t *cap, uint32_t *out)
{
    uint64_t key = ctr_key(v, from, to, slot);
    uint32_t c = pv_map_get(&v->ctr_map, key);
    acc_status_t st;
    if (c == PV_NONE) {
        void *p = v->ctrs;
        if (acc_array_reserve(&p, cap, (size_t)v->nctrs + 1, sizeof(pv_counter_t)) != ACC_OK)
            return nomem();
        v->ctrs = p;
        c = v->nctrs++;
        memset(&v->ctrs[c], 0, sizeof(pv_counter_t));
        v->ctrs[c].from = from;
        v->ctrs[c].to = to;
        v->ctrs[c].slot = slot;
        v->ctrs[c].lane0 = PV_NONE;
        if ((st = pv_map_put(&v->ctr_map, key, c)) != ACC_OK)
            return st;
    }
    *out = c;
    return ACC_OK;
}

/* Count sends per connection and signals per counter (and per lane when several lanes signal
 * one counter); allocate message rings of min(slots, sends) entries. */
static acc_status_t index_plan(pv_t *v)
{
    size_t t, nthr = (size_t)v->nexec * v->nlanes, ccap = 0, kcap = 0;
    uint32_t i, c;
    acc_status_t st;

    for (t = 0; t < nthr; t++) {
        const acc_lane_prog_t *prog = &v->plan->progs[t];
        int r = (int)(t / v->nlanes), l = (int)(t % v->nlanes);
        for (i = 0; i < prog->nops; i++) {
            const acc_op_t *o = &prog->ops[i];
            if (receives(o->code)) {
                if ((st = conn_at(v, o->peer, r, l, &ccap, &c)) != ACC_OK)
                    return st;
                v->conns[c].nrecv++;
            }
            if (sends(o->code)) {
                int to = o->code == ACC_OP_SEND ? o->peer : o->peer2;
                if ((st = conn_at(v, r, to, l, &ccap, &c)) != ACC_OK)
                    return st;
                v->conns[c].nsend++;
            }
            if (o->code == ACC_OP_WAIT &&
                (st = ctr_at(v, o->peer, r, o->slot, &kcap, &c)) != ACC_OK)
                return st;
            if (o->code == ACC_OP_SIGNAL) {
                pv_counter_t *ct;
                if ((st = ctr_at(v, r, o->peer, o->slot, &kcap, &c)) != ACC_OK)
                    return st;
                ct = &v->ctrs[c];
                if (ct->lane0 == PV_NONE)
                    ct->lane0 = (uint32_t)l;
                if (!ct->lane_nsig && ct->lane0 != (uint32_t)l) {
                    if (!(ct->lane_nsig = acc_mem_calloc((size_t)v->nlanes, sizeof(uint32_t))))
                        return nomem();
                    ct->lane_nsig[ct->lane0] = ct->nsig;
                }
                if (ct->lane_nsig)
                    ct->lane_nsig[l]++;
                ct->nsig++;
            }
        }
    }
    for (c = 0; c < v->nconns; c++) {
        pv_conn_t *cn = &v->conns[c];
        cn->cap = cn->nsend < (uint32_t)v->plan->slots ? cn->nsend : (uint32_t)v->plan->slots;
        if (!cn->cap)
            cn->cap = 1;
        if (!(cn->ring = acc_mem_calloc(cn->cap, sizeof(pv_msg_t))))
            return nomem();
    }
    for (c = 0; c < v->nctrs; c++)
        if (v->ctrs[c].nsig &&
            !(v->ctrs[c].snap_lane = acc_mem_alloc(v->ctrs[c].nsig * sizeof(uint32_t))))
            return nomem();
    return ACC_OK;
}

acc_status_t pv_sim_setup(pv_t *v)
{
    size_t nthr = (size_t)v->nexec * v->nlanes;
    v->thr = acc_mem_calloc(nthr, sizeof(pv_thread_t));
    v->queue = acc_mem_alloc(nthr * sizeof(uint32_t));
    if (!v->thr || !v->queue)
        return nomem();
    return index_plan(v);
}

void pv_sim_free(pv_t *v)
{
    uint32_t c, k;
    for (c = 0; c < v->nconns; c++) {
        pv_conn_t *cn = &v->conns[c];
        for (k = 0; k < cn->len; k++) {
            pv_msg_t *m = &cn->ring[(cn->head + k) % cn->cap];
            if (m->vals != &m->one)
                acc_mem_free(m->vals);
        }
        acc_mem_free(cn->ring);
    }
    for (c = 0; c < v->nctrs; c++) {
        acc_mem_free(v->ctrs[c].lane_nsig);
        acc_mem_free(v->ctrs[c].snap_lane);
    }
    acc_mem_free(v->conns);
    acc_mem_free(v->ctrs);
    pv_map_free(&v->conn_map);
    pv_map_free(&v->ctr_map);
    acc_mem_free(v->thr);
    acc_mem_free(v->queue);
    acc_mem_free(v->xbuf);
}

/* ---- scheduling ----------------------------------------------------------------------------- */

static void wake(pv_t *v, size_t t)
{
    pv_thread_t *th = &v->thr[t];
    if (th->state != PV_BLOCKED)
        return;
    th->state = PV_RUNNABLE;
    if (!th->queued) {
        th->queued = 1;
        v->queue[(v->qhead + v->qlen++) % ((size_t)v->nexec * v->nlanes)] = (uint32_t)t;
    }
}

static size_t tid(const pv_t *v, int rank, int lane)
{
    return (size_t)rank * v->nlanes + lane;
}

static int block(pv_t *v, int rank, int lane, uint8_t why, uint32_t on)
{
    pv_thread_t *th = &v->thr[tid(v, rank, lane)];
    th->state = PV_BLOCKED;
    th->why = why;
    th->on = on;
    return STEP_BLOCKED;
}

/* ---- values ------------------------------------------------------------------------------- */

/* One operand of a reduction, for messages. */
typedef struct {
    int msg_from; /* >= 0: a message from this rank; -2: the running sum of reduce_peers */
    int at;
    acc_ref_t ref;
    uint32_t k;
} opnd_t;

static void describe_opnd(const pv_t *v, const opnd_t *o, acc_buf_t *b)
{
    if (o->msg_from >= 0) {
        acc_buf_printf(b, "the message from rank %d", o->msg_from);
        return;
    }
    if (o->msg_from == -2) {
        acc_buf_printf(b, "the sum of %s[%u] over the peers before rank %d",
                       acc_buf_name((acc_bufid_t)o->ref.buf), o->ref.off + o->k, o->at);
        return;
    }
    acc_buf_printf(b, "%s[%u]", acc_buf_name((acc_bufid_t)o->ref.buf), o->ref.off + o->k);
    if (o->at != -1)
        acc_buf_printf(b, " of rank %d", o->at);
}

/* a (+) b, failing on nothing written, on different chunks and on a duplicate contribution. */
static acc_status_t reduce(pv_t *v, int rank, int lane, uint32_t op, uint32_t a, const opnd_t *oa,
                           uint32_t b, const opnd_t *ob, uint32_t *out)
{
    acc_buf_t m;
    acc_status_t st = ACC_OK;
    int overlap;

    acc_buf_init(&m);
    if (!a || !b) {
        describe_opnd(v, !a ? oa : ob, &m);
        st = pv_fail(v, rank, lane, op, "reduces %s, which holds nothing (never written)",
                     m.data ? m.data : "");
    } else if (pv_value_chunk(&v->values, a) != pv_value_chunk(&v->values, b)) {
        describe_opnd(v, oa, &m);
        acc_buf_printf(&m, " (in[%u]) with ", pv_value_chunk(&v->values, a));
        describe_opnd(v, ob, &m);
        acc_buf_printf(&m, " (in[%u])", pv_value_chunk(&v->values, b));
        st = pv_fail(v, rank, lane, op,
                     "combines %s: a reduction must combine contributions "
                     "to one chunk",
                     m.data ? m.data : "");
    } else {
        *out = pv_value_union(&v->values, a, b, &overlap);
        if (overlap) {
            uint32_t dup = pv_value_common(&v->values, a, b);
            acc_buf_printf(&m, "adds rank %u's in[%u] twice: ", dup, pv_value_chunk(&v->values, a));
            describe_opnd(v, oa, &m);
            acc_buf_puts(&m, " holds ranks ");
            pv_value_ranks(&v->values, a, &m);
            acc_buf_puts(&m, ", ");
            describe_opnd(v, ob, &m);
            acc_buf_puts(&m, " holds ranks ");
            pv_value_ranks(&v->values, b, &m);
            st = pv_fail(v, rank, lane, op, "%s", m.data ? m.data : "");
        } else if (*out == PV_NONE) {
            st = nomem();
        }
    }
    acc_buf_free(&m);
    return st;
}

static acc_status_t rd(pv_t *v, int rank, int lane, uint32_t op, int at, acc_ref_t ref, uint32_t k,
                       uint32_t *val)
{
    acc_status_t st = pv_order_access(v, rank, lane, op, at, ref.buf, ref.off + k, 0);
    *val = pv_loc(v, at, ref.buf, ref.off + k)->val;
    return st;
}

static acc_status_t wr(pv_t *v, int rank, int lane, uint32_t op, int at, acc_ref_t ref, uint32_t k,
                       uint32_t val)
{
    acc_status_t st = pv_order_access(v, rank, lane, op, at, ref.buf, ref.off + k, 1);
    pv_loc(v, at, ref.buf, ref.off + k)->val = val;
    return st;
}

/* Record whether a reduction of operation i produced a complete value (every rank's). */
static void note_final(pv_t *v, int r, int l, uint32_t i, uint32_t val)
{
    if (v->finals)
        v->finals[v->final_base[(size_t)r * v->nlanes + l] + i] |=
            pv_value_is_all(&v->values, val, (uint32_t)v->nranks) ? PV_FINAL_ALL : PV_FINAL_PART;
}

/* ---- messages ------------------------------------------------------------------------------- */

static acc_status_t push(pv_t *v, uint32_t c, uint32_t op, const uint32_t *vals, uint32_t cnt)
{
    pv_conn_t *cn = &v->conns[c];
    pv_msg_t *m = &cn->ring[(cn->head + cn->len) % cn->cap];
    m->cnt = cnt;
    m->op = op;
    if (cnt == 1) {
        m->one = vals[0];
        m->vals = &m->one;
    } else {
        if (!(m->vals = acc_mem_alloc((size_t)cnt * sizeof(uint32_t))))
            return nomem();
        memcpy(m->vals, vals, (size_t)cnt * sizeof(uint32_t));
    }
    cn->len++;
    wake(v, tid(v, cn->rto, cn->lane));
    return ACC_OK;
}

static void pop(pv_t *v, uint32_t c)
{
    pv_conn_t *cn = &v->conns[c];
    pv_msg_t *m = &cn->ring[cn->head];
    if (m->vals != &m->one)
        acc_mem_free(m->vals);
    m->vals = NULL;
    cn->head = (cn->head + 1) % cn->cap;
    cn->len--;
    wake(v, tid(v, cn->from, cn->lane));
}

/* The connection for (from, to, lane), which index_plan made. */
static uint32_t conn_find(const pv_t *v, int from, int to, int lane)
{
    uint32_t shift;
    conn_norm(v, &from, &to, &shift);
    return pv_map_get(&v->conn_map, conn_key(from, to, lane));
}

/* Chunk c of buf at a rank, in what the rank `shift` ranks on holds (a quotient's map applied
 * shift / period times, or its inverse the other way round). */
static uint32_t moved_chunk(const pv_t *v, uint8_t buf, uint32_t c, uint32_t shift)
{
    if (v->quot->xor_mode) {
        for (int k = 0; shift; k++, shift >>= 1)
            if (shift & 1)
                c ^= v->quot->xmask[buf][k];
        return c;
    }
    uint32_t turns = (uint32_t)(v->nranks / v->nexec), q = shift / (uint32_t)v->nexec, k;
    int back = q > turns / 2;
    for (k = back ? turns - q : q; k > 0; k--)
        c = (back ? v->quot->inv : v->quot->perm)[buf][c];
    return c;
}

/* The message at the head of connection c as its receiver sees it.  On a quotient its sender
 * may be a translate: the message is then the one the period's rank sent, its values moved by
 * the connection's shift and put in the order of the chunks they stand for at the translate
 * (the range of the sending operation, moved, is the translate's range). */
static acc_status_t received(pv_t *v, uint32_t c, const uint32_t **vals)
{
    const pv_conn_t *cn = &v->conns[c];
    const pv_msg_t *m = &cn->ring[cn->head];
    const acc_op_t *so;
    acc_ref_t ref;
    uint32_t k, lo = UINT32_MAX, *pos = v->xbuf + m->cnt;

    *vals = m->vals;
    if (!cn->shift)
        return ACC_OK;
    so = pv_op(v, cn->from, cn->lane, m->op);
    ref = so->code == ACC_OP_RECV_COPY_SEND ? so->dst : so->src;
    for (k = 0; k < m->cnt; k++) {
        pos[k] = moved_chunk(v, ref.buf, ref.off + k, cn->shift);
        if (pos[k] < lo)
            lo = pos[k];
    }
    for (k = 0; k < m->cnt; k++) {
        uint32_t val = m->vals[k], j = pos[k] - lo;
        if (j >= m->cnt)
            return acc_error_set(ACC_ERR_INTERNAL,
                                 "the quotient's map does not carry rank %d lane %d op %u's "
                                 "chunks onto a range",
                                 cn->from, cn->lane, m->op);
        if (val) {
            uint32_t ch = moved_chunk(v, ACC_BUF_IN, pv_value_chunk(&v->values, val), cn->shift);
            val = v->quot->xor_mode ? pv_value_xored(&v->values, val, ch, cn->shift)
                                    : pv_value_moved(&v->values, val, ch, cn->shift);
            if (val == PV_NONE)
                return nomem();
        }
        v->xbuf[j] = val;
    }
    *vals = v->xbuf;
    return ACC_OK;
}

/* ---- one operation ------------------------------------------------------------------------ */

/* Execute the data movement of operation i (all its conditions hold).  tmp holds cnt values. */
static acc_status_t move(pv_t *v, int r, int l, uint32_t i, const acc_op_t *o, uint32_t cin,
                         uint32_t cout, uint32_t *tmp)
{
    const acc_plan_t *p = v->plan;
    acc_status_t st = ACC_OK;
    const pv_msg_t *m = NULL;
    const uint32_t *mv = NULL;
    uint32_t k, j, cnt = 0, a;
    opnd_t om = {-1, -1, {0, 0, 0}, 0}, os = {-1, -1, {0, 0, 0}, 0};

    if (cin != PV_NONE) {
        m = &v->conns[cin].ring[v->conns[cin].head];
        cnt = o->code == ACC_OP_RECV_REDUCE_SEND ? o->src.cnt : o->dst.cnt;
        if (m->cnt != cnt) {
            acc_buf_t b;
            acc_buf_init(&b);
            pv_describe_op(v, v->conns[cin].from, l, m->op, &b);
            st = pv_fail(v, r, l, i, "receives %u chunks but the matching send, %s, sends %u", cnt,
                         b.data ? b.data : "", m->cnt);
            acc_buf_free(&b);
            return st;
        }
        om.msg_from = o->peer;
        if ((st = received(v, cin, &mv)) != ACC_OK)
            return st;
    }
    os.ref = o->src;
    switch (o->code) {
    case ACC_OP_SEND:
        for (k = 0; k < o->src.cnt && !st; k++)
            st = rd(v, r, l, i, r, o->src, k, &tmp[k]);
        if (!st)
            st = push(v, cout, i, tmp, o->src.cnt);
        return st;
    case ACC_OP_RECV:
    case ACC_OP_RECV_COPY_SEND:
        for (k = 0; k < cnt && !st; k++)
            st = wr(v, r, l, i, r, o->dst, k, tmp[k] = mv[k]);
        break;
    case ACC_OP_RECV_REDUCE_COPY:
    case ACC_OP_RECV_REDUCE_SEND:
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        for (k = 0; k < cnt && !st; k++) {
            os.k = k;
            if ((st = rd(v, r, l, i, r, o->src, k, &a)) == ACC_OK &&
                (st = reduce(v, r, l, i, a, &os, mv[k], &om, &tmp[k])) == ACC_OK) {
                note_final(v, r, l, i, tmp[k]);
                if (o->code != ACC_OP_RECV_REDUCE_SEND)
                    st = wr(v, r, l, i, r, o->dst, k, tmp[k]);
            }
        }
        break;
    case ACC_OP_COPY:
        for (k = 0; k < o->src.cnt && !st; k++)
            if ((st = rd(v, r, l, i, r, o->src, k, &a)) == ACC_OK)
                st = wr(v, r, l, i, r, o->dst, k, a);
        return st;
    case ACC_OP_REDUCE:
        for (k = 0; k < o->src.cnt && !st; k++) {
            opnd_t od = {-1, -1, o->dst, k};
            uint32_t d;
            os.k = k;
            if ((st = rd(v, r, l, i, r, o->src, k, &a)) == ACC_OK &&
                (st = rd(v, r, l, i, r, o->dst, k, &d)) == ACC_OK &&
                (st = reduce(v, r, l, i, d, &od, a, &os, &tmp[k])) == ACC_OK) {
                note_final(v, r, l, i, tmp[k]);
                st = wr(v, r, l, i, r, o->dst, k, tmp[k]);
            }
        }
        return st;
    case ACC_OP_PUT:
        for (k = 0; k < o->src.cnt && !st; k++)
            if ((st = rd(v, r, l, i, r, o->src, k, &a)) == ACC_OK)
                st = wr(v, r, l, i, o->peer, o->dst, k, a);
        return st;
    case ACC_OP_GET:
        for (k = 0; k < o->src.cnt && !st; k++)
            if ((st = rd(v, r, l, i, o->peer, o->src, k, &a)) == ACC_OK)
                st = wr(v, r, l, i, r, o->dst, k, a);
        return st;
    case ACC_OP_REDUCE_PEERS:
        for (k = 0; k < o->src.cnt && !st; k++) {
            opnd_t oa = {-1, 0, o->src, k};
            uint32_t acc = 0;
            for (j = 0; j < o->npeers && !st; j++) {
                int at = (int)p->peer_pool[o->peers_off + j];
                os.at = at;
                os.k = k;
                if ((st = rd(v, r, l, i, at, o->src, k, &a)) != ACC_OK)
                    break;
                if (j == 0) {
                    acc = a;
                    oa.at = at;
                    if (!a) /* let reduce() say that it holds nothing */
                        st = reduce(v, r, l, i, a, &os, 1, &os, &acc);
                    continue;
                }
                if (j > 1) {
                    oa.msg_from = -2;
                    oa.at = at;
                }
                st = reduce(v, r, l, i, acc, &oa, a, &os, &acc);
            }
            if (!st && o->npeers > 1)
                note_final(v, r, l, i, acc);
            if (!st)
                st = wr(v, r, l, i, r, o->dst, k, acc);
        }
        return st;
    default:
        return ACC_OK;
    }
    if (!st && cout != PV_NONE)
        st = push(v, cout, i, tmp, cnt);
    if (!st)
        pop(v, cin);
    return st;
}

static acc_status_t step(pv_t *v, int r, int l, uint32_t *tmp, int *res)
{
    pv_thread_t *th = &v->thr[tid(v, r, l)];
    const acc_op_t *o = pv_op(v, r, l, th->pc);
    uint32_t i = th->pc, cin = PV_NONE, cout = PV_NONE, c = PV_NONE;
    acc_status_t st;
    int t;

    if (o->dep_lane >= 0 && o->dep_lane != l &&
        v->thr[tid(v, r, o->dep_lane)].pc <= (uint32_t)o->dep_op) {
        v->thr[tid(v, r, o->dep_lane)].dep_waiters = 1;
        *res = block(v, r, l, PV_WHY_DEP, (uint32_t)o->dep_lane);
        return ACC_OK;
    }
    if (receives(o->code)) {
        cin = conn_find(v, o->peer, r, l);
        if (!v->conns[cin].len) {
            *res = block(v, r, l, PV_WHY_RECV, cin);
            return ACC_OK;
        }
    }
    if (sends(o->code)) {
        cout = conn_find(v, r, o->code == ACC_OP_SEND ? o->peer : o->peer2, l);
        if (v->conns[cout].len == v->conns[cout].cap) {
            *res = block(v, r, l, PV_WHY_SEND, cout);
            return ACC_OK;
        }
    }
    if (o->code == ACC_OP_WAIT || o->code == ACC_OP_SIGNAL) {
        int from = o->code == ACC_OP_WAIT ? o->peer : r, to = o->code == ACC_OP_WAIT ? r : o->peer;
        c = pv_map_get(&v->ctr_map, ctr_key(v, from, to, o->slot));
        if (o->code == ACC_OP_WAIT && v->ctrs[c].value < o->value) {
            *res = block(v, r, l, PV_WHY_WAIT, c);
            return ACC_OK;
        }
    }
    pv_order_begin(v, r, l, i);
    if (o->dep_lane >= 0 && o->dep_lane != l)
        pv_order_dep(v, r, l, o->dep_lane, (uint32_t)o->dep_op);
    if (o->code == ACC_OP_WAIT)
        pv_order_wait(v, r, l, c, o->value);
    if ((st = move(v, r, l, i, o, cin, cout, tmp)) != ACC_OK)
        return st;
    if (o->code == ACC_OP_SIGNAL) {
        pv_order_signal(v, r, l, c);
        v->ctrs[c].value++;
        for (t = 0; t < v->nlanes; t++)
            if (v->thr[tid(v, o->peer, t)].why == PV_WHY_WAIT)
                wake(v, tid(v, o->peer, t));
    }
    th->pc++;
    if ((st = pv_order_end(v, r, l, i)) != ACC_OK)
        return st;
    if (th->dep_waiters)
        for (t = 0; t < v->nlanes; t++) {
            pv_thread_t *w = &v->thr[tid(v, r, t)];
            if (w->state == PV_BLOCKED && w->why == PV_WHY_DEP && w->on == (uint32_t)l)
                wake(v, tid(v, r, t));
        }
    *res = STEP_DONE;
    return ACC_OK;
}

/* ---- deadlock and leftovers -------------------------------------------------------------- */

/* What thread t waits for, appended to b; returns the thread it waits on, or PV_NONE when that
 * can never come (and says why). */
static uint32_t waits_for(const pv_t *v, size_t t, acc_buf_t *b)
{
    int r = (int)(t / v->nlanes), l = (int)(t % v->nlanes), q;
    const pv_thread_t *th = &v->thr[t];
    const acc_op_t *o = pv_op(v, r, l, th->pc);
    const pv_conn_t *cn;
    const pv_counter_t *ct;
    uint32_t i;

    switch (th->why) {
    case PV_WHY_DEP:
        acc_buf_puts(b, "waits for ");
        pv_describe_op(v, r, o->dep_lane, (uint32_t)o->dep_op, b);
        return (uint32_t)tid(v, r, o->dep_lane);
    case PV_WHY_RECV:
        cn = &v->conns[th->on];
        acc_buf_printf(b, "waits for a message from rank %d lane %d", cn->from, l);
        if (v->thr[tid(v, cn->from, l)].state == PV_DONE) {
            acc_buf_printf(b,
                           ", which has finished: it sends %u messages on this connection and "
                           "%u are received by then",
                           cn->nsend, cn->nsend);
            return PV_NONE;
        }
        return (uint32_t)tid(v, cn->from, l);
    case PV_WHY_SEND:
        cn = &v->conns[th->on];
        acc_buf_printf(b,
                       "waits for a free slot toward rank %d lane %d (%u messages in flight, "
                       "slots %d)",
                       cn->to, l, cn->len, v->plan->slots);
        if (v->thr[tid(v, cn->rto, l)].state == PV_DONE) {
            acc_buf_printf(b,
                           ", which has finished: it receives %u of the %u messages sent on "
                           "this connection",
                           cn->nrecv, cn->nsend);
            return PV_NONE;
        }
        return (uint32_t)tid(v, cn->rto, l);
    case PV_WHY_WAIT:
        ct = &v->ctrs[th->on];
        acc_buf_printf(b, "waits for the counter from rank %d slot %u to reach %u (it is at %u)",
                       ct->from, ct->slot, o->value, ct->value);
        for (q = 0; q < v->nlanes; q++) {
            size_t u = tid(v, ct->from, q);
            const acc_lane_prog_t *prog = &v->plan->progs[u];
            if (v->thr[u].state == PV_DONE)
                continue;
            for (i = v->thr[u].pc; i < prog->nops; i++)
                if (prog->ops[i].code == ACC_OP_SIGNAL && prog->ops[i].peer == r &&
                    prog->ops[i].slot == ct->slot)
                    return (uint32_t)u;
        }
        acc_buf_printf(b, ", but no signal to it remains (the plan signals it %u times)", ct->nsig);
        return PV_NONE;
    default:
        return PV_NONE;
    }
}

static acc_status_t report_deadlock(pv_t *v)
{
    size_t nthr = (size_t)v->nexec * v->nlanes, t, first = nthr, blocked = 0;
    uint32_t *seen = NULL, *path = NULL, n = 0, cur, next, start, k;
    acc_buf_t b;
    acc_status_t st;

    for (t = 0; t < nthr; t++)
        if (v->thr[t].state != PV_DONE) {
            blocked++;
            if (first == nthr)
                first = t;
        }
    seen = acc_mem_calloc(nthr, sizeof(uint32_t));
    path = acc_mem_alloc(nthr * sizeof(uint32_t));
    if (!seen || !path) {
        acc_mem_free(seen);
        acc_mem_free(path);
        return nomem();
    }
    /* Follow "waits on" from the first blocked lane until a lane repeats (a cycle) or the wait
     * can never end (a lane stuck for good). */
    cur = (uint32_t)first;
    while (cur != PV_NONE && !seen[cur] && v->thr[cur].state != PV_DONE) {
        acc_buf_t scratch;
        seen[cur] = ++n;
        path[n - 1] = cur;
        acc_buf_init(&scratch);
        next = waits_for(v, cur, &scratch);
        acc_buf_free(&scratch);
        cur = next;
    }
    start = (cur != PV_NONE && seen[cur]) ? seen[cur] - 1 : 0;
    acc_buf_init(&b);
    acc_buf_puts(&b, (cur != PV_NONE && seen[cur]) ? "deadlock, a cycle of waits: " : "deadlock: ");
    for (k = start; k < n; k++) {
        if (k - start == 8) {
            acc_buf_printf(&b, "; ... (%u more)", n - k);
            break;
        }
        if (k > start)
            acc_buf_puts(&b, "; ");
        pv_describe_op(v, (int)(path[k] / v->nlanes), (int)(path[k] % v->nlanes),
                       v->thr[path[k]].pc, &b);
        acc_buf_puts(&b, " ");
        waits_for(v, path[k], &b);
    }
    acc_buf_printf(&b, " (%zu of %zu lanes blocked)", blocked, nthr);
    st = acc_error_set(ACC_ERR_VERIFY, "%s", b.data ? b.data : "deadlock");
    acc_buf_free(&b);
    acc_mem_free(seen);
    acc_mem_free(path);
    return st;
}

static acc_status_t report_leftovers(pv_t *v)
{
    uint32_t c;
    for (c = 0; c < v->nconns; c++) {
        const pv_conn_t *cn = &v->conns[c];
        if (!cn->len)
            continue;
        return pv_fail(v, cn->from, cn->lane, cn->ring[cn->head].op,
                       "its message is never received: rank %d lane %d receives %u of the %u "
                       "messages rank %d sends it on lane %d",
                       cn->to, cn->lane, cn->nrecv, cn->nsend, cn->from, cn->lane);
    }
    return ACC_OK;
}

acc_status_t pv_sim_run(pv_t *v)
{
    size_t nthr = (size_t)v->nexec * v->nlanes, t;
    uint32_t *tmp = NULL, maxcnt = 1;
    acc_status_t st = ACC_OK;
    int res;

    for (t = 0; t < nthr; t++) {
        const acc_lane_prog_t *prog = &v->plan->progs[t];
        uint32_t i;
        for (i = 0; i < prog->nops; i++) {
            if (prog->ops[i].src.cnt > maxcnt)
                maxcnt = prog->ops[i].src.cnt;
            if (prog->ops[i].dst.cnt > maxcnt)
                maxcnt = prog->ops[i].dst.cnt;
        }
        v->thr[t].state = PV_RUNNABLE;
        v->thr[t].queued = 1;
        v->queue[t] = (uint32_t)t;
    }
    v->qhead = 0;
    v->qlen = nthr;
    if (!(tmp = acc_mem_alloc((size_t)maxcnt * sizeof(uint32_t))) ||
        !(v->xbuf = acc_mem_alloc((size_t)2 * maxcnt * sizeof(uint32_t)))) {
        acc_mem_free(tmp);
        return nomem();
    }
    while (v->qlen && st == ACC_OK) {
        int r, l;
        t = v->queue[v->qhead];
        v->qhead = (v->qhead + 1) % nthr;
        v->qlen--;
        v->thr[t].queued = 0;
        r = (int)(t / v->nlanes);
        l = (int)(t % v->nlanes);
        while (v->thr[t].state == PV_RUNNABLE) {
            if (v->thr[t].pc == v->plan->progs[t].nops) {
                v->thr[t].state = PV_DONE;
                break;
            }
            if ((st = step(v, r, l, tmp, &res)) != ACC_OK)
                break;
        }
    }
    acc_mem_free(tmp);
    if (st != ACC_OK)
        return st;
    for (t = 0; t < nthr; t++)
        if (v->thr[t].state != PV_DONE)
            return report_deadlock(v);
    return report_leftovers(v);
}
