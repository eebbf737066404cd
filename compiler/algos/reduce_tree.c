/*
 * Tree reduce: partial sums flow up a binary tree to the root (over nodes, with a chain inside
 * each node, when there are several; algo_tree_topo), pipelined in chunks.  Depth log n; inner
 * ranks fold in their children one at a time, keeping the running sum in scratch because only
 * the root has an output buffer.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"tree reduce", 1, 4, 1, 0};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_check_args(&spec, topo, args);
}

static acc_status_t build_explicit(const acc_topo_t *topo, const acc_algo_args_t *args,
                                   acc_plan_t **out)
{
    return algo_rooted_plan(&spec, ACC_COLL_REDUCE, "tree", 2, topo, args, out);
}

static acc_status_t build_class(const acc_topo_t *topo, const acc_algo_args_t *args,
                                acc_cplan_t **out)
{
    return algo_rooted_cplan(&spec, ACC_COLL_REDUCE, "tree", 2, topo, args, out);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_reduce_tree_class, topo, args, out);
}

const acc_algo_t algo_reduce_tree = {
    "tree", ACC_COLL_REDUCE, "binary tree to the root, pipelined in chunks", supports, build};

const algo_class_form_t algo_reduce_tree_class = {&algo_reduce_tree, NULL, build_class,
                                                  build_explicit,    NULL, NULL};
