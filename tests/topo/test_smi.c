/* The `nvidia-smi topo -m` importer on the four real captures in shared/data, on variants of them
 * (spaces for tabs, ANSI escapes, CRLF, old RDMA column names, SOC, N/A affinities), on matrices
 * written here to reach the other NVLink and PCIe patterns, and on broken and truncated text. */
#include "acc_test.h"
#include "acc_topo.h"
#include "internal.h"

#include <ctype.h>

#define DGX  "dgx-a100-8xA100-SXM4-40GB-epyc7742-nps4.txt"
#define HGX  "hgx-h100-8gpu-8nic-1to1-pix-2numa.txt"
#define L40S "pcie-4xL40S-2numa-2nic.txt"
#define RTX  "pcie-8xRTX4090-allSYS-2numa.txt"

static char *capture(const char *file)
{
    char path[512], *text = NULL;
    size_t len;
    snprintf(path, sizeof(path), "topologies/nvidia-smi/%s", file);
    CHECK_OK(acc_read_file(acc_test_data(path), &text, &len));
    return text;
}

/* Import and finalize; the status of whichever failed. */
static acc_status_t try_load(const char *text, size_t len, const char *name, acc_topo_t **out)
{
    acc_topo_t *t;
    acc_status_t st;
    *out = NULL;
    CHECK_OK(acc_topo_create(&t));
    st = topo_import_nvidia_smi(t, text, len, name);
    if (st == ACC_OK)
        st = acc_topo_finalize(t);
    if (st != ACC_OK) {
        acc_topo_destroy(t);
        return st;
    }
    *out = t;
    return ACC_OK;
}

static acc_topo_t *load(const char *text, const char *name)
{
    acc_topo_t *t;
    CHECK_OK(try_load(text, strlen(text), name, &t));
    return t;
}

static acc_status_t load_fails(const char *text, const char *name)
{
    acc_topo_t *t;
    acc_status_t st = try_load(text, strlen(text), name, &t);
    acc_topo_destroy(t);
    return st;
}

/* A copy of s with every `from` replaced by `to`. */
static char *replace(const char *s, const char *from, const char *to)
{
    acc_buf_t b;
    const char *hit;
    size_t n = strlen(from);
    acc_buf_init(&b);
    while ((hit = strstr(s, from)) != NULL) {
        acc_buf_append(&b, s, (size_t)(hit - s));
        acc_buf_puts(&b, to);
        s = hit + n;
    }
    acc_buf_puts(&b, s);
    CHECK_OK(acc_buf_status(&b));
    return acc_buf_take(&b);
}

static char *fingerprint(const acc_topo_t *t)
{
    static char slots[4][ACC_SHA256_HEX_LEN + 1];
    static int next;
    char *fp = slots[next++ & 3];
    CHECK_OK(acc_topo_fingerprint(t, fp));
    return fp;
}

static int assumed(const acc_topo_t *t, const char *fragment)
{
    int i;
    for (i = 0; i < acc_topo_assumption_count(t); i++)
        if (strstr(acc_topo_assumption(t, i), fragment))
            return 1;
    return 0;
}

/* The cell of row `row`, column `col` (0-based, GPUs then NICs) as the capture prints it, read
 * here independently of the importer: a row is a line that starts with its name (the header
 * line starts with blanks). */
