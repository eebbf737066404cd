/*
 * The modules of a set of plans: per plan, one module per data type and reduction asked for,
 * its source written when asked, its CUBINs from the kernel cache.  The database build and
 * acc-compile --emit-cuda/--arch both go through here, so that what a run prints, writes and
 * stores comes from one loop.  See acc_kernels.h.
 */
#include "acc_kernels.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

struct acc_kbuild {
    acc_kbuild_opts_t opts;
    acc_kcache_t *cache; /* opts.cache, or own */
    acc_kcache_t *own;
    acc_kcache_stats_t start; /* the cache's counters when the build began */
    char compiler[32];
    acc_kbuild_stats_t stats;
};

/* A source already made for the plan at hand, and its CUBINs (borrowed from the cache). */
typedef struct {
    char name[sizeof(((acc_kernel_t *)0)->name)];
    const void *cubin[ACC_KBUILD_MAX_ARCHS];
    size_t size[ACC_KBUILD_MAX_ARCHS];
} made_t;

void acc_kbuild_opts_init(acc_kbuild_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->types[0] = ACC_DT_F32;
    opts->types[1] = ACC_DT_F16;
    opts->types[2] = ACC_DT_BF16;
    opts->ntypes = 3;
    opts->ops[0] = ACC_RED_SUM;
    opts->nops = 1;
}

/* A list of n enum values below count, each once; what names the list in messages. */
static acc_status_t check_list(const char *what, const int *vals, size_t n, size_t cap,
                               const char *(*name)(int))
{
    size_t i, j;
    if (n == 0)
        return acc_error_set(ACC_ERR_INVALID,
                             "kernel build: the list of %s is empty: name at least one", what);
    if (n > cap)
        return acc_error_set(ACC_ERR_INVALID, "kernel build: %zu %s given; there are %zu", n, what,
                             cap);
    for (i = 0; i < n; i++) {
        if (vals[i] < 0 || (size_t)vals[i] >= cap)
            return acc_error_set(ACC_ERR_INVALID, "kernel build: %s[%zu] is %d, not one of the %zu",
                                 what, i, vals[i], cap);
        for (j = 0; j < i; j++)
            if (vals[j] == vals[i])
                return acc_error_set(ACC_ERR_INVALID, "kernel build: %s lists %s twice", what,
                                     name(vals[i]));
    }
    return ACC_OK;
}

static const char *dtype_name(int v)
{
    return acc_dtype_name((acc_dtype_t)v);
}

static const char *redop_name(int v)
{
    return acc_redop_name((acc_redop_t)v);
}

acc_status_t acc_kbuild_opts_check(const acc_kbuild_opts_t *opts)
{
    int types[ACC_DT_COUNT], ops[ACC_RED_COUNT];
    size_t i;
    acc_status_t st;

    for (i = 0; i < opts->ntypes && i < ACC_DT_COUNT; i++)
        types[i] = (int)opts->types[i];
    for (i = 0; i < opts->nops && i < ACC_RED_COUNT; i++)
        ops[i] = (int)opts->ops[i];
    if ((st = check_list("data types", types, opts->ntypes, ACC_DT_COUNT, dtype_name)) != ACC_OK ||
        (st = check_list("reductions", ops, opts->nops, ACC_RED_COUNT, redop_name)) != ACC_OK)
        return st;
    if (opts->narchs > ACC_KBUILD_MAX_ARCHS)
        return acc_error_set(ACC_ERR_INVALID, "kernel build: %zu architectures; at most %d",
                             opts->narchs, ACC_KBUILD_MAX_ARCHS);
    for (i = 0; i < opts->narchs; i++) {
        const char *arch = opts->archs[i];
        if (!memchr(arch, '\0', ACC_KBUILD_ARCH_MAX))
            return acc_error_set(ACC_ERR_INVALID,
                                 "kernel build: archs[%zu] is not a string of at most %d bytes", i,
                                 ACC_KBUILD_ARCH_MAX - 1);
        if ((st = acc_nvrtc_check_arch(arch)) != ACC_OK)
            return acc_error_prefix(st, "kernel build: architecture %s: ", arch);
    }
    return ACC_OK;
}

size_t acc_kbuild_variants(const acc_kbuild_opts_t *opts, acc_coll_t coll,
                           acc_kvariant_t out[ACC_KBUILD_MAX_VARIANTS])
{
    int reduces = acc_coll_reduces(coll);
    size_t nops = reduces ? opts->nops : 1, t, r, n = 0;

    for (t = 0; t < opts->ntypes; t++) {
        for (r = 0; r < nops; r++) {
            out[n].dtype = opts->types[t];
            out[n].redop = reduces ? opts->ops[r] : ACC_RED_SUM;
            n++;
        }
    }
    return n;
}

