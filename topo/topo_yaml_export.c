/*
 * acc's topology YAML: the exporter.
 *
 * The output is canonical, so that YAML -> model -> YAML gives the same bytes and two dumps of the
 * same machine can be diffed: vertices in the order cpus, gpus, nvswitch, pci_switches, nics, by
 * id; one flow mapping per item on one line; each undirected link once, written from the
 * endpoint earlier in the order GPU, NIC, PCI, NVS, CPU (so device links read device -> switch ->
 * CPU) and sorted by that order; optional fields only when known; NVLink bandwidth never (it is
 * count x the generation's rate).  Facts the producing importer assumed go to `assumed:`.
 */
#include "acc_yaml.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const prefixes[ACC_VTX_KIND_COUNT] = {"GPU", "NVS", "PCI", "CPU", "NIC"};
/* Link endpoint order by vertex kind (GPU, NVSWITCH, PCISW, CPU, NIC -> 0, 3, 2, 4, 1). */
static const int kind_rank[ACC_VTX_KIND_COUNT] = {0, 3, 2, 4, 1};
static const double default_lat[ACC_LINK_KIND_COUNT] = {TOPO_LAT_NVLINK_US, TOPO_LAT_PCIE_US,
                                                        TOPO_LAT_C2C_US, TOPO_LAT_SMP_US};

/* A scalar inside a flow mapping: flow indicators and ':' must be quoted there even where a
 * block scalar could stay plain ("0-55,112-167", "0000:18:00.0"). */
static void put_str(acc_buf_t *b, const char *s)
{
    const char *p;
    if (!strpbrk(s, ",[]{}:#")) {
        acc_yaml_put_scalar(b, s);
        return;
    }
    acc_buf_puts(b, "\"");
    for (p = s; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '"' || ch == '\\')
            acc_buf_printf(b, "\\%c", ch);
        else if (ch == '\n')
            acc_buf_puts(b, "\\n");
        else if (ch == '\t')
            acc_buf_puts(b, "\\t");
        else if (ch < 0x20)
            acc_buf_printf(b, "\\x%02x", ch);
        else
            acc_buf_append(b, p, 1);
    }
    acc_buf_puts(b, "\"");
}

static void key_str(acc_buf_t *b, const char *key, const char *s)
{
    if (!s[0])
        return;
    acc_buf_printf(b, ", %s: ", key);
    put_str(b, s);
}

static void key_int(acc_buf_t *b, const char *key, long long v)
{
    if (v)
        acc_buf_printf(b, ", %s: %lld", key, v);
}

static void key_double(acc_buf_t *b, const char *key, double v)
{
    acc_buf_printf(b, ", %s: ", key);
    acc_yaml_put_double(b, v);
}

static void key_numa(acc_buf_t *b, int numa)
{
    if (numa >= 0)
        acc_buf_printf(b, ", numa: %d", numa);
}

/* nics: the NICs a GPU stripes across, 0 when not known (not finalized) or none. */
static void put_vertex(acc_buf_t *b, const acc_topo_vertex_t *v, int nics)
{
    acc_buf_printf(b, "    - {id: %d", v->id);
    switch (v->kind) {
    case ACC_VTX_CPU:
        key_str(b, "arch", v->cpu_arch);
        key_str(b, "vendor", v->cpu_vendor);
        key_int(b, "family", v->cpu_family);
        key_int(b, "model", v->cpu_model);
        key_str(b, "affinity", v->affinity);
        break;
    case ACC_VTX_GPU:
        key_str(b, "model", v->model);
        key_int(b, "sm", v->sm);
        key_int(b, "sms", v->sm_count);
        if (v->mem_bytes)
            key_double(b, "memory_gib", (double)v->mem_bytes / 1073741824.0);
        if (v->device_id)
            acc_buf_printf(b, ", pci_device: 0x%04x", (unsigned)v->device_id);
        key_str(b, "busid", v->busid);
        key_numa(b, v->numa);
        key_int(b, "nics", nics);
        break;
    case ACC_VTX_PCISW:
        key_str(b, "busid", v->busid);
        if (v->host_bridge)
            acc_buf_puts(b, ", host_bridge: true");
        key_numa(b, v->numa);
        break;
    case ACC_VTX_NIC:
        key_str(b, "device", v->dev_name);
        key_double(b, "speed_gbps", v->speed_gbps);
        key_str(b, "busid", v->busid);
        key_numa(b, v->numa);
        if (v->gdr)
            acc_buf_puts(b, ", gdr: true");
        key_int(b, "plane", v->plane);
        break;
    default:
        break;
    }
    acc_buf_puts(b, "}\n");
}

static void put_section(acc_buf_t *b, const acc_topo_t *t, acc_vertex_kind_t kind, const char *key)
{
    int id, n = acc_topo_count(t, kind);
    if (n == 0)
        return;
    acc_buf_printf(b, "  %s:\n", key);
    for (id = 0; id < n; id++) {
        int v = acc_topo_find(t, kind, id);
        /* A GPU's NIC count (topo_yaml_nics.c), where the node has NICs and paths. */
        int nics = kind == ACC_VTX_GPU && t->finalized ? acc_topo_gpu_nics(t, id, NULL, NULL) : 0;
        if (v >= 0)
            put_vertex(b, acc_topo_vertex(t, v), nics);
    }
}

/* ---- links --------------------------------------------------------------------------------- */

typedef struct {
    const acc_topo_t *t;
    int link;
} link_ref_t;

static long long rank_of(const acc_topo_t *t, int v)
{
    const acc_topo_vertex_t *x = &t->vertices[v];
    return (long long)kind_rank[x->kind] * ((long long)INT32_MAX + 1) + x->id;
}

