/* The `nvidia-smi topo -m` importer on the four real captures in tests/data, on variants of them
 * (spaces for tabs, ANSI escapes, CRLF, old RDMA column names, SOC, N/A affinities) and on broken
 * and truncated text; test_smi_model.c has the matrices written to reach the other NVLink and
 * PCIe patterns. */
#include "smi_test_util.h"

/* ---- the four captures ------------------------------------------------------------------- */

ACC_TEST(dgx_a100_capture)
{
    char *text = capture(DGX);
    acc_topo_t *t = load(text, DGX);
    acc_topo_path_t p;
    int g;

    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 8);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1);
    for (g = 0; g < 8; g++) {
        CHECK_INT(acc_topo_nvlinks_to_switches(t, g), 12);
        CHECK_INT(acc_topo_nvlinks_between(t, g, (g + 1) % 8), 0);
        CHECK_STR(tt_gpu(t, g)->model, "A100 SXM4 40GB"); /* the comment says A100-SXM-40G */
        CHECK_INT(tt_gpu(t, g)->sm, 80);
        CHECK_STR(tt_gpu(t, g)->busid, "");
    }
    CHECK_OK(acc_topo_path(t, 0, 7, &p));
    CHECK_STR(acc_path_class_name(p.cls), "NVL");
    CHECK_NEAR(p.bw, 12 * 25.0, 1e-9);
    nic_names(t, 10);
    CHECK_NEAR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 0))->speed_gbps, 200, 0);
    CHECK_INT(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 0))->gdr, 1);
    CHECK_INT(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 8))->gdr, 0);
    /* NUMA 1, 3, 5, 7 hold the GPUs; the storage NICs mlx5_8/9, SYS to every GPU, sit on a
     * fifth node the text does not number. */
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 5);
    CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, 0)), 1);
    CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, 2)), 0);
    CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_NIC, 9)), 4);
    CHECK_STR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_CPU, 1))->affinity, "48-63,176-191");
    CHECK(tt_assumed(t, "CPU1 = NUMA 3", NULL));
    CHECK(tt_assumed(t, "NVSwitch", NULL));
    CHECK(tt_assumed(t, "NIC speed 200 Gb/s", NULL));
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 1), "PXB");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 2), "SYS");
    CHECK_STR(path_class(t, ACC_VTX_NIC, 8, ACC_VTX_NIC, 9), "PIX");
    classes_match(t, text, 0);
    acc_topo_destroy(t);
    acc_mem_free(text);
}

ACC_TEST(hgx_h100_capture)
{
    char *text = capture(HGX);
    acc_topo_t *t = load(text, HGX);
    int g;

    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 8);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1);
    for (g = 0; g < 8; g++) {
        CHECK_INT(acc_topo_nvlinks_to_switches(t, g), 18);
        CHECK_STR(tt_gpu(t, g)->model, "H100 SXM5 80GB"); /* "NVIDIA H100 80GB HBM3" on line 1 */
        CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, g)), g / 4);
    }
    nic_names(t, 8);
    CHECK_NEAR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 5))->speed_gbps, 400, 0);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_STR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_CPU, 1))->affinity, "48-95,144-191");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 3, ACC_VTX_NIC, 3), "PIX");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 3, ACC_VTX_NIC, 0), "NODE");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 3, ACC_VTX_NIC, 4), "SYS");
    classes_match(t, text, 0);
    /* Each GPU's rail is the NIC on its own switch. */
    for (g = 0; g < 8; g++)
        CHECK_INT(acc_topo_gpu_nic(t, g), acc_topo_find(t, ACC_VTX_NIC, g));
    acc_topo_destroy(t);
    acc_mem_free(text);
}

ACC_TEST(l40s_capture)
{
    char *text = capture(L40S);
    acc_topo_t *t = load(text, L40S);

    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 4);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 0);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 0), 0);
    CHECK_STR(tt_gpu(t, 3)->model, "L40S"); /* named in the comment line ("4x L40S PCIe") */
    CHECK_INT(tt_gpu(t, 3)->sm, 89);
    nic_names(t, 2);
    CHECK_NEAR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 0))->speed_gbps, 100, 0);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 1), "NODE");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 1, ACC_VTX_GPU, 2), "SYS");
    classes_match(t, text, 1);
    CHECK(tt_assumed(t, "PCIe Gen4 x16", NULL));
    acc_topo_destroy(t);
    acc_mem_free(text);
}

