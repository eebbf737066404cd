/*
 * acc_topo_finalize() and paths.
 *
 * Within a node the best path between two vertices is the one with fewest hops, then the widest
 * (largest bottleneck bandwidth), then the lowest latency: the order in which NCCL's breadth-first
 * path search prefers routes (a longer path never replaces a shorter one; among equally short
 * ones the wider wins).  So a direct NVLink beats a wider detour through a third GPU, as in
 * NCCL.  Paths never pass through a NIC, and pass through a GPU only from NVLink to NVLink
 * (NCCL's NVB).  Each path's links are kept (acc_topo_vertex_route), so that the simulator routes
 * transfers over exactly the paths this search chose: the rule lives here only.  Between nodes, a
 * path leaves by the source GPU's NICs and enters by the destination GPU's (topo_nics.c); the
 * cluster's node graphs are identical, so inter-node paths are composed from node-local ones in
 * O(1) instead of searching a graph of 1024 GPUs.
 */
#include "internal.h"

#include <float.h>
#include <string.h>

/* Search state: a vertex, and whether it was entered over NVLink (needed for NVB transit). */
typedef struct {
    double bw;
    double lat;
    int hops;
    int prev_state; /* -1 at the source */
    int via_link;
    int done;
} state_t;

static int better(double bw, int hops, double lat, const state_t *s)
{
    if (s->bw < 0)
        return 1;
    if (hops != s->hops)
        return hops < s->hops;
    if (bw != s->bw)
        return bw > s->bw;
    return lat < s->lat;
}

static int may_transit(const acc_topo_t *t, int v, const acc_topo_link_t *in,
                       const acc_topo_link_t *out)
{
    switch (t->vertices[v].kind) {
    case ACC_VTX_NIC:
        return 0;
    case ACC_VTX_GPU:
        return in->kind == ACC_LINK_NVLINK && out->kind == ACC_LINK_NVLINK;
    default:
        return 1;
    }
}

/* Classify the path whose links are given in order. */
static acc_path_class_t classify(const acc_topo_t *t, const int *links, int n)
{
    int i, all_nvlink = 1, c2c = 0, gpu_transit = 0, cpus = 0, host_bridge = 0, switches = 0;
    int end_cpu;

    if (n == 0)
        return ACC_PATH_LOC;
    end_cpu = t->vertices[t->links[links[0]].from].kind == ACC_VTX_CPU ||
              t->vertices[t->links[links[n - 1]].to].kind == ACC_VTX_CPU;
    for (i = 0; i < n; i++) {
        const acc_topo_link_t *l = &t->links[links[i]];
        if (l->kind != ACC_LINK_NVLINK)
            all_nvlink = 0;
        if (l->kind == ACC_LINK_C2C)
            c2c = 1;
        if (i > 0) { /* l->from is an interior vertex */
            const acc_topo_vertex_t *v = &t->vertices[l->from];
            gpu_transit |= v->kind == ACC_VTX_GPU;
            cpus += v->kind == ACC_VTX_CPU;
            if (v->kind == ACC_VTX_PCISW) {
                if (v->host_bridge)
                    host_bridge = 1;
                else
                    switches++;
            }
        }
    }
    if (all_nvlink)
        return gpu_transit ? ACC_PATH_NVB : ACC_PATH_NVL;
    if (cpus >= 2 || (cpus == 1 && end_cpu))
        return ACC_PATH_SYS;
    if (c2c)
        return ACC_PATH_C2C;
    if (cpus == 1)
        return ACC_PATH_NODE;
    if (host_bridge || end_cpu)
        return ACC_PATH_PHB;
    return switches > 1 ? ACC_PATH_PXB : ACC_PATH_PIX;
}

/* The links of every best path, appended source by source as they are found. */
typedef struct {
    int *links;
    size_t n, cap;
} route_buf_t;

