/*
 * NCCL's view of one node (struct ncclTopoSystem), built from an acc topology's facts.
 *
 * acc keeps hardware rates on its links; NCCL keeps its own, and the replica must see the
 * machine as NCCL does: NVLink is link count x ncclTopoNVLinkBw(sm), PCIe width x per-lane
 * speed / 80, a NIC's network side speed / 8000, CPU-to-CPU links by CPU type.  acc's host
 * bridges are folded into their CPU, because NCCL has no host-bridge node: a device under a
 * root port hangs off the CPU, and a path through it is PHB.
 *
 * Not replicated, because acc's topology does not carry what they act on: NCCL's flattening of
 * two-level Broadcom PCIe switches (acc importers already give one switch level), the merging
 * of NIC ports into virtual NICs (an acc NIC is one port), NVML's P2P status (taken as good),
 * and multi-node NVLink domains (MNNVL).  GPUs are numbered as CUDA devices in acc's order and
 * NICs as net devices in acc's order.
 */
#include "nccl_internal.h"

#include <stdlib.h>
#include <string.h>

/* ncclTopoNVLinkBw (sheet §1 "NVLink": SM60 18.0, SM70 20.0, SM80 20.0, SM86 12.0, SM90 20.6,
 * SM100 40.1 GB/s per link).  The sheet lists points; the ranges between them (sm89 counts as
 * sm80, sm103 as sm100) follow NCCL 2.28 src/graph/topo.h, which compares with >=. */
float nn_nvlink_bw(int sm)
{
    return sm >= 100  ? 40.1f
           : sm >= 90 ? 20.6f
           : sm == 86 ? 12.0f
           : sm >= 80 ? 20.0f
           : sm >= 70 ? 20.0f
           : sm >= 60 ? 18.0f
                      : 20.0f;
}

/* Per-lane PCIe speed in units of 100 Mb/s (sheet §1: "8/16/32/64.0 GT/s PCIe" give
 * 60/120/240/480).  The sheet is silent on Gen1/Gen2 and on an unknown speed; NCCL 2.28's
 * kvDictPciGen (src/graph/topo.cc) gives 15 and 30, and 60 as its fallback. */
static float pci_lane_speed(int gen)
{
    static const float speed[] = {60, 15, 30, 60, 120, 240, 480};
    return gen >= 1 && gen <= 6 ? speed[gen] : 60;
}

/* sheet §1: "width*speed/80 GB/s ... A width of 0 is read as 16". */
float nn_pci_bw(int gen, int width)
{
    return (float)(width > 0 ? width : 16) * pci_lane_speed(gen) / 80.0f;
}

/* sheet §1 "Network": net.bw = speed/8000 GB/s with speed in Mb/s; "A speed <= 0 is replaced by
 * 10000". */
float nn_net_bw(double gbps)
{
    double mbps = gbps * 1000.0;
    return (float)((mbps > 0 ? mbps : 10000.0) / 8000.0);
}

/* ncclTopoGetInterCpuBw (sheet §1 "Other constants": QPI BDW 6, SKL 10, SRP 22, ERP 40; P9 32,
 * ARM 6, AMD_BW 16).  A CPU NCCL does not recognise keeps LOC_BW, NCCL's starting value; the
 * sheet lists no Zhaoxin rate, so Zhaoxin CPUs are read as unrecognised. */
static float inter_cpu_bw(const nn_node_t *cpu)
{
    static const float intel[] = {6.0f, 10.0f, 22.0f, 40.0f};
    if (cpu->arch == NN_ARCH_POWER)
        return 32.0f;
    if (cpu->arch == NN_ARCH_ARM)
        return 6.0f;
    if (cpu->arch == NN_ARCH_X86 && cpu->vendor == NN_VENDOR_INTEL)
        return intel[cpu->model];
    if (cpu->arch == NN_ARCH_X86 && cpu->vendor == NN_VENDOR_AMD)
        return 16.0f;
    return NN_LOC_BW;
}

