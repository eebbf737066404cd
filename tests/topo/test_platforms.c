/* The shipped platforms describe the machines their comments cite: GPU count and generation,
 * NVLinks (into the switch fabric, or per pair on the DGX-1 mesh), NICs, NUMA nodes, node count
 * and the PCIe classes the captures show.  Different machines have different fingerprints. */
#include "acc_test.h"
#include "acc_topo.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int gpus, sm, nvl_to_switch, nics;
    double nic_gbps;
    int numa, nodes;
    double mem_gib;
} expect_t;

static const expect_t platforms[] = {
    {"dgx-h100", 8, 90, 18, 8, 400, 2, 1, 80},
    {"hgx-h200", 8, 90, 18, 8, 400, 2, 1, 141},
    {"dgx-a100", 8, 80, 12, 8, 200, 8, 1, 40},
    {"azure-ndv5", 8, 90, 18, 8, 400, 2, 1, 80},
    {"aws-p4d", 8, 80, 12, 4, 100, 2, 1, 40},
    {"aws-p5", 8, 90, 18, 32, 100, 2, 1, 80},
    {"aws-p5en", 8, 90, 18, 16, 200, 2, 1, 141},
    {"aws-p6-b200", 8, 100, 18, 8, 400, 2, 1, 180},
    {"dgx-b200", 8, 100, 18, 8, 400, 2, 1, 180},
    {"gcp-a3-mega", 8, 90, 18, 8, 200, 2, 1, 80},
    {"oci-h100", 8, 90, 18, 16, 200, 2, 1, 80},
    {"gb200-nvl72", 72, 100, 18, 72, 400, 36, 1, 186},
    {"pcie-8gpu", 8, 89, 0, 2, 200, 2, 1, 48},
    {"dgx-h100-2node", 8, 90, 18, 8, 400, 2, 2, 80},
    {"p4d-4node", 8, 80, 12, 4, 100, 2, 4, 40},
    {"dawnbench-v100-16node", 8, 70, 0, 1, 32, 2, 16, 16},
};
#define NPLATFORMS (sizeof(platforms) / sizeof(platforms[0]))

static acc_topo_t *load(const char *name)
{
    acc_topo_t *t = NULL;
    acc_status_t st;
    setenv("ACC_PLATFORM_DIR", acc_test_src("schedules/platforms"), 1);
    st = acc_topo_load_platform(name, &t);
    CHECK_MSG(st == ACC_OK, "%s: %s", name, acc_error_message());
    return t;
}

static acc_path_class_t vclass(const acc_topo_t *t, acc_vertex_kind_t ka, int a,
                               acc_vertex_kind_t kb, int b)
{
    acc_topo_path_t p;
    CHECK_OK(acc_topo_vertex_path(t, acc_topo_find(t, ka, a), acc_topo_find(t, kb, b), &p));
    return p.cls;
}

ACC_TEST(counts_match_the_cited_machines)
{
    size_t i;
    for (i = 0; i < NPLATFORMS; i++) {
        const expect_t *e = &platforms[i];
        acc_topo_t *t = load(e->name);
        int g, k;
        CHECK_MSG(acc_topo_gpus_per_node(t) == e->gpus, "%s: %d GPUs", e->name,
                  acc_topo_gpus_per_node(t));
        CHECK_MSG(acc_topo_nodes(t) == e->nodes, "%s: %d nodes", e->name, acc_topo_nodes(t));
        CHECK_INT(acc_topo_ranks(t), e->gpus * e->nodes);
        CHECK_MSG(acc_topo_count(t, ACC_VTX_CPU) == e->numa, "%s: %d NUMA nodes", e->name,
                  acc_topo_count(t, ACC_VTX_CPU));
        CHECK_MSG(acc_topo_count(t, ACC_VTX_NIC) == e->nics, "%s: %d NICs", e->name,
                  acc_topo_count(t, ACC_VTX_NIC));
        CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), e->nvl_to_switch ? 1 : 0);
        for (g = 0; g < e->gpus; g++) {
            const acc_topo_vertex_t *v = acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_GPU, g));
            CHECK_MSG(v->sm == e->sm, "%s GPU%d: sm_%d", e->name, g, v->sm);
            CHECK_NEAR((double)v->mem_bytes / (1 << 30), e->mem_gib, 0);
            CHECK_MSG(acc_topo_nvlinks_to_switches(t, g) == e->nvl_to_switch,
                      "%s GPU%d: %d NVLinks to the switches", e->name, g,
                      acc_topo_nvlinks_to_switches(t, g));
            CHECK_MSG(acc_topo_gpu_nic(t, g) >= 0, "%s GPU%d has no rail NIC", e->name, g);
        }
        for (k = 0; k < e->nics; k++)
            CHECK_NEAR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, k))->speed_gbps,
                       e->nic_gbps, 0);
        acc_topo_destroy(t);
    }
}

