/* Synthetic topologies: the documented examples build what they say, the 1024-GPU benchmark
 * machine builds fast, and every bad description is refused with a message naming the key. */
#include "acc_test.h"
#include "acc_topo.h"

#include <string.h>
#include <time.h>

static acc_topo_t *synth(const char *desc)
{
    acc_topo_t *t = NULL;
    acc_status_t st = acc_topo_load_synthetic(desc, &t);
    CHECK_MSG(st == ACC_OK, "\"%s\": %s", desc, acc_error_message());
    return t;
}

static acc_path_class_t vclass(const acc_topo_t *t, acc_vertex_kind_t ka, int a,
                               acc_vertex_kind_t kb, int b)
{
    acc_topo_path_t p;
    CHECK_OK(acc_topo_vertex_path(t, acc_topo_find(t, ka, a), acc_topo_find(t, kb, b), &p));
    return p.cls;
}

static const acc_topo_vertex_t *gpu(const acc_topo_t *t, int id)
{
    return acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_GPU, id));
}

ACC_TEST(two_dgx_h100_like_nodes)
{
    acc_topo_t *t = synth("nodes=2 gpus=8 nvlink=18 nic=8x400");
    int g;

    CHECK_INT(acc_topo_nodes(t), 2);
    CHECK_INT(acc_topo_gpus_per_node(t), 8);
    CHECK_INT(acc_topo_ranks(t), 16);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), 8);
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 8);
    for (g = 0; g < 8; g++) {
        CHECK_INT(gpu(t, g)->sm, 90);
        CHECK_STR(gpu(t, g)->model, "H100 SXM5 80GB");
        CHECK_INT(acc_topo_nvlinks_to_switches(t, g), 18);
        CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, g)), g / 4);
        /* One NIC per GPU on the GPU's own switch: GPU g's rail is NIC g. */
        CHECK_INT(acc_topo_gpu_nic(t, g), acc_topo_find(t, ACC_VTX_NIC, g));
        CHECK_INT(vclass(t, ACC_VTX_GPU, g, ACC_VTX_NIC, g), ACC_PATH_PIX);
    }
    CHECK_NEAR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 3))->speed_gbps, 400, 0);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 7), ACC_PATH_NVL);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 1), ACC_PATH_NODE);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 4), ACC_PATH_SYS);
    CHECK_NEAR(acc_topo_network(t)->latency_us, 2.7, 1e-12);
    CHECK_INT(acc_topo_network(t)->rail_optimized, 1);
    CHECK_NEAR(acc_topo_network(t)->oversubscription, 1.0, 0);
    /* Nothing assumed; the defaults are spelled out in the source. */
    CHECK_INT(acc_topo_assumption_count(t), 0);
    CHECK_STR(acc_topo_name(t), "synthetic-2x8-h100");
    CHECK_STR(acc_topo_source(t), "nodes=2 gpus=8 arch=h100 nvlink=18 nvswitch=yes nic=8x400 "
                                  "numa=2 pcie=5 switch=1+1 latency=2.7 rail=1 oversub=1");
    CHECK_INT(acc_topo_format(t), ACC_TOPO_FMT_SYNTHETIC);
    acc_topo_destroy(t);
}

ACC_TEST(defaults_follow_the_nvlink_count)
{
    acc_topo_t *t = synth("gpus=8 nvlink=12");
    CHECK_INT(gpu(t, 0)->sm, 80);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 5), 12);
    CHECK_INT(acc_topo_nodes(t), 1);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), 0);
    /* Without NICs each GPU has a switch of its own; Gen4 for sm_80. */
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 8);
    CHECK(strstr(acc_topo_source(t), "arch=a100") && strstr(acc_topo_source(t), "pcie=4") &&
          strstr(acc_topo_source(t), "switch=1+0") && strstr(acc_topo_source(t), "nic=0"));
    acc_topo_destroy(t);

    /* Six links and four GPUs without a switch: two per pair, all-to-all (V100). */
    t = synth("gpus=4 nvlink=6 nvswitch=no");
    CHECK_INT(gpu(t, 0)->sm, 70);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 3), 2);
    CHECK_INT(acc_topo_nvlinks_between(t, 2, 1), 2);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    acc_topo_destroy(t);

    /* Two GPUs share all their links directly (nvswitch defaults to no). */
    t = synth("gpus=2 nvlink=12");
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 12);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 1);
    acc_topo_destroy(t);

    /* No NVLink given: H100 on PCIe only. */
    t = synth("gpus=1");
    CHECK_INT(gpu(t, 0)->sm, 90);
    CHECK_INT(acc_topo_ranks(t), 1);
    acc_topo_destroy(t);
}

