/* acc-compile's kernel actions: --emit-cuda DIR writes the generated CUDA sources of the run's
 * plans, --arch LIST compiles them with NVRTC for each architecture through the kernel cache
 * and reports what it did.  The run's plans are the one of --algo, --verify FILE or
 * --import-msccl FILE, else every algorithm that applies to the topology (of --coll C), with
 * default arguments; each in fp32, fp16 and bf16 with sum, the types of the target. */
#include "acc_compile.h"
#include "acc_kernels.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_PLANS 64
#define MAX_ARCHS 16

static const acc_dtype_t types[] = {ACC_DT_F32, ACC_DT_F16, ACC_DT_BF16};
#define NTYPES (sizeof(types) / sizeof(types[0]))

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The run's plans (verified); returns how many, or -1 after printing the error. */
static int collect(const compile_opts_t *o, const acc_topo_t *topo, acc_plan_t **plans)
{
    size_t n, i;
    const acc_algo_t *const *list = acc_algo_list(&n);
    acc_coll_t coll = ACC_COLL_COUNT;
    int m = 0;

    if (o->verify_file) {
        if (acc_plan_load_file(o->verify_file, &plans[0]) != ACC_OK)
            return -1;
        if (acc_plan_verify(plans[0]) != ACC_OK) {
            acc_error_prefix(ACC_ERR_VERIFY, "%s: ", o->verify_file);
            acc_plan_destroy(plans[0]);
            return -1;
        }
        return 1;
    }
    if (o->import_msccl)
        return acc_plan_import_msccl_file(o->import_msccl, &plans[0]) == ACC_OK ? 1 : -1;
    if (o->coll && acc_coll_parse(o->coll, &coll) != ACC_OK)
        return -1;
    if (o->algo) {
        const acc_algo_t *a = acc_algo_find(coll, o->algo);
        if (!a || acc_algo_generate(a, topo, &o->args, &plans[0]) != ACC_OK)
            return -1;
        return 1;
    }
    for (i = 0; i < n && m < MAX_PLANS; i++) {
        if ((o->coll && list[i]->coll != coll) || list[i]->supports(topo, NULL) != ACC_OK)
            continue;
        if (acc_algo_generate(list[i], topo, NULL, &plans[m]) != ACC_OK) {
            while (m > 0)
                acc_plan_destroy(plans[--m]);
            return -1;
        }
        m++;
    }
    if (!m) {
        acc_error_set(ACC_ERR_NOT_FOUND, "no algorithm applies to %s%s%s", acc_topo_source(topo),
                      o->coll ? " for " : "", o->coll ? o->coll : "");
        return -1;
    }
    return m;
}

