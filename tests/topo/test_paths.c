/* Paths, classes, rails, invariants and the fingerprint on topologies built through the API. */
#include "acc_test.h"
#include "acc_topo.h"
#include "internal.h"

/* A two-socket node: per socket one host bridge, under it two PCIe switches, each with one GPU
 * and one NIC.  nvlink: 0 none, 1 an NVSwitch with `links` per GPU, 2 a chain GPU0-1-2-3. */
static acc_topo_t *two_socket(int nvlink, int links, const char *bus_prefix, int nic_order)
{
    acc_topo_t *t;
    int cpu[2], hb[2], sw[4], gpu[4], nic[4], i, nvs;

    CHECK_OK(acc_topo_create(&t));
    for (i = 0; i < 2; i++) {
        CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_CPU, &cpu[i]));
        snprintf(acc_topo_vertex_mut(t, cpu[i])->cpu_vendor, 32, "GenuineIntel");
    }
    CHECK_OK(topo_connect_cpus(t));
    for (i = 0; i < 2; i++) {
        CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_PCISW, &hb[i]));
        acc_topo_vertex_mut(t, hb[i])->host_bridge = 1;
        CHECK_OK(topo_add_pcie(t, hb[i], cpu[i], 5, 16));
    }
    for (i = 0; i < 4; i++) {
        CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_PCISW, &sw[i]));
        CHECK_OK(topo_add_pcie(t, sw[i], hb[i / 2], 5, 16));
        CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_GPU, &gpu[i]));
        acc_topo_vertex_mut(t, gpu[i])->device_id = 0x2330;
        acc_topo_vertex_mut(t, gpu[i])->numa = i / 2;
        snprintf(acc_topo_vertex_mut(t, gpu[i])->busid, 24, "%s:%02x:00.0", bus_prefix,
                 0x10 + 0x10 * i);
        CHECK_OK(topo_fill_gpu_defaults(t, gpu[i]));
        CHECK_OK(topo_add_pcie(t, gpu[i], sw[i], 5, 16));
    }
    for (i = 0; i < 4; i++) {
        int at = nic_order ? 3 - i : i;
        CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_NIC, &nic[i]));
        acc_topo_vertex_mut(t, nic[i])->speed_gbps = 400;
        acc_topo_vertex_mut(t, nic[i])->numa = at / 2;
        CHECK_OK(topo_add_pcie(t, nic[i], sw[at], 5, 16));
    }
    if (nvlink == 1) {
        CHECK_OK(topo_nvswitch(t, &nvs));
        for (i = 0; i < 4; i++)
            CHECK_OK(topo_add_nvlinks(t, gpu[i], nvs, links));
    } else if (nvlink == 2) {
        for (i = 0; i < 3; i++)
            CHECK_OK(topo_add_nvlinks(t, gpu[i], gpu[i + 1], links));
    }
    return t;
}

static acc_topo_path_t vpath(const acc_topo_t *t, acc_vertex_kind_t ka, int a, acc_vertex_kind_t kb,
                             int b)
{
    acc_topo_path_t p;
    CHECK_OK(acc_topo_vertex_path(t, acc_topo_find(t, ka, a), acc_topo_find(t, kb, b), &p));
    return p;
}

ACC_TEST(pcie_classes_follow_the_tree)
{
    acc_topo_t *t = two_socket(0, 0, "0000", 0);
    CHECK_OK(acc_topo_finalize(t));
    CHECK_INT(vpath(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 0).cls, ACC_PATH_PIX);
    CHECK_INT(vpath(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 1).cls, ACC_PATH_PHB);
    CHECK_INT(vpath(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 1).cls, ACC_PATH_PHB);
    CHECK_INT(vpath(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 2).cls, ACC_PATH_SYS);
    CHECK_INT(vpath(t, ACC_VTX_GPU, 1, ACC_VTX_NIC, 3).cls, ACC_PATH_SYS);
    CHECK_INT(vpath(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 0).cls, ACC_PATH_LOC);
    /* Gen5 x16 is 63 GB/s per direction. */
    CHECK_NEAR(vpath(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 0).bw, 63.0, 0.1);
    CHECK_INT(vpath(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 0).hops, 2);
    CHECK_NEAR(vpath(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 0).lat_us, 2 * TOPO_LAT_PCIE_US, 1e-9);
    CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, 3)), 1);
    acc_topo_destroy(t);
}

ACC_TEST(nvswitch_paths_are_nvl_with_link_bandwidth)
{
    acc_topo_t *t = two_socket(1, 18, "0000", 0);
    acc_topo_path_t p;
    CHECK_OK(acc_topo_finalize(t));
    p = vpath(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 3);
    CHECK_INT(p.cls, ACC_PATH_NVL);
    CHECK_NEAR(p.bw, 18 * 25.0, 1e-9); /* NVLink4: 25 GB/s per link per direction */
    CHECK_INT(p.hops, 2);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 2), 18);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 0);
    acc_topo_destroy(t);
}