/* The RTX 4090 capture names its GPUs only in its comment ("a 8 cards 4090 server").  Whether
 * a bare "4090" names a model is the model table's call (acc_topo_gpu_model_by_name); without a
 * name the importer refuses to guess, and loads once a line names the model as nvidia-smi does. */
ACC_TEST(rtx4090_capture)
{
    char *text = capture(RTX), *bare = without_first_line(text), *named;
    acc_topo_t *t;
    int a, b;

    if (acc_topo_gpu_model_by_name("4090")) {
        t = load(text, RTX);
        CHECK(tt_assumed(t, "named on line 1 ('4090')", NULL));
        acc_topo_destroy(t);
    } else {
        CHECK_ERR(load_fails(text, RTX), ACC_ERR_PARSE);
        CHECK_MSG_HAS(RTX ":2: the GPU model is unknown");
    }
    CHECK_ERR(load_fails(bare, RTX), ACC_ERR_PARSE);
    CHECK_MSG_HAS(RTX ":1: the GPU model is unknown");
    CHECK_MSG_HAS("--query-gpu=name");
    named = replace(bare, "\tGPU0\tGPU1", "# GPU 0-7: NVIDIA GeForce RTX 4090\n\tGPU0\tGPU1");
    t = load(named, RTX);
    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 8);
    CHECK_STR(tt_gpu(t, 0)->model, "GeForce RTX 4090");
    CHECK_INT(tt_gpu(t, 0)->sm, 89);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), 2);
    CHECK_STR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 0))->dev_name, "");
    CHECK(tt_assumed(t, "no NIC Legend", NULL));
    CHECK_STR(path_class(t, ACC_VTX_GPU, 6, ACC_VTX_NIC, 0), "PHB");
    CHECK_STR(path_class(t, ACC_VTX_NIC, 0, ACC_VTX_NIC, 1), "PIX");
    /* The matrix says SYS even between GPUs of one NUMA node; NUMA Affinity decides, the pairs
     * become NODE, and the importer says so. */
    CHECK(tt_assumed(t, "18 device pairs on one NUMA node are SYS in the matrix", NULL));
    for (a = 0; a < 8; a++) {
        for (b = 0; b < 10; b++) {
            char row[16], cell[8];
            const char *want;
            if (a == b)
                continue;
            snprintf(row, sizeof(row), "GPU%d", a);
            matrix_cell(named, row, b, cell);
            /* NUMA 0 holds GPU0-3; NUMA 1 holds GPU4-7 and the NICs (under GPU6's bridge). */
            want = strcmp(cell, "SYS") == 0 && (a >= 4) == (b >= 4) ? "NODE" : cell;
            CHECK_STR(
                path_class(t, ACC_VTX_GPU, a, b < 8 ? ACC_VTX_GPU : ACC_VTX_NIC, b < 8 ? b : b - 8),
                want);
        }
    }
    acc_topo_destroy(t);
    acc_mem_free(named);
    acc_mem_free(bare);
    acc_mem_free(text);
}

/* ---- variants of the same machine --------------------------------------------------------- */

/* Tabs expanded to 8-column stops, as a terminal copy has them. */
static char *expand_tabs(const char *s)
{
    acc_buf_t b;
    int col = 0;
    acc_buf_init(&b);
    for (; *s; s++) {
        if (*s == '\t') {
            do
                acc_buf_append(&b, " ", 1);
            while (++col % 8);
            continue;
        }
        acc_buf_append(&b, s, 1);
        col = *s == '\n' ? 0 : col + 1;
    }
    return acc_buf_take(&b);
}

/* Runs of two or more spaces become one tab. */
static char *spaces_to_tabs(const char *s)
{
    acc_buf_t b;
    acc_buf_init(&b);
    while (*s) {
        if (s[0] == ' ' && s[1] == ' ') {
            while (*s == ' ')
                s++;
            acc_buf_append(&b, "\t", 1);
            continue;
        }
        acc_buf_append(&b, s++, 1);
    }
    return acc_buf_take(&b);
}

