/*
 * nccl_internal.h - what the files of the NCCL replica share (nccl_system.c, nccl_paths.c,
 * nccl_search.c, nccl_tune.c, nccl_model.c); nothing else may include it.
 *
 * The replica keeps NCCL's own data layout where the port depends on it: nodes of six types,
 * links sorted by bandwidth, paths from every node to each GPU, CPU, NET and NVS node, and
 * bandwidths in float with NCCL's rounding, so that the graph search, whose result depends on
 * the order it tries things in and on exact float comparisons, finds what NCCL finds.  Every
 * constant cites reference/02-nccl.md (the "sheet"); where the sheet is silent the comment
 * says so and names the NCCL 2.28 source it follows.
 *
 * Names shared between these files start with nn_ ("NCCL, natively"), never nccl: the runtime
 * links the real libnccl, whose symbols must not meet these.
 */
#ifndef ACC_NCCL_INTERNAL_H
#define ACC_NCCL_INTERNAL_H

#include "acc_cost.h"

#define NN_MAXCHANNELS 64      /* MAXCHANNELS (sheet §2: "cap 64") */
/* NCCL_TOPO_MAX_NODES (src/include/graph.h), raised from 256 to 576 for GB200 NVL72, whose 72
 * GPUs NCCL fuses into one system. */
#define NN_MAX_GPUS    576
#define NN_LOC_BW      5000.0f /* LOC_BW (sheet §1 "Other constants") */

/* Node types in NCCL's order (topo.h): the search walks them in this order. */
enum { NN_GPU = 0, NN_PCI, NN_NVS, NN_CPU, NN_NIC, NN_NET, NN_TYPES };
/* Short names of NCCL's algorithms, protocols and collectives, for tables laid out as NCCL's
 * [algorithm][protocol] arrays are. */
enum {
    NN_T = ACC_NCCL_ALGO_TREE,
    NN_R = ACC_NCCL_ALGO_RING,
    NN_CD = ACC_NCCL_ALGO_COLLNET_DIRECT,
    NN_CC = ACC_NCCL_ALGO_COLLNET_CHAIN,
    NN_NV = ACC_NCCL_ALGO_NVLS,
    NN_NT = ACC_NCCL_ALGO_NVLS_TREE,
    NN_PAT = ACC_NCCL_ALGO_PAT
};
enum {
    NN_LL = ACC_NCCL_PROTO_LL,
    NN_LL128 = ACC_NCCL_PROTO_LL128,
    NN_SIMPLE = ACC_NCCL_PROTO_SIMPLE
};
enum { NN_AR = ACC_COLL_ALLREDUCE, NN_AG = ACC_COLL_ALLGATHER, NN_RS = ACC_COLL_REDUCE_SCATTER };

/* Link types; NCCL numbers them like the path types they start (sheet §1 "Path types"). */
enum {
    NN_LINK_LOC = ACC_NCCL_PATH_LOC,
    NN_LINK_NVL = ACC_NCCL_PATH_NVL,
    NN_LINK_C2C = ACC_NCCL_PATH_C2C,
    NN_LINK_PCI = ACC_NCCL_PATH_PIX,
    NN_LINK_SYS = ACC_NCCL_PATH_SYS,
    NN_LINK_NET = ACC_NCCL_PATH_NET
};

/* CPU architecture and vendor as NCCL classifies them (topo.h); 0 is "not recognised". */
enum { NN_ARCH_UNKNOWN = 0, NN_ARCH_X86, NN_ARCH_POWER, NN_ARCH_ARM };
enum { NN_VENDOR_UNKNOWN = 0, NN_VENDOR_INTEL, NN_VENDOR_AMD, NN_VENDOR_ZHAOXIN };
enum { NN_INTEL_BDW = 0, NN_INTEL_SKL, NN_INTEL_SRP, NN_INTEL_ERP };

typedef struct {
    int to;   /* node index */
    int type; /* NN_LINK_* */
    float bw; /* GB/s left; the search takes and gives back bandwidth here */
} nn_link_t;

typedef struct {
    int type, index;         /* NN_* and the index among nodes of that type */
    int sm;                  /* GPU: compute capability x 10 */
    uint64_t used;           /* GPU: one bit per channel being searched */
    int arch, vendor, model; /* CPU */
    float net_bw;            /* NET: bandwidth left for channels starting here */
    int local_gpu;           /* NET: the GPU NCCL pairs with it (ncclTopoGetLocalGpu), -1 */
    int link0, nlinks;       /* outgoing links: s->link[link0 .. link0 + nlinks) */
} nn_node_t;

typedef struct {
    int *hop; /* link indices, in order */
    int count;
    float bw;
    int type; /* acc_nccl_path_t */
} nn_path_t;

