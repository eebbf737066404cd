/* NCCL topology XML: the real files of ../shared/data/topologies/nccl-xml, broken and truncated
 * copies of them, hand-written snippets for the rarer elements, and export -> import round trips
 * that must keep the fingerprint. */
#include "acc_test.h"
#include "internal.h"

#include <stdlib.h>
#include <unistd.h>

#define IBM "ibm-vpc-gx3d-8xh100-topo.xml"

static const char *const fixtures[] = {
    IBM,
    "azure-ndv5-topo.xml",
    "azure-ndv4-topo.xml",
    "azure-ndv2-topo.xml",
    "azure-ncv4-topo.xml",
    "azure-ncv4-graph.xml",
    "aws-p4d-24xl-topo.xml",
    "aws-ofi-nccl-g5.48xl-topo.xml",
};
#define NFIXTURES ((int)(sizeof(fixtures) / sizeof(fixtures[0])))

/* A file of topologies/nccl-xml/, NUL-terminated. */
static char *slurp(const char *file, size_t *len)
{
    char rel[256], *text = NULL;
    size_t n;
    snprintf(rel, sizeof(rel), "topologies/nccl-xml/%s", file);
    CHECK_OK(acc_read_file(acc_test_data(rel), &text, len ? len : &n));
    return text;
}

/* Import and finalize; *out is set only on success. */
static acc_status_t import(const char *text, size_t len, const char *name, acc_topo_t **out)
{
    acc_topo_t *t;
    acc_status_t st;

    *out = NULL;
    CHECK_OK(acc_topo_create(&t));
    st = topo_import_nccl_xml(t, text, len, name);
    if (st == ACC_OK)
        st = acc_topo_finalize(t);
    if (st != ACC_OK) {
        acc_topo_destroy(t);
        return st;
    }
    *out = t;
    return ACC_OK;
}

static acc_topo_t *import_ok(const char *text, const char *name)
{
    acc_topo_t *t;
    CHECK_OK(import(text, strlen(text), name, &t));
    return t;
}

static acc_topo_t *load(const char *file)
{
    char *text = slurp(file, NULL);
    acc_topo_t *t = import_ok(text, file);
    acc_free(text);
    return t;
}

/* s with every occurrence of `from` replaced (at most `max` of them; 0 = all). */
static char *replace(const char *s, const char *from, const char *to, int max)
{
    acc_buf_t b;
    const char *p;
    int n = 0;

    acc_buf_init(&b);
    while ((p = strstr(s, from)) && (max == 0 || n < max)) {
        acc_buf_append(&b, s, (size_t)(p - s));
        acc_buf_puts(&b, to);
        s = p + strlen(from);
        n++;
    }
    acc_buf_puts(&b, s);
    CHECK(n > 0);
    CHECK_OK(acc_buf_status(&b));
    return acc_buf_take(&b);
}

/* 1-based line of the first occurrence of needle. */
static int line_of(const char *text, const char *needle)
{
    const char *p = strstr(text, needle), *q;
    int line = 1;
    CHECK(p != NULL);
    for (q = text; q < p; q++)
        line += *q == '\n';
    return line;
}

static int has_assumption(const acc_topo_t *t, const char *fragment)
{
    int i;
    for (i = 0; i < acc_topo_assumption_count(t); i++)
        if (strstr(acc_topo_assumption(t, i), fragment))
            return 1;
    return 0;
}

static const acc_topo_vertex_t *gpu(const acc_topo_t *t, int id)
{
    return acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_GPU, id));
}

static const acc_topo_vertex_t *nic(const acc_topo_t *t, int id)
{
    return acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, id));
}

static acc_topo_path_t gpu_path(const acc_topo_t *t, int a, int b)
{
    acc_topo_path_t p;
    CHECK_OK(acc_topo_path(t, a, b, &p));
    return p;
}