static void classify_cpu(const acc_topo_vertex_t *v, nn_node_t *n)
{
    n->vendor = acc_str_ieq(v->cpu_vendor, "GenuineIntel")   ? NN_VENDOR_INTEL
                : acc_str_ieq(v->cpu_vendor, "AuthenticAMD") ? NN_VENDOR_AMD
                                                             : NN_VENDOR_UNKNOWN;
    if (acc_str_ieq(v->cpu_arch, "x86_64"))
        n->arch = NN_ARCH_X86;
    else if (acc_str_ieq(v->cpu_arch, "arm64") || acc_str_ieq(v->cpu_arch, "aarch64"))
        n->arch = NN_ARCH_ARM;
    else if (acc_str_ieq(v->cpu_arch, "ppc64") || acc_str_ieq(v->cpu_arch, "ppc64le"))
        n->arch = NN_ARCH_POWER;
    else /* NCCL reads the arch of the CPU it runs on; an Intel or AMD vendor implies x86 */
        n->arch = n->vendor != NN_VENDOR_UNKNOWN ? NN_ARCH_X86 : NN_ARCH_UNKNOWN;
    /* sheet §1 "cpu": Intel model >= 0xCF ERP, >= 0x8F SRP, >= 0x55 SKL, else BDW. */
    n->model = v->cpu_model >= 0xCF   ? NN_INTEL_ERP
               : v->cpu_model >= 0x8F ? NN_INTEL_SRP
               : v->cpu_model >= 0x55 ? NN_INTEL_SKL
                                      : NN_INTEL_BDW;
}

typedef struct {
    int from, to, type;
    float bw;
    int order; /* creation order, to keep the sort stable */
} raw_link_t;

typedef struct {
    raw_link_t *v;
    int n, cap;
} raw_list_t;

/* ncclTopoConnectNodes: a second link of the same type to the same node adds its bandwidth. */
static acc_status_t connect(raw_list_t *l, int from, int to, int type, float bw)
{
    int i;
    for (i = 0; i < l->n; i++) {
        if (l->v[i].from == from && l->v[i].to == to && l->v[i].type == type) {
            l->v[i].bw += bw;
            return ACC_OK;
        }
    }
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        raw_link_t *v = acc_mem_realloc_array(l->v, (size_t)cap, sizeof(*v));
        if (!v)
            return acc_error_set(ACC_ERR_NOMEM, "NCCL model: out of memory for links");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].from = from;
    l->v[l->n].to = to;
    l->v[l->n].type = type;
    l->v[l->n].bw = bw;
    l->v[l->n].order = l->n;
    l->n++;
    return ACC_OK;
}

/* Links grouped by source node; within a node by bandwidth, highest first, as
 * ncclTopoConnectNodes keeps them. */
static int cmp_link(const void *pa, const void *pb)
{
    const raw_link_t *a = pa, *b = pb;
    if (a->from != b->from)
        return a->from - b->from;
    if (a->bw != b->bw)
        return a->bw > b->bw ? -1 : 1;
    return a->order - b->order;
}

static int add_node(nn_system_t *s, int type)
{
    nn_node_t *n = &s->node[s->nnodes];
    memset(n, 0, sizeof(*n));
    n->type = type;
    n->index = s->count[type]++;
    n->local_gpu = -1;
    return s->nnodes++;
}

/* ncclTopoSort: in the PCI tree, the link towards the CPU goes last at every node. */
static void sort_pci(nn_system_t *s, int node, int up)
{
    nn_node_t *n = &s->node[node];
    int l;
    if (up >= 0) {
        for (l = 0; l < n->nlinks && s->link[n->link0 + l].to != up; l++)
            ;
        for (; l + 1 < n->nlinks; l++) {
            nn_link_t t = s->link[n->link0 + l];
            s->link[n->link0 + l] = s->link[n->link0 + l + 1];
            s->link[n->link0 + l + 1] = t;
        }
    }
    for (l = 0; l < n->nlinks; l++) {
        const nn_link_t *k = &s->link[n->link0 + l];
        if (k->type == NN_LINK_PCI && k->to != up && s->node[k->to].type != NN_CPU)
            sort_pci(s, k->to, node);
    }
}

