/*
 * acc_topo.h - the model of the machine that schedules are compiled for.
 *
 * A topology is one *node type* (a graph of GPUs, NVSwitches, PCIe switches, CPUs/NUMA nodes and
 * NICs joined by directed links) times a node count, plus the network between nodes (NIC speed
 * comes from the NIC vertices; latency, rail optimisation and oversubscription from
 * acc_topo_network_t).  Ranks are GPUs numbered node-major: rank = node * gpus_per_node + gpu id.
 *
 * Units: bandwidth in GB/s per direction (10^9 bytes/s), latency in microseconds, NIC speed in
 * Gb/s.  Bandwidths are the hardware's rates (NVLink link count x per-generation rate, PCIe
 * generation x width); efficiency factors belong to the cost model, not here.
 *
 * Life cycle: importers create a topology, add vertices, links and the network, record every fact
 * they had to assume (acc_topo_assume), then call acc_topo_finalize(), which validates the graph
 * (acc_topo_check) and computes paths.  Queries other than the vertex/link accessors need a
 * finalized topology.  Conventions for errors, ownership and threads are those of acc_common.h;
 * a finalized topology is read-only and may be shared between threads.
 */
#ifndef ACC_TOPO_H
#define ACC_TOPO_H

#include "acc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    ACC_VTX_GPU = 0,
    ACC_VTX_NVSWITCH,
    ACC_VTX_PCISW, /* a PCIe switch, bridge or host bridge (root complex) */
    ACC_VTX_CPU,   /* a CPU package / NUMA node */
    ACC_VTX_NIC,
    ACC_VTX_KIND_COUNT
} acc_vertex_kind_t;

typedef enum {
    ACC_LINK_NVLINK = 0,
    ACC_LINK_PCIE,
    ACC_LINK_C2C, /* NVLink-C2C between a GPU and its CPU (Grace) */
    ACC_LINK_SMP, /* inter-socket interconnect: QPI/UPI, Infinity Fabric, X-Bus */
    ACC_LINK_KIND_COUNT
} acc_link_kind_t;

/* Path classes in NCCL's vocabulary, best first; NODE is nvidia-smi's "across host bridges
 * within one NUMA node", which NCCL reports as PHB. */
typedef enum {
    ACC_PATH_LOC = 0,
    ACC_PATH_NVL, /* NVLink, direct or through NVSwitches */
    ACC_PATH_NVB, /* NVLink through an intermediate GPU */
    ACC_PATH_C2C,
    ACC_PATH_PIX,  /* at most one PCIe switch */
    ACC_PATH_PXB,  /* several PCIe switches, no host bridge */
    ACC_PATH_PHB,  /* through one PCIe host bridge */
    ACC_PATH_NODE, /* through the CPU, between host bridges of one NUMA node */
    ACC_PATH_SYS,  /* across the SMP interconnect between NUMA nodes */
    ACC_PATH_NET,  /* across the network between nodes */
    ACC_PATH_DIS,  /* disconnected */
    ACC_PATH_CLASS_COUNT
} acc_path_class_t;

#define ACC_TOPO_NAME_MAX     64
#define ACC_TOPO_PLANES_MAX   64
#define ACC_TOPO_AFFINITY_MAX 256

/* One vertex of the node graph.  Fields that do not apply to a kind are zero / empty;
 * "unknown" is 0 for numbers, "" for strings and -1 for numa. */
typedef struct {
    acc_vertex_kind_t kind;
    int id;                       /* index among vertices of this kind: GPU 0..n-1, NIC 0..m-1 */
    char name[ACC_TOPO_NAME_MAX]; /* canonical name: "GPU0", "NVS1", "PCI3", "CPU0", "NIC2" */
    char busid[24];               /* PCI bus id "0000:17:00.0", lower case; "" when unknown */
    int numa;                     /* id of the CPU vertex this device hangs under; -1 unknown */
    int vendor_id, device_id;     /* PCI ids; 0 when unknown */
    /* GPU */
    char model[ACC_TOPO_NAME_MAX]; /* "H100 SXM5 80GB"; "" when unknown */
    int sm;                        /* compute capability x 10: 70, 80, 90, 100 */
    int sm_count;                  /* streaming multiprocessors */
    uint64_t mem_bytes;            /* device memory */
    /* NIC */
    char dev_name[ACC_TOPO_NAME_MAX]; /* "mlx5_0", "rdmap79s0", "efa0" */
    double speed_gbps;                /* line rate in Gb/s */
    int gdr;                          /* GPUDirect RDMA usable: 1 yes, 0 no/unknown */
    int plane; /* the network plane the NIC is wired to, 0 to ACC_TOPO_PLANES_MAX - 1 (NCCL's net
                  API v12 reports a rail and a plane per NIC): NICs of different planes meet only
                  where the fabric joins them, and a fabric that does gives them one plane */
    /* PCIe switch */
    int host_bridge; /* 1 when this vertex is a host bridge (root complex) */
    /* CPU */
    char cpu_arch[16];                    /* "x86_64", "arm64", "ppc64" */
    char cpu_vendor[32];                  /* "GenuineIntel", "AuthenticAMD" */
    int cpu_family, cpu_model;            /* CPUID family and model; 0 unknown */
    char affinity[ACC_TOPO_AFFINITY_MAX]; /* cpu list "0-47,96-143" or hex mask as given */
} acc_topo_vertex_t;

