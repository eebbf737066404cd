/*
 * bench_topo: how long acc takes to read each real topology file and to build a 1024-GPU
 * synthetic cluster with every rank-to-rank path, each beside a baseline measured in the same run:
 * for files, reading the bytes and parsing them with libxml2/libyaml only (the floor any importer
 * pays); for the cluster, filling the same 1024 x 1024 path matrix by copying one precomputed
 * entry (memory bandwidth floor).  Targets (issue 2): fixtures < 50 ms each, 1024 GPUs < 1 s.
 *
 * usage: bench_topo [DATA_DIR]   (default: tests/data of the source tree)
 */
#include "acc_topo.h"

#include <dirent.h>
#include <libxml/parser.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

/* Read + generic parse: the cost below which no importer of this file can go. */
static double baseline_ms(const char *path)
{
    char *text;
    size_t len;
    double t0 = (acc_now_s() * 1e3);
    if (acc_read_file(path, &text, &len) != ACC_OK)
        return -1;
    if (text[strspn(text, " \t\r\n")] == '<') {
        xmlDocPtr d =
            xmlReadMemory(text, (int)len, path, NULL, XML_PARSE_NONET | XML_PARSE_NOBLANKS);
        xmlFreeDoc(d);
    } else {
        yaml_parser_t p;
        yaml_document_t doc;
        yaml_parser_initialize(&p);
        yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
        if (yaml_parser_load(&p, &doc))
            yaml_document_delete(&doc);
        yaml_parser_delete(&p);
    }
    acc_mem_free(text);
    return (acc_now_s() * 1e3) - t0;
}

static int bench_dir(const char *dir, int *worst_over)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        acc_topo_t *t = NULL;
        double t0, ms, base, best = 1e30, bbest = 1e30;
        int rep;
        acc_status_t st = ACC_OK;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        for (rep = 0; rep < 5; rep++) {
            t0 = (acc_now_s() * 1e3);
            st = acc_topo_load_file(path, &t);
            ms = (acc_now_s() * 1e3) - t0;
            acc_topo_destroy(t);
            t = NULL;
            if (ms < best)
                best = ms;
            base = baseline_ms(path);
            if (base >= 0 && base < bbest)
                bbest = base;
        }
        printf("  %-50s %8.2f ms  parse-only %7.2f ms  ratio %5.1fx  %s\n", e->d_name, best, bbest,
               bbest > 0 ? best / bbest : 0,
               st == ACC_OK ? "" : "(refused: see acc-compile --topo FILE)");
        if (best > 50)
            (*worst_over)++;
        n++;
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    const char *data = argc > 1 ? argv[1] : ACC_BENCH_DATA_DIR;
    static const char *const sub[] = {"topologies/nccl-xml", "topologies/hwloc-xml",
                                      "topologies/nvidia-smi"};
    char dir[4096];
    int over = 0, files = 0;
    size_t i;
    acc_topo_t *t;
    acc_topo_path_t *m, one;
    double t0, t_load, t_matrix, t_floor;
    int ranks, k;

    printf("Topology files (best of 5; target < 50 ms each)\n");
    for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
        snprintf(dir, sizeof(dir), "%s/%s", data, sub[i]);
        files += bench_dir(dir, &over);
    }
    snprintf(dir, sizeof(dir), "%s", acc_topo_platform_dir());
    printf("Shipped platforms (%s)\n", dir);
    files += bench_dir(dir, &over);

    t0 = (acc_now_s() * 1e3);
    if (acc_topo_load_synthetic("nodes=128 gpus=8 nvlink=18 nic=8x400", &t) != ACC_OK) {
        fprintf(stderr, "bench_topo: %s\n", acc_error_message());
        return 1;
    }
    t_load = (acc_now_s() * 1e3) - t0;
    ranks = acc_topo_ranks(t);
    t0 = (acc_now_s() * 1e3);
    if (acc_topo_path_matrix(t, &m) != ACC_OK) {
        fprintf(stderr, "bench_topo: %s\n", acc_error_message());
        return 1;
    }
    t_matrix = (acc_now_s() * 1e3) - t0;
    one = m[1];
    t0 = (acc_now_s() * 1e3);
    for (k = 0; k < ranks * ranks; k++)
        m[k] = one;
    t_floor = (acc_now_s() * 1e3) - t0;
    printf("\n1024-GPU synthetic cluster (128 x 8 H100, NVSwitch, 8x400G)\n"
           "  build + finalize        %8.2f ms\n"
           "  all %d x %d paths   %8.2f ms  (filling the matrix alone: %.2f ms, ratio %.1fx)\n"
           "  total                   %8.2f ms  (target < 1000 ms)\n",
           t_load, ranks, ranks, t_matrix, t_floor, t_floor > 0 ? t_matrix / t_floor : 0,
           t_load + t_matrix);
    printf("\n%d files, %d over 50 ms\n", files, over);
    acc_mem_free(m);
    acc_topo_destroy(t);
    return 0;
}