static void matrix_cell(const char *text, const char *row, int col, char out[8])
{
    const char *line = text;
    size_t n = strlen(row);
    out[0] = '\0';
    while (line && *line) {
        const char *s = line;
        if (strncmp(s, row, n) == 0 && (s[n] == ' ' || s[n] == '\t')) {
            int k;
            s += n;
            for (k = 0; k <= col; k++) {
                int len = 0;
                while (*s == ' ' || *s == '\t')
                    s++;
                while (s[len] && !isspace((unsigned char)s[len]))
                    len++;
                if (k == col)
                    snprintf(out, 8, "%.*s", len, s);
                s += len;
            }
            return;
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
}

static const char *path_class(const acc_topo_t *t, acc_vertex_kind_t ka, int a,
                              acc_vertex_kind_t kb, int b)
{
    acc_topo_path_t p;
    CHECK_OK(acc_topo_vertex_path(t, acc_topo_find(t, ka, a), acc_topo_find(t, kb, b), &p));
    return acc_path_class_name(p.cls);
}

/* Every GPU-NIC pair (and with all_pairs every pair of devices) has the matrix's class. */
static void classes_match(const acc_topo_t *t, const char *text, int all_pairs)
{
    int ngpu = acc_topo_count(t, ACC_VTX_GPU), nnic = acc_topo_count(t, ACC_VTX_NIC), a, b;
    for (a = 0; a < ngpu + nnic; a++) {
        for (b = 0; b < ngpu + nnic; b++) {
            char row[16], cell[8];
            acc_vertex_kind_t ka = a < ngpu ? ACC_VTX_GPU : ACC_VTX_NIC;
            acc_vertex_kind_t kb = b < ngpu ? ACC_VTX_GPU : ACC_VTX_NIC;
            int ia = a < ngpu ? a : a - ngpu, ib = b < ngpu ? b : b - ngpu;
            if (a == b || (!all_pairs && (ka != ACC_VTX_GPU || kb != ACC_VTX_NIC)))
                continue;
            snprintf(row, sizeof(row), "%s%d", ka == ACC_VTX_GPU ? "GPU" : "NIC", ia);
            matrix_cell(text, row, b, cell);
            CHECK_MSG(strcmp(path_class(t, ka, ia, kb, ib), cell) == 0,
                      "%s-%s%d: path class %s, matrix %s", row, kb == ACC_VTX_GPU ? "GPU" : "NIC",
                      ib, path_class(t, ka, ia, kb, ib), cell);
        }
    }
}

static void nic_names(const acc_topo_t *t, int n)
{
    int i;
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), n);
    for (i = 0; i < n; i++) {
        char want[16];
        snprintf(want, sizeof(want), "mlx5_%d", i);
        CHECK_STR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, i))->dev_name, want);
    }
}

static const acc_topo_vertex_t *gpu(const acc_topo_t *t, int id)
{
    return acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_GPU, id));
}

static char *without_first_line(const char *text)
{
    return acc_strdup(strchr(text, '\n') + 1);
}

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
        CHECK_STR(gpu(t, g)->model, "A100 SXM4 40GB"); /* the comment says A100-SXM-40G */
        CHECK_INT(gpu(t, g)->sm, 80);
        CHECK_STR(gpu(t, g)->busid, "");
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
    CHECK(assumed(t, "CPU1 = NUMA 3"));
    CHECK(assumed(t, "NVSwitch"));
    CHECK(assumed(t, "NIC speed 200 Gb/s"));
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 1), "PXB");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_NIC, 2), "SYS");
    CHECK_STR(path_class(t, ACC_VTX_NIC, 8, ACC_VTX_NIC, 9), "PIX");
    classes_match(t, text, 0);
    acc_topo_destroy(t);
    acc_free(text);
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
        CHECK_STR(gpu(t, g)->model, "H100 SXM5 80GB"); /* "NVIDIA H100 80GB HBM3" on line 1 */
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
    acc_free(text);
}

