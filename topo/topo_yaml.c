/*
 * acc's own topology YAML (schema version 1, schedules/TOPOLOGY.md): the importer.
 *
 * A file holds one node type and, optionally, the network that joins N nodes of it.  The node
 * type is either written out (`node:` a mapping of cpus, gpus, nvswitch, pci_switches, nics and
 * links) or included (`node:` a string naming a shipped platform, or a path relative to the
 * including file), so that a cluster file is three lines on top of a platform file.  Every key is
 * checked and every error names the file and line, because these files are written by hand.
 */
#include "topo_yaml.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define YAML_SCHEMA_VERSION 1
/* A cluster includes a platform, which may include a base platform; deeper is a mistake. */
#define MAX_INCLUDE_DEPTH 8
/* Bigger than any machine description; stops `node: /dev/zero`-style mistakes early. */
#define MAX_INCLUDE_BYTES (16u << 20)
/* Far beyond today's largest clusters, small enough that node x GPU ranks fit an int. */
/* Per kind; NCCL's own limit for a whole node graph is 576 vertices. */
#define MAX_VERTICES 4096
/* NVLink-C2C between Grace and Hopper: 900 GB/s both directions (reference/04-topology.md §5). */
#define C2C_DEFAULT_GBS 450.0

typedef struct {
    acc_topo_t *t;
    char *files[MAX_INCLUDE_DEPTH + 1]; /* resolved paths being read, outermost first */
    int depth;
    int have_network; /* a network mapping was read (outer files override included ones) */
    char name[ACC_TOPO_NAME_MAX];
} ctx_t;

static const char *const root_keys[] = {"version", "name",    "description", "node",
                                        "network", "assumed", NULL};
static const char *const node_keys[] = {"cpus", "gpus",  "nvswitch", "pci_switches",
                                        "nics", "links", NULL};
static const char *const cpu_keys[] = {"id", "arch", "vendor", "family", "model", "affinity", NULL};
static const char *const gpu_keys[] = {"id",         "model", "sm",   "sms",  "memory_gib",
                                       "pci_device", "busid", "numa", "nics", NULL};
static const char *const nvs_keys[] = {"busid", NULL};
static const char *const pci_keys[] = {"id", "busid", "host_bridge", "numa", NULL};
static const char *const nic_keys[] = {"id",   "device", "speed_gbps", "busid",
                                       "numa", "gdr",    "plane",      NULL};
static const char *const nvlink_keys[] = {"a", "b", "kind", "count", "lat_us", NULL};
static const char *const pcie_keys[] = {"a", "b", "kind", "gen", "width", "bw", "lat_us", NULL};
static const char *const bw_link_keys[] = {"a", "b", "kind", "bw", "lat_us", NULL};
static const char *const net_keys[] = {"nodes",          "fabric",           "latency_us",
                                       "rail_optimized", "oversubscription", NULL};

static acc_status_t import_doc(ctx_t *c, const char *text, size_t len, const char *name,
                               int included);

/* ---- typed field helpers ------------------------------------------------------------------ */

static acc_status_t get_int(acc_yaml_doc_t *d, acc_yaml_node_t *map, const char *key, int required,
                            int64_t lo, int64_t hi, int *out)
{
    int64_t v;
    acc_status_t st;
    if (!acc_yaml_get(d, map, key) && !required)
        return ACC_OK;
    if ((st = acc_yaml_get_int(d, map, key, required, &v)) != ACC_OK)
        return st;
    if (v < lo || v > hi)
        return acc_yaml_error(d, acc_yaml_get(d, map, key), ACC_ERR_RANGE,
                              "'%s' is %lld; expected %lld to %lld", key, (long long)v,
                              (long long)lo, (long long)hi);
    *out = (int)v;
    return ACC_OK;
}

static acc_status_t get_double(acc_yaml_doc_t *d, acc_yaml_node_t *map, const char *key,
                               int required, double lo, double hi, double *out)
{
    double v;
    acc_status_t st;
    if (!acc_yaml_get(d, map, key) && !required)
        return ACC_OK;
    if ((st = acc_yaml_get_double(d, map, key, required, &v)) != ACC_OK)
        return st;
    if (!(v >= lo && v <= hi))
        return acc_yaml_error(d, acc_yaml_get(d, map, key), ACC_ERR_RANGE,
                              "'%s' is %g; expected %g to %g", key, v, lo, hi);
    *out = v;
    return ACC_OK;
}

/* Copy a string field into a fixed buffer; too long is an error, not a silent cut. */
static acc_status_t get_text(acc_yaml_doc_t *d, acc_yaml_node_t *map, const char *key, char *dst,
                             size_t cap)
{
    const char *s = NULL;
    acc_status_t st = acc_yaml_get_str(d, map, key, 0, &s);
    if (st != ACC_OK || !s)
        return st;
    if (strlen(s) >= cap)
        return acc_yaml_error(d, acc_yaml_get(d, map, key), ACC_ERR_RANGE,
                              "'%s' is longer than %zu characters", key, cap - 1);
    memcpy(dst, s, strlen(s) + 1);
    return ACC_OK;
}