static void check_no_nvlinks(const acc_topo_t *t)
{
    int a, b, n = acc_topo_gpus_per_node(t);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    for (a = 0; a < n; a++) {
        CHECK_INT(acc_topo_nvlinks_to_switches(t, a), 0);
        for (b = 0; b < n; b++)
            CHECK_INT(acc_topo_nvlinks_between(t, a, b), 0);
    }
}

static void check_nics(const acc_topo_t *t, int count, double gbps)
{
    int i;
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), count);
    for (i = 0; i < count; i++)
        CHECK_NEAR(nic(t, i)->speed_gbps, gbps, 1e-9);
}

/* Partial Azure files give GPUs no device id; add the one of the machine they describe. */
static acc_topo_t *load_with_gpu_id(const char *file, const char *device)
{
    char *text = slurp(file, NULL), ids[96], *patched;
    acc_topo_t *t;
    snprintf(ids, sizeof(ids), "class=\"0x030200\" vendor=\"0x10de\" device=\"%s\"", device);
    patched = replace(text, "class=\"0x030200\"", ids, 0);
    t = import_ok(patched, file);
    acc_free(text);
    acc_free(patched);
    return t;
}

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
        CHECK_INT(gpu(t, g)->sm, 90);
        CHECK_STR(gpu(t, g)->model, "H100 SXM5 80GB");
        CHECK_INT(gpu(t, g)->numa, g < 4 ? 0 : 1);
        CHECK_INT(acc_topo_nvlinks_to_switches(t, g), 18);
        for (h = 0; h < 8; h++)
            CHECK_INT(acc_topo_nvlinks_between(t, g, h), 0);
    }
    CHECK_STR(gpu(t, 0)->busid, "0000:a4:00.0");
    CHECK_STR(gpu(t, 7)->busid, "0000:ea:00.0");
    p = gpu_path(t, 0, 5);
    CHECK_INT(p.cls, ACC_PATH_NVL);
    CHECK_NEAR(p.bw, 18 * 25.0, 1e-9);
    /* NICs by <net dev>: mlx5_0 is NIC0 although the file lists mlx5_7 first. */
    check_nics(t, 8, 200.0);
    CHECK_STR(nic(t, 0)->dev_name, "mlx5_0");
    CHECK_STR(nic(t, 0)->busid, "0000:e9:00.0");
    CHECK_INT(nic(t, 0)->gdr, 1);
    CHECK_INT(nic(t, 0)->numa, 1);
    /* GPU0's rail is the NIC beside it on the same switch. */
    nic0 = acc_topo_gpu_nic(t, 0);
    CHECK_STR(acc_topo_vertex(t, nic0)->dev_name, "mlx5_7");
    CHECK_OK(acc_topo_vertex_path(t, acc_topo_find(t, ACC_VTX_GPU, 0), nic0, &p));
    CHECK_INT(p.cls, ACC_PATH_PIX);
    CHECK(has_assumption(t, "link_width=\"0\" read as x16"));
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
        CHECK_INT(gpu(t, g)->sm, 80); /* from PCI device 0x20b0 */
        CHECK_STR(gpu(t, g)->model, "A100 SXM4 40GB");
    }
    /* The real machine has NVSwitches, but this file lists no NVLink: none is invented. */
    check_no_nvlinks(t);
    check_nics(t, 4, 100.0);
    CHECK(has_assumption(t, "AWS EFA"));
    CHECK_INT(nic(t, 2)->numa, 1);
    /* "8 GT/s" x16 links: Gen3. */
    p = gpu_path(t, 0, 1);
    CHECK_INT(p.cls, ACC_PATH_PIX);
    CHECK_NEAR(p.bw, acc_topo_pcie_bw(3, 16), 1e-9);
    CHECK_INT(gpu_path(t, 0, 2).cls, ACC_PATH_NODE);
    CHECK_INT(gpu_path(t, 0, 4).cls, ACC_PATH_SYS);
    acc_topo_destroy(t);
}

