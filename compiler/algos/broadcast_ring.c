/*
 * Pipelined chain broadcast: the root's data flows along the ring (rail-aligned across nodes, as
 * algo_ring_order), cut into `chunks` pieces so that every link is busy at once; the time is
 * about (n - 1 + chunks) piece-steps, close to one message time for deep pipelines.  NCCL's
 * ring broadcast.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"ring broadcast", 1, 8, 1, 0};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_check_args(&spec, topo, args);
}

static acc_status_t build_explicit(const acc_topo_t *topo, const acc_algo_args_t *args,
                                   acc_plan_t **out)
{
    return algo_rooted_plan(&spec, ACC_COLL_BROADCAST, "ring", 3, topo, args, out);
}

static acc_status_t build_class(const acc_topo_t *topo, const acc_algo_args_t *args,
                                acc_cplan_t **out)
{
    return algo_rooted_cplan(&spec, ACC_COLL_BROADCAST, "ring", 3, topo, args, out);
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_broadcast_ring_class, topo, args, out);
}

const acc_algo_t algo_broadcast_ring = {
    "ring", ACC_COLL_BROADCAST, "pipelined chain from the root along the ring", supports, build};

const algo_class_form_t algo_broadcast_ring_class = {&algo_broadcast_ring, NULL, build_class,
                                                     build_explicit,       NULL, NULL};
