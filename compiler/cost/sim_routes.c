/*
 * Routes of the simulator: which links, NICs and fabric a transfer between two ranks crosses,
 * and how the simulator numbers those resources.
 *
 * acc_topo_t gives only the summary of its best paths (class, bottleneck, latency), not their
 * links, so the routes are searched here once per simulator with the rule of topo/topo_paths.c:
 * fewest hops, then the widest bottleneck, then the lowest latency; never through a NIC, and
 * through a GPU only from NVLink to NVLink.  Only the routes transfers can take are kept: GPU to
 * GPU within a node, and GPU to its rail NIC and back.  Between nodes a transfer leaves by the
 * source GPU's rail NIC and enters by the destination GPU's (acc_topo_gpu_nic), crossing the
 * fabric in between: every node of a cluster has the same graph, so a node's routes serve all.
 *
 * Resources are numbered: the directed links of every node (node x links + link), then each
 * NIC's egress and ingress per node, then (oversubscribed fabrics only) each node's share of the
 * fabric core per direction, then each rank's memory, then each rank's LL engine.
 */
#include "sim_internal.h"

#include <float.h>
#include <string.h>

typedef struct {
    double bw, lat;
    int hops;
    int prev; /* previous state, -1 at the source */
    int via;  /* link into this state */
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

typedef struct {
    const acc_topo_t *t;
    int nv, nl;
    int *adj_start, *adj;
    state_t *st;
} search_t;

static int may_transit(const search_t *s, int v, int in, int out)
{
    const acc_topo_vertex_t *vx = acc_topo_vertex(s->t, v);
    if (vx->kind == ACC_VTX_NIC)
        return 0;
    if (vx->kind == ACC_VTX_GPU)
        return acc_topo_link(s->t, in)->kind == ACC_LINK_NVLINK &&
               acc_topo_link(s->t, out)->kind == ACC_LINK_NVLINK;
    return 1;
}

/* Best paths from src; state 2v + 1 is "v entered over NVLink" (needed for NVB transit). */
static void search_from(search_t *s, int src)
{
    int i, n = 2 * s->nv;
    for (i = 0; i < n; i++) {
        s->st[i].bw = -1;
        s->st[i].lat = DBL_MAX;
        s->st[i].hops = 0;
        s->st[i].prev = -1;
        s->st[i].via = -1;
        s->st[i].done = 0;
    }
    s->st[2 * src].bw = DBL_MAX;
    s->st[2 * src].lat = 0;
    for (;;) {
        int cur = -1, v, k;
        for (i = 0; i < n; i++)
            if (!s->st[i].done && s->st[i].bw >= 0 &&
                (cur < 0 || better(s->st[i].bw, s->st[i].hops, s->st[i].lat, &s->st[cur])))
                cur = i;
        if (cur < 0)
            return;
        s->st[cur].done = 1;
        v = cur / 2;
        for (k = s->adj_start[v]; k < s->adj_start[v + 1]; k++) {
            int li = s->adj[k];
            const acc_topo_link_t *l = acc_topo_link(s->t, li);
            int next = 2 * l->to + (l->kind == ACC_LINK_NVLINK);
            double bw = s->st[cur].bw < l->bw ? s->st[cur].bw : l->bw;
            if (v != src && !may_transit(s, v, s->st[cur].via, li))
                continue;
            if (s->st[next].done ||
                !better(bw, s->st[cur].hops + 1, s->st[cur].lat + l->lat_us, &s->st[next]))
                continue;
            s->st[next].bw = bw;
            s->st[next].hops = s->st[cur].hops + 1;
            s->st[next].lat = s->st[cur].lat + l->lat_us;
            s->st[next].prev = cur;
            s->st[next].via = li;
        }
    }
}

/* Append the route from the last search's source to dst. */
static acc_status_t take_route(acc_sim_t *sim, search_t *s, int dst, sim_route_t *out)
{
    int best = s->st[2 * dst].bw >= 0 ? 2 * dst : -1, n = 0, k, i;
    uint32_t links[SIM_ROUTE_MAXLINKS];

    if (s->st[2 * dst + 1].bw >= 0 &&
        (best < 0 || better(s->st[2 * dst + 1].bw, s->st[2 * dst + 1].hops, s->st[2 * dst + 1].lat,
                            &s->st[best])))
        best = 2 * dst + 1;
    if (best < 0)
        return acc_error_set(ACC_ERR_TOPO, "simulator: no route to %s in the node graph",
                             acc_topo_vertex(s->t, dst)->name);
    for (k = best; s->st[k].prev >= 0; k = s->st[k].prev) {
        if (n == SIM_ROUTE_MAXLINKS)
            return acc_error_set(ACC_ERR_UNSUPPORTED,
                                 "simulator: the route to %s has more than %d links",
                                 acc_topo_vertex(s->t, dst)->name, SIM_ROUTE_MAXLINKS);
        links[n++] = (uint32_t)s->st[k].via;
    }
    out->off = sim->nroute_links;
    out->n = (uint32_t)n;
    out->cls = SIM_CLASS_NVLINK;
    for (i = n - 1; i >= 0; i--) {
        acc_link_kind_t kind = acc_topo_link(s->t, (int)links[i])->kind;
        if (kind != ACC_LINK_NVLINK && kind != ACC_LINK_C2C)
            out->cls = SIM_CLASS_PCI;
        sim->route_links[sim->nroute_links++] = links[i];
    }
    return ACC_OK;
}

static acc_status_t build_caps(acc_sim_t *sim)
{
    const acc_topo_t *t = sim->topo;
    const acc_topo_network_t *net = acc_topo_network(t);
    double nic_sum = 0;
    int node, l, v, r;

    for (v = 0; v < sim->nverts; v++) {
        const acc_topo_vertex_t *vx = acc_topo_vertex(t, v);
        if (vx->kind == ACC_VTX_NIC)
            nic_sum += vx->speed_gbps / 8.0 * 1e3 * sim_nic_efficiency();
    }
    for (node = 0; node < sim->nodes; node++) {
        for (l = 0; l < sim->nlinks; l++) {
            const acc_topo_link_t *lk = acc_topo_link(t, l);
            uint32_t id = (uint32_t)(node * sim->nlinks + l);
            sim->res[id].kind = SIM_RES_LINK;
            sim->raw_cap[id] =
                lk->bw * 1e3 *
                sim_link_efficiency(lk->kind, acc_topo_vertex(t, lk->from)->cpu_vendor);
        }
        for (v = 0; v < sim->nverts; v++) {
            const acc_topo_vertex_t *vx = acc_topo_vertex(t, v);
            uint32_t id;
            if (vx->kind != ACC_VTX_NIC)
                continue;
            id = sim->res_nic + (uint32_t)(node * sim->nnics + vx->id) * 2;
            sim->res[id].kind = sim->res[id + 1].kind = SIM_RES_NIC;
            sim->raw_cap[id] = sim->raw_cap[id + 1] =
                vx->speed_gbps / 8.0 * 1e3 * sim_nic_efficiency();
        }
        if (sim->fabric) {
            uint32_t id = sim->res_fabric + (uint32_t)node * 2;
            sim->res[id].kind = sim->res[id + 1].kind = SIM_RES_FABRIC;
            sim->raw_cap[id] = sim->raw_cap[id + 1] = nic_sum / net->oversubscription;
        }
    }
    for (r = 0; r < sim->nranks; r++) {
        const acc_topo_vertex_t *g =
            acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_GPU, r % sim->gpn));
        /* The datasheet's memory bandwidth of the part (topo's GPU table). */
        const acc_gpu_model_t *m = acc_topo_gpu_model_of(g);
        if (!m)
            return acc_error_set(ACC_ERR_TOPO,
                                 "simulator: %s (sm_%d) is older than every GPU whose memory "
                                 "bandwidth acc knows (topo/topo_hw.c)",
                                 g->name, g->sm);
        sim->res[sim->res_mem + r].kind = SIM_RES_MEM;
        sim->raw_cap[sim->res_mem + r] = m->mem_gbs * 1e3 * sim_mem_efficiency();
        sim->res[sim->res_ll + r].kind = SIM_RES_LL;
        sim->raw_cap[sim->res_ll + r] = sim_ll_gpu_cap_gbs(sim->min_sm, sim->nodes) * 1e3;
    }
    return ACC_OK;
}

