/*
 * Which NICs a GPU leaves its node by, and the path between GPUs of two nodes.
 *
 * Each GPU has a rail, the one NIC it reaches best (fewest hops' class, then the widest; among
 * equals the least used so far, so that four NICs serve eight GPUs two each), and a stripe: every
 * NIC it reaches at that best class, the rail first.  An AWS p5.48xlarge GPU shares a PCIe switch
 * with four EFA NICs and stripes across all four, as NCCL splits its channels across a GPU's NICs;
 * a p4d GPU shares its switch, and its one NIC, with another GPU.
 *
 * PXN (NCCL's NCCL_PXN_DISABLE, on by default since 2.12): a GPU that reaches NICs only through
 * a host bridge or the CPU, but has an NVLink path to a GPU with NICs on its own PCIe switches,
 * sends through that GPU's NICs: the data crosses NVLink first, then the peer's PCIe switch.
 *
 * The bandwidth of a path between nodes is what one GPU gets alone: the sum of its stripe's NICs
 * (each at the slower of its line rate, divided by the fabric's oversubscription, and its PCIe
 * path), at most what the GPU's PCIe links carry.  Sharing - two GPUs on one NIC, eight GPUs on
 * a node's NICs at once - is the simulator's to price, where every NIC is a resource of its own.
 *
 * Network planes (NCCL's net API v12 reports one per NIC): NICs of different planes meet only
 * where the fabric joins them, and acc gives such NICs one plane, so a path between nodes counts
 * only the NICs of the planes both GPUs' stripes have; with none in common it is disconnected.
 */
#include "internal.h"

#include <string.h>

static const acc_topo_path_t *vp(const acc_topo_t *t, int a, int b)
{
    return &t->vpaths[(size_t)a * (size_t)t->nvertices + (size_t)b];
}

/* The best class at which GPU g reaches any NIC, ACC_PATH_DIS without. */
static acc_path_class_t best_class(const acc_topo_t *t, int g)
{
    acc_path_class_t best = ACC_PATH_DIS;
    int v;
    for (v = 0; v < t->nvertices; v++)
        if (t->vertices[v].kind == ACC_VTX_NIC && vp(t, t->gpu_vertex[g], v)->cls < best)
            best = vp(t, t->gpu_vertex[g], v)->cls;
    return best;
}

/* The rails, as acc has always chosen them: best class, then widest, then least used. */
static void assign_rails(acc_topo_t *t, int *used)
{
    int ngpu = t->kind_count[ACC_VTX_GPU], g, v, nv = t->nvertices;

    for (g = 0; g < ngpu; g++) {
        int best = -1;
        const acc_topo_path_t *bp = NULL;
        for (v = 0; v < nv; v++) {
            const acc_topo_path_t *p = vp(t, t->gpu_vertex[g], v);
            if (t->vertices[v].kind != ACC_VTX_NIC || p->cls == ACC_PATH_DIS)
                continue;
            if (!bp || p->cls < bp->cls || (p->cls == bp->cls && p->bw > bp->bw) ||
                (p->cls == bp->cls && p->bw == bp->bw && used[v] < used[best])) {
                best = v;
                bp = p;
            }
        }
        t->gpu_nic[g] = best;
        if (best >= 0)
            used[best]++;
    }
}

/* PXN's peer for GPU g: a GPU on an NVLink path whose NICs are on its own PCIe switches, on g's
 * NUMA node where one is, the least used among equals; -1 when g is near a NIC itself, or no
 * such GPU exists. */
static int pxn_peer(const acc_topo_t *t, int g, const acc_path_class_t *cls, const int *proxied)
{
    int ngpu = t->kind_count[ACC_VTX_GPU], h, best = -1, best_near = 0;
    int numa = t->vertex_numa[t->gpu_vertex[g]];

    if (cls[g] <= ACC_PATH_PXB || cls[g] == ACC_PATH_DIS)
        return -1;
    for (h = 0; h < ngpu; h++) {
        int near;
        if (h == g || cls[h] > ACC_PATH_PXB ||
            vp(t, t->gpu_vertex[g], t->gpu_vertex[h])->cls != ACC_PATH_NVL)
            continue;
        near = numa >= 0 && t->vertex_numa[t->gpu_vertex[h]] == numa;
        if (best < 0 || near > best_near || (near == best_near && proxied[h] < proxied[best])) {
            best = h;
            best_near = near;
        }
    }
    return best;
}

