/* The class plan object (acc_cplan.h): building, rank tables, and concrete forms at a point. */
#include "cplan_internal.h"

#include <string.h>

static int64_t grid_size(int ndims, const int32_t *dims)
{
    int64_t n = 1;
    int d;
    for (d = 0; d < ndims; d++)
        n *= dims[d];
    return n;
}

acc_status_t acc_cplan_create(acc_coll_t coll, int ndims, const int32_t *dims, int nlanes,
                              uint32_t in_chunks, uint32_t out_chunks, uint32_t scratch_chunks,
                              acc_cplan_t **out)
{
    acc_cplan_t *cp;
    int64_t n;
    int d;

    *out = NULL;
    if (ndims < 1 || ndims > ACC_CPLAN_MAX_DIMS)
        return acc_error_set(ACC_ERR_INVALID, "class plan: %d grid dimensions (1 to %d)", ndims,
                             ACC_CPLAN_MAX_DIMS);
    for (d = 0; d < ndims; d++)
        if (dims[d] < 1)
            return acc_error_set(ACC_ERR_INVALID, "class plan: grid dimension %d is %d", d,
                                 dims[d]);
    n = grid_size(ndims, dims);
    if (n > INT32_MAX || nlanes < 1)
        return acc_error_set(ACC_ERR_INVALID, "class plan: %lld ranks x %d lanes", (long long)n,
                             nlanes);
    if (!(cp = acc_mem_calloc(1, sizeof(*cp))) ||
        !(cp->lanes = acc_mem_calloc((size_t)nlanes, sizeof(acc_clane_t)))) {
        acc_mem_free(cp);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a class plan");
    }
    cp->coll = coll;
    cp->nranks = (int)n;
    cp->root = -1;
    cp->nlanes = nlanes;
    cp->slots = 8;
    cp->in_chunks = in_chunks;
    cp->out_chunks = out_chunks;
    cp->scratch_chunks = scratch_chunks;
    cp->ndims = ndims;
    for (d = 0; d < ndims; d++)
        cp->dims[d] = dims[d];
    *out = cp;
    return ACC_OK;
}

void acc_cplan_destroy(acc_cplan_t *cp)
{
    int l;
    uint32_t c;
    if (!cp)
        return;
    for (l = 0; l < cp->nlanes; l++) {
        acc_clane_t *ln = &cp->lanes[l];
        for (c = 0; c < ln->nclasses; c++)
            acc_mem_free(ln->classes[c].ops);
        acc_mem_free(ln->classes);
        acc_mem_free(ln->rank_of);
        acc_mem_free(ln->point_of);
    }
    acc_mem_free(cp->lanes);
    acc_mem_free(cp->peer_pool);
    acc_mem_free(cp);
}

/* A copy of n elements of size each, or NULL (with *ok cleared) when out of memory. */
static void *dup_array(const void *src, size_t n, size_t size, int *ok)
{
    void *p;
    if (!src || !n)
        return NULL;
    if (!(p = acc_mem_alloc(n * size))) {
        *ok = 0;
        return NULL;
    }
    memcpy(p, src, n * size);
    return p;
}