ACC_TEST(l40s_capture)
{
    char *text = capture(L40S);
    acc_topo_t *t = load(text, L40S);

    CHECK_INT(acc_topo_count(t, ACC_VTX_GPU), 4);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 0);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 0), 0);
    CHECK_STR(gpu(t, 3)->model, "L40S"); /* named in the comment line ("4x L40S PCIe") */
    CHECK_INT(gpu(t, 3)->sm, 89);
    nic_names(t, 2);
    CHECK_NEAR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 0))->speed_gbps, 100, 0);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 1), "NODE");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 1, ACC_VTX_GPU, 2), "SYS");
    classes_match(t, text, 1);
    CHECK(assumed(t, "PCIe Gen4 x16"));
    acc_topo_destroy(t);
    acc_free(text);
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
        CHECK(assumed(t, "named on line 1 ('4090')"));
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
    CHECK_STR(gpu(t, 0)->model, "GeForce RTX 4090");
    CHECK_INT(gpu(t, 0)->sm, 89);
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), 2);
    CHECK_STR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 0))->dev_name, "");
    CHECK(assumed(t, "no NIC Legend"));
    CHECK_STR(path_class(t, ACC_VTX_GPU, 6, ACC_VTX_NIC, 0), "PHB");
    CHECK_STR(path_class(t, ACC_VTX_NIC, 0, ACC_VTX_NIC, 1), "PIX");
    /* The matrix says SYS even between GPUs of one NUMA node; NUMA Affinity decides, the pairs
     * become NODE, and the importer says so. */
    CHECK(assumed(t, "18 device pairs on one NUMA node are SYS in the matrix"));
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
    acc_free(named);
    acc_free(bare);
    acc_free(text);
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
    acc_free(dgx);
    acc_free(hgx);
    acc_free(dgx_sp);
    acc_free(hgx_tab);
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
    acc_free(dgx);
    acc_free(crlf);
    acc_free(ansi);
    acc_free(both);
}

/* Old drivers: RDMA device names as column headers, no NIC Legend, SOC for SYS. */
ACC_TEST(old_style_columns_and_soc)
{
    char *l40s = capture(L40S), *legend = strstr(l40s, "NIC Legend:");
    char *cut, *r1, *old, *soc;
    acc_topo_t *a, *b, *c;

    CHECK(legend != NULL);
    cut = acc_strndup(l40s, (size_t)(legend - l40s));
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
    acc_free(l40s);
    acc_free(cut);
    acc_free(r1);
    acc_free(old);
    acc_free(soc);
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
    CHECK(assumed(b, "NUMA Affinity N/A"));
    CHECK_STR(fingerprint(a), fingerprint(b));
    classes_match(b, hgx, 0);
    acc_topo_destroy(a);
    acc_topo_destroy(b);
    acc_free(hgx);
    acc_free(r1);
    acc_free(r2);
}

/* ---- the GPU model ------------------------------------------------------------------------ */