/* The DGX-1 hybrid cube mesh: six NVLinks per GPU, the pairs of NVIDIA/nccl#671 and the
 * TPDS'20 interconnect study, no NVSwitch. */
ACC_TEST(dgx1_hybrid_cube_mesh)
{
    static const int links[8][8] = {
        {0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0}, {1, 2, 0, 2, 0, 0, 1, 0},
        {2, 1, 2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
        {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0},
    };
    acc_topo_t *t = load("dawnbench-v100-16node");
    int a, b;

    for (a = 0; a < 8; a++) {
        int sum = 0;
        for (b = 0; b < 8; b++) {
            CHECK_MSG(acc_topo_nvlinks_between(t, a, b) == links[a][b],
                      "GPU%d-GPU%d: %d NVLinks, expected %d", a, b,
                      acc_topo_nvlinks_between(t, a, b), links[a][b]);
            sum += acc_topo_nvlinks_between(t, a, b);
        }
        CHECK_INT(sum, 6);
    }
    /* Direct neighbours are NVL; GPU0 reaches GPU5 through another GPU (NVB). */
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 3), ACC_PATH_NVL);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 5), ACC_PATH_NVB);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 3, ACC_VTX_GPU, 4), ACC_PATH_NVB);
    {
        const acc_topo_network_t *n = acc_topo_network(t);
        CHECK_STR(n->name, "vpc");
        CHECK_INT(n->rail_optimized, 0);
        CHECK_INT(acc_topo_nodes(t), 16);
    }
    acc_topo_destroy(t);
}

ACC_TEST(pcie_classes_match_the_captures)
{
    acc_topo_t *t = load("dgx-a100");
    /* nvidia-smi on a DGX A100: GPU0 and GPU1 PXB to NIC0 and NIC1, SYS to the other NICs; the
     * NICs of one complex PXB to each other; GPU NUMA nodes 3, 1, 7, 5. */
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 0), ACC_PATH_PXB);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 1, ACC_VTX_NIC, 0), ACC_PATH_PXB);
    CHECK_INT(vclass(t, ACC_VTX_NIC, 0, ACC_VTX_NIC, 1), ACC_PATH_PXB);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 2), ACC_PATH_SYS);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 6, ACC_VTX_NIC, 7), ACC_PATH_PXB);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 5), ACC_PATH_NVL);
    CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, 0)), 3);
    CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, 2)), 1);
    CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, 4)), 7);
    CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, 6)), 5);
    acc_topo_destroy(t);

    /* HGX H100 capture: each GPU PIX to its NIC, NODE to the other NICs of its socket. */
    t = load("dgx-h100");
    CHECK_INT(vclass(t, ACC_VTX_GPU, 2, ACC_VTX_NIC, 2), ACC_PATH_PIX);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 2, ACC_VTX_NIC, 3), ACC_PATH_NODE);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 2, ACC_VTX_NIC, 5), ACC_PATH_SYS);
    CHECK_INT(acc_topo_gpu_nic(t, 5), acc_topo_find(t, ACC_VTX_NIC, 5));
    CHECK_STR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 0))->dev_name, "mlx5_0");
    acc_topo_destroy(t);

    /* p4d: two GPUs and one EFA per switch, so GPUs 0 and 1 share rail NIC0. */
    t = load("aws-p4d");
    CHECK_INT(vclass(t, ACC_VTX_GPU, 1, ACC_VTX_NIC, 0), ACC_PATH_PIX);
    CHECK_INT(acc_topo_gpu_nic(t, 0), acc_topo_find(t, ACC_VTX_NIC, 0));
    CHECK_INT(acc_topo_gpu_nic(t, 1), acc_topo_find(t, ACC_VTX_NIC, 0));
    CHECK_INT(acc_topo_gpu_nic(t, 7), acc_topo_find(t, ACC_VTX_NIC, 3));
    CHECK_INT(acc_topo_find_busid(t, "0000:90:1c.0"), acc_topo_find(t, ACC_VTX_GPU, 4));
    acc_topo_destroy(t);

    /* p5: one GPU and four EFA per switch. */
    t = load("aws-p5");
    CHECK_INT(vclass(t, ACC_VTX_GPU, 3, ACC_VTX_NIC, 12), ACC_PATH_PIX);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 3, ACC_VTX_NIC, 15), ACC_PATH_PIX);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 3, ACC_VTX_NIC, 16), ACC_PATH_SYS);
    acc_topo_destroy(t);

    /* Azure ND H100 v5: GPU k and NIC k behind the same virtual switch. */
    t = load("azure-ndv5");
    CHECK_INT(vclass(t, ACC_VTX_GPU, 6, ACC_VTX_NIC, 6), ACC_PATH_PIX);
    CHECK_INT(acc_topo_find_busid(t, "000a:00:00.0"), acc_topo_find(t, ACC_VTX_GPU, 5));
    acc_topo_destroy(t);

    /* PCIe-only server: pairs behind switches, no NVLink anywhere. */
    t = load("pcie-8gpu");
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 1), ACC_PATH_PIX);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 2), ACC_PATH_NODE);
    CHECK_INT(vclass(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 7), ACC_PATH_SYS);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 0);
    acc_topo_destroy(t);
}

