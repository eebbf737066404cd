/* NCCL topology XML export: what NCCL's parser can hold, and export -> import round trips of the
 * real files, of snippets and of a synthetic model that must keep the fingerprint. */
#include "nccl_xml_test_util.h"

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
    acc_mem_free(gh);
    acc_mem_free(p9);
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

    CHECK_STR(tt_gpu(b, 0)->busid, "0000:b5:00.0");
    CHECK_INT(acc_topo_nvlinks_to_switches(c, 0), 17);
    CHECK_OK(acc_topo_fingerprint(a, f0));
    CHECK_OK(acc_topo_fingerprint(b, f1));
    CHECK_OK(acc_topo_fingerprint(c, f2));
    CHECK_STR(f1, f0);
    CHECK(strcmp(f2, f0) != 0);
    acc_topo_destroy(a);
    acc_topo_destroy(b);
    acc_topo_destroy(c);
    acc_mem_free(text);
    acc_mem_free(moved);
    acc_mem_free(fewer);
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
