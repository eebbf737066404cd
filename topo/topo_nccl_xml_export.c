/*
 * acc_topo_export_nccl_xml(): a topology as the NCCL topology XML that NCCL reads through
 * NCCL_TOPO_FILE, and from which topo_import_nccl_xml() rebuilds a model with the same
 * fingerprint.
 *
 * NCCL's schema is a tree: every device sits in one CPU's PCI tree.  The tree is found by a
 * breadth-first walk over PCIe links from the CPUs (in id order), through PCIe switches only;
 * a PCIe link between two switches that the tree does not use becomes a <pcilink>.  NVLinks are
 * written as NCCL dumps them, on both GPUs of a pair, and the NVSwitch fabric as one target with
 * tclass 0x068000 and the GPU's total link count.
 *
 * NCCL's limits are kept (src/graph/xml.h): at most 256 elements (NCCL_TOPO_XML_MAX_NODES), 128
 * children per element (MAX_SUBS) and 16 attributes per element (MAX_ATTR_COUNT; the most this
 * writer puts on one element is 8).  A topology that does not fit is refused, never cut.
 *
 * Facts NCCL's schema has no room for go into attributes prefixed acc_, which NCCL ignores:
 *   <system> acc_nodes acc_fabric acc_latency_us acc_rail acc_oversub (the cluster), acc_name,
 *            acc_smp_bw (when the inter-socket bandwidth is not the default for the CPU type);
 *   <pci>    acc_host_bridge="1" (NCCL has no host bridges), acc_numa (when a device's NUMA node
 *            is not the CPU whose tree holds it);
 *   <gpu>    acc_model, acc_sm_count, acc_mem_bytes (when the PCI device id does not give them);
 *   <pcilink> acc_link_speed, acc_link_width.
 *
 * Bus ids.  Vertices without one (synthetic topologies, nvidia-smi captures) get a made-up one:
 * domain 0xacc0 + kind (acc0 GPU, acc1 NVSwitch, acc2 PCIe switch, acc3 CPU, acc4 NIC), bus
 * id / 32, device id % 32, function 0.  Linux numbers PCI domains from 0 (Hyper-V guests use small
 * or GUID-derived ones), so these read as made up and depend only on kind and id; one that still
 * equals a bus id of the model moves on by 8 buses until it is free.
 */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define NCCL_XML_MAX_NODES 256 /* NCCL_TOPO_XML_MAX_NODES */
#define NCCL_XML_MAX_SUBS  128 /* MAX_SUBS */

typedef struct {
    const acc_topo_t *t;
    acc_buf_t b;
    int *parent;       /* tree parent of a vertex; -1 for CPUs, the NVSwitch and unplaced ones */
    int *root;         /* the CPU vertex whose tree holds it */
    int *uplink;       /* index of the PCIe link to the parent */
    char (*busid)[24]; /* the bus id written for each vertex */
    int elements;
} export_t;

static acc_status_t unsupported(const char *fmt, ...) ACC_PRINTF(1, 2);

static acc_status_t unsupported(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return acc_error_set(ACC_ERR_UNSUPPORTED, "NCCL topology XML export: %s", msg);
}

static int busid_taken(const export_t *e, int upto, const char *id)
{
    int i;
    for (i = 0; i < e->t->nvertices; i++)
        if ((i < upto && strcmp(e->busid[i], id) == 0) || strcmp(e->t->vertices[i].busid, id) == 0)
            return 1;
    return 0;
}

static void assign_busids(export_t *e)
{
    int i;
    for (i = 0; i < e->t->nvertices; i++) {
        const acc_topo_vertex_t *v = &e->t->vertices[i];
        unsigned bus = (unsigned)v->id / 32;
        if (v->busid[0]) {
            memcpy(e->busid[i], v->busid, sizeof(e->busid[i]));
            continue;
        }
        do {
            snprintf(e->busid[i], sizeof(e->busid[i]), "%04x:%02x:%02x.0", 0xacc0u + v->kind,
                     bus & 0xff, (unsigned)v->id % 32);
            bus += 8;
        } while (busid_taken(e, i, e->busid[i]) && bus < 0x800);
    }
}

