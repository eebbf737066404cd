/* acc_cplan_verify: decide whether the quotient applies (cplan_verify_internal.h), check the
 * topology's symmetry, prove each lane on one point (cplan_verify_sim.c); otherwise expand and
 * let acc_plan_verify decide. */
#include "cplan_internal.h"
#include "cplan_verify_internal.h"

#include "acc_topo.h"

#include <string.h>

/* ---- grid arithmetic ---------------------------------------------------------------------- */

static void split(const acc_cplan_t *cp, uint32_t p, int32_t *x)
{
    int d;
    for (d = cp->ndims - 1; d >= 0; d--) {
        x[d] = (int32_t)(p % (uint32_t)cp->dims[d]);
        p /= (uint32_t)cp->dims[d];
    }
}

static uint32_t join(const acc_cplan_t *cp, const int32_t *x)
{
    uint32_t p = 0;
    int d;
    for (d = 0; d < cp->ndims; d++) {
        int32_t m = cp->dims[d], v = x[d] % m;
        p = p * (uint32_t)m + (uint32_t)(v < 0 ? v + m : v);
    }
    return p;
}

uint32_t cv_translate(const acc_cplan_t *cp, uint32_t p, uint32_t t)
{
    int32_t x[ACC_CPLAN_MAX_DIMS], y[ACC_CPLAN_MAX_DIMS];
    int d;
    split(cp, p, x);
    split(cp, t, y);
    for (d = 0; d < cp->ndims; d++)
        x[d] += y[d];
    return join(cp, x);
}

uint32_t cv_offset(const acc_cplan_t *cp, const acc_cpeer_t *peer)
{
    return join(cp, peer->v);
}

uint32_t cv_negate(const acc_cplan_t *cp, uint32_t t)
{
    int32_t y[ACC_CPLAN_MAX_DIMS];
    int d;
    split(cp, t, y);
    for (d = 0; d < cp->ndims; d++)
        y[d] = -y[d];
    return join(cp, y);
}

uint32_t cv_permute(const cv_lane_t *L, uint8_t buf, uint32_t c, uint32_t t)
{
    const cv_digits_t *g = &L->dig[buf];
    const acc_cplan_t *cp = L->cp;
    int32_t y[ACC_CPLAN_MAX_DIMS];
    uint32_t k, out = c;

    split(cp, t, y);
    for (k = 0; k < g->n; k++) {
        const cv_digit_t *d = &g->d[k];
        uint32_t v = (c / d->stride) % d->size, w;
        if (d->kind == ACC_CTERM_COORD)
            w = (uint32_t)(((int64_t)v + y[d->dim]) % d->size);
        else
            w = (uint32_t)acc_cplan_rank(cp, L->lane,
                                         cv_translate(cp, acc_cplan_point(cp, L->lane, (int)v), t));
        out = out - v * d->stride + w * d->stride;
    }
    return out;
}

/* ---- which plans the quotient proves ------------------------------------------------------ */

enum { U_PEER = 1, U_PEER2 = 2, U_SRC = 4, U_DST = 8 };

/* Fields of the message-passing operations; 0 for the others (peer memory, signals), which the
 * quotient leaves to the explicit verifier. */
static unsigned uses(unsigned code)
{
    static const unsigned u[ACC_OP_COUNT] = {
        [ACC_OP_SEND] = U_PEER | U_SRC,
        [ACC_OP_RECV] = U_PEER | U_DST,
        [ACC_OP_RECV_REDUCE_COPY] = U_PEER | U_SRC | U_DST,
        [ACC_OP_RECV_COPY_SEND] = U_PEER | U_PEER2 | U_DST,
        [ACC_OP_RECV_REDUCE_SEND] = U_PEER | U_PEER2 | U_SRC,
        [ACC_OP_RECV_REDUCE_COPY_SEND] = U_PEER | U_PEER2 | U_SRC | U_DST,
        [ACC_OP_COPY] = U_SRC | U_DST,
        [ACC_OP_REDUCE] = U_SRC | U_DST,
    };
    return code < ACC_OP_COUNT ? u[code] : 0;
}

static int unused_ref(const acc_cref_t *r)
{
    return !r->buf && !r->base && !r->cnt && !r->nterms;
}

