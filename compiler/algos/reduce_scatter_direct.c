/*
 * Direct reduce-scatter over peer memory (NVLink / NVSwitch nodes): after a barrier rank s reads
 * block s of every peer's input and reduces it into its output (REDUCE_PEERS).  One step; each
 * rank reads (n-1)/n of the input size.  A second barrier keeps every rank until all peers have
 * finished reading its input, so that the input may be reused when the call returns.
 *
 * Lanes and rounds split each block: round i handles chunk i of every block, input chunk
 * s*per + i, output chunk i of rank s.  Correct in place (a rank's output is the block only it
 * reads).
 */
#include "algo_util.h"

static const algo_spec_t spec = {"direct reduce_scatter", 1, 1, 0, 0};

static acc_status_t round_fn(acc_plan_t *p, int lane, uint32_t i, uint32_t per, const int *order)
{
    uint32_t value = algo_round_of(p, i, per) + 1;
    algo_layout_t in = algo_layout(ACC_BUF_IN, i, per, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, 0, 1);
    acc_status_t st = algo_pm_barrier(p, lane, order, p->nranks, ALGO_SLOT(lane, 0), value);

    if (st == ACC_OK)
        st = algo_pm_reduce_scatter(p, lane, order, p->nranks, NULL, &in, &res);
    if (st == ACC_OK)
        st = algo_pm_barrier(p, lane, order, p->nranks, ALGO_SLOT(lane, 1), value);
    return st;
}

static const algo_rounds_t rounds = {
    &spec, ACC_COLL_REDUCE_SCATTER, "direct", 0, ALGO_WIDTH_N, 0, 1, round_fn};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_rounds_supports(&rounds, topo, args);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_rounds_plan(&rounds, topo, args, out);
}

const acc_algo_t algo_reduce_scatter_direct = {
    "direct", ACC_COLL_REDUCE_SCATTER,
    "peer memory, one node: every rank reduces its block from all peers' inputs", supports, build};
