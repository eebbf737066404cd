/* The topology object: creation, vertices, links, network, assumptions and plain queries. */
#include "internal.h"

#include <ctype.h>
#include <string.h>

static const char *const vertex_kind_names[ACC_VTX_KIND_COUNT] = {"gpu", "nvswitch", "pcisw", "cpu",
                                                                  "nic"};
static const char *const vertex_prefixes[ACC_VTX_KIND_COUNT] = {"GPU", "NVS", "PCI", "CPU", "NIC"};
static const char *const link_kind_names[ACC_LINK_KIND_COUNT] = {"nvlink", "pcie", "c2c", "smp"};
static const char *const path_names[ACC_PATH_CLASS_COUNT] = {
    "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "PHB", "NODE", "SYS", "NET", "DIS"};
static const char *const format_names[] = {"unknown",    "hwloc-xml", "nccl-xml",  "nccl-graph",
                                           "nvidia-smi", "yaml",      "synthetic", "live"};

const char *acc_vertex_kind_name(acc_vertex_kind_t k)
{
    return (k >= 0 && k < ACC_VTX_KIND_COUNT) ? vertex_kind_names[k] : "?";
}

const char *acc_link_kind_name(acc_link_kind_t k)
{
    return (k >= 0 && k < ACC_LINK_KIND_COUNT) ? link_kind_names[k] : "?";
}

const char *acc_path_class_name(acc_path_class_t c)
{
    return (c >= 0 && c < ACC_PATH_CLASS_COUNT) ? path_names[c] : "?";
}

const char *acc_path_class_nccl_name(acc_path_class_t c)
{
    return c == ACC_PATH_NODE ? "PHB" : acc_path_class_name(c);
}

const char *acc_topo_format_name(acc_topo_format_t f)
{
    return (f >= 0 && f <= ACC_TOPO_FMT_LIVE) ? format_names[f] : "?";
}

acc_status_t acc_topo_create(acc_topo_t **out)
{
    acc_topo_t *t = acc_mem_calloc(1, sizeof(*t));
    if (!t)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory creating a topology");
    t->net.nodes = 1;
    t->net.oversubscription = 1.0;
    *out = t;
    return ACC_OK;
}

void acc_topo_destroy(acc_topo_t *t)
{
    int i;
    if (!t)
        return;
    topo_free_paths(t);
    for (i = 0; i < t->nassumed; i++)
        acc_mem_free(t->assumed[i]);
    acc_mem_free(t->assumed);
    acc_mem_free(t->vertices);
    acc_mem_free(t->links);
    acc_mem_free(t->source);
    acc_mem_free(t);
}

static void *dup_array(const void *src, size_t n, size_t elem, int *failed)
{
    void *d;
    if (!src || !n)
        return NULL;
    d = acc_mem_realloc_array(NULL, n, elem);
    if (!d) {
        *failed = 1;
        return NULL;
    }
    memcpy(d, src, n * elem);
    return d;
}

acc_status_t topo_copy(const acc_topo_t *t, acc_topo_t **out)
{
    acc_topo_t *c = NULL;
    int i, failed = 0;
    acc_status_t st = acc_topo_create(&c);

    if (st != ACC_OK)
        return st;
    memcpy(c->name, t->name, sizeof(c->name));
    c->format = t->format;
    c->net = t->net;
    memcpy(c->kind_count, t->kind_count, sizeof(c->kind_count));
    c->source = acc_mem_strdup(t->source);
    failed |= t->source && !c->source;
    c->vertices = dup_array(t->vertices, (size_t)t->nvertices, sizeof(*t->vertices), &failed);
    c->nvertices = t->nvertices;
    c->vertices_cap = (size_t)t->nvertices;
    c->links = dup_array(t->links, (size_t)t->nlinks, sizeof(*t->links), &failed);
    c->nlinks = t->nlinks;
    c->links_cap = (size_t)t->nlinks;
    for (i = 0; i < t->nassumed && !failed; i++)
        failed |= acc_topo_assume(c, "%s", t->assumed[i]) != ACC_OK;
    if (failed) {
        acc_topo_destroy(c);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory copying a topology");
    }
    *out = c;
    return ACC_OK;
}

acc_status_t acc_topo_clone(const acc_topo_t *t, acc_topo_t **out)
{
    acc_topo_t *c = NULL;
    acc_status_t st = topo_copy(t, &c);

    if (st == ACC_OK && t->finalized && (st = acc_topo_finalize(c)) != ACC_OK) {
        acc_topo_destroy(c);
        return st;
    }
    *out = c;
    return st;
}

static acc_status_t check_mutable(const acc_topo_t *t)
{
    if (t->finalized)
        return acc_error_set(ACC_ERR_INVALID, "topology is finalized and can no longer change");
    return ACC_OK;
}

acc_status_t acc_topo_add_vertex(acc_topo_t *t, acc_vertex_kind_t kind, int *index)
{
    acc_topo_vertex_t *v;
    void *p = t->vertices;
    acc_status_t st = check_mutable(t);

    if (st != ACC_OK)
        return st;
    if (kind < 0 || kind >= ACC_VTX_KIND_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "unknown vertex kind %d", (int)kind);
    if (acc_array_reserve(&p, &t->vertices_cap, (size_t)t->nvertices + 1, sizeof(*v)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory adding a vertex");
    t->vertices = p;
    v = &t->vertices[t->nvertices];
    memset(v, 0, sizeof(*v));
    v->kind = kind;
    v->id = t->kind_count[kind]++;
    v->numa = -1;
    snprintf(v->name, sizeof(v->name), "%s%d", vertex_prefixes[kind], v->id);
    if (index)
        *index = t->nvertices;
    t->nvertices++;
    return ACC_OK;
}

acc_topo_vertex_t *acc_topo_vertex_mut(acc_topo_t *t, int index)
{
    if (t->finalized || index < 0 || index >= t->nvertices)
        return NULL;
    return &t->vertices[index];
}

acc_status_t acc_topo_add_link_dir(acc_topo_t *t, int from, int to, acc_link_kind_t kind, int count,
                                   double bw, double lat_us)
{
    acc_topo_link_t *l;
    void *p = t->links;
    acc_status_t st = check_mutable(t);

    if (st != ACC_OK)
        return st;
    if (from < 0 || from >= t->nvertices || to < 0 || to >= t->nvertices || from == to)
        return acc_error_set(ACC_ERR_INVALID, "link %d -> %d: no such pair of vertices", from, to);
    if (kind < 0 || kind >= ACC_LINK_KIND_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "unknown link kind %d", (int)kind);
    if (!(bw > 0) || lat_us < 0 || count < 1)
        return acc_error_set(ACC_ERR_INVALID,
                             "link %s -> %s: bandwidth must be > 0, latency >= 0, count >= 1",
                             t->vertices[from].name, t->vertices[to].name);
    if (acc_array_reserve(&p, &t->links_cap, (size_t)t->nlinks + 1, sizeof(*l)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory adding a link");
    t->links = p;
    l = &t->links[t->nlinks++];
    memset(l, 0, sizeof(*l));
    l->from = from;
    l->to = to;
    l->kind = kind;
    l->count = count;
    l->bw = bw;
    l->lat_us = lat_us;
    return ACC_OK;
}

acc_status_t acc_topo_add_link(acc_topo_t *t, int a, int b, acc_link_kind_t kind, int count,
                               double bw, double lat_us)
{
    acc_status_t st = acc_topo_add_link_dir(t, a, b, kind, count, bw, lat_us);
    if (st != ACC_OK)
        return st;
    return acc_topo_add_link_dir(t, b, a, kind, count, bw, lat_us);
}

acc_status_t acc_topo_set_pcie(acc_topo_t *t, int a, int b, int gen, int width)
{
    int i, found = 0;
    for (i = 0; i < t->nlinks; i++) {
        acc_topo_link_t *l = &t->links[i];
        if (l->kind == ACC_LINK_PCIE &&
            ((l->from == a && l->to == b) || (l->from == b && l->to == a))) {
            l->gen = gen;
            l->width = width;
            found = 1;
        }
    }
    if (!found)
        return acc_error_set(ACC_ERR_NOT_FOUND, "no PCIe link between vertices %d and %d", a, b);
    return ACC_OK;
}

acc_status_t acc_topo_set_network(acc_topo_t *t, const acc_topo_network_t *net)
{
    acc_status_t st = check_mutable(t);
    if (st != ACC_OK)
        return st;
    if (net->nodes < 1)
        return acc_error_set(ACC_ERR_INVALID, "network: node count must be at least 1, not %d",
                             net->nodes);
    if (net->latency_us < 0)
        return acc_error_set(ACC_ERR_INVALID, "network: latency must be >= 0 us");
    if (!(net->oversubscription >= 1.0))
        return acc_error_set(ACC_ERR_INVALID,
                             "network: oversubscription must be >= 1 (1 = non-blocking)");
    t->net = *net;
    return ACC_OK;
}

acc_status_t acc_topo_set_name(acc_topo_t *t, const char *name)
{
    snprintf(t->name, sizeof(t->name), "%s", name ? name : "");
    return ACC_OK;
}

acc_status_t acc_topo_set_source(acc_topo_t *t, const char *source, acc_topo_format_t fmt)
{
    char *s = acc_mem_strdup(source ? source : "");
    if (!s)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    acc_mem_free(t->source);
    t->source = s;
    t->format = fmt;
    return ACC_OK;
}

acc_status_t acc_topo_assume(acc_topo_t *t, const char *fmt, ...)
{
    acc_buf_t b;
    va_list ap;
    void *p = t->assumed;
    int i;

    acc_buf_init(&b);
    va_start(ap, fmt);
    acc_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (b.failed)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    /* The same assumption made for eight GPUs is reported once. */
    for (i = 0; i < t->nassumed; i++) {
        if (strcmp(t->assumed[i], b.data ? b.data : "") == 0) {
            acc_buf_free(&b);
            return ACC_OK;
        }
    }
    if (acc_array_reserve(&p, &t->assumed_cap, (size_t)t->nassumed + 1, sizeof(char *)) != ACC_OK) {
        acc_buf_free(&b);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    }
    t->assumed = p;
    t->assumed[t->nassumed++] = acc_buf_take(&b);
    ACC_INFO(TOPO, "assumed: %s", t->assumed[t->nassumed - 1]);
    return ACC_OK;
}

const char *acc_topo_name(const acc_topo_t *t)
{
    return t->name;
}

const char *acc_topo_source(const acc_topo_t *t)
{
    return t->source ? t->source : "";
}

acc_topo_format_t acc_topo_format(const acc_topo_t *t)
{
    return t->format;
}

int acc_topo_vertex_count(const acc_topo_t *t)
{
    return t->nvertices;
}

const acc_topo_vertex_t *acc_topo_vertex(const acc_topo_t *t, int index)
{
    return (index >= 0 && index < t->nvertices) ? &t->vertices[index] : NULL;
}

int acc_topo_find(const acc_topo_t *t, acc_vertex_kind_t kind, int id)
{
    int i;
    if (kind == ACC_VTX_GPU && t->gpu_vertex && id >= 0 && id < t->kind_count[ACC_VTX_GPU])
        return t->gpu_vertex[id];
    for (i = 0; i < t->nvertices; i++)
        if (t->vertices[i].kind == kind && t->vertices[i].id == id)
            return i;
    return -1;
}

int topo_busid_normalize(const char *in, char out[24])
{
    unsigned dom = 0, bus, dev, fn;
    char tail;

    if (!in)
        return 0;
    while (isspace((unsigned char)*in))
        in++;
    if (sscanf(in, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4) {
        /* full form */
    } else if (sscanf(in, "%x:%x.%x%c", &bus, &dev, &fn, &tail) == 3) {
        dom = 0;
    } else {
        return 0;
    }
    /* NVML writes an 8-digit domain; PCI domains are 16 bits except on VMs with 32-bit ones. */
    snprintf(out, 24, "%04x:%02x:%02x.%x", dom, bus & 0xff, dev & 0xff, fn & 0xf);
    return bus <= 0xff && dev <= 0x1f && fn <= 7;
}

int acc_topo_find_busid(const acc_topo_t *t, const char *busid)
{
    char want[24];
    int i;
    if (!topo_busid_normalize(busid, want))
        return -1;
    for (i = 0; i < t->nvertices; i++)
        if (t->vertices[i].busid[0] && strcmp(t->vertices[i].busid, want) == 0)
            return i;
    return -1;
}

int acc_topo_count(const acc_topo_t *t, acc_vertex_kind_t kind)
{
    return (kind >= 0 && kind < ACC_VTX_KIND_COUNT) ? t->kind_count[kind] : 0;
}

int acc_topo_link_count(const acc_topo_t *t)
{
    return t->nlinks;
}

const acc_topo_link_t *acc_topo_link(const acc_topo_t *t, int index)
{
    return (index >= 0 && index < t->nlinks) ? &t->links[index] : NULL;
}

const acc_topo_link_t *acc_topo_find_link(const acc_topo_t *t, int from, int to,
                                          acc_link_kind_t kind)
{
    int i;
    for (i = 0; i < t->nlinks; i++)
        if (t->links[i].from == from && t->links[i].to == to && t->links[i].kind == kind)
            return &t->links[i];
    return NULL;
}

const acc_topo_network_t *acc_topo_network(const acc_topo_t *t)
{
    return &t->net;
}

int acc_topo_assumption_count(const acc_topo_t *t)
{
    return t->nassumed;
}

const char *acc_topo_assumption(const acc_topo_t *t, int index)
{
    return (index >= 0 && index < t->nassumed) ? t->assumed[index] : NULL;
}

int acc_topo_nodes(const acc_topo_t *t)
{
    return t->net.nodes;
}

int acc_topo_gpus_per_node(const acc_topo_t *t)
{
    return t->kind_count[ACC_VTX_GPU];
}

int acc_topo_ranks(const acc_topo_t *t)
{
    return t->net.nodes * t->kind_count[ACC_VTX_GPU];
}

int acc_topo_nvlinks_between(const acc_topo_t *t, int gpu_a, int gpu_b)
{
    int va = acc_topo_find(t, ACC_VTX_GPU, gpu_a), vb = acc_topo_find(t, ACC_VTX_GPU, gpu_b);
    int i, n = 0;
    for (i = 0; i < t->nlinks; i++)
        if (t->links[i].kind == ACC_LINK_NVLINK && t->links[i].from == va && t->links[i].to == vb)
            n += t->links[i].count;
    return n;
}

int acc_topo_nvlinks_to_switches(const acc_topo_t *t, int gpu)
{
    int va = acc_topo_find(t, ACC_VTX_GPU, gpu);
    int i, n = 0;
    for (i = 0; i < t->nlinks; i++) {
        const acc_topo_link_t *l = &t->links[i];
        if (l->kind == ACC_LINK_NVLINK && l->from == va &&
            t->vertices[l->to].kind == ACC_VTX_NVSWITCH)
            n += l->count;
    }
    return n;
}
