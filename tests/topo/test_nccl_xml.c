/* NCCL topology XML: the real files of tests/data/topologies/nccl-xml, broken and truncated
 * copies of them and hand-written snippets for the rarer elements; test_nccl_xml_export.c has
 * the export and the round trips. */
#include "nccl_xml_test_util.h"

/* ---- the real files ---------------------------------------------------------------------- */

ACC_TEST(ibm_h100_full_dump)
{
    acc_topo_t *t = load(IBM);
    acc_topo_path_t p;
    int g, h, nic0;

    CHECK_INT(acc_topo_gpus_per_node(t), 8);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 8);
    /* Four NVSwitch chips (5+4+5+4 links) folded into one fabric vertex. */
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1);
    for (g = 0; g < 8; g++) {
        CHECK_INT(tt_gpu(t, g)->sm, 90);
        CHECK_STR(tt_gpu(t, g)->model, "H100 SXM5 80GB");
        CHECK_INT(tt_gpu(t, g)->numa, g < 4 ? 0 : 1);
        CHECK_INT(acc_topo_nvlinks_to_switches(t, g), 18);
        for (h = 0; h < 8; h++)
            CHECK_INT(acc_topo_nvlinks_between(t, g, h), 0);
    }
    CHECK_STR(tt_gpu(t, 0)->busid, "0000:a4:00.0");
    CHECK_STR(tt_gpu(t, 7)->busid, "0000:ea:00.0");
    p = gpu_path(t, 0, 5);
    CHECK_INT(p.cls, ACC_PATH_NVL);
    CHECK_NEAR(p.bw, 18 * 25.0, 1e-9);
    /* NICs by <net dev>: mlx5_0 is NIC0 although the file lists mlx5_7 first. */
    check_nics(t, 8, 200.0);
    CHECK_STR(tt_nic(t, 0)->dev_name, "mlx5_0");
    CHECK_STR(tt_nic(t, 0)->busid, "0000:e9:00.0");
    CHECK_INT(tt_nic(t, 0)->gdr, 1);
    CHECK_INT(tt_nic(t, 0)->numa, 1);
    /* GPU0's rail is the NIC beside it on the same switch. */
    nic0 = acc_topo_gpu_nic(t, 0);
    CHECK_STR(acc_topo_vertex(t, nic0)->dev_name, "mlx5_7");
    CHECK_OK(acc_topo_vertex_path(t, acc_topo_find(t, ACC_VTX_GPU, 0), nic0, &p));
    CHECK_INT(p.cls, ACC_PATH_PIX);
    CHECK(tt_assumed(t, "link_width=\"0\" read as x16", NULL));
    acc_topo_destroy(t);
}

ACC_TEST(aws_p4d_partial_tree)
{
    acc_topo_t *t = load("aws-p4d-24xl-topo.xml");
    acc_topo_path_t p;
    int g;

    CHECK_INT(acc_topo_gpus_per_node(t), 8);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 4);
    for (g = 0; g < 8; g++) {
        CHECK_INT(tt_gpu(t, g)->sm, 80); /* from PCI device 0x20b0 */
        CHECK_STR(tt_gpu(t, g)->model, "A100 SXM4 40GB");
    }
    /* The real machine has NVSwitches, but this file lists no NVLink: none is invented. */
    check_no_nvlinks(t);
    check_nics(t, 4, 100.0);
    CHECK(tt_assumed(t, "AWS EFA", NULL));
    CHECK_INT(tt_nic(t, 2)->numa, 1);
    /* "8 GT/s" x16 links: Gen3. */
    p = gpu_path(t, 0, 1);
    CHECK_INT(p.cls, ACC_PATH_PIX);
    CHECK_NEAR(p.bw, acc_topo_pcie_bw(3, 16), 1e-9);
    CHECK_INT(gpu_path(t, 0, 2).cls, ACC_PATH_NODE);
    CHECK_INT(gpu_path(t, 0, 4).cls, ACC_PATH_SYS);
    acc_topo_destroy(t);
}

