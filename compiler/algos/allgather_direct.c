/*
 * Direct allgather over peer memory (NVLink / NVSwitch nodes): after a barrier every rank writes
 * its input into every peer's output (PUT) and signals it; it returns once every peer's signal
 * has arrived, i.e. once its output is complete.  One step; each rank sends n-1 copies of its
 * input, all links of an NVSwitch busy at once.
 *
 * Lanes and rounds split each rank's input: round i moves input chunk i, output chunk s*per + i
 * of rank s.  Correct in place (a rank's own block is copied onto itself).
 */
#include "algo_util.h"

static const algo_spec_t spec = {"direct allgather", 1, 1, 0, 0};

static acc_status_t round_fn(acc_plan_t *p, int lane, uint32_t i, uint32_t per, const int *order)
{
    uint32_t value = algo_round_of(p, i, per) + 1;
    algo_layout_t own = algo_layout(ACC_BUF_IN, i, 0, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, per, 1);
    acc_status_t st = algo_pm_barrier(p, lane, order, p->nranks, ALGO_SLOT(lane, 0), value);

    if (st == ACC_OK)
        st = algo_pm_allgather(p, lane, order, p->nranks, NULL, &res, &own, ALGO_SLOT(lane, 1),
                               value);
    return st;
}

static const algo_rounds_t rounds = {&spec,   ACC_COLL_ALLGATHER, "direct", 0, ALGO_WIDTH_N, 0, 1,
                                     round_fn};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_rounds_supports(&rounds, topo, args);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_rounds_plan(&rounds, topo, args, out);
}

const acc_algo_t algo_allgather_direct = {
    "direct", ACC_COLL_ALLGATHER, "peer memory, one node: every rank writes its input to all",
    supports, build};
