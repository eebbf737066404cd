/*
 * acc_cost.h - the cost models of the compiler: what a collective costs on a topology.
 *
 * Today this header holds one model, the replica of NCCL 2.28's own algorithm selection
 * (reference/02-nccl.md §2), so that every schedule acc generates can be put beside what NCCL
 * would do on the same machine, on the same terms.  The simulator of acc's own plans will be
 * declared here too, in its own section below; the two share nothing but this header.
 *
 * ---- The NCCL replica ---------------------------------------------------------------------
 *
 * acc_nccl_model_create() does what ncclCommInitRank does before the first collective, for a
 * communicator over every GPU of the topology (nodes x GPUs per node, node-major ranks):
 *   1. builds NCCL's own view of one node from the topology's facts (NVLink counts x NCCL's
 *      per-link rate for the GPU's SM, PCIe width x per-lane speed / 80, NIC speed / 8000),
 *      not from acc's hardware rates, and computes NCCL's paths (classes, PXN, P2P rules);
 *   2. runs NCCL's graph search for the ring, tree, NVLS and (with CollNet) CollNet graphs:
 *      channels, per-channel bwIntra / bwInter, typeIntra / typeInter;
 *   3. derives the runtime channel count (comm->nChannels) and NVLS channels;
 *   4. fills the bandwidth and latency tables [collective][algorithm][protocol] and applies
 *      the enable rules.
 * acc_nccl_model_time() is ncclTopoGetAlgoTime for one operation (numPipeOps = 1), with the
 * tree correction factors and the ring plateau; acc_nccl_model_select() is the argmin NCCL
 * takes, with the channels and threads topoGetAlgoInfo gives that call.
 *
 * Sizes.  nbytes is NCCL's nBytes for the call: the buffer size for allreduce, the whole
 * output (count x nranks x type size) for allgather, the whole input for reduce_scatter -- the
 * "size" column of nccl-tests.  Times are microseconds; bandwidths GB/s (1e9 B/s).
 *
 * Scope.  Allreduce, allgather and reduce_scatter; other collectives give ACC_ERR_UNSUPPORTED.
 * The model assumes what NCCL assumes by default: no NCCL_* environment overrides, no tuner
 * plugin, sum on a non-fp8 type, host networking, GPUDirect RDMA usable, every rank of every
 * node in the communicator.
 *
 * Conventions for errors, ownership and threads as in acc_common.h.  A model is read-only
 * after creation and may be queried from several threads at once.
 */
#ifndef ACC_COST_H
#define ACC_COST_H

#include <stdint.h>

#include "acc_common.h"
#include "acc_plan.h"
#include "acc_topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NCCL's own numbering (nccl_tuner.h), so tables index the same way as a tuner plugin's. */
typedef enum {
    ACC_NCCL_ALGO_TREE = 0,
    ACC_NCCL_ALGO_RING,
    ACC_NCCL_ALGO_COLLNET_DIRECT,
    ACC_NCCL_ALGO_COLLNET_CHAIN,
    ACC_NCCL_ALGO_NVLS,
    ACC_NCCL_ALGO_NVLS_TREE,
    ACC_NCCL_ALGO_PAT,
    ACC_NCCL_ALGO_COUNT
} acc_nccl_algo_t;

typedef enum {
    ACC_NCCL_PROTO_LL = 0,
    ACC_NCCL_PROTO_LL128,
    ACC_NCCL_PROTO_SIMPLE,
    ACC_NCCL_PROTO_COUNT
} acc_nccl_proto_t;

/* NCCL's path types (reference/02-nccl.md §1), best first.  Unlike acc_path_class_t these
 * have P2C and PXN, and no NODE (NCCL says PHB). */
typedef enum {
    ACC_NCCL_PATH_LOC = 0,
    ACC_NCCL_PATH_NVL,
    ACC_NCCL_PATH_NVB,
    ACC_NCCL_PATH_C2C,
    ACC_NCCL_PATH_PIX,
    ACC_NCCL_PATH_PXB,
    ACC_NCCL_PATH_P2C,
    ACC_NCCL_PATH_PXN,
    ACC_NCCL_PATH_PHB,
    ACC_NCCL_PATH_SYS,
    ACC_NCCL_PATH_NET,
    ACC_NCCL_PATH_DIS,
    ACC_NCCL_PATH_COUNT
} acc_nccl_path_t;

