/*
 * One-shot allreduce over peer memory (NVLink / NVSwitch nodes): after a barrier every rank reads
 * every peer's whole input and reduces it locally (REDUCE_PEERS), one step, so the latency is a
 * barrier plus one pass over the data, at the price of each rank reading n-1 full messages: the
 * choice for small messages within a node.
 *
 * The sum goes to scratch first: in place, a rank's output is its input, which peers may still
 * be reading; a second barrier says that every peer has finished reading before the copy into
 * the output.  The same barrier keeps a rank from returning, and its input from being reused,
 * while peers read it.  Lanes and rounds split the buffer (chunk i is round i's), each round
 * with its own barriers.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"oneshot allreduce", 1, 1, 0, 0};

static acc_status_t round_fn(acc_plan_t *p, int lane, uint32_t i, uint32_t per, const int *order)
{
    uint32_t value = algo_round_of(p, i, per) + 1;
    int n = p->nranks, q;
    acc_status_t st = algo_pm_barrier(p, lane, order, n, ALGO_SLOT(lane, 0), value);

    if (st == ACC_OK)
        st = algo_pm_reduce_all(p, lane, order, n, acc_ref(ACC_BUF_IN, i, 1),
                                acc_ref(ACC_BUF_SCRATCH, i, 1));
    if (st == ACC_OK)
        st = algo_pm_barrier(p, lane, order, n, ALGO_SLOT(lane, 1), value);
    for (q = 0; q < n && st == ACC_OK; q++)
        st = acc_plan_copy(p, order[q], lane, acc_ref(ACC_BUF_SCRATCH, i, 1),
                           acc_ref(ACC_BUF_OUT, i, 1));
    return st;
}

static const algo_rounds_t rounds = {&spec,   ACC_COLL_ALLREDUCE, "oneshot", 0, ALGO_WIDTH_1, 1, 1,
                                     round_fn};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_rounds_supports(&rounds, topo, args);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_rounds_plan(&rounds, topo, args, out);
}

const acc_algo_t algo_allreduce_oneshot = {
    "oneshot", ACC_COLL_ALLREDUCE,
    "peer memory, one node: every rank reads all peers' inputs and reduces locally", supports,
    build};
