/*
 * Ring allgather: n-1 steps, each passing on the block received in the previous one; every rank
 * sends and receives (n-1)/n of the output, the bandwidth optimum.
 *
 * Rank s's input is per = lanes*chunks chunks; round i moves input chunk i of every rank, which
 * is output chunk s*per + i of rank s.  A rank sends its own block straight from its input and
 * copies it into its output last.  Correct in place (the input is then the rank's own block of
 * the output, and the copy leaves it as it is).
 */
#include "algo_util.h"

static const algo_spec_t spec = {"ring allgather", 2, 1, 0, 0};

static acc_status_t round_fn(acc_plan_t *p, int lane, uint32_t i, uint32_t per, const int *order)
{
    algo_layout_t own = algo_layout(ACC_BUF_IN, i, 0, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, per, 1);
    /* Block ids are ranks: position q's block is rank order[q]'s. */
    return algo_ring_allgather(p, lane, order, p->nranks, order, &res, &own, 0);
}

static const algo_rounds_t rounds = {&spec,   ACC_COLL_ALLGATHER, "ring", 1, ALGO_WIDTH_N, 0, 0,
                                     round_fn};

static acc_status_t class_round(acc_cplan_t *cp, int lane, uint32_t cls, uint32_t i, uint32_t per)
{
    static const algo_cring_t ring = {0, 1, -1, 0};
    algo_layout_t own = algo_layout(ACC_BUF_IN, i, 0, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, per, 1);
    return algo_ring_ag_class(cp, lane, cls, &ring, &res, &own, 0);
}

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_rounds_supports(&rounds, topo, args);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_allgather_ring_class, topo, args, out);
}

const acc_algo_t algo_allgather_ring = {
    "ring", ACC_COLL_ALLGATHER, "ring allgather; rings searched on the topology as for allreduce",
    supports, build};

const algo_class_form_t algo_allgather_ring_class = {
    &algo_allgather_ring, NULL, NULL, NULL, &rounds, class_round};