ACC_TEST(model_inferred_from_nvlinks)
{
    char *dgx = capture(DGX), *hgx = capture(HGX), *l40s = capture(L40S);
    char *dgx_bare = without_first_line(dgx), *hgx_bare = without_first_line(hgx);
    char *l40s_bare = without_first_line(l40s);
    acc_topo_t *a = load(dgx_bare, "dgx"), *b = load(hgx_bare, "hgx");

    CHECK_STR(gpu(a, 0)->model, "A100 SXM4 40GB");
    CHECK(assumed(a, "inferred from NV12 between every GPU pair"));
    CHECK_STR(gpu(b, 7)->model, "H100 SXM5 80GB");
    CHECK_INT(gpu(b, 7)->sm, 90);
    CHECK(assumed(b, "H200"));
    CHECK_INT(acc_topo_nvlinks_to_switches(b, 7), 18);
    /* No NVLink and no name: refused, not guessed. */
    CHECK_ERR(load_fails(l40s_bare, "l40s.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("l40s.txt:1:");
    CHECK_MSG_HAS("GPU model is unknown");
    acc_topo_destroy(a);
    acc_topo_destroy(b);
    acc_free(dgx);
    acc_free(hgx);
    acc_free(l40s);
    acc_free(dgx_bare);
    acc_free(hgx_bare);
    acc_free(l40s_bare);
}

/* A matrix written here: `cls(a, b)` for devices 0..ngpu+nnic-1 (GPUs first), one CPU Affinity
 * and NUMA Affinity per GPU (numa < 0: N/A; no_numa: the old header without that column). */
static char *matrix(const char *comment, int ngpu, int nnic, const char *(*cls)(int, int),
                    int (*numa)(int), int no_numa)
{
    acc_buf_t b;
    int n = ngpu + nnic, a, c;
    acc_buf_init(&b);
    if (comment)
        acc_buf_printf(&b, "%s\n", comment);
    for (a = 0; a < n; a++)
        acc_buf_printf(&b, "\t%s%d", a < ngpu ? "GPU" : "NIC", a < ngpu ? a : a - ngpu);
    acc_buf_printf(&b, "\tCPU Affinity%s\n", no_numa ? "" : "\tNUMA Affinity");
    for (a = 0; a < n; a++) {
        acc_buf_printf(&b, "%s%d", a < ngpu ? "GPU" : "NIC", a < ngpu ? a : a - ngpu);
        for (c = 0; c < n; c++)
            acc_buf_printf(&b, "\t%s", a == c ? " X " : cls(a, c));
        if (a < ngpu && numa(a) >= 0)
            acc_buf_printf(&b, "\t%d-%d", numa(a) * 16, numa(a) * 16 + 15);
        if (a < ngpu && !no_numa && numa(a) >= 0)
            acc_buf_printf(&b, "\t%d", numa(a));
        if (a < ngpu && numa(a) < 0)
            acc_buf_printf(&b, "\tN/A%s", no_numa ? "" : "\tN/A");
        acc_buf_puts(&b, "\n");
    }
    return acc_buf_take(&b);
}

/* DGX-1 (V100): the hybrid cube mesh, NV1 and NV2, 6 links per GPU, an old header. */
static const char *dgx1(int a, int b)
{
    static const char *const m[8][8] = {{"X", "NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS"},
                                        {"NV1", "X", "NV2", "NV1", "SYS", "NV2", "SYS", "SYS"},
                                        {"NV1", "NV2", "X", "NV2", "SYS", "SYS", "NV1", "SYS"},
                                        {"NV2", "NV1", "NV2", "X", "SYS", "SYS", "SYS", "NV1"},
                                        {"NV2", "SYS", "SYS", "SYS", "X", "NV1", "NV1", "NV2"},
                                        {"SYS", "NV2", "SYS", "SYS", "NV1", "X", "NV2", "NV1"},
                                        {"SYS", "SYS", "NV1", "SYS", "NV1", "NV2", "X", "NV2"},
                                        {"SYS", "SYS", "SYS", "NV1", "NV2", "NV1", "NV2", "X"}};
    return m[a][b];
}

static int numa_unknown(int g)
{
    (void)g;
    return -1;
}

static int numa_half(int g)
{
    return g / 4;
}

ACC_TEST(hybrid_cube_mesh_is_direct_nvlinks)
{
    char *text = matrix(NULL, 8, 0, dgx1, numa_unknown, 1);
    acc_topo_t *t = load(text, "dgx1");
    int g;

    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 3), 2);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 1);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 5), 0);
    for (g = 0; g < 8; g++)
        CHECK_INT(acc_topo_nvlinks_to_switches(t, g), 0);
    CHECK_STR(gpu(t, 0)->model, "V100 SXM2 16GB");
    CHECK(assumed(t, "hybrid cube mesh"));
    /* NUMA Affinity absent: the two halves are SYS to each other, so two NUMA nodes. */
    CHECK_INT(acc_topo_count(t, ACC_VTX_CPU), 2);
    CHECK_INT(acc_topo_vertex_numa(t, acc_topo_find(t, ACC_VTX_GPU, 6)), 1);
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 4), "NVL");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 5), "NVB");
    acc_topo_destroy(t);
    acc_free(text);
}

static const char *nv8(int a, int b)
{
    (void)a;
    (void)b;
    return "NV8";
}

static const char *nv12(int a, int b)
{
    (void)a;
    (void)b;
    return "NV12";
}

/* NV8 between every pair: A800 or H800 GPUs behind NVSwitch.  Unnamed, the importer takes the
 * A800 and says that an H800 looks the same. */