/* Terms that are constant over the grid (a dimension of size 1) say nothing. */
static int trivial(const acc_cplan_t *cp, const acc_cterm_t *t)
{
    if (t->dim >= cp->ndims)
        return 1;
    return t->kind == ACC_CTERM_RANK ? cp->nranks == 1 : cp->dims[t->dim] == 1;
}

static int same_digit(const cv_digit_t *d, const acc_cterm_t *t)
{
    return d->kind == t->kind && (d->kind == ACC_CTERM_RANK || d->dim == t->dim);
}

/* Learn the digits of each buffer from the terms of lane L's ranges; 0 (with why) when two
 * ranges of one buffer disagree on a digit. */
int cv_learn_digits(cv_lane_t *L, const acc_cref_t *r, char *why, size_t cap)
{
    cv_digits_t *g = &L->dig[r->buf];
    unsigned i, k;
    for (i = 0; i < r->nterms; i++) {
        const acc_cterm_t *t = &r->term[i];
        if (trivial(L->cp, t))
            continue;
        for (k = 0; k < g->n && !same_digit(&g->d[k], t); k++)
            ;
        if (k < g->n) {
            if (g->d[k].stride != t->coef) {
                snprintf(why, cap, "lane %d: %s chunks step by %u and by %u along one dimension",
                         L->lane, acc_buf_name((acc_bufid_t)r->buf), g->d[k].stride, t->coef);
                return 0;
            }
            continue;
        }
        if (g->n == CV_MAX_DIGITS || t->coef == 0) {
            snprintf(why, cap, "lane %d: %s ranges are not a mixed radix over the grid", L->lane,
                     acc_buf_name((acc_bufid_t)r->buf));
            return 0;
        }
        g->d[g->n].kind = t->kind;
        g->d[g->n].dim = t->dim;
        g->d[g->n].stride = t->coef;
        g->d[g->n].size =
            t->kind == ACC_CTERM_RANK ? (uint32_t)L->cp->nranks : (uint32_t)L->cp->dims[t->dim];
        g->n++;
    }
    return 1;
}

int cv_share_digits(cv_lane_t *L, char *why, size_t cap)
{
    int b;
    uint32_t k;
    for (b = 0; b < 2; b++) {
        const cv_digits_t *from = &L->dig[b ? ACC_BUF_IN : ACC_BUF_OUT];
        for (k = 0; k < from->n; k++) {
            acc_cref_t r = acc_cref_const(b ? ACC_BUF_OUT : ACC_BUF_IN, 0, 1);
            if (acc_cref_add_term(&r, (acc_cterm_kind_t)from->d[k].kind, from->d[k].dim, 0,
                                  from->d[k].stride) != ACC_OK ||
                !cv_learn_digits(L, &r, why, cap))
                return 0;
        }
    }
    return 1;
}

/* Digits must occupy separate places of the mixed radix, or a permutation would not be one. */
int cv_digits_disjoint(const cv_digits_t *g)
{
    uint32_t a, b;
    for (a = 0; a < g->n; a++)
        for (b = 0; b < g->n; b++)
            if (a != b && g->d[a].stride <= g->d[b].stride &&
                (uint64_t)g->d[b].stride < (uint64_t)g->d[a].stride * g->d[a].size)
                return 0;
    return 1;
}

/* Is range r equivariant under lane L's digits: does translating the point by t map the range
 * onto its image under the buffer's permutation, as a set?  Every digit is either driven by
 * exactly one term (its stride the coefficient) or spanned whole: the range is then exactly the
 * block of the largest spanned stride x size, starting on a multiple of it, and every driven
 * digit lies above the block (a node's block of a hierarchical plan, which the rail steps cut
 * into one chunk per node).  Bases hold zero in every digit. */
