/*
 * The NCCL 2.28 replica (compiler/acc_cost.h) against numbers derived by hand from
 * reference/02-nccl.md §1-2 (the "sheet"): the worked DGX H100 example, two DGX H100 nodes,
 * a PCIe-only node, A100 and V100 clusters, one GPU per node, and the options.  Each
 * expected value carries its derivation.
 */
#include "acc_test.h"
#include "acc_cost.h"

#include <string.h>

static acc_nccl_model_t *model(const char *src, int nvls, int collnet, double net_lat)
{
    acc_topo_t *t;
    acc_nccl_model_t *m;
    acc_nccl_options_t o;
    CHECK_OK(acc_topo_load(src, &t));
    acc_nccl_options_init(&o);
    o.nvls = nvls;
    o.collnet = collnet;
    o.net_latency_us = net_lat;
    CHECK_OK(acc_nccl_model_create(t, &o, &m));
    acc_topo_destroy(t); /* the model keeps nothing of the topology */
    return m;
}

static double us(const acc_nccl_model_t *m, acc_coll_t c, uint64_t n, acc_nccl_algo_t a,
                 acc_nccl_proto_t p)
{
    double t;
    CHECK_OK(acc_nccl_model_time(m, c, n, a, p, &t));
    return t;
}

static double bw(const acc_nccl_model_t *m, acc_coll_t c, acc_nccl_algo_t a, acc_nccl_proto_t p)
{
    return acc_nccl_model_bandwidth(m, c, a, p);
}

static double lat(const acc_nccl_model_t *m, acc_coll_t c, acc_nccl_algo_t a, acc_nccl_proto_t p)
{
    return acc_nccl_model_latency(m, c, a, p);
}

static void check_pick(const acc_nccl_model_t *m, acc_coll_t c, uint64_t n, acc_nccl_algo_t a,
                       acc_nccl_proto_t p)
{
    acc_nccl_choice_t ch;
    CHECK_OK(acc_nccl_model_select(m, c, n, &ch));
    CHECK_MSG(ch.algo == a && ch.proto == p, "%llu B: NCCL picks %s/%s, expected %s/%s",
              (unsigned long long)n, acc_nccl_algo_name(ch.algo), acc_nccl_proto_name(ch.proto),
              acc_nccl_algo_name(a), acc_nccl_proto_name(p));
}

static void check_graph(const acc_nccl_model_t *m, acc_nccl_algo_t a, acc_nccl_pattern_t pattern,
                        int nch, double intra, double inter, acc_nccl_path_t type_intra)
{
    acc_nccl_graph_t g;
    CHECK_OK(acc_nccl_model_graph(m, a, &g));
    CHECK_INT(g.pattern, pattern);
    CHECK_INT(g.nchannels, nch);
    CHECK_NEAR(g.bw_intra, intra, 1e-4);
    CHECK_NEAR(g.bw_inter, inter, 1e-4);
    CHECK_INT(g.type_intra, type_intra);
}

/* Sheet §2 worked example: 18 NVLinks x 20.6 = 370.8 GB/s from each GPU to the NVSwitch node,
 * so the ring search at 60 fits 6 channels (7 x 60 > 370.8), duplication gives 12 x 30, and
 * the runtime uses min(64, 2 x 12) = 24 channels.  The tree (min = max = 12 channels) starts
 * at 30 (totalBw 370.8 x 8/7 = 423.8 < 40 x 12) and a chain takes 12 x 30 = 360 per GPU.
 * The NVLS graph (8 heads) fits at 40 (head GPU 9 x 40 = 360 < 370.8) and pass 2 raises its
 * bwInter to 60. */
ACC_TEST(worked_example_dgx_h100_graphs)
{
    const char *srcs[] = {"dgx-h100", "nodes=1 gpus=8 nvlink=18 nic=8x400"};
    size_t i;
    for (i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
        acc_nccl_model_t *m = model(srcs[i], -1, 0, 0);
        acc_nccl_summary_t s;
        acc_nccl_model_summary(m, &s);
        CHECK_NEAR(s.total_bw, 18 * 20.6, 1e-3);
        CHECK_NEAR(s.max_bw, 18 * 20.6, 1e-3);
        check_graph(m, ACC_NCCL_ALGO_RING, ACC_NCCL_PATTERN_RING, 12, 30, 30, ACC_NCCL_PATH_NVL);
        check_graph(m, ACC_NCCL_ALGO_TREE, ACC_NCCL_PATTERN_BALANCED_TREE, 12, 30, 30,
                    ACC_NCCL_PATH_NVL);
        check_graph(m, ACC_NCCL_ALGO_NVLS, ACC_NCCL_PATTERN_NVLS, 8, 40, 60, ACC_NCCL_PATH_NVL);
        CHECK_INT(s.nchannels, 24);
        CHECK_INT(s.nvls_channels, 16); /* sheet: 16 on SM90 */
        CHECK_INT(s.nranks, 8);
        acc_nccl_model_destroy(m);
    }
}

