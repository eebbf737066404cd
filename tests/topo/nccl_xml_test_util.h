/* Helpers of the NCCL topology XML tests (test_nccl_xml.c, test_nccl_xml_export.c): the real
 * files, importing text, and looking at the result. */
#ifndef NCCL_XML_TEST_UTIL_H
#define NCCL_XML_TEST_UTIL_H

#include "topo_test_util.h"

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
    "aws-ofi-nccl-p5.48xl-topo.xml",
};
#define NFIXTURES ((int)(sizeof(fixtures) / sizeof(fixtures[0])))

/* A file of topologies/nccl-xml/, NUL-terminated.  Never inlined: GCC 12 would take the text
 * for a pointer to the local it was read through and warn (-Wdangling-pointer). */
static __attribute__((unused, noinline)) char *slurp(const char *file, size_t *len)
{
    char rel[256], *text = NULL;
    size_t n;
    snprintf(rel, sizeof(rel), "topologies/nccl-xml/%s", file);
    CHECK_OK(acc_read_file(acc_test_data(rel), &text, len ? len : &n));
    return text;
}

/* Import and finalize; *out is set only on success. */
static inline acc_status_t import(const char *text, size_t len, const char *name, acc_topo_t **out)
{
    return tt_import(topo_import_nccl_xml, text, len, name, out);
}

static inline acc_topo_t *import_ok(const char *text, const char *name)
{
    acc_topo_t *t;
    CHECK_OK(import(text, strlen(text), name, &t));
    return t;
}

static inline acc_topo_t *load(const char *file)
{
    char *text = slurp(file, NULL);
    acc_topo_t *t = import_ok(text, file);
    acc_mem_free(text);
    return t;
}

/* s with every occurrence of `from` replaced (at most `max` of them; 0 = all). */
static inline char *replace(const char *s, const char *from, const char *to, int max)
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
static inline int line_of(const char *text, const char *needle)
{
    const char *p = strstr(text, needle), *q;
    int line = 1;
    CHECK(p != NULL);
    for (q = text; q < p; q++)
        line += *q == '\n';
    return line;
}

static inline acc_topo_path_t gpu_path(const acc_topo_t *t, int a, int b)
{
    acc_topo_path_t p;
    CHECK_OK(acc_topo_path(t, a, b, &p));
    return p;
}

static inline void check_no_nvlinks(const acc_topo_t *t)
{
    int a, b, n = acc_topo_gpus_per_node(t);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    for (a = 0; a < n; a++) {
        CHECK_INT(acc_topo_nvlinks_to_switches(t, a), 0);
        for (b = 0; b < n; b++)
            CHECK_INT(acc_topo_nvlinks_between(t, a, b), 0);
    }
}

static inline void check_nics(const acc_topo_t *t, int count, double gbps)
{
    int i;
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), count);
    for (i = 0; i < count; i++)
        CHECK_NEAR(tt_nic(t, i)->speed_gbps, gbps, 1e-9);
}

/* Partial Azure files give GPUs no device id; add the one of the machine they describe. */
static inline acc_topo_t *load_with_gpu_id(const char *file, const char *device)
{
    char *text = slurp(file, NULL), ids[96], *patched;
    acc_topo_t *t;
    snprintf(ids, sizeof(ids), "class=\"0x030200\" vendor=\"0x10de\" device=\"%s\"", device);
    patched = replace(text, "class=\"0x030200\"", ids, 0);
    t = import_ok(patched, file);
    acc_mem_free(text);
    acc_mem_free(patched);
    return t;
}

/* Two GPUs of one CPU, listed dev=1 first, with a body inside each <gpu>. */
static inline char *two_gpus(int sm, const char *gpu0_body, const char *gpu1_body)
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

#endif /* NCCL_XML_TEST_UTIL_H */
