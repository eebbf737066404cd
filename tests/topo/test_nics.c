/* Every NIC of a node: the NICs each GPU stripes across (acc_topo_gpu_nics), NICs shared by GPUs,
 * PXN, and what a path between nodes carries, in every format that describes NICs. */
#include "acc_test.h"
#include "acc_topo.h"
#include "internal.h"

#include <string.h>

#define P5   ACC_TEST_DATA_DIR "/topologies/nccl-xml/aws-ofi-nccl-p5.48xl-topo.xml"
#define P4D  ACC_TEST_DATA_DIR "/topologies/nccl-xml/aws-p4d-24xl-topo.xml"
#define L40S ACC_TEST_DATA_DIR "/topologies/nvidia-smi/pcie-4xL40S-2numa-2nic.txt"

/* src on `nodes` nodes (src's own network otherwise). */
static acc_topo_t *load_nodes(const char *src, int nodes)
{
    acc_topo_t *t, *c;
    char params[32];
    CHECK_OK(acc_topo_load(src, &t));
    if (nodes <= 1)
        return t;
    snprintf(params, sizeof(params), "nodes=%d", nodes);
    CHECK_OK(acc_topo_with_network(t, params, &c));
    acc_topo_destroy(t);
    return c;
}

/* Every GPU has `per_gpu` NICs, none through PXN, each at the GPU's best class, its rail first;
 * every NIC is used by exactly `sharers` GPUs. */
static void check_stripes(const acc_topo_t *t, int per_gpu, int sharers)
{
    int g, k, v, ngpu = acc_topo_gpus_per_node(t);
    for (g = 0; g < ngpu; g++) {
        const int *nics;
        int via, n = acc_topo_gpu_nics(t, g, &nics, &via);
        CHECK_INT(n, per_gpu);
        CHECK_INT(via, -1);
        CHECK_INT(nics[0], acc_topo_gpu_nic(t, g));
        for (k = 0; k < n; k++)
            CHECK(acc_topo_vertex(t, nics[k])->kind == ACC_VTX_NIC);
    }
    for (v = 0; v < acc_topo_vertex_count(t); v++) {
        int users = 0;
        if (acc_topo_vertex(t, v)->kind != ACC_VTX_NIC)
            continue;
        for (g = 0; g < ngpu; g++) {
            const int *nics;
            int n = acc_topo_gpu_nics(t, g, &nics, NULL);
            for (k = 0; k < n; k++)
                users += nics[k] == v;
        }
        CHECK_MSG(users == sharers, "%s is used by %d GPUs, not %d", acc_topo_vertex(t, v)->name,
                  users, sharers);
    }
}

/* The bandwidth between GPU 0 of node 0 and every GPU of node 1. */
static double net_bw(const acc_topo_t *t)
{
    acc_topo_path_t p;
    CHECK_OK(acc_topo_path(t, 0, acc_topo_gpus_per_node(t), &p));
    CHECK_INT(p.cls, ACC_PATH_NET);
    return p.bw;
}

/* aws-ofi-nccl's p5.48xlarge file: four 100 Gb/s EFA under each GPU's PCIe switch, Gen4 x8 each.
 * A GPU alone sends at 4 x 12.5 GB/s, not the 12.5 of one NIC. */
ACC_TEST(nccl_xml_p5_gpu_stripes_across_its_four_efa)
{
    acc_topo_t *t = load_nodes(P5, 2);
    check_stripes(t, 4, 1);
    CHECK_NEAR(net_bw(t), 50.0, 1e-9);
    acc_topo_destroy(t);
}

/* The shipped YAML platform of the same machine, and the synthetic description of it. */
ACC_TEST(yaml_and_synthetic_p5_stripe_the_same)
{
    acc_topo_t *t = load_nodes("aws-p5", 2);
    check_stripes(t, 4, 1);
    CHECK_NEAR(net_bw(t), 50.0, 1e-9);
    acc_topo_destroy(t);
    t = load_nodes("nodes=2 gpus=8 nvlink=18 nic=32x100", 1);
    check_stripes(t, 4, 1);
    CHECK_NEAR(net_bw(t), 50.0, 1e-9);
    acc_topo_destroy(t);
}