/* Breadth-first over PCIe links from the CPUs, descending through switches only. */
static acc_status_t build_tree(export_t *e)
{
    const acc_topo_t *t = e->t;
    int *queue = acc_mem_calloc((size_t)t->nvertices + 1, sizeof(int));
    int head = 0, tail = 0, id, i;

    if (!queue)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory exporting NCCL XML");
    for (i = 0; i < t->nvertices; i++)
        e->parent[i] = e->root[i] = e->uplink[i] = -1;
    for (id = 0; id < t->kind_count[ACC_VTX_CPU]; id++) {
        int v = acc_topo_find(t, ACC_VTX_CPU, id);
        if (v >= 0) {
            e->root[v] = v;
            queue[tail++] = v;
        }
    }
    while (head < tail) {
        int u = queue[head++];
        for (i = 0; i < t->nlinks; i++) {
            const acc_topo_link_t *l = &t->links[i], *up;
            acc_vertex_kind_t k = t->vertices[l->to].kind;
            if (l->from != u || l->kind != ACC_LINK_PCIE || e->root[l->to] >= 0 ||
                (k != ACC_VTX_PCISW && k != ACC_VTX_GPU && k != ACC_VTX_NIC))
                continue;
            e->parent[l->to] = u;
            e->root[l->to] = e->root[u];
            /* the link up is the reverse direction; links are symmetric in a checked model */
            up = acc_topo_find_link(t, l->to, u, ACC_LINK_PCIE);
            e->uplink[l->to] = up ? (int)(up - t->links) : i;
            if (k == ACC_VTX_PCISW)
                queue[tail++] = l->to;
        }
    }
    acc_mem_free(queue);
    for (i = 0; i < t->nvertices; i++) {
        const acc_topo_vertex_t *v = &t->vertices[i];
        if (v->kind != ACC_VTX_CPU && v->kind != ACC_VTX_NVSWITCH && e->root[i] < 0)
            return unsupported("%s has no PCIe path to a CPU; NCCL's schema places every GPU, "
                               "NIC and switch in a CPU's PCI tree",
                               v->name);
    }
    return ACC_OK;
}

/* The SMP bandwidth topo_connect_cpus() gives a pair, which the importer will give again. */
static double default_smp_bw(const acc_topo_t *t, const acc_topo_link_t *l)
{
    return topo_smp_bw(&t->vertices[l->from < l->to ? l->from : l->to]);
}

/* Every link must be one NCCL's schema can carry, or one the importer derives again. */
static acc_status_t check_links(export_t *e, double *smp_bw)
{
    const acc_topo_t *t = e->t;
    int i, uniform = 1, defaults = 1;

    *smp_bw = 0;
    for (i = 0; i < t->nlinks; i++) {
        const acc_topo_link_t *l = &t->links[i];
        const acc_topo_vertex_t *a = &t->vertices[l->from], *b = &t->vertices[l->to];
        switch (l->kind) {
        case ACC_LINK_PCIE:
            if (e->parent[l->from] == l->to || e->parent[l->to] == l->from ||
                (a->kind == ACC_VTX_PCISW && b->kind == ACC_VTX_PCISW))
                break;
            return unsupported("PCIe link %s - %s is outside the PCI tree; NCCL's schema has "
                               "extra links only between two switches",
                               a->name, b->name);
        case ACC_LINK_NVLINK:
        case ACC_LINK_C2C:
            /* The importer ties GPU-CPU links to the CPU whose tree holds the GPU. */
            if (a->kind == ACC_VTX_GPU && b->kind == ACC_VTX_CPU && e->root[l->from] != l->to)
                return unsupported("%s link %s - %s: the GPU sits in the PCI tree of another CPU, "
                                   "and NCCL ties such links to the GPU's own CPU",
                                   acc_link_kind_name(l->kind), a->name, b->name);
            break;
        case ACC_LINK_SMP:
            if (*smp_bw > 0 && l->bw != *smp_bw)
                uniform = 0;
            *smp_bw = l->bw;
            if (l->bw != default_smp_bw(t, l))
                defaults = 0;
            break;
        default:
            break;
        }
    }
    if (defaults)
        *smp_bw = 0;
    else if (!uniform)
        return unsupported("the SMP links between CPUs have different bandwidths, none the "
                           "default for their CPU type; acc_smp_bw carries one value only");
    return ACC_OK;
}

