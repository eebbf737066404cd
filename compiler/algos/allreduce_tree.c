/*
 * Double binary tree allreduce (NCCL's): two complementary binary trees, each reducing half of
 * the data up to its root and broadcasting it back down, pipelined in chunks.  A rank that is
 * inner in one tree is a leaf in the other, so every rank sends and receives about the message
 * size once per direction while the depth, and so the latency, grows with log n.
 *
 * On one node the trees are over the GPUs in ring order; across nodes they are over nodes, with
 * a chain through each node's GPUs (algo_tree_topo).  The data is cut into slices, one tree each
 * (trees alternate between slices), each slice into `chunks` pipeline chunks; lanes carry
 * slices in parallel.  Per rank and slice the order is up(0), up(1), down(0), up(2), down(1)...:
 * chunk s goes down while chunk s+1 goes up.  Inner ranks keep partial sums in the output,
 * which the down phase overwrites; correct in place.
 */
#include "algo_util.h"

#include <string.h>

static const algo_spec_t spec = {"tree allreduce", 2, 4, 0, 0};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_check_args(&spec, topo, args);
}

/* Slice k's chunks, up and down interleaved, on one rank. */
static acc_status_t slice(acc_plan_t *p, int lane, const algo_tree_t *t, int rank, uint32_t first,
                          int chunks)
{
    int s;
    acc_status_t st = ACC_OK;
    for (s = 0; s <= chunks && st == ACC_OK; s++) {
        acc_ref_t in = acc_ref(ACC_BUF_IN, first + (uint32_t)s, 1);
        acc_ref_t out = acc_ref(ACC_BUF_OUT, first + (uint32_t)s, 1);
        acc_ref_t prev = acc_ref(ACC_BUF_OUT, first + (uint32_t)s - 1, 1);
        if (s < chunks)
            st = algo_tree_up(p, lane, t, rank, in, out, out);
        if (s > 0 && st == ACC_OK)
            st = algo_tree_down(p, lane, t, rank, prev, prev);
    }
    return st;
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    algo_params_t pr;
    algo_tree_t trees[2];
    acc_plan_t *p = NULL;
    int n = acc_topo_ranks(topo), nslices, k, rank;
    acc_status_t st;

    if ((st = algo_params(&spec, topo, args, &pr)) != ACC_OK)
        return st;
    /* An even number of slices so that both trees carry the same share. */
    nslices = pr.lanes % 2 ? 2 * pr.lanes : pr.lanes;
    memset(trees, 0, sizeof(trees));
    for (k = 0; k < 2 && st == ACC_OK; k++)
        if ((st = algo_tree_init(&trees[k], n)) == ACC_OK)
            st = algo_tree_topo(&trees[k], topo, k, 0);
    if (st == ACC_OK)
        st = algo_plan_new(topo, ACC_COLL_ALLREDUCE, "tree", args, pr.lanes,
                           (uint32_t)(nslices * pr.chunks), (uint32_t)(nslices * pr.chunks), 0, &p);
    if (st == ACC_OK)
        st = algo_set_params(p, &pr, NULL);
    for (k = 0; k < nslices && st == ACC_OK; k++)
        for (rank = 0; rank < n && st == ACC_OK; rank++)
            st = slice(p, k % pr.lanes, &trees[k % 2], rank, (uint32_t)(k * pr.chunks), pr.chunks);
    algo_tree_free(&trees[0]);
    algo_tree_free(&trees[1]);
    if (st != ACC_OK) {
        acc_plan_destroy(p);
        return st;
    }
    p->inplace = 1;
    *out = p;
    return ACC_OK;
}

const acc_algo_t algo_allreduce_tree = {
    "tree", ACC_COLL_ALLREDUCE,
    "double binary tree (two complementary trees, half the data each), pipelined in chunks",
    supports, build};