ACC_TEST(azure_ncv4_self_nvlinks_and_cpu_nic)
{
    acc_topo_t *t = load("azure-ncv4-topo.xml");
    int g;

    CHECK_INT(acc_topo_gpus_per_node(t), 4);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 4);
    for (g = 0; g < 4; g++) {
        CHECK_INT(gpu(t, g)->sm, 80);
        CHECK_STR(gpu(t, g)->model, "A100 PCIe 80GB");
        CHECK_INT(gpu(t, g)->numa, g);
    }
    /* Each GPU lists 12 NVLinks to its own bus id: a VM artefact, not links. */
    check_no_nvlinks(t);
    CHECK(has_assumption(t, "own bus id"));
    /* A <nic> straight under the first <cpu>. */
    check_nics(t, 1, 100.0);
    CHECK_STR(nic(t, 0)->dev_name, "eth0");
    CHECK_INT(nic(t, 0)->numa, 0);
    /* link_speed="" on the GPUs: the A100's Gen4. */
    CHECK(has_assumption(t, "PCIe Gen4 where link_speed is missing"));
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
        CHECK_INT(gpu(t, 0)->sm, sm[i]);
        CHECK(has_assumption(t, "GPU model not in the file"));
        CHECK(has_assumption(t, "acc invents none"));
        check_no_nvlinks(t);
        acc_topo_destroy(t);
        acc_free(text);
    }
}

ACC_TEST(azure_ndv5_with_gpu_ids)
{
    acc_topo_t *t = load_with_gpu_id("azure-ndv5-topo.xml", "0x2330");
    acc_topo_path_t p;

    CHECK_INT(acc_topo_gpus_per_node(t), 8);
    CHECK_INT(gpu(t, 0)->sm, 90);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 8);
    check_no_nvlinks(t);
    /* 0x020700 NICs without a <nic>: NDR 400, the DGX H100 rate. */
    check_nics(t, 8, 400.0);
    CHECK(has_assumption(t, "DGX NIC rate of sm_90"));
    CHECK_OK(acc_topo_vertex_path(t, acc_topo_find(t, ACC_VTX_GPU, 0), acc_topo_gpu_nic(t, 0), &p));
    CHECK_INT(p.cls, ACC_PATH_PIX);
    CHECK_NEAR(p.bw, acc_topo_pcie_bw(5, 16), 1e-9); /* "32.0 GT/s PCIe" x16 */
    CHECK_INT(gpu(t, 4)->numa, 1);
    acc_topo_destroy(t);
}

ACC_TEST(azure_ndv4_with_gpu_ids)
{
    acc_topo_t *t = load_with_gpu_id("azure-ndv4-topo.xml", "0x20b2");

    CHECK_INT(acc_topo_gpus_per_node(t), 8);
    CHECK_INT(gpu(t, 0)->sm, 80);
    CHECK_STR(gpu(t, 0)->busid, "0003:00:00.0"); /* document order without <gpu dev> */
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 4);
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 4);
    check_no_nvlinks(t);
    check_nics(t, 8, 200.0);
    /* Old-kernel "16 GT/s": Gen4. */
    CHECK_INT(gpu_path(t, 0, 1).cls, ACC_PATH_PIX);
    CHECK_NEAR(gpu_path(t, 0, 1).bw, acc_topo_pcie_bw(4, 16), 1e-9);
    CHECK_INT(gpu(t, 7)->numa, 3);
    acc_topo_destroy(t);
}

ACC_TEST(azure_ndv2_with_gpu_ids)
{
    acc_topo_t *t = load_with_gpu_id("azure-ndv2-topo.xml", "0x1db5");

    CHECK_INT(acc_topo_gpus_per_node(t), 8);
    CHECK_INT(gpu(t, 0)->sm, 70);
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
    acc_free(text);
}