/* Two NICs per GPU (OCI's 16 x 200G, p5en's 16 x 200G) carry what one 400G NIC does. */
ACC_TEST(two_nics_per_gpu_carry_what_one_of_twice_the_rate_does)
{
    acc_topo_t *two = load_nodes("nodes=2 gpus=8 nvlink=18 nic=16x200", 1);
    acc_topo_t *one = load_nodes("nodes=2 gpus=8 nvlink=18 nic=8x400", 1);
    check_stripes(two, 2, 1);
    check_stripes(one, 1, 1);
    CHECK_NEAR(net_bw(two), net_bw(one), 1e-9);
    CHECK_NEAR(net_bw(one), 50.0, 1e-9);
    acc_topo_destroy(two);
    acc_topo_destroy(one);
}

/* p4d: four NICs for eight GPUs, each NIC on the PCIe switch of two GPUs, which share it. */
ACC_TEST(nccl_xml_p4d_nic_shared_by_two_gpus)
{
    acc_topo_t *t = load_nodes(P4D, 2);
    check_stripes(t, 1, 2);
    CHECK_INT(acc_topo_gpu_nic(t, 0), acc_topo_gpu_nic(t, 1));
    CHECK(acc_topo_gpu_nic(t, 0) != acc_topo_gpu_nic(t, 2));
    /* One GPU alone has the whole NIC; sharing is the simulator's (one resource per NIC). */
    CHECK_NEAR(net_bw(t), 100.0 / 8.0, 1e-9);
    acc_topo_destroy(t);
}

/* A PCIe machine whose two NICs both sit beyond the host bridges: every GPU reaches both at the
 * same class and stripes across both, the rails spread between them. */
ACC_TEST(nvidia_smi_gpus_stripe_across_equally_near_nics)
{
    acc_topo_t *t = load_nodes(L40S, 1);
    check_stripes(t, 2, 4);
    CHECK(acc_topo_gpu_nic(t, 0) != acc_topo_gpu_nic(t, 1));
    acc_topo_destroy(t);
}

/* Four GPUs on an NVSwitch, two sockets; both NICs under GPU0's PCIe switch.  GPU0 reaches them
 * at PIX; the others only through a host bridge or across the sockets, so they send over NVLink
 * to GPU0 and out through its NICs (PXN). */
static acc_topo_t *pxn_node(int nvlink)
{
    acc_topo_t *t;
    int cpu[2], sw[4], gpu[4], nic[2], i, nvs;
    acc_topo_network_t net = {2, "ib", 2.7, 1, 1.0};

    CHECK_OK(acc_topo_create(&t));
    for (i = 0; i < 2; i++) {
        CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_CPU, &cpu[i]));
        snprintf(acc_topo_vertex_mut(t, cpu[i])->cpu_vendor, 32, "GenuineIntel");
    }
    CHECK_OK(topo_connect_cpus(t));
    for (i = 0; i < 4; i++) {
        CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_PCISW, &sw[i]));
        CHECK_OK(topo_add_pcie(t, sw[i], cpu[i / 2], 5, 16));
        CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_GPU, &gpu[i]));
        acc_topo_vertex_mut(t, gpu[i])->device_id = 0x2330;
        acc_topo_vertex_mut(t, gpu[i])->numa = i / 2;
        CHECK_OK(topo_fill_gpu_defaults(t, gpu[i]));
        CHECK_OK(topo_add_pcie(t, gpu[i], sw[i], 5, 16));
    }
    for (i = 0; i < 2; i++) {
        CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_NIC, &nic[i]));
        acc_topo_vertex_mut(t, nic[i])->speed_gbps = 400;
        acc_topo_vertex_mut(t, nic[i])->numa = 0;
        CHECK_OK(topo_add_pcie(t, nic[i], sw[0], 5, 16));
    }
    if (nvlink) {
        CHECK_OK(topo_nvswitch(t, &nvs));
        for (i = 0; i < 4; i++)
            CHECK_OK(topo_add_nvlinks(t, gpu[i], nvs, 18));
    }
    CHECK_OK(acc_topo_set_network(t, &net));
    CHECK_OK(acc_topo_finalize(t));
    return t;
}