ACC_TEST(tabs_and_spaces_give_one_fingerprint)
{
    char *dgx = capture(DGX), *hgx = capture(HGX), *dgx_sp = expand_tabs(dgx);
    char *hgx_tab = spaces_to_tabs(hgx);
    acc_topo_t *a = load(dgx, "tabs"), *b = load(dgx_sp, "spaces");
    acc_topo_t *c = load(hgx, "spaces"), *d = load(hgx_tab, "tabs");

    CHECK(strchr(dgx_sp, '\t') == NULL);
    CHECK_STR(fingerprint(a), fingerprint(b));
    CHECK_STR(fingerprint(c), fingerprint(d));
    CHECK(strcmp(fingerprint(a), fingerprint(c)) != 0);
    nic_names(b, 10);
    nic_names(d, 8);
    acc_topo_destroy(a);
    acc_topo_destroy(b);
    acc_topo_destroy(c);
    acc_topo_destroy(d);
    acc_mem_free(dgx);
    acc_mem_free(hgx);
    acc_mem_free(dgx_sp);
    acc_mem_free(hgx_tab);
}

/* The header line with every column name underlined, as nvidia-smi prints it on a terminal. */
static char *underline_header(const char *text)
{
    acc_buf_t b;
    const char *s = strchr(text, '\n') + 1, *eol = strchr(s, '\n');
    acc_buf_init(&b);
    acc_buf_append(&b, text, (size_t)(s - text));
    while (s < eol) {
        const char *end = s;
        while (end < eol && *end != '\t')
            end++;
        if (end > s)
            acc_buf_printf(&b, "\x1b[4m%.*s\x1b[0m", (int)(end - s), s);
        if (end < eol)
            acc_buf_append(&b, "\t", 1);
        s = end < eol ? end + 1 : end;
    }
    acc_buf_puts(&b, eol);
    return acc_buf_take(&b);
}

ACC_TEST(ansi_escapes_and_crlf_are_ignored)
{
    char *dgx = capture(DGX), *crlf = replace(dgx, "\n", "\r\n"), *ansi = underline_header(dgx);
    char *both = replace(ansi, "\n", "\r\n");
    acc_topo_t *a = load(dgx, "plain"), *b = load(crlf, "crlf"), *c = load(ansi, "ansi");
    acc_topo_t *d = load(both, "both");

    CHECK(strstr(ansi, "\t\x1b[4mGPU3\x1b[0m\t") != NULL);
    CHECK(strstr(ansi, "\x1b[4mNUMA Affinity\x1b[0m") != NULL);
    CHECK_STR(fingerprint(a), fingerprint(b));
    CHECK_STR(fingerprint(a), fingerprint(c));
    CHECK_STR(fingerprint(a), fingerprint(d));
    nic_names(b, 10);
    nic_names(c, 10);
    acc_topo_destroy(a);
    acc_topo_destroy(b);
    acc_topo_destroy(c);
    acc_topo_destroy(d);
    acc_mem_free(dgx);
    acc_mem_free(crlf);
    acc_mem_free(ansi);
    acc_mem_free(both);
}

/* Old drivers: RDMA device names as column headers, no NIC Legend, SOC for SYS. */
ACC_TEST(old_style_columns_and_soc)
{
    char *l40s = capture(L40S), *legend = strstr(l40s, "NIC Legend:");
    char *cut, *r1, *old, *soc;
    acc_topo_t *a, *b, *c;

    CHECK(legend != NULL);
    cut = acc_mem_strndup(l40s, (size_t)(legend - l40s));
    r1 = replace(cut, "NIC0", "mlx5_0");
    old = replace(r1, "NIC1", "mlx5_1");
    soc = replace(l40s, "SYS ", "SOC ");
    a = load(l40s, "new");
    b = load(old, "old");
    c = load(soc, "soc");
    CHECK(strstr(old, "GPU3    mlx5_0    mlx5_1    CPU Affinity") != NULL);
    CHECK(strstr(old, "NIC Legend") == NULL);
    CHECK(strstr(soc, "SOC     SOC") != NULL);
    nic_names(b, 2);
    CHECK_STR(fingerprint(a), fingerprint(b));
    CHECK_STR(fingerprint(a), fingerprint(c));
    CHECK_STR(path_class(c, ACC_VTX_GPU, 0, ACC_VTX_NIC, 1), "SYS");
    acc_topo_destroy(a);
    acc_topo_destroy(b);
    acc_topo_destroy(c);
    acc_mem_free(l40s);
    acc_mem_free(cut);
    acc_mem_free(r1);
    acc_mem_free(old);
    acc_mem_free(soc);
}

