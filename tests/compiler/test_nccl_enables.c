/*
 * The NCCL 2.28 replica's enable rules, plateaus and options (compiler/acc_cost.h), against
 * numbers derived by hand from reference/02-nccl.md §1-2 (the "sheet"): a PCIe-only node, A100
 * and V100 clusters, one GPU per node, NVLSTree and CollNet, and bad input.
 */
#include "acc_test.h"
#include "acc_cost.h"

#include <string.h>

static acc_nccl_model_t *model_opts(const char *src, const acc_nccl_options_t *o)
{
    acc_topo_t *t;
    acc_nccl_model_t *m;
    CHECK_OK(acc_topo_load(src, &t));
    CHECK_OK(acc_nccl_model_create(t, o, &m));
    acc_topo_destroy(t);
    return m;
}

static acc_nccl_model_t *model(const char *src)
{
    return model_opts(src, NULL);
}

static double us(const acc_nccl_model_t *m, acc_coll_t c, uint64_t n, acc_nccl_algo_t a,
                 acc_nccl_proto_t p)
{
    double t;
    CHECK_OK(acc_nccl_model_time(m, c, n, a, p, &t));
    return t;
}

#define AR              ACC_COLL_ALLREDUCE
#define AG              ACC_COLL_ALLGATHER
#define BW(m, c, a, p)  acc_nccl_model_bandwidth(m, c, ACC_NCCL_ALGO_##a, ACC_NCCL_PROTO_##p)
#define LAT(m, c, a, p) acc_nccl_model_latency(m, c, ACC_NCCL_ALGO_##a, ACC_NCCL_PROTO_##p)

/* pcie-8gpu: 8 L40S (sm89) in pairs behind Gen4 switches (120 x 16/80 = 24 GB/s), two sockets
 * of unrecognised CPUs.  GPU pairs are PIX, other pairs PHB or SYS, so a ring needs typeIntra
 * SYS; at 20 one channel fits (each switch uplink carries 20 each way), at 12 two channels give
 * 24 = totalBw: 2 x 12, not duplicated (12 < 25), runtime 4 channels.  On one node with
 * typeIntra SYS the latencies come from the PCI row: Ring/LL 6.6 + 14 x 1.0 = 20.6, Ring/Simple
 * 8.4 + 14 x 5.7 = 88.2; busBw 24: Simple 24 x 8/14, LL min(87.7, 12) x 8/14.  LL128 needs
 * typeIntra <= NVB: off.  No NVSwitch, sm89: no NVLS.  Ring threads: 2 x 12 = 24 > 12 (PCI_BW)
 * keeps 512, plus the sync warp. */