ACC_TEST(graph_file_refused)
{
    char *text = slurp("azure-ncv4-graph.xml", NULL);
    acc_topo_t *t;
    CHECK_ERR(import(text, strlen(text), "azure-ncv4-graph.xml", &t), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("azure-ncv4-graph.xml:1:");
    CHECK_MSG_HAS("NCCL graph file");
    CHECK_MSG_HAS("NCCL_TOPO_DUMP_FILE");
    acc_free(text);
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
            char *copy = acc_malloc(cuts[i] + 1);
            acc_topo_t *t;
            memcpy(copy, text, cuts[i]);
            copy[cuts[i]] = '\0';
            CHECK_ERR(import(copy, cuts[i], fixtures[f], &t), ACC_ERR_PARSE);
            CHECK_MSG_HAS(fixtures[f]);
            acc_free(copy);
        }
        acc_free(text);
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
    acc_free(text);
    acc_free(bad);
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
        acc_free(text);
        acc_free(a);
        acc_free(b);
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
    acc_free(text);
    acc_free(two);
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

/* Two GPUs of one CPU, listed dev=1 first, with a body inside each <gpu>. */
static char *two_gpus(int sm, const char *gpu0_body, const char *gpu1_body)
{
    /* the host link of the generation, so that NVLink stays the widest path */
    const char *speed = sm >= 90 ? "32.0 GT/s PCIe" : sm >= 80 ? "16.0 GT/s PCIe" : "8.0 GT/s PCIe";
    acc_buf_t b;
    acc_buf_init(&b);
    acc_buf_printf(&b,
                   "<system version=\"1\">\n"
                   "  <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" "
                   "modelid=\"143\">\n"
                   "    <pci busid=\"0000:01:00.0\" class=\"0x030200\" "
                   "link_speed=\"%s\" link_width=\"16\">\n"
                   "      <gpu dev=\"1\" sm=\"%d\">%s</gpu>\n"
                   "    </pci>\n"
                   "    <pci busid=\"0000:02:00.0\" class=\"0x030200\" "
                   "link_speed=\"%s\" link_width=\"16\">\n"
                   "      <gpu dev=\"0\" sm=\"%d\">%s</gpu>\n"
                   "    </pci>\n"
                   "  </cpu>\n"
                   "</system>\n",
                   speed, sm, gpu1_body, speed, sm, gpu0_body);
    return acc_buf_take(&b);
}

ACC_TEST(gpus_numbered_by_dev)
{
    char *xml = two_gpus(90, "", "");
    acc_topo_t *t = import_ok(xml, "dev.xml");
    CHECK_STR(gpu(t, 0)->busid, "0000:02:00.0");
    CHECK_STR(gpu(t, 1)->busid, "0000:01:00.0");
    acc_topo_destroy(t);
    acc_free(xml);
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
    acc_free(both);
    acc_free(one);
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
    acc_free(xml);
}

ACC_TEST(nvlinks_to_absent_gpus_left_out)
{
    char *xml =
        two_gpus(90, "<nvlink target=\"0000:0a:00.0\" count=\"4\" tclass=\"0x030200\"/>", "");
    acc_topo_t *t = import_ok(xml, "subset.xml");
    check_no_nvlinks(t);
    CHECK(has_assumption(t, "NVLinks to GPUs absent from the file"));
    acc_topo_destroy(t);
    acc_free(xml);
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
    acc_free(gh);
    acc_free(p9);
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
        const acc_topo_vertex_t *n = nic(t, i);
        cx7 += n->device_id == 0x1021 && n->speed_gbps == 400.0;
        dgx += !n->device_id && !n->dev_name[0] && n->speed_gbps == 200.0;
        fallback += strcmp(n->dev_name, "eth9") == 0 && n->speed_gbps == 10.0;
    }
    CHECK_INT(cx7 + dgx + fallback, 3);
    CHECK(has_assumption(t, "ConnectX-7"));
    CHECK(has_assumption(t, "DGX NIC rate of sm_80"));
    CHECK(has_assumption(t, "NCCL's fallback"));
    acc_topo_destroy(t);
}

/* ---- export and round trips -------------------------------------------------------------- */

