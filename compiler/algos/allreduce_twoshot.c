/*
 * Two-shot allreduce over peer memory (NVLink / NVSwitch nodes): a reduce-scatter in which rank
 * q reads block q of every peer's input (REDUCE_PEERS) into its output, then an allgather in
 * which it writes its reduced block into every peer's output (PUT) and signals them.  Each rank
 * moves 2(n-1)/n of the message, like the ring, in two steps instead of 2(n-1): the choice for
 * medium messages within a node.
 *
 * Ordering: a barrier first (peers' buffers are live); a rank writes a peer's block q only after
 * its own read of that block (same lane, in place too), and waits for every peer's signal, sent
 * after the peer's writes and after its reads of this rank's input, before it returns.  Lanes
 * and rounds split the buffer; round i is chunks i*n .. i*n + n-1, block q at i*n + q.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"twoshot allreduce", 1, 1, 0, 0};

static acc_status_t round_fn(acc_plan_t *p, int lane, uint32_t i, uint32_t per, const int *order)
{
    uint32_t value = algo_round_of(p, i, per) + 1, n = (uint32_t)p->nranks;
    algo_layout_t in = algo_layout(ACC_BUF_IN, i * n, 1, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i * n, 1, 1);
    acc_status_t st = algo_pm_barrier(p, lane, order, (int)n, ALGO_SLOT(lane, 0), value);

    if (st == ACC_OK)
        st = algo_pm_reduce_scatter(p, lane, order, (int)n, NULL, &in, &res);
    if (st == ACC_OK)
        st = algo_pm_allgather(p, lane, order, (int)n, NULL, &res, NULL, ALGO_SLOT(lane, 1), value);
    return st;
}

static const algo_rounds_t rounds = {&spec,   ACC_COLL_ALLREDUCE, "twoshot", 0, ALGO_WIDTH_N, 0, 1,
                                     round_fn};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_rounds_supports(&rounds, topo, args);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_rounds_plan(&rounds, topo, args, out);
}

const acc_algo_t algo_allreduce_twoshot = {
    "twoshot", ACC_COLL_ALLREDUCE,
    "peer memory, one node: reduce-scatter by reads, allgather by writes", supports, build};