int cv_equivariant(const cv_lane_t *L, const acc_cref_t *r)
{
    const cv_digits_t *g = &L->dig[r->buf];
    uint64_t block = 0, span;
    uint32_t k, driven = UINT32_MAX;
    unsigned i, hits;

    for (k = 0; k < g->n; k++) {
        for (i = 0, hits = 0; i < r->nterms; i++)
            hits += !trivial(L->cp, &r->term[i]) && same_digit(&g->d[k], &r->term[i]);
        if (hits > 1 || (r->base / g->d[k].stride) % g->d[k].size != 0)
            return 0;
        span = (uint64_t)g->d[k].stride * g->d[k].size;
        if (hits && g->d[k].stride < driven)
            driven = g->d[k].stride;
        if (!hits && span > block)
            block = span;
    }
    if (block)
        return r->cnt == block && r->base % block == 0 && driven >= block;
    return driven == UINT32_MAX || (r->base % driven) + (uint64_t)r->cnt <= driven;
}

static int same_digits(const cv_digits_t *a, const cv_digits_t *b)
{
    uint32_t i, j;
    if (a->n != b->n)
        return 0;
    for (i = 0; i < a->n; i++) {
        for (j = 0; j < b->n; j++)
            if (a->d[i].kind == b->d[j].kind && a->d[i].dim == b->d[j].dim &&
                a->d[i].stride == b->d[j].stride)
                break;
        if (j == b->n)
            return 0;
    }
    return 1;
}

/* The collective's postcondition ties out chunk k to input chunks (allreduce: the same k;
 * allgather: chunk k mod C of rank k / C; reduce_scatter: chunk r*C + k of every rank), as does
 * in place the aliasing (acc_plan.h); translations must permute both sides alike. */
static int buffers_consistent(const cv_lane_t *L)
{
    const acc_cplan_t *cp = L->cp;
    const cv_digits_t *in = &L->dig[ACC_BUF_IN], *out = &L->dig[ACC_BUF_OUT];
    switch (cp->coll) {
    case ACC_COLL_ALLGATHER:
        return in->n == 0 && (cp->nranks == 1 || (out->n == 1 && out->d[0].kind == ACC_CTERM_RANK &&
                                                  out->d[0].stride == cp->in_chunks));
    case ACC_COLL_REDUCE_SCATTER:
        return out->n == 0 && (cp->nranks == 1 || (in->n == 1 && in->d[0].kind == ACC_CTERM_RANK &&
                                                   in->d[0].stride == cp->out_chunks));
    default:
        return same_digits(in, out);
    }
}

static int header_ok(const acc_cplan_t *cp, char *why, size_t cap)
{
    uint64_t n = (uint64_t)cp->nranks;
    int ok = cp->root == -1 && cp->slots >= 1 && cp->proto >= 0 && cp->proto < ACC_PROTO_COUNT;
    if (cp->coll == ACC_COLL_ALLREDUCE)
        ok = ok && cp->in_chunks >= 1 && cp->in_chunks == cp->out_chunks;
    else if (cp->coll == ACC_COLL_ALLGATHER)
        ok = ok && cp->in_chunks >= 1 && cp->out_chunks == n * cp->in_chunks;
    else if (cp->coll == ACC_COLL_REDUCE_SCATTER)
        ok = ok && cp->out_chunks >= 1 && cp->in_chunks == n * cp->out_chunks;
    else
        ok = 0;
    if (!ok)
        snprintf(why, cap,
                 "the quotient proves allreduce, allgather and reduce_scatter plans "
                 "with valid headers only");
    return ok;
}

static int check_op(cv_lane_t *L, const acc_cop_t *o, uint32_t i, char *why, size_t cap)
{
    unsigned u = uses(o->code);
    if (!u) {
        snprintf(why, cap, "lane %d op %u: %s (peer memory, signals) is not proven by class",
                 L->lane, i, acc_op_name((acc_opcode_t)o->code));
        return 0;
    }
    if (o->dep_lane != -1 || o->dep_op != -1 || o->slot || o->value || o->npeers ||
        ((u & U_PEER) ? o->peer.kind != ACC_CPEER_REL : o->peer.kind != ACC_CPEER_NONE) ||
        ((u & U_PEER2) ? o->peer2.kind != ACC_CPEER_REL : o->peer2.kind != ACC_CPEER_NONE) ||
        ((u & U_SRC) ? !o->src.cnt || o->src.buf >= ACC_BUF_COUNT : !unused_ref(&o->src)) ||
        ((u & U_DST) ? !o->dst.cnt || o->dst.buf >= ACC_BUF_COUNT : !unused_ref(&o->dst))) {
        snprintf(why, cap,
                 "lane %d op %u: a dependency, an absolute peer or a field the explicit "
                 "verifier names",
                 L->lane, i);
        return 0;
    }
    if (((u & U_PEER) && cv_offset(L->cp, &o->peer) == 0) ||
        ((u & U_PEER2) && cv_offset(L->cp, &o->peer2) == 0)) {
        snprintf(why, cap, "lane %d op %u: a peer that is the point itself", L->lane, i);
        return 0;
    }
    return ((u & U_SRC) ? cv_learn_digits(L, &o->src, why, cap) : 1) &&
           ((u & U_DST) ? cv_learn_digits(L, &o->dst, why, cap) : 1);
}