/* ---- writing ----------------------------------------------------------------------------- */

static void put_str(acc_buf_t *b, const char *key, const char *value)
{
    acc_buf_printf(b, " %s=\"", key);
    acc_buf_put_xml(b, value);
    acc_buf_puts(b, "\"");
}

/* The shortest decimal form that reads back as the same double. */
static void put_double(acc_buf_t *b, const char *key, double x)
{
    char s[40];
    int prec;
    for (prec = 6; prec < 17; prec++) {
        snprintf(s, sizeof(s), "%.*g", prec, x);
        if (strtod(s, NULL) == x)
            break;
    }
    if (prec == 17)
        snprintf(s, sizeof(s), "%.17g", x);
    acc_buf_printf(b, " %s=\"%s\"", key, s);
}

static void indent(acc_buf_t *b, int depth)
{
    acc_buf_printf(b, "%*s", 2 * depth, "");
}

/* Open an element; counts it against NCCL's limit. */
static void open_elem(export_t *e, int depth, const char *name)
{
    indent(&e->b, depth);
    acc_buf_printf(&e->b, "<%s", name);
    e->elements++;
}

static const char *const speed_names[] = {"",
                                          "2.5 GT/s PCIe",
                                          "5.0 GT/s PCIe",
                                          "8.0 GT/s PCIe",
                                          "16.0 GT/s PCIe",
                                          "32.0 GT/s PCIe",
                                          "64.0 GT/s PCIe"};

/* Generation and width of a PCIe link; older models may carry the bandwidth only. */
static acc_status_t pcie_shape(const acc_topo_t *t, const acc_topo_link_t *l, int *gen, int *width)
{
    static const int widths[] = {16, 8, 4, 2, 1, 32, 12};
    size_t w;
    int g;

    *gen = l->gen;
    *width = l->width;
    if (*gen >= 1 && *gen <= 6 && *width >= 1)
        return ACC_OK;
    for (g = 1; g <= 6; g++) {
        for (w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
            double bw = acc_topo_pcie_bw(g, widths[w]);
            if (bw - l->bw < 1e-9 * bw && l->bw - bw < 1e-9 * bw) {
                *gen = g;
                *width = widths[w];
                return ACC_OK;
            }
        }
    }
    return unsupported("PCIe link %s - %s: %g GB/s is no PCIe generation and width",
                       t->vertices[l->from].name, t->vertices[l->to].name, l->bw);
}

static acc_status_t put_link(export_t *e, const acc_topo_link_t *l, const char *speed_key,
                             const char *width_key)
{
    int gen, width;
    acc_status_t st = pcie_shape(e->t, l, &gen, &width);
    if (st != ACC_OK)
        return st;
    put_str(&e->b, speed_key, speed_names[gen]);
    acc_buf_printf(&e->b, " %s=\"%d\"", width_key, width);
    return ACC_OK;
}

static const char *pci_class(const acc_topo_t *t, const acc_topo_vertex_t *v)
{
    switch (v->kind) {
    case ACC_VTX_GPU:
        return "0x030200"; /* 3D controller, as SXM GPUs report; NCCL matches the 0x03 prefix */
    case ACC_VTX_NIC:
        /* Only the 0x02 prefix matters to NCCL; InfiniBand where the fabric says so. */
        return strncmp(t->net.name, "ib", 2) == 0 ? "0x020700" : "0x020000";
    default:
        return "0x060400";
    }
}

