/*
 * Pipelined chain reduce: partial sums flow along the ring towards the root, each rank adding
 * its contribution on the way (receive-reduce-send), cut into `chunks` pieces so that every link
 * is busy at once.  NCCL's ring reduce; no scratch is needed since no rank has two children.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"ring reduce", 1, 8, 1, 0};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_check_args(&spec, topo, args);
}

static acc_status_t build_explicit(const acc_topo_t *topo, const acc_algo_args_t *args,
                                   acc_plan_t **out)
{
    return algo_rooted_plan(&spec, ACC_COLL_REDUCE, "ring", 3, topo, args, out);
}

static acc_status_t build_class(const acc_topo_t *topo, const acc_algo_args_t *args,
                                acc_cplan_t **out)
{
    return algo_rooted_cplan(&spec, ACC_COLL_REDUCE, "ring", 3, topo, args, out);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_reduce_ring_class, topo, args, out);
}

const acc_algo_t algo_reduce_ring = {"ring", ACC_COLL_REDUCE,
                                     "pipelined chain to the root along the ring", supports, build};

const algo_class_form_t algo_reduce_ring_class = {&algo_reduce_ring, NULL, build_class,
                                                  build_explicit,    NULL, NULL};
