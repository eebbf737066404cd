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
 * with them has no quotient here.
 */
#include "cplan_internal.h"

#include <string.h>

/* The class of every point of a lane, or 0 with a message when the classes are not a
 * partition. */
static int classes_of(const acc_cplan_t *cp, int lane, uint32_t *cls, char *why, size_t cap)
{
    const acc_clane_t *ln = &cp->lanes[lane];
    uint32_t c, p;
    uint64_t i;

    for (p = 0; p < (uint32_t)cp->nranks; p++)
        cls[p] = UINT32_MAX;
    for (c = 0; c < ln->nclasses; c++)
        for (i = 0; i < cplan_box_volume(cp, &ln->classes[c]); i++) {
            p = cplan_box_point(cp, &ln->classes[c], i);
            if (cls[p] != UINT32_MAX) {
                snprintf(why, cap, "lane %d's point %u is in two classes", lane, p);
                return 0;
            }
            cls[p] = c;
        }
    for (p = 0; p < (uint32_t)cp->nranks; p++)
        if (cls[p] == UINT32_MAX) {
            snprintf(why, cap, "lane %d's point %u is in no class", lane, p);
            return 0;
        }
    return 1;
}

/* Does translating the ranks by period map lane's classes and peers onto themselves? */
static int lane_periodic(const acc_cplan_t *cp, int lane, int period, uint32_t *cls, char *why,
                         size_t cap)
{
    const acc_clane_t *ln = &cp->lanes[lane];
    int32_t d[ACC_CPLAN_MAX_DIMS];
    cplan_at_t a, b;
    uint32_t c, k, p;
    int i;

    for (c = 0; c < ln->nclasses; c++)
        for (k = 0; k < ln->classes[c].nops; k++) {
            const acc_cop_t *op = &ln->classes[c].ops[k];
            if (op->peer.kind == ACC_CPEER_ABS || op->peer2.kind == ACC_CPEER_ABS || op->npeers) {
                snprintf(why, cap,
                         "lane %d's class %u names ranks absolutely (operation %u), which do "
                         "not move with the others",
                         lane, c, k);
                return 0;
            }
        }
    if (!classes_of(cp, lane, cls, why, cap))
        return 0;
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

static acc_status_t quotient_by(const acc_cplan_t *cp, int period, acc_plan_t **out)
{
    acc_plan_t *p = NULL, hdr;
    uint32_t *cls = NULL, k;
    uint64_t ops = 0;
    char why[256], what[160];
    acc_status_t st = ACC_OK;
    int lane, r;

    *out = NULL;
    if (period < 1 || cp->nranks % period != 0)
        return acc_error_set(ACC_ERR_INVALID,
                             "the quotient of %s %s: a period of %d ranks does not divide its "
                             "%d ranks",
                             acc_coll_name(cp->coll), cp->algo, period, cp->nranks);
    if (!(cls = acc_mem_alloc((size_t)cp->nranks * sizeof(uint32_t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the quotient of a class plan");
    for (lane = 0; lane < cp->nlanes; lane++) {
        /* Moved by every rank, a plan is itself. */
        if (period == cp->nranks ? !classes_of(cp, lane, cls, why, sizeof(why))
                                 : !lane_periodic(cp, lane, period, cls, why, sizeof(why))) {
            acc_mem_free(cls);
            return acc_error_set(ACC_ERR_UNSUPPORTED, "%s %s (%s) has no quotient by %d ranks: %s",
                                 acc_coll_name(cp->coll), cp->algo, cp->params, period, why);
        }
        for (r = 0; r < period; r++)
            ops += cp->lanes[lane].classes[cls[acc_cplan_point(cp, lane, r)]].nops;
    }
    snprintf(what, sizeof(what), "the quotient of %s %s on %d ranks (%d ranks, %llu operations)",
             acc_coll_name(cp->coll), cp->algo, cp->nranks, period, (unsigned long long)ops);
    if ((st = acc_mem_check(ops * sizeof(acc_op_t), what, "simulate it on fewer lanes")) !=
            ACC_OK ||
        (st = acc_plan_create(cp->coll, cp->nranks, cp->nlanes, cp->in_chunks, cp->out_chunks,
                              cp->scratch_chunks, &p)) != ACC_OK)
        goto out;
    cplan_header(cp, &hdr);
    plan_copy_header(p, &hdr);
    for (lane = 0; lane < cp->nlanes && st == ACC_OK; lane++) {
        if (!classes_of(cp, lane, cls, why, sizeof(why))) {
            st = acc_error_set(ACC_ERR_INTERNAL, "the quotient of a class plan: %s", why);
            break;
        }
        for (r = 0; r < period && st == ACC_OK; r++) {
            uint32_t pt = acc_cplan_point(cp, lane, r);
            const acc_cclass_t *kl = &cp->lanes[lane].classes[cls[pt]];
            cplan_at_t at;
            cplan_at(cp, pt, &at);
            for (k = 0; k < kl->nops && st == ACC_OK; k++) {
                acc_op_t op = cplan_op_at(cp, lane, &at, &kl->ops[k]);
                st = acc_plan_add(p, r, lane, &op, NULL);
            }
        }
    }
    if (st == ACC_OK)
        p->period = period;
out:
    acc_mem_free(cls);
    if (st != ACC_OK) {
        acc_plan_destroy(p);
        return st;
    }
    *out = p;
    return ACC_OK;
}

acc_status_t acc_cplan_quotient(const acc_cplan_t *cp, int unit, acc_plan_t **out)
{
    char first[1024] = "";
    acc_status_t st;
    int k, n;

    *out = NULL;
    if (unit < 1 || cp->nranks % unit != 0 || unit == cp->nranks)
        return quotient_by(cp, unit, out);
    /* The smallest period that works: a ring that snakes through the nodes (one way on even
     * nodes, back on odd ones) is the same moved by two.  Half the ranks at most: beyond that
     * the quotient is the whole plan. */
    n = cp->nranks / unit;
    for (k = 1; k <= n / 2; k++) {
        if (n % k != 0)
            continue;
        if ((st = quotient_by(cp, unit * k, out)) != ACC_ERR_UNSUPPORTED)
            return st;
        if (k == 1)
            snprintf(first, sizeof(first), "%s", acc_error_message());
    }
    return acc_error_set(ACC_ERR_UNSUPPORTED, "%s, nor by any multiple of it short of all %d",
                         first, cp->nranks);
}