ACC_TEST(switch_sharing_rule)
{
    /* p4d-like: 8 GPUs, 4 NICs -> 2 GPUs + 1 NIC per switch. */
    acc_topo_t *t = synth("gpus=8 nvlink=12 nic=4x100");
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 4);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 0), ACC_PATH_PIX);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 1, ACC_VTX_NIC, 0), ACC_PATH_PIX);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 2, ACC_VTX_NIC, 0), ACC_PATH_NODE);
    CHECK_INT(acc_topo_gpu_nic(t, 3), acc_topo_find(t, ACC_VTX_NIC, 1));
    CHECK(strstr(acc_topo_source(t), "switch=2+1") != NULL);
    acc_topo_destroy(t);

    /* p5-like: 32 NICs -> 1 GPU + 4 NICs per switch. */
    t = synth("gpus=8 nvlink=18 nic=32x100");
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 8);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 7, ACC_VTX_NIC, 31), ACC_PATH_PIX);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 7, ACC_VTX_NIC, 27), ACC_PATH_NODE);
    acc_topo_destroy(t);

    /* Explicit layout, and switch=0: devices on the CPU ports, PCIe only. */
    t = synth("gpus=8 arch=l40s nic=2x200 switch=4+1");
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 2);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 3), ACC_PATH_PIX);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 4), ACC_PATH_SYS);
    acc_topo_destroy(t);
    t = synth("gpus=4 arch=sm_89 nic=1x100 switch=0 numa=1");
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 0);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 1), ACC_PATH_NODE);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 0), ACC_PATH_NODE);
    CHECK_INT(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 0))->gdr, 0);
    acc_topo_destroy(t);
}

ACC_TEST(network_keys_are_kept)
{
    acc_topo_t *t = synth("nodes=4 gpus=8 nvlink=18 nic=8x400 fabric=ib-ndr latency=1.5 rail=0 "
                          "oversub=2 pcie=4 numa=4");
    const acc_topo_network_t *n = acc_topo_network(t);
    acc_topo_path_t p;

    CHECK_INT(n->nodes, 4);
    CHECK_STR(n->name, "ib-ndr");
    CHECK_NEAR(n->latency_us, 1.5, 0);
    CHECK_INT(n->rail_optimized, 0);
    CHECK_NEAR(n->oversubscription, 2.0, 0);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 4);
    CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, 7)), 3);
    /* Across nodes: the path leaves by the rail NIC; 400 Gb/s over oversubscription 2. */
    CHECK_OK(acc_topo_path(t, 0, 8 * 3 + 5, &p));
    CHECK_INT(p.cls, ACC_PATH_NET);
    CHECK_NEAR(p.bw, 400.0 / 8 / 2, 1e-9);
    acc_topo_destroy(t);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The 1024-GPU benchmark machine: built and finalized in well under a second (the cluster is
 * one node graph times a count, never a 1024-GPU graph). */
ACC_TEST(benchmark_machine_1024_gpus_builds_fast)
{
    double t0 = now(), dt;
    acc_topo_t *t = synth("nodes=128 gpus=8 nvlink=18 nic=8x400");
    acc_topo_path_t p;

    dt = now() - t0;
    CHECK_INT(acc_topo_ranks(t), 1024);
    CHECK_OK(acc_topo_path(t, 0, 1023, &p));
    CHECK_INT(p.cls, ACC_PATH_NET);
    CHECK_NEAR(p.bw, 50.0, 1e-9);
    CHECK_OK(acc_topo_path(t, 1016, 1023, &p));
    CHECK_INT(p.cls, ACC_PATH_NVL);
    /* Timed in bench_topo, not asserted here. */
    printf("building 1024 GPUs took %.3f s\n", dt);
    acc_topo_destroy(t);
    t = synth("nodes=1024 gpus=64 nvlink=18 nic=64x400");
    CHECK_INT(acc_topo_ranks(t), 65536);
    acc_topo_destroy(t);
}