/* Sheet §2 worked example, AllReduce on 8 GPUs (nsteps 14, algBw = busBw x 8/14):
 *   Ring/Simple busBw 12 x 30 = 360 -> 205.71, lat 8.4 + 14 x 3.4 = 56.0
 *   Ring/LL     min(141, 360 x .5) = 141 -> 80.57, lat 6.6 + 14 x .6 = 15.0
 *   Ring/LL128  min(360 x .92, 12 x 36.7) = 331.2 -> 189.26, lat 14 + 14 x 1.9 = 40.6
 *   Tree        min(360 x .92, 12 x 38.7) = 331.2; Simple x .5 = 165.6, lat 8.4 + 2 x 7 x 4.0
 *               = 64.4; LL min(331.2/3.8, 141) x .5 = 43.58, lat 6.8 + 2 x 7 x .6 = 15.2;
 *               LL128 min(331.2 x 7/9, 440.4) x .5 = 128.8, lat 14 + 2 x 7 x 1.25 = 31.5
 *   NVLS        40 x .85 x 7/8 x 2 = 59.5 per channel (bwInter 60 does not bind), x 8 = 476 ->
 *               272.0; lat 25 (the NVLINK entry replaces the base)
 *   NVLSTree    off on one node. */
ACC_TEST(worked_example_dgx_h100_tables)
{
    acc_nccl_model_t *m = model("dgx-h100", -1, 0, 0);
    const acc_coll_t ar = ACC_COLL_ALLREDUCE;
    double t;
    CHECK_NEAR(bw(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE), 360.0 * 8 / 14, 1e-3);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE), 56.0, 1e-4);
    CHECK_NEAR(bw(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL), 141.0 * 8 / 14, 1e-3);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL), 15.0, 1e-4);
    CHECK_NEAR(bw(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL128), 331.2 * 8 / 14, 1e-3);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL128), 40.6, 1e-4);
    CHECK_NEAR(bw(m, ar, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_SIMPLE), 165.6, 1e-3);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_SIMPLE), 64.4, 1e-4);
    CHECK_NEAR(bw(m, ar, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_LL), 331.2 / 3.8 / 2, 1e-3);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_LL), 15.2, 1e-4);
    CHECK_NEAR(bw(m, ar, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_LL128), 331.2 * 7 / 9 / 2, 1e-3);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_LL128), 31.5, 1e-4);
    CHECK_NEAR(bw(m, ar, ACC_NCCL_ALGO_NVLS, ACC_NCCL_PROTO_SIMPLE), 476.0 * 8 / 14, 1e-3);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_NVLS, ACC_NCCL_PROTO_SIMPLE), 25.0, 1e-4);
    CHECK_NEAR(bw(m, ar, ACC_NCCL_ALGO_NVLS_TREE, ACC_NCCL_PROTO_SIMPLE), 0, 0);
    CHECK_ERR(
        acc_nccl_model_time(m, ar, 1 << 20, ACC_NCCL_ALGO_NVLS_TREE, ACC_NCCL_PROTO_SIMPLE, &t),
        ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("off on one node");
    CHECK_NEAR(t, -1, 0);
    /* Ring time = lat + n / (1000 x algBw); no ring plateau on one node. */
    CHECK_NEAR(us(m, ar, 1 << 20, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE),
               56.0 + 1048576.0 / (1000 * 360.0 * 8 / 14), 1e-3);
    acc_nccl_model_destroy(m);
}

