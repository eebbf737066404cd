/*
 * bench_kernels: what acc's generated kernels cost to build and what they move.
 *
 *     bench_kernels [--topo SRC] [--coll C] [--arch sm_XY] [--cpu-only | --gpu-only]
 *                   [--min SIZE] [--max SIZE] [--iters N]
 *                   [--model LAUNCH_US,HANDOFF_US,COPY_GBS]
 *
 * CPU (always, no GPU needed): NVRTC time per module - wall and CPU time of every module of
 * every algorithm of the topology in fp32, fp16 and bf16 as acc builds it (the plan's part
 * compiled and linked with its type's device library, which is compiled once per type and
 * listed on its own), beside the whole module compiled as one program, their medians against
 * the target of 100 ms - and the cost of a cache hit, from memory and from the cache
 * directory (target < 1 ms).
 *
 * GPU (when a device is present; --gpu-only skips the CPU part): the device's own floors first
 * (copy rate, empty launch, flag hand-off at GPU and system scope), then every algorithm with
 * every protocol it has a kernel for at every size from --min to --max (x4) on the single-GPU
 * executor, beside the simulator's prediction for the device, and the floors and ratios at 4
 * and 64 KiB (kernels_gpu.c, kernels_floor.c).
 *
 * --model (no GPU needed): the predictions and floors alone, for a device of those figures.
 */
#include "kernels_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(double), cmp_double);
    return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

/* Every applicable plan of the topology (default arguments), optionally one collective. */
static size_t plans_of(const acc_topo_t *t, int coll, acc_plan_t **out, size_t cap)
{
    size_t n, i, m = 0;
    const acc_algo_t *const *list = acc_algo_list(&n);
    for (i = 0; i < n && m < cap; i++) {
        if ((coll >= 0 && list[i]->coll != (acc_coll_t)coll) ||
            list[i]->supports(t, NULL) != ACC_OK)
            continue;
        if (acc_algo_generate(list[i], t, NULL, &out[m]) == ACC_OK)
            m++;
        else
            fprintf(stderr, "bench_kernels: %s\n", acc_error_message());
    }
    return m;
}

/* ---- CPU: NVRTC and the cache --------------------------------------------------------- */

/* The device libraries compiled so far (one per type and reduction). */
typedef struct {
    char key[ACC_SHA256_HEX_LEN + 1];
    void *cubin;
    size_t size;
} lib_t;

/* The library of k, compiled (and timed) the first time it is asked for. */
static lib_t *library_of(const acc_kernel_t *k, const char *arch, lib_t *libs, size_t *nlibs)
{
    char key[ACC_SHA256_HEX_LEN + 1];
    size_t j;
    double w0, c0;
    lib_t *l;

    if (acc_kcache_key(acc_kernel_library_source(k), arch, key) != ACC_OK)
        return NULL;
    for (j = 0; j < *nlibs; j++)
        if (strcmp(libs[j].key, key) == 0)
            return &libs[j];
    if (*nlibs == 16)
        return NULL;
    l = &libs[(*nlibs)++];
    memcpy(l->key, key, sizeof(key));
    w0 = wall_ms();
    c0 = cpu_ms();
    if (acc_nvrtc_compile_ex(acc_kernel_library_source(k), acc_kernel_library_name(k), arch,
                             ACC_NVRTC_RELOCATABLE, &l->cubin, &l->size, NULL) != ACC_OK) {
        (*nlibs)--;
        return NULL;
    }
    printf("%-44s %9zu %9zu %9s %9.1f %9.1f  (once per type)\n", acc_kernel_library_name(k),
           strlen(acc_kernel_library_source(k)), l->size, "-", wall_ms() - w0, cpu_ms() - c0);
    return l;
}

/* Every module built as acc builds it (the plan's part compiled, linked with its type's
 * library) beside the baseline of compiling the whole module as one program. */