ACC_TEST(nvlink_through_a_gpu_is_nvb)
{
    acc_topo_t *t = two_socket(2, 4, "0000", 0);
    CHECK_OK(acc_topo_finalize(t));
    CHECK_INT(vpath(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 1).cls, ACC_PATH_NVL);
    CHECK_INT(vpath(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 2).cls, ACC_PATH_NVB);
    CHECK_NEAR(vpath(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 2).bw, 100.0, 1e-9);
    /* A NIC is never reached through a GPU. */
    CHECK_INT(vpath(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 2).cls, ACC_PATH_SYS);
    acc_topo_destroy(t);
}

/* The links of a best path chain from one end to the other and give its hops, bottleneck and
 * latency: the simulator routes transfers over them. */
ACC_TEST(route_links_chain_the_best_path)
{
    acc_topo_t *t = two_socket(2, 4, "0000", 0);
    const int *links;
    int n, i, va, vb, at;
    double bw = 1e300, lat = 0;
    acc_topo_path_t p;

    CHECK_OK(acc_topo_finalize(t));
    va = acc_topo_find(t, ACC_VTX_GPU, 0);
    vb = acc_topo_find(t, ACC_VTX_GPU, 2);
    CHECK_OK(acc_topo_vertex_path(t, va, vb, &p));
    CHECK_OK(acc_topo_vertex_route(t, va, vb, &links, &n));
    CHECK_INT(n, p.hops);
    CHECK_INT(n, 2); /* GPU0 - GPU1 - GPU2 over NVLink (NVB) */
    for (i = 0, at = va; i < n; i++) {
        const acc_topo_link_t *l = acc_topo_link(t, links[i]);
        CHECK_INT(l->from, at);
        CHECK_INT(l->kind, ACC_LINK_NVLINK);
        at = l->to;
        bw = l->bw < bw ? l->bw : bw;
        lat += l->lat_us;
    }
    CHECK_INT(at, vb);
    CHECK_NEAR(bw, p.bw, 1e-9);
    CHECK_NEAR(lat, p.lat_us, 1e-9);
    CHECK_OK(acc_topo_vertex_route(t, va, va, &links, &n));
    CHECK_INT(n, 0);
    CHECK_ERR(acc_topo_vertex_route(t, va, 999, &links, &n), ACC_ERR_INVALID);
    acc_topo_destroy(t);
}

ACC_TEST(rails_pair_each_gpu_with_its_pix_nic)
{
    acc_topo_t *t = two_socket(1, 18, "0000", 1);
    int g;
    CHECK_OK(acc_topo_finalize(t));
    for (g = 0; g < 4; g++) {
        int nic = acc_topo_gpu_nic(t, g);
        acc_topo_path_t p;
        CHECK(nic >= 0);
        CHECK_OK(acc_topo_vertex_path(t, acc_topo_find(t, ACC_VTX_GPU, g), nic, &p));
        CHECK_INT(p.cls, ACC_PATH_PIX);
    }
    acc_topo_destroy(t);
}

ACC_TEST(cluster_paths_cross_the_network)
{
    acc_topo_t *t = two_socket(1, 18, "0000", 0);
    acc_topo_network_t net = {4, "ib-ndr", 2.0, 1, 2.0};
    acc_topo_path_t p, *m;
    int a, b;

    CHECK_OK(acc_topo_set_network(t, &net));
    CHECK_OK(acc_topo_finalize(t));
    CHECK_INT(acc_topo_ranks(t), 16);
    CHECK_OK(acc_topo_path(t, 1, 6, &p));
    CHECK_INT(p.cls, ACC_PATH_NET);
    CHECK_NEAR(p.bw, 400.0 / 8 / 2.0, 1e-9); /* NIC line rate over oversubscription */
    CHECK_NEAR(p.lat_us, 2.0 + 4 * TOPO_LAT_PCIE_US, 1e-9);
    CHECK_OK(acc_topo_path(t, 5, 6, &p));
    CHECK_INT(p.cls, ACC_PATH_NVL);
    CHECK_ERR(acc_topo_path(t, 0, 16, &p), ACC_ERR_RANGE);
    CHECK_OK(acc_topo_path_matrix(t, &m));
    for (a = 0; a < 16; a++) {
        for (b = 0; b < 16; b++) {
            CHECK_OK(acc_topo_path(t, a, b, &p));
            CHECK_INT(m[a * 16 + b].cls, p.cls);
            CHECK_NEAR(m[a * 16 + b].bw, p.bw, 0);
        }
    }
    acc_mem_free(m);
    acc_topo_destroy(t);
}

