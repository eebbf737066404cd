/* hwloc XML import: the real captures in tests/data/topologies/hwloc-xml, and broken ones. */
#include "topo_test_util.h"

#include <stdlib.h>

#define DIR "topologies/hwloc-xml/"

static char *read_data(const char *rel, size_t *len)
{
    char *text = NULL;
    acc_status_t st = acc_read_file(acc_test_data(rel), &text, len);
    CHECK_MSG(st == ACC_OK, "reading %s: %s", rel, acc_error_message());
    return text;
}

/* Import and finalize, as acc_topo_load_buffer does; *out is NULL on failure. */
static acc_status_t import(const char *text, size_t len, const char *name, acc_topo_t **out)
{
    return tt_import(topo_import_hwloc_xml, text, len, name, out);
}

static acc_topo_t *load(const char *file)
{
    size_t len;
    char *text = read_data(file, &len);
    acc_topo_t *t = NULL;
    CHECK_OK(import(text, len, file, &t));
    free(text);
    return t;
}

/* Replace every `from` by `to`; `to` NULL leaves the text as it is.  Taken by the caller. */
static char *replace_all(const char *text, size_t n, const char *from, const char *to, size_t *len)
{
    size_t fl = strlen(from), tl = to ? strlen(to) : 0, count = 0, i, o = 0;
    const char *p;
    char *out;
    for (p = strstr(text, from); to && p; p = strstr(p + fl, from))
        count++;
    CHECK_MSG(!to || count > 0, "the text does not contain \"%s\"", from);
    out = malloc(n + count * tl + 1);
    for (i = 0; i < n;) {
        if (to && strncmp(text + i, from, fl) == 0) {
            memcpy(out + o, to, tl);
            o += tl;
            i += fl;
        } else {
            out[o++] = text[i++];
        }
    }
    out[o] = '\0';
    *len = o;
    return out;
}

/* The text with every length="N" of <indexes> and <u64values> set to its content's length again,
 * as an hwloc export would have written it after the edit.  Takes text. */
static char *fix_lengths(char *text, size_t *len)
{
    char *out = malloc(*len * 2 + 64), *p = text, *q, *end = NULL;
    size_t o = 0;
    for (q = strstr(p, " length=\""); q; q = strstr(p, " length=\"")) {
        char *close = strchr(q + 9, '"');
        if (close)
            end = strchr(close, '<');
        CHECK(close && close[1] == '>' && end);
        memcpy(out + o, p, (size_t)(q - p));
        o += (size_t)(q - p);
        o += (size_t)sprintf(out + o, " length=\"%zu", (size_t)(end - (close + 2)));
        p = close;
    }
    strcpy(out + o, p);
    *len = o + strlen(p);
    free(text);
    return out;
}

/* A data file with up to two replacements. */
static char *edited(const char *file, const char *from, const char *to, const char *from2,
                    const char *to2, size_t *len)
{
    size_t n;
    char *text = read_data(file, &n), *a = replace_all(text, n, from, to, &n), *b;
    b = replace_all(a, n, from2 ? from2 : "", from2 ? to2 : NULL, len);
    free(text);
    free(a);
    return b;
}

static acc_path_class_t gpu_path(const acc_topo_t *t, int a, int b)
{
    acc_topo_path_t p;
    CHECK_OK(acc_topo_path(t, a, b, &p));
    return p.cls;
}

static int nvlinks_to_cpu(const acc_topo_t *t, int g, int cpu)
{
    const acc_topo_link_t *l = acc_topo_find_link(
        t, acc_topo_find(t, ACC_VTX_GPU, g), acc_topo_find(t, ACC_VTX_CPU, cpu), ACC_LINK_NVLINK);
    return l ? l->count : 0;
}