/* The link as written: from its earlier endpoint. */
static void ends(const acc_topo_t *t, const acc_topo_link_t *l, int *a, int *b)
{
    int swap = rank_of(t, l->from) > rank_of(t, l->to);
    *a = swap ? l->to : l->from;
    *b = swap ? l->from : l->to;
}

static int cmp_links(const void *x, const void *y)
{
    const link_ref_t *p = x, *q = y;
    const acc_topo_link_t *lp = &p->t->links[p->link], *lq = &q->t->links[q->link];
    int pa, pb, qa, qb;
    long long d;
    ends(p->t, lp, &pa, &pb);
    ends(q->t, lq, &qa, &qb);
    if ((d = rank_of(p->t, pa) - rank_of(q->t, qa)) != 0 ||
        (d = rank_of(p->t, pb) - rank_of(q->t, qb)) != 0)
        return d < 0 ? -1 : 1;
    return (int)lp->kind - (int)lq->kind;
}

/* Each undirected link once: the direction from the earlier endpoint, or the only direction
 * there is (a one-way link of an unfinished model). */
static int written(const acc_topo_t *t, int i)
{
    const acc_topo_link_t *l = &t->links[i];
    if (rank_of(t, l->from) < rank_of(t, l->to))
        return 1;
    return acc_topo_find_link(t, l->to, l->from, l->kind) == NULL;
}

static void vertex_name(const acc_topo_t *t, int v, char out[24])
{
    snprintf(out, 24, "%s%d", prefixes[t->vertices[v].kind], t->vertices[v].id);
}

static void put_link(acc_buf_t *b, const acc_topo_t *t, const acc_topo_link_t *l)
{
    char na[24], nb[24];
    int a, e;
    ends(t, l, &a, &e);
    vertex_name(t, a, na);
    vertex_name(t, e, nb);
    acc_buf_printf(b, "    - {a: %s, b: %s, kind: %s", na, nb, acc_link_kind_name(l->kind));
    switch (l->kind) {
    case ACC_LINK_NVLINK:
        acc_buf_printf(b, ", count: %d", l->count);
        break;
    case ACC_LINK_PCIE:
        if (l->gen > 0 && l->width > 0)
            acc_buf_printf(b, ", gen: %d, width: %d", l->gen, l->width);
        else
            key_double(b, "bw", l->bw);
        break;
    default:
        key_double(b, "bw", l->bw);
        break;
    }
    if (l->lat_us != default_lat[l->kind])
        key_double(b, "lat_us", l->lat_us);
    acc_buf_puts(b, "}\n");
}

static acc_status_t put_links(acc_buf_t *b, const acc_topo_t *t)
{
    link_ref_t *refs;
    int i, n = 0;

    if (t->nlinks == 0)
        return ACC_OK;
    refs = acc_mem_calloc((size_t)t->nlinks, sizeof(*refs));
    if (!refs)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory exporting %d links", t->nlinks);
    for (i = 0; i < t->nlinks; i++) {
        if (!written(t, i))
            continue;
        refs[n].t = t;
        refs[n++].link = i;
    }
    qsort(refs, (size_t)n, sizeof(*refs), cmp_links);
    acc_buf_puts(b, "  links:\n");
    for (i = 0; i < n; i++)
        put_link(b, t, &t->links[refs[i].link]);
    acc_mem_free(refs);
    return ACC_OK;
}

/* ---- the document -------------------------------------------------------------------------- */

static void put_network(acc_buf_t *b, const acc_topo_network_t *net)
{
    if (net->nodes <= 1 && !net->name[0] && net->latency_us == 0 && !net->rail_optimized &&
        net->oversubscription == 1.0)
        return; /* one node and nothing said about a network */
    acc_buf_printf(b, "network:\n  nodes: %d\n", net->nodes);
    if (net->name[0]) {
        acc_buf_puts(b, "  fabric: ");
        put_str(b, net->name);
        acc_buf_puts(b, "\n");
    }
    acc_buf_puts(b, "  latency_us: ");
    acc_yaml_put_double(b, net->latency_us);
    acc_buf_printf(
        b, "\n  rail_optimized: %s\n  oversubscription: ", net->rail_optimized ? "true" : "false");
    acc_yaml_put_double(b, net->oversubscription);
    acc_buf_puts(b, "\n");
}

acc_status_t acc_topo_export_yaml(const acc_topo_t *t, acc_buf_t *out)
{
    int i;
    acc_status_t st;

    acc_buf_puts(out, "# acc topology (schedules/TOPOLOGY.md)\nversion: 1\n");
    if (t->name[0]) {
        acc_buf_puts(out, "name: ");
        put_str(out, t->name);
        acc_buf_puts(out, "\n");
    }
    acc_buf_puts(out, "node:\n");
    put_section(out, t, ACC_VTX_CPU, "cpus");
    put_section(out, t, ACC_VTX_GPU, "gpus");
    if (acc_topo_count(t, ACC_VTX_NVSWITCH) > 0) {
        const acc_topo_vertex_t *v = acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NVSWITCH, 0));
        acc_buf_puts(out, "  nvswitch: {");
        if (v && v->busid[0]) {
            acc_buf_puts(out, "busid: ");
            put_str(out, v->busid);
        }
        acc_buf_puts(out, "}\n");
    }
    put_section(out, t, ACC_VTX_PCISW, "pci_switches");
    put_section(out, t, ACC_VTX_NIC, "nics");
    if ((st = put_links(out, t)) != ACC_OK)
        return st;
    put_network(out, &t->net);
    if (t->nassumed > 0) {
        acc_buf_puts(out, "assumed:\n");
        for (i = 0; i < t->nassumed; i++) {
            acc_buf_puts(out, "  - ");
            put_str(out, t->assumed[i]);
            acc_buf_puts(out, "\n");
        }
    }
    return acc_buf_status(out);
}