/* The node each acc vertex becomes; host bridges become the CPU they hang off. */
static acc_status_t map_vertices(const acc_topo_t *topo, nn_system_t *s, int *map, int with_net,
                                 int *net_of)
{
    int nv = acc_topo_vertex_count(topo), v, l, nvs = -1;
    static const int order[] = {ACC_VTX_GPU, ACC_VTX_PCISW, ACC_VTX_NVSWITCH, ACC_VTX_CPU,
                                ACC_VTX_NIC};
    size_t k;

    for (k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
        for (v = 0; v < nv; v++) {
            const acc_topo_vertex_t *x = acc_topo_vertex(topo, v);
            if ((int)x->kind != order[k] || (x->kind == ACC_VTX_PCISW && x->host_bridge))
                continue;
            if (x->kind == ACC_VTX_NVSWITCH) {
                /* sheet §1: all NVSwitch links "collapse into one NVS node". */
                if (nvs < 0)
                    nvs = add_node(s, NN_NVS);
                map[v] = nvs;
                continue;
            }
            map[v] = add_node(s, x->kind == ACC_VTX_GPU     ? NN_GPU
                                 : x->kind == ACC_VTX_PCISW ? NN_PCI
                                 : x->kind == ACC_VTX_CPU   ? NN_CPU
                                                            : NN_NIC);
            if (x->kind == ACC_VTX_GPU)
                s->node[map[v]].sm = x->sm;
            if (x->kind == ACC_VTX_CPU)
                classify_cpu(x, &s->node[map[v]]);
        }
    }
    for (v = 0; v < nv; v++) {
        const acc_topo_vertex_t *x = acc_topo_vertex(topo, v);
        if (x->kind != ACC_VTX_PCISW || !x->host_bridge)
            continue;
        for (l = 0; l < acc_topo_link_count(topo); l++) {
            const acc_topo_link_t *lk = acc_topo_link(topo, l);
            if (lk->from == v && acc_topo_vertex(topo, lk->to)->kind == ACC_VTX_CPU)
                map[v] = map[lk->to];
        }
        if (map[v] < 0) /* a root complex without a CPU: keep it as a bridge */
            map[v] = add_node(s, NN_PCI);
    }
    for (v = 0; v < nv && with_net; v++)
        if (acc_topo_vertex(topo, v)->kind == ACC_VTX_NIC)
            net_of[v] = add_node(s, NN_NET);
    return ACC_OK;
}

static acc_status_t collect_links(const acc_topo_t *topo, nn_system_t *s, const int *map,
                                  const int *net_of, raw_list_t *raw)
{
    acc_status_t st = ACC_OK;
    int l, c, d;

    for (l = 0; l < acc_topo_link_count(topo) && st == ACC_OK; l++) {
        const acc_topo_link_t *k = acc_topo_link(topo, l);
        int a = map[k->from], b = map[k->to];
        if (a < 0 || b < 0 || a == b)
            continue;
        if (k->kind == ACC_LINK_NVLINK) {
            /* The GPU end sets the rate, in both directions (ncclTopoAddNvLinks). */
            int sm = s->node[a].type == NN_GPU   ? s->node[a].sm
                     : s->node[b].type == NN_GPU ? s->node[b].sm
                                                 : 0;
            if (sm)
                st = connect(raw, a, b, NN_LINK_NVL, (float)k->count * nn_nvlink_bw(sm));
        } else if (k->kind == ACC_LINK_PCIE) {
            st = connect(raw, a, b, NN_LINK_PCI, nn_pci_bw(k->gen, k->width));
        } else if (k->kind == ACC_LINK_C2C) {
            /* sheet §1 "c2c": bw per link x count; acc's C2C link carries that total. */
            st = connect(raw, a, b, NN_LINK_C2C, (float)k->bw);
        }
        /* SMP links: NCCL joins every pair of CPUs itself, below. */
    }
    for (c = 0; c < s->count[NN_CPU] && st == ACC_OK; c++)
        for (d = 0; d < s->count[NN_CPU] && st == ACC_OK; d++)
            if (c != d)
                st = connect(raw, s->of_type[NN_CPU][c], s->of_type[NN_CPU][d], NN_LINK_SYS,
                             inter_cpu_bw(nn_node(s, NN_CPU, c)));
    for (l = 0; l < acc_topo_vertex_count(topo) && st == ACC_OK; l++) {
        if (net_of[l] < 0)
            continue;
        float bw = nn_net_bw(acc_topo_vertex(topo, l)->speed_gbps);
        s->node[net_of[l]].net_bw = bw;
        st = connect(raw, map[l], net_of[l], NN_LINK_NET, bw);
        if (st == ACC_OK)
            st = connect(raw, net_of[l], map[l], NN_LINK_NET, bw);
    }
    return st;
}

