/*
 * A class plan's quotient under a translation of the ranks: the programs of ranks 0 .. period
 * - 1 alone, after checking that moving every rank r to r + period (mod nranks) maps the plan
 * onto itself.  The simulator plays the quotient (acc_sim_plan with plan->period), which is
 * what lets the cost model price a plan of 65,536 ranks by playing the 8 of one node.
 *
 * Why the check suffices.  Per lane, let d be the grid step that takes the point of rank 0 to
 * the point of rank `period`.  When for every point x the point of rank(x) + period is x + d
 * and lies in the class of x, a program at x + d is the program at x with every relative peer
 * moved along (rank(x + d + v) = rank(x + v) + period), its dependencies, slots and counts
 * unchanged.  Chunk ranges may move too; they change which bytes an operation moves, not how
 * many (up to one element where the chunks do not divide the buffer evenly), and the
 * simulator times bytes.  Absolute peers and peer lists name ranks that do not move, so a plan
 * with them has no quotient here.  A plan that pairs ranks by XOR (halving and doubling) is
 * the same moved by XOR instead, and its quotient says so (acc_plan_t.period_xor).
 */
#include "cplan_internal.h"

#include <string.h>

/* Absolute peers and peer lists name ranks that do not move with the others. */
static int names_ranks(const acc_cplan_t *cp, char *why, size_t cap)
{
    for (int lane = 0; lane < cp->nlanes; lane++)
        for (uint32_t c = 0; c < cp->lanes[lane].nclasses; c++)
            for (uint32_t k = 0; k < cp->lanes[lane].classes[c].nops; k++) {
                const acc_cop_t *op = &cp->lanes[lane].classes[c].ops[k];
                if (op->peer.kind == ACC_CPEER_ABS || op->peer2.kind == ACC_CPEER_ABS ||
                    op->npeers) {
                    snprintf(why, cap,
                             "lane %d's class %u names ranks absolutely (operation %u), which do "
                             "not move with the others",
                             lane, c, k);
                    return 1;
                }
            }
    return 0;
}

/* Does translating the ranks by period map lane's classes (cls: the class of each point) and
 * peers onto themselves? */
static int lane_periodic(const acc_cplan_t *cp, int lane, int period, const uint32_t *cls,
                         char *why, size_t cap)
{
    int32_t d[ACC_CPLAN_MAX_DIMS];
    cplan_at_t a, b;
    uint32_t p;
    int i;

    cplan_at(cp, acc_cplan_point(cp, lane, 0), &a);
    cplan_at(cp, acc_cplan_point(cp, lane, period % cp->nranks), &b);
    for (i = 0; i < cp->ndims; i++)
        d[i] = b.x[i] - a.x[i];
    for (p = 0; p < (uint32_t)cp->nranks; p++) {
        int r = acc_cplan_rank(cp, lane, p);
        uint32_t q = acc_cplan_point(cp, lane, (int)(((int64_t)r + period) % cp->nranks));
        cplan_at(cp, p, &a);
        cplan_at(cp, q, &b);
        for (i = 0; i < cp->ndims; i++) {
            int64_t want = ((int64_t)a.x[i] + d[i]) % cp->dims[i];
            if (want < 0)
                want += cp->dims[i];
            if (b.x[i] != want)
                break;
        }
        if (i < cp->ndims || cls[q] != cls[p]) {
            snprintf(why, cap,
                     "on lane %d, rank %d and rank %d (%d ranks on) %s, so the plan is not the "
                     "same moved by %d ranks",
                     lane, r, (int)(((int64_t)r + period) % cp->nranks), period,
                     i < cp->ndims ? "do not lie one grid step apart as ranks 0 and that do"
                                   : "run different classes",
                     period);
            return 0;
        }
    }
    return 1;
}

/* Moved by XOR: the smallest power of two of whole units (at most half the ranks) for a plan
 * in halving and doubling's shape (cplan_xor_shaped).  Rank r ^ s
 * then runs rank r's program with every peer ^ s and the same counts, for every s, so the
 * ranks 0 .. period - 1 stand for all (every s a multiple of the period keeps a rank's node
 * inside its own translate's set).  0, with why, when the plan is not of that kind. */
static int xor_period(const acc_cplan_t *cp, int unit, char *why, size_t cap)
{
    int period = 1;
    if (!cplan_xor_shaped(cp, why, cap))
        return 0;
    while (period < unit)
        period *= 2;
    if (period % unit) {
        snprintf(why, cap, "no power of two of ranks is a whole number of units of %d", unit);
        return 0;
    }
    return period;
}