/* Sum of NVLinks from vertex a to vertex b. */
static int nvlinks(const acc_topo_t *t, int a, int b)
{
    int i, n = 0;
    for (i = 0; i < t->nlinks; i++)
        if (t->links[i].kind == ACC_LINK_NVLINK && t->links[i].from == a && t->links[i].to == b)
            n += t->links[i].count;
    return n;
}

static void put_nvlink(export_t *e, int depth, const char *target, int count, const char *tclass)
{
    open_elem(e, depth, "nvlink");
    acc_buf_printf(&e->b, " target=\"%s\" count=\"%d\" tclass=\"%s\"/>\n", target, count, tclass);
}

/* The <gpu> of a GPU vertex, with its NVLinks and C2C links. */
static void put_gpu(export_t *e, int v, int depth)
{
    const acc_topo_t *t = e->t;
    const acc_topo_vertex_t *g = &t->vertices[v];
    const acc_gpu_model_t *m = acc_topo_gpu_model_by_pci(g->device_id);
    int i, id, children = 0;

    if (m && m->sm != g->sm)
        m = NULL; /* the importer will not use the table either (topo_fill_gpu_defaults) */
    open_elem(e, depth, "gpu");
    acc_buf_printf(&e->b, " dev=\"%d\" sm=\"%d\" rank=\"%d\"", g->id, g->sm, g->id);
    /* gdr is written only when known: NCCL fills a missing one from the GPU it detects. */
    if (g->gdr)
        acc_buf_puts(&e->b, " gdr=\"1\"");
    if (g->model[0] && (!m || strcmp(g->model, m->model) != 0))
        put_str(&e->b, "acc_model", g->model);
    if (g->sm_count && (!m || g->sm_count != m->sm_count))
        acc_buf_printf(&e->b, " acc_sm_count=\"%d\"", g->sm_count);
    if (g->mem_bytes && (!m || g->mem_bytes != m->mem_bytes))
        acc_buf_printf(&e->b, " acc_mem_bytes=\"%llu\"", (unsigned long long)g->mem_bytes);
    for (i = 0; i < t->nlinks; i++)
        children += t->links[i].from == v &&
                    (t->links[i].kind == ACC_LINK_NVLINK || t->links[i].kind == ACC_LINK_C2C);
    if (!children) {
        acc_buf_puts(&e->b, "/>\n");
        return;
    }
    acc_buf_puts(&e->b, ">\n");
    for (i = 0; i < t->nvertices; i++) {
        int n;
        if (t->vertices[i].kind == ACC_VTX_NVSWITCH && (n = nvlinks(t, v, i)) > 0)
            put_nvlink(e, depth + 1, e->busid[i], n, "0x068000");
    }
    for (id = 0; id < t->kind_count[ACC_VTX_GPU]; id++) {
        int peer = acc_topo_find(t, ACC_VTX_GPU, id), n;
        if (peer >= 0 && (n = nvlinks(t, v, peer)) > 0)
            put_nvlink(e, depth + 1, e->busid[peer], n, "0x030200");
    }
    for (i = 0; i < t->nvertices; i++) {
        int n;
        if (t->vertices[i].kind == ACC_VTX_CPU && (n = nvlinks(t, v, i)) > 0)
            put_nvlink(e, depth + 1, e->busid[i], n, "0x068001");
    }
    for (i = 0; i < t->nlinks; i++) {
        const acc_topo_link_t *l = &t->links[i];
        if (l->from != v || l->kind != ACC_LINK_C2C)
            continue;
        /* NCCL reads bw as integer MB/s per link: one link of the whole bandwidth. */
        open_elem(e, depth + 1, "c2c");
        acc_buf_printf(&e->b, " count=\"1\" bw=\"%lld\"/>\n", (long long)(l->bw * 1000.0 + 0.5));
    }
    indent(&e->b, depth);
    acc_buf_puts(&e->b, "</gpu>\n");
}

