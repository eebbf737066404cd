/*
 * The PCIe tree of an hwloc topology (topo_hwloc.c's conversion): the switches and host bridges
 * between kept devices (GPUs, NICs) and their CPU, as NCCL counts them.  A switch is its upstream
 * port, into which its downstream ports fold, and root ports fold into their host bridge; a host
 * bridge is kept only where two kept subtrees meet under it, since elsewhere it would change no
 * path class.  Two passes over the devices: the first finds every node on the way up, its uplink
 * and which host bridges are shared; the second makes the vertices and links.
 */
#include "topo_hwloc.h"

#include <math.h>
#include <string.h>

#define PCI_DEPTH_MAX 32

/* hwloc reports a link as GB/s only; the widest lane count that gives that rate decides, which
 * reads 15.75 as Gen3 x16 rather than Gen5 x4 (devices that matter here are x16). */
int topo_hwloc_pcie_from_speed(double gbs, int *gen, int *width)
{
    static const int widths[] = {16, 8, 4, 2, 1};
    size_t w;
    int g;
    for (w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
        for (g = 1; g <= 6; g++) {
            double bw = acc_topo_pcie_bw(g, widths[w]);
            if (fabs(bw - gbs) <= 0.01 * bw) {
                *gen = g;
                *width = widths[w];
                return 1;
            }
        }
    }
    return 0;
}

static float link_speed(hwloc_obj_t o)
{
    if (o->type == HWLOC_OBJ_BRIDGE)
        return o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI
                   ? o->attr->bridge.upstream.pci.linkspeed
                   : 0.0f;
    return o->attr->pcidev.linkspeed;
}