static acc_status_t get_busid(acc_yaml_doc_t *d, acc_yaml_node_t *map, char out[24])
{
    const char *s = NULL;
    acc_status_t st = acc_yaml_get_str(d, map, "busid", 0, &s);
    if (st != ACC_OK || !s)
        return st;
    if (!topo_busid_normalize(s, out))
        return acc_yaml_error(d, acc_yaml_get(d, map, "busid"), ACC_ERR_PARSE,
                              "'busid' is '%s'; expected a PCI bus id such as 0000:17:00.0", s);
    return ACC_OK;
}

static acc_status_t get_numa(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *map, int *numa)
{
    int ncpu = acc_topo_count(c->t, ACC_VTX_CPU);
    acc_yaml_node_t *n = acc_yaml_get(d, map, "numa");
    acc_status_t st;
    if (!n)
        return ACC_OK;
    if ((st = get_int(d, map, "numa", 1, 0, INT_MAX, numa)) != ACC_OK)
        return st;
    if (*numa >= ncpu)
        return acc_yaml_error(d, n, ACC_ERR_PARSE,
                              "'numa' is %d but the node lists %d CPU(s) (ids 0 to %d); numa "
                              "names the CPU vertex a device hangs under",
                              *numa, ncpu, ncpu - 1);
    return ACC_OK;
}

/* The sequence under map[key] (absent is an empty list). */
static acc_status_t get_seq(acc_yaml_doc_t *d, acc_yaml_node_t *map, const char *key,
                            const char *what, acc_yaml_node_t **out)
{
    acc_yaml_node_t *n = acc_yaml_get(d, map, key);
    *out = n;
    if (n && !acc_yaml_is_seq(n))
        return acc_yaml_error(d, n, ACC_ERR_PARSE, "'%s' must be a sequence of %s", key, what);
    if (acc_yaml_seq_len(n) > MAX_VERTICES)
        return acc_yaml_error(d, n, ACC_ERR_RANGE, "'%s' lists %zu items; at most %d", key,
                              acc_yaml_seq_len(n), MAX_VERTICES);
    return ACC_OK;
}

/* Item i of a vertex list: a mapping with the allowed keys whose id is i. */
static acc_status_t vertex_item(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *seq, size_t i,
                                const char *list, const char *const *keys, acc_vertex_kind_t kind,
                                acc_yaml_node_t **item, int *index)
{
    acc_yaml_node_t *n = acc_yaml_seq_at(d, seq, i);
    char what[64];
    int id = -1;
    acc_status_t st;

    *item = n;
    snprintf(what, sizeof(what), "%s[%zu]", list, i);
    if (!acc_yaml_is_map(n))
        return acc_yaml_error(d, n, ACC_ERR_PARSE, "%s must be a mapping such as {id: %zu, ...}",
                              what, i);
    if ((st = acc_yaml_check_keys(d, n, keys, what)) != ACC_OK)
        return st;
    if ((st = get_int(d, n, "id", 1, 0, INT_MAX, &id)) != ACC_OK)
        return st;
    if ((size_t)id != i)
        return acc_yaml_error(d, n, ACC_ERR_PARSE,
                              "%s has id %d where %zu was expected: ids must be 0..n-1 in order",
                              what, id, i);
    return acc_topo_add_vertex(c->t, kind, index);
}

/* ---- vertices ------------------------------------------------------------------------------ */

static acc_status_t read_cpus(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *node)
{
    acc_yaml_node_t *seq, *n;
    size_t i;
    int v;
    acc_status_t st = get_seq(d, node, "cpus", "CPU mappings", &seq);

    for (i = 0; st == ACC_OK && i < acc_yaml_seq_len(seq); i++) {
        acc_topo_vertex_t *x;
        if ((st = vertex_item(c, d, seq, i, "cpus", cpu_keys, ACC_VTX_CPU, &n, &v)) != ACC_OK)
            break;
        x = acc_topo_vertex_mut(c->t, v);
        if ((st = get_text(d, n, "arch", x->cpu_arch, sizeof(x->cpu_arch))) != ACC_OK ||
            (st = get_text(d, n, "vendor", x->cpu_vendor, sizeof(x->cpu_vendor))) != ACC_OK ||
            (st = get_int(d, n, "family", 0, 0, 0xffff, &x->cpu_family)) != ACC_OK ||
            (st = get_int(d, n, "model", 0, 0, 0xffff, &x->cpu_model)) != ACC_OK)
            break;
        st = get_text(d, n, "affinity", x->affinity, sizeof(x->affinity));
    }
    return st;
}