/* The programs of ranks 0 .. period - 1, cls[lane * nranks + point] their classes. */
static acc_status_t build(const acc_cplan_t *cp, int period, const uint32_t *cls, acc_plan_t **out)
{
    acc_plan_t *p = NULL;
    cplan_rowpool_t rows = {NULL, NULL, -1, -1};
    uint64_t ops = 0;
    char what[160];
    acc_status_t st;
    int lane, r;

    for (lane = 0; lane < cp->nlanes; lane++)
        for (r = 0; r < period; r++)
            ops += cp->lanes[lane]
                       .classes[cls[(size_t)lane * cp->nranks + acc_cplan_point(cp, lane, r)]]
                       .nops;
    snprintf(what, sizeof(what), "the quotient of %s %s on %d ranks (%d ranks, %llu operations)",
             acc_coll_name(cp->coll), cp->algo, cp->nranks, period, (unsigned long long)ops);
    if ((st = acc_mem_check(ops * sizeof(acc_op_t), what, "simulate it on fewer lanes")) !=
            ACC_OK ||
        (st = cplan_new_plan(cp, &p)) != ACC_OK)
        return st;
    for (lane = 0; lane < cp->nlanes && st == ACC_OK; lane++)
        for (r = 0; r < period && st == ACC_OK; r++) {
            uint32_t pt = acc_cplan_point(cp, lane, r), k;
            const acc_cclass_t *kl = &cp->lanes[lane].classes[cls[(size_t)lane * cp->nranks + pt]];
            cplan_at_t at;
            cplan_at(cp, pt, &at);
            for (k = 0; k < kl->nops && st == ACC_OK; k++) {
                acc_op_t op;
                if ((st = cplan_op_pool(cp, lane, &at, &kl->ops[k], p, &rows, &op)) == ACC_OK)
                    st = acc_plan_add(p, r, lane, &op, NULL);
            }
        }
    cplan_rowpool_free(&rows);
    if (st != ACC_OK) {
        acc_plan_destroy(p);
        return st;
    }
    p->period = period;
    *out = p;
    return ACC_OK;
}

acc_status_t acc_cplan_quotient(const acc_cplan_t *cp, int unit, acc_plan_t **out)
{
    uint32_t *cls = NULL;
    char why[256], first[256] = "";
    acc_status_t st = ACC_OK;
    int lane, period = 0, k, n;

    *out = NULL;
    if (unit < 1 || cp->nranks % unit != 0)
        return acc_error_set(ACC_ERR_INVALID,
                             "the quotient of %s %s: a period of %d ranks does not divide its "
                             "%d ranks",
                             acc_coll_name(cp->coll), cp->algo, unit, cp->nranks);
    if (!(cls = acc_mem_alloc((size_t)cp->nlanes * cp->nranks * sizeof(uint32_t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the quotient of a class plan");
    for (lane = 0; lane < cp->nlanes && st == ACC_OK; lane++)
        st = cplan_class_map(cp, lane, cls + (size_t)lane * cp->nranks);
    if (st != ACC_OK)
        goto out;
    /* Moved by every rank, a plan is itself.  Otherwise the smallest period that works: a
     * ring that snakes through the nodes (one way on even nodes, back on odd ones) is the same
     * moved by two.  Half the ranks at most: beyond that the quotient is the whole plan. */
    n = cp->nranks / unit;
    if (unit == cp->nranks)
        period = unit;
    else if (!cplan_translates_all(cp))
        period = xor_period(cp, unit, first, sizeof(first));
    else if (names_ranks(cp, first, sizeof(first)))
        period = 0;
    else
        for (k = 1; k <= n / 2 && !period; k++) {
            if (n % k != 0)
                continue;
            for (lane = 0; lane < cp->nlanes; lane++)
                if (!lane_periodic(cp, lane, unit * k, cls + (size_t)lane * cp->nranks, why,
                                   sizeof(why)))
                    break;
            if (lane == cp->nlanes)
                period = unit * k;
            else if (!first[0])
                snprintf(first, sizeof(first), "%s", why);
        }
    if (period) {
        st = build(cp, period, cls, out);
        if (st == ACC_OK && period < cp->nranks && !cplan_translates_all(cp))
            (*out)->period_xor = 1;
    } else
        st = acc_error_set(ACC_ERR_UNSUPPORTED,
                           "%s %s (%s) has no quotient by %d ranks: %s, nor by any multiple of it "
                           "short of all %d",
                           acc_coll_name(cp->coll), cp->algo, cp->params, unit, first, cp->nranks);
out:
    acc_mem_free(cls);
    return st;
}