static int is_pci_bridge(hwloc_obj_t o)
{
    return o && o->type == HWLOC_OBJ_BRIDGE &&
           o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

static int is_host_bridge(hwloc_obj_t o)
{
    return o && o->type == HWLOC_OBJ_BRIDGE &&
           o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST;
}

/* The switches (upstream ports, bottom-up) and host bridge above a device, NCCL's way: from a
 * downstream or root port, one level up is either the switch's upstream port or the host. */
static int pci_chain(hwloc_obj_t dev, hwloc_obj_t *sw, hwloc_obj_t *hb)
{
    hwloc_obj_t p = dev->parent;
    int n = 0;
    *hb = NULL;
    while (p && p->type == HWLOC_OBJ_BRIDGE) {
        if (is_host_bridge(p)) {
            *hb = p;
            break;
        }
        if (is_pci_bridge(p->parent)) {
            if (n == PCI_DEPTH_MAX)
                return -1;
            sw[n++] = p->parent;
            p = p->parent->parent;
        } else {
            p = p->parent;
        }
    }
    return n;
}

static topo_hwloc_node_t *pnode(topo_hwloc_conv_t *c, hwloc_obj_t obj, int create)
{
    void *a = c->pn;
    topo_hwloc_node_t *p;
    int i;
    for (i = 0; i < c->npn; i++)
        if (c->pn[i].obj == obj)
            return &c->pn[i];
    if (!create || acc_array_reserve(&a, &c->pn_cap, (size_t)c->npn + 1, sizeof(*p)) != ACC_OK)
        return NULL;
    c->pn = a;
    p = &c->pn[c->npn++];
    memset(p, 0, sizeof(*p));
    p->obj = obj;
    p->host = is_host_bridge(obj);
    p->vertex = -1;
    return p;
}

/* First pass: every node on the way up, its uplink, and which host bridges are shared. */
static acc_status_t plan_tree(topo_hwloc_conv_t *c, const topo_hwloc_dev_t *d)
{
    hwloc_obj_t sw[PCI_DEPTH_MAX], hb;
    int n = pci_chain(d->obj, sw, &hb), k, gen = d->gen, width = d->width;
    topo_hwloc_node_t *p;

    if (n < 0)
        return acc_error_set(ACC_ERR_PARSE, "%s: more than %d PCIe switches above %s", c->name,
                             PCI_DEPTH_MAX, d->v.busid);
    for (k = 0; k < n; k++) {
        int created = !pnode(c, sw[k], 0);
        if (!(p = pnode(c, sw[k], 1)))
            return acc_error_set(ACC_ERR_NOMEM, "%s: out of memory", c->name);
        if (created) {
            p->numa = d->v.numa;
            if (!topo_hwloc_pcie_from_speed(link_speed(sw[k]), &p->gen, &p->width)) {
                acc_status_t st;
                p->gen = gen; /* unknown: no narrower than what hangs below it */
                p->width = width;
                st = acc_topo_assume(c->t, "PCIe switch uplink speed not in the input: taken as "
                                           "the link of the first device below it");
                if (st != ACC_OK)
                    return st;
            }
        }
        gen = p->gen;
        width = p->width;
    }
    if (!hb)
        return ACC_OK;
    if (!(p = pnode(c, hb, 1)))
        return acc_error_set(ACC_ERR_NOMEM, "%s: out of memory", c->name);
    if (!p->child) {
        p->child = n ? sw[n - 1] : d->obj;
        p->numa = d->v.numa;
    } else if (p->child != (n ? sw[n - 1] : d->obj)) {
        p->shared = 1;
    }
    if (acc_topo_pcie_bw(gen, width) > acc_topo_pcie_bw(p->gen, p->width)) {
        p->gen = gen;
        p->width = width;
    }
    return ACC_OK;
}

static acc_status_t node_vertex(topo_hwloc_conv_t *c, topo_hwloc_node_t *p)
{
    acc_topo_vertex_t *v;
    acc_status_t st = acc_topo_add_vertex(c->t, ACC_VTX_PCISW, &p->vertex);
    if (st != ACC_OK)
        return st;
    v = acc_topo_vertex_mut(c->t, p->vertex);
    v->numa = p->numa;
    v->host_bridge = p->host;
    if (!p->host) {
        topo_hwloc_busid(p->obj, v->busid);
        v->vendor_id = p->obj->attr->bridge.upstream.pci.vendor_id;
        v->device_id = p->obj->attr->bridge.upstream.pci.device_id;
    }
    return ACC_OK;
}

/* Second pass: vertices and links from the device up, stopping where an earlier device's chain
 * already reaches. */
static acc_status_t link_tree(topo_hwloc_conv_t *c, const topo_hwloc_dev_t *d)
{
    hwloc_obj_t sw[PCI_DEPTH_MAX], hb;
    int n = pci_chain(d->obj, sw, &hb), k, cur = d->vertex, gen = d->gen, width = d->width;
    topo_hwloc_node_t *p;
    acc_status_t st;

    for (k = 0; k <= n; k++) {
        int created;
        p = k < n ? pnode(c, sw[k], 0) : hb ? pnode(c, hb, 0) : NULL;
        if (!p || (p->host && !p->shared))
            break;
        created = p->vertex < 0;
        if (created && (st = node_vertex(c, p)) != ACC_OK)
            return st;
        if ((st = topo_add_pcie(c->t, cur, p->vertex, gen, width)) != ACC_OK)
            return st;
        if (!created)
            return ACC_OK;
        cur = p->vertex;
        gen = p->gen;
        width = p->width;
    }
    return topo_add_pcie(c->t, cur, c->cpu[d->v.numa], gen, width);
}

acc_status_t topo_hwloc_pcie_tree(topo_hwloc_conv_t *c)
{
    int pass, i;
    acc_status_t st;
    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < c->ngpu + c->nnic; i++) {
            const topo_hwloc_dev_t *d = i < c->ngpu ? &c->gpu[i] : &c->nic[i - c->ngpu];
            if (d->vertex < 0)
                continue;
            st = pass == 0 ? plan_tree(c, d) : link_tree(c, d);
            if (st != ACC_OK)
                return st;
        }
    }
    return ACC_OK;
}