static int check_bounds(const cv_lane_t *L, const acc_cref_t *r)
{
    const acc_cplan_t *cp = L->cp;
    uint64_t hi = r->base + (uint64_t)r->cnt, size;
    unsigned i;
    for (i = 0; i < r->nterms; i++)
        if (!trivial(cp, &r->term[i]))
            hi += (uint64_t)r->term[i].coef * (r->term[i].kind == ACC_CTERM_RANK
                                                   ? (uint64_t)cp->nranks - 1
                                                   : (uint64_t)cp->dims[r->term[i].dim] - 1);
    size = r->buf == ACC_BUF_IN    ? cp->in_chunks
           : r->buf == ACC_BUF_OUT ? cp->out_chunks
                                   : cp->scratch_chunks;
    return hi <= size;
}

/* Lane `lane` in mode `inplace`: 1 when the quotient proves it (L filled), else 0 and why. */
static int lane_applies(const acc_cplan_t *cp, int lane, int inplace, cv_lane_t *L, char *why,
                        size_t cap)
{
    const acc_clane_t *ln = &cp->lanes[lane];
    uint32_t i;
    int d;

    memset(L, 0, sizeof(*L));
    L->cp = cp;
    L->lane = lane;
    L->inplace = inplace;
    if (ln->nclasses != 1) {
        snprintf(why, cap, "lane %d has %u classes (the quotient takes one over the grid)", lane,
                 ln->nclasses);
        return 0;
    }
    L->cls = &ln->classes[0];
    for (d = 0; d < cp->ndims; d++) {
        if (L->cls->lo[d] != 0 || L->cls->hi[d] != cp->dims[d]) {
            snprintf(why, cap, "lane %d's class is not the whole grid", lane);
            return 0;
        }
    }
    for (i = 0; i < L->cls->nops; i++)
        if (!check_op(L, &L->cls->ops[i], i, why, cap))
            return 0;
    /* An allreduce's out[k] sums in[k]: the two buffers share their digits, also where one
     * buffer's ranges span a digit the other's drive (a hierarchical plan reads whole node
     * blocks of its input and cuts its output per node). */
    if (cp->coll == ACC_COLL_ALLREDUCE && !cv_share_digits(L, why, cap))
        return 0;
    for (d = 0; d < ACC_BUF_COUNT; d++) {
        uint32_t k, ranks = 0;
        for (k = 0; k < L->dig[d].n; k++)
            ranks += L->dig[d].d[k].kind == ACC_CTERM_RANK;
        /* A rank digit moves with every dimension, a coordinate digit with one: together
         * their orbits need not be whole key classes. */
        if (!cv_digits_disjoint(&L->dig[d]) || (ranks && ranks != L->dig[d].n)) {
            snprintf(why, cap, "lane %d: the %s chunk terms overlap in the mixed radix", lane,
                     acc_buf_name((acc_bufid_t)d));
            return 0;
        }
    }
    for (i = 0; i < L->cls->nops; i++) {
        const acc_cop_t *o = &L->cls->ops[i];
        unsigned u = uses(o->code);
        if (((u & U_SRC) && (!cv_equivariant(L, &o->src) || !check_bounds(L, &o->src))) ||
            ((u & U_DST) && (!cv_equivariant(L, &o->dst) || !check_bounds(L, &o->dst)))) {
            snprintf(why, cap,
                     "lane %d op %u: a chunk range that translations do not carry onto "
                     "each other (or out of bounds)",
                     lane, i);
            return 0;
        }
    }
    /* The postcondition relates output chunks to input chunks (and in place the two share
     * storage): point 0's proof carries over to every point only when translations permute
     * both alike. */
    if (!buffers_consistent(L)) {
        snprintf(why, cap, "lane %d: input and output chunks are permuted differently", lane);
        return 0;
    }
    return 1;
}

