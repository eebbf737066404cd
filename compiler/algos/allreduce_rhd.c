/*
 * Recursive halving-doubling allreduce (Rabenseifner): a reduce-scatter by recursive halving
 * (log2 P steps, partners at distance P/2, P/4, ..., each step moving half of what the previous
 * one moved) and an allgather by recursive doubling back.  Every rank sends 2(P-1)/P of the
 * message like the ring, in 2 log2 P steps instead of 2(n-1): the choice for medium sizes at
 * scale.
 *
 * Rank counts that are not powers of two fold first: with P the largest power of two <= n and
 * r = n - P, ranks 2i and 2i+1 (i < r) combine their data at 2i+1 before the halving and 2i gets
 * the result back after the doubling (algo_rhd_allreduce).  Ranks are taken in node-major order,
 * so folded pairs are neighbours in a node.  Each lane does a slice of the buffer; `chunks`
 * rounds per lane run one after the other.  Round i is chunks i*P .. i*P + P-1, one per virtual
 * rank.  Correct in place: a rank's first step reads its input before any write to it.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"rhd allreduce", 1, 1, 0, 0};

static acc_status_t round_fn(acc_plan_t *p, int lane, uint32_t i, uint32_t per, const int *order)
{
    uint32_t base = i * (uint32_t)algo_pow2_floor(p->nranks);
    algo_layout_t in = algo_layout(ACC_BUF_IN, base, 1, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, base, 1, 1);
    return algo_rhd_allreduce(p, lane, order, p->nranks, &in, &res);
}

static const algo_rounds_t rounds = {&spec,   ACC_COLL_ALLREDUCE, "rhd", 0, ALGO_WIDTH_P, 0, 0,
                                     round_fn};

static acc_status_t class_round(acc_cplan_t *cp, int lane, uint32_t cls, uint32_t i, uint32_t per)
{
    uint32_t base = i * (uint32_t)cp->nranks;
    algo_layout_t in = algo_layout(ACC_BUF_IN, base, 1, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, base, 1, 1);
    (void)per;
    return algo_rhd_allreduce_class(cp, lane, cls, &in, &res);
}

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_rounds_supports(&rounds, topo, args);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_allreduce_rhd_class, topo, args, out);
}

const acc_algo_t algo_allreduce_rhd = {
    "rhd", ACC_COLL_ALLREDUCE,
    "recursive halving-doubling (Rabenseifner), any rank count (extra ranks fold in first)",
    supports, build};

const algo_class_form_t algo_allreduce_rhd_class = {
    &algo_allreduce_rhd, algo_hd_class_covers, NULL, NULL, &rounds, class_round};
