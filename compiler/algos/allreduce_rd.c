/*
 * Recursive doubling allreduce: every rank sends its whole partial sum to the partner at
 * distance 1, 2, 4, ... and adds the partner's, so that after log2 P steps every rank holds the
 * sum.  The fewest steps of any message-passing allreduce (rhd takes 2 log2 P, the ring 2(n-1)),
 * at the price of sending log2 P whole messages: the choice for small messages between nodes,
 * where a step costs a network latency and the bytes cost little.
 *
 * Rank counts that are not powers of two fold as in rhd (algo_hd.c).  Each round is one chunk
 * of the buffer (lanes split it, `chunks` rounds per lane one after the other).  Correct in
 * place: a step's message is read when it is sent, before the sum is written over it.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"rd allreduce", 1, 1, 0, 0};

static acc_status_t round_fn(acc_plan_t *p, int lane, uint32_t i, uint32_t per, const int *order)
{
    algo_layout_t in = algo_layout(ACC_BUF_IN, i, 1, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, 1, 1);
    (void)per;
    return algo_rd_allreduce(p, lane, order, p->nranks, &in, &res);
}

static const algo_rounds_t rounds = {&spec,   ACC_COLL_ALLREDUCE, "rd", 0, ALGO_WIDTH_1, 0, 0,
                                     round_fn};

static acc_status_t class_round(acc_cplan_t *cp, int lane, uint32_t cls, uint32_t i, uint32_t per)
{
    algo_layout_t in = algo_layout(ACC_BUF_IN, i, 1, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, 1, 1);
    (void)per;
    return algo_rd_allreduce_class(cp, lane, cls, &in, &res);
}

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_rounds_supports(&rounds, topo, args);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_allreduce_rd_class, topo, args, out);
}

const acc_algo_t algo_allreduce_rd = {
    "rd", ACC_COLL_ALLREDUCE,
    "recursive doubling: whole partial sums exchanged in log2 P steps, the fewest (small "
    "messages between nodes); any rank count (extra ranks fold in first)",
    supports, build};

const algo_class_form_t algo_allreduce_rd_class = {
    &algo_allreduce_rd, algo_hd_class_covers, NULL, NULL, &rounds, class_round};