/* aws-ofi-nccl's p5.48xlarge file: the PCIe tree, 32 EFA NICs and <gpu sm="90"> under class
 * 0x0302 on 32 GT/s links, but no model and no <nvlink> (NCCL finds both at run time). */
#define P5 "aws-ofi-nccl-p5.48xl-topo.xml"

ACC_TEST(aws_p5_gpu_facts_filled_from_the_architecture)
{
    acc_topo_t *t = load(P5);
    acc_buf_t b;
    int g;

    CHECK_INT(acc_topo_gpus_per_node(t), 8);
    for (g = 0; g < 8; g++) {
        CHECK_INT(tt_gpu(t, g)->sm, 90);
        CHECK_STR(tt_gpu(t, g)->model, "H100 SXM5 80GB");
        CHECK_INT(tt_gpu(t, g)->sm_count, 132);
        CHECK(tt_gpu(t, g)->mem_bytes == 80ull << 30);
    }
    /* Every filled fact is listed. */
    CHECK(tt_assumed(t, "H100 SXM5 80GB for sm_90 GPUs of class 0x0302", "32 GT/s"));
    CHECK(tt_assumed(t, "132 SMs", NULL));
    CHECK(tt_assumed(t, "80 GiB memory", NULL));
    check_nics(t, 32, 100.0);
    /* NVLinks are not invented; the warning says so and names both ways to get them. */
    check_no_nvlinks(t);
    acc_buf_init(&b);
    CHECK_INT(topo_missing_nvlinks(t, &b), 8);
    CHECK(strstr(b.data, "PCIe plans") != NULL);
    CHECK(strstr(b.data, "--nvlink-from PLATFORM") != NULL);
    CHECK(strstr(b.data, "--topo auto") != NULL);
    acc_buf_free(&b);
    acc_topo_destroy(t);
}

ACC_TEST(aws_p5_load_warns_in_the_log_and_the_summary)
{
    acc_topo_t *t;
    acc_buf_t b;
    FILE *log = tmpfile();
    char text[4096];
    size_t n;

    CHECK(log != NULL);
    acc_log_set_stream(log);
    CHECK_OK(acc_topo_load_file(acc_test_data("topologies/nccl-xml/" P5), &t));
    acc_log_set_stream(NULL);
    rewind(log);
    n = fread(text, 1, sizeof(text) - 1, log);
    text[n] = '\0';
    fclose(log);
    CHECK_MSG(strstr(text, "acc WARN topo: ") && strstr(text, P5 " lists no NVLink"), "log: %s",
              text);
    acc_buf_init(&b);
    CHECK_OK(acc_topo_summary(t, &b));
    CHECK(strstr(b.data, "\nWarnings\n  - ") != NULL);
    CHECK(strstr(b.data, "plans for it will be PCIe plans") != NULL);
    CHECK(strstr(b.data, "nothing: every fact came from the input") == NULL);
    acc_buf_reset(&b);
    CHECK_OK(acc_topo_summary_json(t, &b));
    CHECK(strstr(b.data, "\"warnings\": [\n  \"") != NULL);
    acc_buf_free(&b);
    acc_topo_destroy(t);
}

/* A GPU of the VGA class (0x0300: workstation cards) says nothing about SXM: its model stays
 * unknown, and the summary says so instead of claiming every fact came from the input. */
ACC_TEST(unknown_gpu_facts_are_not_called_input)
{
    char *text = slurp(P5, NULL),
         *vga = replace(text, "class=\"0x030200\"", "class=\"0x030000\"", 0);
    acc_topo_t *t = import_ok(vga, P5);
    acc_buf_t b;

    CHECK_STR(tt_gpu(t, 0)->model, "");
    CHECK_INT(tt_gpu(t, 0)->sm_count, 0);
    CHECK_INT(acc_topo_assumption_count(t), 0);
    CHECK_INT(topo_missing_nvlinks(t, NULL), 0); /* no named part, no NVLinks to miss */
    acc_buf_init(&b);
    CHECK_OK(acc_topo_summary(t, &b));
    CHECK(strstr(b.data, "GPU model, SM count or memory unknown for GPU0, GPU1") != NULL);
    CHECK(strstr(b.data, "every fact came from the input") == NULL);
    CHECK(strstr(b.data, "Assumed\n  nothing, but some facts are unknown") != NULL);
    acc_buf_free(&b);
    acc_topo_destroy(t);
    acc_mem_free(vga);
    acc_mem_free(text);
}

