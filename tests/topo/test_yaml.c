/* acc's topology YAML: every shipped platform loads, YAML -> model -> YAML is byte-identical,
 * every input format survives export and reload with its fingerprint, and bad files give errors
 * that name the file and the line. */
#include "acc_test.h"
#include "acc_topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void use_source_platforms(void)
{
    setenv("ACC_PLATFORM_DIR", acc_test_src("schedules/platforms"), 1);
}

static char *export_yaml(const acc_topo_t *t)
{
    acc_buf_t b;
    acc_buf_init(&b);
    CHECK_OK(acc_topo_export_yaml(t, &b));
    return acc_buf_take(&b);
}

static void fingerprint(const acc_topo_t *t, char fp[ACC_SHA256_HEX_LEN + 1])
{
    CHECK_OK(acc_topo_fingerprint(t, fp));
}

/* Export t, load the text, export again: the two texts must be the same bytes and the model
 * read back must have t's fingerprint. */
static void check_roundtrip(const acc_topo_t *t, const char *what)
{
    acc_topo_t *back = NULL, *again = NULL;
    char *a = export_yaml(t), *b, *c;
    char fa[ACC_SHA256_HEX_LEN + 1], fb[ACC_SHA256_HEX_LEN + 1];
    acc_status_t st = acc_topo_load_buffer(a, strlen(a), "export.yaml", &back);

    CHECK_MSG(st == ACC_OK, "%s: reloading its export failed: %s\n%s", what, acc_error_message(),
              a);
    b = export_yaml(back);
    CHECK_MSG(strcmp(a, b) == 0,
              "%s: YAML -> model -> YAML differs:\n--- first\n%s\n--- second\n%s", what, a, b);
    fingerprint(t, fa);
    fingerprint(back, fb);
    CHECK_MSG(strcmp(fa, fb) == 0, "%s: fingerprint changed by export and reload", what);
    /* The exported file itself is a fixed point too. */
    CHECK_OK(acc_topo_load_buffer(b, strlen(b), "export2.yaml", &again));
    c = export_yaml(again);
    CHECK_STR(c, b);
    CHECK_INT(acc_topo_assumption_count(back), acc_topo_assumption_count(t));
    acc_mem_free(a);
    acc_mem_free(b);
    acc_mem_free(c);
    acc_topo_destroy(back);
    acc_topo_destroy(again);
}

static acc_status_t load_text(const char *text, acc_topo_t **t)
{
    return acc_topo_load_buffer(text, strlen(text), "t.yaml", t);
}

ACC_TEST(every_platform_loads_and_roundtrips)
{
    char **names = NULL;
    size_t n = 0, i;

    use_source_platforms();
    CHECK_OK(acc_topo_platform_list(&names, &n));
    CHECK_MSG(n >= 10, "only %zu shipped platforms in %s", n, acc_topo_platform_dir());
    for (i = 0; i < n; i++) {
        acc_topo_t *t = NULL;
        acc_status_t st = acc_topo_load_platform(names[i], &t);
        CHECK_MSG(st == ACC_OK, "platform %s: %s", names[i], acc_error_message());
        CHECK_STR(acc_topo_name(t), names[i]);
        CHECK_INT(acc_topo_format(t), ACC_TOPO_FMT_YAML);
        check_roundtrip(t, names[i]);
        acc_topo_destroy(t);
    }
    acc_strv_free(names, n);
}

