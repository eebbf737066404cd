/* Helpers of the nvidia-smi importer's tests (test_smi.c, test_smi_model.c): the captures in
 * tests/data, loading text, and reading the matrix independently of the importer. */
#ifndef SMI_TEST_UTIL_H
#define SMI_TEST_UTIL_H

#include "topo_test_util.h"

#include <ctype.h>

#define DGX  "dgx-a100-8xA100-SXM4-40GB-epyc7742-nps4.txt"
#define HGX  "hgx-h100-8gpu-8nic-1to1-pix-2numa.txt"
#define L40S "pcie-4xL40S-2numa-2nic.txt"
#define RTX  "pcie-8xRTX4090-allSYS-2numa.txt"

static inline char *capture(const char *file)
{
    char path[512], *text = NULL;
    size_t len;
    snprintf(path, sizeof(path), "topologies/nvidia-smi/%s", file);
    CHECK_OK(acc_read_file(acc_test_data(path), &text, &len));
    return text;
}

/* Import and finalize; the status of whichever failed. */
static inline acc_status_t try_load(const char *text, size_t len, const char *name,
                                    acc_topo_t **out)
{
    return tt_import(topo_import_nvidia_smi, text, len, name, out);
}

static inline acc_topo_t *load(const char *text, const char *name)
{
    acc_topo_t *t;
    CHECK_OK(try_load(text, strlen(text), name, &t));
    return t;
}

static inline acc_status_t load_fails(const char *text, const char *name)
{
    acc_topo_t *t;
    acc_status_t st = try_load(text, strlen(text), name, &t);
    acc_topo_destroy(t);
    return st;
}

/* A copy of s with every `from` replaced by `to`. */
static inline char *replace(const char *s, const char *from, const char *to)
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

static inline char *fingerprint(const acc_topo_t *t)
{
    static char slots[4][ACC_SHA256_HEX_LEN + 1];
    static int next;
    char *fp = slots[next++ & 3];
    CHECK_OK(acc_topo_fingerprint(t, fp));
    return fp;
}

/* The cell of row `row`, column `col` (0-based, GPUs then NICs) as the capture prints it, read
 * here independently of the importer: a row is a line that starts with its name (the header
 * line starts with blanks). */
static inline void matrix_cell(const char *text, const char *row, int col, char out[8])
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

static inline const char *path_class(const acc_topo_t *t, acc_vertex_kind_t ka, int a,
                                     acc_vertex_kind_t kb, int b)
{
    acc_topo_path_t p;
    CHECK_OK(acc_topo_vertex_path(t, acc_topo_find(t, ka, a), acc_topo_find(t, kb, b), &p));
    return acc_path_class_name(p.cls);
}

/* Every GPU-NIC pair (and with all_pairs every pair of devices) has the matrix's class. */
static inline void classes_match(const acc_topo_t *t, const char *text, int all_pairs)
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

static inline void nic_names(const acc_topo_t *t, int n)
{
    int i;
    CHECK_INT(acc_topo_count(t, ACC_VTX_NIC), n);
    for (i = 0; i < n; i++) {
        char want[24];
        snprintf(want, sizeof(want), "mlx5_%d", i);
        CHECK_STR(acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, i))->dev_name, want);
    }
}

static inline char *without_first_line(const char *text)
{
    return acc_mem_strdup(strchr(text, '\n') + 1);
}

#endif /* SMI_TEST_UTIL_H */