ACC_TEST(dgx2_sixteen_v100_six_links_into_nvswitch)
{
    acc_topo_t *t = load(DIR "hwloc-nvidiaDGX2.xml");
    const acc_topo_link_t *l;
    acc_topo_path_t p;
    int g;

    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 16);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1); /* 12 chips, one fabric */
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), 0);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    for (g = 0; g < 16; g++) {
        CHECK_STR(tt_gpu(t, g)->model, "V100 SXM3 32GB");
        CHECK_INT(tt_gpu(t, g)->sm, 70);
        CHECK_INT(tt_gpu(t, g)->numa, g < 8 ? 0 : 1);
        CHECK_INT(acc_topo_nvlinks_to_switches(t, g), 6);
        CHECK_INT(acc_topo_nvlinks_between(t, 0, g), 0);
    }
    CHECK_STR(tt_gpu(t, 0)->busid, "0000:34:00.0");
    CHECK_STR(tt_gpu(t, 15)->busid, "0000:e7:00.0");
    CHECK_OK(acc_topo_path(t, 0, 15, &p));
    CHECK_INT(p.cls, ACC_PATH_NVL);
    CHECK_NEAR(p.bw, 150.0, 1e-9); /* 6 x 25 GB/s NVLink2 */
    /* Two GPUs per PLX switch, two switches per upper switch (which hangs off the root port). */
    CHECK_INT(acc_topo_count(t, ACC_VTX_PCISW), 12);
    l = acc_topo_find_link(t, acc_topo_find(t, ACC_VTX_GPU, 0),
                           acc_topo_find_busid(t, "0000:32:00.0"), ACC_LINK_PCIE);
    CHECK(l != NULL);
    CHECK_INT(l->gen, 3);
    CHECK_INT(l->width, 16);
    CHECK_OK(acc_topo_vertex_path(t, acc_topo_find(t, ACC_VTX_GPU, 0),
                                  acc_topo_find(t, ACC_VTX_CPU, 0), &p));
    CHECK_INT(p.cls, ACC_PATH_PHB);
    CHECK_STR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_CPU, 1))->cpu_vendor, "GenuineIntel");
    CHECK_INT(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_CPU, 1))->cpu_model, 85);
    CHECK(tt_assumed(t, "NVLinkBandwidth / 25000 MB/s", "sm_70"));
    acc_topo_destroy(t);
}

/* The matrix: GPU pairs 0-1 and 2-3 at 40000 MB/s, and each GPU 40000 MB/s to its own package;
 * P100 NVLink1 is 20000 MB/s per link, so 2 links each way: 4 per GPU, all a P100 has. */
ACC_TEST(power8_nvlinks_to_the_cpu)
{
    acc_topo_t *t = load(DIR "hwloc-power8gpudistances.xml");
    int g;

    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 4);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    for (g = 0; g < 4; g++) {
        CHECK_STR(tt_gpu(t, g)->model, "P100 SXM2 16GB");
        CHECK_INT(tt_gpu(t, g)->sm, 60);
        CHECK_INT(nvlinks_to_cpu(t, g, g / 2), 2);
        CHECK_INT(nvlinks_to_cpu(t, g, 1 - g / 2), 0);
    }
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 2);
    CHECK_INT(acc_topo_nvlinks_between(t, 2, 3), 2);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 2), 0);
    CHECK_INT(gpu_path(t, 0, 1), ACC_PATH_NVL);
    CHECK_INT(gpu_path(t, 1, 2), ACC_PATH_SYS);
    CHECK_STR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_CPU, 0))->cpu_arch, "ppc64");
    CHECK_STR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_CPU, 1))->affinity,
              "80-81,88-89,96-97,104-105");
    acc_topo_destroy(t);
}

ACC_TEST(lassen_has_no_nvlink_matrix_and_says_so)
{
    acc_topo_t *t = load(DIR "mpibind-coral-lassen.xml");
    static const char *const names[] = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"};
    int i;

    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 4);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    for (i = 0; i < 4; i++) {
        CHECK_STR(tt_gpu(t, i)->model, "V100 SXM2 16GB");
        CHECK_INT(tt_gpu(t, i)->sm, 70);
        CHECK_INT(acc_topo_nvlinks_to_switches(t, i), 0);
        CHECK_INT(nvlinks_to_cpu(t, i, i / 2), 0);
    }
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 0);
    CHECK(tt_assumed(t, "NVLinks unknown", "hwloc 2.2.0"));
    CHECK(tt_assumed(t, "NCCL topology dump", "nvidia-smi topo -m"));
    /* Two dual-port ConnectX-5 Ex, one per socket; the Broadcom 1G ports are not fabric. */
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), 4);
    for (i = 0; i < 4; i++) {
        CHECK_STR(tt_nic(t, i)->dev_name, names[i]);
        CHECK_NEAR(tt_nic(t, i)->speed_gbps, 100.0, 0);
        CHECK_INT(tt_nic(t, i)->numa, i / 2);
        CHECK_INT(tt_nic(t, i)->device_id, 0x1019);
    }
    CHECK(tt_assumed(t, "100 Gb/s", "ConnectX-5 Ex"));
    /* GPU pairs share a PLX switch; the switch hangs off its POWER9 host bridge by Gen3 x4. */
    CHECK_INT(gpu_path(t, 0, 1), ACC_PATH_PIX);
    CHECK_INT(gpu_path(t, 0, 2), ACC_PATH_SYS);
    CHECK_INT(acc_topo_vertex_numa(t, acc_topo_gpu_nic(t, 0)), 0);
    CHECK_INT(acc_topo_vertex_numa(t, acc_topo_gpu_nic(t, 3)), 1);
    acc_topo_destroy(t);
}

