/*
 * Recursive halving reduce-scatter: log2 P steps, partners at distance P/2, P/4, ..., each step
 * exchanging half of the data still held, so every rank sends (P-1)/P of the input in log2 P
 * steps.  Partial sums live in scratch (laid out like the input); at the end each rank copies
 * its block to its output.
 *
 * Rank counts that are not powers of two fold: ranks 2i and 2i+1 (i < n - P) act as one, 2i+1
 * doing the work over both their blocks and handing 2i its block at the end
 * (algo_rh_reduce_scatter).  Lanes take slices of every block; `chunks` rounds per lane run one
 * after the other; round i handles chunk i of every rank's block.  Correct in place: the
 * output, the rank's own input block, is written only by the final copy.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"rh reduce_scatter", 1, 1, 0, 0};

static acc_status_t round_fn(acc_plan_t *p, int lane, uint32_t i, uint32_t per, const int *order)
{
    algo_layout_t in = algo_layout(ACC_BUF_IN, i, per, 1);
    algo_layout_t work = algo_layout(ACC_BUF_SCRATCH, i, per, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, 0, 1);
    return algo_rh_reduce_scatter(p, lane, order, p->nranks, &in, &work, &res);
}

static const algo_rounds_t rounds = {&spec,   ACC_COLL_REDUCE_SCATTER, "rh", 0, ALGO_WIDTH_N, 1, 0,
                                     round_fn};

static acc_status_t class_round(acc_cplan_t *cp, int lane, uint32_t cls, uint32_t i, uint32_t per)
{
    algo_layout_t in = algo_layout(ACC_BUF_IN, i, per, 1);
    algo_layout_t work = algo_layout(ACC_BUF_SCRATCH, i, per, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, 0, 1);
    return algo_rh_reduce_scatter_class(cp, lane, cls, &in, &work, &res);
}

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_rounds_supports(&rounds, topo, args);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_reduce_scatter_rh_class, topo, args, out);
}

const acc_algo_t algo_reduce_scatter_rh = {
    "rh", ACC_COLL_REDUCE_SCATTER,
    "recursive halving, any rank count (extra ranks fold in first); partial sums in scratch",
    supports, build};

const algo_class_form_t algo_reduce_scatter_rh_class = {
    &algo_reduce_scatter_rh, algo_hd_class_covers, NULL, NULL, &rounds, class_round};