static acc_status_t keep_route(acc_topo_t *t, route_buf_t *r, int pair, const int *trail, int n)
{
    void *p = r->links;
    if (acc_array_reserve(&p, &r->cap, r->n + (size_t)n + 1, sizeof(int)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory keeping the paths of %d vertices",
                             t->nvertices);
    r->links = p;
    memcpy(r->links + r->n, trail, (size_t)n * sizeof(int));
    r->n += (size_t)n;
    t->route_start[pair + 1] = (int)r->n;
    return ACC_OK;
}

/* Best paths from one source to every vertex; fills row `src` of t->vpaths and its routes. */
static acc_status_t paths_from(acc_topo_t *t, int src, state_t *st, int *trail, route_buf_t *r)
{
    int nv = t->nvertices, nstates = 2 * nv, i;

    for (i = 0; i < nstates; i++) {
        st[i].bw = -1.0;
        st[i].lat = DBL_MAX;
        st[i].hops = 0;
        st[i].prev_state = -1;
        st[i].via_link = -1;
        st[i].done = 0;
    }
    st[2 * src].bw = DBL_MAX;
    st[2 * src].lat = 0;
    for (;;) {
        int cur = -1, v, k;
        for (i = 0; i < nstates; i++)
            if (!st[i].done && st[i].bw >= 0 &&
                (cur < 0 || better(st[i].bw, st[i].hops, st[i].lat, &st[cur])))
                cur = i;
        if (cur < 0)
            break;
        st[cur].done = 1;
        v = cur / 2;
        for (k = t->adj_start[v]; k < t->adj_start[v + 1]; k++) {
            int li = t->adj_links[k];
            const acc_topo_link_t *l = &t->links[li];
            int next = 2 * l->to + (l->kind == ACC_LINK_NVLINK);
            double bw = st[cur].bw < l->bw ? st[cur].bw : l->bw;
            if (v != src && !may_transit(t, v, &t->links[st[cur].via_link], l))
                continue;
            if (st[next].done || !better(bw, st[cur].hops + 1, st[cur].lat + l->lat_us, &st[next]))
                continue;
            st[next].bw = bw;
            st[next].hops = st[cur].hops + 1;
            st[next].lat = st[cur].lat + l->lat_us;
            st[next].prev_state = cur;
            st[next].via_link = li;
        }
    }
    for (i = 0; i < nv; i++) {
        acc_topo_path_t *p = &t->vpaths[(size_t)src * (size_t)nv + (size_t)i];
        int best = st[2 * i].bw >= 0 ? 2 * i : -1, n = 0, s;
        if (st[2 * i + 1].bw >= 0 && (best < 0 || better(st[2 * i + 1].bw, st[2 * i + 1].hops,
                                                         st[2 * i + 1].lat, &st[best])))
            best = 2 * i + 1;
        if (i == src || best < 0) {
            p->cls = i == src ? ACC_PATH_LOC : ACC_PATH_DIS;
            p->bw = 0;
            p->lat_us = 0;
            p->hops = 0;
            if (keep_route(t, r, src * nv + i, trail, 0) != ACC_OK)
                return ACC_ERR_NOMEM;
            continue;
        }
        for (s = best; st[s].prev_state >= 0; s = st[s].prev_state)
            trail[n++] = st[s].via_link;
        /* trail is destination-first; reverse it */
        for (s = 0; s < n / 2; s++) {
            int tmp = trail[s];
            trail[s] = trail[n - 1 - s];
            trail[n - 1 - s] = tmp;
        }
        p->cls = classify(t, trail, n);
        p->bw = st[best].bw;
        p->lat_us = st[best].lat;
        p->hops = st[best].hops;
        if (keep_route(t, r, src * nv + i, trail, n) != ACC_OK)
            return ACC_ERR_NOMEM;
    }
    return ACC_OK;
}

void topo_free_paths(acc_topo_t *t)
{
    acc_mem_free(t->adj_start);
    acc_mem_free(t->adj_links);
    acc_mem_free(t->vpaths);
    acc_mem_free(t->gpu_vertex);
    acc_mem_free(t->gpu_nic);
    acc_mem_free(t->gpu_nics_start);
    acc_mem_free(t->gpu_nics);
    acc_mem_free(t->gpu_pxn);
    acc_mem_free(t->vertex_numa);
    acc_mem_free(t->route_start);
    acc_mem_free(t->route_links);
    t->adj_start = t->adj_links = t->gpu_vertex = t->gpu_nic = t->vertex_numa = NULL;
    t->gpu_nics_start = t->gpu_nics = t->gpu_pxn = NULL;
    t->route_start = t->route_links = NULL;
    t->vpaths = NULL;
    t->finalized = 0;
}

acc_status_t topo_compute_paths(acc_topo_t *t)
{
    int nv = t->nvertices, i, v;
    state_t *st = NULL;
    int *trail = NULL;
    route_buf_t routes = {NULL, 0, 0};
    acc_status_t st_ = ACC_OK;

    t->adj_start = acc_mem_calloc((size_t)nv + 1, sizeof(int));
    t->adj_links = acc_mem_calloc((size_t)t->nlinks + 1, sizeof(int));
    t->vpaths = acc_mem_realloc_array(NULL, (size_t)nv * (size_t)nv, sizeof(acc_topo_path_t));
    t->gpu_vertex = acc_mem_calloc((size_t)t->kind_count[ACC_VTX_GPU] + 1, sizeof(int));
    t->gpu_nic = acc_mem_calloc((size_t)t->kind_count[ACC_VTX_GPU] + 1, sizeof(int));
    t->vertex_numa = acc_mem_calloc((size_t)nv + 1, sizeof(int));
    t->route_start = acc_mem_calloc((size_t)nv * (size_t)nv + 1, sizeof(int));
    st = acc_mem_calloc(2 * (size_t)nv, sizeof(state_t));
    trail = acc_mem_calloc(2 * (size_t)nv + 1, sizeof(int));
    if (!t->adj_start || !t->adj_links || !t->vpaths || !t->gpu_vertex || !t->gpu_nic ||
        !t->vertex_numa || !t->route_start || !st || !trail) {
        st_ = acc_error_set(ACC_ERR_NOMEM, "out of memory computing paths of %d vertices", nv);
        goto out;
    }
    /* CSR adjacency, links in their input order for determinism. */
    for (i = 0; i < t->nlinks; i++)
        t->adj_start[t->links[i].from + 1]++;
    for (v = 0; v < nv; v++)
        t->adj_start[v + 1] += t->adj_start[v];
    {
        int *fill = acc_mem_calloc((size_t)nv + 1, sizeof(int));
        if (!fill) {
            st_ = acc_error_set(ACC_ERR_NOMEM, "out of memory computing paths");
            goto out;
        }
        for (i = 0; i < t->nlinks; i++) {
            int f = t->links[i].from;
            t->adj_links[t->adj_start[f] + fill[f]++] = i;
        }
        acc_mem_free(fill);
    }
    for (v = 0; v < nv; v++)
        if (t->vertices[v].kind == ACC_VTX_GPU)
            t->gpu_vertex[t->vertices[v].id] = v;
    for (v = 0; v < nv && st_ == ACC_OK; v++)
        st_ = paths_from(t, v, st, trail, &routes);
    if (st_ != ACC_OK)
        goto out;
    t->route_links = routes.links;
    routes.links = NULL;
    for (v = 0; v < nv; v++) {
        int best = -1, c;
        const acc_topo_path_t *bp = NULL;
        if (t->vertices[v].kind == ACC_VTX_CPU) {
            t->vertex_numa[v] = t->vertices[v].id;
            continue;
        }
        if (t->vertices[v].numa >= 0) {
            t->vertex_numa[v] = t->vertices[v].numa;
            continue;
        }
        for (c = 0; c < nv; c++) {
            const acc_topo_path_t *p = &t->vpaths[(size_t)v * nv + c];
            if (t->vertices[c].kind != ACC_VTX_CPU || p->cls == ACC_PATH_DIS)
                continue;
            if (!bp || p->hops < bp->hops || (p->hops == bp->hops && p->bw > bp->bw)) {
                bp = p;
                best = t->vertices[c].id;
            }
        }
        t->vertex_numa[v] = best;
    }
    st_ = topo_assign_nics(t);
out:
    acc_mem_free(st);
    acc_mem_free(trail);
    acc_mem_free(routes.links);
    if (st_ != ACC_OK)
        topo_free_paths(t);
    return st_;
}

/* NVLink bandwidth is always link count x the per-link rate of the GPU generation; the slower
 * GPU decides for a GPU-GPU connection. */
static acc_status_t set_nvlink_bandwidths(acc_topo_t *t)
{
    int i;
    for (i = 0; i < t->nlinks; i++) {
        acc_topo_link_t *l = &t->links[i];
        double rate = 0;
        const acc_topo_vertex_t *ends[2] = {&t->vertices[l->from], &t->vertices[l->to]};
        int e;
        if (l->kind != ACC_LINK_NVLINK)
            continue;
        for (e = 0; e < 2; e++) {
            const acc_gpu_arch_t *a;
            if (ends[e]->kind != ACC_VTX_GPU)
                continue;
            a = acc_topo_gpu_arch(ends[e]->sm);
            if (!a || a->nvlink_gbs <= 0)
                return acc_error_set(ACC_ERR_TOPO,
                                     "%s (sm_%d) has NVLinks but its generation "
                                     "has none",
                                     ends[e]->name, ends[e]->sm);
            if (rate == 0 || a->nvlink_gbs < rate)
                rate = a->nvlink_gbs;
        }
        if (rate == 0)
            return acc_error_set(ACC_ERR_TOPO, "NVLink %s - %s joins no GPU", ends[0]->name,
                                 ends[1]->name);
        l->bw = rate * l->count;
    }
    return ACC_OK;
}

acc_status_t acc_topo_finalize(acc_topo_t *t)
{
    acc_status_t st;
    int a, b, ngpu = t->kind_count[ACC_VTX_GPU];

    if (t->finalized)
        return ACC_OK;
    if ((st = set_nvlink_bandwidths(t)) != ACC_OK || (st = acc_topo_check(t)) != ACC_OK)
        return st;
    if ((st = topo_compute_paths(t)) != ACC_OK)
        return st;
    t->finalized = 1;
    for (a = 0; a < ngpu; a++) {
        for (b = 0; b < ngpu; b++) {
            const acc_topo_path_t *p =
                &t->vpaths[(size_t)t->gpu_vertex[a] * t->nvertices + t->gpu_vertex[b]];
            if (p->cls == ACC_PATH_DIS) {
                st = acc_error_set(ACC_ERR_TOPO,
                                   "GPU%d cannot reach GPU%d: the input has no "
                                   "PCIe or NVLink path between them",
                                   a, b);
                topo_free_paths(t);
                return st;
            }
        }
    }
    if (t->net.nodes > 1 && t->kind_count[ACC_VTX_NIC] == 0) {
        topo_free_paths(t);
        return acc_error_set(ACC_ERR_TOPO, "a cluster of %d nodes needs NICs in its node type",
                             t->net.nodes);
    }
    return ACC_OK;
}

static acc_status_t need_final(const acc_topo_t *t)
{
    if (!t->finalized)
        return acc_error_set(ACC_ERR_INVALID, "topology not finalized (call acc_topo_finalize)");
    return ACC_OK;
}

acc_status_t acc_topo_vertex_path(const acc_topo_t *t, int va, int vb, acc_topo_path_t *out)
{
    acc_status_t st = need_final(t);
    if (st != ACC_OK)
        return st;
    if (va < 0 || va >= t->nvertices || vb < 0 || vb >= t->nvertices)
        return acc_error_set(ACC_ERR_INVALID, "no vertex %d or %d", va, vb);
    *out = t->vpaths[(size_t)va * t->nvertices + vb];
    return ACC_OK;
}

acc_status_t acc_topo_vertex_route(const acc_topo_t *t, int va, int vb, const int **links, int *n)
{
    acc_status_t st = need_final(t);
    size_t pair;
    if (st != ACC_OK)
        return st;
    if (va < 0 || va >= t->nvertices || vb < 0 || vb >= t->nvertices)
        return acc_error_set(ACC_ERR_INVALID, "no vertex %d or %d", va, vb);
    pair = (size_t)va * t->nvertices + vb;
    *links = t->route_links + t->route_start[pair];
    *n = t->route_start[pair + 1] - t->route_start[pair];
    return ACC_OK;
}

int acc_topo_vertex_numa(const acc_topo_t *t, int index)
{
    if (index < 0 || index >= t->nvertices)
        return -1;
    if (!t->finalized)
        return t->vertices[index].numa;
    return t->vertex_numa[index];
}

acc_status_t acc_topo_path(const acc_topo_t *t, int rank_a, int rank_b, acc_topo_path_t *out)
{
    int g = t->kind_count[ACC_VTX_GPU], ranks = acc_topo_ranks(t);
    acc_status_t st = need_final(t);

    if (st != ACC_OK)
        return st;
    if (rank_a < 0 || rank_a >= ranks || rank_b < 0 || rank_b >= ranks)
        return acc_error_set(ACC_ERR_RANGE, "rank %d or %d outside 0..%d", rank_a, rank_b,
                             ranks - 1);
    if (rank_a / g == rank_b / g)
        *out =
            t->vpaths[(size_t)t->gpu_vertex[rank_a % g] * t->nvertices + t->gpu_vertex[rank_b % g]];
    else
        topo_net_path(t, rank_a % g, rank_b % g, out);
    return ACC_OK;
}

acc_status_t acc_topo_path_matrix(const acc_topo_t *t, acc_topo_path_t **out)
{
    int g = t->kind_count[ACC_VTX_GPU], n = acc_topo_ranks(t), a, b;
    acc_topo_path_t *m, *local, *remote;
    acc_status_t st = need_final(t);

    if (st != ACC_OK)
        return st;
    m = acc_mem_realloc_array(NULL, (size_t)n * (size_t)n, sizeof(*m));
    local = acc_mem_realloc_array(NULL, (size_t)g * g, sizeof(*m));
    remote = acc_mem_realloc_array(NULL, (size_t)g * g, sizeof(*m));
    if (!m || !local || !remote) {
        acc_mem_free(m);
        acc_mem_free(local);
        acc_mem_free(remote);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a %d x %d path matrix", n, n);
    }
    /* Every node pair repeats the same g x g block: compute the two blocks once. */
    for (a = 0; a < g; a++) {
        for (b = 0; b < g; b++) {
            local[a * g + b] =
                t->vpaths[(size_t)t->gpu_vertex[a] * t->nvertices + t->gpu_vertex[b]];
            if (t->net.nodes > 1)
                topo_net_path(t, a, b, &remote[a * g + b]);
        }
    }
    for (a = 0; a < n; a++) {
        acc_topo_path_t *row = m + (size_t)a * n;
        int node_a = a / g, ga = a % g, node_b;
        for (node_b = 0; node_b < n / g; node_b++)
            memcpy(row + (size_t)node_b * g, (node_b == node_a ? local : remote) + (size_t)ga * g,
                   sizeof(*m) * g);
    }
    acc_mem_free(local);
    acc_mem_free(remote);
    *out = m;
    return ACC_OK;
}
