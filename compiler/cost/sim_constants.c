/*
 * Every constant of acc's plan simulator and of the lower bound, each with its source.  One set
 * serves every topology and every calibration entry of tests/data/published.yaml: nothing
 * here was fitted to one entry (tests/compiler/test_calibration.c says which entries it meets
 * and by how much).
 *
 * Sources are cited as in the reference sheets: "sheet §2" is reference/02-nccl.md §2, the
 * NCCL 2.28 tuning model (src/graph/tuning.cc), whose rows for other GPU generations follow
 * compiler/nccl_tune.c; "kernels §1.6" is reference/05-kernels-nvrtc.md.
 */
#include "sim_internal.h"

#include <string.h>

typedef struct {
    const char *name;
    double value;
    const char *unit;
    const char *source;
} row_t;

enum {
    K_LAUNCH,
    K_NVLINK_EFF,
    K_C2C_EFF,
    K_PCIE_EFF,
    K_SMP_EFF_INTEL,
    K_SMP_EFF_AMD,
    K_NIC_EFF,
    K_MEM_EFF,
    K_EFF_SIMPLE,
    K_EFF_LL,
    K_EFF_LL128,
    K_SLICE_SIMPLE,
    K_SLICE_LL,
    K_SLICE_LL128,
    K_PEER_LAT_NVLINK,
    K_PEER_LAT_PCI,
    K_PEER_READ_TRIPS,
    K_MEM_W_SEND,
    K_MEM_W_RECV,
    K_MEM_W_OPERAND,
    K_COUNT
};

static const row_t rows[K_COUNT] = {
    [K_LAUNCH] = {"launch", 1.9, "us",
                  "kernel launch to first instruction and teardown of a generated kernel, back to "
                  "back in a stream: SGLang PR #2904 timed a whole one-shot allreduce of 512 B on "
                  "2 H100 at 3.7 us (kernels §1.6); this model's barrier (0.6) and peer read "
                  "(2 x 0.6) account for 1.8 us of it"},
    [K_NVLINK_EFF] = {"nvlink_efficiency", 0.80, "",
                      "NCCL maintainer (sjeaugey, nccl-tests #212): 450 GB/s line rate minus "
                      "~20% protocol overhead; achievable P2P 380 of 450 GB/s (nccl #1264)"},
    [K_C2C_EFF] = {"c2c_efficiency", 0.80, "",
                   "NVLink-C2C is NVLink signalling; no separate figure published, taken as "
                   "NVLink"},
    [K_PCIE_EFF] = {"pcie_efficiency", 0.76, "",
                    "NCCL's PCIe rate width x speed / 80 (48 GB/s for Gen5 x16, sheet §1) against "
                    "the 128b/130b line rate (63.0 GB/s): 0.762 for every generation"},
    [K_SMP_EFF_INTEL] = {"smp_efficiency_intel", 0.35, "",
                         "NCCL's QPI/UPI figure for Sapphire Rapids (22 GB/s, sheet §1) against "
                         "three UPI links (62.4 GB/s, topo_build.c)"},
    [K_SMP_EFF_AMD] = {"smp_efficiency_amd", 0.11, "",
                       "NCCL's AMD_BW (16 GB/s, sheet §1) against Infinity Fabric's 144 GB/s "
                       "(topo_build.c)"},
    [K_NIC_EFF] = {"nic_efficiency", 0.94, "",
                   "46-48 GB/s achievable per 400 Gb/s NIC (AddyLaddy, nccl-tests #290): 47 of "
                   "50 GB/s"},
    [K_MEM_EFF] = {"memory_efficiency", 0.90, "",
                   "a 16-byte streaming copy reaches 85-92% of HBM's datasheet rate (sheet "
                   "§5.1)"},
    [K_EFF_SIMPLE] = {"efficiency_simple", 1.0, "",
                      "Simple moves payload only; its per-step flag (8 B per 512 KiB step) costs "
                      "latency, not bandwidth"},
    [K_EFF_LL] = {"efficiency_ll", 0.5, "",
                  "LL: half of every 8-byte line is flag (4 B data + 4 B flag; MSCCL++ LL packets, "
                  "kernels §2.2)"},
    [K_EFF_LL128] = {"efficiency_ll128", 120.0 / 128.0, "",
                     "LL128: 120 data bytes per 128-byte line (sheet §2 buffer sizes)"},
    [K_SLICE_SIMPLE] = {"step_simple", 524288, "B",
                        "NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8: the unit a receiver sees arrive "
                        "(sheet §2)"},
    [K_SLICE_LL] = {"step_ll", 65536, "B", "LL buffer 512 KiB / NCCL_STEPS 8 (sheet §2)"},
    [K_SLICE_LL128] = {"step_ll128", 614400, "B",
                       "LL128 buffer 120 x 640 x 8 x 8 B / NCCL_STEPS 8 (sheet §2)"},
    [K_PEER_LAT_NVLINK] = {"peer_latency_nvlink", 0.6, "us",
                           "a store seen by a polling peer over NVLink: NCCL's hwLat NVLINK for "
                           "LL, whose step is exactly that (sheet §2)"},
    [K_PEER_LAT_PCI] = {"peer_latency_pci", 1.0, "us", "NCCL's hwLat PCI for LL (sheet §2)"},
    [K_PEER_READ_TRIPS] = {"peer_read_trips", 2.0, "",
                           "a remote load is a request and a response, each a one-way trip"},
    [K_MEM_W_SEND] = {"memory_bytes_send", 1.0, "B/B", "a sender reads its source once"},
    [K_MEM_W_RECV] = {"memory_bytes_recv", 3.0, "B/B",
                      "a message lands in the receiver's buffer (write), is read back and "
                      "written to its destination or forwarded (NCCL's primitives)"},
    [K_MEM_W_OPERAND] = {"memory_bytes_operand", 1.0, "B/B",
                         "a reducing receive also reads its local operand"},
};