/* The limits of NCCL's parser (src/graph/xml.h): 256 elements, 16 attributes per element. */
static void check_nccl_limits(const char *xml)
{
    const char *p;
    int elements = 0;
    for (p = xml; (p = strchr(p, '<')) != NULL; p++) {
        const char *end = strchr(p, '>'), *q;
        int attrs = 0;
        CHECK(end != NULL);
        if (p[1] == '/' || p[1] == '!' || p[1] == '?')
            continue;
        elements++;
        for (q = p; q < end; q++)
            attrs += q[0] == '=' && q[1] == '"';
        CHECK_MSG(attrs <= 16, "element with %d attributes", attrs);
    }
    CHECK_MSG(elements <= 256, "%d elements", elements);
}

/* Export, import again: the same fingerprint, and the same text when exported again. */
static void check_round_trip(const acc_topo_t *t, const char *name)
{
    acc_buf_t x, y, c1, c2;
    acc_topo_t *back;
    char f1[ACC_SHA256_HEX_LEN + 1], f2[ACC_SHA256_HEX_LEN + 1];

    acc_buf_init(&x);
    acc_buf_init(&y);
    acc_buf_init(&c1);
    acc_buf_init(&c2);
    CHECK_OK(acc_topo_export_nccl_xml(t, &x));
    check_nccl_limits(x.data);
    back = import_ok(x.data, name);
    CHECK_OK(acc_topo_canonical(t, &c1));
    CHECK_OK(acc_topo_canonical(back, &c2));
    CHECK_STR(c2.data, c1.data);
    CHECK_OK(acc_topo_fingerprint(t, f1));
    CHECK_OK(acc_topo_fingerprint(back, f2));
    CHECK_STR(f2, f1);
    CHECK_INT(acc_topo_count(back, ACC_VTX_GPU), acc_topo_count(t, ACC_VTX_GPU));
    CHECK_INT(acc_topo_count(back, ACC_VTX_NIC), acc_topo_count(t, ACC_VTX_NIC));
    CHECK_INT(acc_topo_count(back, ACC_VTX_PCISW), acc_topo_count(t, ACC_VTX_PCISW));
    CHECK_OK(acc_topo_export_nccl_xml(back, &y));
    CHECK_STR(y.data, x.data);
    acc_topo_destroy(back);
    acc_buf_free(&x);
    acc_buf_free(&y);
    acc_buf_free(&c1);
    acc_buf_free(&c2);
}

ACC_TEST(round_trip_keeps_fingerprint)
{
    static const char *const direct[] = {IBM, "aws-p4d-24xl-topo.xml", "azure-ncv4-topo.xml"};
    static const char *const patched[][2] = {{"azure-ndv5-topo.xml", "0x2330"},
                                             {"azure-ndv4-topo.xml", "0x20b2"},
                                             {"azure-ndv2-topo.xml", "0x1db5"}};
    size_t i;
    for (i = 0; i < 3; i++) {
        acc_topo_t *t = load(direct[i]);
        check_round_trip(t, direct[i]);
        acc_topo_destroy(t);
    }
    for (i = 0; i < 3; i++) {
        acc_topo_t *t = load_with_gpu_id(patched[i][0], patched[i][1]);
        check_round_trip(t, patched[i][0]);
        acc_topo_destroy(t);
    }
}

ACC_TEST(round_trip_of_snippets)
{
    char *gh = two_gpus(90, "<c2c count=\"10\" bw=\"45000\"/>", "<c2c count=\"10\" bw=\"45000\"/>");
    char *p9 = two_gpus(70, "<nvlink target=\"0000:00:00.0\" count=\"3\" tclass=\"0x068001\"/>",
                        "<nvlink target=\"0000:02:00.0\" count=\"2\" tclass=\"0x030200\"/>");
    acc_topo_t *t = import_ok(gh, "gh.xml");
    check_round_trip(t, "gh.xml");
    acc_topo_destroy(t);
    t = import_ok(p9, "p9.xml");
    check_round_trip(t, "p9.xml");
    acc_topo_destroy(t);
    acc_free(gh);
    acc_free(p9);
}