static int bench_nvrtc(acc_plan_t **plans, size_t np, const char *arch)
{
    static const acc_dtype_t types[] = {ACC_DT_F32, ACC_DT_F16, ACC_DT_BF16};
    double whole[256], walls[256], cpus[256];
    size_t n = 0, i, d, nlibs = 0;
    char seen[256][ACC_SHA256_HEX_LEN + 1];
    lib_t libs[16];
    int rc = 1;

    printf("# NVRTC for %s: each module as acc builds it (the plan's part compiled and linked\n"
           "# with its type's device library) against compiling the whole module as one program\n"
           "# (the baseline), both timed here; target: median < 100 ms a module\n",
           arch);
    printf("%-44s %9s %9s %9s %9s %9s\n", "module", "source B", "cubin B", "whole ms", "wall ms",
           "cpu ms");
    for (i = 0; i < np; i++)
        for (d = 0; d < 3 && n < 256; d++) {
            acc_kernel_t *k = NULL;
            void *cubin = NULL, *part = NULL, *linked = NULL;
            const void *parts[2];
            size_t size = 0, len = 0, sizes[2], lsize = 0, j;
            char key[ACC_SHA256_HEX_LEN + 1];
            double w0, c0;
            lib_t *lib;
            if (acc_kernel_generate(plans[i], types[d], ACC_RED_SUM, &k) != ACC_OK ||
                acc_kcache_key(acc_kernel_source(k, &len), arch, key) != ACC_OK)
                goto fail;
            /* Modules that only move data are one per element size: time each once. */
            for (j = 0; j < n && strcmp(seen[j], key) != 0; j++)
                ;
            if (j < n) {
                acc_kernel_destroy(k);
                continue;
            }
            if (!(lib = library_of(k, arch, libs, &nlibs)))
                goto fail;
            w0 = wall_ms();
            if (acc_nvrtc_compile(acc_kernel_source(k, NULL), acc_kernel_name(k), arch, &cubin,
                                  &size, NULL) != ACC_OK)
                goto fail;
            whole[n] = wall_ms() - w0;
            w0 = wall_ms();
            c0 = cpu_ms();
            parts[0] = lib->cubin;
            sizes[0] = lib->size;
            if (acc_nvrtc_compile_ex(acc_kernel_plan_source(k), acc_kernel_name(k), arch,
                                     ACC_NVRTC_RELOCATABLE, &part, &sizes[1], NULL) != ACC_OK)
                goto fail;
            parts[1] = part;
            if (acc_nvrtc_link(parts, sizes, 2, arch, acc_kernel_name(k), &linked, &lsize) !=
                ACC_OK)
                goto fail;
            walls[n] = wall_ms() - w0;
            cpus[n] = cpu_ms() - c0;
            memcpy(seen[n], key, sizeof(key));
            printf("%-44s %9zu %9zu %9.1f %9.1f %9.1f\n", acc_kernel_name(k), len, lsize, whole[n],
                   walls[n], cpus[n]);
            n++;
            acc_mem_free(cubin);
            acc_mem_free(part);
            acc_mem_free(linked);
            acc_kernel_destroy(k);
            continue;
        fail:
            fprintf(stderr, "bench_kernels: %s\n", acc_error_message());
            acc_mem_free(cubin);
            acc_mem_free(part);
            acc_kernel_destroy(k);
            goto out;
        }
    printf("NVRTC: %zu modules, median %.1f ms wall, %.1f ms CPU a module (target < 100 ms); "
           "whole-module baseline median %.1f ms (%.2fx); %zu libraries\n",
           n, median(walls, n), median(cpus, n), median(whole, n),
           median(whole, n) / median(walls, n), nlibs);
    rc = 0;
out:
    for (i = 0; i < nlibs; i++)
        acc_mem_free(libs[i].cubin);
    return rc;
}

static int bench_cache(acc_plan_t *plan, const char *arch)
{
    char dir[] = "/tmp/acc_bench_kcache_XXXXXX";
    acc_kernel_t *k = NULL;
    acc_kcache_t *c = NULL;
    const void *bin;
    size_t size;
    double mem[200], disk[50], t0;
    int i, rc = 1;

    if (!mkdtemp(dir)) {
        perror("bench_kernels: mkdtemp");
        return 1;
    }
    if (acc_kernel_generate(plan, ACC_DT_F16, ACC_RED_SUM, &k) != ACC_OK ||
        acc_kcache_create(dir, &c) != ACC_OK ||
        acc_kcache_kernel(c, k, arch, &bin, &size) != ACC_OK)
        goto out;
    for (i = 0; i < 200; i++) {
        t0 = wall_ms();
        if (acc_kcache_kernel(c, k, arch, &bin, &size) != ACC_OK)
            goto out;
        mem[i] = wall_ms() - t0;
    }
    for (i = 0; i < 50; i++) {
        acc_kcache_t *fresh = NULL;
        if (acc_kcache_create(dir, &fresh) != ACC_OK)
            goto out;
        t0 = wall_ms();
        if (acc_kcache_kernel(fresh, k, arch, &bin, &size) != ACC_OK) {
            acc_kcache_destroy(fresh);
            goto out;
        }
        disk[i] = wall_ms() - t0;
        acc_kcache_destroy(fresh);
    }
    printf("# cache hits for %s (%zu-byte CUBIN; target < 1 ms)\n", acc_kernel_name(k), size);
    printf("cache hit: memory median %.3f ms, directory median %.3f ms (SHA-256 of the source "
           "included)\n",
           median(mem, 200), median(disk, 50));
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "bench_kernels: %s\n", acc_error_message());
    acc_kcache_destroy(c);
    acc_kernel_destroy(k);
    {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_kernels: could not remove %s\n", dir);
    }
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_kernels [--topo SRC] [--coll C] [--arch sm_XY]\n"
                    "                     [--cpu-only | --gpu-only] [--min SIZE] [--max SIZE]\n"
                    "                     [--iters N] [--model LAUNCH_US,HANDOFF_US,COPY_GBS]\n");
    return 2;
}