/* Sheet: "LL beats LL128 below ~3.6 MB": 15 + n/80571 = 40.6 + n/189257 at n = 3.59e6 B.
 * LL128 gives way to Simple at 15.4 / (1/189257 - 1/205714) = 36.4e6 B.  With NVLS (25 us,
 * 272 GB/s) NCCL leaves Ring/LL between 1 and 2 MiB: at 1 MiB 15 + 13.01 = 28.01 < 25 + 3.86,
 * at 2 MiB 25 + 7.7 < 15 + 26.0 -- nccl-tests #309 measured "Ring/LL up to 1 MB, NVLS/Simple
 * from 2 MB".  At 8 KiB one channel of LL suffices: 8192 B < nc x 512 x 64 (Ring LL threshold
 * 8 x nRanks) until nc = 1, then threads halve while 8192 < 1 x nt x 64: 512 -> 128. */
ACC_TEST(worked_example_dgx_h100_picks)
{
    acc_nccl_model_t *plain = model("dgx-h100", 0, 0, 0), *nvls = model("dgx-h100", -1, 0, 0);
    const acc_coll_t ar = ACC_COLL_ALLREDUCE;
    acc_nccl_choice_t ch;
    check_pick(plain, ar, 3500000, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL);
    check_pick(plain, ar, 3700000, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL128);
    check_pick(plain, ar, 32ull << 20, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL128);
    check_pick(plain, ar, 40ull << 20, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE);
    check_pick(plain, ar, 4ull << 30, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE);
    check_pick(nvls, ar, 1 << 20, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL);
    check_pick(nvls, ar, 2 << 20, ACC_NCCL_ALGO_NVLS, ACC_NCCL_PROTO_SIMPLE);
    check_pick(nvls, ar, 256ull << 20, ACC_NCCL_ALGO_NVLS, ACC_NCCL_PROTO_SIMPLE);
    CHECK_OK(acc_nccl_model_select(nvls, ar, 8192, &ch));
    CHECK_INT(ch.algo, ACC_NCCL_ALGO_RING);
    CHECK_INT(ch.proto, ACC_NCCL_PROTO_LL);
    CHECK_NEAR(ch.time_us, 15.0 + 8192 / (1000 * 141.0 * 8 / 14), 1e-3);
    CHECK_INT(ch.nchannels, 1);
    CHECK_INT(ch.nthreads, 128);
    CHECK_NEAR(ch.algbw, 8192 / (ch.time_us * 1e3), 1e-9);
    CHECK_NEAR(ch.busbw, ch.algbw * 14 / 8, 1e-9);
    /* Large NVLS calls use the 16 NVLS channels and 640 threads. */
    CHECK_OK(acc_nccl_model_select(nvls, ar, 256ull << 20, &ch));
    CHECK_INT(ch.nchannels, 16);
    CHECK_INT(ch.nthreads, 640);
    /* Large ring calls: all 24 channels, 512 threads plus the sync warp. */
    CHECK_OK(acc_nccl_model_select(plain, ar, 256ull << 20, &ch));
    CHECK_INT(ch.nchannels, 24);
    CHECK_INT(ch.nthreads, 544);
    acc_nccl_model_destroy(plain);
    acc_nccl_model_destroy(nvls);
}

/* AllGather / ReduceScatter on one DGX H100: nsteps 7, Ring algBw = busBw x 8/7, lat
 * 8.4 + 7 x 3.4 = 32.2 (Simple), 6.6 + 7 x .6 = 10.8 (LL).  NVLS: 40 x .85 x 7/8 x (7/8) =
 * 26.03 per channel, x 8 = 208.25, not converted (sheet: "AG/RS with a non-ring algorithm are
 * not converted").  No Tree for AG/RS; PAT needs one GPU per node. */