ACC_TEST(bad_descriptions_name_the_key)
{
    static const struct {
        const char *desc;
        acc_status_t st;
        const char *fragment;
    } cases[] = {
        {"gpus=8 foo=1", ACC_ERR_PARSE, "unknown key 'foo'"},
        {"gpus=8 nodes", ACC_ERR_PARSE, "'nodes' has no '='"},
        {"gpus=8 gpus=4", ACC_ERR_PARSE, "key 'gpus' given twice"},
        {"nvlink=18", ACC_ERR_PARSE, "'gpus' is required"},
        {"", ACC_ERR_PARSE, "'gpus' is required"},
        {"gpus=0", ACC_ERR_INVALID, "gpus=0: expected"},
        {"gpus=-1", ACC_ERR_INVALID, "gpus=-1: expected"},
        {"gpus=65", ACC_ERR_INVALID, "gpus=65: expected"},
        {"gpus=8x", ACC_ERR_INVALID, "gpus=8x: expected"},
        {"gpus=", ACC_ERR_INVALID, "gpus=: expected"},
        {"nodes=0 gpus=8", ACC_ERR_INVALID, "nodes=0: expected a whole number 1 to 131072"},
        {"nodes=131073 gpus=8 nic=8x400", ACC_ERR_INVALID, "nodes=131073"},
        {"nodes=2 gpus=8", ACC_ERR_INVALID, "nodes=2 needs nic=COUNTxGBPS"},
        {"nodes=2 gpus=8 nic=0", ACC_ERR_INVALID, "nic=0"},
        {"gpus=8 nic=8by400", ACC_ERR_INVALID, "nic=8by400: expected COUNTxGBPS"},
        {"gpus=8 nic=0x400", ACC_ERR_INVALID, "nic=0x400"},
        {"gpus=8 nic=8x-1", ACC_ERR_INVALID, "nic=8x-1"},
        {"gpus=8 nic=129x100", ACC_ERR_INVALID, "nic=129x100"},
        {"gpus=8 arch=p100", ACC_ERR_INVALID, "arch=p100: expected sm_70"},
        {"gpus=8 nvlink=18 arch=v100", ACC_ERR_INVALID, "nvlink=18: a v100 GPU has 6"},
        {"gpus=8 nvlink=4 arch=l40s", ACC_ERR_INVALID, "nvlink=4"},
        {"gpus=8 nvlink=65", ACC_ERR_INVALID, "nvlink=65"},
        {"gpus=8 nvswitch=maybe", ACC_ERR_INVALID, "nvswitch=maybe: expected yes or no"},
        {"gpus=8 nvswitch=yes", ACC_ERR_INVALID, "nvswitch=yes needs nvlink"},
        {"gpus=8 nvlink=18 nvswitch=no", ACC_ERR_INVALID, "divisible by gpus-1 = 7"},
        {"gpus=1 nvlink=6 arch=v100", ACC_ERR_INVALID, "nvlink=6 with one GPU"},
        {"gpus=8 numa=0", ACC_ERR_INVALID, "numa=0"},
        {"gpus=8 pcie=7", ACC_ERR_INVALID, "pcie=7: expected a PCIe generation"},
        {"gpus=8 nic=8x400 switch=2+1", ACC_ERR_INVALID, "switch=2+1"},
        {"gpus=8 switch=3+0", ACC_ERR_INVALID, "switch=3+0"},
        {"gpus=8 switch=two", ACC_ERR_INVALID, "switch=two: expected GPUS+NICS"},
        {"gpus=8 fabric=a/b", ACC_ERR_INVALID, "fabric=a/b"},
        {"gpus=8 latency=-1", ACC_ERR_INVALID, "latency=-1"},
        {"gpus=8 latency=fast", ACC_ERR_INVALID, "latency=fast"},
        {"gpus=8 rail=2", ACC_ERR_INVALID, "rail=2: expected 1"},
        {"gpus=8 oversub=0.5", ACC_ERR_INVALID, "oversub=0.5: expected an oversubscription"},
        {"gpus=8 oversub=nan", ACC_ERR_INVALID, "oversub=nan"},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        acc_topo_t *t = NULL;
        acc_status_t st = acc_topo_load_synthetic(cases[i].desc, &t);
        CHECK_MSG(st == cases[i].st, "\"%s\" gave %s (%s), expected %s", cases[i].desc,
                  acc_status_name(st), acc_error_message(), acc_status_name(cases[i].st));
        CHECK_MSG(strstr(acc_error_message(), cases[i].fragment) != NULL,
                  "\"%s\": message \"%s\" lacks \"%s\"", cases[i].desc, acc_error_message(),
                  cases[i].fragment);
        CHECK_MSG(strstr(acc_error_message(), "synthetic topology") != NULL,
                  "\"%s\": message \"%s\" does not say what failed", cases[i].desc,
                  acc_error_message());
        CHECK(t == NULL);
    }
}

ACC_TEST(same_machine_same_fingerprint)
{
    acc_topo_t *a = synth("nodes=2 gpus=8 nvlink=18 nic=8x400");
    acc_topo_t *b = synth("  gpus=8   nic=8x400 nodes=2\tnvlink=18 arch=sm_90 nvswitch=yes ");
    acc_topo_t *c = synth("nodes=2 gpus=8 nvlink=18 nic=8x200");
    char fa[ACC_SHA256_HEX_LEN + 1], fb[ACC_SHA256_HEX_LEN + 1], fc[ACC_SHA256_HEX_LEN + 1];

    CHECK_OK(acc_topo_fingerprint(a, fa));
    CHECK_OK(acc_topo_fingerprint(b, fb));
    CHECK_OK(acc_topo_fingerprint(c, fc));
    CHECK_STR(fa, fb);
    CHECK(strcmp(fa, fc) != 0);
    CHECK_STR(acc_topo_source(a), acc_topo_source(b));
    acc_topo_destroy(a);
    acc_topo_destroy(b);
    acc_topo_destroy(c);
}
