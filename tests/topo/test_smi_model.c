/* The nvidia-smi importer's GPU model and fabric, on matrices written here to reach the NVLink
 * and PCIe patterns the four real captures do not: a hybrid cube mesh, NV8 and NV12 NVSwitch
 * machines, bridged and damaged links, and a PCIe tree with every class. */
#include "smi_test_util.h"

ACC_TEST(model_inferred_from_nvlinks)
{
    char *dgx = capture(DGX), *hgx = capture(HGX), *l40s = capture(L40S);
    char *dgx_bare = without_first_line(dgx), *hgx_bare = without_first_line(hgx);
    char *l40s_bare = without_first_line(l40s);
    acc_topo_t *a = load(dgx_bare, "dgx"), *b = load(hgx_bare, "hgx");

    CHECK_STR(tt_gpu(a, 0)->model, "A100 SXM4 40GB");
    CHECK(tt_assumed(a, "inferred from NV12 between every GPU pair", NULL));
    CHECK_STR(tt_gpu(b, 7)->model, "H100 SXM5 80GB");
    CHECK_INT(tt_gpu(b, 7)->sm, 90);
    CHECK(tt_assumed(b, "H200", NULL));
    CHECK_INT(acc_topo_nvlinks_to_switches(b, 7), 18);
    /* No NVLink and no name: refused, not guessed. */
    CHECK_ERR(load_fails(l40s_bare, "l40s.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("l40s.txt:1:");
    CHECK_MSG_HAS("GPU model is unknown");
    acc_topo_destroy(a);
    acc_topo_destroy(b);
    acc_mem_free(dgx);
    acc_mem_free(hgx);
    acc_mem_free(l40s);
    acc_mem_free(dgx_bare);
    acc_mem_free(hgx_bare);
    acc_mem_free(l40s_bare);
}

/* A matrix written here: `cls(a, b)` for devices 0..ngpu+nnic-1 (GPUs first), one CPU Affinity
 * and NUMA Affinity per GPU (numa < 0: N/A; no_numa: the old header without that column). */
static char *matrix(const char *comment, int ngpu, int nnic, const char *(*cls)(int, int),
                    int (*numa)(int), int no_numa)
{
    acc_buf_t b;
    int n = ngpu + nnic, a, c;
    acc_buf_init(&b);
    if (comment)
        acc_buf_printf(&b, "%s\n", comment);
    for (a = 0; a < n; a++)
        acc_buf_printf(&b, "\t%s%d", a < ngpu ? "GPU" : "NIC", a < ngpu ? a : a - ngpu);
    acc_buf_printf(&b, "\tCPU Affinity%s\n", no_numa ? "" : "\tNUMA Affinity");
    for (a = 0; a < n; a++) {
        acc_buf_printf(&b, "%s%d", a < ngpu ? "GPU" : "NIC", a < ngpu ? a : a - ngpu);
        for (c = 0; c < n; c++)
            acc_buf_printf(&b, "\t%s", a == c ? " X " : cls(a, c));
        if (a < ngpu && numa(a) >= 0)
            acc_buf_printf(&b, "\t%d-%d", numa(a) * 16, numa(a) * 16 + 15);
        if (a < ngpu && !no_numa && numa(a) >= 0)
            acc_buf_printf(&b, "\t%d", numa(a));
        if (a < ngpu && numa(a) < 0)
            acc_buf_printf(&b, "\tN/A%s", no_numa ? "" : "\tN/A");
        acc_buf_puts(&b, "\n");
    }
    return acc_buf_take(&b);
}

/* DGX-1 (V100): the hybrid cube mesh, NV1 and NV2, 6 links per GPU, an old header. */
static const char *dgx1(int a, int b)
{
    static const char *const m[8][8] = {{"X", "NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS"},
                                        {"NV1", "X", "NV2", "NV1", "SYS", "NV2", "SYS", "SYS"},
                                        {"NV1", "NV2", "X", "NV2", "SYS", "SYS", "NV1", "SYS"},
                                        {"NV2", "NV1", "NV2", "X", "SYS", "SYS", "SYS", "NV1"},
                                        {"NV2", "SYS", "SYS", "SYS", "X", "NV1", "NV1", "NV2"},
                                        {"SYS", "NV2", "SYS", "SYS", "NV1", "X", "NV2", "NV1"},
                                        {"SYS", "SYS", "NV1", "SYS", "NV1", "NV2", "X", "NV2"},
                                        {"SYS", "SYS", "SYS", "NV1", "NV2", "NV1", "NV2", "X"}};
    return m[a][b];
}

static int numa_unknown(int g)
{
    (void)g;
    return -1;
}

static int numa_half(int g)
{
    return g / 4;
}

ACC_TEST(hybrid_cube_mesh_is_direct_nvlinks)
{
    char *text = matrix(NULL, 8, 0, dgx1, numa_unknown, 1);
    acc_topo_t *t = load(text, "dgx1");
    int g;

    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 3), 2);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 1);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 5), 0);
    for (g = 0; g < 8; g++)
        CHECK_INT(acc_topo_nvlinks_to_switches(t, g), 0);
    CHECK_STR(tt_gpu(t, 0)->model, "V100 SXM2 16GB");
    CHECK(tt_assumed(t, "hybrid cube mesh", NULL));
    /* NUMA Affinity absent: the two halves are SYS to each other, so two NUMA nodes. */
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, 6)), 1);
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 4), "NVL");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 5), "NVB");
    acc_topo_destroy(t);
    acc_mem_free(text);
}

