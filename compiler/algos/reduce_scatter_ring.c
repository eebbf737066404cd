/*
 * Ring reduce-scatter: n-1 steps, each adding this rank's contribution to the block received
 * and passing it on, so that rank s ends with block s reduced over everyone; every rank sends
 * and receives (n-1)/n of the input, the bandwidth optimum.
 *
 * Each rank's block is per = lanes*chunks chunks; round i handles chunk i of every block: input
 * chunk s*per + i, which rank s ends with in output chunk i.  Correct in place: the output is
 * the rank's own input block, read in the same last step that writes it.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"ring reduce_scatter", 2, 1, 0, 0};

static acc_status_t round_fn(acc_plan_t *p, int lane, uint32_t i, uint32_t per, const int *order)
{
    algo_layout_t in = algo_layout(ACC_BUF_IN, i, per, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, 0, 1);
    return algo_ring_reduce_scatter(p, lane, order, p->nranks, order, &in, &res, 0);
}

static const algo_rounds_t rounds = {
    &spec, ACC_COLL_REDUCE_SCATTER, "ring", 1, ALGO_WIDTH_N, 0, 0, round_fn};

static acc_status_t class_round(acc_cplan_t *cp, int lane, uint32_t cls, uint32_t i, uint32_t per)
{
    static const algo_cring_t ring = {0, 1, -1, 0};
    algo_layout_t in = algo_layout(ACC_BUF_IN, i, per, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, 0, 1);
    return algo_ring_rs_class(cp, lane, cls, &ring, &in, &res, 0);
}

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_rounds_supports(&rounds, topo, args);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_reduce_scatter_ring_class, topo, args, out);
}

const acc_algo_t algo_reduce_scatter_ring = {
    "ring", ACC_COLL_REDUCE_SCATTER,
    "ring reduce-scatter; rings searched on the topology as for allreduce", supports, build};

const algo_class_form_t algo_reduce_scatter_ring_class = {
    &algo_reduce_scatter_ring, NULL, NULL, NULL, &rounds, class_round};