/* Search patterns, NCCL's values (graph.h). */
typedef enum {
    ACC_NCCL_PATTERN_NONE = 0, /* the graph was not searched */
    ACC_NCCL_PATTERN_BALANCED_TREE = 1,
    ACC_NCCL_PATTERN_SPLIT_TREE = 2,
    ACC_NCCL_PATTERN_TREE = 3,
    ACC_NCCL_PATTERN_RING = 4,
    ACC_NCCL_PATTERN_NVLS = 5,
    ACC_NCCL_PATTERN_COLLNET_DIRECT = 6
} acc_nccl_pattern_t;

/* "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT" as NCCL prints
 * them; "LL", "LL128", "Simple"; "NVL", "PXN", ...  Out-of-range values give "?". */
const char *acc_nccl_algo_name(acc_nccl_algo_t a);
const char *acc_nccl_proto_name(acc_nccl_proto_t p);
const char *acc_nccl_path_name(acc_nccl_path_t t);

/* The only NCCL release modelled: 2.28 (NCCL_VERSION_CODE 22800 to 22899). */
#define ACC_NCCL_VERSION_DEFAULT 22809

typedef struct {
    int version;           /* NCCL_VERSION_CODE; 0 means ACC_NCCL_VERSION_DEFAULT */
    int collnet;           /* 1: a CollNet (IB SHARP) plugin is present; default 0 */
    int nvls;              /* -1: where NCCL enables it (sm90+, NVSwitch, > 2 GPUs); 0 off; 1 on
                              when the hardware allows it */
    int min_channels;      /* NCCL_MIN_NCHANNELS; 0 = NCCL's default */
    int max_channels;      /* NCCL_MAX_NCHANNELS; 0 = NCCL's default (64) */
    double net_latency_us; /* the latency the net plugin reports (graph.latencyInter), >= 0;
                              or ACC_NCCL_NET_LATENCY_OF_FABRIC, the default: the figure of the
                              topology's fabric (acc_topo_fabric: 75 us for EFA on p5, 0 for
                              InfiniBand and RoCE, 0 for a fabric without figures) */
} acc_nccl_options_t;

#define ACC_NCCL_NET_LATENCY_OF_FABRIC (-1.0)

/* Defaults: version 2.28.9, collnet off, nvls -1, channels 0, latency of the fabric. */
void acc_nccl_options_init(acc_nccl_options_t *opts);
/* The plugin latency opts give on topo (both borrowed): net_latency_us, or the figure of the
 * topology's fabric where opts leave it to the fabric. */
double acc_nccl_net_latency_us(const acc_nccl_options_t *opts, const acc_topo_t *topo);

typedef struct acc_nccl_model acc_nccl_model_t;

/* Build the model of NCCL on `topo` (borrowed, must be finalized; not needed afterwards).
 * opts may be NULL for the defaults.  ACC_ERR_UNSUPPORTED for another NCCL version or a
 * topology NCCL could not run on (no GPU, more than 64 GPUs per node), ACC_ERR_INVALID for
 * out-of-range options. */
acc_status_t acc_nccl_model_create(const acc_topo_t *topo, const acc_nccl_options_t *opts,
                                   acc_nccl_model_t **out);
void acc_nccl_model_destroy(acc_nccl_model_t *m);

/* NCCL's predicted time of one call.  A combination NCCL would not run (disabled, or not an
 * algorithm of that collective) sets *us to -1 and returns ACC_ERR_UNSUPPORTED with the
 * reason. */
acc_status_t acc_nccl_model_time(const acc_nccl_model_t *m, acc_coll_t coll, uint64_t nbytes,
                                 acc_nccl_algo_t algo, acc_nccl_proto_t proto, double *us);

typedef struct {
    acc_nccl_algo_t algo;
    acc_nccl_proto_t proto;
    double time_us;
    int nchannels; /* channels (CTAs) of this call, as topoGetAlgoInfo computes them */
    int nthreads;  /* threads per CTA */
    double algbw;  /* nbytes / time, GB/s */
    double busbw;  /* algbw x nccl-tests' factor: 2(n-1)/n allreduce, (n-1)/n allgather and
                      reduce_scatter */
} acc_nccl_choice_t;