acc_status_t sim_routes_build(acc_sim_t *sim)
{
    const acc_topo_t *t = sim->topo;
    const acc_topo_network_t *net = acc_topo_network(t);
    search_t s;
    int a, b, l, v, *fill = NULL;
    size_t nroutes = (size_t)sim->gpn * (size_t)sim->gpn + 2 * (size_t)sim->gpn;
    acc_status_t st = ACC_OK;

    memset(&s, 0, sizeof(s));
    s.t = t;
    s.nv = sim->nverts;
    s.nl = sim->nlinks;
    s.adj_start = acc_calloc((size_t)s.nv + 1, sizeof(int));
    s.adj = acc_calloc((size_t)s.nl + 1, sizeof(int));
    s.st = acc_calloc(2 * (size_t)s.nv, sizeof(state_t));
    fill = acc_calloc((size_t)s.nv + 1, sizeof(int));
    sim->route_gg = acc_calloc(nroutes, sizeof(sim_route_t));
    sim->route_links = acc_calloc(nroutes * SIM_ROUTE_MAXLINKS, sizeof(uint32_t));
    sim->gpu_nic = acc_calloc((size_t)sim->gpn, sizeof(int));
    if (!s.adj_start || !s.adj || !s.st || !fill || !sim->route_gg || !sim->route_links ||
        !sim->gpu_nic) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for the simulator's routes");
        goto out;
    }
    sim->route_gn = sim->route_gg + (size_t)sim->gpn * sim->gpn;
    sim->route_ng = sim->route_gn + sim->gpn;
    for (l = 0; l < s.nl; l++)
        s.adj_start[acc_topo_link(t, l)->from + 1]++;
    for (v = 0; v < s.nv; v++)
        s.adj_start[v + 1] += s.adj_start[v];
    for (l = 0; l < s.nl; l++) {
        int f = acc_topo_link(t, l)->from;
        s.adj[s.adj_start[f] + fill[f]++] = l;
    }
    for (a = 0; a < sim->gpn && st == ACC_OK; a++) {
        int va = acc_topo_find(t, ACC_VTX_GPU, a), nic = acc_topo_gpu_nic(t, a);
        search_from(&s, va);
        for (b = 0; b < sim->gpn && st == ACC_OK; b++)
            if (b != a)
                st = take_route(sim, &s, acc_topo_find(t, ACC_VTX_GPU, b),
                                &sim->route_gg[a * sim->gpn + b]);
        sim->gpu_nic[a] = nic >= 0 ? acc_topo_vertex(t, nic)->id : -1;
        if (nic >= 0 && st == ACC_OK)
            st = take_route(sim, &s, nic, &sim->route_gn[a]);
    }
    for (b = 0; b < sim->gpn && st == ACC_OK; b++) {
        int nic = acc_topo_gpu_nic(t, b);
        if (nic < 0)
            continue;
        search_from(&s, nic);
        st = take_route(sim, &s, acc_topo_find(t, ACC_VTX_GPU, b), &sim->route_ng[b]);
    }
    if (st != ACC_OK)
        goto out;
    sim->nnics = acc_topo_count(t, ACC_VTX_NIC);
    sim->fabric = sim->nodes > 1 && net->oversubscription > 1.0;
    sim->res_nic = (uint32_t)(sim->nodes * sim->nlinks);
    sim->res_fabric = sim->res_nic + (uint32_t)(sim->nodes * sim->nnics * 2);
    sim->res_mem = sim->res_fabric + (uint32_t)(sim->fabric ? sim->nodes * 2 : 0);
    sim->res_ll = sim->res_mem + (uint32_t)sim->nranks;
    sim->nres = sim->res_ll + (uint32_t)sim->nranks;
    sim->res = acc_calloc(sim->nres, sizeof(sim_res_t));
    sim->raw_cap = acc_calloc(sim->nres, sizeof(double));
    sim->res_on = acc_calloc(sim->nres, 1);
    sim->res_bound = acc_calloc(sim->nres, sizeof(double));
    if (!sim->res || !sim->raw_cap || !sim->res_on || !sim->res_bound) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for %u simulator resources", sim->nres);
        goto out;
    }
    st = build_caps(sim);