ACC_TEST(pxn_sends_through_the_nic_of_an_nvlink_peer)
{
    acc_topo_t *t = pxn_node(1);
    const int *nics;
    int via, g, n = acc_topo_gpu_nics(t, 0, &nics, &via);
    acc_topo_path_t p0, p3;

    CHECK_INT(n, 2);
    CHECK_INT(via, -1);
    for (g = 1; g < 4; g++) {
        n = acc_topo_gpu_nics(t, g, &nics, &via);
        CHECK_INT(n, 2);
        CHECK_INT(via, 0);
    }
    /* The rails of the GPUs that use PXN spread over both NICs. */
    CHECK(acc_topo_gpu_nic(t, 1) != acc_topo_gpu_nic(t, 2));
    /* Through the peer: what GPU0 itself sends, one more NVLink hop's latency. */
    CHECK_OK(acc_topo_path(t, 0, 4, &p0));
    CHECK_OK(acc_topo_path(t, 3, 4, &p3));
    CHECK_NEAR(p3.bw, p0.bw, 1e-9);
    CHECK_NEAR(p0.bw, acc_topo_pcie_bw(5, 16), 1e-9); /* GPU0's own link, under 2 x 50 GB/s */
    CHECK(p3.lat_us > p0.lat_us);
    acc_topo_destroy(t);
}

/* Without NVLink there is no PXN: the GPUs reach the NICs across the host, as they are. */
ACC_TEST(no_pxn_without_nvlink)
{
    acc_topo_t *t = pxn_node(0);
    int via, g;
    for (g = 0; g < 4; g++) {
        CHECK_INT(acc_topo_gpu_nics(t, g, NULL, &via), 2);
        CHECK_INT(via, -1);
    }
    CHECK_INT(acc_topo_gpu_nics(t, 4, NULL, &via), 0);
    CHECK_INT(via, -1);
    acc_topo_destroy(t);
}

/* The matrix's device d (GPUs 0-7, then NICs 0-17): its socket, and its PCIe switch (-1: on the
 * CPU).  Two NICs per GPU switch, the last two NICs on the sockets' own ports. */
static int smi_socket(int d)
{
    return d < 8 ? d / 4 : d < 24 ? (d - 8) / 8 : d - 24;
}

static int smi_switch(int d)
{
    return d < 8 ? d : d < 24 ? (d - 8) / 2 : -1;
}

/* `nvidia-smi topo -m` of an 8-GPU node with 18 NIC columns: two compute NICs on each GPU's PCIe
 * switch (NIC0-15, OCI's 16 x 200G layout) and one front-end NIC per socket (NIC16, NIC17), in
 * the layout of the captures in tests/data/topologies/nvidia-smi (NV18, PIX, NODE, SYS). */
static char *smi_18_nics(void)
{
    acc_buf_t b;
    int r, c, n = 8 + 18;

    acc_buf_init(&b);
    acc_buf_puts(&b, "\t");
    for (c = 0; c < n; c++)
        acc_buf_printf(&b, "%s%d\t", c < 8 ? "GPU" : "NIC", c < 8 ? c : c - 8);
    acc_buf_puts(&b, "CPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
    for (r = 0; r < n; r++) {
        int rs = smi_socket(r), rw = smi_switch(r);
        acc_buf_printf(&b, "%s%d\t", r < 8 ? "GPU" : "NIC", r < 8 ? r : r - 8);
        for (c = 0; c < n; c++) {
            int cs = smi_socket(c), cw = smi_switch(c);
            const char *w = r == c                ? " X "
                            : r < 8 && c < 8      ? "NV18"
                            : rw >= 0 && rw == cw ? "PIX"
                            : rs == cs            ? "NODE"
                                                  : "SYS";
            acc_buf_printf(&b, "%s\t", w);
        }
        if (r < 8)
            acc_buf_printf(&b, "%s\t%d\t\tN/A", rs ? "48-95" : "0-47", rs);
        acc_buf_puts(&b, "\n");
    }
    acc_buf_puts(&b, "\nLegend:\n\n  X    = Self\n\nNIC Legend:\n\n");
    for (c = 0; c < 18; c++)
        acc_buf_printf(&b, "  NIC%d: mlx5_%d\n", c, c);
    CHECK_OK(acc_buf_status(&b));
    return acc_buf_take(&b);
}

ACC_TEST(nvidia_smi_with_18_nic_columns_stripes_two_per_gpu)
{
    char *text = smi_18_nics();
    acc_topo_t *t = NULL;
    int g, k;

    CHECK_MSG(acc_topo_load_buffer(text, strlen(text), "smi-18-nics.txt", &t) == ACC_OK, "%s",
              acc_error_message());
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), 18);
    for (g = 0; g < 8; g++) {
        const int *nics;
        int via, n = acc_topo_gpu_nics(t, g, &nics, &via);
        CHECK_INT(n, 2);
        CHECK_INT(via, -1);
        /* Its own switch's two NICs, not a front-end one. */
        for (k = 0; k < n; k++)
            CHECK_INT(acc_topo_vertex(t, nics[k])->id / 2, g);
    }
    acc_topo_destroy(t);
    acc_mem_free(text);
}

