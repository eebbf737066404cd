/*
 * The proof of a class plan on a period of its ranks (cplan_verify_internal.h).  The lock step
 * of one point (cplan_verify_sim.c) proves plans whose points all run one program of messages.
 * A hierarchical plan with peer memory inside its nodes has a class per position in the node,
 * and signals, puts and reductions over its peers, which a lock step cannot order.  It is still
 * the same moved by a node: the explicit verifier then runs one node (plan_verify_quotient), a
 * message from another node being its translate's.
 *
 * Why that is the explicit verifier's answer on the whole plan.  Moving the ranks by the period
 * P maps the plan onto itself (checked below, operation by operation and chunk by chunk), and
 * peer memory and counters stay inside a period (the quotient's verifier refuses anything
 * else).  So every period running in step with the first is one schedule of the whole plan, in
 * which each rank's state is its translate's, moved.  The explicit verifier runs one schedule of
 * the whole plan too, and its answer does not depend on which: message passing is
 * deterministic, and its happens-before checks see every access to a period's memory, since
 * only that period touches it.  A message from rank a' + s (s a multiple of P) to b is then the
 * message a' sent to b - s, moved: its values' ranks by s, their chunks and their order as the
 * chunk map says.
 *
 * The chunk map is the mixed radix of the lock step's proof (cplan_verify.c's digits), learnt
 * from every operation of every class: moving by P changes a chunk's digits of the dimensions
 * it moves along and nothing else.
 */
#include "cplan_internal.h"
#include "cplan_verify_internal.h"

#include <string.h>

typedef struct {
    const acc_cplan_t *cp;
    int period;
    uint32_t size[ACC_BUF_COUNT];
    uint32_t *perm[ACC_BUF_COUNT], *inv[ACC_BUF_COUNT];
    uint32_t *rowa, *rowb;
} pp_t;

/* A range of the operation x at a rank and of y, the same at the rank P on: is every chunk of
 * x's range, moved, in y's at one place (the place *at[j] of x's chunk j)? */
static int range_moved(const pp_t *pp, acc_ref_t x, acc_ref_t y, uint32_t *at)
{
    if (x.buf >= ACC_BUF_COUNT || x.buf != y.buf || x.cnt != y.cnt ||
        (uint64_t)x.off + x.cnt > pp->size[x.buf] || (uint64_t)y.off + y.cnt > pp->size[y.buf])
        return 0;
    for (uint32_t j = 0; j < x.cnt; j++) {
        uint32_t k = pp->perm[x.buf][x.off + j] - y.off;
        if (k >= y.cnt || (at[j] != UINT32_MAX && at[j] != k))
            return 0;
        at[j] = k;
    }
    return 1;
}

/* Is the class operation co at point a, moved by the period, the same operation at point b? */
static int op_moved(pp_t *pp, int lane, const cplan_at_t *a, const cplan_at_t *b,
                    const acc_cop_t *co, uint32_t *at)
{
    const acc_cplan_t *cp = pp->cp;
    acc_op_t x = cplan_op_at(cp, lane, a, co), y = cplan_op_at(cp, lane, b, co);
    int n = cp->nranks, p = pp->period;
    uint32_t cnt = x.src.cnt ? x.src.cnt : x.dst.cnt, j;

    if ((x.peer < 0) != (y.peer < 0) || (x.peer >= 0 && y.peer != (x.peer + p) % n) ||
        (x.peer2 < 0) != (y.peer2 < 0) || (x.peer2 >= 0 && y.peer2 != (x.peer2 + p) % n) ||
        co->npeers)
        return 0;
    if (co->peer.kind == ACC_CPEER_ROW) {
        int dim = co->peer.v[0];
        cplan_row_ranks(cp, lane, a, dim, pp->rowa);
        cplan_row_ranks(cp, lane, b, dim, pp->rowb);
        for (int32_t i = 0; i < cp->dims[dim]; i++)
            if (pp->rowb[i] != (pp->rowa[i] + (uint32_t)p) % (uint32_t)n)
                return 0;
    }
    for (j = 0; j < cnt; j++)
        at[j] = UINT32_MAX;
    /* Source chunk j and destination chunk j meet again at one place of the translate's. */
    return (!x.src.cnt || range_moved(pp, x.src, y.src, at)) &&
           (!x.dst.cnt || range_moved(pp, x.dst, y.dst, at));
}