/* One direction of a physical link. */
typedef struct {
    int from, to; /* vertex indices */
    acc_link_kind_t kind;
    int count;      /* NVLinks bonded into this connection; 1 for other kinds */
    int gen, width; /* PCIe generation and lane count; 0 when unknown / not PCIe */
    double bw;      /* GB/s in this direction, all bonded links together */
    double lat_us;  /* one-hop latency */
} acc_topo_link_t;

typedef struct {
    int nodes;                    /* >= 1 */
    char name[ACC_TOPO_NAME_MAX]; /* "ib-ndr", "efa", "roce", "vpc"; "" for one node */
    double latency_us;            /* one-way latency of a network step, NIC to NIC; by default
                                     acc_topo_fabric_latency_us(name) */
    int rail_optimized;           /* 1: NIC k of every node shares a leaf switch (a rail) */
    double oversubscription;      /* >= 1: bisection is NIC bandwidth / oversubscription */
} acc_topo_network_t;

/* The best path between two endpoints. */
typedef struct {
    acc_path_class_t cls;
    double bw;     /* bottleneck bandwidth, GB/s */
    double lat_us; /* sum of hop latencies */
    int hops;      /* number of links */
} acc_topo_path_t;

typedef enum {
    ACC_TOPO_FMT_UNKNOWN = 0,
    ACC_TOPO_FMT_HWLOC_XML,
    ACC_TOPO_FMT_NCCL_XML,
    ACC_TOPO_FMT_NCCL_GRAPH, /* recognised only to be refused */
    ACC_TOPO_FMT_NVIDIA_SMI,
    ACC_TOPO_FMT_YAML,
    ACC_TOPO_FMT_SYNTHETIC,
    ACC_TOPO_FMT_LIVE,
} acc_topo_format_t;

typedef struct acc_topo acc_topo_t;

/* ---- names ------------------------------------------------------------------------------ */
const char *acc_vertex_kind_name(acc_vertex_kind_t k); /* "gpu", "nvswitch", ... */
const char *acc_link_kind_name(acc_link_kind_t k);     /* "nvlink", "pcie", "c2c", "smp" */
const char *acc_path_class_name(acc_path_class_t c);   /* "NVL", "PIX", "NODE", ... */
/* NCCL's own name for a class (NODE becomes PHB). */
const char *acc_path_class_nccl_name(acc_path_class_t c);
const char *acc_topo_format_name(acc_topo_format_t f); /* "hwloc-xml", "nccl-xml", ... */

/* ---- loading ---------------------------------------------------------------------------- */
/* SRC is a file path, a shipped platform name ("dgx-h100"), "auto" for live discovery, or a
 * synthetic description ("nodes=2 gpus=8 nvlink=18 nic=8x400").  The format of a file is
 * detected from its content, never from its name. */
acc_status_t acc_topo_load(const char *src, acc_topo_t **out);
acc_status_t acc_topo_load_file(const char *path, acc_topo_t **out);
/* `name` is used in messages and as the topology's source. */
acc_status_t acc_topo_load_buffer(const char *text, size_t len, const char *name, acc_topo_t **out);
acc_status_t acc_topo_load_synthetic(const char *desc, acc_topo_t **out);
acc_status_t acc_topo_load_platform(const char *name, acc_topo_t **out);
acc_status_t acc_topo_load_live(acc_topo_t **out);
/* Content sniffing.  Returns ACC_TOPO_FMT_UNKNOWN when nothing matches. */
acc_topo_format_t acc_topo_detect_format(const char *text, size_t len);
/* Directory of shipped platforms (ACC_PLATFORM_DIR or the installed default) and their names. */
const char *acc_topo_platform_dir(void);
acc_status_t acc_topo_platform_list(char ***names, size_t *count); /* free with acc_strv_free */