static const char *nv8(int a, int b)
{
    (void)a;
    (void)b;
    return "NV8";
}

static const char *nv12(int a, int b)
{
    (void)a;
    (void)b;
    return "NV12";
}

/* NV8 between every pair: A800 or H800 GPUs behind NVSwitch.  Unnamed, the importer takes the
 * A800 and says that an H800 looks the same. */
ACC_TEST(nv8_everywhere_is_an_nvswitch_a800)
{
    char *text = matrix("# an HGX 8-GPU board", 8, 0, nv8, numa_half, 0);
    acc_topo_t *t = load(text, "nv8");
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 5), 8);
    CHECK_STR(tt_gpu(t, 5)->model, "A800 SXM4 80GB");
    CHECK_INT(tt_gpu(t, 5)->sm, 80);
    CHECK_INT(tt_gpu(t, 5)->sm_count, 108);
    CHECK(tt_assumed(t, "inferred from NV8 between every GPU pair", NULL));
    CHECK(tt_assumed(t, "H800", NULL));
    acc_topo_destroy(t);
    acc_mem_free(text);
}

/* A line naming the part decides between A800 and H800.  The part's own 8 links count, not its
 * generation's 12 or 18: three H800s with NV8 to each other need 16 links each, so they meet in
 * an NVSwitch, and an A800 cannot have NV12 to seven peers. */
ACC_TEST(nv8_named_a800_or_h800)
{
    char *a800 = matrix("# an HGX A800 8-GPU", 8, 0, nv8, numa_half, 0);
    char *h800 = matrix("# GPU 0-7: NVIDIA H800", 8, 0, nv8, numa_half, 0);
    char *three = matrix("# GPU 0-2: NVIDIA H800", 3, 0, nv8, numa_half, 0);
    char *wrong = matrix("# 8x NVIDIA A800-SXM4-80GB", 8, 0, nv12, numa_half, 0);
    acc_topo_t *t;

    t = load(a800, "a800");
    CHECK_STR(tt_gpu(t, 0)->model, "A800 SXM4 80GB");
    CHECK(tt_assumed(t, "named on line 1 ('A800')", NULL));
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 7), 8);
    acc_topo_destroy(t);

    t = load(h800, "h800");
    CHECK_STR(tt_gpu(t, 3)->model, "H800 SXM5 80GB");
    CHECK_INT(tt_gpu(t, 3)->sm, 90);
    CHECK_INT(tt_gpu(t, 3)->sm_count, 132);
    CHECK_INT(tt_gpu(t, 3)->device_id, 0x2324);
    CHECK(tt_assumed(t, "named on line 1 ('H800')", NULL));
    CHECK(tt_assumed(t, "PCIe Gen5 x16", NULL));
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 3), 8);
    acc_topo_destroy(t);

    t = load(three, "three");
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 2), 8);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 0);
    acc_topo_destroy(t);

    t = load(wrong, "wrong");
    CHECK(tt_assumed(t, "names A800 SXM4 80GB, which cannot have the NVLinks", NULL));
    CHECK_STR(tt_gpu(t, 0)->model, "A100 SXM4 40GB");
    acc_topo_destroy(t);
    acc_mem_free(a800);
    acc_mem_free(h800);
    acc_mem_free(three);
    acc_mem_free(wrong);
}

/* PCIe cards joined in pairs by NVLink bridges (A40: 4 links per pair). */
static const char *bridged(int a, int b)
{
    return a / 2 == b / 2 ? "NV4" : a / 2 == 0 && b / 2 == 0 ? "PIX" : "NODE";
}

