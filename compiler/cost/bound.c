/*
 * acc_cost_bound: what no schedule that moves data between GPUs can beat on a topology - acc's
 * plans and NCCL's algorithms alike, NVLS included.
 *
 * Bandwidth.  Without reduction inside the network, every rank of an allreduce must send and
 * receive at least 2(n-1)/n of the message (the ring's volume is optimal; Patarasuk and Yuan,
 * nccl-tests doc/PERFORMANCE.md), of an allgather or a reduce_scatter (n-1)/n of NCCL's nBytes,
 * of a broadcast or reduce the message once.  Where the GPUs' NVSwitches reduce (NVLink SHARP:
 * third-generation NVSwitches with sm_90 GPUs, what NCCL's NVLS uses), an allreduce needs only
 * the message once each way: for every element a GPU either sends its contribution, and must
 * then receive the result, or receives the others' sum from the switch, and must then send the
 * result - one element out and one in either way, so nBytes each way, not 2(n-1)/n of it (1.75x
 * less at 8 GPUs).  Allgather, reduce_scatter, broadcast and reduce gain nothing from it: what
 * a GPU must receive (or, for reduce_scatter, send) does not shrink.  Reduction in the network
 * between nodes (SHARP on the NICs' switches) is not in any topology acc describes.  Two cuts
 * bind:
 *   - the GPU's own egress: its aggregate NVLink bandwidth (through NVSwitches or to peer GPUs),
 *     or its PCIe link when it has no NVLink; across nodes, plus its share of the node's NICs,
 *     which an NVLink GPU reaches over a separate PCIe path.  PCIe to peers beside NVLink is left
 *     out: no schedule of acc or NCCL routes peer traffic through the host when NVLink is there,
 *     and it would add at most 15% on the machines modelled.  bytes_per_rank / egress.
 *   - across nodes, the cut around one node: treat a node as one participant holding its
 *     GPUs' data (they may combine it over NVLink first), so the same argument gives
 *     2(N-1)/N x nBytes out of and into every node for allreduce, (N-1)/N x nBytes for
 *     allgather and reduce_scatter, nBytes into a non-root node for broadcast (into the root's
 *     for reduce), over the node's NICs together.  Per GPU this is 2(N-1)/N x nBytes / g over
 *     its 1/g share of the NICs: the hierarchical schemes' inter-node phase.
 * The bound is the larger of the two, not a sum of an intra-node and an inter-node phase: a
 * hierarchical schedule can pipeline its phases over different links (NCCL's tree does, and acc's
 * hier with chunks), so only the slower cut is compulsory.  On 8 x H100 with a 400 Gb/s NIC per
 * GPU the node cut binds from about 8 nodes on (2(N-1)/N x nBytes over 8 x 50 GB/s against
 * 2(n-1)/n x nBytes over 371 + 50 GB/s per GPU).  The rate of every link and NIC is the faster of
 * the two models the report sets against the bound: the simulator's achievable rate (link and
 * NIC efficiency, sim_constants.c) and NCCL's (its NVLink rate per link, 20.6 GB/s on sm_90
 * against the simulator's 20.0; PCIe width x speed / 80; a NIC's line rate), so that the bound
 * holds for every time the report compares it with, and "fraction of the bound" still measures
 * the schedule and not the wire protocol.  An oversubscribed fabric divides the NICs' rate
 * unless it is rail-optimised (a schedule may keep its traffic on its rails).
 *
 * Latency.  Information from every rank must reach every rank (allreduce, allgather,
 * reduce_scatter, alltoall), or from the root to all (broadcast) or all to the root (reduce):
 * with a rank passing what it holds to two peers per step (the second send overlaps the first,
 * as in a binary tree, whose 72-rank broadcast on a GB200 NVL72 takes 6 steps, not the
 * ceil(log2 72) = 7 of one peer per step), after h steps at most 2^(h+1) - 1 ranks hold it: at
 * least ceil(log2(n + 1)) - 1 sequential hops (ceil(log2 n) for every power of two), of which
 * at least ceil(log2(N + 1)) - 1 cross the network.  Each hop costs at least the smallest per-hop
 * latency of its kind (a store seen by a polling peer over NVLink, or PCIe when the GPUs have no
 * NVLink; the fabric's one-way latency), and every call pays one kernel launch.
 */
#include "nccl_internal.h"
#include "sim_internal.h"

#include <math.h>
#include <string.h>

static int ceil_log2(int n)
{
    int h = 0;
    while ((1 << h) < n)
        h++;
    return h;
}

static double faster(double a, double b)
{
    return a > b ? a : b;
}

/* Can the node's NVSwitches reduce (NVLink SHARP)?  Every GPU sm_90 or newer with NVLinks into
 * the switches. */
static int switch_reduces(const acc_topo_t *t)
{
    int g, gpn = acc_topo_gpus_per_node(t);
    for (g = 0; g < gpn; g++) {
        const acc_topo_vertex_t *v = acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_GPU, g));
        if (v->sm < 90 || acc_topo_nvlinks_to_switches(t, g) < 1)
            return 0;
    }
    return gpn > 1;
}