/* Containers: CPU Affinity and NUMA Affinity N/A.  NUMA nodes then follow from SYS relations,
 * and the H100 machine keeps its two nodes and its fingerprint. */
ACC_TEST(affinity_not_available)
{
    char *hgx = capture(HGX), *r1 = replace(hgx, "0-47,96-143     0 ", "N/A             N/A ");
    char *r2 = replace(r1, "48-95,144-191   1 ", "N/A             N/A ");
    acc_topo_t *a = load(hgx, "affinity"), *b = load(r2, "n/a");
    int g;

    CHECK(strstr(r2, "0-47") == NULL);
    CHECK_INT(acc_topo_count(b, ACC_VTX_CPU), 2);
    for (g = 0; g < 8; g++)
        CHECK_INT(acc_topo_vertex_numa(b, acc_topo_find(b, ACC_VTX_GPU, g)), g / 4);
    CHECK_STR(acc_topo_vertex(b, acc_topo_find(b, ACC_VTX_CPU, 0))->affinity, "");
    CHECK(tt_assumed(b, "NUMA Affinity N/A", NULL));
    CHECK_STR(fingerprint(a), fingerprint(b));
    classes_match(b, hgx, 0);
    acc_topo_destroy(a);
    acc_topo_destroy(b);
    acc_mem_free(hgx);
    acc_mem_free(r1);
    acc_mem_free(r2);
}

/* ---- broken text -------------------------------------------------------------------------- */

/* The capture cut after `keep` bytes must fail with the file and the line. */
static void cut_fails(const char *text, size_t keep, const char *where)
{
    acc_topo_t *t;
    char *cut = acc_mem_strndup(text, keep);
    CHECK_ERR(try_load(cut, keep, "cut.txt", &t), ACC_ERR_PARSE);
    CHECK_MSG(strstr(acc_error_message(), where) != NULL, "cut at %zu: \"%s\" lacks \"%s\"", keep,
              acc_error_message(), where);
    acc_mem_free(cut);
}

static size_t offset_of(const char *text, const char *what, int nth)
{
    const char *s = text;
    while (nth-- > 0 && s)
        s = strstr(s + (s != text), what);
    CHECK(s != NULL);
    return (size_t)(s - text);
}

ACC_TEST(truncated_captures_fail_with_the_line)
{
    char *dgx = capture(DGX), *hgx = capture(HGX);

    cut_fails(dgx, offset_of(dgx, "GPU5", 1) + 2, "cut.txt:2: header: 'GP' is not a column");
    cut_fails(dgx, offset_of(dgx, "\tCPU Affinity", 1) + 4, "cut.txt:2: header: 'CPU'");
    cut_fails(dgx, offset_of(dgx, "\nGPU0", 1),
              "cut.txt:2: the text ends before the row of "
              "GPU0");
    cut_fails(dgx, offset_of(dgx, "\nGPU4", 1) + 1,
              "cut.txt:6: the text ends before the row of "
              "GPU4");
    cut_fails(dgx, offset_of(dgx, "\nGPU4", 1) + 30, "cut.txt:7: row GPU4 has");
    cut_fails(dgx, offset_of(dgx, "\nNIC5", 1) + 12, "cut.txt:16: row NIC5 has");
    cut_fails(dgx, offset_of(dgx, "NIC4: ", 1), "cut.txt:37: the NIC Legend does not name NIC4");
    cut_fails(hgx, offset_of(hgx, "NODE", 40), "cut.txt:");
    cut_fails(hgx, offset_of(hgx, "\nNIC7", 1) + 20, "cut.txt:18: row NIC7 has");
    acc_mem_free(dgx);
    acc_mem_free(hgx);
}