ACC_TEST(exported_platform_reads_like_its_source)
{
    acc_topo_t *t = NULL, *back = NULL;
    char *text;

    use_source_platforms();
    CHECK_OK(acc_topo_load_platform("dgx-h100-2node", &t));
    text = export_yaml(t);
    /* The include is expanded, the cluster's network and the platform's assumptions kept. */
    CHECK(strstr(text, "name: dgx-h100-2node\n") != NULL);
    CHECK(strstr(text, "    - {a: GPU0, b: NVS0, kind: nvlink, count: 18}\n") != NULL);
    CHECK(strstr(text, "busid: \"0000:18:00.0\"") != NULL);
    CHECK(strstr(text, "network:\n  nodes: 2\n  fabric: ib-ndr\n  latency_us: 2.7\n") != NULL);
    CHECK(strstr(text, "DGX H100 PCIe tree") != NULL);
    /* NVLink bandwidth is never written: it follows from the count. */
    CHECK(strstr(text, "kind: nvlink, count: 18, bw") == NULL);
    CHECK_OK(acc_topo_load_buffer(text, strlen(text), "x.yaml", &back));
    CHECK_INT(acc_topo_nodes(back), 2);
    CHECK_INT(acc_topo_ranks(back), 16);
    acc_mem_free(text);
    acc_topo_destroy(t);
    acc_topo_destroy(back);
}

ACC_TEST(synthetic_roundtrips_with_its_fingerprint)
{
    static const char *const descs[] = {
        "nodes=2 gpus=8 nvlink=18 nic=8x400",
        "gpus=8 nvlink=12 nic=4x200 switch=2+1",
        "gpus=4 nvlink=6 nvswitch=no numa=1",
        "gpus=8 arch=l40s nic=2x100 switch=0",
        "nodes=4 gpus=8 nvlink=18 nic=32x100 fabric=efa rail=0 oversub=2 latency=12.5",
    };
    size_t i;
    for (i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
        acc_topo_t *t = NULL;
        CHECK_OK(acc_topo_load_synthetic(descs[i], &t));
        check_roundtrip(t, descs[i]);
        acc_topo_destroy(t);
    }
}

/* Every file of a format in tests/data that its importer accepts survives export and
 * reload.  Some files are refused by design (a partial NCCL file without GPU ids, a GPU model acc
 * does not know); their importers' own tests cover that, here at least one file per format must
 * load. */
static void roundtrip_dir_files(const char *const *files, size_t n)
{
    size_t i, loaded = 0;
    for (i = 0; i < n; i++) {
        acc_topo_t *t = NULL;
        if (acc_topo_load_file(acc_test_data(files[i]), &t) != ACC_OK) {
            CHECK_MSG(acc_error_message()[0], "%s refused without a message", files[i]);
            continue;
        }
        check_roundtrip(t, files[i]);
        acc_topo_destroy(t);
        loaded++;
    }
    CHECK_MSG(loaded > 0, "none of the %zu files loaded", n);
}

ACC_TEST(nccl_xml_roundtrips_through_yaml)
{
    static const char *const files[] = {
        "topologies/nccl-xml/ibm-vpc-gx3d-8xh100-topo.xml",
        "topologies/nccl-xml/azure-ndv5-topo.xml",
        "topologies/nccl-xml/azure-ndv4-topo.xml",
        "topologies/nccl-xml/azure-ndv2-topo.xml",
        "topologies/nccl-xml/azure-ncv4-topo.xml",
        "topologies/nccl-xml/aws-p4d-24xl-topo.xml",
        "topologies/nccl-xml/aws-ofi-nccl-g5.48xl-topo.xml",
    };
    roundtrip_dir_files(files, sizeof(files) / sizeof(files[0]));
}

ACC_TEST(hwloc_xml_roundtrips_through_yaml)
{
    static const char *const files[] = {
        "topologies/hwloc-xml/hwloc-nvidiaDGX2.xml",
        "topologies/hwloc-xml/hwloc-power8gpudistances.xml",
        "topologies/hwloc-xml/hwloc-32em64t-2n8c2t-pci-normalio.xml",
        "topologies/hwloc-xml/mpibind-g4dnmetal.xml",
        "topologies/hwloc-xml/mpibind-coral-lassen.xml",
    };
    roundtrip_dir_files(files, sizeof(files) / sizeof(files[0]));
}

