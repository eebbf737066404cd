/*
 * Routes of the simulator: which links, NICs and fabric a transfer between two ranks crosses,
 * and how the simulator numbers those resources.
 *
 * A transfer within a node takes the links of topo's best path (acc_topo_vertex_route), the path
 * whose class and bottleneck the rest of acc sees.  Only the routes transfers can take are kept:
 * GPU to GPU within a node, and GPU to each NIC it stripes across and back (acc_topo_gpu_nics; for
 * a GPU that sends through a peer's NICs, PXN, NVLink to the peer first).  Between nodes a
 * transfer on lane l leaves by NIC l mod n of the source GPU's n and enters by NIC l mod m of the
 * destination's m, crossing the fabric in between: NICs that GPUs share are one resource, used by
 * all of them.  Every node of a cluster has the same graph, so a node's routes serve all.
 *
 * Resources are numbered: the directed links of every node (node x links + link), then each
 * NIC's egress and ingress per node, then (oversubscribed fabrics only) each node's share of the
 * fabric core per direction, then each rank's memory, then each rank's LL engine.
 */
#include "sim_internal.h"

/* Append the links of topo's best path from vertex src to vertex dst to the route `out`. */
static acc_status_t append_route(acc_sim_t *sim, int src, int dst, sim_route_t *out)
{
    const acc_topo_t *t = sim->topo;
    const int *links;
    int n, i;
    acc_status_t st = acc_topo_vertex_route(t, src, dst, &links, &n);

    if (st != ACC_OK)
        return st;
    if (n == 0)
        return acc_error_set(ACC_ERR_TOPO, "simulator: no route from %s to %s in the node graph",
                             acc_topo_vertex(t, src)->name, acc_topo_vertex(t, dst)->name);
    if (out->n + (uint32_t)n > SIM_ROUTE_MAXLINKS)
        return acc_error_set(
            ACC_ERR_UNSUPPORTED, "simulator: the route from %s to %s has more than %d links",
            acc_topo_vertex(t, src)->name, acc_topo_vertex(t, dst)->name, SIM_ROUTE_MAXLINKS);
    out->n += (uint32_t)n;
    for (i = 0; i < n; i++) {
        acc_link_kind_t kind = acc_topo_link(t, links[i])->kind;
        if (kind != ACC_LINK_NVLINK && kind != ACC_LINK_C2C)
            out->cls = SIM_CLASS_PCI;
        sim->route_links[sim->nroute_links++] = (uint32_t)links[i];
    }
    return ACC_OK;
}