ACC_TEST(azure_ncv4_self_nvlinks_and_cpu_nic)
{
    acc_topo_t *t = load("azure-ncv4-topo.xml");
    int g;

    CHECK_INT(acc_topo_gpus_per_node(t), 4);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 4);
    for (g = 0; g < 4; g++) {
        CHECK_INT(tt_gpu(t, g)->sm, 80);
        CHECK_STR(tt_gpu(t, g)->model, "A100 PCIe 80GB");
        CHECK_INT(tt_gpu(t, g)->numa, g);
    }
    /* Each GPU lists 12 NVLinks to its own bus id: a VM artefact, not links. */
    check_no_nvlinks(t);
    CHECK(tt_assumed(t, "own bus id", NULL));
    /* A <nic> straight under the first <cpu>. */
    check_nics(t, 1, 100.0);
    CHECK_STR(tt_nic(t, 0)->dev_name, "eth0");
    CHECK_INT(tt_nic(t, 0)->numa, 0);
    /* link_speed="" on the GPUs: the A100's Gen4. */
    CHECK(tt_assumed(t, "PCIe Gen4 where link_speed is missing", NULL));
    CHECK_INT(gpu_path(t, 0, 1).cls, ACC_PATH_SYS);
    acc_topo_destroy(t);
}

ACC_TEST(azure_partial_files_load_with_the_generation_assumed)
{
    /* The files give GPUs only a bus id, a class and a link speed.  The generation is the one
     * that first shipped on the link's PCIe generation, capped by the host CPU: ND v2 writes
     * "16 GT/s" on a Skylake host (model 85, Gen3 root ports), so it reads as Volta. */
    static const char *const files[] = {"azure-ndv5-topo.xml", "azure-ndv4-topo.xml",
                                        "azure-ndv2-topo.xml"};
    static const int sm[] = {90, 80, 70};
    size_t i;
    for (i = 0; i < 3; i++) {
        char *text = slurp(files[i], NULL);
        acc_topo_t *t;
        CHECK_OK(import(text, strlen(text), files[i], &t));
        CHECK_INT(acc_topo_gpus_per_node(t), 8);
        CHECK_INT(tt_gpu(t, 0)->sm, sm[i]);
        CHECK(tt_assumed(t, "GPU model not in the file", NULL));
        check_no_nvlinks(t);
        CHECK_INT(topo_missing_nvlinks(t, NULL), 8); /* every generation guessed has NVLinks */
        acc_topo_destroy(t);
        acc_mem_free(text);
    }
}

ACC_TEST(azure_ndv5_with_gpu_ids)
{
    acc_topo_t *t = load_with_gpu_id("azure-ndv5-topo.xml", "0x2330");
    acc_topo_path_t p;

    CHECK_INT(acc_topo_gpus_per_node(t), 8);
    CHECK_INT(tt_gpu(t, 0)->sm, 90);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 8);
    check_no_nvlinks(t);
    /* 0x020700 NICs without a <nic>: NDR 400, the DGX H100 rate. */
    check_nics(t, 8, 400.0);
    CHECK(tt_assumed(t, "DGX NIC rate of sm_90", NULL));
    CHECK_OK(acc_topo_vertex_path(t, acc_topo_find(t, ACC_VTX_GPU, 0), acc_topo_gpu_nic(t, 0), &p));
    CHECK_INT(p.cls, ACC_PATH_PIX);
    CHECK_NEAR(p.bw, acc_topo_pcie_bw(5, 16), 1e-9); /* "32.0 GT/s PCIe" x16 */
    CHECK_INT(tt_gpu(t, 4)->numa, 1);
    acc_topo_destroy(t);
}