/* "sm_80,sm_90" into its architectures, each one NVRTC can build for. */
static int parse_archs(const char *list, char archs[MAX_ARCHS][16], int *n)
{
    const char *p = list;
    *n = 0;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= 16 || *n == MAX_ARCHS) {
            acc_error_set(ACC_ERR_INVALID,
                          "--arch takes a comma-separated list such as sm_80,sm_90 (at most %d), "
                          "not '%s'",
                          MAX_ARCHS, list);
            return EXIT_USAGE;
        }
        memcpy(archs[*n], p, len);
        archs[*n][len] = '\0';
        if (acc_nvrtc_check_arch(archs[*n]) != ACC_OK)
            return acc_nvrtc_available() ? EXIT_USAGE : EXIT_INPUT;
        (*n)++;
        p += len;
        if (*p == ',')
            p++;
    }
    if (*n == 0) {
        acc_error_set(ACC_ERR_INVALID, "--arch needs at least one architecture, e.g. sm_90");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static int write_source(const char *dir, const acc_kernel_t *k)
{
    acc_buf_t path;
    size_t len = 0;
    const char *text = acc_kernel_source(k, &len);
    acc_status_t st;

    acc_buf_init(&path);
    acc_buf_printf(&path, "%s/%s.cu", dir, acc_kernel_name(k));
    st = acc_buf_status(&path) == ACC_OK ? acc_write_file(path.data, text, len) : ACC_ERR_NOMEM;
    acc_buf_free(&path);
    return st == ACC_OK ? EXIT_OK : EXIT_OUTPUT;
}

int compile_cuda_actions(const compile_opts_t *o, const acc_topo_t *topo)
{
    acc_plan_t *plans[MAX_PLANS];
    char archs[MAX_ARCHS][16];
    acc_kcache_t *cache = NULL;
    acc_kcache_stats_t stats;
    int nplans, narchs = 0, p, a, modules = 0, written = 0, cubins = 0, rc = EXIT_OK;
    size_t d;
    double t0 = now_ms();

    if (o->arch && (rc = parse_archs(o->arch, archs, &narchs)) != EXIT_OK)
        return compile_fail(rc);
    if (o->emit_cuda && mkdir(o->emit_cuda, 0777) != 0 && errno != EEXIST) {
        acc_error_set(ACC_ERR_IO, "--emit-cuda: cannot create '%s': %s", o->emit_cuda,
                      strerror(errno));
        return compile_fail(EXIT_OUTPUT);
    }
    if ((nplans = collect(o, topo, plans)) < 0)
        return compile_fail(EXIT_INPUT);
    if (narchs && acc_kcache_create(NULL, &cache) != ACC_OK) {
        rc = compile_fail(EXIT_INPUT);
        goto out;
    }
    for (p = 0; p < nplans && rc == EXIT_OK; p++) {
        char prev[128] = "";
        for (d = 0; d < NTYPES && rc == EXIT_OK; d++) {
            acc_kernel_t *k = NULL;
            if (acc_kernel_generate(plans[p], types[d], ACC_RED_SUM, &k) != ACC_OK) {
                rc = compile_fail(EXIT_INPUT);
                break;
            }
            /* Plans that only move data have one module per element size. */
            if (strcmp(acc_kernel_name(k), prev) == 0) {
                acc_kernel_destroy(k);
                continue;
            }
            snprintf(prev, sizeof(prev), "%s", acc_kernel_name(k));
            modules++;
            if (o->emit_cuda) {
                if ((rc = write_source(o->emit_cuda, k)) != EXIT_OK)
                    rc = compile_fail(rc);
                else
                    written++;
            }
            for (a = 0; a < narchs && rc == EXIT_OK; a++) {
                const void *cubin;
                size_t size;
                if (acc_kcache_cubin(cache, acc_kernel_source(k, NULL), acc_kernel_name(k),
                                     archs[a], &cubin, &size) != ACC_OK)
                    rc = compile_fail(EXIT_INPUT);
                else
                    cubins++;
            }
            acc_kernel_destroy(k);
        }
    }
    if (rc != EXIT_OK)
        goto out;
    printf("%d plans, %d kernel modules (fp32, fp16, bf16)\n", nplans, modules);
    if (o->emit_cuda)
        printf("wrote %d CUDA sources into %s\n", written, o->emit_cuda);
    if (narchs) {
        acc_kcache_stats(cache, &stats);
        printf("%d CUBINs for %s: %llu compiled by NVRTC in %.1f s (%.0f ms each), %llu from "
               "the cache%s%s; %.1f s in all\n",
               cubins, o->arch, (unsigned long long)stats.compiles, stats.compile_ms / 1e3,
               stats.compiles ? stats.compile_ms / (double)stats.compiles : 0.0,
               (unsigned long long)(stats.disk_hits + stats.mem_hits),
               acc_kcache_dir(cache)[0] ? " in " : " (memory only)", acc_kcache_dir(cache),
               (now_ms() - t0) / 1e3);
    }
out:
    acc_kcache_destroy(cache);
    for (p = 0; p < nplans; p++)
        acc_plan_destroy(plans[p]);
    return rc;
}