ACC_TEST(g4dn_eight_t4_one_efa)
{
    acc_topo_t *t = load(DIR "mpibind-g4dnmetal.xml");
    int g;

    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 8);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    for (g = 0; g < 8; g++) {
        CHECK_STR(tt_gpu(t, g)->model, "T4");
        CHECK_INT(tt_gpu(t, g)->sm, 75);
        CHECK_INT(tt_gpu(t, g)->sm_count, 40); /* CUDAMultiProcessors */
        CHECK_INT(tt_gpu(t, g)->numa, g / 4);
    }
    /* EFA kept by its RDMA device; the ENA Ethernet next to it is not a fabric NIC. */
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), 1);
    CHECK_STR(tt_nic(t, 0)->dev_name, "rdmap197s0");
    CHECK_STR(tt_nic(t, 0)->busid, "0000:c5:00.0");
    CHECK_NEAR(tt_nic(t, 0)->speed_gbps, 100.0, 0);
    CHECK_INT(tt_nic(t, 0)->numa, 1);
    CHECK(tt_assumed(t, "100 Gb/s", "EFA (1d0f:efa0)"));
    /* Two T4 per host bridge, two host bridges per socket. */
    CHECK_INT(gpu_path(t, 0, 1), ACC_PATH_PHB);
    CHECK_INT(gpu_path(t, 0, 2), ACC_PATH_NODE);
    CHECK_INT(gpu_path(t, 0, 4), ACC_PATH_SYS);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 0);
    CHECK(!tt_assumed(t, "NVLinks unknown", NULL)); /* T4 has no NVLink to miss */
    acc_topo_destroy(t);
}

/* A GPU that neither its PCI id nor its name identifies has no known compute capability. */
ACC_TEST(unknown_gpu_model_is_an_error)
{
    size_t n, len;
    char *text = NULL, *a, *b;
    acc_topo_t *t;

    CHECK_OK(acc_read_file(acc_test_src("tests/fuzz/corpus/hwloc_xml/t4-efa-ena.xml"), &text, &n));
    a = replace_all(text, n, "[10de:1eb8]", "[10de:1fff]", &len);
    b = replace_all(a, len, "Tesla T4", "Tesla Q9", &len);
    CHECK_ERR(import(b, len, "q9.xml", &t), ACC_ERR_TOPO);
    CHECK_MSG_HAS("q9.xml: GPU 0000:18:00.0 (PCI 10de:1fff, \"Tesla Q9\")");
    CHECK_MSG_HAS("'sm'");
    free(text);
    free(a);
    free(b);
}

/* hwloc's test machine from before link speeds were recorded: two GPUs by PCI id only (Tesla
 * M2075), one whose CUDA device says Tesla K40m, a Radeon, a Matrox, two Intel I350 ports and a
 * ConnectX-4. */