/* hwloc: LLNL's Lassen node (IBM AC922), a dual-port ConnectX-5 per socket beside two V100 each -
 * every GPU stripes across its socket's two ports, shared with the other GPU; AWS g4dn.metal,
 * eight T4 on one EFA, all of them sharing it. */
ACC_TEST(hwloc_ports_and_nics_shared_by_gpus)
{
    acc_topo_t *t =
        load_nodes(ACC_TEST_DATA_DIR "/topologies/hwloc-xml/mpibind-coral-lassen.xml", 1);
    check_stripes(t, 2, 2);
    acc_topo_destroy(t);
    t = load_nodes(ACC_TEST_DATA_DIR "/topologies/hwloc-xml/mpibind-g4dnmetal.xml", 1);
    check_stripes(t, 1, 8);
    acc_topo_destroy(t);
}

/* Network planes: NICs of different planes meet only where the fabric joins them.  A node whose
 * GPUs each have a NIC on every plane (32 x 100 Gb/s on 4 planes, NIC k on plane k mod 4: a p5
 * GPU's four EFA on planes 0-3) sends as much between nodes as on one plane; a node where GPU g's
 * only NIC is on plane g mod 2 cannot join GPUs of different parity across nodes; the YAML
 * carries each NIC's plane and refuses one out of range, naming the file and line. */
ACC_TEST(network_planes_pair_nics_of_one_plane)
{
    acc_topo_t *one = NULL, *four = NULL, *split = NULL, *back = NULL;
    acc_topo_path_t p, q;
    acc_buf_t b;
    int k;

    CHECK_OK(acc_topo_load("nodes=2 gpus=8 nvlink=18 nic=32x100", &one));
    CHECK_OK(acc_topo_load("nodes=2 gpus=8 nvlink=18 nic=32x100 planes=4", &four));
    for (k = 0; k < 32; k++)
        CHECK_INT(acc_topo_vertex(four, acc_topo_find(four, ACC_VTX_NIC, k))->plane, k % 4);
    CHECK(strstr(acc_topo_source(four), " planes=4") != NULL);
    CHECK_OK(acc_topo_path(one, 3, 12, &p));
    CHECK_OK(acc_topo_path(four, 3, 12, &q));
    CHECK_INT(q.cls, ACC_PATH_NET);
    CHECK_NEAR(q.bw, p.bw, 1e-9);
    CHECK_NEAR(q.bw, 50.0, 1e-9); /* four 100 Gb/s EFA */

    CHECK_OK(acc_topo_load("nodes=2 gpus=8 nvlink=18 nic=8x400 planes=2", &split));
    CHECK_OK(acc_topo_path(split, 0, 10, &p)); /* GPU0 (plane 0) to GPU2 of node 1 (plane 0) */
    CHECK_INT(p.cls, ACC_PATH_NET);
    CHECK_NEAR(p.bw, 50.0, 1e-9);
    CHECK_OK(acc_topo_path(split, 0, 9, &p)); /* GPU0 (plane 0) to GPU1 of node 1 (plane 1) */
    CHECK_INT(p.cls, ACC_PATH_DIS);
    CHECK_NEAR(p.bw, 0, 0);

    acc_buf_init(&b);
    CHECK_OK(acc_topo_export_yaml(four, &b));
    CHECK(strstr(b.data, ", plane: 3}") != NULL);
    CHECK_OK(acc_topo_load_buffer(b.data, b.len, "four.yaml", &back));
    for (k = 0; k < 32; k++)
        CHECK_INT(acc_topo_vertex(back, acc_topo_find(back, ACC_VTX_NIC, k))->plane, k % 4);
    acc_buf_free(&b);
    {
        static const char bad[] = "version: 1\nnode:\n  gpus:\n    - {id: 0, sm: 90}\n  nics:\n"
                                  "    - {id: 0, speed_gbps: 400, plane: 64}\n";
        acc_topo_t *t = NULL;
        CHECK_ERR(acc_topo_load_buffer(bad, strlen(bad), "planes.yaml", &t), ACC_ERR_RANGE);
        CHECK_MSG_HAS("planes.yaml:6:");
        CHECK_MSG_HAS("'plane' is 64");
        CHECK(t == NULL);
    }
    acc_topo_destroy(back);
    acc_topo_destroy(split);
    acc_topo_destroy(four);
    acc_topo_destroy(one);
}