/* ---- building (importers) --------------------------------------------------------------- */
acc_status_t acc_topo_create(acc_topo_t **out);
void acc_topo_destroy(acc_topo_t *t);
/* A deep copy (finalized state included). */
acc_status_t acc_topo_clone(const acc_topo_t *t, acc_topo_t **out);
/* A finalized copy of t with the NVLink fabric of `platform` (a shipped platform, typically):
 * its GPU-NVSwitch and GPU-GPU NVLinks, GPU by id, recorded among the copy's assumptions.  For
 * inputs that list no NVLink although their GPUs have them (NCCL topology files of network
 * plugins and cloud images: NCCL discovers NVLinks at run time).  ACC_ERR_TOPO, naming both,
 * when t already lists NVLinks, when the GPU counts or any GPU's compute capability differ,
 * when the platform gives a GPU more NVLinks than t's part has, or when the platform has none;
 * ACC_ERR_UNSUPPORTED for a platform with NVLink or C2C to its CPUs.  Both are borrowed. */
acc_status_t acc_topo_nvlink_from(const acc_topo_t *t, const acc_topo_t *platform,
                                  acc_topo_t **out);
/* acc_topo_load(src) with the NVLinks of the shipped platform named `platform` (NULL: none) added
 * by acc_topo_nvlink_from; the loader's warning that src lists no NVLink is left out, since the
 * result has them (acc-compile --nvlink-from). */
acc_status_t acc_topo_load_with_nvlinks(const char *src, const char *platform, acc_topo_t **out);

/* Add a vertex; its id is the next free one of its kind and its name is derived from kind and id
 * unless set afterwards.  *index receives its vertex index.  The returned pointer from
 * acc_topo_vertex_mut() is valid until the next add. */
acc_status_t acc_topo_add_vertex(acc_topo_t *t, acc_vertex_kind_t kind, int *index);
acc_topo_vertex_t *acc_topo_vertex_mut(acc_topo_t *t, int index);
/* Add a link in both directions with the same attributes. */
acc_status_t acc_topo_add_link(acc_topo_t *t, int a, int b, acc_link_kind_t kind, int count,
                               double bw, double lat_us);
/* Add one direction only (asymmetric links). */
acc_status_t acc_topo_add_link_dir(acc_topo_t *t, int from, int to, acc_link_kind_t kind, int count,
                                   double bw, double lat_us);
/* Set PCIe generation and width on both directions of the link a-b (for exports and NCCL). */
acc_status_t acc_topo_set_pcie(acc_topo_t *t, int a, int b, int gen, int width);
acc_status_t acc_topo_set_network(acc_topo_t *t, const acc_topo_network_t *net);
acc_status_t acc_topo_set_name(acc_topo_t *t, const char *name);
acc_status_t acc_topo_set_source(acc_topo_t *t, const char *source, acc_topo_format_t fmt);
/* Record an assumed fact, e.g. "NIC speed 200 Gb/s (not in the input; default for CX-6)". */
acc_status_t acc_topo_assume(acc_topo_t *t, const char *fmt, ...) ACC_PRINTF(2, 3);
/* Validate and compute paths; after this the topology is read-only. */
acc_status_t acc_topo_finalize(acc_topo_t *t);

/* ---- another network ------------------------------------------------------------------- */
/* A copy of topo with its network changed as `params` says: what-if questions about a cluster
 * whose node type is known ("this node type on 100 Gb/s RoCE").  params are key=value pairs
 * separated by blanks or commas, each key at most once, at least one pair:
 *
 *     nic=GBPS      every NIC's line rate in Gb/s, > 0 (the topology must have NICs)
 *     latency=US    one-way NIC-to-NIC latency in microseconds, >= 0 (also latency_us=US)
 *     rail=0|1      rail-optimised (also yes/no, true/false)
 *     oversub=X     oversubscription, >= 1 (1: non-blocking)
 *     nodes=N       node count, 1 to 65536
 *     fabric=NAME   the network's name: 1 to 63 letters, digits, '-', '_' and '.'; without
 *                   latency= it also sets the latency to the fabric's
 *                   (acc_topo_fabric_latency_us)
 *
 * What params does not name stays as topo has it, so that the topology's own values given as
 * parameters give the same fingerprint.  A pair without '=', an unknown key or a key given twice
 * is ACC_ERR_PARSE, as is an empty string; a value out of range is ACC_ERR_INVALID; each message
 * names the pair and lists the keys.  topo (borrowed) need not be finalized; *out is a new
 * finalized topology with topo's name, source and assumptions. */