/* What NCCL picks for this call: the fastest enabled algorithm x protocol. */
acc_status_t acc_nccl_model_select(const acc_nccl_model_t *m, acc_coll_t coll, uint64_t nbytes,
                                   acc_nccl_choice_t *out);

/* ---- introspection (reports, tests) ---- */

/* The search graph NCCL uses for an algorithm (Tree and PAT share the tree graph, NVLS and
 * NVLSTree the NVLS graph), after NCCL aligns the ring and tree channel counts. */
typedef struct {
    acc_nccl_pattern_t pattern; /* NONE when not searched (NVLS off, CollNet off) */
    int nchannels;
    double bw_intra, bw_inter; /* GB/s per channel */
    acc_nccl_path_t type_intra, type_inter;
    int same_channels;
    int crossnic;
    double latency_inter; /* us */
} acc_nccl_graph_t;

acc_status_t acc_nccl_model_graph(const acc_nccl_model_t *m, acc_nccl_algo_t algo,
                                  acc_nccl_graph_t *out);

typedef struct {
    int nranks, nnodes, ppn;
    int min_sm, max_sm;
    int nchannels;           /* comm->nChannels: runtime ring/tree channels */
    int nvls_channels;       /* comm->nvlsChannels; 0 without NVLS */
    int nvls;                /* NVLS supported and its graph found */
    int collnet;             /* CollNet usable (enabled, >= 2 nodes, graph found) */
    double max_bw, total_bw; /* the search's system->maxBw / totalBw, GB/s */
} acc_nccl_summary_t;

void acc_nccl_model_summary(const acc_nccl_model_t *m, acc_nccl_summary_t *out);

/* Entries of NCCL's tables: comm->bandwidths (algorithm bandwidth, GB/s; 0 = disabled) and
 * comm->latencies (us) for allreduce, allgather and reduce_scatter; 0 for anything else. */
double acc_nccl_model_bandwidth(const acc_nccl_model_t *m, acc_coll_t coll, acc_nccl_algo_t algo,
                                acc_nccl_proto_t proto);
double acc_nccl_model_latency(const acc_nccl_model_t *m, acc_coll_t coll, acc_nccl_algo_t algo,
                              acc_nccl_proto_t proto);

/* Append the graphs and tables as NCCL_DEBUG_SUBSYS=GRAPH,TUNING would print them. */
acc_status_t acc_nccl_model_dump(const acc_nccl_model_t *m, acc_buf_t *out);

/* ---- acc's plan simulator ------------------------------------------------------------------
 *
 * acc_sim_plan() predicts the time of a verified plan for one call of nbytes (NCCL's nBytes, as
 * above) by playing its operations over the links they use: every transfer (send/recv pair,
 * put, get, each peer read of reduce_peers) follows the topology's route between its two ranks
 * (node-local links, the NICs and the fabric between nodes); transfers active at the same time
 * share each link max-min fairly; a lane (one thread block) moves at most the per-lane rate of
 * its protocol; every operation pays its protocol's per-operation latency and every hop its
 * link latency; reductions cost the GPU memory traffic they need.  Each constant lives in one
 * table (compiler/sim_constants.c) with its source.  Plans of 1024 ranks (ring, hierarchical)
 * simulate in well under a second.
 */
typedef struct acc_sim acc_sim_t;

typedef struct {
    double time_us;     /* predicted completion time of the slowest rank */
    double algbw;       /* nbytes / time, GB/s */
    double busbw;       /* algbw x nccl-tests' factor for the plan's collective */
    double link_util;   /* busiest link's average utilisation over the call, 0..1 */
    uint64_t transfers; /* transfers simulated */
} acc_sim_result_t;

/* A simulator for one topology (borrowed, finalized; must outlive the simulator).  Reusable for
 * any number of plans and sizes; not thread-safe (one per thread). */
acc_status_t acc_sim_create(const acc_topo_t *topo, acc_sim_t **out);
void acc_sim_destroy(acc_sim_t *sim);
/* plan->nranks must equal acc_topo_ranks(topo); dt decides element size and reduction cost. */
acc_status_t acc_sim_plan(acc_sim_t *sim, const acc_plan_t *plan, uint64_t nbytes, acc_dtype_t dt,
                          acc_sim_result_t *out);