static void put_nic(export_t *e, int v, int depth)
{
    const acc_topo_vertex_t *n = &e->t->vertices[v];
    open_elem(e, depth, "nic");
    acc_buf_puts(&e->b, ">\n");
    open_elem(e, depth + 1, "net");
    if (n->dev_name[0])
        put_str(&e->b, "name", n->dev_name);
    /* speed in Mb/s as NCCL reads it (an integer); gdr only when known, as for GPUs. */
    acc_buf_printf(&e->b, " dev=\"%d\" speed=\"%lld\"", n->id,
                   (long long)(n->speed_gbps * 1000.0 + 0.5));
    if (n->gdr)
        acc_buf_puts(&e->b, " gdr=\"1\"");
    acc_buf_puts(&e->b, "/>\n");
    indent(&e->b, depth);
    acc_buf_puts(&e->b, "</nic>\n");
}

static acc_status_t put_children(export_t *e, int u, int depth);

/* Whether PCIe link l is a <pcilink>: between two switches, not a tree edge, and written once,
 * at the switch of the lower vertex index. */
static int is_pcilink(const export_t *e, const acc_topo_link_t *l)
{
    const acc_topo_t *t = e->t;
    return l->kind == ACC_LINK_PCIE && l->from < l->to &&
           t->vertices[l->from].kind == ACC_VTX_PCISW && t->vertices[l->to].kind == ACC_VTX_PCISW &&
           e->parent[l->from] != l->to && e->parent[l->to] != l->from;
}

static int has_children(const export_t *e, int v)
{
    int i;
    for (i = 0; i < e->t->nvertices; i++)
        if (e->parent[i] == v)
            return 1;
    for (i = 0; i < e->t->nlinks; i++)
        if (e->t->links[i].from == v && is_pcilink(e, &e->t->links[i]))
            return 1;
    return 0;
}

static acc_status_t put_pcilinks(export_t *e, int v, int depth)
{
    const acc_topo_t *t = e->t;
    int i;
    acc_status_t st;

    for (i = 0; i < t->nlinks; i++) {
        const acc_topo_link_t *l = &t->links[i];
        if (l->from != v || !is_pcilink(e, l))
            continue;
        open_elem(e, depth, "pcilink");
        acc_buf_printf(&e->b, " target=\"%s\"", e->busid[l->to]);
        if ((st = put_link(e, l, "acc_link_speed", "acc_link_width")) != ACC_OK)
            return st;
        acc_buf_puts(&e->b, "/>\n");
    }
    return ACC_OK;
}

static acc_status_t put_pci(export_t *e, int v, int depth)
{
    const acc_topo_t *t = e->t;
    const acc_topo_vertex_t *x = &t->vertices[v];
    acc_status_t st;

    open_elem(e, depth, "pci");
    acc_buf_printf(&e->b, " busid=\"%s\" class=\"%s\"", e->busid[v], pci_class(t, x));
    if (x->vendor_id)
        acc_buf_printf(&e->b, " vendor=\"0x%04x\"", (unsigned)x->vendor_id);
    if (x->device_id)
        acc_buf_printf(&e->b, " device=\"0x%04x\"", (unsigned)x->device_id);
    if ((st = put_link(e, &t->links[e->uplink[v]], "link_speed", "link_width")) != ACC_OK)
        return st;
    if (x->kind == ACC_VTX_PCISW && x->host_bridge)
        acc_buf_puts(&e->b, " acc_host_bridge=\"1\"");
    if (x->numa != t->vertices[e->root[v]].id)
        acc_buf_printf(&e->b, " acc_numa=\"%d\"", x->numa);
    if (x->kind == ACC_VTX_PCISW) {
        if (!has_children(e, v)) {
            acc_buf_puts(&e->b, "/>\n");
            return ACC_OK;
        }
        acc_buf_puts(&e->b, ">\n");
        if ((st = put_children(e, v, depth + 1)) != ACC_OK ||
            (st = put_pcilinks(e, v, depth + 1)) != ACC_OK)
            return st;
    } else {
        acc_buf_puts(&e->b, ">\n");
        if (x->kind == ACC_VTX_GPU)
            put_gpu(e, v, depth + 1);
        else
            put_nic(e, v, depth + 1);
    }
    indent(&e->b, depth);
    acc_buf_puts(&e->b, "</pci>\n");
    return ACC_OK;
}