ACC_TEST(azure_ndv4_with_gpu_ids)
{
    acc_topo_t *t = load_with_gpu_id("azure-ndv4-topo.xml", "0x20b2");

    CHECK_INT(acc_topo_gpus_per_node(t), 8);
    CHECK_INT(tt_gpu(t, 0)->sm, 80);
    CHECK_STR(tt_gpu(t, 0)->busid, "0003:00:00.0"); /* document order without <gpu dev> */
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 4);
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 4);
    check_no_nvlinks(t);
    check_nics(t, 8, 200.0);
    /* Old-kernel "16 GT/s": Gen4. */
    CHECK_INT(gpu_path(t, 0, 1).cls, ACC_PATH_PIX);
    CHECK_NEAR(gpu_path(t, 0, 1).bw, acc_topo_pcie_bw(4, 16), 1e-9);
    CHECK_INT(tt_gpu(t, 7)->numa, 3);
    acc_topo_destroy(t);
}

ACC_TEST(azure_ndv2_with_gpu_ids)
{
    acc_topo_t *t = load_with_gpu_id("azure-ndv2-topo.xml", "0x1db5");

    CHECK_INT(acc_topo_gpus_per_node(t), 8);
    CHECK_INT(tt_gpu(t, 0)->sm, 70);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 0);
    check_nics(t, 1, 100.0);
    CHECK_INT(gpu_path(t, 0, 1).cls, ACC_PATH_NODE);
    CHECK_INT(gpu_path(t, 0, 4).cls, ACC_PATH_SYS);
    acc_topo_destroy(t);
}

ACC_TEST(aws_g5_bus_ids_only_refused_clearly)
{
    char *text = slurp("aws-ofi-nccl-g5.48xl-topo.xml", NULL);
    acc_topo_t *t;
    CHECK_ERR(import(text, strlen(text), "g5.xml", &t), ACC_ERR_TOPO);
    CHECK_MSG_HAS("g5.xml");
    CHECK_MSG_HAS("no GPU can be identified");
    CHECK_MSG_HAS("0000:00:16.0");
    acc_mem_free(text);
}