ACC_TEST(nv8_everywhere_is_an_nvswitch_a800)
{
    char *text = matrix("# an HGX 8-GPU board", 8, 0, nv8, numa_half, 0);
    acc_topo_t *t = load(text, "nv8");
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 5), 8);
    CHECK_STR(gpu(t, 5)->model, "A800 SXM4 80GB");
    CHECK_INT(gpu(t, 5)->sm, 80);
    CHECK_INT(gpu(t, 5)->sm_count, 108);
    CHECK(assumed(t, "inferred from NV8 between every GPU pair"));
    CHECK(assumed(t, "H800"));
    acc_topo_destroy(t);
    acc_free(text);
}

/* A line naming the part decides between A800 and H800.  The part's own 8 links count, not its
 * generation's 12 or 18: three H800s with NV8 to each other need 16 links each, so they meet in
 * an NVSwitch, and an A800 cannot have NV12 to seven peers. */
ACC_TEST(nv8_named_a800_or_h800)
{
    char *a800 = matrix("# an HGX A800 8-GPU", 8, 0, nv8, numa_half, 0);
    char *h800 = matrix("# GPU 0-7: NVIDIA H800", 8, 0, nv8, numa_half, 0);
    char *three = matrix("# GPU 0-2: NVIDIA H800", 3, 0, nv8, numa_half, 0);
    char *wrong = matrix("# 8x NVIDIA A800-SXM4-80GB", 8, 0, nv12, numa_half, 0);
    acc_topo_t *t;

    t = load(a800, "a800");
    CHECK_STR(gpu(t, 0)->model, "A800 SXM4 80GB");
    CHECK(assumed(t, "named on line 1 ('A800')"));
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 7), 8);
    acc_topo_destroy(t);

    t = load(h800, "h800");
    CHECK_STR(gpu(t, 3)->model, "H800 SXM5 80GB");
    CHECK_INT(gpu(t, 3)->sm, 90);
    CHECK_INT(gpu(t, 3)->sm_count, 132);
    CHECK_INT(gpu(t, 3)->device_id, 0x2324);
    CHECK(assumed(t, "named on line 1 ('H800')"));
    CHECK(assumed(t, "PCIe Gen5 x16"));
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 3), 8);
    acc_topo_destroy(t);

    t = load(three, "three");
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 1);
    CHECK_INT(acc_topo_nvlinks_to_switches(t, 2), 8);
    CHECK_INT(acc_topo_nvlinks_between(t, 0, 1), 0);
    acc_topo_destroy(t);

    t = load(wrong, "wrong");
    CHECK(assumed(t, "names A800 SXM4 80GB, which cannot have the NVLinks"));
    CHECK_STR(gpu(t, 0)->model, "A100 SXM4 40GB");
    acc_topo_destroy(t);
    acc_free(a800);
    acc_free(h800);
    acc_free(three);
    acc_free(wrong);
}

/* PCIe cards joined in pairs by NVLink bridges (A40: 4 links per pair). */
static const char *bridged(int a, int b)
{
    return a / 2 == b / 2 ? "NV4" : a / 2 == 0 && b / 2 == 0 ? "PIX" : "NODE";
}

/* An NVSwitch machine whose capture shows one pair with fewer links. */
static const char *damaged(int a, int b)
{
    return (a == 2 && b == 5) || (a == 5 && b == 2) ? "NV12" : "NV18";
}

static const char *nv18(int a, int b)
{
    (void)a;
    (void)b;
    return "NV18";
}