/* Fill what the file leaves out of a GPU, keeping what it says.  The model name is a given
 * fact and is put back after the table look-up, and a name that is exactly the table's name for
 * the given PCI id is looked up by that id: name matching goes by fragments ("A100" matches
 * first), so "A100 PCIe 80GB" as acc itself writes it would otherwise read back as another part. */
static acc_status_t fill_gpu(ctx_t *c, int v)
{
    acc_topo_vertex_t *x = acc_topo_vertex_mut(c->t, v);
    const acc_gpu_model_t *byid = x->device_id ? acc_topo_gpu_model_by_pci(x->device_id) : NULL;
    char given[ACC_TOPO_NAME_MAX];
    acc_status_t st;

    memcpy(given, x->model, sizeof(given));
    if (byid && acc_str_ieq(byid->model, x->model))
        x->model[0] = '\0';
    st = topo_fill_gpu_defaults(c->t, v);
    x = acc_topo_vertex_mut(c->t, v);
    if (given[0])
        memcpy(x->model, given, sizeof(given));
    return st;
}

static acc_status_t read_gpus(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *node)
{
    acc_yaml_node_t *seq, *n;
    size_t i;
    int v;
    acc_status_t st = get_seq(d, node, "gpus", "GPU mappings", &seq);

    if (st == ACC_OK && acc_yaml_seq_len(seq) == 0)
        return acc_yaml_error(d, seq ? seq : node, ACC_ERR_PARSE,
                              "the node lists no GPUs; add 'gpus:' with one mapping per GPU");
    for (i = 0; st == ACC_OK && i < acc_yaml_seq_len(seq); i++) {
        acc_topo_vertex_t *x;
        double gib = 0;
        if ((st = vertex_item(c, d, seq, i, "gpus", gpu_keys, ACC_VTX_GPU, &n, &v)) != ACC_OK)
            break;
        x = acc_topo_vertex_mut(c->t, v);
        if ((st = get_text(d, n, "model", x->model, sizeof(x->model))) != ACC_OK ||
            (st = get_int(d, n, "sm", 0, 1, 999, &x->sm)) != ACC_OK ||
            (st = get_int(d, n, "sms", 0, 1, 100000, &x->sm_count)) != ACC_OK ||
            (st = get_double(d, n, "memory_gib", 0, 1.0 / 1024, 1 << 20, &gib)) != ACC_OK ||
            (st = get_int(d, n, "pci_device", 0, 1, 0xffff, &x->device_id)) != ACC_OK ||
            (st = get_busid(d, n, x->busid)) != ACC_OK ||
            (st = get_numa(c, d, n, &x->numa)) != ACC_OK)
            break;
        x->mem_bytes = (uint64_t)llround(gib * 1073741824.0);
        if (x->device_id)
            x->vendor_id = 0x10de;
        if ((st = fill_gpu(c, v)) != ACC_OK)
            st = acc_error_prefix(st, "%s:%d: gpus[%zu]: ", acc_yaml_name(d), acc_yaml_line(n), i);
    }
    return st;
}

static acc_status_t read_nvswitch(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *node)
{
    acc_yaml_node_t *n = acc_yaml_get(d, node, "nvswitch");
    int v;
    acc_status_t st;

    if (!n)
        return ACC_OK;
    if (!acc_yaml_is_map(n))
        return acc_yaml_error(d, n, ACC_ERR_PARSE,
                              "'nvswitch' must be a mapping such as {busid: \"0000:f3:00.0\"} or "
                              "{}: all NVSwitch chips of a node are one fabric vertex, NVS0");
    if ((st = acc_yaml_check_keys(d, n, nvs_keys, "nvswitch")) != ACC_OK ||
        (st = topo_nvswitch(c->t, &v)) != ACC_OK)
        return st;
    return get_busid(d, n, acc_topo_vertex_mut(c->t, v)->busid);
}

static acc_status_t read_switches(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *node)
{
    acc_yaml_node_t *seq, *n;
    size_t i;
    int v;
    acc_status_t st = get_seq(d, node, "pci_switches", "PCIe switch mappings", &seq);

    for (i = 0; st == ACC_OK && i < acc_yaml_seq_len(seq); i++) {
        acc_topo_vertex_t *x;
        if ((st = vertex_item(c, d, seq, i, "pci_switches", pci_keys, ACC_VTX_PCISW, &n, &v)) !=
            ACC_OK)
            break;
        x = acc_topo_vertex_mut(c->t, v);
        if ((st = get_busid(d, n, x->busid)) != ACC_OK ||
            (st = acc_yaml_get_bool(d, n, "host_bridge", 0, &x->host_bridge)) != ACC_OK)
            break;
        st = get_numa(c, d, n, &x->numa);
    }
    return st;
}