ACC_TEST(allgather_reduce_scatter_on_dgx_h100)
{
    acc_nccl_model_t *m = model("dgx-h100", -1, 0, 0);
    acc_coll_t colls[] = {ACC_COLL_ALLGATHER, ACC_COLL_REDUCE_SCATTER};
    double t;
    size_t i;
    for (i = 0; i < 2; i++) {
        CHECK_NEAR(bw(m, colls[i], ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE), 360.0 * 8 / 7, 1e-3);
        CHECK_NEAR(lat(m, colls[i], ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE), 32.2, 1e-4);
        CHECK_NEAR(bw(m, colls[i], ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL), 141.0 * 8 / 7, 1e-3);
        CHECK_NEAR(lat(m, colls[i], ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL), 10.8, 1e-4);
        CHECK_NEAR(bw(m, colls[i], ACC_NCCL_ALGO_NVLS, ACC_NCCL_PROTO_SIMPLE), 208.25, 1e-3);
        CHECK_ERR(acc_nccl_model_time(m, colls[i], 1 << 20, ACC_NCCL_ALGO_TREE,
                                      ACC_NCCL_PROTO_SIMPLE, &t),
                  ACC_ERR_UNSUPPORTED);
        CHECK_MSG_HAS("not an algorithm");
        CHECK_ERR(
            acc_nccl_model_time(m, colls[i], 1 << 20, ACC_NCCL_ALGO_PAT, ACC_NCCL_PROTO_SIMPLE, &t),
            ACC_ERR_UNSUPPORTED);
        CHECK_MSG_HAS("one GPU per node");
    }
    acc_nccl_model_destroy(m);
}

/* Two DGX H100 over 8 x 400G (50 GB/s per NIC, PCIe Gen5 x16 = 240 x 16/80 = 48 GB/s): the
 * ring search starts at 48 (maxBw, the GPU-NIC path).  A channel must leave by the NIC it
 * came in on, which only its own GPU reaches as PIX; through PXN (one more NVLink hop per
 * channel) 7 x 48 fit in 370.8, then NIC crossing at PIX gives 8 x 48 = 384 >= totalBw 370.8,
 * one channel starting per NIC (50 - 48 < 48).  No duplication (sm90, 48 < 50, 8 > 4); the
 * runtime has 2 x 8 = 16 channels (16 is not < 16: no second doubling).  The balanced tree
 * fails at 48 and sm90 falls back to the simple tree: 8 x 48, pattern 3. */
ACC_TEST(two_dgx_h100_graphs)
{
    acc_nccl_model_t *m = model("dgx-h100-2node", -1, 0, 0);
    acc_nccl_graph_t g;
    acc_nccl_summary_t s;
    check_graph(m, ACC_NCCL_ALGO_RING, ACC_NCCL_PATTERN_RING, 8, 48, 48, ACC_NCCL_PATH_NVL);
    check_graph(m, ACC_NCCL_ALGO_TREE, ACC_NCCL_PATTERN_TREE, 8, 48, 48, ACC_NCCL_PATH_NVL);
    CHECK_OK(acc_nccl_model_graph(m, ACC_NCCL_ALGO_RING, &g));
    CHECK_INT(g.type_inter, ACC_NCCL_PATH_PIX);
    CHECK_INT(g.crossnic, 2);
    acc_nccl_model_summary(m, &s);
    CHECK_INT(s.nchannels, 16);
    CHECK_INT(s.nnodes, 2);
    CHECK_NEAR(s.max_bw, 48, 1e-4);
    acc_nccl_model_destroy(m);
}

/* Inter-node latency, 16 ranks on 2 nodes, Intel CPUs (net overhead 1.0, x3 for Simple):
 *   Ring: base + (30 - 2) x max(intraLat, overhead) + 2 x hwNET[Ring]
 *     LL 6.6 + 28 x 1.0 + 2 x 2.7 = 40.0; LL128 14 + 28 x 1.9 + 2 x 4.0 = 75.2;
 *     Simple 8.4 + 28 x 3.4 + 2 x 14 = 131.6
 *   Tree: base + 2 x (7 x intraLat + log2(2) x hwNET[Tree])
 *     LL 6.8 + 2 x (4.2 + 5.0) = 25.2; LL128 14 + 2 x (8.75 + 8.5) = 48.5;
 *     Simple 8.4 + 2 x (28 + 14) = 92.4
 * so trees win small messages across nodes. */
ACC_TEST(two_dgx_h100_ring_and_tree_latency)
{
    acc_nccl_model_t *m = model("dgx-h100-2node", -1, 0, 0);
    const acc_coll_t ar = ACC_COLL_ALLREDUCE;
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL), 40.0, 1e-4);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL128), 75.2, 1e-4);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE), 131.6, 1e-4);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_LL), 25.2, 1e-4);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_LL128), 48.5, 1e-4);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_SIMPLE), 92.4, 1e-4);
    check_pick(m, ar, 1024, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_LL);
    acc_nccl_model_destroy(m);
}