ACC_TEST(nvlink_patterns_that_do_not_tell_the_model)
{
    char *pairs = matrix(NULL, 4, 0, bridged, numa_half, 0);
    char *named = matrix("# GPU 0-3: NVIDIA A40", 4, 0, bridged, numa_half, 0);
    char *broken = matrix(NULL, 8, 0, damaged, numa_half, 0);
    char *wrong = matrix("# GPU 0-7: NVIDIA L40S", 8, 0, nv18, numa_half, 0);
    acc_topo_t *t;

    CHECK_ERR(load_fails(pairs, "pairs.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("pairs.txt:1: the GPU model is unknown");
    CHECK_MSG_HAS("bridged PCIe cards");
    t = load(named, "a40");
    CHECK_STR(gpu(t, 0)->model, "A40");
    CHECK_INT(acc_topo_count(t, ACC_VTX_NVSWITCH), 0);
    CHECK_INT(acc_topo_nvlinks_between(t, 2, 3), 4);
    CHECK_INT(acc_topo_nvlinks_between(t, 1, 2), 0);
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 1), "NVL");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 1, ACC_VTX_GPU, 2), "NODE");
    acc_topo_destroy(t);
    CHECK_ERR(load_fails(broken, "broken.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("broken.txt:1: the NV# cells give one GPU");
    /* A name that cannot have the matrix's NVLinks is not believed. */
    t = load(wrong, "wrong");
    CHECK_STR(gpu(t, 0)->model, "H100 SXM5 80GB");
    CHECK(assumed(t, "names L40S, which cannot have the NVLinks"));
    acc_topo_destroy(t);
    acc_free(pairs);
    acc_free(named);
    acc_free(broken);
    acc_free(wrong);
}

/* A PCIe machine with every level: on NUMA 0, GPU0, GPU1 and NIC0 on one switch (PIX), GPU2
 * and GPU3 on other switches of the same upper switch (PXB), GPU4 under the same host bridge
 * (PHB), GPU5 on another root port (NODE); on NUMA 1, GPU6 and GPU7 on a switch and NIC1 on
 * its own root port. */
static const int place[10][4] = {
    /* numa, host bridge, upper switch, switch */
    {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 1}, {0, 0, 0, 2}, {0, 0, 1, 3},
    {0, 1, 2, 4}, {1, 2, 3, 5}, {1, 2, 3, 5}, {0, 0, 0, 0}, {1, 3, 4, 6}};

static const char *pcie_levels(int a, int b)
{
    static const char *const names[] = {"SYS", "NODE", "PHB", "PXB"};
    int level;
    for (level = 0; level < 4; level++)
        if (place[a][level] != place[b][level])
            return names[level];
    return "PIX";
}

static int place_numa(int g)
{
    return place[g][0];
}

ACC_TEST(pcie_tree_reproduces_every_class)
{
    char *text = matrix("# 8x NVIDIA L40S", 8, 2, pcie_levels, place_numa, 0);
    acc_topo_t *t = load(text, "levels");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 0, ACC_VTX_GPU, 2), "PXB");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 2, ACC_VTX_GPU, 4), "PHB");
    CHECK_STR(path_class(t, ACC_VTX_GPU, 1, ACC_VTX_NIC, 0), "PIX");
    classes_match(t, text, 1);
    CHECK_INT(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 0))->gdr, 1);
    CHECK_INT(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, 1))->gdr, 0);
    CHECK(!assumed(t, "fits no PCIe tree"));
    acc_topo_destroy(t);
    acc_free(text);
}

/* A bare "V100" in a comment names the DGX-1 part; a V100S, a PCIe card acc has no row for, is
 * not taken for it, so the NVLink-less matrix leaves the model unknown. */