ACC_TEST(old_capture_mixed_gpus_without_link_speeds)
{
    acc_topo_t *t = load(DIR "hwloc-32em64t-2n8c2t-pci-normalio.xml");
    const acc_topo_link_t *l;

    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 3); /* the Radeon and the Matrox are not */
    CHECK_STR(tt_gpu(t, 0)->busid, "0000:03:00.0");
    CHECK_STR(tt_gpu(t, 0)->model, "Tesla M2075");
    CHECK_INT(tt_gpu(t, 0)->sm, 20);
    CHECK_INT(tt_gpu(t, 0)->numa, 0);
    CHECK_STR(tt_gpu(t, 2)->busid, "0000:84:00.0");
    CHECK_STR(tt_gpu(t, 2)->model, "Tesla K40m"); /* the driver's name wins over the PCI id */
    CHECK_INT(tt_gpu(t, 2)->sm, 35);
    CHECK_INT(tt_gpu(t, 2)->numa, 1);
    CHECK_INT(tt_gpu(t, 2)->sm_count, 15);                  /* its cuda0 OS device */
    CHECK_INT(tt_gpu(t, 2)->mem_bytes, 11796032ull * 1024); /* CUDAGlobalMemorySize, KiB */
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), 1);           /* not the two I350 ports */
    CHECK_STR(tt_nic(t, 0)->dev_name, "mlx5_0");
    CHECK_NEAR(tt_nic(t, 0)->speed_gbps, 100.0, 0);
    CHECK(tt_assumed(t, "ConnectX-4", NULL));
    CHECK(tt_assumed(t, "PCIe link speed not in the input", "Tesla M2075 taken as Gen2 x16"));
    l = acc_topo_find_link(t, acc_topo_find(t, ACC_VTX_GPU, 0), acc_topo_find(t, ACC_VTX_CPU, 0),
                           ACC_LINK_PCIE);
    CHECK(l != NULL);
    CHECK_INT(l->gen, 2);
    CHECK_INT(l->width, 16);
    CHECK_INT(gpu_path(t, 1, 2), ACC_PATH_PHB);
    CHECK_INT(gpu_path(t, 0, 1), ACC_PATH_SYS);
    acc_topo_destroy(t);
}

/* hwloc 2.9.0 wrote 50000 MB/s per NVLink3/4 link, twice the truth (open-mpi/hwloc#574): the
 * DGX-2 capture turned into an A100 machine as 2.9.0 would have written it, 2 links per chip. */
ACC_TEST(hwloc_290_nvlink_rate_quirk)
{
    size_t len, n2;
    char *a = edited(DIR "hwloc-nvidiaDGX2.xml", "10de:1db8", "10de:20b0", "Tesla V100-SXM3-32GB-H",
                     "A100-SXM4-40GB", &len);
    char *b = replace_all(a, len, " 25000", " 100000", &len);
    char *c = fix_lengths(replace_all(b, len, ">25000", ">100000", &len), &len);
    char *d = replace_all(c, len, "PR-436-20201209.1647.gitfc946998", "2.9.0", &n2);
    acc_topo_t *t;

    CHECK_OK(import(d, n2, "a100-290.xml", &t));
    CHECK_STR(tt_gpu(t, 0)->model, "A100 SXM4 40GB");
    CHECK_INT(tt_gpu(t, 0)->sm, 80);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 0), 12);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 15), 12);
    CHECK(tt_assumed(t, "50000 MB/s", "hwloc 2.9.0"));
    acc_topo_destroy(t);
    /* The same matrix from another hwloc version reads as 24 links: more than an A100 has. */
    CHECK_ERR(import(c, len, "a100-other.xml", &t), ACC_ERR_TOPO);
    CHECK_MSG_HAS("24 NVLinks");
    free(a);
    free(b);
    free(c);
    free(d);
}

ACC_TEST(truncated_files_fail_with_the_line)
{
    static const char *const files[] = {"hwloc-nvidiaDGX2.xml", "hwloc-power8gpudistances.xml",
                                        "mpibind-coral-lassen.xml", "mpibind-g4dnmetal.xml",
                                        "hwloc-32em64t-2n8c2t-pci-normalio.xml"};
    static const double cuts[] = {0.0, 0.001, 0.1, 0.37, 0.5, 0.9, 0.999};
    size_t f, k;

    for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        char rel[128];
        size_t len;
        char *text;
        snprintf(rel, sizeof(rel), DIR "%s", files[f]);
        text = read_data(rel, &len);
        for (k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++) {
            acc_topo_t *t;
            size_t cut = (size_t)(cuts[k] * (double)len);
            CHECK_ERR(import(text, cut, "cut.xml", &t), ACC_ERR_PARSE);
            CHECK_MSG_HAS("cut.xml:");
            CHECK_MSG_HAS("malformed XML");
            if (cut > 0)
                CHECK_MSG_HAS("cut short");
        }
        /* Without its last closing tag. */
        {
            acc_topo_t *t;
            char *end = strstr(text, "</topology>");
            CHECK(end != NULL);
            CHECK_ERR(import(text, (size_t)(end - text), "cut.xml", &t), ACC_ERR_PARSE);
        }
        free(text);
    }
}

static void expect2(const char *from, const char *to, const char *from2, const char *to2,
                    acc_status_t want, const char *fragment)
{
    size_t len;
    char *text = edited(DIR "hwloc-nvidiaDGX2.xml", from, to, from2, to2, &len);
    acc_topo_t *t;
    if (!strstr(fragment, "length"))
        text = fix_lengths(text, &len);
    CHECK_ERR(import(text, len, "bad.xml", &t), want);
    CHECK_MSG_HAS("bad.xml");
    CHECK_MSG_HAS(fragment);
    free(text);
}