acc_status_t acc_kbuild_create(const acc_kbuild_opts_t *opts, acc_kbuild_t **out)
{
    acc_kbuild_t *b = NULL;
    int major = 0, minor = 0;
    acc_status_t st;

    *out = NULL;
    if ((st = acc_kbuild_opts_check(opts)) != ACC_OK)
        return st;
    if (!(b = acc_mem_calloc(1, sizeof(*b))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory starting a kernel build");
    b->opts = *opts;
    if (opts->source_dir && mkdir(opts->source_dir, 0777) != 0 && errno != EEXIST) {
        st = acc_error_set(ACC_ERR_IO, "cannot create the source directory '%s': %s",
                           opts->source_dir, strerror(errno));
        goto out;
    }
    if (opts->narchs) {
        /* Asked before anything is compiled: the version is part of every stored kernel's key. */
        if ((st = acc_nvrtc_version(&major, &minor)) != ACC_OK)
            goto out;
        snprintf(b->compiler, sizeof(b->compiler), "nvrtc %d.%d", major, minor);
        if (!opts->cache && (st = acc_kcache_create(NULL, &b->own)) != ACC_OK)
            goto out;
        b->cache = opts->cache ? opts->cache : b->own;
        acc_kcache_stats(b->cache, &b->start);
    }
out:
    if (st != ACC_OK) {
        acc_kbuild_destroy(b);
        return st;
    }
    *out = b;
    return ACC_OK;
}

void acc_kbuild_destroy(acc_kbuild_t *b)
{
    if (!b)
        return;
    acc_kcache_destroy(b->own);
    acc_mem_free(b);
}

static acc_status_t write_source(const char *dir, const acc_kernel_t *k)
{
    acc_buf_t path;
    size_t len = 0;
    const char *text = acc_kernel_source(k, &len);
    acc_status_t st;

    acc_buf_init(&path);
    acc_buf_printf(&path, "%s/%s.cu", dir, acc_kernel_name(k));
    if ((st = acc_buf_status(&path)) == ACC_OK)
        st = acc_write_file(path.data, text, len);
    acc_buf_free(&path);
    return st;
}

/* A source not made before for this plan: written, and compiled for every architecture. */
static acc_status_t make_source(acc_kbuild_t *b, const acc_kernel_t *k, made_t *m)
{
    size_t a;
    acc_status_t st;

    snprintf(m->name, sizeof(m->name), "%s", acc_kernel_name(k));
    b->stats.sources++;
    if (b->opts.source_dir && (st = write_source(b->opts.source_dir, k)) != ACC_OK)
        return st;
    for (a = 0; a < b->opts.narchs; a++) {
        if ((st = acc_kcache_kernel(b->cache, k, b->opts.archs[a], &m->cubin[a], &m->size[a])) !=
            ACC_OK)
            return st;
        b->stats.cubins++;
    }
    return ACC_OK;
}

static acc_status_t one_module(acc_kbuild_t *b, const acc_plan_t *plan, acc_kvariant_t v,
                               made_t *made, size_t *nmade, acc_kbuild_fn fn, void *ctx)
{
    acc_kernel_t *k = NULL;
    acc_kmodule_t m;
    size_t i;
    acc_status_t st;

    if ((st = acc_kernel_generate(plan, v.dtype, v.redop, &k)) != ACC_OK)
        return st;
    b->stats.modules++;
    /* Modules of one plan with one name have one source (acc_kernel_generate). */
    for (i = 0; i < *nmade && strcmp(made[i].name, acc_kernel_name(k)) != 0; i++)
        ;
    if (i == *nmade && (st = make_source(b, k, &made[(*nmade)++])) != ACC_OK)
        goto out;
    memset(&m, 0, sizeof(m));
    m.plan = plan;
    m.dtype = v.dtype;
    m.redop = v.redop;
    m.kernel = k;
    memcpy(m.cubin, made[i].cubin, sizeof(m.cubin));
    memcpy(m.cubin_size, made[i].size, sizeof(m.cubin_size));
    if (fn)
        st = fn(ctx, &m);
out:
    acc_kernel_destroy(k);
    return st;
}

acc_status_t acc_kbuild_plan(acc_kbuild_t *b, const acc_plan_t *plan, acc_kbuild_fn fn, void *ctx)
{
    acc_kvariant_t vars[ACC_KBUILD_MAX_VARIANTS];
    made_t made[ACC_KBUILD_MAX_VARIANTS];
    size_t nvars = acc_kbuild_variants(&b->opts, plan->coll, vars), nmade = 0, v;
    double t0 = acc_now_s();
    acc_status_t st = ACC_OK;

    b->stats.plans++;
    for (v = 0; v < nvars && st == ACC_OK; v++)
        st = one_module(b, plan, vars[v], made, &nmade, fn, ctx);
    b->stats.seconds += acc_now_s() - t0;
    return st;
}

void acc_kbuild_stats(const acc_kbuild_t *b, acc_kbuild_stats_t *out)
{
    acc_kcache_stats_t now;

    *out = b->stats;
    if (!b->cache)
        return;
    /* The cache may be the caller's and older than the build: count what happened since. */
    acc_kcache_stats(b->cache, &now);
    out->built = (size_t)(now.links - b->start.links);
    out->compiles = now.compiles - b->start.compiles;
    out->compile_s = (now.compile_ms - b->start.compile_ms) / 1e3;
}

const char *acc_kbuild_compiler(const acc_kbuild_t *b)
{
    return b->compiler;
}