ACC_TEST(bare_v100_names_the_sxm2_part)
{
    char *text = matrix("# 8x Tesla V100, DGX-1", 8, 0, dgx1, numa_unknown, 1);
    char *v100s = matrix("# GPU 0-7: Tesla V100S-PCIE-32GB", 8, 2, pcie_levels, place_numa, 0);
    acc_topo_t *t = load(text, "dgx1");

    CHECK_STR(gpu(t, 0)->model, "V100 SXM2 16GB");
    CHECK(assumed(t, "named on line 1 ('V100')"));
    acc_topo_destroy(t);
    CHECK_ERR(load_fails(v100s, "v100s.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("v100s.txt:2: the GPU model is unknown");
    acc_free(text);
    acc_free(v100s);
}

/* ---- broken text -------------------------------------------------------------------------- */

/* The capture cut after `keep` bytes must fail with the file and the line. */
static void cut_fails(const char *text, size_t keep, const char *where)
{
    acc_topo_t *t;
    char *cut = acc_strndup(text, keep);
    CHECK_ERR(try_load(cut, keep, "cut.txt", &t), ACC_ERR_PARSE);
    CHECK_MSG(strstr(acc_error_message(), where) != NULL, "cut at %zu: \"%s\" lacks \"%s\"", keep,
              acc_error_message(), where);
    acc_free(cut);
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
    acc_free(dgx);
    acc_free(hgx);
}

ACC_TEST(broken_matrices_name_the_cell)
{
    char *dgx = capture(DGX), *s;

    s = replace(dgx, "GPU1\tNV12", "GPU1\tNV6");
    CHECK_ERR(load_fails(s, "asym.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("asym.txt:4: asymmetric matrix: GPU0-GPU1 is NV12 (line 3) but GPU1-GPU0 is "
                  "NV6 (line 4)");
    acc_free(s);

    s = replace(dgx, "GPU2\tNV12", "GPU2\tNVL");
    CHECK_ERR(load_fails(s, "cell.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("cell.txt:5: row GPU2, column GPU0: unknown cell 'NVL'");
    acc_free(s);

    s = replace(dgx, "GPU0\t X \tNV12", "GPU0\t X \t X ");
    CHECK_ERR(load_fails(s, "x.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("x.txt:3: X (self) off the diagonal at GPU0-GPU1");
    acc_free(s);

    s = replace(dgx, "GPU5\tNV12\tNV12\tNV12\tNV12\tNV12\t X",
                "GPU4\tNV12\tNV12\tNV12\tNV12\tNV12\t X");
    CHECK_ERR(load_fails(s, "dup.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("dup.txt:8: second row for GPU4 (first on line 7)");
    acc_free(s);

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
    acc_free(s);

    s = replace(dgx, "  NIC9: mlx5_9", "  NIC9: mlx5_9\n  NIC10: mlx5_10");
    CHECK_ERR(load_fails(s, "legend.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("legend.txt:44: the NIC Legend names NIC10");
    acc_free(s);

    s = replace(dgx, "\tGPU0\tGPU1\tGPU2", "\tGPU0\tGPU2\tGPU1");
    CHECK_ERR(load_fails(s, "order.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("order.txt:2: header: expected GPU1, found GPU2");
    acc_free(s);

    s = replace(dgx, "48-63,176-191\t3", "48-63,176-191\tthree");
    CHECK_ERR(load_fails(s, "numa.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("numa.txt:3: GPU0: NUMA Affinity 'three'");
    acc_free(s);
    acc_free(dgx);
}

ACC_TEST(nvlink_to_a_nic_and_cross_numa_pix_are_refused)
{
    char *l40s = capture(L40S), *s, *r;

    r = replace(l40s, "GPU0     X      NODE    SYS     SYS     SYS     SYS",
                "GPU0     X      NODE    SYS     SYS     NV4     SYS");
    s = replace(r, "NIC0    SYS     SYS", "NIC0    NV4     SYS");
    CHECK_ERR(load_fails(s, "nv.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("NVLinks join GPUs only");
    acc_free(s);
    acc_free(r);

    r = replace(l40s, "GPU1    NODE     X      SYS ", "GPU1    NODE     X      PIX ");
    s = replace(r, "GPU2    SYS     SYS ", "GPU2    SYS     PIX ");
    CHECK_ERR(load_fails(s, "numa.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("never cross NUMA nodes");
    acc_free(s);
    acc_free(r);
    acc_free(l40s);
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
    acc_free(s);
    s = replace(dgx, "GPU3\tNV12", "GPU3\x1bNV12");
    CHECK_ERR(load_fails(s, "esc.txt"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("esc.txt:6: broken escape sequence");
    acc_free(s);
    acc_free(dgx);
}
