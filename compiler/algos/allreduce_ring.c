/*
 * Ring allreduce: a reduce-scatter around the ring followed by an allgather, 2(n-1) steps that
 * each move 1/n of the data, so every rank sends and receives 2(n-1)/n of the message whatever n
 * is: bandwidth-optimal, latency linear in n.
 *
 * Lanes run separate rings over separate slices of the buffer (odd lanes reversed, lane pairs on
 * different NIC rails; see algo_ring_order), and `chunks` cuts each lane's slice into that many
 * rounds run one after the other, so that a round's allgather overlaps the next round's
 * reduce-scatter on the wire (NCCL's loop over the buffer).  Round i (= lane*chunks + j) is
 * chunks i*n .. i*n + n-1, chunk i*n + b being reduced at ring position b.  Correct in place:
 * each position reads an input block before it writes the same block of the output.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"ring allreduce", 2, 1, 0, 0};

static acc_status_t round_fn(acc_plan_t *p, int lane, uint32_t i, uint32_t per, const int *order)
{
    uint32_t n = (uint32_t)p->nranks;
    algo_layout_t in = algo_layout(ACC_BUF_IN, i * n, 1, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i * n, 1, 1);
    acc_status_t st = algo_ring_reduce_scatter(p, lane, order, (int)n, NULL, &in, &res, 1);
    return st != ACC_OK ? st : algo_ring_allgather(p, lane, order, (int)n, NULL, &res, NULL, 1);
}

static const algo_rounds_t rounds = {&spec,   ACC_COLL_ALLREDUCE, "ring", 1, ALGO_WIDTH_N, 0, 0,
                                     round_fn};

static acc_status_t class_round(acc_cplan_t *cp, int lane, uint32_t cls, uint32_t i, uint32_t per)
{
    static const algo_cring_t ring = {0, 0, -1, 0};
    uint32_t n = (uint32_t)cp->nranks;
    algo_layout_t in = algo_layout(ACC_BUF_IN, i * n, 1, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i * n, 1, 1);
    acc_status_t st = algo_ring_rs_class(cp, lane, cls, &ring, &in, &res, 1);
    (void)per;
    return st != ACC_OK ? st : algo_ring_ag_class(cp, lane, cls, &ring, &res, NULL, 1);
}

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_rounds_supports(&rounds, topo, args);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_allreduce_ring_class, topo, args, out);
}

const acc_algo_t algo_allreduce_ring = {
    "ring", ACC_COLL_ALLREDUCE,
    "ring reduce-scatter + allgather; rings searched for the widest hops, rail-aligned across "
    "nodes",
    supports, build};

const algo_class_form_t algo_allreduce_ring_class = {
    &algo_allreduce_ring, NULL, NULL, NULL, &rounds, class_round};
