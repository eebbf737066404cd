/*
 * topo/internal.h - what the files of topo/ share and nothing outside topo/ may include.
 */
#ifndef ACC_TOPO_INTERNAL_H
#define ACC_TOPO_INTERNAL_H

#include "acc_topo.h"

struct acc_topo {
    char name[ACC_TOPO_NAME_MAX];
    char *source;
    acc_topo_format_t format;

    acc_topo_vertex_t *vertices;
    int nvertices;
    size_t vertices_cap;
    int kind_count[ACC_VTX_KIND_COUNT];

    acc_topo_link_t *links;
    int nlinks;
    size_t links_cap;

    acc_topo_network_t net;

    char **assumed;
    int nassumed;
    size_t assumed_cap;

    /* Computed by acc_topo_finalize(). */
    int finalized;
    int *adj_start;          /* CSR adjacency: outgoing links of vertex v are */
    int *adj_links;          /* adj_links[adj_start[v] .. adj_start[v+1]) */
    acc_topo_path_t *vpaths; /* nvertices x nvertices, node-local best paths */
    int *route_start;        /* the links of the best path va -> vb, source first, are */
    int *route_links;        /* route_links[route_start[p] .. route_start[p+1]), p = va x n + vb */
    int *gpu_vertex;         /* GPU id -> vertex index */
    int *gpu_nic;            /* GPU id -> NIC vertex index of its rail, -1 without NICs */
    int *gpu_nics_start;     /* the NICs GPU g stripes across (topo_nics.c), its rail first, are */
    int *gpu_nics;           /* gpu_nics[gpu_nics_start[g] .. gpu_nics_start[g+1]) */
    int *gpu_pxn;            /* GPU id -> the GPU whose NICs it reaches over NVLink (PXN), or -1 */
    int *vertex_numa;        /* vertex -> CPU id, -1 */
};

/* Importers fill an empty topology `t` from text; `name` is the file or description for
 * messages.  The caller finalizes.  Each sets an error naming the file and place on failure. */
acc_status_t topo_import_hwloc_xml(acc_topo_t *t, const char *text, size_t len, const char *name);
acc_status_t topo_import_nccl_xml(acc_topo_t *t, const char *text, size_t len, const char *name);
acc_status_t topo_import_nvidia_smi(acc_topo_t *t, const char *text, size_t len, const char *name);
acc_status_t topo_import_yaml(acc_topo_t *t, const char *text, size_t len, const char *name);
acc_status_t topo_import_synthetic(acc_topo_t *t, const char *desc);
acc_status_t topo_import_live(acc_topo_t *t);

/* Fill GPU facts (model, sm, SM count, memory) from the PCI device id or model name where the
 * input left them out, recording each assumption.  Used by every importer. */
acc_status_t topo_fill_gpu_defaults(acc_topo_t *t, int vertex);

/* ---- building conventions shared by every importer (topo_build.c) ----
 * - One CPU vertex per NUMA node; a device's `numa` is the id of the CPU it hangs under.
 * - Every NVSwitch chip of a node is folded into one NVSwitch vertex, "the NVSwitch fabric",
 *   as NCCL does: what matters to schedules is each GPU's link count into the fabric.
 * - NVLink bandwidth is never taken from an input: acc_topo_finalize() sets it to link count x the
 *   per-link rate of the GPU's generation (hwloc and driver captures disagree on the rate).
 * - PCIe links carry generation and width; bandwidth follows from them. */
/* The most nodes a cluster may have, in every format: past today's largest (100k GPUs, one to
 * eight per node) with room, and small enough that nodes x GPUs stays an int. */
#define TOPO_MAX_NODES 131072

#define TOPO_LAT_NVLINK_US 0.6 /* NCCL hwLat NVLINK, LL protocol, per hop */
#define TOPO_LAT_PCIE_US   1.0 /* NCCL hwLat PCI, LL protocol, per hop */
#define TOPO_LAT_C2C_US    0.6 /* NVLink-C2C: taken as one NVLink hop */
#define TOPO_LAT_SMP_US    1.0 /* inter-socket hop, as a PCIe hop in NCCL's model */
/* NCCL hwLat NET, LL protocol: a network step's latency before the fabric's plugin adds its own
 * (topo_fabric.c). */
#define TOPO_LAT_NET_US 2.7

/* Record that net's latency is its fabric's (or the NET hop's), the input giving none. */
acc_status_t topo_assume_fabric_latency(acc_topo_t *t, const acc_topo_network_t *net);