out:
    acc_free(s.adj_start);
    acc_free(s.adj);
    acc_free(s.st);
    acc_free(fill);
    return st;
}

void sim_routes_free(acc_sim_t *sim)
{
    acc_free(sim->route_gg);
    acc_free(sim->route_links);
    acc_free(sim->gpu_nic);
    acc_free(sim->res);
    acc_free(sim->raw_cap);
    acc_free(sim->res_on);
    acc_free(sim->res_bound);
    sim->res_on = NULL;
    sim->res_bound = NULL;
    sim->route_gg = sim->route_gn = sim->route_ng = NULL;
    sim->route_links = NULL;
    sim->gpu_nic = NULL;
    sim->res = NULL;
    sim->raw_cap = NULL;
}

static void add_route(const acc_sim_t *sim, const sim_route_t *r, int node, sim_path_t *out)
{
    uint32_t i, base = (uint32_t)(node * sim->nlinks);
    for (i = 0; i < r->n; i++)
        out->res[out->n++] = base + sim->route_links[r->off + i];
}

acc_status_t sim_path(const acc_sim_t *sim, int from, int to, sim_path_t *out)
{
    int na = from / sim->gpn, nb = to / sim->gpn, la = from % sim->gpn, lb = to % sim->gpn;
    const acc_topo_network_t *net;

    out->n = 0;
    out->lat_net = 0;
    if (from == to) {
        out->cls = SIM_CLASS_NVLINK;
        return ACC_OK;
    }
    if (na == nb) {
        const sim_route_t *r = &sim->route_gg[la * sim->gpn + lb];
        add_route(sim, r, na, out);
        out->cls = r->cls;
        return ACC_OK;
    }
    if (sim->gpu_nic[la] < 0 || sim->gpu_nic[lb] < 0)
        return acc_error_set(ACC_ERR_TOPO,
                             "simulator: rank %d or %d has no NIC to leave its node by", from, to);
    net = acc_topo_network(sim->topo);
    add_route(sim, &sim->route_gn[la], na, out);
    out->res[out->n++] = sim->res_nic + (uint32_t)(na * sim->nnics + sim->gpu_nic[la]) * 2;
    /* A rail-optimised fabric keeps same-rail traffic on its leaf switch; everything else
     * crosses the (possibly oversubscribed) core. */
    if (sim->fabric && !(net->rail_optimized && sim->gpu_nic[la] == sim->gpu_nic[lb])) {
        out->res[out->n++] = sim->res_fabric + (uint32_t)na * 2;
        out->res[out->n++] = sim->res_fabric + (uint32_t)nb * 2 + 1;
    }
    out->res[out->n++] = sim->res_nic + (uint32_t)(nb * sim->nnics + sim->gpu_nic[lb]) * 2 + 1;
    add_route(sim, &sim->route_ng[lb], nb, out);
    out->cls = SIM_CLASS_NET;
    out->lat_net = net->latency_us;
    return ACC_OK;
}

void sim_set_caps(acc_sim_t *sim, acc_proto_t proto)
{
    double eff = sim_proto_efficiency(proto);
    uint32_t i;
    for (i = 0; i < sim->nres; i++) {
        sim_res_t *r = &sim->res[i];
        r->cap = sim->raw_cap[i] * (r->kind == SIM_RES_MEM || r->kind == SIM_RES_LL ? 1.0 : eff);
        r->demand = 0;
        r->carried = 0;
        r->head = SIM_NONE;
        r->nflows = 0;
        r->dirty = 0;
        r->seen = 0;
    }
}