acc_status_t acc_cplan_clone(const acc_cplan_t *cp, acc_cplan_t **out)
{
    acc_cplan_t *c;
    int ok = 1, l;
    uint32_t k;

    *out = NULL;
    if (!(c = acc_mem_alloc(sizeof(*c))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory copying a class plan");
    *c = *cp;
    c->lanes = acc_mem_calloc((size_t)cp->nlanes, sizeof(acc_clane_t));
    c->peer_pool = dup_array(cp->peer_pool, cp->npeer_pool, sizeof(uint32_t), &ok);
    c->peer_pool_cap = cp->npeer_pool;
    if (!c->lanes) {
        acc_mem_free(c->peer_pool);
        acc_mem_free(c);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory copying a class plan");
    }
    for (l = 0; l < cp->nlanes; l++) {
        const acc_clane_t *s = &cp->lanes[l];
        acc_clane_t *d = &c->lanes[l];
        if (s->rank_of) {
            d->rank_of = dup_array(s->rank_of, (size_t)cp->nranks, sizeof(int32_t), &ok);
            d->point_of = dup_array(s->point_of, (size_t)cp->nranks, sizeof(int32_t), &ok);
        }
        if (!(d->classes = dup_array(s->classes, s->nclasses, sizeof(acc_cclass_t), &ok)))
            continue;
        d->nclasses = d->cap = s->nclasses;
        for (k = 0; k < s->nclasses; k++) {
            d->classes[k].ops =
                dup_array(s->classes[k].ops, s->classes[k].nops, sizeof(acc_cop_t), &ok);
            d->classes[k].cap = s->classes[k].nops;
            if (!d->classes[k].ops)
                d->classes[k].nops = 0; /* freed as empty if the copy is abandoned */
        }
    }
    if (!ok) {
        acc_cplan_destroy(c);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory copying a class plan");
    }
    *out = c;
    return ACC_OK;
}

acc_status_t acc_cplan_set_ranks(acc_cplan_t *cp, int lane, const int *rank_of)
{
    acc_clane_t *ln;
    int32_t *to, *from;
    int i, n = cp->nranks;

    if (lane < 0 || lane >= cp->nlanes)
        return acc_error_set(ACC_ERR_INVALID, "class plan: no lane %d", lane);
    to = acc_mem_alloc((size_t)n * sizeof(int32_t));
    from = acc_mem_alloc((size_t)n * sizeof(int32_t));
    if (!to || !from) {
        acc_mem_free(to);
        acc_mem_free(from);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a table of %d ranks", n);
    }
    for (i = 0; i < n; i++)
        from[i] = -1;
    for (i = 0; i < n; i++) {
        int r = rank_of[i];
        if (r < 0 || r >= n || from[r] != -1) {
            acc_mem_free(to);
            acc_mem_free(from);
            return acc_error_set(ACC_ERR_INVALID,
                                 "class plan: lane %d's table gives point %d rank %d, "
                                 "which is not a rank or already taken",
                                 lane, i, r);
        }
        to[i] = r;
        from[r] = i;
    }
    ln = &cp->lanes[lane];
    acc_mem_free(ln->rank_of);
    acc_mem_free(ln->point_of);
    ln->rank_of = to;
    ln->point_of = from;
    return ACC_OK;
}

/* Room for one more element in an array of *cap holding n; 0 when out of memory. */
static int room(void **a, uint32_t *cap, uint32_t n, size_t size)
{
    uint32_t c = *cap ? 2 * *cap : 8;
    void *grown;
    if (n < *cap)
        return 1;
    if (!(grown = acc_mem_realloc_array(*a, c, size)))
        return 0;
    *a = grown;
    *cap = c;
    return 1;
}

acc_status_t acc_cplan_add_class(acc_cplan_t *cp, int lane, const int32_t *lo, const int32_t *hi,
                                 uint32_t *index)
{
    acc_clane_t *ln;
    acc_cclass_t *c;
    int d;

    if (lane < 0 || lane >= cp->nlanes)
        return acc_error_set(ACC_ERR_INVALID, "class plan: no lane %d", lane);
    for (d = 0; d < cp->ndims; d++)
        if (lo[d] < 0 || hi[d] > cp->dims[d] || lo[d] >= hi[d])
            return acc_error_set(ACC_ERR_INVALID,
                                 "class plan: class [%d, %d) in dimension %d of size %d", lo[d],
                                 hi[d], d, cp->dims[d]);
    ln = &cp->lanes[lane];
    if (!room((void **)&ln->classes, &ln->cap, ln->nclasses, sizeof(acc_cclass_t)))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a class");
    c = &ln->classes[ln->nclasses];
    memset(c, 0, sizeof(*c));
    for (d = 0; d < ACC_CPLAN_MAX_DIMS; d++) {
        c->lo[d] = d < cp->ndims ? lo[d] : 0;
        c->hi[d] = d < cp->ndims ? hi[d] : 1;
    }
    if (index)
        *index = ln->nclasses;
    ln->nclasses++;
    return ACC_OK;
}

acc_status_t acc_cplan_add(acc_cplan_t *cp, int lane, uint32_t cls, const acc_cop_t *op)
{
    acc_cclass_t *c;
    if (lane < 0 || lane >= cp->nlanes || cls >= cp->lanes[lane].nclasses)
        return acc_error_set(ACC_ERR_INVALID, "class plan: no class %u in lane %d", cls, lane);
    c = &cp->lanes[lane].classes[cls];
    if (op->peer2.kind == ACC_CPEER_ROW ||
        (op->peer.kind == ACC_CPEER_ROW && (op->code != ACC_OP_REDUCE_PEERS || op->npeers ||
                                            op->peer.v[0] < 0 || op->peer.v[0] >= cp->ndims)))
        return acc_error_set(ACC_ERR_INVALID,
                             "class plan: lane %d class %u: a row of peers is a reduce_peers "
                             "list along a dimension of the grid, nothing else",
                             lane, cls);
    if (!cplan_xor_ok(cp, op))
        return acc_error_set(ACC_ERR_INVALID,
                             "class plan: lane %d class %u: a peer or chunk term by XOR on a "
                             "dimension whose size is not a power of two, or flipping bits "
                             "past it",
                             lane, cls);
    if (!room((void **)&c->ops, &c->cap, c->nops, sizeof(acc_cop_t)))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a class program");
    c->ops[c->nops++] = *op;
    return ACC_OK;
}

acc_status_t acc_cplan_set_params(acc_cplan_t *cp, const char *params)
{
    if (strlen(params) >= sizeof(cp->params))
        return acc_error_set(ACC_ERR_RANGE, "class plan: parameters '%s' are too long", params);
    snprintf(cp->params, sizeof(cp->params), "%s", params);
    return ACC_OK;
}

acc_cop_t acc_cop_init(acc_opcode_t code)
{
    acc_cop_t op;
    memset(&op, 0, sizeof(op));
    op.code = (uint8_t)code;
    op.dep_lane = -1;
    op.dep_op = -1;
    return op;
}

acc_cref_t acc_cref_const(acc_bufid_t buf, uint32_t base, uint32_t cnt)
{
    acc_cref_t r;
    memset(&r, 0, sizeof(r));
    r.buf = (uint8_t)buf;
    r.base = base;
    r.cnt = cnt;
    return r;
}

acc_status_t acc_cref_add_term(acc_cref_t *r, acc_cterm_kind_t kind, int dim, int32_t add,
                               uint32_t coef)
{
    if (r->nterms >= ACC_CREF_MAX_TERMS || dim < 0 || dim >= ACC_CPLAN_MAX_DIMS)
        return acc_error_set(ACC_ERR_INTERNAL, "class plan: term %u on dimension %d of a range",
                             r->nterms, dim);
    r->term[r->nterms].kind = (uint8_t)kind;
    r->term[r->nterms].dim = (uint8_t)dim;
    r->term[r->nterms].add = add;
    r->term[r->nterms].coef = coef;
    r->nterms++;
    return ACC_OK;
}

acc_status_t acc_cref_add_xor(acc_cref_t *r, int dim, uint32_t flip, uint32_t mask, uint32_t coef)
{
    acc_status_t st;
    if (flip > INT32_MAX)
        return acc_error_set(ACC_ERR_INTERNAL, "class plan: a term flipping bits %u", flip);
    if ((st = acc_cref_add_term(r, ACC_CTERM_XOR, dim, (int32_t)flip, coef)) == ACC_OK)
        r->term[r->nterms - 1].mask = mask;
    return st;
}

acc_cpeer_t acc_cpeer_xor(int dim, uint32_t flip)
{
    acc_cpeer_t p;
    memset(&p, 0, sizeof(p));
    p.kind = ACC_CPEER_XOR;
    p.v[dim] = (int32_t)flip;
    return p;
}

static int pow2_dim(const acc_cplan_t *cp, int d)
{
    return d < cp->ndims && cp->dims[d] > 0 && !(cp->dims[d] & (cp->dims[d] - 1));
}

int cplan_translates(const acc_cop_t *op)
{
    if (op->peer.kind == ACC_CPEER_XOR || op->peer2.kind == ACC_CPEER_XOR)
        return 0;
    for (int t = 0; t < ACC_CREF_MAX_TERMS; t++)
        if ((t < op->src.nterms && op->src.term[t].kind == ACC_CTERM_XOR) ||
            (t < op->dst.nterms && op->dst.term[t].kind == ACC_CTERM_XOR))
            return 0;
    return 1;
}

int cplan_translates_all(const acc_cplan_t *cp)
{
    for (int l = 0; l < cp->nlanes; l++)
        for (uint32_t c = 0; c < cp->lanes[l].nclasses; c++)
            for (uint32_t i = 0; i < cp->lanes[l].classes[c].nops; i++)
                if (!cplan_translates(&cp->lanes[l].classes[c].ops[i]))
                    return 0;
    return 1;
}

int cplan_xor_shaped(const acc_cplan_t *cp, char *why, size_t cap)
{
    if (cp->ndims != 1 || cp->nranks < 2 || (cp->nranks & (cp->nranks - 1))) {
        snprintf(why, cap, "it pairs ranks by XOR on a grid other than a power of two of them");
        return 0;
    }
    for (int lane = 0; lane < cp->nlanes; lane++) {
        const acc_clane_t *ln = &cp->lanes[lane];
        if (ln->nclasses != 1 || ln->rank_of) {
            snprintf(why, cap,
                     "lane %d pairs ranks by XOR with %u classes or a rank table, which XOR "
                     "does not move along",
                     lane, ln->nclasses);
            return 0;
        }
        for (uint32_t k = 0; k < ln->classes[0].nops; k++) {
            const acc_cop_t *op = &ln->classes[0].ops[k];
            if ((op->peer.kind != ACC_CPEER_NONE && op->peer.kind != ACC_CPEER_XOR) ||
                (op->peer2.kind != ACC_CPEER_NONE && op->peer2.kind != ACC_CPEER_XOR) ||
                op->npeers) {
                snprintf(why, cap,
                         "lane %d's operation %u names a peer other than by XOR beside peers by "
                         "XOR",
                         lane, k);
                return 0;
            }
        }
    }
    return 1;
}

int cplan_xor_ok(const acc_cplan_t *cp, const acc_cop_t *op)
{
    const acc_cpeer_t *peers[2] = {&op->peer, &op->peer2};
    const acc_cref_t *refs[2] = {&op->src, &op->dst};
    for (int i = 0; i < 2; i++)
        if (peers[i]->kind == ACC_CPEER_XOR)
            for (int d = 0; d < ACC_CPLAN_MAX_DIMS; d++)
                if (peers[i]->v[d] &&
                    (!pow2_dim(cp, d) || peers[i]->v[d] < 0 || peers[i]->v[d] >= cp->dims[d]))
                    return 0;
    for (int i = 0; i < 2; i++)
        for (int t = 0; t < refs[i]->nterms && t < ACC_CREF_MAX_TERMS; t++) {
            const acc_cterm_t *x = &refs[i]->term[t];
            if (x->kind != ACC_CTERM_XOR
                    ? x->mask != 0
                    : !pow2_dim(cp, x->dim) || x->add < 0 || x->add >= cp->dims[x->dim] ||
                          x->mask >= (uint32_t)cp->dims[x->dim])
                return 0;
        }
    return 1;
}

acc_cpeer_t acc_cpeer_rel(int dim, int32_t off)
{
    acc_cpeer_t p;
    memset(&p, 0, sizeof(p));
    p.kind = ACC_CPEER_REL;
    p.v[dim] = off;
    return p;
}

acc_cpeer_t acc_cpeer_row(int dim)
{
    acc_cpeer_t p;
    memset(&p, 0, sizeof(p));
    p.kind = ACC_CPEER_ROW;
    p.v[0] = dim;
    return p;
}

int acc_cplan_rank(const acc_cplan_t *cp, int lane, uint32_t point)
{
    const int32_t *t = cp->lanes[lane].rank_of;
    return t ? t[point] : (int)point;
}

uint32_t acc_cplan_point(const acc_cplan_t *cp, int lane, int rank)
{
    const int32_t *t = cp->lanes[lane].point_of;
    return t ? (uint32_t)t[rank] : (uint32_t)rank;
}

/* a mod m in [0, m); offsets are mostly within one turn, which needs no division. */
static int32_t wrap(int64_t a, int32_t m)
{
    int64_t r;
    if (a >= 0 && a < m)
        return (int32_t)a;
    if (a < 0 && a >= -(int64_t)m)
        return (int32_t)(a + m);
    if (a >= m && a < 2 * (int64_t)m)
        return (int32_t)(a - m);
    r = a % m;
    return (int32_t)(r < 0 ? r + m : r);
}

void cplan_at(const acc_cplan_t *cp, uint32_t point, cplan_at_t *at)
{
    uint32_t s = 1, p = point;
    int d;
    at->point = point;
    for (d = cp->ndims - 1; d >= 0; d--) {
        at->x[d] = (int32_t)(p % (uint32_t)cp->dims[d]);
        p /= (uint32_t)cp->dims[d];
        at->step[d] = s;
        s *= (uint32_t)cp->dims[d];
    }
}

int cplan_peer_at(const acc_cplan_t *cp, int lane, const cplan_at_t *at, const acc_cpeer_t *peer)
{
    uint32_t idx = at->point;
    int d;
    if (peer->kind == ACC_CPEER_ABS)
        return peer->v[0];
    if (peer->kind == ACC_CPEER_XOR) {
        for (d = 0; d < cp->ndims; d++)
            if (peer->v[d])
                idx = idx - (uint32_t)at->x[d] * at->step[d] +
                      (uint32_t)(at->x[d] ^ peer->v[d]) * at->step[d];
        return acc_cplan_rank(cp, lane, idx);
    }
    if (peer->kind != ACC_CPEER_REL)
        return -1;
    for (d = 0; d < cp->ndims; d++)
        if (peer->v[d])
            idx = idx - (uint32_t)at->x[d] * at->step[d] +
                  (uint32_t)wrap((int64_t)at->x[d] + peer->v[d], cp->dims[d]) * at->step[d];
    return acc_cplan_rank(cp, lane, idx);
}

void cplan_row_ranks(const acc_cplan_t *cp, int lane, const cplan_at_t *at, int dim,
                     uint32_t *ranks)
{
    uint32_t first = at->point - (uint32_t)at->x[dim] * at->step[dim];
    for (int32_t y = 0; y < cp->dims[dim]; y++)
        ranks[y] = (uint32_t)acc_cplan_rank(cp, lane, first + (uint32_t)y * at->step[dim]);
}

acc_ref_t cplan_ref_at(const acc_cplan_t *cp, int lane, const cplan_at_t *at, const acc_cref_t *r)
{
    uint64_t off = r->base;
    unsigned i;

    for (i = 0; i < r->nterms; i++) {
        const acc_cterm_t *t = &r->term[i];
        uint64_t v = 0;
        if (t->dim < cp->ndims && t->kind == ACC_CTERM_XOR) {
            v = (uint64_t)(((uint32_t)at->x[t->dim] ^ (uint32_t)t->add) & t->mask);
        } else if (t->dim < cp->ndims) {
            int32_t y = wrap((int64_t)at->x[t->dim] + t->add, cp->dims[t->dim]);
            v = t->kind == ACC_CTERM_RANK
                    ? (uint64_t)acc_cplan_rank(cp, lane,
                                               at->point -
                                                   (uint32_t)at->x[t->dim] * at->step[t->dim] +
                                                   (uint32_t)y * at->step[t->dim])
                    : (uint64_t)y;
        }
        off += v * t->coef;
    }
    /* Out of range offsets stay out of range (the verifier names them) instead of wrapping. */
    return acc_ref((acc_bufid_t)r->buf, off > UINT32_MAX ? UINT32_MAX : (uint32_t)off, r->cnt);
}

int acc_cplan_peer_at(const acc_cplan_t *cp, int lane, uint32_t point, const acc_cpeer_t *peer)
{
    cplan_at_t at;
    cplan_at(cp, point, &at);
    return cplan_peer_at(cp, lane, &at, peer);
}

acc_ref_t acc_cplan_ref_at(const acc_cplan_t *cp, int lane, uint32_t point, const acc_cref_t *r)
{
    cplan_at_t at;
    cplan_at(cp, point, &at);
    return cplan_ref_at(cp, lane, &at, r);
}

uint64_t acc_cplan_op_count(const acc_cplan_t *cp)
{
    uint64_t total = 0;
    int l, d;
    uint32_t c;
    for (l = 0; l < cp->nlanes; l++) {
        for (c = 0; c < cp->lanes[l].nclasses; c++) {
            const acc_cclass_t *k = &cp->lanes[l].classes[c];
            uint64_t pts = 1;
            for (d = 0; d < cp->ndims; d++)
                pts *= (uint64_t)(k->hi[d] - k->lo[d]);
            total += pts * k->nops;
        }
    }
    return total;
}

/* Row-major index of box point number i (0 <= i < the box's volume). */
uint32_t cplan_box_point(const acc_cplan_t *cp, const acc_cclass_t *k, uint64_t i)
{
    uint32_t idx = 0, x[ACC_CPLAN_MAX_DIMS];
    int d;
    for (d = cp->ndims - 1; d >= 0; d--) {
        uint64_t span = (uint64_t)(k->hi[d] - k->lo[d]);
        x[d] = (uint32_t)(k->lo[d] + (int32_t)(i % span));
        i /= span;
    }
    for (d = 0; d < cp->ndims; d++)
        idx = idx * (uint32_t)cp->dims[d] + x[d];
    return idx;
}

uint64_t cplan_box_volume(const acc_cplan_t *cp, const acc_cclass_t *k)
{
    uint64_t v = 1;
    int d;
    for (d = 0; d < cp->ndims; d++)
        v *= (uint64_t)(k->hi[d] - k->lo[d]);
    return v;
}

void cplan_header(const acc_cplan_t *cp, acc_plan_t *hdr)
{
    memset(hdr, 0, sizeof(*hdr));
    hdr->coll = cp->coll;
    hdr->nranks = cp->nranks;
    hdr->root = cp->root;
    memcpy(hdr->algo, cp->algo, sizeof(hdr->algo));
    memcpy(hdr->params, cp->params, sizeof(hdr->params));
    hdr->in_chunks = cp->in_chunks;
    hdr->out_chunks = cp->out_chunks;
    hdr->scratch_chunks = cp->scratch_chunks;
    hdr->nlanes = cp->nlanes;
    hdr->slots = cp->slots;
    hdr->proto = cp->proto;
    hdr->inplace = cp->inplace;
    hdr->peer_pool = cp->peer_pool;
    hdr->npeer_pool = cp->npeer_pool;
}