ACC_TEST(graph_file_refused)
{
    char *text = slurp("azure-ncv4-graph.xml", NULL);
    acc_topo_t *t;
    CHECK_ERR(import(text, strlen(text), "azure-ncv4-graph.xml", &t), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("azure-ncv4-graph.xml:1:");
    CHECK_MSG_HAS("NCCL graph file");
    CHECK_MSG_HAS("NCCL_TOPO_DUMP_FILE");
    acc_mem_free(text);
}

/* ---- broken input ------------------------------------------------------------------------ */

ACC_TEST(truncated_files_fail_cleanly)
{
    int f;
    for (f = 0; f < NFIXTURES; f++) {
        size_t len, cuts[8];
        char *text = slurp(fixtures[f], &len);
        const char *close = text, *p;
        int i;
        while ((p = strstr(close + 1, "</")))
            close = p;
        /* Every cut before the root's closing '>' leaves the document unfinished. */
        cuts[0] = 0;
        cuts[1] = 1;
        cuts[2] = 10;
        cuts[3] = len / 5;
        cuts[4] = len / 3;
        cuts[5] = len / 2;
        cuts[6] = len * 4 / 5;
        cuts[7] = (size_t)(close - text) + 3;
        for (i = 0; i < 8; i++) {
            char *copy = acc_mem_alloc(cuts[i] + 1);
            acc_topo_t *t;
            memcpy(copy, text, cuts[i]);
            copy[cuts[i]] = '\0';
            CHECK_ERR(import(copy, cuts[i], fixtures[f], &t), ACC_ERR_PARSE);
            CHECK_MSG_HAS(fixtures[f]);
            acc_mem_free(copy);
        }
        acc_mem_free(text);
    }
}

/* Replace the first `from` of the IBM file with `to`; expect ACC_ERR_PARSE at that line. */
static void check_broken_ibm(const char *from, const char *to, const char *fragment)
{
    char *text = slurp(IBM, NULL), *bad = replace(text, from, to, 1), where[64];
    acc_topo_t *t;
    CHECK_ERR(import(bad, strlen(bad), "bad.xml", &t), ACC_ERR_PARSE);
    snprintf(where, sizeof(where), "bad.xml:%d:", line_of(text, from));
    CHECK_MSG_HAS(where);
    CHECK_MSG_HAS(fragment);
    acc_mem_free(text);
    acc_mem_free(bad);
}

ACC_TEST(bad_nvlink_count)
{
    check_broken_ibm("count=\"5\"", "count=\"five\"", "<nvlink>: count=\"five\"");
    check_broken_ibm("count=\"5\"", "count=\"0\"", "<nvlink>: count=\"0\"");
    check_broken_ibm("count=\"4\"", "count=\"-4\"", "expected an integer");
}

ACC_TEST(bad_busid)
{
    check_broken_ibm("busid=\"0000:a4:00.0\"", "busid=\"0000:zz:00.0\"", "not a PCI bus id");
    check_broken_ibm("target=\"0000:f5:00.0\"", "target=\"switch-1\"", "not a PCI bus id");
    check_broken_ibm("<pci busid=\"0000:a4:00.0\"", "<pci bus=\"0000:a4:00.0\"", "no busid");
}

ACC_TEST(duplicate_busid_and_gpu_dev)
{
    check_broken_ibm("busid=\"0000:ae:00.0\"", "busid=\"0000:a4:00.0\"", "is also used at line");
    check_broken_ibm("<gpu dev=\"1\"", "<gpu dev=\"0\"", "dev=\"0\" is also used at line");
}

ACC_TEST(wrong_root_and_version)
{
    {
        char *text = slurp(IBM, NULL), *a = replace(text, "<system ", "<machine ", 1);
        char *b = replace(a, "</system>", "</machine>", 1);
        acc_topo_t *t;
        CHECK_ERR(import(b, strlen(b), "m.xml", &t), ACC_ERR_PARSE);
        CHECK_MSG_HAS("m.xml:1: <machine>: expected <system version=\"1\">");
        acc_mem_free(text);
        acc_mem_free(a);
        acc_mem_free(b);
    }
    check_broken_ibm("<system version=\"1\">", "<system version=\"2\">", "version=\"2\"");
    check_broken_ibm("<system version=\"1\">", "<system>", "no version");
    check_broken_ibm("numaid=\"1\"", "numa=\"1\"", "no numaid");
}

ACC_TEST(multi_host_dump_refused)
{
    char *text = slurp(IBM, NULL);
    char *two = replace(text, "host_hash=\"0xa5f31daa95182da8\" numaid=\"1\"",
                        "host_hash=\"0x1111\" numaid=\"1\"", 1);
    acc_topo_t *t;
    CHECK_ERR(import(two, strlen(two), "mnnvl.xml", &t), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("mnnvl.xml:");
    CHECK_MSG_HAS("several hosts");
    acc_mem_free(text);
    acc_mem_free(two);
}

ACC_TEST(asymmetric_gpu_nvlinks_refused)
{
    static const char *xml =
        "<system version=\"1\">\n"
        "  <cpu numaid=\"0\">\n"
        "    <pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"8.0 GT/s PCIe\" "
        "link_width=\"16\">\n"
        "      <gpu dev=\"0\" sm=\"70\"><nvlink target=\"0000:02:00.0\" count=\"2\" "
        "tclass=\"0x030200\"/></gpu>\n"
        "    </pci>\n"
        "    <pci busid=\"0000:02:00.0\" class=\"0x030200\" link_speed=\"8.0 GT/s PCIe\" "
        "link_width=\"16\">\n"
        "      <gpu dev=\"1\" sm=\"70\"><nvlink target=\"0000:01:00.0\" count=\"1\" "
        "tclass=\"0x030200\"/></gpu>\n"
        "    </pci>\n"
        "  </cpu>\n"
        "</system>\n";
    acc_topo_t *t;
    CHECK_ERR(import(xml, strlen(xml), "asym.xml", &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("asym.xml:");
    CHECK_MSG_HAS("GPU0 lists 2 NVLinks to GPU1 but GPU1 lists 1 back");
}

ACC_TEST(doctype_and_entities_refused)
{
    static const char *xml = "<?xml version=\"1.0\"?>\n"
                             "<!DOCTYPE system [<!ENTITY a \"aaaaaaaaaa\">]>\n"
                             "<system version=\"1\"><cpu numaid=\"&a;\"/></system>\n";
    acc_topo_t *t;
    CHECK_ERR(import(xml, strlen(xml), "dtd.xml", &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("dtd.xml");
}

/* libxml2's own messages must become the error text, never lines on stderr. */
ACC_TEST(xml_errors_not_printed)
{
    static const char *xml = "<system version=\"1\"><cpu numaid=\"0\"><pci busid=</system>";
    FILE *f = tmpfile();
    int saved = dup(2);
    acc_topo_t *t;
    acc_status_t st;

    CHECK(f != NULL && saved >= 0);
    fflush(stderr);
    dup2(fileno(f), 2);
    st = import(xml, strlen(xml), "noisy.xml", &t);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    CHECK_INT(st, ACC_ERR_PARSE);
    CHECK_MSG_HAS("noisy.xml:1: not well-formed XML");
    fseek(f, 0, SEEK_END);
    CHECK_INT(ftell(f), 0);
    fclose(f);
}

/* ---- the rarer elements ------------------------------------------------------------------ */

ACC_TEST(gpus_numbered_by_dev)
{
    char *xml = two_gpus(90, "", "");
    acc_topo_t *t = import_ok(xml, "dev.xml");
    CHECK_STR(tt_gpu(t, 0)->busid, "0000:02:00.0");
    CHECK_STR(tt_gpu(t, 1)->busid, "0000:01:00.0");
    acc_topo_destroy(t);
    acc_mem_free(xml);
}

ACC_TEST(gpu_pair_nvlinks_counted_once)
{
    char *both = two_gpus(70, "<nvlink target=\"0000:01:00.0\" count=\"2\" tclass=\"0x030200\"/>",
                          "<nvlink target=\"0000:02:00.0\" count=\"2\" tclass=\"0x030200\"/>");
    char *one =
        two_gpus(70, "<nvlink target=\"0000:01:00.0\" count=\"3\" tclass=\"0x030200\"/>", "");
    acc_topo_t *t = import_ok(both, "both.xml");
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 2);
    CHECK_INT(acc_topo_nvlinks_between(t, 1, 0), 2);
    CHECK_INT(gpu_path(t, 0, 1).cls, ACC_PATH_NVL);
    CHECK_NEAR(gpu_path(t, 0, 1).bw, 2 * 25.0, 1e-9);
    acc_topo_destroy(t);
    t = import_ok(one, "one.xml");
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 3);
    acc_topo_destroy(t);
    acc_mem_free(both);
    acc_mem_free(one);
}

ACC_TEST(vm_nvswitch_placeholder)
{
    static const char *link = "<nvlink target=\"fffffff:ff:ff.0\" count=\"18\" "
                              "tclass=\"0x068000\"/>";
    char *xml = two_gpus(90, link, link);
    acc_topo_t *t = import_ok(xml, "vm.xml");
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 0), 18);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 1), 18);
    CHECK_INT(gpu_path(t, 0, 1).cls, ACC_PATH_NVL);
    acc_topo_destroy(t);
    acc_mem_free(xml);
}