/* ---- lanes that could touch one chunk ----------------------------------------------------- */

/* Storage of a logical buffer in a mode (acc_plan.h, "In place"). */
uint8_t cv_storage(const acc_cplan_t *cp, int inplace, uint8_t buf)
{
    if (!inplace || buf == ACC_BUF_SCRATCH)
        return buf;
    if (cp->coll == ACC_COLL_REDUCE_SCATTER)
        return ACC_BUF_IN;
    return ACC_BUF_OUT;
}

/* The key of chunk c of logical buffer buf: c with its digits zeroed, the same for every chunk
 * translations carry it to.  In place, a logical buffer's key is its storage chunk's (the
 * digits of aliased buffers agree, inplace_consistent). */
uint32_t cv_key(const cv_lane_t *L, uint8_t buf, uint32_t c)
{
    const cv_digits_t *g = &L->dig[buf];
    uint32_t j, key = c;
    for (j = 0; j < g->n; j++)
        key -= ((c / g->d[j].stride) % g->d[j].size) * g->d[j].stride;
    return key;
}

/* Lanes run unordered; the quotient proves each on its own, so their accesses must never meet:
 * with every lane's chunks closed under the translations (keys), no key one lane writes is
 * touched by another.  Pass 0 marks the writes, pass 1 checks every access against them. */
static int lanes_disjoint(cv_lane_t *Ls, int nlanes, int32_t **owner, char *why, size_t cap)
{
    const acc_cplan_t *cp = Ls[0].cp;
    uint32_t size = cp->in_chunks, i, k;
    int32_t *wr;
    int l, b, pass, ok = 1;

    *owner = NULL;
    if (cp->out_chunks > size)
        size = cp->out_chunks;
    if (cp->scratch_chunks > size)
        size = cp->scratch_chunks;
    if (!(wr = acc_mem_alloc((size_t)ACC_BUF_COUNT * size * sizeof(int32_t)))) {
        snprintf(why, cap, "out of memory comparing lanes");
        return 0;
    }
    for (i = 0; i < (uint32_t)ACC_BUF_COUNT * size; i++)
        wr[i] = -1;
    for (l = 1; l < nlanes && ok; l++)
        for (b = 0; b < ACC_BUF_COUNT; b++)
            ok = ok && same_digits(&Ls[l].dig[b], &Ls[0].dig[b]);
    for (pass = 0; pass < 2 && ok; pass++) {
        for (l = 0; l < nlanes && ok; l++) {
            const cv_lane_t *L = &Ls[l];
            for (i = 0; i < L->cls->nops && ok; i++) {
                const acc_cop_t *o = &L->cls->ops[i];
                unsigned u = uses(o->code);
                for (b = 0; b < 2 && ok; b++) {
                    const acc_cref_t *r = b ? &o->dst : &o->src;
                    uint32_t first;
                    if (!(u & (b ? U_DST : U_SRC)) || (pass == 0 && !b))
                        continue;
                    first = acc_cplan_ref_at(cp, L->lane, 0, r).off;
                    for (k = 0; k < r->cnt && ok; k++) {
                        size_t at = (size_t)cv_storage(cp, L->inplace, r->buf) * size +
                                    cv_key(L, r->buf, first + k) % size;
                        if (pass == 0 && wr[at] == -1)
                            wr[at] = l;
                        else if (wr[at] != -1 && wr[at] != l)
                            ok = 0;
                    }
                }
            }
        }
    }
    if (!ok) {
        acc_mem_free(wr);
        snprintf(why, cap, "lanes may touch the same chunks (or permute them differently)");
        return 0;
    }
    for (l = 0; l < nlanes; l++) {
        Ls[l].owner = wr;
        Ls[l].owner_size = size;
    }
    *owner = wr;
    return 1;
}