/* A new route from src to dst, through the vertex `via` first unless it is -1. */
static acc_status_t take_route(acc_sim_t *sim, int src, int via, int dst, sim_route_t *out)
{
    acc_status_t st = ACC_OK;

    out->off = sim->nroute_links;
    out->n = 0;
    out->cls = SIM_CLASS_NVLINK;
    if (via >= 0 && via != src && via != dst) {
        if ((st = append_route(sim, src, via, out)) != ACC_OK)
            return st;
        src = via;
    }
    return append_route(sim, src, dst, out);
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
    int a, b, k, nstripe = 0;
    size_t nroutes;
    acc_status_t st = ACC_OK;

    sim->nic_start = acc_mem_calloc((size_t)sim->gpn + 1, sizeof(int));
    if (!sim->nic_start)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the simulator's routes");
    for (a = 0; a < sim->gpn; a++) {
        sim->nic_start[a] = nstripe;
        nstripe += acc_topo_gpu_nics(t, a, NULL, NULL);
    }
    sim->nic_start[sim->gpn] = nstripe;
    nroutes = (size_t)sim->gpn * (size_t)sim->gpn + 2 * (size_t)nstripe;
    sim->route_gg = acc_mem_calloc(nroutes, sizeof(sim_route_t));
    sim->route_links = acc_mem_calloc(nroutes * SIM_ROUTE_MAXLINKS, sizeof(uint32_t));
    sim->nic_ids = acc_mem_calloc((size_t)nstripe + 1, sizeof(int));
    sim->nic_planes = acc_mem_calloc((size_t)nstripe + 1, sizeof(int));
    if (!sim->route_gg || !sim->route_links || !sim->nic_ids || !sim->nic_planes)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the simulator's routes");
    sim->route_gn = sim->route_gg + (size_t)sim->gpn * sim->gpn;
    sim->route_ng = sim->route_gn + nstripe;
    for (a = 0; a < sim->gpn && st == ACC_OK; a++) {
        const int *nics;
        int va = acc_topo_find(t, ACC_VTX_GPU, a), via;
        int n = acc_topo_gpu_nics(t, a, &nics, &via), vvia;
        for (b = 0; b < sim->gpn && st == ACC_OK; b++)
            if (b != a)
                st = take_route(sim, va, -1, acc_topo_find(t, ACC_VTX_GPU, b),
                                &sim->route_gg[a * sim->gpn + b]);
        vvia = via >= 0 ? acc_topo_find(t, ACC_VTX_GPU, via) : -1;
        for (k = 0; k < n && st == ACC_OK; k++) {
            int e = sim->nic_start[a] + k;
            sim->nic_ids[e] = acc_topo_vertex(t, nics[k])->id;
            sim->nic_planes[e] = acc_topo_vertex(t, nics[k])->plane;
            st = take_route(sim, va, vvia, nics[k], &sim->route_gn[e]);
            if (st == ACC_OK)
                st = take_route(sim, nics[k], vvia, va, &sim->route_ng[e]);
        }
    }
    if (st != ACC_OK)
        return st;
    sim->nnics = acc_topo_count(t, ACC_VTX_NIC);
    sim->fabric = sim->nodes > 1 && net->oversubscription > 1.0;
    sim->res_nic = (uint32_t)(sim->nodes * sim->nlinks);
    sim->res_fabric = sim->res_nic + (uint32_t)(sim->nodes * sim->nnics * 2);
    sim->res_mem = sim->res_fabric + (uint32_t)(sim->fabric ? sim->nodes * 2 : 0);
    sim->res_ll = sim->res_mem + (uint32_t)sim->nranks;
    sim->nres = sim->res_ll + (uint32_t)sim->nranks;
    sim->res = acc_mem_calloc(sim->nres, sizeof(sim_res_t));
    sim->raw_cap = acc_mem_calloc(sim->nres, sizeof(double));
    sim->res_on = acc_mem_calloc(sim->nres, 1);
    sim->res_bound = acc_mem_calloc(sim->nres, sizeof(double));
    if (!sim->res || !sim->raw_cap || !sim->res_on || !sim->res_bound)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for %u simulator resources", sim->nres);
    return build_caps(sim);
}

void sim_routes_free(acc_sim_t *sim)
{
    acc_mem_free(sim->route_gg);
    acc_mem_free(sim->route_links);
    acc_mem_free(sim->nic_start);
    acc_mem_free(sim->nic_ids);
    acc_mem_free(sim->nic_planes);
    acc_mem_free(sim->res);
    acc_mem_free(sim->raw_cap);
    acc_mem_free(sim->res_on);
    acc_mem_free(sim->res_bound);
    sim->res_on = NULL;
    sim->res_bound = NULL;
    sim->route_gg = sim->route_gn = sim->route_ng = NULL;
    sim->route_links = NULL;
    sim->nic_start = sim->nic_ids = sim->nic_planes = NULL;
    sim->res = NULL;
    sim->raw_cap = NULL;
}

static void add_route(const acc_sim_t *sim, const sim_route_t *r, int node, sim_path_t *out)
{
    uint32_t i, base = (uint32_t)(node * sim->nlinks);
    for (i = 0; i < r->n; i++)
        out->res[out->n++] = base + sim->route_links[r->off + i];
}

/* Whether stripe entry e of one GPU shares a network plane with an entry of [b0, b1). */
static int meets(const acc_sim_t *sim, int e, int b0, int b1)
{
    int j;
    for (j = b0; j < b1; j++)
        if (sim->nic_planes[j] == sim->nic_planes[e])
            return 1;
    return 0;
}