/* The <pci> elements under CPU or switch u, in vertex order. */
static acc_status_t put_children(export_t *e, int u, int depth)
{
    int v, n = 0;
    acc_status_t st;

    for (v = 0; v < e->t->nvertices; v++) {
        if (e->parent[v] != u)
            continue;
        if (++n > NCCL_XML_MAX_SUBS)
            return unsupported("%s has more than %d devices below it; NCCL reads at most %d "
                               "children per element (MAX_SUBS)",
                               e->t->vertices[u].name, NCCL_XML_MAX_SUBS, NCCL_XML_MAX_SUBS);
        if ((st = put_pci(e, v, depth)) != ACC_OK)
            return st;
    }
    return ACC_OK;
}

/* Text inside <!-- -->, where "--" may not appear. */
static void put_comment_text(acc_buf_t *b, const char *s)
{
    for (; *s; s++) {
        acc_buf_append(b, s, 1);
        if (*s == '-' && s[1] == '-')
            acc_buf_puts(b, " ");
    }
}

static void put_system(export_t *e, double smp_bw)
{
    const acc_topo_t *t = e->t;
    const acc_topo_network_t *n = &t->net;

    acc_buf_printf(&e->b, "<!-- NCCL topology XML written by acc %s", ACC_VERSION_STRING);
    if (t->source && t->source[0]) {
        acc_buf_puts(&e->b, " from ");
        put_comment_text(&e->b, t->source);
    }
    acc_buf_puts(&e->b, ".  Attributes acc_* are acc's own; NCCL ignores them.  Bus ids in PCI "
                        "domains acc0-acc4 are made up for devices the source gave none for. "
                        "-->\n");
    open_elem(e, 0, "system");
    acc_buf_puts(&e->b, " version=\"1\"");
    if (n->nodes != 1 || n->name[0] || n->latency_us != 0 || n->rail_optimized ||
        n->oversubscription != 1.0) {
        acc_buf_printf(&e->b, " acc_nodes=\"%d\"", n->nodes);
        put_str(&e->b, "acc_fabric", n->name);
        put_double(&e->b, "acc_latency_us", n->latency_us);
        acc_buf_printf(&e->b, " acc_rail=\"%d\"", n->rail_optimized ? 1 : 0);
        put_double(&e->b, "acc_oversub", n->oversubscription);
    }
    if (t->name[0])
        put_str(&e->b, "acc_name", t->name);
    if (smp_bw > 0)
        put_double(&e->b, "acc_smp_bw", smp_bw);
    acc_buf_puts(&e->b, ">\n");
}