ACC_TEST(fingerprint_ignores_bus_ids_and_nic_order)
{
    acc_topo_t *a = two_socket(1, 18, "0000", 0), *b = two_socket(1, 18, "0003", 1);
    acc_topo_t *c = two_socket(1, 12, "0000", 0), *d;
    char fa[65], fb[65], fc[65], fd[65];

    CHECK_OK(acc_topo_finalize(a));
    CHECK_OK(acc_topo_finalize(b));
    CHECK_OK(acc_topo_finalize(c));
    CHECK_OK(acc_topo_fingerprint(a, fa));
    CHECK_OK(acc_topo_fingerprint(b, fb));
    CHECK_OK(acc_topo_fingerprint(c, fc));
    CHECK_STR(fa, fb);
    CHECK(strcmp(fa, fc) != 0);
    CHECK_OK(acc_topo_clone(a, &d));
    CHECK_OK(acc_topo_fingerprint(d, fd));
    CHECK_STR(fa, fd);
    acc_topo_destroy(a);
    acc_topo_destroy(b);
    acc_topo_destroy(c);
    acc_topo_destroy(d);
}

ACC_TEST(check_rejects_impossible_machines)
{
    acc_topo_t *t = two_socket(1, 20, "0000", 0);
    int nvs2, nic;
    CHECK_ERR(acc_topo_finalize(t), ACC_ERR_TOPO);
    CHECK_MSG_HAS("GPU0: 20 NVLinks");
    acc_topo_destroy(t);

    t = two_socket(1, 18, "0000", 0);
    CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_NVSWITCH, &nvs2));
    CHECK_ERR(acc_topo_finalize(t), ACC_ERR_TOPO);
    CHECK_MSG_HAS("folded");
    acc_topo_destroy(t);

    t = two_socket(0, 0, "0000", 0);
    nic = acc_topo_find(t, ACC_VTX_NIC, 0);
    CHECK_OK(acc_topo_add_link(t, acc_topo_find(t, ACC_VTX_GPU, 0), nic, ACC_LINK_NVLINK, 1, 1, 0));
    CHECK_ERR(acc_topo_finalize(t), ACC_ERR_TOPO);
    CHECK_MSG_HAS("NVLink GPU0 - NIC0");
    acc_topo_destroy(t);

    t = two_socket(0, 0, "0000", 0);
    snprintf(acc_topo_vertex_mut(t, acc_topo_find(t, ACC_VTX_GPU, 1))->busid, 24, "0000:10:00.0");
    CHECK_ERR(acc_topo_finalize(t), ACC_ERR_TOPO);
    CHECK_MSG_HAS("share bus id 0000:10:00.0");
    acc_topo_destroy(t);
}

ACC_TEST(unreachable_gpu_is_an_error)
{
    acc_topo_t *t;
    int g0, g1, cpu;
    CHECK_OK(acc_topo_create(&t));
    CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_CPU, &cpu));
    CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_GPU, &g0));
    CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_GPU, &g1));
    acc_topo_vertex_mut(t, g0)->sm = 80;
    acc_topo_vertex_mut(t, g1)->sm = 80;
    CHECK_OK(topo_add_pcie(t, g0, cpu, 4, 16));
    CHECK_ERR(acc_topo_finalize(t), ACC_ERR_TOPO);
    CHECK_MSG_HAS("GPU0 cannot reach GPU1");
    acc_topo_destroy(t);
}

ACC_TEST(cluster_without_nics_is_an_error)
{
    acc_topo_t *t;
    int g0, cpu;
    acc_topo_network_t net = {2, "", 1.0, 0, 1.0};
    CHECK_OK(acc_topo_create(&t));
    CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_CPU, &cpu));
    CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_GPU, &g0));
    acc_topo_vertex_mut(t, g0)->sm = 90;
    CHECK_OK(topo_add_pcie(t, g0, cpu, 5, 16));
    CHECK_OK(acc_topo_set_network(t, &net));
    CHECK_ERR(acc_topo_finalize(t), ACC_ERR_TOPO);
    CHECK_MSG_HAS("needs NICs");
    net.nodes = 0;
    acc_topo_destroy(t);
    CHECK_OK(acc_topo_create(&t));
    CHECK_ERR(acc_topo_set_network(t, &net), ACC_ERR_INVALID);
    acc_topo_destroy(t);
}