/* The node's NVSwitch fabric vertex, created on first use. */
acc_status_t topo_nvswitch(acc_topo_t *t, int *index);
/* Add `count` NVLinks between a and b (both directions), merging with an existing connection. */
acc_status_t topo_add_nvlinks(acc_topo_t *t, int a, int b, int count);
/* PCIe link child-parent; gen/width 0 means unknown: the caller passes defaults and assumes. */
acc_status_t topo_add_pcie(acc_topo_t *t, int child, int parent, int gen, int width);
/* SMP links between every pair of CPU vertices, bandwidth by CPU type (topo_hw.c). */
acc_status_t topo_connect_cpus(acc_topo_t *t);
double topo_smp_bw(const acc_topo_vertex_t *cpu);
/* Parse a PCIe speed string ("16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s") into a generation, 0 if
 * unrecognised. */
int topo_pcie_gen_from_speed(const char *speed);
/* The highest PCIe generation a CPU's root ports speak (CPUID family/model), 0 when unknown. */
int topo_cpu_max_pcie_gen(const acc_topo_vertex_t *cpu);
/* The data-centre GPU generation that first shipped on a PCIe generation (Gen3 Volta, Gen4
 * Ampere, Gen5 Hopper): the default for partial inputs that name no GPU at all. */
const acc_gpu_model_t *topo_gpu_model_for_pcie_gen(int gen);
/* Default PCIe generation for a GPU architecture (the GPU's own host link). */
int topo_default_pcie_gen(int sm);

/* GPUs whose part has NVLinks in an input that lists none (topo_nvlink.c): their count, and,
 * when out is given and there are some, the warning that plans will be PCIe plans and how to get
 * NVLink plans.  0 for synthetic and live topologies, which state their NVLinks. */
int topo_missing_nvlinks(const acc_topo_t *t, acc_buf_t *out);

/* topo_nccl_xml.h and topo_hwloc.h are private to their importers' files. */

/* Paths: computed by finalize (topo_paths.c). */
acc_status_t topo_compute_paths(acc_topo_t *t);
void topo_free_paths(acc_topo_t *t);
/* After the node-local paths (topo_nics.c): each GPU's rail, the NICs it stripes across and
 * its PXN peer. */
acc_status_t topo_assign_nics(acc_topo_t *t);
/* The path between GPU ga and GPU gb of two different nodes (topo_nics.c). */
void topo_net_path(const acc_topo_t *t, int ga, int gb, acc_topo_path_t *out);

/* Normalise a bus id to "dddd:bb:dd.f" lower case; returns 0 if it is not a bus id. */
int topo_busid_normalize(const char *in, char out[24]);

/* A deep copy of t that is not finalized, whatever t is: for a variant of t to finalize again
 * (acc_topo_clone finalizes the copy of a finalized topology). */
acc_status_t topo_copy(const acc_topo_t *t, acc_topo_t **out);

/* ---- one-line key=value descriptions (topo_kv.c): synthetic topologies, network parameters */
typedef struct {
    const char *key;
    const char *alias; /* another name accepted for the key; NULL: none */
    const char *form;  /* the accepted form, for messages: "nodes=N" */
} topo_kv_key_t;

typedef struct {
    const char *what; /* prefix of every message: "synthetic topology" */
    const char *seps; /* characters between pairs */
    const topo_kv_key_t *keys;
    int nkeys;      /* at most 32 */
    unsigned given; /* set by topo_kv_parse: bit per key index seen */
} topo_kv_t;

/* Called with each pair: the key's index in kv->keys, its name as written and its value
 * (never empty). */
typedef acc_status_t (*topo_kv_fn)(void *ctx, int key, const char *name, const char *val);

/* Split `text` into key=value pairs and hand each to fn.  A pair without '=', an unknown key, a
 * key given twice (ACC_ERR_PARSE) and an empty value (ACC_ERR_INVALID) are errors naming the
 * pair; those of form list every key's form. */
acc_status_t topo_kv_parse(topo_kv_t *kv, const char *text, topo_kv_fn fn, void *ctx);
/* "nodes=N, gpus=N, ...": the keys' forms, for messages. */
void topo_kv_forms(const topo_kv_t *kv, acc_buf_t *out);
/* Set "WHAT: <message> (keys: FORMS)" and return st. */
acc_status_t topo_kv_error(const topo_kv_t *kv, acc_status_t st, const char *fmt, ...)
    ACC_PRINTF(3, 4);
/* Values.  Each returns 1 and sets *out when val is one, else 0 and leaves *out alone. */
int topo_kv_count(const char *val, int lo, int hi, int *out);           /* digits only, lo..hi */
int topo_kv_number(const char *val, double lo, double hi, double *out); /* a digit first */
int topo_kv_flag(const char *val, int *out); /* 1, yes, true / 0, no, false */
/* A network name: 1 to 63 letters, digits, '-', '_' and '.'. */
int topo_kv_fabric(const char *val, char out[ACC_TOPO_NAME_MAX]);

/* The shipped platforms whose names are nearest to name (the same in other case, else one, else
 * two edits away), at most three, "a or b", appended to out; nothing when none is near. */
acc_status_t topo_platform_suggest(const char *name, acc_buf_t *out);

#endif