/* Rewrite every bus number of the IBM file consistently (bus + 0x11, mod 256). */
static char *renumber(const char *text)
{
    acc_buf_t b;
    const char *p = text;

    acc_buf_init(&b);
    while (*p) {
        unsigned dom, bus, dev, fn;
        int n = 0;
        if ((strncmp(p, "busid=\"", 7) == 0 || strncmp(p, "target=\"", 8) == 0)) {
            const char *q = strchr(p, '"') + 1;
            acc_buf_append(&b, p, (size_t)(q - p));
            p = q;
            if (sscanf(p, "%4x:%2x:%2x.%1x%n", &dom, &bus, &dev, &fn, &n) == 4 && n == 12) {
                acc_buf_printf(&b, "%04x:%02x:%02x.%x", dom, (bus + 0x11) & 0xff, dev, fn);
                p += n;
            }
            continue;
        }
        acc_buf_append(&b, p++, 1);
    }
    CHECK_OK(acc_buf_status(&b));
    return acc_buf_take(&b);
}

ACC_TEST(fingerprint_ignores_bus_ids_not_nvlinks)
{
    char *text = slurp(IBM, NULL), *moved = renumber(text);
    char *fewer = replace(text, "count=\"5\"", "count=\"4\"", 1);
    char f0[ACC_SHA256_HEX_LEN + 1], f1[ACC_SHA256_HEX_LEN + 1], f2[ACC_SHA256_HEX_LEN + 1];
    acc_topo_t *a = import_ok(text, IBM), *b = import_ok(moved, "renumbered.xml");
    acc_topo_t *c = import_ok(fewer, "fewer.xml");

    CHECK_STR(gpu(b, 0)->busid, "0000:b5:00.0");
    CHECK_INT(acc_topo_nvlinks_to_switches(c, 0), 17);
    CHECK_OK(acc_topo_fingerprint(a, f0));
    CHECK_OK(acc_topo_fingerprint(b, f1));
    CHECK_OK(acc_topo_fingerprint(c, f2));
    CHECK_STR(f1, f0);
    CHECK(strcmp(f2, f0) != 0);
    acc_topo_destroy(a);
    acc_topo_destroy(b);
    acc_topo_destroy(c);
    acc_free(text);
    acc_free(moved);
    acc_free(fewer);
}

/* A model with no bus ids, host bridges and a cluster: what only acc_ attributes carry. */
static acc_topo_t *synthetic(void)
{
    acc_topo_t *t;
    acc_topo_network_t net = {4, "ib-ndr", 3.5, 1, 2.0};
    int cpu[2], hb[2], nvs, s, k, v;

    CHECK_OK(acc_topo_create(&t));
    CHECK_OK(topo_nvswitch(t, &nvs));
    for (s = 0; s < 2; s++) {
        acc_topo_vertex_t *x;
        CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_CPU, &cpu[s]));
        x = acc_topo_vertex_mut(t, cpu[s]);
        snprintf(x->cpu_arch, sizeof(x->cpu_arch), "x86_64");
        snprintf(x->cpu_vendor, sizeof(x->cpu_vendor), "GenuineIntel");
        x->cpu_family = 6;
        x->cpu_model = 143;
        /* a CPU list as hwloc-derived models hold it; NCCL wants a hex mask */
        snprintf(x->affinity, sizeof(x->affinity), "%s", s ? "48-95,144-191" : "0-47,96-143");
        CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_PCISW, &hb[s]));
        acc_topo_vertex_mut(t, hb[s])->host_bridge = 1;
        acc_topo_vertex_mut(t, hb[s])->numa = s;
        CHECK_OK(topo_add_pcie(t, hb[s], cpu[s], 5, 16));
        for (k = 0; k < 2; k++) {
            CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_GPU, &v));
            acc_topo_vertex_mut(t, v)->device_id = 0x2330;
            acc_topo_vertex_mut(t, v)->numa = s;
            CHECK_OK(topo_fill_gpu_defaults(t, v));
            CHECK_OK(topo_add_pcie(t, v, hb[s], 5, 16));
            CHECK_OK(topo_add_nvlinks(t, v, nvs, 18));
        }
        CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_NIC, &v));
        acc_topo_vertex_mut(t, v)->speed_gbps = 400;
        acc_topo_vertex_mut(t, v)->gdr = 1;
        acc_topo_vertex_mut(t, v)->numa = s;
        CHECK_OK(topo_add_pcie(t, v, hb[s], 5, 16));
    }
    CHECK_OK(topo_connect_cpus(t));
    CHECK_OK(acc_topo_set_network(t, &net));
    CHECK_OK(acc_topo_set_name(t, "two sockets & friends"));
    CHECK_OK(acc_topo_finalize(t));
    return t;
}