static void expect(const char *from, const char *to, acc_status_t want, const char *fragment)
{
    expect2(from, to, NULL, NULL, want, fragment);
}

ACC_TEST(corrupted_files_are_named_errors)
{
    expect("<topology version=\"2.0\">", "<topology version=\"3.0\">", ACC_ERR_UNSUPPORTED,
           "lstopo --of v2xml");
    expect("type=\"Machine\"", "type=\"Mashine\"", ACC_ERR_PARSE,
           "bad.xml:4: unknown hwloc object type \"Mashine\"");
    expect("pci_busid=\"0000:34:00.0\"", "pci_busid=\"00003400\"", ACC_ERR_PARSE, "pci_busid");
    expect("pci_type=\"0302 [10de:1db8] [10de:131d] a1\"", "pci_type=\"0302 10de 1db8\"",
           ACC_ERR_PARSE, "pci_type");
    expect("gp_index=\"802\"", "gp_index=\"99802\"", ACC_ERR_PARSE,
           "distance index \"OSDev:802\" names no OSDev");
    expect("<topology version=\"2.0\">", "<system version=\"1\">", ACC_ERR_PARSE, "malformed XML");
    expect("nbobjs=\"28\"", "nbobjs=\"27\"", ACC_ERR_PARSE, "lists 28 indexes");
    expect("<object type=\"Package\"", "<object", ACC_ERR_PARSE, "without a type");
    expect("<u64values length=\"36\">0 0 0 0 0 0 25000", "<u64values length=\"36\">0 0 0 0 0 0 x",
           ACC_ERR_PARSE, "distance value \"x\"");
    expect("<u64values length=\"36\">0 0 0 0 0 0 25000",
           "<u64values length=\"36\">0 0 0 0 0 0 2500", ACC_ERR_PARSE,
           "bad.xml:377: <u64values length=\"36\"> holds 35 characters");
}

ACC_TEST(nvlink_matrix_must_count_whole_links)
{
    /* Changed in some rows only: the two directions disagree. */
    expect("<u64values length=\"36\">0 0 0 0 0 0 25000",
           "<u64values length=\"36\">0 0 0 0 0 0 33000", ACC_ERR_TOPO, "not symmetric");
    /* Changed everywhere. */
    expect2(" 25000", " 37000", ">25000", ">37000", ACC_ERR_TOPO,
            "not a whole number of 25000 MB/s links");
    expect2(" 25000", " 99999999999", ">25000", ">99999999999", ACC_ERR_TOPO, "more than 64 links");
}