/* acc_sim_plan with protocol proto in place of plan->proto: threads that price one plan with
 * several protocols at once share it unchanged. */
acc_status_t acc_sim_plan_proto(acc_sim_t *sim, const acc_plan_t *plan, acc_proto_t proto,
                                uint64_t nbytes, acc_dtype_t dt, acc_sim_result_t *out);
/* acc_sim_plan, and when each operation ran: times[2 i] its start and times[2 i + 1] its end,
 * in microseconds from the call's start (the launch overhead, which precedes every
 * operation, left out), i numbering the operations rank by rank, lane by lane, in order
 * (2 x acc_plan_op_count(plan) entries, the caller's).  A picture's timeline. */
acc_status_t acc_sim_plan_trace(acc_sim_t *sim, const acc_plan_t *plan, uint64_t nbytes,
                                acc_dtype_t dt, acc_sim_result_t *out, double *times);
/* Append a plan as an SVG picture (acc-compile --draw): its connections as a graph (ranks on a
 * circle, an arrow <path class="hop" data-lane="L"> per rank each lane moves data to, up to 64
 * ranks and 4 lanes) and a timeline of rank x lane (<rect class="op">, the critical path's
 * operations with class "op critical" and joined by <path class="critical-path">), up to 48
 * rows, saying in the picture what it leaves out.  Times are acc_sim_plan_trace's for nbytes of
 * float on topo when topo (borrowed, may be NULL) has the plan's rank count, else steps.  The
 * plan (borrowed) must have passed acc_plan_verify. */
acc_status_t acc_plan_draw_svg(const acc_plan_t *plan, const acc_topo_t *topo, uint64_t nbytes,
                               acc_buf_t *out);
/* Append the simulator's constants, one per line: name, value, unit and source (acc-info). */
acc_status_t acc_sim_constants_dump(acc_buf_t *out);

/* A device measured running acc's own kernels (bench_kernels measures these in the same run),
 * for predicting the single-GPU executor, which runs every rank of a plan on that device.  With
 * one set (acc_sim_set_device), the simulator puts the measurements in place of the constants
 * that stand for NCCL's kernels and a machine of many GPUs: a call costs launch_us; a message,
 * a signal and a peer read each cross in handoff_us, whatever the protocol; every rank's memory
 * is the device's one memory, moving copy_gbs of bytes read and written, with no per-lane or LL
 * cap (the executor spreads a lane over as many blocks as the size needs).  The topology still
 * gives the routes and their links (give them the copy rate, so that memory binds first). */
typedef struct {
    double launch_us;  /* an empty kernel, launched back to back */
    double handoff_us; /* one flag from one block to another (release, then acquire) */
    double copy_gbs;   /* a device-to-device copy: GB read + written per second */
} acc_sim_device_t;

/* Predict sim's plans on that device from now on (dev is copied).  ACC_ERR_INVALID for a figure
 * that is not positive and finite (launch_us may be 0), naming it. */
acc_status_t acc_sim_set_device(acc_sim_t *sim, const acc_sim_device_t *dev);

/* Lower bounds for a collective of nbytes on a topology, for any schedule, acc's or NCCL's:
 * bandwidth (the bytes each rank must move over its bottleneck: e.g. 2(n-1)/n x nbytes for
 * allreduce through the slowest of the GPU's aggregate NVLink/PCIe egress and, across nodes,
 * its share of the NICs; nbytes once when the NVSwitches reduce, as NCCL's NVLS has them do)
 * and latency (the fewest sequential hops any algorithm needs, each at its path's latency). */
typedef struct {
    double bw_us;  /* bandwidth bound */
    double lat_us; /* latency bound */
    double us;     /* max of the two */
    double busbw;  /* busbw at the bound */
    int in_switch; /* 1: the bound counts on reduction in the NVSwitches (NVLS) */
} acc_bound_t;

acc_status_t acc_cost_bound(const acc_topo_t *topo, acc_coll_t coll, uint64_t nbytes,
                            acc_bound_t *out);

#ifdef __cplusplus
}
#endif
#endif /* ACC_COST_H */