/* The stripe entries a message of `lane` leaves local GPU la by and reaches local GPU lb by:
 * lane l takes the sender's NIC l mod n among those that share a plane with one of the
 * receiver's, and the receiver's NIC l mod m among the m on that plane, since NICs of different
 * planes meet only where the fabric joins them (and then they have one plane).  With every NIC
 * on one plane that is NIC l mod n to NIC l mod m.  0, or -1 when no plane is shared. */
static int pick_nics(const acc_sim_t *sim, int la, int lb, int lane, int *ea, int *eb)
{
    int a0 = sim->nic_start[la], a1 = sim->nic_start[la + 1];
    int b0 = sim->nic_start[lb], b1 = sim->nic_start[lb + 1], i, n = 0, k = 0;
    *ea = a0, *eb = b0;
    for (i = a0; i < a1; i++)
        n += meets(sim, i, b0, b1);
    if (n == 0)
        return -1;
    for (i = a0; i < a1; i++)
        if (meets(sim, i, b0, b1) && k++ == lane % n)
            *ea = i;
    for (i = b0, n = 0; i < b1; i++)
        n += sim->nic_planes[i] == sim->nic_planes[*ea];
    for (i = b0, k = 0; i < b1; i++)
        if (sim->nic_planes[i] == sim->nic_planes[*ea] && k++ == lane % n)
            *eb = i;
    return 0;
}

/* The node whose resources stand for node n's: itself, or on a quotient its translate among
 * the simulated ranks' nodes (sim_rep). */
static int node_rep(const acc_sim_t *sim, int n)
{
    return sim->period ? n % (sim->period / sim->gpn) : n;
}

acc_status_t sim_path(const acc_sim_t *sim, int from, int to, int lane, sim_path_t *out)
{
    int na = from / sim->gpn, nb = to / sim->gpn, la = from % sim->gpn, lb = to % sim->gpn;
    int ka, kb, ea, eb, ra = node_rep(sim, na), rb = node_rep(sim, nb);
    const acc_topo_network_t *net;

    out->n = 0;
    out->lat_net = 0;
    if (from == to) {
        out->cls = SIM_CLASS_NVLINK;
        return ACC_OK;
    }
    if (na == nb) {
        const sim_route_t *r = &sim->route_gg[la * sim->gpn + lb];
        add_route(sim, r, ra, out);
        out->cls = r->cls;
        return ACC_OK;
    }
    ka = sim->nic_start[la + 1] - sim->nic_start[la];
    kb = sim->nic_start[lb + 1] - sim->nic_start[lb];
    if (ka == 0 || kb == 0)
        return acc_error_set(ACC_ERR_TOPO,
                             "simulator: rank %d or %d has no NIC to leave its node by", from, to);
    if (lane < 0)
        lane = 0;
    if (pick_nics(sim, la, lb, lane, &ea, &eb) != 0)
        return acc_error_set(ACC_ERR_TOPO,
                             "simulator: the NICs of rank %d and of rank %d are on different "
                             "network planes, which meet only where the fabric joins them; give "
                             "NICs of a joined fabric one plane (schedules/TOPOLOGY.md, 'Network "
                             "planes')",
                             from, to);
    net = acc_topo_network(sim->topo);
    add_route(sim, &sim->route_gn[ea], ra, out);
    out->res[out->n++] = sim->res_nic + (uint32_t)(ra * sim->nnics + sim->nic_ids[ea]) * 2;
    /* A rail-optimised fabric keeps same-rail traffic on its leaf switch; everything else
     * crosses the (possibly oversubscribed) core. */
    if (sim->fabric && !(net->rail_optimized && sim->nic_ids[ea] == sim->nic_ids[eb])) {
        out->res[out->n++] = sim->res_fabric + (uint32_t)ra * 2;
        out->res[out->n++] = sim->res_fabric + (uint32_t)rb * 2 + 1;
    }
    out->res[out->n++] = sim->res_nic + (uint32_t)(rb * sim->nnics + sim->nic_ids[eb]) * 2 + 1;
    add_route(sim, &sim->route_ng[eb], rb, out);
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