acc_status_t acc_topo_with_network(const acc_topo_t *topo, const char *params, acc_topo_t **out);

/* ---- fabrics ---------------------------------------------------------------------------- */
/* A network fabric acc knows by name (topo_fabric.c, schedules/TOPOLOGY.md "Fabrics"): the
 * latency its NCCL network plugin reports, with the source of that figure.  A network step
 * across it costs NCCL's NET hop (2.7 us, LL) plus that latency, in acc's model and NCCL's. */
typedef struct {
    const char *name;         /* as `fabric:` and fabric= give it: "efa", "ib-ndr", ... */
    const char *what;         /* "AWS EFA and EFAv2 (p4d, p4de, p5, p5e)" */
    double plugin_latency_us; /* ncclNetProperties.latency of its plugin (graph.latencyInter) */
    const char *source;       /* where that figure is published */
} acc_topo_fabric_t;

/* The fabric of that name (exact), or NULL for a name acc has no figures for. */
const acc_topo_fabric_t *acc_topo_fabric(const char *name);
/* Every known fabric, in the documented order. */
const acc_topo_fabric_t *acc_topo_fabrics(size_t *count);
/* The one-way latency of a network step across the fabric `name`: NCCL's NET hop plus its
 * plugin's latency; the NET hop alone for a name not in the table (or NULL).  The default of
 * acc_topo_network_t.latency_us wherever a network names its fabric but not its latency. */
double acc_topo_fabric_latency_us(const char *name);

/* ---- queries ---------------------------------------------------------------------------- */
const char *acc_topo_name(const acc_topo_t *t);   /* "" when unnamed */
const char *acc_topo_source(const acc_topo_t *t); /* path or description it came from */
acc_topo_format_t acc_topo_format(const acc_topo_t *t);
int acc_topo_vertex_count(const acc_topo_t *t);
const acc_topo_vertex_t *acc_topo_vertex(const acc_topo_t *t, int index);
/* Vertex index of the id-th vertex of a kind, or -1. */
int acc_topo_find(const acc_topo_t *t, acc_vertex_kind_t kind, int id);
/* Vertex index with this bus id (case-insensitive, domain optional), or -1. */
int acc_topo_find_busid(const acc_topo_t *t, const char *busid);
int acc_topo_count(const acc_topo_t *t, acc_vertex_kind_t kind);
int acc_topo_link_count(const acc_topo_t *t);
const acc_topo_link_t *acc_topo_link(const acc_topo_t *t, int index);
/* The link from -> to of a kind, or NULL. */
const acc_topo_link_t *acc_topo_find_link(const acc_topo_t *t, int from, int to,
                                          acc_link_kind_t kind);
const acc_topo_network_t *acc_topo_network(const acc_topo_t *t);
int acc_topo_assumption_count(const acc_topo_t *t);
const char *acc_topo_assumption(const acc_topo_t *t, int index);

int acc_topo_nodes(const acc_topo_t *t);
int acc_topo_gpus_per_node(const acc_topo_t *t);
int acc_topo_ranks(const acc_topo_t *t); /* nodes x gpus per node */
/* Sum of NVLinks between two GPUs of a node (direct links only), and from a GPU to all NVSwitches.
 */
int acc_topo_nvlinks_between(const acc_topo_t *t, int gpu_a, int gpu_b);
int acc_topo_nvlinks_to_switches(const acc_topo_t *t, int gpu);

/* Paths (finalized topologies).  Between two ranks, anywhere in the cluster: */
acc_status_t acc_topo_path(const acc_topo_t *t, int rank_a, int rank_b, acc_topo_path_t *out);
/* Between two vertices of the node graph (any kinds). */
acc_status_t acc_topo_vertex_path(const acc_topo_t *t, int va, int vb, acc_topo_path_t *out);
/* The links of that path, in order from va to vb (indices for acc_topo_link): *n of them, none
 * for va == vb and for a disconnected pair.  The array belongs to the topology. */
acc_status_t acc_topo_vertex_route(const acc_topo_t *t, int va, int vb, const int **links, int *n);
/* The NIC a GPU uses to leave the node (its rail): vertex index, or -1 without NICs. */
int acc_topo_gpu_nic(const acc_topo_t *t, int gpu);
/* The NICs a GPU's traffic between nodes is striped across: every NIC it reaches at its best
 * path class, its rail first (four on an AWS p5, one shared by two GPUs on a p4d).  A GPU that
 * reaches NICs only through a host bridge or the CPU, with an NVLink path to a GPU whose NICs
 * are on its own PCIe switches, uses that GPU's NICs, as NCCL's PXN does: *via (may be NULL)
 * gets that GPU's id, else -1.  Returns the count, 0 without NICs or for a bad GPU id; *nics
 * (may be NULL) gets vertex indices, owned by the topology.  Finalized topologies only.  The
 * bandwidth of a path between nodes (acc_topo_path) is what the GPU's stripe carries alone. */
