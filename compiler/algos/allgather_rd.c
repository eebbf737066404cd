/*
 * Recursive doubling allgather: log2 P steps, partners at distance 1, 2, 4, ..., each step
 * exchanging everything gathered so far, so every rank receives (n-1)/n of the output in
 * log2 P steps: the latency choice at scale.
 *
 * Rank counts that are not powers of two fold: ranks 2i and 2i+1 (i < n - P) first meet at
 * 2i+1, which takes part for both and passes the result back (algo_rd_allgather).  Lanes take
 * slices of every rank's input; `chunks` rounds per lane run one after the other; round i moves
 * chunk i of every rank's input.  Correct in place.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"rd allgather", 1, 1, 0, 0};

static acc_status_t round_fn(acc_plan_t *p, int lane, uint32_t i, uint32_t per, const int *order)
{
    algo_layout_t own = algo_layout(ACC_BUF_IN, i, 0, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, per, 1);
    return algo_rd_allgather(p, lane, order, p->nranks, &own, &res);
}

static const algo_rounds_t rounds = {&spec,   ACC_COLL_ALLGATHER, "rd", 0, ALGO_WIDTH_N, 0, 0,
                                     round_fn};

static acc_status_t class_round(acc_cplan_t *cp, int lane, uint32_t cls, uint32_t i, uint32_t per)
{
    algo_layout_t own = algo_layout(ACC_BUF_IN, i, 0, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, per, 1);
    return algo_rd_allgather_class(cp, lane, cls, &own, &res);
}

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_rounds_supports(&rounds, topo, args);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_allgather_rd_class, topo, args, out);
}

const acc_algo_t algo_allgather_rd = {
    "rd", ACC_COLL_ALLGATHER, "recursive doubling, any rank count (extra ranks fold in first)",
    supports, build};

const algo_class_form_t algo_allgather_rd_class = {
    &algo_allgather_rd, algo_hd_class_covers, NULL, NULL, &rounds, class_round};