/* Every operation of the period's ranks, moved, the translate's; why says which is not. */
static acc_status_t plan_moved(pp_t *pp, char *why, size_t cap, int *ok)
{
    const acc_cplan_t *cp = pp->cp;
    uint32_t *cls = NULL, *at = NULL, maxcnt = 1;
    acc_status_t st = ACC_OK;
    int lane, r;

    *ok = 1;
    for (lane = 0; lane < cp->nlanes; lane++)
        for (uint32_t c = 0; c < cp->lanes[lane].nclasses; c++)
            for (uint32_t k = 0; k < cp->lanes[lane].classes[c].nops; k++) {
                const acc_cop_t *o = &cp->lanes[lane].classes[c].ops[k];
                if (o->src.cnt > maxcnt)
                    maxcnt = o->src.cnt;
                if (o->dst.cnt > maxcnt)
                    maxcnt = o->dst.cnt;
            }
    if (!(cls = acc_mem_alloc((size_t)cp->nranks * sizeof(uint32_t))) ||
        !(at = acc_mem_alloc((size_t)maxcnt * sizeof(uint32_t)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory proving a class plan");
        goto out;
    }
    for (lane = 0; lane < cp->nlanes && *ok && st == ACC_OK; lane++) {
        if ((st = cplan_class_map(cp, lane, cls)) != ACC_OK)
            break;
        for (r = 0; r < pp->period && *ok; r++) {
            uint32_t x = acc_cplan_point(cp, lane, r),
                     y = acc_cplan_point(cp, lane, (r + pp->period) % cp->nranks);
            const acc_cclass_t *k = &cp->lanes[lane].classes[cls[x]];
            cplan_at_t a, b;
            cplan_at(cp, x, &a);
            cplan_at(cp, y, &b);
            if (cls[y] != cls[x]) {
                snprintf(why, cap, "lane %d: rank %d and rank %d run different classes", lane, r,
                         (r + pp->period) % cp->nranks);
                *ok = 0;
                break;
            }
            for (uint32_t i = 0; i < k->nops && *ok; i++) {
                if (op_moved(pp, lane, &a, &b, &k->ops[i], at))
                    continue;
                snprintf(why, cap,
                         "lane %d op %u of rank %d, moved by %d ranks, is not rank %d's (its "
                         "peers or chunks do not move with it)",
                         lane, i, r, pp->period, (r + pp->period) % cp->nranks);
                *ok = 0;
            }
        }
    }
out:
    acc_mem_free(cls);
    acc_mem_free(at);
    return st;
}

/* The chunk map of moving by the period, from the digits of every range of the plan; 0 with
 * why when the ranges do not make one. */
static int chunk_map(pp_t *pp, char *why, size_t cap)
{
    const acc_cplan_t *cp = pp->cp;
    cv_lane_t L;
    uint32_t t;
    int b;

    memset(&L, 0, sizeof(L));
    L.cp = cp;
    L.lane = 0;
    for (int lane = 0; lane < cp->nlanes; lane++)
        for (uint32_t c = 0; c < cp->lanes[lane].nclasses; c++)
            for (uint32_t k = 0; k < cp->lanes[lane].classes[c].nops; k++) {
                const acc_cop_t *o = &cp->lanes[lane].classes[c].ops[k];
                if ((o->src.cnt &&
                     (o->src.buf >= ACC_BUF_COUNT || !cv_learn_digits(&L, &o->src, why, cap))) ||
                    (o->dst.cnt &&
                     (o->dst.buf >= ACC_BUF_COUNT || !cv_learn_digits(&L, &o->dst, why, cap))))
                    return 0;
            }
    if (cp->coll == ACC_COLL_ALLREDUCE && !cv_share_digits(&L, why, cap))
        return 0;
    /* Every range moves with the point as the digits say, at every point: op_moved then checks
     * the period's ranks against their translates' (their peers, and that sources and
     * destinations pair up again). */
    for (int lane = 0; lane < cp->nlanes; lane++)
        for (uint32_t c = 0; c < cp->lanes[lane].nclasses; c++)
            for (uint32_t k = 0; k < cp->lanes[lane].classes[c].nops; k++) {
                const acc_cop_t *o = &cp->lanes[lane].classes[c].ops[k];
                if ((o->src.cnt && !cv_equivariant(&L, &o->src)) ||
                    (o->dst.cnt && !cv_equivariant(&L, &o->dst))) {
                    snprintf(why, cap,
                             "lane %d class %u op %u: a chunk range that translations do not "
                             "carry onto each other",
                             lane, c, k);
                    return 0;
                }
            }
    /* Lane 0's grid step from rank 0 to rank P: every lane moves alike, or op_moved says no. */
    t = cv_translate(cp, acc_cplan_point(cp, 0, pp->period),
                     cv_negate(cp, acc_cplan_point(cp, 0, 0)));
    for (b = 0; b < ACC_BUF_COUNT; b++) {
        if (!cv_digits_disjoint(&L.dig[b])) {
            snprintf(why, cap, "the %s chunk terms overlap in the mixed radix",
                     acc_buf_name((acc_bufid_t)b));
            return 0;
        }
        for (uint32_t c = 0; c < pp->size[b]; c++)
            pp->inv[b][c] = UINT32_MAX;
        for (uint32_t c = 0; c < pp->size[b]; c++) {
            uint32_t d = cv_permute(&L, (uint8_t)b, c, t);
            if (d >= pp->size[b] || pp->inv[b][d] != UINT32_MAX) {
                snprintf(why, cap, "moving by %d ranks does not permute the %s chunks", pp->period,
                         acc_buf_name((acc_bufid_t)b));
                return 0;
            }
            pp->perm[b][c] = d;
            pp->inv[b][d] = c;
        }
    }
    return 1;
}

/* Peer memory and counters only between the period's ranks. */
static int shares_inside(const acc_plan_t *q, char *why, size_t cap)
{
    for (int r = 0; r < q->period; r++)
        for (int l = 0; l < q->nlanes; l++) {
            const acc_lane_prog_t *prog = &q->progs[(size_t)r * q->nlanes + l];
            for (uint32_t i = 0; i < prog->nops; i++) {
                const acc_op_t *o = &prog->ops[i];
                int out = (o->code == ACC_OP_PUT || o->code == ACC_OP_GET ||
                           o->code == ACC_OP_SIGNAL || o->code == ACC_OP_WAIT) &&
                          o->peer >= q->period;
                for (uint32_t k = 0; o->code == ACC_OP_REDUCE_PEERS && k < o->npeers; k++)
                    out |= o->peers_off + k < q->npeer_pool &&
                           q->peer_pool[o->peers_off + k] >= (uint32_t)q->period;
                if (out) {
                    snprintf(why, cap,
                             "rank %d lane %d op %u shares memory or a counter with a rank "
                             "outside the period of %d ranks",
                             r, l, i, q->period);
                    return 0;
                }
            }
        }
    return 1;
}

acc_status_t cv_prove_period(const acc_cplan_t *cp, char *why, size_t cap, int *applies,
                             int *period)
{
    acc_plan_t *q = NULL;
    uint32_t *pool = NULL;
    size_t total;
    pp_t pp;
    plan_quot_map_t map;
    acc_status_t st;
    int b, ok = 0, mode;

    *applies = 0;
    *period = cp->nranks;
    memset(&pp, 0, sizeof(pp));
    memset(&map, 0, sizeof(map));
    pp.cp = cp;
    if ((st = acc_cplan_quotient(cp, 1, &q)) != ACC_OK) {
        if (st != ACC_ERR_UNSUPPORTED)
            return st;
        snprintf(why, cap, "%s", acc_error_message());
        return ACC_OK;
    }
    if (q->period >= cp->nranks) {
        snprintf(why, cap, "it is not the same moved by fewer than its %d ranks", cp->nranks);
        goto out;
    }
    pp.period = q->period;
    if (!shares_inside(q, why, cap))
        goto out;
    pp.size[ACC_BUF_IN] = cp->in_chunks;
    pp.size[ACC_BUF_OUT] = cp->out_chunks;
    pp.size[ACC_BUF_SCRATCH] = cp->scratch_chunks;
    total = 2 * ((size_t)cp->in_chunks + cp->out_chunks + cp->scratch_chunks) + 2 * cp->nranks;
    if (!(pool = acc_mem_alloc((total ? total : 1) * sizeof(uint32_t)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory proving a class plan");
        goto out;
    }
    total = 0;
    for (b = 0; b < ACC_BUF_COUNT; b++) {
        pp.perm[b] = pool + total;
        pp.inv[b] = pool + total + pp.size[b];
        total += 2 * (size_t)pp.size[b];
        map.perm[b] = pp.perm[b];
        map.inv[b] = pp.inv[b];
    }
    pp.rowa = pool + total;
    pp.rowb = pp.rowa + cp->nranks;
    if (!chunk_map(&pp, why, cap) || (st = plan_moved(&pp, why, cap, &ok)) != ACC_OK || !ok)
        goto out;
    *applies = 1;
    *period = pp.period;
    for (mode = 0; mode <= (cp->inplace ? 1 : 0) && st == ACC_OK; mode++) {
        if ((st = plan_verify_quotient(q, mode, &map)) == ACC_OK)
            continue;
        if (st == ACC_ERR_INTERNAL) { /* the map did not carry a message: not the quotient's */
            snprintf(why, cap, "%s", acc_error_message());
            *applies = 0;
            st = ACC_OK;
            break;
        }
        if (cp->inplace)
            st = acc_error_prefix(st, mode ? "in place: " : "out of place: ");
    }
out:
    acc_mem_free(pool);
    acc_plan_destroy(q);
    return st;
}