ACC_TEST(nvlinks_to_absent_gpus_left_out)
{
    char *xml =
        two_gpus(90, "<nvlink target=\"0000:0a:00.0\" count=\"4\" tclass=\"0x030200\"/>", "");
    acc_topo_t *t = import_ok(xml, "subset.xml");
    check_no_nvlinks(t);
    CHECK(tt_assumed(t, "NVLinks to GPUs absent from the file", NULL));
    acc_topo_destroy(t);
    acc_mem_free(xml);
}

ACC_TEST(c2c_and_cpu_nvlinks)
{
    /* Grace Hopper: NVLink-C2C, 10 links of 45 GB/s. */
    char *gh = two_gpus(90, "<c2c count=\"10\" bw=\"45000\"/>", "<c2c count=\"10\" bw=\"45000\"/>");
    /* POWER9: NVLinks from the GPU to its CPU. */
    char *p9 = two_gpus(70, "<nvlink target=\"0000:00:00.0\" count=\"3\" tclass=\"0x068001\"/>",
                        "<nvlink target=\"0000:00:00.0\" count=\"3\" tclass=\"0x068001\"/>");
    acc_topo_t *t = import_ok(gh, "gh.xml");
    const acc_topo_link_t *l;
    int g0 = acc_topo_find(t, ACC_VTX_GPU, 0), cpu = acc_topo_find(t, ACC_VTX_CPU, 0);

    l = acc_topo_find_link(t, g0, cpu, ACC_LINK_C2C);
    CHECK(l != NULL);
    CHECK_NEAR(l->bw, 450.0, 1e-9);
    acc_topo_destroy(t);
    t = import_ok(p9, "p9.xml");
    g0 = acc_topo_find(t, ACC_VTX_GPU, 0);
    cpu = acc_topo_find(t, ACC_VTX_CPU, 0);
    l = acc_topo_find_link(t, g0, cpu, ACC_LINK_NVLINK);
    CHECK(l != NULL);
    CHECK_INT(l->count, 3);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    acc_topo_destroy(t);
    acc_mem_free(gh);
    acc_mem_free(p9);
}