static acc_status_t read_nics(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *node)
{
    acc_yaml_node_t *seq, *n;
    size_t i;
    int v;
    acc_status_t st = get_seq(d, node, "nics", "NIC mappings", &seq);

    for (i = 0; st == ACC_OK && i < acc_yaml_seq_len(seq); i++) {
        acc_topo_vertex_t *x;
        if ((st = vertex_item(c, d, seq, i, "nics", nic_keys, ACC_VTX_NIC, &n, &v)) != ACC_OK)
            break;
        x = acc_topo_vertex_mut(c->t, v);
        if ((st = get_text(d, n, "device", x->dev_name, sizeof(x->dev_name))) != ACC_OK ||
            (st = get_double(d, n, "speed_gbps", 1, 1e-3, 1e6, &x->speed_gbps)) != ACC_OK ||
            (st = get_busid(d, n, x->busid)) != ACC_OK ||
            (st = get_numa(c, d, n, &x->numa)) != ACC_OK ||
            (st = get_int(d, n, "plane", 0, 0, ACC_TOPO_PLANES_MAX - 1, &x->plane)) != ACC_OK)
            break;
        st = acc_yaml_get_bool(d, n, "gdr", 0, &x->gdr);
    }
    return st;
}

/* ---- links --------------------------------------------------------------------------------- */

/* "GPU3" -> vertex index of GPU 3, or -1. */
static int vertex_by_name(const acc_topo_t *t, const char *s)
{
    static const struct {
        const char *prefix;
        acc_vertex_kind_t kind;
    } kinds[] = {{"GPU", ACC_VTX_GPU},
                 {"NVS", ACC_VTX_NVSWITCH},
                 {"PCI", ACC_VTX_PCISW},
                 {"CPU", ACC_VTX_CPU},
                 {"NIC", ACC_VTX_NIC}};
    size_t k;
    for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        const char *p = s + 3;
        long id = 0;
        if (strncmp(s, kinds[k].prefix, 3) != 0 || !isdigit((unsigned char)*p))
            continue;
        if (*p == '0' && p[1])
            return -1; /* "GPU01" is not a canonical name */
        for (; isdigit((unsigned char)*p) && id <= MAX_VERTICES; p++)
            id = id * 10 + (*p - '0');
        if (*p)
            return -1;
        return acc_topo_find(t, kinds[k].kind, (int)id);
    }
    return -1;
}

static acc_status_t link_end(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *item, const char *key,
                             int *v)
{
    const char *s = NULL;
    acc_status_t st = acc_yaml_get_str(d, item, key, 1, &s);
    if (st != ACC_OK)
        return st;
    *v = vertex_by_name(c->t, s);
    if (*v < 0)
        return acc_yaml_error(d, acc_yaml_get(d, item, key), ACC_ERR_PARSE,
                              "link end '%s' = '%s' names no vertex of this node; use GPU<id>, "
                              "NVS0, PCI<id>, CPU<id> or NIC<id> of a vertex listed above",
                              key, s);
    return ACC_OK;
}

/* Set the latency of both directions of the a-b link of a kind (just added). */
static void set_latency(acc_topo_t *t, int a, int b, acc_link_kind_t kind, double lat)
{
    int i;
    for (i = 0; i < t->nlinks; i++) {
        acc_topo_link_t *l = &t->links[i];
        if (l->kind == kind && ((l->from == a && l->to == b) || (l->from == b && l->to == a)))
            l->lat_us = lat;
    }
}

/* The kinds of vertex each link kind joins (acc_topo_check's rules, here with a file and line). */
static const char *bad_ends(acc_link_kind_t k, acc_vertex_kind_t a, acc_vertex_kind_t b)
{
    switch (k) {
    case ACC_LINK_NVLINK:
        if (a != ACC_VTX_GPU && b != ACC_VTX_GPU)
            return "an NVLink joins a GPU to a GPU, the NVSwitch fabric NVS0 or a CPU";
        if (a == ACC_VTX_NIC || b == ACC_VTX_NIC || a == ACC_VTX_PCISW || b == ACC_VTX_PCISW)
            return "NVLinks join GPUs, NVS0 and CPUs only";
        return NULL;
    case ACC_LINK_PCIE:
        return (a == ACC_VTX_NVSWITCH || b == ACC_VTX_NVSWITCH)
                   ? "the NVSwitch fabric vertex NVS0 takes NVLinks only"
                   : NULL;
    case ACC_LINK_C2C:
        return ((a == ACC_VTX_GPU && b == ACC_VTX_CPU) || (a == ACC_VTX_CPU && b == ACC_VTX_GPU))
                   ? NULL
                   : "a c2c link joins a GPU and a CPU";
    default:
        return (a == ACC_VTX_CPU && b == ACC_VTX_CPU) ? NULL : "an smp link joins two CPUs";
    }
}