acc_status_t topo_assign_nics(acc_topo_t *t)
{
    int ngpu = t->kind_count[ACC_VTX_GPU], nv = t->nvertices, g, v, k = 0;
    int *used = acc_mem_calloc((size_t)nv + 1, sizeof(int));
    int *proxied = acc_mem_calloc((size_t)ngpu + 1, sizeof(int));
    acc_path_class_t *cls = acc_mem_calloc((size_t)ngpu + 1, sizeof(*cls));
    acc_status_t st = ACC_OK;

    t->gpu_nics_start = acc_mem_calloc((size_t)ngpu + 1, sizeof(int));
    t->gpu_nics =
        acc_mem_calloc((size_t)ngpu * (size_t)(t->kind_count[ACC_VTX_NIC] + 1), sizeof(int));
    t->gpu_pxn = acc_mem_calloc((size_t)ngpu + 1, sizeof(int));
    if (!used || !proxied || !cls || !t->gpu_nics_start || !t->gpu_nics || !t->gpu_pxn) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory choosing the NICs of %d GPUs", ngpu);
        goto out;
    }
    assign_rails(t, used);
    for (g = 0; g < ngpu; g++)
        cls[g] = best_class(t, g);
    for (g = 0; g < ngpu; g++) {
        int h = pxn_peer(t, g, cls, proxied), src = g, rail;
        t->gpu_pxn[g] = h;
        if (h >= 0) {
            /* The rail becomes the least used of the peer's NICs at its best class. */
            int best = -1;
            proxied[h]++;
            src = h;
            used[t->gpu_nic[g]]--;
            for (v = 0; v < nv; v++)
                if (t->vertices[v].kind == ACC_VTX_NIC &&
                    vp(t, t->gpu_vertex[h], v)->cls == cls[h] && (best < 0 || used[v] < used[best]))
                    best = v;
            t->gpu_nic[g] = best;
            used[best]++;
        }
        rail = t->gpu_nic[g];
        t->gpu_nics_start[g] = k;
        if (rail < 0)
            continue;
        t->gpu_nics[k++] = rail;
        for (v = 0; v < nv; v++)
            if (v != rail && t->vertices[v].kind == ACC_VTX_NIC &&
                vp(t, t->gpu_vertex[src], v)->cls == cls[src])
                t->gpu_nics[k++] = v;
    }
    t->gpu_nics_start[ngpu] = k;
out:
    acc_mem_free(used);
    acc_mem_free(proxied);
    acc_mem_free(cls);
    return st;
}

int acc_topo_gpu_nic(const acc_topo_t *t, int gpu)
{
    if (!t->finalized || gpu < 0 || gpu >= t->kind_count[ACC_VTX_GPU])
        return -1;
    return t->gpu_nic[gpu];
}

int acc_topo_gpu_nics(const acc_topo_t *t, int gpu, const int **nics, int *via)
{
    if (via)
        *via = -1;
    if (nics)
        *nics = NULL;
    if (!t || !t->finalized || gpu < 0 || gpu >= t->kind_count[ACC_VTX_GPU])
        return 0;
    if (via)
        *via = t->gpu_pxn[gpu];
    if (nics)
        *nics = t->gpu_nics + t->gpu_nics_start[gpu];
    return t->gpu_nics_start[gpu + 1] - t->gpu_nics_start[gpu];
}

/* What GPU g's PCIe (or C2C) links carry in one direction: the most its NICs can take. */
static double pcie_cap(const acc_topo_t *t, int gv, int out)
{
    double sum = 0;
    int i;
    for (i = 0; i < t->nlinks; i++) {
        const acc_topo_link_t *l = &t->links[i];
        if ((out ? l->from : l->to) == gv && l->kind != ACC_LINK_NVLINK)
            sum += l->bw;
    }
    return sum;
}

/* The network planes GPU g's NICs are on, a bit per plane. */
static uint64_t planes_of(const acc_topo_t *t, int g)
{
    uint64_t m = 0;
    int k;
    for (k = t->gpu_nics_start[g]; k < t->gpu_nics_start[g + 1]; k++)
        m |= 1ull << t->vertices[t->gpu_nics[k]].plane;
    return m;
}

/* One side of a path between nodes: GPU g to its NICs on the planes of `planes` (out) or those
 * NICs to g; NICs of other planes cannot meet the other side's. */
static void stripe(const acc_topo_t *t, int g, int out, uint64_t planes, acc_topo_path_t *p)
{
    int gv = t->gpu_vertex[g], src = gv, k, h = t->gpu_pxn[g], first = -1;
    double sum = 0, cap;
    const acc_topo_path_t *rail;

    memset(p, 0, sizeof(*p));
    if (h >= 0)
        src = t->gpu_vertex[h];
    for (k = t->gpu_nics_start[g]; k < t->gpu_nics_start[g + 1]; k++) {
        int nic = t->gpu_nics[k];
        const acc_topo_path_t *q = out ? vp(t, src, nic) : vp(t, nic, src);
        double line = t->vertices[nic].speed_gbps / 8.0 / t->net.oversubscription;
        if (!(planes >> t->vertices[nic].plane & 1))
            continue;
        if (first < 0)
            first = nic;
        sum += q->bw < line ? q->bw : line;
    }
    if (first < 0)
        return;
    cap = pcie_cap(t, src, out);
    rail = out ? vp(t, src, first) : vp(t, first, src);
    p->bw = sum < cap ? sum : cap;
    p->lat_us = rail->lat_us;
    p->hops = rail->hops;
    if (h >= 0) {
        const acc_topo_path_t *nv = out ? vp(t, gv, src) : vp(t, src, gv);
        if (nv->bw < p->bw)
            p->bw = nv->bw;
        p->lat_us += nv->lat_us;
        p->hops += nv->hops;
    }
}

void topo_net_path(const acc_topo_t *t, int ga, int gb, acc_topo_path_t *out)
{
    acc_topo_path_t a, b;
    uint64_t pa = planes_of(t, ga), pb = planes_of(t, gb), shared = pa & pb;

    memset(out, 0, sizeof(*out));
    out->cls = ACC_PATH_DIS;
    if (pa && pb && !shared)
        return; /* no plane in common: the fabric never joins their NICs */
    stripe(t, ga, 1, shared ? shared : ~0ull, &a);
    stripe(t, gb, 0, shared ? shared : ~0ull, &b);
    out->cls = ACC_PATH_NET;
    out->bw = a.bw < b.bw ? a.bw : b.bw;
    out->lat_us = a.lat_us + t->net.latency_us + b.lat_us;
    out->hops = a.hops + 1 + b.hops;
}