/* ---- the topology's symmetry ---------------------------------------------------------------- */

/* The distinct relative offsets lane's program sends to or receives from (at most cap). */
static uint32_t lane_offsets(const acc_cplan_t *cp, int lane, uint32_t *offs, uint32_t cap)
{
    const acc_clane_t *ln = &cp->lanes[lane];
    uint32_t n = 0, c, i, k;
    int j;
    for (c = 0; c < ln->nclasses; c++) {
        for (i = 0; i < ln->classes[c].nops; i++) {
            const acc_cop_t *o = &ln->classes[c].ops[i];
            for (j = 0; j < 2; j++) {
                const acc_cpeer_t *p = j ? &o->peer2 : &o->peer;
                uint32_t e;
                if (p->kind != ACC_CPEER_REL)
                    continue;
                e = cv_offset(cp, p);
                for (k = 0; k < n && offs[k] != e; k++)
                    ;
                if (k == n && n < cap)
                    offs[n++] = e;
            }
        }
    }
    return n;
}

/* Translating by sym_step must map every link a lane uses onto one of the same class and
 * bandwidth: O(ranks) per distinct offset. */
static int topo_symmetric(const acc_cplan_t *cp, const acc_topo_t *topo, char *why, size_t cap)
{
    uint32_t step, n = (uint32_t)cp->nranks, x, offs[16], noffs, i;
    int lane, any = 0, d;

    for (d = 0; d < cp->ndims; d++)
        any |= cp->sym_step[d] != 0;
    if (!topo || !any)
        return 1;
    if (acc_topo_ranks(topo) != cp->nranks) {
        snprintf(why, cap, "the topology has %d ranks, the plan %d", acc_topo_ranks(topo),
                 cp->nranks);
        return 0;
    }
    step = join(cp, cp->sym_step);
    for (lane = 0; lane < cp->nlanes; lane++) {
        noffs = lane_offsets(cp, lane, offs, 16);
        for (i = 0; i < noffs; i++) {
            for (x = 0; x < n; x++) {
                uint32_t y = cv_translate(cp, x, step);
                acc_topo_path_t a, b;
                int ra = acc_cplan_rank(cp, lane, x), rb = acc_cplan_rank(cp, lane, y);
                int pa = acc_cplan_rank(cp, lane, cv_translate(cp, x, offs[i]));
                int pb = acc_cplan_rank(cp, lane, cv_translate(cp, y, offs[i]));
                if (acc_topo_path(topo, ra, pa, &a) != ACC_OK ||
                    acc_topo_path(topo, rb, pb, &b) != ACC_OK || a.cls != b.cls || a.bw != b.bw) {
                    snprintf(why, cap,
                             "the topology is not symmetric under the plan's translation: "
                             "lane %d's link %d->%d differs from %d->%d",
                             lane, ra, pa, rb, pb);
                    return 0;
                }
            }
        }
    }
    return 1;
}

/* ---- entry point ------------------------------------------------------------------------------
 */

static acc_status_t prove_mode(const acc_cplan_t *cp, int inplace, cv_lane_t *Ls, char *why,
                               size_t cap, int *applies)
{
    int l;
    int32_t *owner = NULL;
    acc_status_t st = ACC_OK;
    *applies = 0;
    for (l = 0; l < cp->nlanes; l++)
        if (!lane_applies(cp, l, inplace, &Ls[l], why, cap))
            return ACC_OK;
    if (!lanes_disjoint(Ls, cp->nlanes, &owner, why, cap))
        return ACC_OK;
    *applies = 1;
    for (l = 0; l < cp->nlanes && st == ACC_OK; l++)
        st = cv_sim_lane(&Ls[l]);
    acc_mem_free(owner);
    /* A range the checks let through but a translation does not carry onto itself: the
     * quotient does not apply after all. */
    if (st == ACC_ERR_INTERNAL) {
        snprintf(why, cap, "%s", acc_error_message());
        *applies = 0;
        return ACC_OK;
    }
    return st;
}