int acc_topo_gpu_nics(const acc_topo_t *t, int gpu, const int **nics, int *via);
/* The NUMA node (CPU id) closest to a vertex, or -1. */
int acc_topo_vertex_numa(const acc_topo_t *t, int index);
/* Every rank-to-rank path as a ranks x ranks row-major matrix (taken by the caller). */
acc_status_t acc_topo_path_matrix(const acc_topo_t *t, acc_topo_path_t **out);

/* ---- fingerprint and checks ------------------------------------------------------------- */
/* SHA-256 (hex) of the canonical form: what matters to schedules, nothing about bus ids or host
 * names.  acc_topo_canonical() appends that canonical text, for debugging a mismatch. */
acc_status_t acc_topo_fingerprint(const acc_topo_t *t, char out[ACC_SHA256_HEX_LEN + 1]);
acc_status_t acc_topo_canonical(const acc_topo_t *t, acc_buf_t *out);
/* Check the invariants of the model; the message names the offending vertex or link. */
acc_status_t acc_topo_check(const acc_topo_t *t);

/* ---- output ----------------------------------------------------------------------------- */
acc_status_t acc_topo_export_yaml(const acc_topo_t *t, acc_buf_t *out);
acc_status_t acc_topo_export_nccl_xml(const acc_topo_t *t, acc_buf_t *out);
acc_status_t acc_topo_summary(const acc_topo_t *t, acc_buf_t *out);
acc_status_t acc_topo_summary_json(const acc_topo_t *t, acc_buf_t *out);
/* One line: "1 node x 8 H100 SXM5 80GB, NVLink 18 to NVSwitch, 8 NICs x 400 Gb/s" (no newline),
 * for lists of machines such as acc-compile --list-platforms. */
acc_status_t acc_topo_describe(const acc_topo_t *t, acc_buf_t *out);
/* Append the node as an SVG picture (acc-compile --draw): every GPU, NVSwitch fabric, PCIe
 * switch, NIC and CPU/NUMA node as a box (<g class="vertex" data-kind="gpu" ...>), every link
 * as <g class="link" data-kind="nvlink|pcie|c2c|smp"> labelled with its bandwidth, and for a
 * cluster the node count and network in the title.  t borrowed, finalized. */
acc_status_t acc_topo_draw_svg(const acc_topo_t *t, acc_buf_t *out);

/* ---- hardware facts (documented defaults, see topo_hw.c) -------------------------------- */
typedef struct {
    int sm;            /* 60, 70, 80, 86, 89, 90, 100 */
    const char *arch;  /* "pascal", "volta", ... */
    double nvlink_gbs; /* per link per direction, hardware rate; 0 without NVLink */
    int max_nvlinks;   /* links per GPU of the SXM part */
} acc_gpu_arch_t;

typedef struct {
    int device_id;     /* PCI device id (vendor 0x10de) */
    const char *model; /* "H100 SXM5 80GB" */
    int sm, sm_count;
    uint64_t mem_bytes;
    double mem_gbs; /* memory bandwidth, GB/s (datasheet) */
    int nvlinks;    /* NVLinks of the part (0 for PCIe cards without a bridge) */
    int pcie_gen;
} acc_gpu_model_t;

const acc_gpu_arch_t *acc_topo_gpu_arch(int sm);
const acc_gpu_model_t *acc_topo_gpu_model_by_pci(int device_id);
/* The whole table, for listings. */
const acc_gpu_model_t *acc_topo_gpu_models(size_t *count);
/* The part a GPU vertex is: its PCI device id's row, else its generation's data-centre part
 * (the SXM form; the larger-memory SXM part where the vertex's memory exceeds the smaller
 * one's).  NULL for a compute capability older than every row. */
const acc_gpu_model_t *acc_topo_gpu_model_of(const acc_topo_vertex_t *gpu);
/* Match a marketing name such as "NVIDIA H100 80GB HBM3" or "Tesla V100-SXM2-16GB". */
const acc_gpu_model_t *acc_topo_gpu_model_by_name(const char *name);
/* PCIe bandwidth per direction in GB/s for a generation and width (128b/130b encoding etc.). */
double acc_topo_pcie_bw(int gen, int width);

#ifdef __cplusplus
}
#endif
#endif /* ACC_TOPO_H */
