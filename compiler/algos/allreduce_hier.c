/*
 * Hierarchical allreduce for nodes x gpn GPUs: an intra-node reduce-scatter leaves GPU q of the
 * node ring with block q reduced over its node; an allreduce of block q among the GPUs with the
 * same local index on every node (one NIC rail) makes it global; an intra-node allgather spreads
 * the blocks.  Each GPU sends only 1/gpn of the message over the network, and inter-node steps
 * grow with the node count, not the rank count.
 *
 * inner (intra-node): ring, or direct (peer memory; NVLink/NVSwitch nodes only).  outer
 * (per rail): ring, rhd (halving-doubling) or tree (double binary tree: two complementary trees,
 * half of the block each).  Round i (lane*chunks + j) is chunks i*gpn*B .. with B chunks per
 * block: block q at i*gpn*B + q*B, which the outer algorithm cuts into B = nodes (ring),
 * P (rhd) or 2 (tree) pieces.  Odd lanes run the node ring the other way round.  Correct in
 * place.
 */
#include "algo_util.h"

#include <string.h>

static const algo_spec_t spec = {"hier allreduce", 2, 1, 0, 1};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    algo_hier_t h;
    return algo_hier_setup(&h, &spec, "rhd", 1, topo, args, 0);
}

static acc_status_t round_fn(acc_plan_t *p, const algo_hier_t *h, const algo_tree_t *trees,
                             int lane, uint32_t j, uint32_t blk)
{
    uint32_t base = (uint32_t)(lane * h->pr.chunks + (int)j) * (uint32_t)h->gpn * blk;
    const int *cyc = h->cyc[lane % 2], *node = h->node[lane % 2];
    algo_layout_t in = algo_layout(ACC_BUF_IN, base, blk, blk);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, base, blk, blk);
    acc_status_t st = ACC_OK;
    int k, q, g = h->gpn;

    for (k = 0; k < h->nodes && st == ACC_OK; k++) {
        if (h->inner == ALGO_INNER_RING) {
            st = algo_ring_reduce_scatter(p, lane, node + k * g, g, NULL, &in, &res, 0);
        } else {
            st = algo_pm_barrier(p, lane, node + k * g, g, ALGO_SLOT(lane, 0), j + 1);
            if (st == ACC_OK)
                st = algo_pm_reduce_scatter(p, lane, node + k * g, g, NULL, &in, &res);
        }
    }
    for (q = 0; q < g && st == ACC_OK; q++)
        st = algo_hier_allreduce_outer(p, h, trees, lane, h->rail + cyc[q] * h->nodes,
                                       base + (uint32_t)q * blk);
    for (k = 0; k < h->nodes && st == ACC_OK; k++)
        st = h->inner == ALGO_INNER_RING
                 ? algo_ring_allgather(p, lane, node + k * g, g, NULL, &res, NULL, 0)
                 : algo_pm_allgather(p, lane, node + k * g, g, NULL, &res, NULL, ALGO_SLOT(lane, 1),
                                     j + 1);
    return st;
}

static acc_status_t build_explicit(const acc_topo_t *topo, const acc_algo_args_t *args,
                                   acc_plan_t **out)
{
    algo_hier_t h;
    algo_tree_t trees[2];
    acc_plan_t *p = NULL;
    uint32_t blk, total;
    int lane, j, t, q;
    acc_status_t st;

    memset(trees, 0, sizeof(trees));
    if ((st = algo_hier_setup(&h, &spec, "rhd", 1, topo, args, 1)) != ACC_OK)
        return st;
    blk = (uint32_t)(h.outer == ALGO_OUTER_RING ? h.nodes
                     : h.outer == ALGO_OUTER_HD ? algo_pow2_floor(h.nodes)
                                                : 2);
    total = (uint32_t)(h.pr.lanes * h.pr.chunks * h.gpn) * blk;
    /* A forest of the two complementary trees over every rail. */
    for (t = 0; t < 2 && h.outer == ALGO_OUTER_TREE && st == ACC_OK; t++) {
        st = algo_tree_init(&trees[t], acc_topo_ranks(topo));
        for (q = 0; q < h.gpn && st == ACC_OK; q++)
            st = algo_tree_btree(&trees[t], h.rail + q * h.nodes, h.nodes, t);
    }
    if (st == ACC_OK)
        st = algo_plan_new(topo, ACC_COLL_ALLREDUCE, "hier", args, h.pr.lanes, total, total, 0, &p);
    if (st == ACC_OK)
        st = algo_hier_params(p, &h);
    for (lane = 0; lane < h.pr.lanes && st == ACC_OK; lane++)
        for (j = 0; j < h.pr.chunks && st == ACC_OK; j++)
            st = round_fn(p, &h, trees, lane, (uint32_t)j, blk);
    algo_tree_free(&trees[0]);
    algo_tree_free(&trees[1]);
    algo_hier_free(&h);
    if (st != ACC_OK) {
        acc_plan_destroy(p);
        return st;
    }
    p->inplace = 1;
    *out = p;
    return ACC_OK;
}

/* ---- class form (outer=ring; algo_hier_cplan's grid) -------------------------------------- */

static int class_covers(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_hier_class_covers(&spec, "rhd", 1, topo, args, 0);
}

/* Round j of position q (q < 0: inner=ring, every position). */
static acc_status_t class_round(acc_cplan_t *cp, int lane, uint32_t cls, const algo_hier_t *h,
                                int q, uint32_t j)
{
    uint32_t blk = (uint32_t)h->nodes;
    uint32_t base = (uint32_t)(lane * h->pr.chunks + (int)j) * (uint32_t)h->gpn * blk;
    acc_status_t st = algo_hier_class_node_step(cp, lane, cls, h, q, j, base, 0);
    if (st == ACC_OK)
        st = algo_hier_class_rails(cp, lane, cls, base, blk);
    return st != ACC_OK ? st : algo_hier_class_node_step(cp, lane, cls, h, q, j, base, 1);
}

static acc_status_t build_class(const acc_topo_t *topo, const acc_algo_args_t *args,
                                acc_cplan_t **out)
{
    algo_hier_t h;
    uint32_t total;
    acc_status_t st;

    *out = NULL;
    if ((st = algo_hier_setup(&h, &spec, "rhd", 1, topo, args, 1)) != ACC_OK)
        return st;
    total = (uint32_t)(h.pr.lanes * h.pr.chunks * h.gpn) * (uint32_t)h.nodes;
    st = h.outer != ALGO_OUTER_RING
             ? acc_error_set(ACC_ERR_UNSUPPORTED,
                             "hier allreduce has a class form for outer=ring only")
             : algo_hier_class_build(&h, ACC_COLL_ALLREDUCE, args, total, total, 0,
                                     h.inner == ALGO_INNER_DIRECT, class_round, out);
    algo_hier_free(&h);
    return st;
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_allreduce_hier_class, topo, args, out);
}

const acc_algo_t algo_allreduce_hier = {
    "hier", ACC_COLL_ALLREDUCE,
    "intra-node reduce-scatter, per-rail inter-node allreduce, intra-node allgather "
    "(inner=ring|direct, outer=ring|rhd|tree)",
    supports, build};

const algo_class_form_t algo_allreduce_hier_class = {
    &algo_allreduce_hier, class_covers, build_class, build_explicit, NULL, NULL};