typedef struct {
    nn_node_t *node;
    int nnodes;
    int count[NN_TYPES];
    int *of_type[NN_TYPES]; /* node index of the i-th node of each type */
    nn_link_t *link;
    int nlinks;
    nn_path_t *path;        /* path[from * nnodes + to], computed for GPU/CPU/NET/NVS targets */
    int *local_net;         /* ncclTopoGetLocalNet for [gpu][channel < 64], once paths are final */
    float max_bw, total_bw; /* ncclTopoSearchInit */
    int cpu_arch, cpu_vendor, cpu_model; /* of CPU 0, as ncclTopoCpuType reports */
    int min_sm, max_sm;
} nn_system_t;

/* One search graph (struct ncclTopoGraph); intra holds GPU indices, inter NET indices. */
typedef struct {
    int id, pattern, crossnic, collnet;
    int min_channels, max_channels, nchannels;
    float bw_intra, bw_inter, latency_inter;
    int type_intra, type_inter, same_channels, nhops;
    int intra[NN_MAXCHANNELS * NN_MAX_GPUS];
    int inter[NN_MAXCHANNELS * 2];
} nn_graph_t;

/* nccl_system.c: NCCL's view of one node of `topo`; with_net adds a NET node per NIC (NCCL
 * drops them when every rank is local).  Frees what it built on failure. */
acc_status_t nn_system_build(const acc_topo_t *topo, int with_net, nn_system_t *s);
void nn_system_free(nn_system_t *s);
/* NCCL's per-link NVLink rate for an SM (sheet §1 "NVLink"). */
float nn_nvlink_bw(int sm);
/* NCCL's rate of a PCIe link (GB/s; gen/width 0 when unknown) and of a NIC of gbps Gb/s. */
float nn_pci_bw(int gen, int width);
float nn_net_bw(double gbps);

static inline nn_node_t *nn_node(const nn_system_t *s, int type, int i)
{
    return &s->node[s->of_type[type][i]];
}
static inline nn_path_t *nn_path(const nn_system_t *s, int t1, int i1, int t2, int i2)
{
    return &s->path[(size_t)s->of_type[t1][i1] * (size_t)s->nnodes + (size_t)s->of_type[t2][i2]];
}

/* nccl_paths.c: ncclTopoComputePaths, ncclTopoSearchInit and the queries built on paths. */
acc_status_t nn_compute_paths(nn_system_t *s);
/* ncclTopoGetLocal: the nodes of rtype with the widest, then best-typed path from (type, i);
 * returns their count, *ptype their path type. */
int nn_get_local(const nn_system_t *s, int type, int i, int rtype, int *locals, int *ptype);
/* ncclTopoGetLocalNet: the NET index GPU g uses on a channel. */
int nn_local_net(const nn_system_t *s, int g, int channel);
/* ncclTopoSelectNets: the NETs to try, for one GPU or (gpu -1) for all; returns their count. */
int nn_select_nets(const nn_system_t *s, int type_inter, int gpu, int *nets);
int nn_gpu_min_path(const nn_system_t *s, int type);
int nn_gpu_max_path(const nn_system_t *s, int type);
int nn_split_nvlink(const nn_system_t *s);

/* nccl_search.c: one pass of ncclTopoSearchRec from an empty graph g (the search state),
 * keeping the best graph found in *save; *time is the budget, -1 on return when the graph
 * reached its maximum channel count.  ACC_ERR_NOMEM when its scratch cannot be had. */
acc_status_t nn_search_run(nn_system_t *s, nn_graph_t *g, nn_graph_t *save, int *time);
/* nccl_compute.c: ncclTopoCompute.  g->id, pattern, collnet, min/max_channels are inputs. */
acc_status_t nn_compute(nn_system_t *s, nn_graph_t *g);

/* The model object (acc_cost.h); filled by nccl_model.c, tables by nccl_tune.c. */
#define NN_COLLS 3 /* allreduce, allgather, reduce_scatter: acc_coll_t 0, 1, 2 */

struct acc_nccl_model {
    int nranks, nnodes, ppn, min_sm, max_sm;
    int cpu_arch, cpu_vendor, nvs_count;
    int nchannels, nvls_channels, nvls, collnet;
    float max_bw, total_bw;
    acc_nccl_graph_t graph[ACC_NCCL_ALGO_COUNT]; /* graphs[a] as NCCL's tuning sees them */
    float bw[NN_COLLS][ACC_NCCL_ALGO_COUNT][ACC_NCCL_PROTO_COUNT];  /* comm->bandwidths */
    float lat[NN_COLLS][ACC_NCCL_ALGO_COUNT][ACC_NCCL_PROTO_COUNT]; /* comm->latencies */
    int max_threads[ACC_NCCL_ALGO_COUNT][ACC_NCCL_PROTO_COUNT];
    int thread_threshold[ACC_NCCL_ALGO_COUNT][ACC_NCCL_PROTO_COUNT];
};

/* nccl_tune.c: ncclTopoTuneModel, on a model whose graphs and counts are set. */
void nn_tune(struct acc_nccl_model *m);
/* ncclTopoGetAlgoTime; -1 when the combination is disabled. */
float nn_algo_time(const struct acc_nccl_model *m, int coll, int algo, int proto, uint64_t nbytes);

#endif