ACC_TEST(export_synthetic_model)
{
    acc_topo_t *t = synthetic(), *back;
    acc_buf_t x;
    int i;

    acc_buf_init(&x);
    CHECK_OK(acc_topo_export_nccl_xml(t, &x));
    CHECK(strstr(x.data, "<pci busid=\"acc0:00:00.0\" class=\"0x030200\"") != NULL);
    CHECK(strstr(x.data, "target=\"acc1:00:00.0\" count=\"18\" tclass=\"0x068000\"") != NULL);
    CHECK(strstr(x.data, "acc_host_bridge=\"1\"") != NULL);
    CHECK(strstr(x.data, "acc_nodes=\"4\" acc_fabric=\"ib-ndr\" acc_latency_us=\"3.5\" "
                         "acc_rail=\"1\" acc_oversub=\"2\"") != NULL);
    CHECK(strstr(x.data, "acc_name=\"two sockets &amp; friends\"") != NULL);
    CHECK(strstr(x.data, "<cpu numaid=\"0\" affinity=\"0000ffff,ffffffff,00000000,0000ffff,"
                         "ffffffff\"") != NULL);
    CHECK(strstr(x.data, "<cpu numaid=\"1\" affinity=\"ffffffff,ffff0000,00000000,ffffffff,"
                         "ffff0000,00000000\"") != NULL);
    check_round_trip(t, "synthetic.xml");
    back = import_ok(x.data, "synthetic.xml");
    CHECK_INT(acc_topo_network(back)->nodes, 4);
    CHECK_STR(acc_topo_network(back)->name, "ib-ndr");
    CHECK_STR(acc_topo_name(back), "two sockets & friends");
    for (i = 0; i < acc_topo_vertex_count(back); i++)
        if (acc_topo_vertex(back, i)->kind == ACC_VTX_PCISW)
            CHECK_INT(acc_topo_vertex(back, i)->host_bridge, 1);
    acc_topo_destroy(back);
    acc_topo_destroy(t);
    acc_buf_free(&x);
}

ACC_TEST(export_refuses_what_nccl_cannot_hold)
{
    acc_topo_t *t;
    acc_buf_t x;
    int cpu, g0, g1;

    /* GPU1 reaches the rest only over NVLink: NCCL's tree has no place for it. */
    CHECK_OK(acc_topo_create(&t));
    CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_CPU, &cpu));
    CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_GPU, &g0));
    acc_topo_vertex_mut(t, g0)->sm = 90;
    CHECK_OK(acc_topo_add_vertex(t, ACC_VTX_GPU, &g1));
    acc_topo_vertex_mut(t, g1)->sm = 90;
    CHECK_OK(topo_add_pcie(t, g0, cpu, 5, 16));
    CHECK_OK(topo_add_nvlinks(t, g0, g1, 4));
    acc_buf_init(&x);
    CHECK_ERR(acc_topo_export_nccl_xml(t, &x), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("GPU1 has no PCIe path to a CPU");
    CHECK_INT(x.len, 0);
    acc_buf_free(&x);
    acc_topo_destroy(t);
}