static acc_status_t read_pcie(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *n, const char *what,
                              int a, int b, double lat)
{
    int gen = 0, width = 0;
    double bw = 0;
    acc_status_t st;

    if ((st = get_int(d, n, "gen", 0, 1, 6, &gen)) != ACC_OK ||
        (st = get_int(d, n, "width", 0, 1, 32, &width)) != ACC_OK ||
        (st = get_double(d, n, "bw", 0, 1e-3, 1e4, &bw)) != ACC_OK)
        return st;
    if (gen && bw > 0)
        return acc_yaml_error(d, n, ACC_ERR_PARSE,
                              "%s: give a PCIe link either gen and width or bw, not both "
                              "(bandwidth follows from generation and width)",
                              what);
    if (!gen && !(bw > 0))
        return acc_yaml_error(d, n, ACC_ERR_PARSE,
                              "%s: a pcie link needs 'gen' (1-6) and 'width', or 'bw' in GB/s "
                              "when the generation is unknown",
                              what);
    if (!gen)
        return acc_topo_add_link(c->t, a, b, ACC_LINK_PCIE, 1, bw, lat);
    if (!width) {
        width = 16;
        acc_topo_assume(c->t, "PCIe link %s - %s: width x16 (no width in the input)",
                        acc_topo_vertex(c->t, a)->name, acc_topo_vertex(c->t, b)->name);
    }
    return topo_add_pcie(c->t, a, b, gen, width);
}

/* c2c and smp links carry their bandwidth; a missing one is the documented default. */
static acc_status_t read_bw_link(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *n, acc_link_kind_t k,
                                 int a, int b, double lat)
{
    const acc_topo_vertex_t *va = acc_topo_vertex(c->t, a), *vb = acc_topo_vertex(c->t, b);
    double bw = k == ACC_LINK_C2C ? C2C_DEFAULT_GBS : topo_smp_bw(va);
    acc_status_t st = get_double(d, n, "bw", 0, 1e-3, 1e5, &bw);

    if (st != ACC_OK || (st = acc_topo_add_link(c->t, a, b, k, 1, bw, lat)) != ACC_OK)
        return st;
    if (!acc_yaml_get(d, n, "bw"))
        acc_topo_assume(c->t, "%s link %s - %s: %g GB/s per direction (no bw in the input; %s)",
                        acc_link_kind_name(k), va->name, vb->name, bw,
                        k == ACC_LINK_C2C ? "NVLink-C2C is 900 GB/s both directions"
                                          : "default for the CPU type, schedules/TOPOLOGY.md, "
                                            "'SMP bandwidth by CPU type'");
    return ACC_OK;
}

static acc_status_t read_link(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *n, size_t i)
{
    static const double default_lat[] = {TOPO_LAT_NVLINK_US, TOPO_LAT_PCIE_US, TOPO_LAT_C2C_US,
                                         TOPO_LAT_SMP_US};
    const char *kname = NULL, *why;
    char what[32];
    int a, b, k, count = 0;
    double lat;
    acc_status_t st;

    snprintf(what, sizeof(what), "links[%zu]", i);
    if (!acc_yaml_is_map(n))
        return acc_yaml_error(d, n, ACC_ERR_PARSE,
                              "%s must be a mapping such as {a: GPU0, b: NVS0, kind: nvlink, "
                              "count: 18}",
                              what);
    if ((st = acc_yaml_get_str(d, n, "kind", 1, &kname)) != ACC_OK)
        return st;
    for (k = 0; k < ACC_LINK_KIND_COUNT; k++)
        if (strcmp(kname, acc_link_kind_name((acc_link_kind_t)k)) == 0)
            break;
    if (k == ACC_LINK_KIND_COUNT)
        return acc_yaml_error(d, acc_yaml_get(d, n, "kind"), ACC_ERR_PARSE,
                              "%s: kind '%s' is unknown; expected nvlink, pcie, c2c or smp", what,
                              kname);
    st = acc_yaml_check_keys(d, n,
                             k == ACC_LINK_NVLINK ? nvlink_keys
                             : k == ACC_LINK_PCIE ? pcie_keys
                                                  : bw_link_keys,
                             what);
    if (st != ACC_OK)
        return st;
    if ((st = link_end(c, d, n, "a", &a)) != ACC_OK || (st = link_end(c, d, n, "b", &b)) != ACC_OK)
        return st;
    if (a == b)
        return acc_yaml_error(d, n, ACC_ERR_PARSE, "%s joins %s to itself", what,
                              acc_topo_vertex(c->t, a)->name);
    why = bad_ends((acc_link_kind_t)k, acc_topo_vertex(c->t, a)->kind,
                   acc_topo_vertex(c->t, b)->kind);
    if (why)
        return acc_yaml_error(d, n, ACC_ERR_PARSE, "%s: %s - %s: %s", what,
                              acc_topo_vertex(c->t, a)->name, acc_topo_vertex(c->t, b)->name, why);
    if (acc_topo_find_link(c->t, a, b, (acc_link_kind_t)k))
        return acc_yaml_error(d, n, ACC_ERR_PARSE,
                              "%s: a %s link %s - %s is already listed; give each connection "
                              "once (NVLinks as one entry with their count)",
                              what, kname, acc_topo_vertex(c->t, a)->name,
                              acc_topo_vertex(c->t, b)->name);
    lat = default_lat[k];
    if ((st = get_double(d, n, "lat_us", 0, 0, 1e6, &lat)) != ACC_OK)
        return st;
    if (k == ACC_LINK_NVLINK) {
        /* Bandwidth is count x the generation's per-link rate, set by acc_topo_finalize(). */
        if ((st = get_int(d, n, "count", 1, 1, 64, &count)) == ACC_OK)
            st = topo_add_nvlinks(c->t, a, b, count);
    } else if (k == ACC_LINK_PCIE) {
        st = read_pcie(c, d, n, what, a, b, lat);
    } else {
        st = read_bw_link(c, d, n, (acc_link_kind_t)k, a, b, lat);
    }
    /* Errors of the model's builders name no file; those of the YAML helpers already do. */
    if (st != ACC_OK && strncmp(acc_error_message(), acc_yaml_name(d), strlen(acc_yaml_name(d))))
        return acc_error_prefix(st, "%s:%d: %s: ", acc_yaml_name(d), acc_yaml_line(n), what);
    if (st != ACC_OK)
        return st;
    set_latency(c->t, a, b, (acc_link_kind_t)k, lat);
    return ACC_OK;
}