ACC_TEST(cluster_networks)
{
    acc_topo_t *t = load("dgx-h100-2node");
    acc_topo_path_t p;
    CHECK_STR(acc_topo_network(t)->name, "ib-ndr");
    CHECK_INT(acc_topo_network(t)->rail_optimized, 1);
    CHECK_NEAR(acc_topo_network(t)->latency_us, 2.7, 0);
    CHECK_OK(acc_topo_path(t, 3, 11, &p));
    CHECK_INT(p.cls, ACC_PATH_NET);
    CHECK_NEAR(p.bw, 50.0, 1e-9); /* one 400 Gb/s NIC */
    acc_topo_destroy(t);

    t = load("p4d-4node");
    CHECK_STR(acc_topo_network(t)->name, "efa");
    CHECK_INT(acc_topo_network(t)->rail_optimized, 0);
    CHECK_OK(acc_topo_path(t, 0, 31, &p));
    CHECK_NEAR(p.bw, 12.5, 1e-9); /* one 100 Gb/s EFA */
    acc_topo_destroy(t);
}

ACC_TEST(different_machines_have_different_fingerprints)
{
    char fp[NPLATFORMS][ACC_SHA256_HEX_LEN + 1];
    size_t i, j;

    for (i = 0; i < NPLATFORMS; i++) {
        acc_topo_t *t = load(platforms[i].name);
        CHECK_OK(acc_topo_fingerprint(t, fp[i]));
        acc_topo_destroy(t);
    }
    for (i = 0; i < NPLATFORMS; i++) {
        for (j = i + 1; j < NPLATFORMS; j++) {
            /* ND H100 v5 is an HGX H100 board with one 400 Gb/s NIC per GPU behind a shared
             * switch on two sockets: the same machine as far as schedules are concerned; so is
             * the p6-b200 (its 3,200 Gb/s of EFA taken as eight 400 Gb/s) to the DGX B200. */
            int same = (strcmp(platforms[i].name, "dgx-h100") == 0 &&
                        strcmp(platforms[j].name, "azure-ndv5") == 0) ||
                       (strcmp(platforms[i].name, "aws-p6-b200") == 0 &&
                        strcmp(platforms[j].name, "dgx-b200") == 0);
            CHECK_MSG((strcmp(fp[i], fp[j]) == 0) == same, "%s and %s: fingerprints %s",
                      platforms[i].name, platforms[j].name, same ? "differ" : "are equal");
        }
    }
}

/* The DGX H100 description and the IBM NCCL dump of an 8x H100 SXM machine agree on what NCCL
 * sees: eight sm_90 GPUs, each with 18 NVLinks into the NVSwitch fabric. */