static acc_status_t by_expansion(const acc_cplan_t *cp, uint64_t max_ops, uint64_t max_locations,
                                 acc_cplan_proof_t *proof)
{
    acc_plan_t *p = NULL;
    uint64_t ops = acc_cplan_op_count(cp);
    acc_status_t st;

    if (max_ops && ops > max_ops)
        return acc_error_set(ACC_ERR_RANGE,
                             "its proof rank by rank would list %.3g operations, more than the "
                             "%.3g allowed here",
                             (double)ops, (double)max_ops);
    if ((st = plan_locations_within(cp->nranks, cp->in_chunks, cp->out_chunks, cp->scratch_chunks,
                                    max_locations)) != ACC_OK)
        return st;
    st = acc_cplan_expand(cp, &p);
    if (st == ACC_OK)
        st = acc_plan_verify(p);
    if (proof)
        proof->orbits = (uint32_t)cp->nranks * (uint32_t)cp->nlanes;
    acc_plan_destroy(p);
    return st;
}

acc_status_t acc_cplan_verify(const acc_cplan_t *cp, const acc_topo_t *topo,
                              acc_cplan_proof_t *proof)
{
    return cplan_verify_within(cp, topo, 0, 0, proof);
}

acc_status_t cplan_verify_within(const acc_cplan_t *cp, const acc_topo_t *topo, uint64_t max_ops,
                                 uint64_t max_locations, acc_cplan_proof_t *proof)
{
    char why[256] = "";
    cv_lane_t *Ls = NULL;
    acc_status_t st = ACC_OK;
    int applies = 0, mode;

    if (proof)
        memset(proof, 0, sizeof(*proof));
    if (!cp)
        return acc_error_set(ACC_ERR_INVALID, "acc_cplan_verify: no plan");
    /* Ranks paired by XOR do not move along with a translation: one rank under XOR instead. */
    if (!cplan_translates_all(cp)) {
        st = cv_prove_xor(cp, why, sizeof(why), &applies);
        if (applies || st != ACC_OK) {
            if (proof && applies) {
                proof->by_class = 1;
                proof->orbits = 1;
            }
            return st;
        }
        goto expand;
    }
    if (!header_ok(cp, why, sizeof(why)) || !topo_symmetric(cp, topo, why, sizeof(why)))
        goto expand;
    if (!(Ls = acc_mem_calloc((size_t)cp->nlanes, sizeof(*Ls))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory proving a class plan");
    for (mode = 0; mode <= (cp->inplace ? 1 : 0); mode++) {
        st = prove_mode(cp, mode, Ls, why, sizeof(why), &applies);
        if (!applies)
            break;
        if (st != ACC_OK) {
            acc_mem_free(Ls);
            if (proof) {
                proof->by_class = 1;
                proof->orbits = (uint32_t)cp->nlanes;
            }
            return cp->inplace ? acc_error_prefix(st, mode ? "in place: " : "out of place: ") : st;
        }
    }
    acc_mem_free(Ls);
    if (applies) {
        if (proof) {
            proof->by_class = 1;
            proof->orbits = (uint32_t)cp->nlanes;
        }
        return ACC_OK;
    }
    {
        /* Not one program for every point: perhaps the same moved by a period of ranks. */
        /* Shorter than why, with room for its prefix, so that the note below always fits. */
        char pwhy[192] = "";
        int period;
        st = cv_prove_period(cp, pwhy, sizeof(pwhy), &applies, &period);
        if (applies || st != ACC_OK) {
            if (proof && applies) {
                proof->by_class = 1;
                proof->orbits = (uint32_t)period * (uint32_t)cp->nlanes;
            }
            return st;
        }
        if (strlen(why) + strlen(pwhy) + 16 < sizeof(why))
            snprintf(why + strlen(why), sizeof(why) - strlen(why), "; by period: %s", pwhy);
    }
expand:
    /* Not the quotient's kind of plan: the explicit verifier decides, within its limits. */
    ACC_DEBUG(COMPILER, "class plan %s %s proven by expansion: %s", acc_coll_name(cp->coll),
              cp->algo, why);
    if (proof)
        snprintf(proof->why, sizeof(proof->why), "%s", why);
    return by_expansion(cp, max_ops, max_locations, proof);
}