static acc_status_t read_links(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *node)
{
    acc_yaml_node_t *seq;
    size_t i;
    int before;
    acc_status_t st = get_seq(d, node, "links", "link mappings", &seq);

    for (i = 0; st == ACC_OK && i < acc_yaml_seq_len(seq); i++)
        st = read_link(c, d, acc_yaml_seq_at(d, seq, i), i);
    if (st != ACC_OK)
        return st;
    /* Sockets always talk to each other; a file that leaves the SMP links out still means them. */
    before = c->t->nlinks;
    if ((st = topo_connect_cpus(c->t)) != ACC_OK)
        return st;
    if (c->t->nlinks != before)
        acc_topo_assume(c->t, "SMP links between CPUs that the input does not join: bandwidth "
                              "by CPU type (schedules/TOPOLOGY.md, 'SMP bandwidth by CPU type')");
    return ACC_OK;
}

static acc_status_t read_node_map(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *node)
{
    acc_status_t st;
    if (acc_topo_vertex_count(c->t) > 0)
        return acc_yaml_error(d, node, ACC_ERR_INTERNAL, "node read twice");
    if ((st = acc_yaml_check_keys(d, node, node_keys, "node")) != ACC_OK ||
        (st = read_cpus(c, d, node)) != ACC_OK || (st = read_gpus(c, d, node)) != ACC_OK ||
        (st = read_nvswitch(c, d, node)) != ACC_OK || (st = read_switches(c, d, node)) != ACC_OK ||
        (st = read_nics(c, d, node)) != ACC_OK || (st = read_links(c, d, node)) != ACC_OK)
        return st;
    return topo_yaml_gpu_nics(c->t, d, node);
}

/* ---- includes ------------------------------------------------------------------------------ */