ACC_TEST(nvidia_smi_roundtrips_through_yaml)
{
    static const char *const files[] = {
        "topologies/nvidia-smi/dgx-a100-8xA100-SXM4-40GB-epyc7742-nps4.txt",
        "topologies/nvidia-smi/hgx-h100-8gpu-8nic-1to1-pix-2numa.txt",
        "topologies/nvidia-smi/pcie-4xL40S-2numa-2nic.txt",
        "topologies/nvidia-smi/pcie-8xRTX4090-allSYS-2numa.txt",
    };
    roundtrip_dir_files(files, sizeof(files) / sizeof(files[0]));
}

/* ---- errors name the file and the line ----------------------------------------------------- */

#define GPU_LINE "    - {id: 0, model: H100 SXM5 80GB, sm: 90}\n"

ACC_TEST(unknown_key_names_file_line_and_key)
{
    acc_topo_t *t = NULL;
    CHECK_ERR(load_text("version: 1\nnode:\n  gpus:\n    - {id: 0, sm: 90, sm_count: 132}\n", &t),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:4:");
    CHECK_MSG_HAS("unknown key 'sm_count' in gpus[0]");
    CHECK_MSG_HAS("sms");
    CHECK(t == NULL);
    CHECK_ERR(load_text("version: 1\nnode:\n  gpus:\n" GPU_LINE "  nvlinks: []\n", &t),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:5:");
    CHECK_MSG_HAS("'nvlinks'");
    CHECK_ERR(load_text("version: 1\nnode:\n  gpus:\n" GPU_LINE "netwrok: {nodes: 2}\n", &t),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:5:");
    CHECK_MSG_HAS("'netwrok'");
}

ACC_TEST(wrong_types_name_file_and_line)
{
    acc_topo_t *t = NULL;
    CHECK_ERR(load_text("version: 1\nnode:\n  gpus: 8\n", &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:3:");
    CHECK_MSG_HAS("'gpus' must be a sequence");
    CHECK_ERR(load_text("version: 1\nnode:\n  gpus:\n    - {id: 0, sm: ninety}\n", &t),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:4:");
    CHECK_MSG_HAS("'sm' must be an integer, not 'ninety'");
    CHECK_ERR(load_text("version: 1\nnode:\n  gpus:\n" GPU_LINE
                        "  nics:\n    - {id: 0, speed_gbps: fast}\n",
                        &t),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:6:");
    CHECK_MSG_HAS("'speed_gbps' must be a number");
    CHECK_ERR(load_text("version: 1\nnode:\n  gpus:\n" GPU_LINE
                        "  pci_switches:\n    - {id: 0, host_bridge: maybe}\n",
                        &t),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:6:");
    CHECK_MSG_HAS("true or false");
    CHECK_ERR(load_text("version: 1\nnode: [1, 2]\n", &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:2:");
    CHECK_ERR(load_text("version: 1\nnode:\n  gpus:\n" GPU_LINE "network: 2\n", &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:5:");
    CHECK_MSG_HAS("'network' must be a mapping");
    CHECK_ERR(load_text("version: 1\nnode:\n  gpus:\n" GPU_LINE "  nvswitch: yes\n", &t),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:5:");
    CHECK_ERR(
        load_text("version: 1\nnode:\n  gpus:\n    - {id: 0, busid: \"00:zz\", sm: 90}\n", &t),
        ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:4:");
    CHECK_MSG_HAS("PCI bus id");
}

ACC_TEST(version_missing_or_newer_is_refused)
{
    acc_topo_t *t = NULL;
    CHECK_ERR(load_text("name: x\nnode:\n  gpus:\n" GPU_LINE, &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:1:");
    CHECK_MSG_HAS("missing required key 'version'");
    CHECK_ERR(load_text("version: 2\nnode:\n  gpus:\n" GPU_LINE, &t), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("t.yaml:1:");
    CHECK_MSG_HAS("version 2 is newer than this acc reads (1)");
    CHECK_ERR(load_text("version: 0\nnode:\n  gpus:\n" GPU_LINE, &t), ACC_ERR_PARSE);
    CHECK_ERR(load_text("version: one\nnode:\n  gpus:\n" GPU_LINE, &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("'version' must be an integer");
}

ACC_TEST(bad_link_endpoint_names_the_line)
{
    acc_topo_t *t = NULL;
    const char *head = "version: 1\nnode:\n  gpus:\n" GPU_LINE "  nvswitch: {}\n  links:\n";
    char text[512];

    snprintf(text, sizeof(text), "%s    - {a: GPU9, b: NVS0, kind: nvlink, count: 18}\n", head);
    CHECK_ERR(load_text(text, &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:7:");
    CHECK_MSG_HAS("'GPU9'");
    snprintf(text, sizeof(text),
             "%s    - {a: GPU0, b: NVS0, kind: nvlink, count: 18}\n"
             "    - {a: gpu0, b: NVS0, kind: nvlink, count: 1}\n",
             head);
    CHECK_ERR(load_text(text, &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:8:");
    CHECK_MSG_HAS("'gpu0'");
    snprintf(text, sizeof(text), "%s    - {a: GPU0, b: NVS0, kind: nvlink, count: 18, bw: 450}\n",
             head);
    CHECK_ERR(load_text(text, &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:7:");
    CHECK_MSG_HAS("unknown key 'bw' in links[0]");
    snprintf(text, sizeof(text), "%s    - {a: GPU0, b: NVS0, kind: nvlnk, count: 18}\n", head);
    CHECK_ERR(load_text(text, &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("kind 'nvlnk' is unknown");
    snprintf(text, sizeof(text), "%s    - {a: GPU0, b: NVS0, kind: pcie, gen: 5, width: 16}\n",
             head);
    CHECK_ERR(load_text(text, &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:7:");
    CHECK_MSG_HAS("NVLinks only");
    snprintf(text, sizeof(text),
             "%s    - {a: GPU0, b: NVS0, kind: nvlink, count: 9}\n"
             "    - {a: NVS0, b: GPU0, kind: nvlink, count: 9}\n",
             head);
    CHECK_ERR(load_text(text, &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:8:");
    CHECK_MSG_HAS("already listed");
    snprintf(text, sizeof(text), "%s    - {a: GPU0, b: NVS0, kind: nvlink, count: 0}\n", head);
    CHECK_ERR(load_text(text, &t), ACC_ERR_RANGE);
    CHECK_MSG_HAS("t.yaml:7:");
    CHECK(t == NULL);
}

ACC_TEST(ids_must_run_in_order)
{
    acc_topo_t *t = NULL;
    CHECK_ERR(load_text("version: 1\nnode:\n  gpus:\n" GPU_LINE
                        "    - {id: 0, model: H100 SXM5 80GB}\n",
                        &t),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:5:");
    CHECK_MSG_HAS("gpus[1] has id 0 where 1 was expected");
    CHECK_ERR(load_text("version: 1\nnode:\n  cpus:\n    - {id: 1}\n  gpus:\n" GPU_LINE, &t),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:4:");
    CHECK_ERR(load_text("version: 1\nnode:\n  cpus:\n    - {id: 0}\n  gpus:\n"
                        "    - {id: 0, sm: 90, numa: 1}\n",
                        &t),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:6:");
    CHECK_MSG_HAS("'numa' is 1 but the node lists 1 CPU(s)");
}

ACC_TEST(malformed_yaml_names_file_and_line)
{
    acc_topo_t *t = NULL;
    CHECK_ERR(load_text("version: 1\nnode:\n  gpus:\n    - {id: 0, sm: 90\n  nics: []\n", &t),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:5:");
    CHECK_MSG_HAS("YAML syntax error");
    CHECK_ERR(load_text("version: 1\nnode:\n\tgpus: []\n", &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:");
    CHECK_ERR(load_text("version: 1\n- a\n", &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:");
    CHECK(t == NULL);
}

ACC_TEST(gpu_without_identity_needs_sm)
{
    acc_topo_t *t = NULL;
    CHECK_ERR(load_text("version: 1\nnode:\n  gpus:\n    - {id: 0, model: Mystery 9000}\n", &t),
              ACC_ERR_TOPO);
    CHECK_MSG_HAS("t.yaml:4: gpus[0]:");
    CHECK_MSG_HAS("add 'sm'");
}

static void write_text(const char *path, const char *text)
{
    CHECK_OK(acc_write_file(path, text, strlen(text)));
}

ACC_TEST(include_cycle_names_both_files)
{
    acc_topo_t *t = NULL;
    char a[4096], b[4096];

    snprintf(a, sizeof(a), "%s", acc_test_tmp("cycle_a.yaml"));
    snprintf(b, sizeof(b), "%s", acc_test_tmp("cycle_b.yaml"));
    write_text(a, "version: 1\nname: a\nnode: cycle_b.yaml\n");
    write_text(b, "version: 1\nname: b\nnode: cycle_a.yaml\n");
    CHECK_ERR(acc_topo_load_file(a, &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("include cycle");
    CHECK_MSG_HAS("cycle_a.yaml");
    CHECK_MSG_HAS("cycle_b.yaml");
    CHECK_MSG_HAS(":3:");
    /* A file including itself. */
    write_text(a, "version: 1\nnode: ./cycle_a.yaml\n");
    CHECK_ERR(acc_topo_load_file(a, &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("include cycle");
    CHECK(t == NULL);
}

ACC_TEST(include_by_relative_path_and_platform_name)
{
    acc_topo_t *t = NULL;
    char node[4096], cluster[4096];

    use_source_platforms();
    snprintf(node, sizeof(node), "%s", acc_test_tmp("inc_node.yaml"));
    snprintf(cluster, sizeof(cluster), "%s", acc_test_tmp("inc_cluster.yaml"));
    write_text(node, "version: 1\nname: two-gpus\nnode:\n  gpus:\n" GPU_LINE
                     "    - {id: 1, model: H100 SXM5 80GB, sm: 90}\n  cpus:\n    - {id: 0}\n"
                     "  nics:\n    - {id: 0, speed_gbps: 200}\n  links:\n"
                     "    - {a: GPU0, b: GPU1, kind: nvlink, count: 18}\n"
                     "    - {a: GPU0, b: CPU0, kind: pcie, gen: 5, width: 16}\n"
                     "    - {a: GPU1, b: CPU0, kind: pcie, gen: 5}\n"
                     "    - {a: NIC0, b: CPU0, kind: pcie, bw: 31.5, lat_us: 1.5}\n"
                     "network: {nodes: 1}\n"
                     "assumed:\n  - \"written for a test\"\n");
    write_text(cluster, "version: 1\nnode: inc_node.yaml\nnetwork:\n  nodes: 3\n  fabric: roce\n");
    CHECK_OK(acc_topo_load_file(cluster, &t));
    CHECK_STR(acc_topo_name(t), "two-gpus");
    CHECK_INT(acc_topo_nodes(t), 3);
    CHECK_INT(acc_topo_ranks(t), 6);
    CHECK_STR(acc_topo_network(t)->name, "roce");
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 18);
    CHECK_NEAR(acc_topo_find_link(t, acc_topo_find(t, ACC_VTX_NIC, 0),
                                  acc_topo_find(t, ACC_VTX_CPU, 0), ACC_LINK_PCIE)
                   ->lat_us,
               1.5, 1e-12);
    {
        /* Defaults are recorded: the missing width, the network facts not given. */
        int i, width = 0, latency = 0, kept = 0;
        for (i = 0; i < acc_topo_assumption_count(t); i++) {
            width |= strstr(acc_topo_assumption(t, i), "width x16") != NULL;
            latency |= strstr(acc_topo_assumption(t, i), "network latency") != NULL;
            kept |= strcmp(acc_topo_assumption(t, i), "written for a test") == 0;
        }
        CHECK(width && latency && kept);
    }
    check_roundtrip(t, "included cluster");
    acc_topo_destroy(t);

    /* A shipped platform by name, from a buffer. */
    CHECK_OK(load_text("version: 1\nnode: aws-p4d\nnetwork: {nodes: 2, fabric: efa}\n", &t));
    CHECK_STR(acc_topo_name(t), "aws-p4d");
    CHECK_INT(acc_topo_ranks(t), 16);
    acc_topo_destroy(t);
    t = NULL;
    CHECK_ERR(load_text("version: 1\nnode: no-such-platform\n", &t), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("t.yaml:2:");
    CHECK_MSG_HAS("no shipped platform");
    CHECK_ERR(load_text("version: 1\nnode: missing/dir/x.yaml\n", &t), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("t.yaml:2:");
}

ACC_TEST(included_cluster_is_refused)
{
    acc_topo_t *t = NULL;
    char inner[4096], outer[4096];

    use_source_platforms();
    snprintf(inner, sizeof(inner), "%s", acc_test_tmp("inner_cluster.yaml"));
    snprintf(outer, sizeof(outer), "%s", acc_test_tmp("outer_cluster.yaml"));
    write_text(inner, "version: 1\nnode: dgx-h100\nnetwork:\n  nodes: 2\n");
    write_text(outer, "version: 1\nnode: inner_cluster.yaml\nnetwork: {nodes: 4}\n");
    CHECK_ERR(acc_topo_load_file(outer, &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("inner_cluster.yaml:4:");
    CHECK_MSG_HAS("cluster of 2 nodes");
    /* Including a cluster platform by name is the same mistake. */
    CHECK_ERR(load_text("version: 1\nnode: dgx-h100-2node\nnetwork: {nodes: 4}\n", &t),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("dgx-h100-2node.yaml:");
    CHECK(t == NULL);
}

/* Every prefix of every platform file, and of its export, either loads or fails with a message:
 * no crash, no hang (the sanitizer build checks for leaks). */
ACC_TEST(truncations_never_crash)
{
    char **names = NULL;
    size_t n = 0, i, cut;

    use_source_platforms();
    CHECK_OK(acc_topo_platform_list(&names, &n));
    for (i = 0; i < n; i++) {
        char path[4096], *text = NULL, *exported;
        size_t len = 0;
        acc_topo_t *full = NULL;
        snprintf(path, sizeof(path), "%s/%s.yaml", acc_topo_platform_dir(), names[i]);
        CHECK_OK(acc_read_file(path, &text, &len));
        CHECK_OK(acc_topo_load_file(path, &full));
        exported = export_yaml(full);
        for (cut = 0; cut < len; cut += 1 + cut / 64) {
            acc_topo_t *t = NULL;
            acc_status_t st = acc_topo_load_buffer(text, cut, path, &t);
            CHECK_MSG(st == ACC_OK || acc_error_message()[0], "%s cut at %zu: no message", names[i],
                      cut);
            acc_topo_destroy(t);
        }
        /* Every 7th byte at first, sparser further in: a GB200 NVL72 rack exports 54 kB, and
         * each cut is read whole. */
        for (cut = 0; cut < strlen(exported); cut += 7 + cut / 256) {
            acc_topo_t *t = NULL;
            acc_status_t st = acc_topo_load_buffer(exported, cut, "cut.yaml", &t);
            CHECK_MSG(st == ACC_OK || acc_error_message()[0], "export of %s cut at %zu", names[i],
                      cut);
            acc_topo_destroy(t);
        }
        acc_mem_free(exported);
        acc_mem_free(text);
        acc_topo_destroy(full);
    }
    acc_strv_free(names, n);
}

/* ---- a NIC count per GPU --------------------------------------------------------------------- */

/* Line number (1-based) of the first occurrence of `what` in text. */
static int line_of(const char *text, const char *what)
{
    const char *at = strstr(text, what), *p;
    int line = 1;
    CHECK_MSG(at != NULL, "\"%s\" not in the text", what);
    for (p = text; at && p < at; p++)
        line += *p == '\n';
    return line;
}

/* acc writes on every GPU the NICs it stripes across - four on a p5, two on OCI's H100 nodes, one
 * shared by two GPUs on a p4d, none on a node without NICs - and reads them back: YAML -> model
 * -> YAML gives the same bytes and the same counts. */
ACC_TEST(nic_count_per_gpu_roundtrips)
{
    static const struct {
        const char *src;
        int nics;
    } cases[] = {{"aws-p5", 4},
                 {"oci-h100", 2},
                 {"aws-p5en", 2},
                 {"aws-p4d", 1},
                 {"nodes=2 gpus=8 nvlink=18 nic=4x100 switch=2+1", 1},
                 {"gpus=8 nvlink=18", 0}};
    size_t i;
    use_source_platforms();
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        acc_topo_t *t = NULL, *back = NULL;
        char *text, want[32];
        int g;
        CHECK_OK(acc_topo_load(cases[i].src, &t));
        text = export_yaml(t);
        snprintf(want, sizeof(want), ", nics: %d}", cases[i].nics);
        for (g = 0; g < 8; g++)
            CHECK_MSG(acc_topo_gpu_nics(t, g, NULL, NULL) == cases[i].nics, "%s GPU%d: %d NICs",
                      cases[i].src, g, acc_topo_gpu_nics(t, g, NULL, NULL));
        CHECK_MSG((strstr(text, want) != NULL) == (cases[i].nics > 0), "%s: the export %s \"%s\"",
                  cases[i].src, cases[i].nics ? "lacks" : "has", want);
        CHECK_OK(acc_topo_load_buffer(text, strlen(text), "export.yaml", &back));
        for (g = 0; g < 8; g++)
            CHECK_INT(acc_topo_gpu_nics(back, g, NULL, NULL), cases[i].nics);
        check_roundtrip(t, cases[i].src);
        acc_mem_free(text);
        acc_topo_destroy(back);
        acc_topo_destroy(t);
    }
}

/* A count the node's tree does not give, and a count that is no count, are errors naming the
 * file and the line. */
ACC_TEST(nic_count_per_gpu_is_held_to_the_tree)
{
    acc_topo_t *t = NULL, *p5 = NULL;
    char *text, *at, where[32];

    use_source_platforms();
    CHECK_OK(acc_topo_load("aws-p5", &p5));
    text = export_yaml(p5);
    /* GPU3 of a p5 said to have two NICs: its switch holds four. */
    at = strstr(text, "{id: 3, model");
    CHECK(at != NULL);
    at = strstr(at, "nics: 4");
    CHECK(at != NULL);
    at[6] = '2';
    snprintf(where, sizeof(where), "p5.yaml:%d:", line_of(text, "nics: 2"));
    CHECK_ERR(acc_topo_load_buffer(text, strlen(text), "p5.yaml", &t), ACC_ERR_TOPO);
    CHECK_MSG_HAS(where);
    CHECK_MSG_HAS("gpus[3]: 'nics: 2'");
    CHECK_MSG_HAS("GPU3 4 NICs");
    CHECK_MSG_HAS("(NIC12, NIC13, NIC14, NIC15)");
    CHECK(t == NULL);
    acc_mem_free(text);
    acc_topo_destroy(p5);

    CHECK_ERR(load_text("version: 1\nnode:\n  gpus:\n    - {id: 0, sm: 90, nics: -1}\n", &t),
              ACC_ERR_RANGE);
    CHECK_MSG_HAS("t.yaml:4:");
    CHECK_MSG_HAS("'nics' is -1");
    CHECK_ERR(load_text("version: 1\nnode:\n  gpus:\n    - {id: 0, sm: 90, nics: four}\n", &t),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("t.yaml:4:");
    CHECK_MSG_HAS("'nics' must be an integer");
    /* A GPU without NICs may say so. */
    CHECK_OK(load_text("version: 1\nnode:\n  gpus:\n    - {id: 0, sm: 90, nics: 0}\n", &t));
    acc_topo_destroy(t);
}