/* Latency tables indexed by protocol in acc's order (Simple, LL, LL128). */
#define P3(simple, ll, ll128)                                                                      \
    {                                                                                              \
        simple, ll, ll128                                                                          \
    }

/* NCCL's Ring base latencies (sheet §2): LL 6.6, LL128 14.0, Simple 8.4 us.  The part above LL
 * is what a protocol's buffers, flags and thread setup cost per call; acc's kernels set up the
 * same, on top of their launch. */
static const double setup_us[ACC_PROTO_COUNT] = P3(8.4 - 6.6, 0.0, 14.0 - 6.6);

/* NCCL's Ring hwLat per step (sheet §2) by class: NVLINK .6/1.9/3.4, PCI 1.0/2.5/5.7, NET
 * 2.7/4.0/14.0 (LL/LL128/Simple).  NET's LL figure is the fabric's own latency (the default
 * network latency of topo/internal.h, TOPO_LAT_NET_US); the rest is protocol overhead, added to
 * the latency the topology states. */
static const double step_us[SIM_CLASS_COUNT][ACC_PROTO_COUNT] = {
    P3(3.4, 0.6, 1.9), P3(5.7, 1.0, 2.5), P3(14.0 - 2.7, 0.0, 4.0 - 2.7)};

/* Per-lane payload caps in GB/s by GPU generation (Volta, Ampere, Hopper, Blackwell): NCCL's
 * per-channel caps for one node (sheet §2; the generations other than Hopper as
 * compiler/nccl_tune.c has them), the figures NCCL documents for one CTA.  The multi-node
 * columns are not used: they fold in the network, which the NIC resources model here. */
static const double lane_simple[4] = {26.5, 24.0, 38.7, 70.0}; /* perChMaxTreeBws */
static const double lane_ll128[4] = {20.0, 20.0, 36.7, 40.0};  /* perChMaxRingLL128Bws */
/* NCCL has no per-channel LL cap; an LL lane issues the same stream of line stores as an LL128
 * lane but carries 8 data bytes per 16 instead of 120 per 128: LL128's cap x (0.5 / 0.9375). */
/* NCCL's llMaxBws (sheet §2): the most LL traffic one GPU moves, [generation][1/2/>=4 nodes]. */
static const double ll_gpu[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};

static int gen_row(int sm)
{
    if (sm >= 100)
        return 3;
    if (sm >= 90)
        return 2;
    if (sm >= 80)
        return 1;
    return 0;
}

double sim_call_overhead_us(acc_proto_t proto)
{
    return rows[K_LAUNCH].value + setup_us[proto];
}

double sim_step_latency_us(acc_proto_t proto, sim_class_t cls)
{
    return step_us[cls][proto];
}

double sim_peer_latency_us(sim_class_t cls)
{
    if (cls == SIM_CLASS_NVLINK)
        return rows[K_PEER_LAT_NVLINK].value;
    if (cls == SIM_CLASS_PCI)
        return rows[K_PEER_LAT_PCI].value;
    return 0.0;
}

double sim_peer_read_trips(void)
{
    return rows[K_PEER_READ_TRIPS].value;
}