/* "LAUNCH_US,HANDOFF_US,COPY_GBS" into d. */
static int parse_model(const char *v, kb_device_t *d)
{
    char extra;
    memset(d, 0, sizeof(*d));
    if (sscanf(v, "%lf,%lf,%lf%c", &d->launch_us, &d->handoff_gpu_us, &d->copy_gbs, &extra) != 3 ||
        !(d->launch_us >= 0) || !(d->handoff_gpu_us > 0) || !(d->copy_gbs > 0))
        return -1;
    d->handoff_sys_us = d->handoff_gpu_us;
    d->info.sm = 90;
    snprintf(d->info.name, sizeof(d->info.name), "modelled device");
    return 0;
}

static int parse_args(int argc, char **argv, kb_opts_t *o, kb_device_t *model, int *modelled)
{
    int a;
    for (a = 1; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        acc_coll_t coll;
        int64_t iters;
        if (strcmp(argv[a], "--cpu-only") == 0 || strcmp(argv[a], "--gpu-only") == 0) {
            *(argv[a][2] == 'c' ? &o->cpu_only : &o->gpu_only) = 1;
            continue;
        }
        if (!v)
            return -1;
        if (strcmp(argv[a], "--topo") == 0)
            o->topo = v;
        else if (strcmp(argv[a], "--arch") == 0)
            o->arch = v;
        else if (strcmp(argv[a], "--coll") == 0 && acc_coll_parse(v, &coll) == ACC_OK)
            o->coll = (int)coll;
        else if (strcmp(argv[a], "--min") == 0 && acc_parse_size(v, &o->min) == ACC_OK)
            ;
        else if (strcmp(argv[a], "--max") == 0 && acc_parse_size(v, &o->max) == ACC_OK)
            ;
        else if (strcmp(argv[a], "--iters") == 0 && acc_parse_int64(v, &iters) == ACC_OK &&
                 iters > 0 && iters <= 1000000)
            o->iters = (int)iters;
        else if (strcmp(argv[a], "--model") == 0 && parse_model(v, model) == 0)
            *modelled = 1;
        else
            return -1;
        a++;
    }
    return o->min < 16 || o->max < o->min || (o->cpu_only && o->gpu_only) ? -1 : 0;
}

int main(int argc, char **argv)
{
    kb_opts_t o = {"dgx-h100", "sm_90", -1, 0, 0, 20, 4096, 1ull << 30};
    kb_device_t model;
    acc_topo_t *t = NULL;
    acc_plan_t *plans[64];
    size_t np = 0, i;
    int rc = 0, modelled = 0;

    if (parse_args(argc, argv, &o, &model, &modelled) != 0)
        return usage();
    if (acc_topo_load(o.topo, &t) != ACC_OK) {
        fprintf(stderr, "bench_kernels: %s\n", acc_error_message());
        return 1;
    }
    np = plans_of(t, o.coll, plans, 64);
    if (!np) {
        fprintf(stderr, "bench_kernels: no algorithm applies to %s\n", o.topo);
        acc_topo_destroy(t);
        return 1;
    }
    printf("# bench_kernels on %s: %zu plans\n", o.topo, np);
    if (modelled) {
        rc = kb_model(plans, np, &o, &model);
    } else if (!acc_nvrtc_available()) {
        printf("# built without NVRTC: nothing to compile or run\n");
    } else {
        if (!o.gpu_only)
            rc = bench_nvrtc(plans, np, o.arch);
        if (!rc && !o.gpu_only)
            rc = bench_cache(plans[0], o.arch);
        if (!rc && !o.cpu_only)
            rc = kb_bench_gpu(plans, np, &o);
    }
    for (i = 0; i < np; i++)
        acc_plan_destroy(plans[i]);
    acc_topo_destroy(t);
    return rc;
}