static acc_status_t index_types(nn_system_t *s)
{
    int i, t;
    for (t = 0; t < NN_TYPES; t++)
        if (!(s->of_type[t] = acc_mem_calloc((size_t)s->count[t] + 1, sizeof(int))))
            return acc_error_set(ACC_ERR_NOMEM, "NCCL model: out of memory");
    for (i = 0; i < s->nnodes; i++)
        s->of_type[s->node[i].type][s->node[i].index] = i;
    return ACC_OK;
}

static acc_status_t finish(nn_system_t *s, raw_list_t *raw)
{
    int i;
    qsort(raw->v, (size_t)raw->n, sizeof(raw_link_t), cmp_link);
    s->link = acc_mem_calloc((size_t)raw->n + 1, sizeof(nn_link_t));
    if (!s->link)
        return acc_error_set(ACC_ERR_NOMEM, "NCCL model: out of memory");
    for (i = 0; i < raw->n; i++) {
        nn_node_t *n = &s->node[raw->v[i].from];
        if (n->nlinks == 0)
            n->link0 = i;
        n->nlinks++;
        s->link[i].to = raw->v[i].to;
        s->link[i].type = raw->v[i].type;
        s->link[i].bw = raw->v[i].bw;
    }
    s->nlinks = raw->n;
    for (i = 0; i < s->count[NN_CPU]; i++)
        sort_pci(s, s->of_type[NN_CPU][i], -1);
    s->min_sm = s->max_sm = nn_node(s, NN_GPU, 0)->sm;
    for (i = 1; i < s->count[NN_GPU]; i++) {
        int sm = nn_node(s, NN_GPU, i)->sm;
        s->min_sm = sm < s->min_sm ? sm : s->min_sm;
        s->max_sm = sm > s->max_sm ? sm : s->max_sm;
    }
    if (s->count[NN_CPU]) { /* ncclTopoCpuType reads CPU 0 */
        s->cpu_arch = nn_node(s, NN_CPU, 0)->arch;
        s->cpu_vendor = nn_node(s, NN_CPU, 0)->vendor;
        s->cpu_model = nn_node(s, NN_CPU, 0)->model;
    }
    s->path = acc_mem_calloc((size_t)s->nnodes * (size_t)s->nnodes, sizeof(nn_path_t));
    if (!s->path)
        return acc_error_set(ACC_ERR_NOMEM, "NCCL model: out of memory for paths");
    return ACC_OK;
}

acc_status_t nn_system_build(const acc_topo_t *topo, int with_net, nn_system_t *s)
{
    int nv = acc_topo_vertex_count(topo), v;
    int *map = acc_mem_calloc((size_t)nv + 1, sizeof(int));
    int *net_of = acc_mem_calloc((size_t)nv + 1, sizeof(int));
    raw_list_t raw = {NULL, 0, 0};
    acc_status_t st = ACC_OK;

    memset(s, 0, sizeof(*s));
    s->node = acc_mem_calloc(2 * (size_t)nv + 1, sizeof(nn_node_t));
    if (!map || !net_of || !s->node) {
        st = acc_error_set(ACC_ERR_NOMEM, "NCCL model: out of memory");
        goto out;
    }
    for (v = 0; v < nv; v++)
        map[v] = net_of[v] = -1;
    if ((st = map_vertices(topo, s, map, with_net, net_of)) != ACC_OK ||
        (st = index_types(s)) != ACC_OK ||
        (st = collect_links(topo, s, map, net_of, &raw)) != ACC_OK ||
        (st = finish(s, &raw)) != ACC_OK)
        goto out;
    st = nn_compute_paths(s);
out:
    acc_mem_free(raw.v);
    acc_mem_free(map);
    acc_mem_free(net_of);
    if (st != ACC_OK)
        nn_system_free(s);
    return st;
}

void nn_system_free(nn_system_t *s)
{
    int t;
    size_t i;
    if (s->path)
        for (i = 0; i < (size_t)s->nnodes * (size_t)s->nnodes; i++)
            acc_mem_free(s->path[i].hop);
    acc_mem_free(s->path);
    acc_mem_free(s->local_net);
    for (t = 0; t < NN_TYPES; t++)
        acc_mem_free(s->of_type[t]);
    acc_mem_free(s->link);
    acc_mem_free(s->node);
    memset(s, 0, sizeof(*s));
}