/* Whether s is a cpuset mask as sysfs cpumap and NCCL write it: 8-hex-digit words, commas. */
static int is_hex_mask(const char *s)
{
    size_t i, n = strlen(s);
    if (n % 9 != 8)
        return 0;
    for (i = 0; i < n; i++)
        if (i % 9 == 8 ? s[i] != ',' : !isxdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

/* NCCL reads affinity as a hex mask (ncclStrToCpuset); hwloc-derived models hold a CPU list
 * such as "0-47,96-143", which is converted.  A mask longer than NCCL's 255 characters, or a
 * list that does not parse, is left out: NCCL then takes the affinity from the machine. */
static void put_affinity(acc_buf_t *b, const char *aff)
{
    enum { MAX_CPUS = 1024 }; /* 32 words: 287 characters, over NCCL's limit anyway */
    uint32_t words[MAX_CPUS / 32];
    const char *p = aff;
    int top = -1, w;

    if (is_hex_mask(aff)) {
        if (strlen(aff) < 256)
            put_str(b, "affinity", aff);
        return;
    }
    memset(words, 0, sizeof(words));
    while (*p) {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p || lo < 0 || lo >= MAX_CPUS)
            return;
        if (*end == '-') {
            p = end + 1;
            hi = strtol(p, &end, 10);
            if (end == p || hi < lo || hi >= MAX_CPUS)
                return;
        }
        for (; lo <= hi; lo++)
            words[lo / 32] |= 1u << (lo % 32);
        if (hi > top)
            top = (int)hi;
        if (*end != ',' && *end != '\0')
            return;
        p = *end ? end + 1 : end;
    }
    if (top < 0 || (top / 32 + 1) * 9 - 1 > 255)
        return;
    acc_buf_puts(b, " affinity=\"");
    for (w = top / 32; w >= 0; w--)
        acc_buf_printf(b, "%08x%s", (unsigned)words[w], w ? "," : "");
    acc_buf_puts(b, "\"");
}

static acc_status_t put_cpus(export_t *e)
{
    const acc_topo_t *t = e->t;
    int id;
    acc_status_t st;

    for (id = 0; id < t->kind_count[ACC_VTX_CPU]; id++) {
        int v = acc_topo_find(t, ACC_VTX_CPU, id);
        const acc_topo_vertex_t *c;
        if (v < 0)
            continue;
        c = &t->vertices[v];
        open_elem(e, 1, "cpu");
        acc_buf_printf(&e->b, " numaid=\"%d\"", c->id);
        if (c->affinity[0])
            put_affinity(&e->b, c->affinity);
        if (c->cpu_arch[0])
            put_str(&e->b, "arch", c->cpu_arch);
        if (c->cpu_vendor[0])
            put_str(&e->b, "vendor", c->cpu_vendor);
        if (c->cpu_family)
            acc_buf_printf(&e->b, " familyid=\"%d\"", c->cpu_family);
        if (c->cpu_model)
            acc_buf_printf(&e->b, " modelid=\"%d\"", c->cpu_model);
        acc_buf_puts(&e->b, ">\n");
        if ((st = put_children(e, v, 2)) != ACC_OK)
            return st;
        acc_buf_puts(&e->b, "  </cpu>\n");
    }
    return ACC_OK;
}

acc_status_t acc_topo_export_nccl_xml(const acc_topo_t *t, acc_buf_t *out)
{
    export_t e;
    double smp_bw;
    size_t nv = (size_t)t->nvertices + 1;
    acc_status_t st;

    memset(&e, 0, sizeof(e));
    e.t = t;
    acc_buf_init(&e.b);
    if (t->kind_count[ACC_VTX_CPU] == 0 || t->kind_count[ACC_VTX_GPU] == 0)
        return unsupported("the topology needs at least one CPU and one GPU; NCCL's schema hangs "
                           "every device under a <cpu>");
    e.parent = acc_mem_calloc(nv, sizeof(int));
    e.root = acc_mem_calloc(nv, sizeof(int));
    e.uplink = acc_mem_calloc(nv, sizeof(int));
    e.busid = acc_mem_calloc(nv, sizeof(*e.busid));
    if (!e.parent || !e.root || !e.uplink || !e.busid) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory exporting NCCL XML");
        goto out;
    }
    assign_busids(&e);
    if ((st = build_tree(&e)) != ACC_OK || (st = check_links(&e, &smp_bw)) != ACC_OK)
        goto out;
    put_system(&e, smp_bw);
    if ((st = put_cpus(&e)) != ACC_OK)
        goto out;
    acc_buf_puts(&e.b, "</system>\n");
    if ((st = acc_buf_status(&e.b)) != ACC_OK)
        goto out;
    if (e.elements > NCCL_XML_MAX_NODES) {
        st = unsupported("the topology needs %d XML elements; NCCL reads at most %d "
                         "(NCCL_TOPO_XML_MAX_NODES)",
                         e.elements, NCCL_XML_MAX_NODES);
        goto out;
    }
    acc_buf_append(out, e.b.data, e.b.len);
    st = acc_buf_status(out);
out:
    acc_buf_free(&e.b);
    acc_mem_free(e.parent);
    acc_mem_free(e.root);
    acc_mem_free(e.uplink);
    acc_mem_free(e.busid);
    return st;
}
