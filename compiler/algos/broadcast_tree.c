/*
 * Tree broadcast: a binary tree from the root (over nodes, with a chain inside each node, when
 * there are several; algo_tree_topo), pipelined in chunks.  Depth log n instead of n makes it
 * the latency choice for small messages at scale; each inner rank sends twice per chunk, so it
 * needs twice the link bandwidth of the chain for the same rate.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"tree broadcast", 1, 4, 1, 0};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_check_args(&spec, topo, args);
}

static acc_status_t build_explicit(const acc_topo_t *topo, const acc_algo_args_t *args,
                                   acc_plan_t **out)
{
    return algo_rooted_plan(&spec, ACC_COLL_BROADCAST, "tree", 2, topo, args, out);
}

static acc_status_t build_class(const acc_topo_t *topo, const acc_algo_args_t *args,
                                acc_cplan_t **out)
{
    return algo_rooted_cplan(&spec, ACC_COLL_BROADCAST, "tree", 2, topo, args, out);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_broadcast_tree_class, topo, args, out);
}

const acc_algo_t algo_broadcast_tree = {
    "tree", ACC_COLL_BROADCAST, "binary tree from the root, pipelined in chunks", supports, build};

const algo_class_form_t algo_broadcast_tree_class = {&algo_broadcast_tree, NULL, build_class,
                                                     build_explicit,       NULL, NULL};