/* The slowest GPU's egress to other GPUs, GB/s achievable; *nvlink says whether it is NVLink. */
static double gpu_egress(const acc_topo_t *t, int *nvlink)
{
    int g, l, gpn = acc_topo_gpus_per_node(t), nl = acc_topo_link_count(t);
    double worst = 0;

    *nvlink = 1;
    for (g = 0; g < gpn; g++) {
        int v = acc_topo_find(t, ACC_VTX_GPU, g);
        double nv = 0, pcie = 0, e;
        for (l = 0; l < nl; l++) {
            const acc_topo_link_t *lk = acc_topo_link(t, l);
            if (lk->from != v)
                continue;
            if (lk->kind == ACC_LINK_NVLINK)
                nv += faster(lk->bw * sim_link_efficiency(lk->kind, NULL),
                             lk->count * nn_nvlink_bw(acc_topo_vertex(t, v)->sm));
            else if (lk->kind == ACC_LINK_PCIE)
                pcie += faster(lk->bw * sim_link_efficiency(lk->kind, NULL),
                               nn_pci_bw(lk->gen, lk->width));
        }
        if (nv <= 0)
            *nvlink = 0;
        e = nv > 0 ? nv : pcie;
        if (g == 0 || e < worst)
            worst = e;
    }
    return worst;
}

static double node_nic_bw(const acc_topo_t *t)
{
    const acc_topo_network_t *net = acc_topo_network(t);
    int v, nv = acc_topo_vertex_count(t);
    double sum = 0;
    for (v = 0; v < nv; v++) {
        const acc_topo_vertex_t *x = acc_topo_vertex(t, v);
        if (x->kind == ACC_VTX_NIC)
            sum += faster(x->speed_gbps / 8.0 * sim_nic_efficiency(), nn_net_bw(x->speed_gbps));
    }
    if (!net->rail_optimized && net->oversubscription > 1.0)
        sum /= net->oversubscription;
    return sum;
}

acc_status_t acc_cost_bound(const acc_topo_t *topo, acc_coll_t coll, uint64_t nbytes,
                            acc_bound_t *out)
{
    int n, nodes, gpn, nvlink, hops, net_hops;
    double per_rank, per_node = 0, egress, nic, bw_us = 0, hop_lat, s = (double)nbytes;

    if (!topo || !out)
        return acc_error_set(ACC_ERR_INVALID, "acc_cost_bound: topology and result needed");
    if ((unsigned)coll >= ACC_COLL_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "acc_cost_bound: unknown collective %d", (int)coll);
    memset(out, 0, sizeof(*out));
    n = acc_topo_ranks(topo);
    nodes = acc_topo_nodes(topo);
    gpn = acc_topo_gpus_per_node(topo);
    if (n < 1 || gpn < 1)
        return acc_error_set(ACC_ERR_INVALID, "acc_cost_bound: the topology has no GPUs");
    per_rank = s * sim_busbw_factor(coll, n);
    out->in_switch = coll == ACC_COLL_ALLREDUCE && switch_reduces(topo);
    if (out->in_switch && per_rank > s)
        per_rank = s;
    switch (coll) {
    case ACC_COLL_ALLREDUCE:
        per_node = 2.0 * (nodes - 1) / nodes * s;
        break;
    case ACC_COLL_ALLGATHER:
    case ACC_COLL_REDUCE_SCATTER:
        per_node = (double)(nodes - 1) / nodes * s;
        break;
    case ACC_COLL_ALLTOALL: /* each rank's buffer is nBytes; (n - g)/n of it leaves the node */
        per_node = (double)gpn * s * (double)(n - gpn) / n;
        break;
    default:
        per_node = nodes > 1 ? s : 0.0;
    }
    if (n == 1)
        per_rank = 0;
    egress = gpu_egress(topo, &nvlink);
    if (nodes > 1 && nvlink)
        egress += node_nic_bw(topo) / gpn;
    if (per_rank > 0) {
        if (!(egress > 0))
            return acc_error_set(ACC_ERR_TOPO, "acc_cost_bound: GPU0 has no link to its peers");
        bw_us = per_rank / (egress * 1e3);
    }
    if (nodes > 1 && per_node > 0) {
        nic = node_nic_bw(topo);
        if (!(nic > 0))
            return acc_error_set(ACC_ERR_TOPO, "acc_cost_bound: %d nodes but no NIC bandwidth",
                                 nodes);
        if (per_node / (nic * 1e3) > bw_us)
            bw_us = per_node / (nic * 1e3);
    }
    hops = ceil_log2(n + 1) - 1;
    net_hops = ceil_log2(nodes + 1) - 1;
    hop_lat = sim_peer_latency_us(nvlink ? SIM_CLASS_NVLINK : SIM_CLASS_PCI);
    out->lat_us = sim_call_overhead_us(ACC_PROTO_LL) + (hops - net_hops) * hop_lat +
                  net_hops * acc_topo_network(topo)->latency_us;
    out->bw_us = bw_us;
    out->us = bw_us > out->lat_us ? bw_us : out->lat_us;
    out->busbw = out->us > 0 ? s / out->us / 1e3 * sim_busbw_factor(coll, n) : 0.0;
    return ACC_OK;
}