/* An NVSwitch machine whose capture shows one pair with fewer links. */
static const char *damaged(int a, int b)
{
    return (a == 2 && b == 5) || (a == 5 && b == 2) ? "NV12" : "NV18";
}

static const char *nv18(int a, int b)
{
    (void)a;
    (void)b;
    return "NV18";
}

ACC_TEST(nvlink_patterns_that_do_not_tell_the_model)
{
    char *pairs = matrix(NULL, 4, 0, bridged, numa_half, 0);
    char *named = matrix("# GPU 0-3: NVIDIA A40", 4, 0, bridged, numa_half, 0);
    char *broken = matrix(NULL, 8, 0, damaged, numa_half, 0);
    char *wrong = matrix("# GPU 0-7: NVIDIA L40S", 8, 0, nv18, numa_half, 0);
    acc_topo_t *t;

    CHECK_ERR(load_fails(pairs, "pairs.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("pairs.txt:1: the GPU model is unknown");
    CHECK_MSG_HAS("bridged PCIe cards");
    t = load(named, "a40");
    CHECK_STR(tt_gpu(t, 0)->model, "A40");
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    CHECK_INT(acc_topo_nvlinks_between(t, 2, 3), 4);
    CHECK_INT(acc_topo_nvlinks_between(t, 1, 2), 0);
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 1), "NVL");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 1, ACC_VTX_GPU, 2), "NODE");
    acc_topo_destroy(t);
    CHECK_ERR(load_fails(broken, "broken.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("broken.txt:1: the NV# cells give one GPU");
    /* A name that cannot have the matrix's NVLinks is not believed. */
    t = load(wrong, "wrong");
    CHECK_STR(tt_gpu(t, 0)->model, "H100 SXM5 80GB");
    CHECK(tt_assumed(t, "names L40S, which cannot have the NVLinks", NULL));
    acc_topo_destroy(t);
    acc_mem_free(pairs);
    acc_mem_free(named);
    acc_mem_free(broken);
    acc_mem_free(wrong);
}

/* A PCIe machine with every level: on NUMA 0, GPU0, GPU1 and NIC0 on one switch (PIX), GPU2
 * and GPU3 on other switches of the same upper switch (PXB), GPU4 under the same host bridge
 * (PHB), GPU5 on another root port (NODE); on NUMA 1, GPU6 and GPU7 on a switch and NIC1 on
 * its own root port. */
static const int place[10][4] = {
    /* numa, host bridge, upper switch, switch */
    {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 1}, {0, 0, 0, 2}, {0, 0, 1, 3},
    {0, 1, 2, 4}, {1, 2, 3, 5}, {1, 2, 3, 5}, {0, 0, 0, 0}, {1, 3, 4, 6}};

static const char *pcie_levels(int a, int b)
{
    static const char *const names[] = {"SYS", "NODE", "PHB", "PXB"};
    int level;
    for (level = 0; level < 4; level++)
        if (place[a][level] != place[b][level])
            return names[level];
    return "PIX";
}

static int place_numa(int g)
{
    return place[g][0];
}

ACC_TEST(pcie_tree_reproduces_every_class)
{
    char *text = matrix("# 8x NVIDIA L40S", 8, 2, pcie_levels, place_numa, 0);
    acc_topo_t *t = load(text, "levels");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 2), "PXB");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 2, ACC_VTX_GPU, 4), "PHB");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 1, ACC_VTX_NIC, 0), "PIX");
    classes_match(t, text, 1);
    CHECK_INT(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 0))->gdr, 1);
    CHECK_INT(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 1))->gdr, 0);
    CHECK(!tt_assumed(t, "fits no PCIe tree", NULL));
    acc_topo_destroy(t);
    acc_mem_free(text);
}

/* A bare "V100" in a comment names the DGX-1 part; a V100S, a PCIe card acc has no row for, is
 * not taken for it, so the NVLink-less matrix leaves the model unknown. */
ACC_TEST(bare_v100_names_the_sxm2_part)
{
    char *text = matrix("# 8x Tesla V100, DGX-1", 8, 0, dgx1, numa_unknown, 1);
    char *v100s = matrix("# GPU 0-7: Tesla V100S-PCIE-32GB", 8, 2, pcie_levels, place_numa, 0);
    acc_topo_t *t = load(text, "dgx1");

    CHECK_STR(tt_gpu(t, 0)->model, "V100 SXM2 16GB");
    CHECK(tt_assumed(t, "named on line 1 ('V100')", NULL));
    acc_topo_destroy(t);
    CHECK_ERR(load_fails(v100s, "v100s.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("v100s.txt:2: the GPU model is unknown");
    acc_mem_free(text);
    acc_mem_free(v100s);
}