ACC_TEST(dgx_h100_agrees_with_ibm_nccl_dump)
{
    acc_topo_t *yaml = load("dgx-h100"), *xml = NULL;
    int g;

    CHECK_OK(acc_topo_load_file(acc_test_data("topologies/nccl-xml/ibm-vpc-gx3d-8xh100-topo.xml"),
                                &xml));
    CHECK_INT(acc_topo_gpus_per_node(xml), acc_topo_gpus_per_node(yaml));
    CHECK_INT(acc_topo_gpus_per_node(yaml), 8);
    for (g = 0; g < 8; g++) {
        CHECK_INT(acc_topo_nvlinks_to_switches(xml, g), 18);
        CHECK_INT(acc_topo_nvlinks_to_switches(yaml, g), acc_topo_nvlinks_to_switches(xml, g));
        CHECK_INT(acc_topo_vertex(xml, acc_topo_find(xml, ACC_VTX_GPU, g))->sm,
                  acc_topo_vertex(yaml, acc_topo_find(yaml, ACC_VTX_GPU, g))->sm);
    }
    CHECK_INT(acc_topo_count(xml, ACC_VTX_NIC), acc_topo_count(yaml, ACC_VTX_NIC));
    CHECK_INT(acc_topo_count(xml, ACC_VTX_CPU), acc_topo_count(yaml, ACC_VTX_CPU));
    acc_topo_destroy(yaml);
    acc_topo_destroy(xml);
}

/* What a user of each new platform checks first: the NIC bandwidth each GPU has to itself (the
 * node's NIC line rate over its GPUs), the NICs each GPU stripes across, and the NVLink domain:
 * every pair of GPUs on NVLink through the switch fabric, 18 NVLinks each. */
ACC_TEST(nics_per_gpu_and_nvlink_domains_of_the_2025_platforms)
{
    static const struct {
        const char *name;
        int domain, nvlinks, nics_per_gpu;
        double gbps_per_gpu;
    } cases[] = {
        {"aws-p5", 8, 18, 4, 400},       {"aws-p5en", 8, 18, 2, 400},
        {"aws-p6-b200", 8, 18, 1, 400},  {"dgx-b200", 8, 18, 1, 400},
        {"gcp-a3-mega", 8, 18, 1, 200},  {"oci-h100", 8, 18, 2, 400},
        {"gb200-nvl72", 72, 18, 2, 400}, {"aws-p4d", 8, 12, 1, 50},
    };
    size_t i;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        acc_topo_t *t = load(cases[i].name);
        double total = 0;
        int k, g, n = acc_topo_gpus_per_node(t);
        for (k = 0; k < acc_topo_count(t, ACC_VTX_NIC); k++)
            total += acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, k))->speed_gbps;
        CHECK_MSG(n == cases[i].domain, "%s: %d GPUs in the NVLink domain", cases[i].name, n);
        CHECK_NEAR(total / n, cases[i].gbps_per_gpu, 1e-9);
        for (g = 0; g < n; g++) {
            int other = (g + n / 2 + 1) % n;
            CHECK_MSG(acc_topo_gpu_nics(t, g, NULL, NULL) == cases[i].nics_per_gpu,
                      "%s GPU%d stripes across %d NICs", cases[i].name, g,
                      acc_topo_gpu_nics(t, g, NULL, NULL));
            CHECK_INT(acc_topo_nvlinks_to_switches(t, g), cases[i].nvlinks);
            CHECK_INT(vclass(t, ACC_VTX_GPU, g, ACC_VTX_GPU, other), ACC_PATH_NVL);
        }
        acc_topo_destroy(t);
    }
}

/* GB200 NVL72: the tray's NICs hang off its Graces, which the GPUs reach over NVLink-C2C (NCCL's
 * P2C path): a GPU's own NICs are C2C, another tray's are across the CPUs. */
ACC_TEST(gb200_gpus_reach_their_nics_over_c2c)
{
    acc_topo_t *t = load("gb200-nvl72");
    int g, k;
    for (g = 0; g < 72; g++) {
        /* GPUs 2c and 2c+1 are on Grace c, with NICs 2c and 2c+1. */
        CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, g)), g / 2);
        for (k = 0; k < 72; k += 7)
            CHECK_INT(vclass(t, ACC_VTX_GPU, g, ACC_VTX_NIC, k),
                      k / 2 == g / 2 ? ACC_PATH_C2C : ACC_PATH_SYS);
    }
    acc_topo_destroy(t);
}
