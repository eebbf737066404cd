/* acc_topo_check(): the invariants every topology must hold before paths are computed. */
#include "internal.h"

#include <string.h>

static acc_status_t check_link(const acc_topo_t *t, const acc_topo_link_t *l)
{
    const acc_topo_vertex_t *a = &t->vertices[l->from], *b = &t->vertices[l->to];
    acc_vertex_kind_t ka = a->kind, kb = b->kind;

    if (!(l->bw > 0) || l->lat_us < 0 || l->count < 1)
        return acc_error_set(ACC_ERR_TOPO, "link %s -> %s: bandwidth %g GB/s, latency %g us, "
                             "count %d (need > 0, >= 0, >= 1)", a->name, b->name, l->bw,
                             l->lat_us, l->count);
    switch (l->kind) {
    case ACC_LINK_NVLINK:
        if (ka != ACC_VTX_GPU && kb != ACC_VTX_GPU)
            return acc_error_set(ACC_ERR_TOPO, "NVLink %s - %s joins no GPU", a->name, b->name);
        if (ka == ACC_VTX_NIC || kb == ACC_VTX_NIC || ka == ACC_VTX_PCISW || kb == ACC_VTX_PCISW)
            return acc_error_set(ACC_ERR_TOPO, "NVLink %s - %s: NVLinks join GPUs, NVSwitches and "
                                 "CPUs only", a->name, b->name);
        break;
    case ACC_LINK_PCIE:
        if (ka == ACC_VTX_NVSWITCH || kb == ACC_VTX_NVSWITCH)
            return acc_error_set(ACC_ERR_TOPO, "PCIe link %s - %s: the NVSwitch fabric vertex "
                                 "takes NVLinks only", a->name, b->name);
        break;
    case ACC_LINK_C2C:
        if (!((ka == ACC_VTX_GPU && kb == ACC_VTX_CPU) || (ka == ACC_VTX_CPU && kb == ACC_VTX_GPU)))
            return acc_error_set(ACC_ERR_TOPO, "C2C link %s - %s must join a GPU and a CPU",
                                 a->name, b->name);
        break;
    case ACC_LINK_SMP:
        if (ka != ACC_VTX_CPU || kb != ACC_VTX_CPU)
            return acc_error_set(ACC_ERR_TOPO, "SMP link %s - %s must join two CPUs", a->name,
                                 b->name);
        break;
    default:
        return acc_error_set(ACC_ERR_TOPO, "link %s - %s of unknown kind", a->name, b->name);
    }
    if (!acc_topo_find_link(t, l->to, l->from, l->kind))
        return acc_error_set(ACC_ERR_TOPO, "link %s -> %s (%s) has no reverse direction", a->name,
                             b->name, acc_link_kind_name(l->kind));
    return ACC_OK;
}

static acc_status_t check_vertex(const acc_topo_t *t, int i)
{
    const acc_topo_vertex_t *v = &t->vertices[i];
    int j;

    if (v->numa < -1 || v->numa >= t->kind_count[ACC_VTX_CPU])
        return acc_error_set(ACC_ERR_TOPO, "%s: NUMA node %d does not exist (%d CPU vertices)",
                             v->name, v->numa, t->kind_count[ACC_VTX_CPU]);
    if (v->kind == ACC_VTX_GPU) {
        const acc_gpu_arch_t *a = acc_topo_gpu_arch(v->sm);
        int links = 0, k;
        if (!a)
            return acc_error_set(ACC_ERR_TOPO, "%s: unknown compute capability sm_%d", v->name,
                                 v->sm);
        for (k = 0; k < t->nlinks; k++)
            if (t->links[k].from == i && t->links[k].kind == ACC_LINK_NVLINK)
                links += t->links[k].count;
        if (links > a->max_nvlinks)
            return acc_error_set(ACC_ERR_TOPO, "%s: %d NVLinks, but a %s GPU has at most %d",
                                 v->name, links, a->arch, a->max_nvlinks);
    }
    if (v->kind == ACC_VTX_NIC && !(v->speed_gbps > 0))
        return acc_error_set(ACC_ERR_TOPO, "%s (%s): NIC speed unknown", v->name,
                             v->dev_name[0] ? v->dev_name : "unnamed");
    if (v->kind == ACC_VTX_NIC && (v->plane < 0 || v->plane >= ACC_TOPO_PLANES_MAX))
        return acc_error_set(ACC_ERR_TOPO, "%s: network plane %d; expected 0 to %d", v->name,
                             v->plane, ACC_TOPO_PLANES_MAX - 1);
    if (v->busid[0]) {
        for (j = i + 1; j < t->nvertices; j++)
            if (strcmp(t->vertices[j].busid, v->busid) == 0)
                return acc_error_set(ACC_ERR_TOPO, "%s and %s share bus id %s", v->name,
                                     t->vertices[j].name, v->busid);
    }
    return ACC_OK;
}

acc_status_t acc_topo_check(const acc_topo_t *t)
{
    int i;
    acc_status_t st;

    if (t->kind_count[ACC_VTX_GPU] == 0)
        return acc_error_set(ACC_ERR_TOPO, "the topology has no NVIDIA GPU");
    if (t->kind_count[ACC_VTX_NVSWITCH] > 1)
        return acc_error_set(ACC_ERR_TOPO, "%d NVSwitch vertices: a node's NVSwitch chips must be "
                             "folded into one fabric vertex", t->kind_count[ACC_VTX_NVSWITCH]);
    if (t->net.nodes < 1 || !(t->net.oversubscription >= 1.0) || t->net.latency_us < 0)
        return acc_error_set(ACC_ERR_TOPO, "network: nodes %d, oversubscription %g, latency %g "
                             "(need >= 1, >= 1, >= 0)", t->net.nodes, t->net.oversubscription,
                             t->net.latency_us);
    for (i = 0; i < t->nvertices; i++)
        if ((st = check_vertex(t, i)) != ACC_OK)
            return st;
    for (i = 0; i < t->nlinks; i++)
        if ((st = check_link(t, &t->links[i])) != ACC_OK)
            return st;
    return ACC_OK;
}