ACC_TEST(broken_matrices_name_the_cell)
{
    char *dgx = capture(DGX), *s;

    s = replace(dgx, "GPU1\tNV12", "GPU1\tNV6");
    CHECK_ERR(load_fails(s, "asym.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("asym.txt:4: asymmetric matrix: GPU0-GPU1 is NV12 (line 3) but GPU1-GPU0 is "
                  "NV6 (line 4)");
    acc_mem_free(s);

    s = replace(dgx, "GPU2\tNV12", "GPU2\tNVL");
    CHECK_ERR(load_fails(s, "cell.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("cell.txt:5: row GPU2, column GPU0: unknown cell 'NVL'");
    acc_mem_free(s);

    s = replace(dgx, "GPU0\t X \tNV12", "GPU0\t X \t X ");
    CHECK_ERR(load_fails(s, "x.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("x.txt:3: X (self) off the diagonal at GPU0-GPU1");
    acc_mem_free(s);

    s = replace(dgx, "GPU5\tNV12\tNV12\tNV12\tNV12\tNV12\t X",
                "GPU4\tNV12\tNV12\tNV12\tNV12\tNV12\t X");
    CHECK_ERR(load_fails(s, "dup.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("dup.txt:8: second row for GPU4 (first on line 7)");
    acc_mem_free(s);

    {
        size_t a = offset_of(dgx, "\nGPU5", 1), b = offset_of(dgx, "\nGPU6", 1);
        acc_buf_t buf;
        acc_buf_init(&buf);
        acc_buf_append(&buf, dgx, a);
        acc_buf_puts(&buf, dgx + b);
        s = acc_buf_take(&buf);
    }
    CHECK_ERR(load_fails(s, "missing.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("missing.txt:21: expected the row of GPU5, found 'Legend:'");
    acc_mem_free(s);

    s = replace(dgx, "  NIC9: mlx5_9", "  NIC9: mlx5_9\n  NIC10: mlx5_10");
    CHECK_ERR(load_fails(s, "legend.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("legend.txt:44: the NIC Legend names NIC10");
    acc_mem_free(s);

    s = replace(dgx, "\tGPU0\tGPU1\tGPU2", "\tGPU0\tGPU2\tGPU1");
    CHECK_ERR(load_fails(s, "order.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("order.txt:2: header: expected GPU1, found GPU2");
    acc_mem_free(s);

    s = replace(dgx, "48-63,176-191\t3", "48-63,176-191\tthree");
    CHECK_ERR(load_fails(s, "numa.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("numa.txt:3: GPU0: NUMA Affinity 'three'");
    acc_mem_free(s);
    acc_mem_free(dgx);
}

ACC_TEST(nvlink_to_a_nic_and_cross_numa_pix_are_refused)
{
    char *l40s = capture(L40S), *s, *r;

    r = replace(l40s, "GPU0     X      NODE    SYS     SYS     SYS     SYS",
                "GPU0     X      NODE    SYS     SYS     NV4     SYS");
    s = replace(r, "NIC0    SYS     SYS", "NIC0    NV4     SYS");
    CHECK_ERR(load_fails(s, "nv.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("NVLinks join GPUs only");
    acc_mem_free(s);
    acc_mem_free(r);

    r = replace(l40s, "GPU1    NODE     X      SYS ", "GPU1    NODE     X      PIX ");
    s = replace(r, "GPU2    SYS     SYS ", "GPU2    SYS     PIX ");
    CHECK_ERR(load_fails(s, "numa.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("never cross NUMA nodes");
    acc_mem_free(s);
    acc_mem_free(r);
    acc_mem_free(l40s);
}

ACC_TEST(not_a_matrix)
{
    static const char junk[] = "\x7f"
                               "ELF\x02\x01\x01\0\0\0GPU0";
    acc_topo_t *t;
    char *dgx = capture(DGX), *s;

    CHECK_ERR(try_load(junk, sizeof(junk) - 1, "a.out", &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("a.out:1: binary data");
    CHECK_ERR(load_fails("hello\nworld\n", "prose.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("prose.txt:3: no header line");
    CHECK_ERR(load_fails("", "empty.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("empty.txt:1: no header line");
    CHECK_ERR(load_fails(strstr(dgx, "GPU0\t X"), "headless.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("headless.txt:1: row GPU0 comes before any header line");
    s = replace(dgx, "GPU3\tNV12", "GPU3\x01NV12");
    CHECK_ERR(load_fails(s, "ctl.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("ctl.txt:6: binary data (byte 0x01)");
    acc_mem_free(s);
    s = replace(dgx, "GPU3\tNV12", "GPU3\x1bNV12");
    CHECK_ERR(load_fails(s, "esc.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("esc.txt:6: broken escape sequence");
    acc_mem_free(s);
    acc_mem_free(dgx);
}
