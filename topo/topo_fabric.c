/*
 * The fabrics acc knows by name, and where the latency of each comes from.
 *
 * A network step between nodes costs, in NCCL's model, its hardware latency of one NET hop for
 * the protocol (2.7 us for LL, TOPO_LAT_NET_US; reference/02-nccl.md §2, hwLat NET) plus the
 * latency the network plugin reports for its devices (ncclNetProperties.latency, which becomes
 * graph.latencyInter and is added per network step, twice for Simple).  acc takes the same two
 * figures: a fabric's one-way latency is the NET hop plus its plugin's latency, and the NCCL
 * model is given the plugin's latency as NCCL is.  The plugin figures are the ones the plugins
 * publish in their source:
 *
 *   - NCCL's own InfiniBand/RoCE transport (src/transport/net_ib.cc, ncclIbGetProperties)
 *     reports a latency of 0: every verbs fabric, InfiniBand HDR, NDR and XDR, RoCE and
 *     Spectrum-X alike, is its NET hop.  The switches differ by less than the model resolves:
 *     a Quantum-2 (NDR) switch forwards in under 150 ns port to port
 *     (router-switch.com/faq/nvidia-quantum-2-qm9700-vs-spectrum-4-sn5400.html), a twentieth
 *     of the hop.
 *   - AWS's EFA plugin (github.com/aws/aws-ofi-nccl, src/platform-aws.cpp, platform_data_map)
 *     reports 75 us for p4d, p4de and p5/p5e (EFA and EFAv2) and 35 us for its "p-series"
 *     entry, p5en and P6 onwards (EFAv3 and later): SRD is a datagram protocol through the
 *     Nitro card, and NCCL over it pays a round of the plugin's proxy per step.
 *
 * Names not in the table are accepted (a network name is free text, "vpc"), with NCCL's NET hop
 * and no plugin latency.
 */
#include "internal.h"

#include <string.h>

static const acc_topo_fabric_t fabrics[] = {
    {"ib-hdr", "InfiniBand HDR, 200 Gb/s (ConnectX-6, Quantum)", 0.0,
     "NCCL net_ib.cc reports latency 0; NCCL hwLat NET 2.7 us (LL)"},
    {"ib-ndr", "InfiniBand NDR, 400 Gb/s (ConnectX-7, Quantum-2)", 0.0,
     "NCCL net_ib.cc reports latency 0; NCCL hwLat NET 2.7 us (LL); Quantum-2 switch < 150 ns"},
    {"ib-xdr", "InfiniBand XDR, 800 Gb/s (ConnectX-8, Quantum-X800)", 0.0,
     "NCCL net_ib.cc reports latency 0; NCCL hwLat NET 2.7 us (LL)"},
    {"roce", "RoCEv2 Ethernet through NCCL's verbs transport", 0.0,
     "NCCL net_ib.cc reports latency 0; NCCL hwLat NET 2.7 us (LL)"},
    {"spectrum-x", "NVIDIA Spectrum-X Ethernet (Spectrum-4 switches, RoCE SuperNICs)", 0.0,
     "NCCL net_ib.cc reports latency 0; NCCL hwLat NET 2.7 us (LL)"},
    {"efa", "AWS EFA and EFAv2 (p4d, p4de, p5, p5e)", 75.0,
     "aws-ofi-nccl src/platform-aws.cpp: latency 75.0 for p4d, p4de and p5/p5e"},
    {"efa-v3", "AWS EFAv3 and later (p5en, P6)", 35.0,
     "aws-ofi-nccl src/platform-aws.cpp: latency 35.0 for its p-series entry (p5en, P6 on)"},
};

const acc_topo_fabric_t *acc_topo_fabrics(size_t *count)
{
    *count = sizeof(fabrics) / sizeof(fabrics[0]);
    return fabrics;
}

const acc_topo_fabric_t *acc_topo_fabric(const char *name)
{
    size_t i;
    for (i = 0; name && i < sizeof(fabrics) / sizeof(fabrics[0]); i++)
        if (strcmp(fabrics[i].name, name) == 0)
            return &fabrics[i];
    return NULL;
}

double acc_topo_fabric_latency_us(const char *name)
{
    const acc_topo_fabric_t *f = acc_topo_fabric(name);
    return TOPO_LAT_NET_US + (f ? f->plugin_latency_us : 0.0);
}

acc_status_t topo_assume_fabric_latency(acc_topo_t *t, const acc_topo_network_t *net)
{
    const acc_topo_fabric_t *f = acc_topo_fabric(net->name);
    if (f)
        return acc_topo_assume(t,
                               "network latency %g us: NCCL's NET hop %g us and the %g us its "
                               "plugin reports for %s (%s; not in the input)",
                               net->latency_us, TOPO_LAT_NET_US, f->plugin_latency_us, f->name,
                               f->source);
    return acc_topo_assume(
        t, "network latency %g us (NCCL's default NET latency; not in the input)", net->latency_us);
}