/* Bandwidths on two nodes (nNodes <= 2: bwIntra; busBw 8 x 48 = 384; 2-node caps):
 *   Ring/Simple 384 x 16/30 = 204.8; Ring/LL min(39, 192) x 16/30 = 20.8
 *   Tree: min(384 x .92, 8 x 41.4) = 331.2, then x .85 for the simple TREE pattern, x .5:
 *     Simple 140.76; LL min(331.2/3.8, 39) = 39 -> 16.575
 * Tree correction factors: Simple at 1 MiB, log2(2^20 >> 6) = 14 -> .5; LL at 64 KiB,
 * index 10 -> .6; none below 64 B.  Ring plateau (sm90: x1.4) once n / (16 channels x 16
 * ranks) >= 64, i.e. from 16384 B. */
ACC_TEST(two_dgx_h100_tree_correction_and_ring_plateau)
{
    acc_nccl_model_t *m = model("dgx-h100-2node", -1, 0, 0);
    const acc_coll_t ar = ACC_COLL_ALLREDUCE;
    const double tree_simple = 331.2 * .85 * .5, tree_ll = 39 * .85 * .5, ring = 384.0 * 16 / 30;
    CHECK_NEAR(bw(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE), ring, 1e-3);
    CHECK_NEAR(bw(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL), 39.0 * 16 / 30, 1e-3);
    CHECK_NEAR(bw(m, ar, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_SIMPLE), tree_simple, 1e-3);
    CHECK_NEAR(bw(m, ar, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_LL), tree_ll, 1e-3);
    CHECK_NEAR(us(m, ar, 1 << 20, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_SIMPLE),
               92.4 + 1048576 / (1000 * tree_simple * .5), 1e-2);
    CHECK_NEAR(us(m, ar, 1 << 16, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_LL),
               25.2 + 65536 / (1000 * tree_ll * .6), 1e-2);
    CHECK_NEAR(us(m, ar, 32, ACC_NCCL_ALGO_TREE, ACC_NCCL_PROTO_LL), 25.2 + 32 / (1000 * tree_ll),
               1e-4);
    CHECK_NEAR(us(m, ar, 16383, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE),
               131.6 + 16383 / (1000 * ring), 1e-3);
    CHECK_NEAR(us(m, ar, 16384, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE),
               131.6 * 1.4 + 16384 / (1000 * ring), 1e-3);
    acc_nccl_model_destroy(m);
}

/* The 2-node machine with AMD CPUs: the multi-node LL cap comes from the AMD row (22.5 on 2
 * nodes instead of 39) and the net overhead is 2.0 (x3 for Simple), so every ring step costs
 * at least that: LL 6.6 + 28 x 2.0 + 2 x 2.7 = 68.0, LL128 14 + 28 x 2.0 + 2 x 4 = 78.0,
 * Simple 8.4 + 28 x 6.0 + 2 x 14 = 204.4; Ring/LL 22.5 x 16/30 = 12.0. */
ACC_TEST(amd_cpus_pick_the_ll_row_and_net_overhead)
{
    char *text = NULL, *p;
    size_t len;
    acc_buf_t b;
    acc_topo_t *t;
    acc_nccl_model_t *m;
    const acc_coll_t ar = ACC_COLL_ALLREDUCE;
    CHECK_OK(acc_read_file(acc_test_src("schedules/platforms/dgx-h100.yaml"), &text, &len));
    while ((p = strstr(text, "GenuineIntel")) != NULL)
        memcpy(p, "AuthenticAMD", 12);
    acc_buf_init(&b);
    acc_buf_puts(&b, text);
    acc_buf_puts(&b, "\nnetwork:\n  nodes: 2\n  fabric: ib-ndr\n");
    CHECK_OK(acc_topo_load_buffer(b.data, b.len, "dgx-h100-amd", &t));
    CHECK_OK(acc_nccl_model_create(t, NULL, &m));
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL), 68.0, 1e-4);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL128), 78.0, 1e-4);
    CHECK_NEAR(lat(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE), 204.4, 1e-4);
    CHECK_NEAR(bw(m, ar, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL), 22.5 * 16 / 30, 1e-3);
    check_graph(m, ACC_NCCL_ALGO_RING, ACC_NCCL_PATTERN_RING, 8, 48, 48, ACC_NCCL_PATH_NVL);
    acc_nccl_model_destroy(m);
    acc_topo_destroy(t);
    acc_buf_free(&b);
    acc_mem_free(text);
}