ACC_TEST(gpu_facts_come_from_pci_id_with_assumptions)
{
    acc_topo_t *t;
    int g;
    const acc_topo_vertex_t *v;
    CHECK_OK(acc_topo_create(&t));
    CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_GPU, &g));
    acc_topo_vertex_mut(t, g)->device_id = 0x20b0;
    CHECK_OK(topo_fill_gpu_defaults(t, g));
    v = acc_topo_vertex(t, g);
    CHECK_STR(v->model, "A100 SXM4 40GB");
    CHECK_INT(v->sm, 80);
    CHECK_INT(v->sm_count, 108);
    CHECK(acc_topo_assumption_count(t) >= 3);
    acc_topo_destroy(t);

    CHECK_OK(acc_topo_create(&t));
    CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_GPU, &g));
    snprintf(acc_topo_vertex_mut(t, g)->model, 64, "Mystery GPU 9000");
    CHECK_ERR(topo_fill_gpu_defaults(t, g), ACC_ERR_TOPO);
    CHECK_MSG_HAS("Mystery GPU 9000");
    acc_topo_destroy(t);
    CHECK(acc_topo_gpu_model_by_name("NVIDIA H100 80GB HBM3")->sm == 90);
    CHECK(acc_topo_gpu_model_by_name("Tesla V100-SXM2-16GB")->device_id == 0x1db1);
    CHECK_NEAR(acc_topo_pcie_bw(3, 16), 15.75, 0.01);
}

/* The part behind a GPU vertex, whose datasheet memory bandwidth the simulator uses: the PCI id's
 * row, else the generation's SXM part, the larger-memory one where the memory says so. */
ACC_TEST(gpu_model_of_a_vertex_by_id_then_generation)
{
    acc_topo_vertex_t v;
    const acc_gpu_model_t *models;
    size_t n, i;

    memset(&v, 0, sizeof(v));
    v.device_id = 0x2331;
    v.sm = 90;
    CHECK_STR(acc_topo_gpu_model_of(&v)->model, "H100 PCIe 80GB");
    CHECK_NEAR(acc_topo_gpu_model_of(&v)->mem_gbs, 2000, 0.5);
    v.device_id = 0;
    CHECK_STR(acc_topo_gpu_model_of(&v)->model, "H100 SXM5 80GB");
    CHECK_NEAR(acc_topo_gpu_model_of(&v)->mem_gbs, 3350, 0.5);
    v.mem_bytes = 141ull << 30;
    CHECK_STR(acc_topo_gpu_model_of(&v)->model, "H200 SXM 141GB");
    v.sm = 80;
    CHECK_STR(acc_topo_gpu_model_of(&v)->model, "A100 SXM4 80GB");
    v.mem_bytes = 40ull << 30;
    CHECK_STR(acc_topo_gpu_model_of(&v)->model, "A100 SXM4 40GB");
    v.sm = 87; /* between rows: the lower one */
    CHECK_STR(acc_topo_gpu_model_of(&v)->model, "A10");
    v.sm = 10;
    CHECK(acc_topo_gpu_model_of(&v) == NULL);
    models = acc_topo_gpu_models(&n);
    CHECK(n > 20);
    for (i = 0; i < n; i++)
        CHECK_MSG(models[i].mem_gbs > 100, "%s has no memory bandwidth", models[i].model);
}

ACC_TEST(format_detection_reads_content)
{
    static const char hwloc[] = "<?xml version=\"1.0\"?>\n<!DOCTYPE topology SYSTEM \"h.dtd\">\n"
                                "<topology version=\"2.0\">";
    static const char nccl[] = "<!-- dump -->\n<system version=\"1\">";
    static const char graph[] = "<graphs version=\"1\"><graph id=\"0\">";
    static const char smi[] = "\tGPU0\tGPU1\n\x1b[4mGPU0\x1b[0m\t X \tNV12\n";
    static const char yaml[] = "# acc\nversion: 1\nnode: dgx-h100\n";
    CHECK_INT(acc_topo_detect_format(hwloc, sizeof(hwloc) - 1), ACC_TOPO_FMT_HWLOC_XML);
    CHECK_INT(acc_topo_detect_format(nccl, sizeof(nccl) - 1), ACC_TOPO_FMT_NCCL_XML);
    CHECK_INT(acc_topo_detect_format(graph, sizeof(graph) - 1), ACC_TOPO_FMT_NCCL_GRAPH);
    CHECK_INT(acc_topo_detect_format(smi, sizeof(smi) - 1), ACC_TOPO_FMT_NVIDIA_SMI);
    CHECK_INT(acc_topo_detect_format(yaml, sizeof(yaml) - 1), ACC_TOPO_FMT_YAML);
    CHECK_INT(acc_topo_detect_format("hello", 5), ACC_TOPO_FMT_UNKNOWN);
    CHECK_INT(acc_topo_detect_format("", 0), ACC_TOPO_FMT_UNKNOWN);
}
