/* The binary form of a class plan (acc_cplan.h): its head and its classes' programs, written
 * here; cplan_view.c reads them back, a rank at a time.  The layout is in schedules/FORMAT.md. */
#include "cplan_internal.h"

#include <string.h>

/* ---- integers ---------------------------------------------------------------------------- */

void cplan_put_u(acc_buf_t *b, uint64_t v)
{
    char out[10];
    size_t n = 0;
    do {
        out[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    acc_buf_append(b, out, n);
}

void cplan_put_i(acc_buf_t *b, int64_t v)
{
    cplan_put_u(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void fail(cplan_rd_t *r, const char *what, const char *why)
{
    if (!r->failed)
        snprintf(r->what, sizeof(r->what), "%s at byte %zu: %s", what, r->at, why);
    r->failed = 1;
}

uint64_t cplan_get_u(cplan_rd_t *r, const char *what)
{
    uint64_t v = 0;
    for (int shift = 0; !r->failed; shift += 7) {
        unsigned char c;
        if (r->at >= r->len) {
            fail(r, what, "the data ends there");
            break;
        }
        if (shift > 63) {
            fail(r, what, "a number longer than 64 bits");
            break;
        }
        c = r->p[r->at++];
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return v;
    }
    return 0;
}

int64_t cplan_get_i(cplan_rd_t *r, const char *what)
{
    uint64_t u = cplan_get_u(r, what);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

uint64_t cplan_get_max(cplan_rd_t *r, uint64_t max, const char *what)
{
    uint64_t v = cplan_get_u(r, what);
    if (v > max) {
        char why[64];
        snprintf(why, sizeof(why), "%llu, more than %llu", (unsigned long long)v,
                 (unsigned long long)max);
        fail(r, what, why);
        return 0;
    }
    return v;
}

/* ---- operations as fields ---------------------------------------------------------------- */

static int64_t *put_peer(int64_t *f, const acc_cpeer_t *p)
{
    *f++ = p->kind;
    for (int d = 0; d < ACC_CPLAN_MAX_DIMS; d++)
        *f++ = p->v[d];
    return f;
}

static int64_t *put_ref(int64_t *f, const acc_cref_t *r)
{
    *f++ = r->buf;
    *f++ = r->nterms;
    *f++ = r->base;
    *f++ = r->cnt;
    for (int t = 0; t < ACC_CREF_MAX_TERMS; t++) {
        *f++ = r->term[t].kind;
        *f++ = r->term[t].dim;
        *f++ = r->term[t].add;
        *f++ = r->term[t].coef;
    }
    return f;
}

void cplan_op_fields(const acc_cop_t *op, int64_t f[CPLAN_OP_FIELDS])
{
    int64_t *p = f;
    *p++ = op->code;
    *p++ = op->slot;
    p = put_peer(p, &op->peer);
    p = put_peer(p, &op->peer2);
    p = put_ref(p, &op->src);
    p = put_ref(p, &op->dst);
    *p++ = op->value;
    *p++ = op->peers_off;
    *p++ = op->npeers;
    *p++ = op->dep_lane;
    *p++ = op->dep_op;
    /* Version 2 on: the XOR terms' masks. */
    for (int t = 0; t < ACC_CREF_MAX_TERMS; t++)
        *p++ = op->src.term[t].mask;
    for (int t = 0; t < ACC_CREF_MAX_TERMS; t++)
        *p++ = op->dst.term[t].mask;
}

/* Field f into a field of the given range; 0 when it does not fit. */
#define TAKE(dst, lo, hi)                                                                          \
    do {                                                                                           \
        if (*f < (int64_t)(lo) || *f > (int64_t)(hi))                                              \
            return 0;                                                                              \
        (dst) = (__typeof__(dst))*f++;                                                             \
    } while (0)

static const int64_t *get_peer(const int64_t *f, acc_cpeer_t *p, int *ok)
{
    *ok = 0;
    TAKE(p->kind, 0, ACC_CPEER_XOR);
    for (int d = 0; d < ACC_CPLAN_MAX_DIMS; d++)
        TAKE(p->v[d], INT32_MIN, INT32_MAX);
    *ok = 1;
    return f;
}

static const int64_t *get_ref(const int64_t *f, acc_cref_t *r, int *ok)
{
    *ok = 0;
    TAKE(r->buf, 0, ACC_BUF_COUNT - 1);
    TAKE(r->nterms, 0, ACC_CREF_MAX_TERMS);
    TAKE(r->base, 0, UINT32_MAX);
    TAKE(r->cnt, 0, UINT32_MAX);
    for (int t = 0; t < ACC_CREF_MAX_TERMS; t++) {
        TAKE(r->term[t].kind, 0, ACC_CTERM_XOR);
        TAKE(r->term[t].dim, 0, ACC_CPLAN_MAX_DIMS - 1);
        TAKE(r->term[t].add, INT32_MIN, INT32_MAX);
        TAKE(r->term[t].coef, 0, UINT32_MAX);
    }
    *ok = 1;
    return f;
}

int cplan_op_from_fields(const int64_t fields[CPLAN_OP_FIELDS], acc_cop_t *op)
{
    const int64_t *f = fields;
    int ok;
    memset(op, 0, sizeof(*op));
    TAKE(op->code, 0, ACC_OP_COUNT - 1);
    TAKE(op->slot, 0, UINT16_MAX);
    if (!(f = get_peer(f, &op->peer, &ok)) || !ok || !(f = get_peer(f, &op->peer2, &ok)) || !ok ||
        !(f = get_ref(f, &op->src, &ok)) || !ok || !(f = get_ref(f, &op->dst, &ok)) || !ok)
        return 0;
    TAKE(op->value, 0, UINT32_MAX);
    TAKE(op->peers_off, 0, UINT32_MAX);
    TAKE(op->npeers, 0, UINT32_MAX);
    TAKE(op->dep_lane, -1, INT32_MAX);
    TAKE(op->dep_op, -1, INT32_MAX);
    /* Version 1's rows end here, and the rest of the fields are zero. */
    for (int t = 0; t < ACC_CREF_MAX_TERMS; t++)
        TAKE(op->src.term[t].mask, 0, UINT32_MAX);
    for (int t = 0; t < ACC_CREF_MAX_TERMS; t++)
        TAKE(op->dst.term[t].mask, 0, UINT32_MAX);
    return 1;
}

/* ---- programs ---------------------------------------------------------------------------- */

/* The peer an operation sends a message to, or NULL. */
static const acc_cpeer_t *send_peer(const acc_cop_t *op)
{
    switch (op->code) {
    case ACC_OP_SEND:
        return &op->peer;
    case ACC_OP_RECV_COPY_SEND:
    case ACC_OP_RECV_REDUCE_SEND:
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        return &op->peer2;
    default:
        return NULL;
    }
}

/* ---- rows of integers --------------------------------------------------------------------- */

void cplan_rows_begin(cplan_rows_put_t *w, acc_buf_t *b, int k)
{
    memset(w, 0, sizeof(*w));
    w->b = b;
    w->k = k;
}

static void flush_run(cplan_rows_put_t *w)
{
    if (w->run)
        cplan_put_u(w->b, w->run * 2 + 1);
    w->run = 0;
}

void cplan_rows_put(cplan_rows_put_t *w, const int64_t *row)
{
    int64_t d[CPLAN_OP_FIELDS];
    uint64_t mask = 0;
    for (int j = 0; j < w->k; j++)
        d[j] = (int64_t)((uint64_t)row[j] - (uint64_t)w->prev[j]);
    if (w->rows > 1 && memcmp(d, w->diff, (size_t)w->k * sizeof(int64_t)) == 0) {
        w->run++;
    } else {
        flush_run(w);
        for (int j = 0; j < w->k; j++)
            if (d[j])
                mask |= 1ull << j;
        cplan_put_u(w->b, 0);
        cplan_put_u(w->b, mask);
        for (int j = 0; j < w->k; j++)
            if (d[j])
                cplan_put_i(w->b, d[j]);
        memcpy(w->diff, d, (size_t)w->k * sizeof(int64_t));
    }
    memcpy(w->prev, row, (size_t)w->k * sizeof(int64_t));
    w->rows++;
}

void cplan_rows_end(cplan_rows_put_t *w)
{
    flush_run(w);
}

/* ---- programs ---------------------------------------------------------------------------- */

/* A program: its operation count, its operations as rows, then its flags, if any. */
static void encode_prog(const acc_cclass_t *k, const uint8_t *final, uint64_t version, acc_buf_t *b)
{
    cplan_rows_put_t w;
    int64_t row[CPLAN_OP_FIELDS];

    cplan_put_u(b, k->nops);
    cplan_rows_begin(&w, b, cplan_op_fields_of(version));
    for (uint32_t i = 0; i < k->nops; i++) {
        cplan_op_fields(&k->ops[i], row);
        cplan_rows_put(&w, row);
    }
    cplan_rows_end(&w);
    cplan_put_u(b, final != NULL);
    if (final) {
        unsigned char byte = 0;
        for (uint32_t i = 0; i < k->nops; i++) {
            byte |= (unsigned char)((final[i] ? 1 : 0) << (i % 8));
            if (i % 8 == 7 || i + 1 == k->nops) {
                acc_buf_append(b, (const char *)&byte, 1);
                byte = 0;
            }
        }
    }
}

/* ---- the head ---------------------------------------------------------------------------- */

static void put_cpeer(acc_buf_t *b, const acc_cplan_t *cp, const acc_cpeer_t *p)
{
    cplan_put_u(b, p->kind);
    if (p->kind == ACC_CPEER_REL || p->kind == ACC_CPEER_XOR)
        for (int d = 0; d < cp->ndims; d++)
            cplan_put_i(b, p->v[d]);
    else if (p->kind == ACC_CPEER_ABS)
        cplan_put_i(b, p->v[0]);
}

typedef struct {
    uint8_t sig;
    acc_cpeer_t peer;
    uint32_t chan, maxcnt, count;
} cedge_t;

static int same_peer(const acc_cpeer_t *a, const acc_cpeer_t *b)
{
    return a->kind == b->kind && memcmp(a->v, b->v, sizeof(a->v)) == 0;
}

/* A class's edges: each (peer as written, messages or signal slot) once. */
static acc_status_t class_edges(const acc_cclass_t *k, cedge_t **out, uint32_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    for (uint32_t i = 0; i < k->nops; i++) {
        const acc_cop_t *op = &k->ops[i];
        const acc_cpeer_t *to = send_peer(op);
        cedge_t e = {0, {0}, 0, 0, 1};
        uint32_t j;
        if (to && to->kind != ACC_CPEER_NONE) {
            e.peer = *to;
            e.maxcnt = plan_msg_chunks(op->code, op->src.cnt, op->dst.cnt);
        } else if (op->code == ACC_OP_SIGNAL && op->peer.kind != ACC_CPEER_NONE) {
            e.sig = 1;
            e.peer = op->peer;
            e.chan = op->slot;
        } else {
            continue;
        }
        for (j = 0; j < *n; j++)
            if ((*out)[j].sig == e.sig && (*out)[j].chan == e.chan &&
                same_peer(&(*out)[j].peer, &e.peer))
                break;
        if (j < *n) {
            (*out)[j].count++;
            if (e.maxcnt > (*out)[j].maxcnt)
                (*out)[j].maxcnt = e.maxcnt;
            continue;
        }
        if (acc_array_reserve((void **)out, &cap, *n + 1, sizeof(cedge_t)) != ACC_OK) {
            acc_mem_free(*out);
            *out = NULL;
            return acc_error_set(ACC_ERR_NOMEM, "out of memory encoding a class plan");
        }
        (*out)[(*n)++] = e;
    }
    return ACC_OK;
}

/* The smallest period p of a table (dividing n, with rank_of[i + p] = rank_of[i] + c): a
 * machine's nodes repeat one node's order. */
static uint32_t table_period(const int32_t *rank_of, uint32_t n, int64_t *c)
{
    for (uint32_t p = 1; p < n; p++) {
        uint32_t i;
        if (n % p)
            continue;
        *c = (int64_t)rank_of[p] - rank_of[0];
        for (i = 0; i + p < n && (int64_t)rank_of[i + p] - rank_of[i] == *c; i++)
            ;
        if (i + p == n)
            return p;
    }
    *c = 0;
    return n;
}

/* A lane's table: 0 for row major; else its period p, the step c between periods, and the
 * first period as runs (first rank, step, length) stored as rows. */
static void put_table(acc_buf_t *b, const acc_cplan_t *cp, const acc_clane_t *ln)
{
    uint32_t runs = 0, i, n = (uint32_t)cp->nranks, p;
    int64_t c;
    cplan_rows_put_t w;

    p = ln->rank_of ? table_period(ln->rank_of, n, &c) : 1;
    /* Row major, with a table or without: no table. */
    if (!ln->rank_of || (p == 1 && c == 1 && ln->rank_of[0] == 0)) {
        cplan_put_u(b, 0);
        return;
    }
    cplan_put_u(b, p);
    cplan_put_i(b, c);
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            cplan_put_u(b, runs);
            cplan_rows_begin(&w, b, 3);
        }
        for (i = 0; i < p;) {
            uint32_t len = 1;
            int64_t step = i + 1 < p ? (int64_t)ln->rank_of[i + 1] - ln->rank_of[i] : 1;
            while (i + len < p && (int64_t)ln->rank_of[i + len] - ln->rank_of[i + len - 1] == step)
                len++;
            if (pass) {
                int64_t row[3] = {ln->rank_of[i], step, len};
                cplan_rows_put(&w, row);
            } else {
                runs++;
            }
            i += len;
        }
    }
    cplan_rows_end(&w);
}

static void put_str(acc_buf_t *b, const char *s)
{
    size_t n = strlen(s);
    cplan_put_u(b, n);
    acc_buf_append(b, s, n);
}

static int any_peer_op(const acc_cplan_t *cp)
{
    for (int l = 0; l < cp->nlanes; l++)
        for (uint32_t c = 0; c < cp->lanes[l].nclasses; c++)
            for (uint32_t i = 0; i < cp->lanes[l].classes[c].nops; i++)
                if (plan_peer_memory_op(cp->lanes[l].classes[c].ops[i].code))
                    return 1;
    return 0;
}

static acc_status_t encode_head(const acc_cplan_t *cp, const acc_cplan_bin_t *bin, uint64_t version,
                                acc_buf_t *b)
{
    uint32_t i = 0;
    acc_status_t st = ACC_OK;
    acc_buf_append(b, CPLAN_BIN_MAGIC, 4);
    cplan_put_u(b, version);
    cplan_put_u(b, (uint64_t)cp->coll);
    cplan_put_u(b, (uint64_t)cp->nranks);
    cplan_put_i(b, cp->root);
    put_str(b, cp->algo);
    put_str(b, cp->params);
    cplan_put_u(b, cp->in_chunks);
    cplan_put_u(b, cp->out_chunks);
    cplan_put_u(b, cp->scratch_chunks);
    cplan_put_u(b, (uint64_t)cp->nlanes);
    cplan_put_u(b, (uint64_t)cp->slots);
    cplan_put_u(b, (uint64_t)cp->proto);
    cplan_put_u(b, (uint64_t)(cp->inplace != 0));
    cplan_put_u(b, (uint64_t)any_peer_op(cp));
    cplan_put_u(b, (uint64_t)cp->ndims);
    for (int d = 0; d < cp->ndims; d++) {
        cplan_put_u(b, (uint64_t)cp->dims[d]);
        cplan_put_u(b, (uint64_t)cp->sym_step[d]);
    }
    cplan_put_u(b, cp->npeer_pool);
    for (uint32_t j = 0; j < cp->npeer_pool; j++)
        cplan_put_u(b, cp->peer_pool[j]);
    for (int l = 0; l < cp->nlanes && st == ACC_OK; l++) {
        const acc_clane_t *ln = &cp->lanes[l];
        put_table(b, cp, ln);
        cplan_put_u(b, ln->nclasses);
        for (uint32_t c = 0; c < ln->nclasses && st == ACC_OK; c++, i++) {
            const acc_cclass_t *k = &ln->classes[c];
            uint64_t digest = acc_fnv1a64(bin->progs[i].data, bin->progs[i].len);
            cedge_t *e = NULL;
            uint32_t ne = 0;
            for (int d = 0; d < cp->ndims; d++) {
                cplan_put_u(b, (uint64_t)k->lo[d]);
                cplan_put_u(b, (uint64_t)k->hi[d]);
            }
            cplan_put_u(b, k->nops);
            cplan_put_u(b, digest);
            if ((st = class_edges(k, &e, &ne)) != ACC_OK)
                break;
            cplan_put_u(b, ne);
            for (uint32_t j = 0; j < ne; j++) {
                cplan_put_u(b, e[j].sig);
                put_cpeer(b, cp, &e[j].peer);
                cplan_put_u(b, e[j].sig ? e[j].chan : e[j].maxcnt);
                cplan_put_u(b, e[j].count);
            }
            acc_mem_free(e);
        }
    }
    return st;
}

/* ---- the whole --------------------------------------------------------------------------- */

/* Class c's flags from the explicit plan's, when each of its points has the same ones. */
static const uint8_t *class_finals(const acc_cplan_t *cp, const acc_plan_t *expl, int lane,
                                   uint32_t c, const uint8_t *all, const size_t *first)
{
    const acc_cclass_t *k = &cp->lanes[lane].classes[c];
    const uint8_t *seen = NULL;
    for (uint64_t i = 0; i < cplan_box_volume(cp, k); i++) {
        int r = acc_cplan_rank(cp, lane, cplan_box_point(cp, k, i));
        const uint8_t *mine = all + first[(size_t)r * expl->nlanes + lane];
        if (acc_plan_prog(expl, r, lane)->nops != k->nops || (seen && memcmp(seen, mine, k->nops)))
            return NULL;
        seen = mine;
    }
    return seen;
}

void acc_cplan_bin_free(acc_cplan_bin_t *bin)
{
    if (!bin)
        return;
    acc_buf_free(&bin->head);
    for (uint32_t i = 0; bin->progs && i < bin->nprogs; i++)
        acc_buf_free(&bin->progs[i]);
    acc_mem_free(bin->progs);
    acc_mem_free(bin->lane);
    acc_mem_free(bin->cls);
    memset(bin, 0, sizeof(*bin));
}

acc_status_t acc_cplan_encode(const acc_cplan_t *cp, const acc_plan_t *expl, acc_cplan_bin_t *out)
{
    uint8_t *all = NULL;
    size_t nall = 0, *first = NULL;
    uint32_t n = 0, i = 0;
    uint64_t version = cplan_translates_all(cp) ? 1 : 2; /* the oldest that holds it */
    acc_status_t st;

    memset(out, 0, sizeof(*out));
    acc_buf_init(&out->head);
    for (int l = 0; l < cp->nlanes; l++)
        n += cp->lanes[l].nclasses;
    if (expl && (expl->nranks != cp->nranks || expl->nlanes != cp->nlanes || expl->view))
        return acc_error_set(ACC_ERR_INVALID, "encoding %s: the explicit plan is not its expansion",
                             cp->algo);
    /* The flags are a whole plan's; without them an average divides at the end of a call. */
    if (expl && acc_coll_reduces(expl->coll) &&
        (st = acc_plan_final_reductions(expl, &all, &nall)) != ACC_OK) {
        if (st != ACC_ERR_UNSUPPORTED)
            return st;
        all = NULL;
    }
    if (all) {
        size_t at = 0;
        if (!(first = acc_mem_calloc((size_t)expl->nranks * expl->nlanes + 1, sizeof(size_t)))) {
            st = acc_error_set(ACC_ERR_NOMEM, "out of memory encoding a class plan");
            goto out;
        }
        for (size_t j = 0; j < (size_t)expl->nranks * expl->nlanes; j++) {
            first[j] = at;
            at += expl->progs[j].nops;
        }
    }
    out->progs = acc_mem_calloc(n + 1, sizeof(acc_buf_t));
    out->lane = acc_mem_calloc(n + 1, sizeof(int));
    out->cls = acc_mem_calloc(n + 1, sizeof(uint32_t));
    if (!out->progs || !out->lane || !out->cls) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory encoding a class plan");
        goto out;
    }
    for (int l = 0; l < cp->nlanes; l++)
        for (uint32_t c = 0; c < cp->lanes[l].nclasses; c++, i++) {
            acc_buf_init(&out->progs[i]);
            out->lane[i] = l;
            out->cls[i] = c;
            out->nprogs = i + 1;
            encode_prog(&cp->lanes[l].classes[c],
                        all ? class_finals(cp, expl, l, c, all, first) : NULL, version,
                        &out->progs[i]);
            if ((st = acc_buf_status(&out->progs[i])) != ACC_OK)
                goto out;
        }
    if ((st = encode_head(cp, out, version, &out->head)) == ACC_OK)
        st = acc_buf_status(&out->head);
out:
    acc_mem_free(all);
    acc_mem_free(first);
    if (st != ACC_OK)
        acc_cplan_bin_free(out);
    return st;
}

acc_status_t acc_cplan_bin_hash(const acc_cplan_bin_t *bin, char hash[ACC_SHA256_HEX_LEN + 1])
{
    acc_sha256_t *h = NULL;
    uint8_t digest[ACC_SHA256_LEN];
    acc_status_t st;

    if ((st = acc_sha256_create(&h)) != ACC_OK)
        return st;
    acc_sha256_update(h, bin->head.data, bin->head.len);
    for (uint32_t i = 0; i < bin->nprogs; i++)
        acc_sha256_update(h, bin->progs[i].data, bin->progs[i].len);
    st = acc_sha256_final(h, digest);
    acc_sha256_destroy(h);
    if (st == ACC_OK)
        acc_hex_encode(digest, sizeof(digest), hash);
    return st;
}

acc_status_t acc_cplan_hash(const acc_cplan_t *cp, char hash[ACC_SHA256_HEX_LEN + 1])
{
    acc_cplan_bin_t bin;
    acc_status_t st = acc_cplan_encode(cp, NULL, &bin);
    if (st != ACC_OK)
        return st;
    st = acc_cplan_bin_hash(&bin, hash);
    acc_cplan_bin_free(&bin);
    return st;
}