ACC_TEST(nic_speed_defaults)
{
    static const char *xml =
        "<system version=\"1\">\n"
        "  <cpu numaid=\"0\">\n"
        "    <pci busid=\"0000:01:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b0\" "
        "link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"/>\n"
        "    <pci busid=\"0000:02:00.0\" class=\"0x020000\" vendor=\"0x15b3\" device=\"0x1021\" "
        "link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"/>\n"
        "    <pci busid=\"0000:03:00.0\" class=\"0x020700\" link_speed=\"16.0 GT/s PCIe\" "
        "link_width=\"16\"/>\n"
        "    <pci busid=\"0000:04:00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" "
        "link_width=\"16\"><nic><net name=\"eth9\" dev=\"0\" speed=\"-1\"/></nic></pci>\n"
        "  </cpu>\n"
        "</system>\n";
    acc_topo_t *t = import_ok(xml, "nics.xml");
    int i, cx7 = 0, dgx = 0, fallback = 0;
    for (i = 0; i < 3; i++) {
        const acc_topo_vertex_t *n = tt_nic(t, i);
        cx7 += n->device_id == 0x1021 && n->speed_gbps == 400.0;
        dgx += !n->device_id && !n->dev_name[0] && n->speed_gbps == 200.0;
        fallback += strcmp(n->dev_name, "eth9") == 0 && n->speed_gbps == 10.0;
    }
    CHECK_INT(cx7 + dgx + fallback, 3);
    CHECK(tt_assumed(t, "ConnectX-7", NULL));
    CHECK(tt_assumed(t, "DGX NIC rate of sm_80", NULL));
    CHECK(tt_assumed(t, "NCCL's fallback", NULL));
    acc_topo_destroy(t);
}

/* A file whose <net> elements carry no gdr (a hand-written or trimmed NCCL_TOPO_FILE): GPUDirect
 * RDMA is taken as off, and that is listed among the assumptions, once, while NCCL's own dump of
 * the machine (gdr="1") assumes nothing about it. */
ACC_TEST(defaulted_gdr_is_listed_as_assumed)
{
    char *text = slurp(P5, NULL), *bare = replace(text, " gdr=\"1\"/>", "/>", 0);
    acc_topo_t *t = import_ok(bare, "p5-no-gdr.xml"), *full = import_ok(text, P5);
    int i, n = 0;

    for (i = 0; i < acc_topo_assumption_count(t); i++)
        n += strstr(acc_topo_assumption(t, i), "GPUDirect RDMA off") != NULL;
    CHECK_INT(n, 1);
    CHECK_INT(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 0))->gdr, 0);
    for (i = 0; i < acc_topo_assumption_count(full); i++)
        CHECK(strstr(acc_topo_assumption(full, i), "GPUDirect RDMA") == NULL);
    acc_topo_destroy(t);
    acc_topo_destroy(full);
    acc_mem_free(bare);
    acc_mem_free(text);
}