double sim_proto_efficiency(acc_proto_t proto)
{
    if (proto == ACC_PROTO_LL)
        return rows[K_EFF_LL].value;
    if (proto == ACC_PROTO_LL128)
        return rows[K_EFF_LL128].value;
    return rows[K_EFF_SIMPLE].value;
}

double sim_link_efficiency(acc_link_kind_t kind, const char *cpu_vendor)
{
    switch (kind) {
    case ACC_LINK_NVLINK:
        return rows[K_NVLINK_EFF].value;
    case ACC_LINK_C2C:
        return rows[K_C2C_EFF].value;
    case ACC_LINK_PCIE:
        return rows[K_PCIE_EFF].value;
    default:
        return cpu_vendor && strcmp(cpu_vendor, "AuthenticAMD") == 0 ? rows[K_SMP_EFF_AMD].value
                                                                     : rows[K_SMP_EFF_INTEL].value;
    }
}

double sim_nic_efficiency(void)
{
    return rows[K_NIC_EFF].value;
}

double sim_mem_efficiency(void)
{
    return rows[K_MEM_EFF].value;
}

double sim_lane_cap_gbs(acc_proto_t proto, int sm)
{
    int g = gen_row(sm);
    if (proto == ACC_PROTO_LL128)
        return lane_ll128[g];
    if (proto == ACC_PROTO_LL)
        return lane_ll128[g] * rows[K_EFF_LL].value / rows[K_EFF_LL128].value;
    return lane_simple[g];
}

double sim_ll_gpu_cap_gbs(int sm, int nodes)
{
    return ll_gpu[gen_row(sm)][nodes <= 1 ? 0 : nodes == 2 ? 1 : 2];
}

double sim_slice_bytes(acc_proto_t proto)
{
    if (proto == ACC_PROTO_LL)
        return rows[K_SLICE_LL].value;
    if (proto == ACC_PROTO_LL128)
        return rows[K_SLICE_LL128].value;
    return rows[K_SLICE_SIMPLE].value;
}

double sim_mem_weight_send(void)
{
    return rows[K_MEM_W_SEND].value;
}

double sim_mem_weight_recv(int reduces)
{
    return rows[K_MEM_W_RECV].value + (reduces ? rows[K_MEM_W_OPERAND].value : 0.0);
}

acc_status_t acc_sim_constants_dump(acc_buf_t *out)
{
    static const char *const gens[4] = {"volta", "ampere", "hopper", "blackwell"};
    static const char *const classes[SIM_CLASS_COUNT] = {"nvlink", "pci", "net"};
    const acc_gpu_model_t *models;
    size_t i, nmodels;
    int g, c, p;

    acc_buf_puts(out, "# acc plan simulator constants (compiler/sim_constants.c)\n");
    for (i = 0; i < K_COUNT; i++)
        acc_buf_printf(out, "%-22s %10.4g %-3s  %s\n", rows[i].name, rows[i].value, rows[i].unit,
                       rows[i].source);
    for (p = 0; p < ACC_PROTO_COUNT; p++)
        acc_buf_printf(out,
                       "setup_%-16s %10.4g us   NCCL Ring base latency above LL's (sheet §2)\n",
                       acc_proto_name((acc_proto_t)p), setup_us[p]);
    for (c = 0; c < SIM_CLASS_COUNT; c++)
        for (p = 0; p < ACC_PROTO_COUNT; p++)
            acc_buf_printf(out, "step_%s_%-12s %10.4g us   NCCL Ring hwLat%s (sheet §2)\n",
                           classes[c], acc_proto_name((acc_proto_t)p), step_us[c][p],
                           c == SIM_CLASS_NET ? " above the fabric's own latency" : "");
    for (g = 0; g < 4; g++) {
        acc_buf_printf(out, "lane_simple_%-10s %10.4g GB/s perChMaxTreeBws, one node (sheet §2)\n",
                       gens[g], lane_simple[g]);
        acc_buf_printf(out,
                       "lane_ll128_%-11s %10.4g GB/s perChMaxRingLL128Bws, one node (sheet §2)\n",
                       gens[g], lane_ll128[g]);
        acc_buf_printf(out,
                       "ll_gpu_%-15s %10.4g GB/s llMaxBws 1/2/>=4 nodes: %g %g %g (sheet §2)\n",
                       gens[g], ll_gpu[g][0], ll_gpu[g][0], ll_gpu[g][1], ll_gpu[g][2]);
    }
    models = acc_topo_gpu_models(&nmodels);
    for (i = 0; i < nmodels; i++)
        acc_buf_printf(out, "memory_%-15s %10.4g GB/s datasheet (topo/topo_hw.c)\n",
                       models[i].model, models[i].mem_gbs);
    return acc_buf_status(out);
}