ACC_TEST(pcie_only_node_has_no_ll128)
{
    acc_nccl_model_t *m = model("pcie-8gpu");
    acc_nccl_graph_t g;
    acc_nccl_summary_t s;
    acc_nccl_choice_t ch;
    double t;
    CHECK_OK(acc_nccl_model_graph(m, ACC_NCCL_ALGO_RING, &g));
    CHECK_INT(g.nchannels, 2);
    CHECK_NEAR(g.bw_intra, 12, 1e-4);
    CHECK_INT(g.type_intra, ACC_NCCL_PATH_SYS);
    acc_nccl_model_summary(m, &s);
    CHECK_INT(s.nchannels, 4);
    CHECK_INT(s.nvls, 0);
    CHECK_NEAR(LAT(m, AR, RING, LL), 20.6, 1e-4);
    CHECK_NEAR(LAT(m, AR, RING, SIMPLE), 88.2, 1e-4);
    CHECK_NEAR(BW(m, AR, RING, SIMPLE), 24.0 * 8 / 14, 1e-4);
    CHECK_NEAR(BW(m, AR, RING, LL), 12.0 * 8 / 14, 1e-4);
    CHECK_NEAR(BW(m, AR, RING, LL128), 0, 0);
    CHECK_NEAR(BW(m, AR, TREE, LL128), 0, 0);
    CHECK_ERR(acc_nccl_model_time(m, AR, 1 << 20, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL128, &t),
              ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("LL128");
    CHECK_ERR(acc_nccl_model_time(m, AR, 1 << 20, ACC_NCCL_ALGO_NVLS, ACC_NCCL_PROTO_SIMPLE, &t),
              ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("NVSwitch");
    CHECK_OK(acc_nccl_model_select(m, AR, 256ull << 20, &ch));
    CHECK_INT(ch.algo, ACC_NCCL_ALGO_RING);
    CHECK_INT(ch.proto, ACC_NCCL_PROTO_SIMPLE);
    CHECK_INT(ch.nchannels, 4);
    CHECK_INT(ch.nthreads, 544);
    acc_nccl_model_destroy(m);
}

/* The ring plateau: Ring/Simple AllReduce latency x1.4 on sm80+, x1.9 before, once
 * n / (nChannels x nRanks) >= 64.
 *   p4d-4node, 32 A100s on 4 nodes: nsteps 62, 6 inter-node steps, Intel overhead 3.0 < 3.4:
 *     8.4 + 56 x 3.4 + 6 x 14 = 282.8, and its fabric, EFA, whose plugin reports 75 us, adds it
 *     twice per inter-node step for Simple: + 6 x 2 x 75 = 1182.8; 4 ring channels -> 8 at run
 *     time; from 64 x 8 x 32 B.
 *   dawnbench, 128 V100s on 16 nodes: nsteps 254, 30 inter-node steps: 8.4 + 224 x 3.4 +
 *     30 x 14 = 1190.0; one 32 Gb/s NIC -> 1 ring channel, 2 at run time; from 64 x 2 x 128 B. */
ACC_TEST(ring_plateau_is_1_4_on_a100_and_1_9_on_v100)
{
    acc_nccl_model_t *a100 = model("p4d-4node"), *v100 = model("dawnbench-v100-16node");
    double ba = BW(a100, AR, RING, SIMPLE), bv = BW(v100, AR, RING, SIMPLE);
    CHECK_NEAR(LAT(a100, AR, RING, SIMPLE), 1182.8, 1e-3);
    CHECK_NEAR(LAT(v100, AR, RING, SIMPLE), 1190.0, 1e-2);
    CHECK_NEAR(us(a100, AR, 16383, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE),
               1182.8 + 16383 / (1000 * ba), 1e-3);
    CHECK_NEAR(us(a100, AR, 16384, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE),
               1182.8 * 1.4 + 16384 / (1000 * ba), 1e-3);
    CHECK_NEAR(us(v100, AR, 16383, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE),
               1190.0 + 16383 / (1000 * bv), 1e-2);
    CHECK_NEAR(us(v100, AR, 16384, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE),
               1190.0 * 1.9 + 16384 / (1000 * bv), 1e-2);
    /* The 16-node V100 ring crosses a PHB path to its only NIC: LL128 is off (typeInter PHB >
     * PXB before sm90). */
    CHECK_NEAR(BW(v100, AR, RING, LL128), 0, 0);
    acc_nccl_model_destroy(a100);
    acc_nccl_model_destroy(v100);
}

/* PAT runs only with one GPU per node, for AllGather / ReduceScatter with Simple.  Four nodes
 * of one H100 and one 400 Gb/s NIC: the tree graph has 2 channels at bwInter 24 (48 found,
 * duplicated), nNodes 4 > 2 uses bwInter: 2 x 24 x .75 = 36, unconverted.  Latency: base 8 +
 * log2(4) x hwNET[Tree][Simple] 14 / 3.5 + 4 x 2.8 = 27.2.  With ppn 1 the ring takes the tree's
 * network latency too: AG Ring/LL 6.6 + 3 x 5.0 = 21.6. */
ACC_TEST(pat_only_with_one_gpu_per_node)
{
    acc_nccl_model_t *one = model("nodes=4 gpus=1 nic=1x400"), *eight = model("dgx-h100-2node");
    double t;
    CHECK_NEAR(BW(one, AG, PAT, SIMPLE), 36.0, 1e-4);
    CHECK_NEAR(LAT(one, AG, PAT, SIMPLE), 27.2, 1e-4);
    CHECK_NEAR(BW(one, ACC_COLL_REDUCE_SCATTER, PAT, SIMPLE), 36.0, 1e-4);
    CHECK_NEAR(LAT(one, AG, RING, LL), 21.6, 1e-4);
    CHECK_NEAR(us(one, AG, 1 << 20, ACC_NCCL_ALGO_PAT, ACC_NCCL_PROTO_SIMPLE),
               27.2 + 1048576 / 36000.0, 1e-3);
    CHECK_ERR(acc_nccl_model_time(one, AR, 1 << 20, ACC_NCCL_ALGO_PAT, ACC_NCCL_PROTO_SIMPLE, &t),
              ACC_ERR_UNSUPPORTED);
    CHECK_ERR(acc_nccl_model_time(one, AG, 1 << 20, ACC_NCCL_ALGO_PAT, ACC_NCCL_PROTO_LL, &t),
              ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("Simple");
    CHECK_ERR(acc_nccl_model_time(eight, AG, 1 << 20, ACC_NCCL_ALGO_PAT, ACC_NCCL_PROTO_SIMPLE, &t),
              ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("one GPU per node");
    CHECK_NEAR(BW(eight, AG, PAT, SIMPLE), 0, 0);
    acc_nccl_model_destroy(one);
    acc_nccl_model_destroy(eight);
}

/* NVLSTree is off on one node and on across two: the NVLS graph has 8 heads at bwIntra 40,
 * bwInter 48; per channel min(40 x .85 x 7/8 x 2 = 59.5, 2 x 48 on <= 2 nodes, cap 57.7) =
 * 57.7, x 8 x 16/30 = 246.19; latency 25 + 2 x log2(2) x 20.9 = 66.8.  Multi-node NVLS needs
 * CollNet.  With CollNet: NVLS min(59.5, 48) x 8 x 16/30 = 204.8, latency 25 + 18 = 43;
 * CollNetDirect 8 x 48 (f = 8/8 = 1) x .85 (sm90) x .5 = 163.2, latency 2 x (3.7 + 7 x .4) +
 * 31 = 44; CollNetChain 8 x 48 x .5 = 192, latency 2 x 7 x 2.8 + 30 = 69.2. */
ACC_TEST(nvls_tree_and_collnet_enables)
{
    acc_nccl_options_t o;
    acc_nccl_model_t *one = model("dgx-h100"), *two = model("dgx-h100-2node"), *sharp;
    acc_nccl_summary_t s;
    double t;
    CHECK_NEAR(BW(one, AR, NVLS_TREE, SIMPLE), 0, 0);
    CHECK_NEAR(BW(two, AR, NVLS_TREE, SIMPLE), 57.7 * 8 * 16 / 30, 1e-3);
    CHECK_NEAR(LAT(two, AR, NVLS_TREE, SIMPLE), 66.8, 1e-4);
    CHECK_NEAR(BW(two, AR, NVLS, SIMPLE), 0, 0);
    CHECK_ERR(acc_nccl_model_time(two, AR, 1 << 20, ACC_NCCL_ALGO_NVLS, ACC_NCCL_PROTO_SIMPLE, &t),
              ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("CollNet");
    CHECK_ERR(acc_nccl_model_time(two, AR, 1 << 20, ACC_NCCL_ALGO_COLLNET_DIRECT,
                                  ACC_NCCL_PROTO_SIMPLE, &t),
              ACC_ERR_UNSUPPORTED);
    acc_nccl_options_init(&o);
    o.collnet = 1;
    sharp = model_opts("dgx-h100-2node", &o);
    acc_nccl_model_summary(sharp, &s);
    CHECK_INT(s.collnet, 1);
    CHECK_NEAR(BW(sharp, AR, NVLS, SIMPLE), 48.0 * 8 * 16 / 30, 1e-3);
    CHECK_NEAR(LAT(sharp, AR, NVLS, SIMPLE), 43.0, 1e-4);
    CHECK_NEAR(BW(sharp, AR, COLLNET_DIRECT, SIMPLE), 163.2, 1e-3);
    CHECK_NEAR(LAT(sharp, AR, COLLNET_DIRECT, SIMPLE), 44.0, 1e-4);
    CHECK_NEAR(BW(sharp, AR, COLLNET_CHAIN, SIMPLE), 192.0, 1e-3);
    CHECK_NEAR(LAT(sharp, AR, COLLNET_CHAIN, SIMPLE), 69.2, 1e-4);
    CHECK_NEAR(BW(sharp, AR, COLLNET_DIRECT, LL), 0, 0);
    /* CollNet on one node is off: NCCL needs 2 nodes for it. */
    acc_nccl_model_destroy(sharp);
    sharp = model_opts("dgx-h100", &o);
    acc_nccl_model_summary(sharp, &s);
    CHECK_INT(s.collnet, 0);
    acc_nccl_model_destroy(sharp);
    acc_nccl_model_destroy(one);
    acc_nccl_model_destroy(two);
}

/* A net plugin reporting latency L adds L per network step, twice for Simple (the flush):
 * two DGX H100 with L = 5: Ring/LL 40 + 2 x 5 = 50; Ring/Simple 131.6 + 2 x 10 = 151.6;
 * Tree/Simple 92.4 + 2 x 10 = 112.4. */
ACC_TEST(net_latency_adds_to_each_network_step)
{
    acc_nccl_options_t o;
    acc_nccl_model_t *m;
    acc_nccl_graph_t g;
    acc_nccl_options_init(&o);
    o.net_latency_us = 5;
    m = model_opts("dgx-h100-2node", &o);
    CHECK_NEAR(LAT(m, AR, RING, LL), 50.0, 1e-4);
    CHECK_NEAR(LAT(m, AR, RING, SIMPLE), 151.6, 1e-4);
    CHECK_NEAR(LAT(m, AR, TREE, SIMPLE), 112.4, 1e-4);
    CHECK_OK(acc_nccl_model_graph(m, ACC_NCCL_ALGO_RING, &g));
    CHECK_NEAR(g.latency_inter, 5, 0);
    acc_nccl_model_destroy(m);
}

/* Channel options are NCCL_MIN/MAX_NCHANNELS on the runtime count (24 on a DGX H100); they do
 * not change the search graphs.  nvls = 0 removes NVLS, so large calls go to Ring/Simple. */
ACC_TEST(options_shape_the_communicator)
{
    acc_nccl_options_t o;
    acc_nccl_model_t *m;
    acc_nccl_summary_t s;
    acc_nccl_graph_t g;
    acc_nccl_choice_t ch;
    acc_nccl_options_init(&o);
    o.max_channels = 8;
    m = model_opts("dgx-h100", &o);
    acc_nccl_model_summary(m, &s);
    CHECK_INT(s.nchannels, 8);
    CHECK_OK(acc_nccl_model_graph(m, ACC_NCCL_ALGO_RING, &g));
    CHECK_INT(g.nchannels, 12);
    acc_nccl_model_destroy(m);
    acc_nccl_options_init(&o);
    o.min_channels = 32;
    o.nvls = 0;
    m = model_opts("dgx-h100", &o);
    acc_nccl_model_summary(m, &s);
    CHECK_INT(s.nchannels, 32);
    CHECK_INT(s.nvls, 0);
    CHECK_INT(s.nvls_channels, 0);
    CHECK_OK(acc_nccl_model_graph(m, ACC_NCCL_ALGO_NVLS, &g));
    CHECK_INT(g.pattern, ACC_NCCL_PATTERN_NONE);
    CHECK_OK(acc_nccl_model_select(m, AR, 256ull << 20, &ch));
    CHECK_INT(ch.algo, ACC_NCCL_ALGO_RING);
    CHECK_INT(ch.proto, ACC_NCCL_PROTO_SIMPLE);
    CHECK_INT(ch.nchannels, 32);
    acc_nccl_model_destroy(m);
    /* Two GPUs on an NVSwitch: ncclNvlsInit skips nodes of <= 2 GPUs. */
    m = model("nodes=1 gpus=2 nvlink=18 nvswitch=yes");
    acc_nccl_model_summary(m, &s);
    CHECK_INT(s.nvls, 0);
    acc_nccl_model_destroy(m);
}

ACC_TEST(bad_options_and_calls_are_refused)
{
    acc_topo_t *t;
    acc_nccl_options_t o;
    acc_nccl_model_t *m = NULL;
    acc_nccl_choice_t ch;
    double x;
    CHECK_OK(acc_topo_load("dgx-h100", &t));
    acc_nccl_options_init(&o);
    o.version = 22900;
    CHECK_ERR(acc_nccl_model_create(t, &o, &m), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("2.28");
    CHECK(m == NULL);
    o.version = 21903;
    CHECK_ERR(acc_nccl_model_create(t, &o, &m), ACC_ERR_UNSUPPORTED);
    acc_nccl_options_init(&o);
    o.nvls = 2;
    CHECK_ERR(acc_nccl_model_create(t, &o, &m), ACC_ERR_INVALID);
    CHECK_MSG_HAS("nvls");
    acc_nccl_options_init(&o);
    o.min_channels = 16, o.max_channels = 8;
    CHECK_ERR(acc_nccl_model_create(t, &o, &m), ACC_ERR_INVALID);
    acc_nccl_options_init(&o);
    o.max_channels = 65;
    CHECK_ERR(acc_nccl_model_create(t, &o, &m), ACC_ERR_INVALID);
    acc_nccl_options_init(&o);
    o.net_latency_us = -2;
    CHECK_ERR(acc_nccl_model_create(t, &o, &m), ACC_ERR_INVALID);
    CHECK_ERR(acc_nccl_model_create(NULL, NULL, &m), ACC_ERR_INVALID);
    o.version = 22800, o.net_latency_us = 0;
    CHECK_OK(acc_nccl_model_create(t, &o, &m));
    CHECK_ERR(acc_nccl_model_select(m, ACC_COLL_BROADCAST, 1024, &ch), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("allreduce, allgather and reduce_scatter");
    CHECK_ERR(acc_nccl_model_time(m, AR, 1024, ACC_NCCL_ALGO_COUNT, ACC_NCCL_PROTO_LL, &x),
              ACC_ERR_INVALID);
    CHECK_ERR(acc_nccl_model_graph(m, ACC_NCCL_ALGO_COUNT, NULL), ACC_ERR_INVALID);
    CHECK_NEAR(
        acc_nccl_model_bandwidth(m, ACC_COLL_ALLTOALL, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL), 0,
        0);
    CHECK_STR(acc_nccl_algo_name(ACC_NCCL_ALGO_NVLS_TREE), "NVLSTree");
    CHECK_STR(acc_nccl_proto_name(ACC_NCCL_PROTO_LL128), "LL128");
    CHECK_STR(acc_nccl_path_name(ACC_NCCL_PATH_PXN), "PXN");
    CHECK_STR(acc_nccl_algo_name(ACC_NCCL_ALGO_COUNT), "?");
    acc_nccl_model_destroy(m);
    acc_nccl_model_destroy(NULL);
    acc_topo_destroy(t);
}

/* One rank: NCCL copies locally and calls it Ring/Simple at zero cost. */
ACC_TEST(one_rank_costs_nothing)
{
    acc_nccl_model_t *m = model("nodes=1 gpus=1");
    acc_nccl_choice_t ch;
    double t;
    CHECK_OK(acc_nccl_model_select(m, AR, 1 << 20, &ch));
    CHECK_INT(ch.algo, ACC_NCCL_ALGO_RING);
    CHECK_INT(ch.proto, ACC_NCCL_PROTO_SIMPLE);
    CHECK_NEAR(ch.time_us, 0, 0);
    CHECK_ERR(acc_nccl_model_time(m, AR, 1 << 20, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL, &t),
              ACC_ERR_UNSUPPORTED);
    acc_nccl_model_destroy(m);
}

/* The dump reads like NCCL's GRAPH and TUNING lines. */
ACC_TEST(dump_shows_graphs_and_tables)
{
    acc_nccl_model_t *m = model("dgx-h100");
    acc_buf_t b;
    acc_buf_init(&b);
    CHECK_OK(acc_nccl_model_dump(m, &b));
    CHECK(strstr(b.data, "nChannels 12, bw 30.000000/30.000000, type NVL/PIX") != NULL);
    CHECK(strstr(b.data, "24 channels, NVLS 16 channels") != NULL);
    CHECK(strstr(b.data, "    56.0/ 205.7 |") != NULL);
    CHECK(strstr(b.data, "ReduceScatter |") != NULL);
    acc_buf_free(&b);
    acc_nccl_model_destroy(m);
}

/* A GB200 NVL72 rack is one NVLink domain of 72 GPUs, one system to NCCL: NVLS is on across it
 * with the 24 runtime channels of a single sm_100 node (sheet §2), and a 1 GiB allreduce goes to
 * NVLS. */
ACC_TEST(nvls_spans_the_gb200_nvl72_rack)
{
    acc_nccl_model_t *m = model("gb200-nvl72");
    acc_nccl_summary_t s;
    acc_nccl_choice_t ch;
    acc_nccl_model_summary(m, &s);
    CHECK_INT(s.nranks, 72);
    CHECK_INT(s.nnodes, 1);
    CHECK_INT(s.min_sm, 100);
    CHECK_INT(s.nvls, 1);
    CHECK_INT(s.nvls_channels, 24);
    CHECK_OK(acc_nccl_model_select(m, AR, 1ull << 30, &ch));
    CHECK_INT(ch.algo, ACC_NCCL_ALGO_NVLS);
    acc_nccl_model_destroy(m);
}