static int is_platform_name(const char *s)
{
    size_t n = strlen(s);
    const char *p;
    if (!n || s[0] == '.' || (n > 5 && strcmp(s + n - 5, ".yaml") == 0) ||
        (n > 4 && strcmp(s + n - 4, ".yml") == 0))
        return 0;
    for (p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.')
            return 0;
    return 1;
}

/* The path an include names: a platform in the platform directory, an absolute path, or a path
 * relative to the directory of the including file. */
static acc_status_t include_path(const char *including, const char *ref, acc_buf_t *out)
{
    const char *slash = strrchr(including, '/');
    if (is_platform_name(ref))
        acc_buf_printf(out, "%s/%s.yaml", acc_topo_platform_dir(), ref);
    else if (ref[0] == '/' || !slash)
        acc_buf_puts(out, ref);
    else
        acc_buf_printf(out, "%.*s/%s", (int)(slash - including), including, ref);
    return acc_buf_status(out);
}

static acc_status_t read_include(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *n)
{
    const char *ref = acc_yaml_scalar(n);
    acc_buf_t path;
    char *real = NULL, *text = NULL;
    size_t len = 0;
    struct stat sb;
    int i;
    acc_status_t st;

    acc_buf_init(&path);
    if (!ref[0]) {
        st = acc_yaml_error(d, n, ACC_ERR_PARSE,
                            "'node' is empty; give a platform name, a path "
                            "or a mapping of the node's devices");
        goto out;
    }
    if ((st = include_path(acc_yaml_name(d), ref, &path)) != ACC_OK)
        goto out;
    if (stat(path.data, &sb) != 0 || !S_ISREG(sb.st_mode) || !(real = realpath(path.data, NULL))) {
        st = acc_yaml_error(d, n, ACC_ERR_NOT_FOUND, "node: '%s' is %s (looked for %s)%s", ref,
                            is_platform_name(ref) ? "no shipped platform" : "no readable file",
                            path.data,
                            is_platform_name(ref) ? "; see `acc-compile --list-platforms`" : "");
        goto out;
    }
    if ((size_t)sb.st_size > MAX_INCLUDE_BYTES) {
        st = acc_yaml_error(d, n, ACC_ERR_RANGE,
                            "node: %s is %lld bytes; a node type file is "
                            "at most %u",
                            path.data, (long long)sb.st_size, MAX_INCLUDE_BYTES);
        goto out;
    }
    for (i = 0; i < c->depth; i++) {
        if (c->files[i] && strcmp(c->files[i], real) == 0) {
            st = acc_yaml_error(d, n, ACC_ERR_PARSE,
                                "include cycle: %s includes %s, which is already being read "
                                "(it includes %s, directly or through other files)",
                                acc_yaml_name(d), path.data, acc_yaml_name(d));
            goto out;
        }
    }
    if (c->depth >= MAX_INCLUDE_DEPTH) {
        st = acc_yaml_error(d, n, ACC_ERR_RANGE,
                            "node: including %s goes %d files deep; at most "
                            "%d",
                            path.data, c->depth + 1, MAX_INCLUDE_DEPTH);
        goto out;
    }
    if ((st = acc_read_file(path.data, &text, &len)) != ACC_OK) {
        st = acc_error_prefix(st, "%s:%d: ", acc_yaml_name(d), acc_yaml_line(n));
        goto out;
    }
    c->files[c->depth++] = real;
    real = NULL;
    st = import_doc(c, text, len, path.data, 1);
    if (st != ACC_OK) /* the message names the included file; say where it was included */
        acc_error_prefix(st, "%s:%d: in the node type it includes: ", acc_yaml_name(d),
                         acc_yaml_line(n));
    acc_mem_free(c->files[--c->depth]);
    c->files[c->depth] = NULL;
out:
    free(real);
    acc_mem_free(text);
    acc_buf_free(&path);
    return st;
}

/* ---- network, assumptions, the document ---------------------------------------------------- */

static acc_status_t read_network(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *n, int included)
{
    acc_topo_network_t net;
    acc_status_t st;

    memset(&net, 0, sizeof(net));
    net.latency_us = TOPO_LAT_NET_US;
    net.rail_optimized = 1;
    net.oversubscription = 1.0;
    if (!acc_yaml_is_map(n))
        return acc_yaml_error(d, n, ACC_ERR_PARSE,
                              "'network' must be a mapping such as {nodes: 2, fabric: ib-ndr}");
    if ((st = acc_yaml_check_keys(d, n, net_keys, "network")) != ACC_OK ||
        (st = get_int(d, n, "nodes", 1, 1, TOPO_MAX_NODES, &net.nodes)) != ACC_OK ||
        (st = get_text(d, n, "fabric", net.name, sizeof(net.name))) != ACC_OK ||
        (st = get_double(d, n, "latency_us", 0, 0, 1e6, &net.latency_us)) != ACC_OK ||
        (st = acc_yaml_get_bool(d, n, "rail_optimized", 0, &net.rail_optimized)) != ACC_OK ||
        (st = get_double(d, n, "oversubscription", 0, 1, 1e6, &net.oversubscription)) != ACC_OK)
        return st;
    if (!acc_yaml_get(d, n, "latency_us"))
        net.latency_us = acc_topo_fabric_latency_us(net.name);
    if (included && net.nodes > 1)
        return acc_yaml_error(d, acc_yaml_get(d, n, "nodes"), ACC_ERR_PARSE,
                              "%s is included as a node type but describes a cluster of %d "
                              "nodes; include a single-node platform and give the network in "
                              "the including file",
                              acc_yaml_name(d), net.nodes);
    if (net.nodes > 1) {
        if (!acc_yaml_get(d, n, "latency_us"))
            topo_assume_fabric_latency(c->t, &net);
        if (!acc_yaml_get(d, n, "rail_optimized"))
            acc_topo_assume(c->t, "network rail-optimised (not in the input)");
        if (!acc_yaml_get(d, n, "oversubscription"))
            acc_topo_assume(c->t, "network non-blocking, oversubscription 1 (not in the input)");
    }
    if (c->have_network && included)
        return ACC_OK; /* the including file's network wins */
    c->have_network = 1;
    if ((st = acc_topo_set_network(c->t, &net)) != ACC_OK)
        return acc_error_prefix(st, "%s:%d: ", acc_yaml_name(d), acc_yaml_line(n));
    return ACC_OK;
}

static acc_status_t read_assumed(ctx_t *c, acc_yaml_doc_t *d, acc_yaml_node_t *n)
{
    size_t i;
    acc_status_t st = ACC_OK;
    if (!acc_yaml_is_seq(n))
        return acc_yaml_error(d, n, ACC_ERR_PARSE, "'assumed' must be a sequence of strings");
    for (i = 0; st == ACC_OK && i < acc_yaml_seq_len(n); i++) {
        acc_yaml_node_t *s = acc_yaml_seq_at(d, n, i);
        if (!acc_yaml_scalar(s))
            return acc_yaml_error(d, s, ACC_ERR_PARSE, "assumed[%zu] must be a string", i);
        st = acc_topo_assume(c->t, "%s", acc_yaml_scalar(s));
    }
    return st;
}

static acc_status_t import_doc(ctx_t *c, const char *text, size_t len, const char *name,
                               int included)
{
    acc_yaml_doc_t *d = NULL;
    acc_yaml_node_t *root, *n;
    const char *title = NULL, *desc = NULL;
    int version = 0;
    acc_status_t st;

    if ((st = acc_yaml_parse(text, len, name, &d)) != ACC_OK)
        return st;
    root = acc_yaml_root(d);
    if (!acc_yaml_is_map(root)) {
        st = acc_yaml_error(d, root, ACC_ERR_PARSE,
                            "an acc topology is a mapping with "
                            "'version: 1' and 'node:' (schedules/"
                            "TOPOLOGY.md)");
        goto out;
    }
    if ((st = acc_yaml_check_keys(d, root, root_keys, "the topology")) != ACC_OK)
        goto out;
    if ((st = get_int(d, root, "version", 1, 0, INT_MAX, &version)) != ACC_OK)
        goto out;
    if (version > YAML_SCHEMA_VERSION) {
        st = acc_yaml_error(d, acc_yaml_get(d, root, "version"), ACC_ERR_UNSUPPORTED,
                            "topology schema version %d is newer than this acc reads (%d); use "
                            "a newer acc or write the file as version %d",
                            version, YAML_SCHEMA_VERSION, YAML_SCHEMA_VERSION);
        goto out;
    }
    if (version < 1) {
        st = acc_yaml_error(d, acc_yaml_get(d, root, "version"), ACC_ERR_PARSE,
                            "'version' is %d; the first version of the schema is 1", version);
        goto out;
    }
    if ((st = acc_yaml_get_str(d, root, "name", 0, &title)) != ACC_OK ||
        (st = acc_yaml_get_str(d, root, "description", 0, &desc)) != ACC_OK)
        goto out;
    n = acc_yaml_get(d, root, "node");
    if (!n) {
        st = acc_yaml_error(d, root, ACC_ERR_PARSE,
                            "missing required key 'node' (a platform name such as dgx-h100, a "
                            "path, or a mapping of the node's devices)");
        goto out;
    }
    if (acc_yaml_scalar(n))
        st = read_include(c, d, n);
    else if (acc_yaml_is_map(n))
        st = read_node_map(c, d, n);
    else
        st = acc_yaml_error(d, n, ACC_ERR_PARSE,
                            "'node' must be a platform name, a path or a "
                            "mapping");
    if (st != ACC_OK)
        goto out;
    if ((n = acc_yaml_get(d, root, "network")) && (st = read_network(c, d, n, included)) != ACC_OK)
        goto out;
    if ((n = acc_yaml_get(d, root, "assumed")) && (st = read_assumed(c, d, n)) != ACC_OK)
        goto out;
    /* The outermost name wins; an included platform names a cluster that has none. */
    if (title && strlen(title) >= sizeof(c->name)) {
        st = acc_yaml_error(d, acc_yaml_get(d, root, "name"), ACC_ERR_RANGE,
                            "'name' is longer than %d characters", ACC_TOPO_NAME_MAX - 1);
        goto out;
    }
    if (title)
        snprintf(c->name, sizeof(c->name), "%s", title);
out:
    acc_yaml_destroy(d);
    return st;
}

acc_status_t topo_import_yaml(acc_topo_t *t, const char *text, size_t len, const char *name)
{
    ctx_t c;
    acc_status_t st;
    int i;

    memset(&c, 0, sizeof(c));
    c.t = t;
    if (!name)
        name = "<string>";
    /* The file itself heads the include chain, so that A -> B -> A is caught at B. */
    if ((c.files[0] = realpath(name, NULL)) != NULL)
        c.depth = 1;
    st = import_doc(&c, text, len, name, 0);
    for (i = 0; i < MAX_INCLUDE_DEPTH + 1; i++)
        free(c.files[i]);
    if (st == ACC_OK && c.name[0])
        st = acc_topo_set_name(t, c.name);
    return st;
}