ACC_TEST(not_hwloc_at_all)
{
    static const char nccl[] = "<system version=\"1\"><cpu numaid=\"0\"/></system>";
    static const char noobj[] =
        "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n</topology>\n";
    static const char junk[] = "\x7f"
                               "ELF\x02\x01\x01\0\0\0";
    acc_topo_t *t;

    CHECK_ERR(import(nccl, sizeof(nccl) - 1, "nccl.xml", &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("nccl.xml:1: the root element is <system>");
    CHECK_ERR(import(noobj, sizeof(noobj) - 1, "empty.xml", &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("empty.xml:2: <topology> holds no <object>");
    CHECK_ERR(import(junk, sizeof(junk) - 1, "junk.bin", &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("junk.bin:1: malformed XML");
    CHECK_ERR(import("", 0, "nothing.xml", &t), ACC_ERR_PARSE);
}

/* Through the public loader: the format is recognised from the content and the importer's
 * errors keep the path. */
ACC_TEST(load_file_detects_hwloc)
{
    acc_topo_t *t = NULL;
    CHECK_OK(acc_topo_load_file(acc_test_data(DIR "mpibind-g4dnmetal.xml"), &t));
    CHECK_INT(acc_topo_format(t), ACC_TOPO_FMT_HWLOC_XML);
    CHECK_INT(acc_topo_ranks(t), 8);
    acc_topo_destroy(t);
}

/* libxml2 itself, declared here as the test has no libxml2 headers (acc_topo links it). */
void *xmlReadMemory(const char *buffer, int size, const char *url, const char *encoding,
                    int options);
void xmlFreeDoc(void *doc);

/* hwloc's libxml2 plugin leaves this thread's libxml2 error handler pointing into itself when it
 * unloads with the last topology; an encoding error, which libxml2 reports through that handler,
 * then crashed the next XML reader of the thread.  The importer puts the handler back. */
ACC_TEST(libxml2_usable_after_an_import)
{
    static const char bad[] = "<?xml version=\"1.0\" encoding=\"EUC-JP\"?>\n"
                              "<topology version=\"2.0\">\xff\xfe\xff\xfe\x80\x80</topology>\n";
    acc_topo_t *t = load(DIR "mpibind-g4dnmetal.xml");
    acc_topo_destroy(t);
    xmlFreeDoc(xmlReadMemory(bad, (int)sizeof(bad) - 1, "bad.xml", NULL, 1 << 5 | 1 << 6));
    CHECK_ERR(import(bad, sizeof(bad) - 1, "euc.xml", &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("euc.xml:1: malformed XML: input conversion failed");
}

/* Inputs that crashed or leaked inside hwloc 2.9 when fuzzing: refused before hwloc reads them. */
ACC_TEST(inputs_that_break_hwloc_are_refused)
{
    static const struct {
        const char *text, *fragment;
    } cases[] = {
        {"<topology><object type=\"Machine\" cpuset=\"\"></object></topology>",
         "cpuset=\"\" is not an hwloc bitmap"},
        {"<topology version=\"2.0\"><object type=\"Machine\" cpuset=\"0xf\" "
         "complete_cpuset=\"0x0\" "
         "nodeset=\"0x1\" complete_nodeset=\"0x1\"></object></topology>",
         "cpuset is not within complete_cpuset"},
        {"<topology version=\"2.0\"><object type=\"Machine\" cpuset=\"0x1\" nodeset=\"0x1\" "
         "complete_nodeset=\"0x1\"></object></topology>",
         "without its complete_cpuset attribute"},
        {"<topology version=\"2.0\"><object type=\"Machine\" cpuset=\"0x1\" "
         "complete_cpuset=\"0x1\" "
         "nodeset=\"0x1\" complete_nodeset=\"0x1\"><i_nfo name=\"a\"/></object></topology>",
         "unexpected <i_nfo> inside a Machine <object>"},
        {"<topology version=\"1.0\"><object type=\"Machine\"/></topology>",
         "hwloc writes 2.0 there"},
    };
    size_t i;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        acc_topo_t *t;
        CHECK_ERR(import(cases[i].text, strlen(cases[i].text), "f.xml", &t), ACC_ERR_PARSE);
        CHECK_MSG_HAS("f.xml:1: ");
        CHECK_MSG_HAS(cases[i].fragment);
    }
}

/* LLNL's Tioga (HPE Cray EX235A): eight AMD MI250X GCDs with their I/O devices.  The machine is
 * refused for what it is - another vendor's GPUs - not with advice to export I/O devices. */
ACC_TEST(amd_gpus_are_named_and_unsupported)
{
    size_t len;
    char *text = read_data(DIR "mpibind-eas-tioga.xml", &len);
    acc_topo_t *t = NULL;
    CHECK_ERR(import(text, len, "tioga.xml", &t), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("tioga.xml: its 8 GPUs are AMD's (PCI 1002:7408");
    CHECK_MSG_HAS("AMD INSTINCT MI200");
    CHECK_MSG_HAS("NVIDIA GPUs (NVLink, NCCL) only");
    CHECK(strstr(acc_error_message(), "lstopo") == NULL);
    CHECK(t == NULL);
    free(text);
}

/* A board whose firmware left DMI's product name at its default: the file's name instead, in
 * the summary, warnings and the database. */
ACC_TEST(placeholder_dmi_name_gives_way_to_the_file_name)
{
    size_t len;
    char *text = edited(DIR "hwloc-32em64t-2n8c2t-pci-normalio.xml", "value=\"X9DRG-HF\"",
                        "value=\"To be filled by O.E.M.\"", NULL, NULL, &len);
    acc_topo_t *t = NULL;
    CHECK_OK(import(text, len, "/captures/node17.xml", &t));
    CHECK_STR(acc_topo_name(t), "node17.xml");
    acc_topo_destroy(t);
    free(text);
    t = load(DIR "hwloc-32em64t-2n8c2t-pci-normalio.xml");
    CHECK_STR(acc_topo_name(t), "X9DRG-HF");
    acc_topo_destroy(t);
}
