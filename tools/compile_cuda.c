/* acc-compile's kernel actions: --emit-cuda DIR writes the generated CUDA sources of the run's
 * plans, --arch LIST compiles them with NVRTC for each architecture through the kernel cache
 * and reports what it did.  The run's plans are the one of --algo, --verify FILE or
 * --import-msccl FILE, else every algorithm that applies to the topology (of --coll C), with
 * default arguments; each in the types of --types (fp32, fp16 and bf16 by default, the types
 * of training) with the reductions of --ops (sum by default).  The modules are made by the
 * compiler's kernel build (acc_kbuild_*); with --db the plans are the selected ones instead,
 * and the database build makes them (compile_db.c). */
#include "compile_cli.h"

#include <stdlib.h>
#include <string.h>

/* ---- options ---------------------------------------------------------------------------- */

/* Split a comma-separated list and parse each entry with parse(entry, &index); each value is
 * kept once.  The message of a bad entry names the option and the entry, then lists what is
 * valid. */
static int parse_list(const char *opt, const char *list, const char *valid,
                      int (*parse)(const char *, int *), int *vals, int cap, int *n)
{
    const char *p = list;
    char item[32];
    int i, v;

    *n = 0;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof(item)) {
            acc_error_set(ACC_ERR_INVALID, "%s takes a comma-separated list of %s, not '%s'", opt,
                          valid, list);
            return EXIT_USAGE;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (parse(item, &v) != 0) {
            acc_error_set(ACC_ERR_INVALID, "%s: '%s' is not one of %s", opt, item, valid);
            return EXIT_USAGE;
        }
        for (i = 0; i < *n && vals[i] != v; i++)
            ;
        if (i == *n && *n < cap)
            vals[(*n)++] = v;
        p += len;
        if (*p == '\0')
            return EXIT_OK;
        p++; /* the comma; a trailing one leaves an empty entry, refused above */
    }
}

static int parse_dtype(const char *s, int *out)
{
    acc_dtype_t t;
    if (acc_dtype_parse(s, &t) != ACC_OK)
        return -1;
    *out = (int)t;
    return 0;
}

static int parse_redop(const char *s, int *out)
{
    acc_redop_t op;
    if (acc_redop_parse(s, &op) != ACC_OK)
        return -1;
    *out = (int)op;
    return 0;
}

int compile_parse_types(const char *list, compile_opts_t *o)
{
    int vals[ACC_DT_COUNT], i, n = 0, rc;
    /* acc_dtype_parse also takes float32, float16, f32, int, ... and is case-blind. */
    rc = parse_list("--types", list,
                    "fp32 (float), fp16 (half), bf16 (bfloat16), fp64 (double), int32", parse_dtype,
                    vals, ACC_DT_COUNT, &n);
    for (i = 0; i < n; i++)
        o->kernels.types[i] = (acc_dtype_t)vals[i];
    o->kernels.ntypes = (size_t)n;
    return rc;
}

int compile_parse_ops(const char *list, compile_opts_t *o)
{
    int vals[ACC_RED_COUNT], i, n = 0, rc;
    rc =
        parse_list("--ops", list, "sum, prod, min, max, avg", parse_redop, vals, ACC_RED_COUNT, &n);
    for (i = 0; i < n; i++)
        o->kernels.ops[i] = (acc_redop_t)vals[i];
    o->kernels.nops = (size_t)n;
    return rc;
}

/* --arch LIST into ko->archs.  The whole list is read first, so that a malformed one is a usage
 * error with or without NVRTC. */
static int parse_archs(const char *list, acc_kbuild_opts_t *ko)
{
    const char *p = list;
    size_t i;

    ko->narchs = 0;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= ACC_KBUILD_ARCH_MAX || ko->narchs == ACC_KBUILD_MAX_ARCHS) {
            acc_error_set(ACC_ERR_INVALID,
                          "--arch takes a comma-separated list such as sm_80,sm_90 (at most %d), "
                          "not '%s'",
                          ACC_KBUILD_MAX_ARCHS, list);
            return EXIT_USAGE;
        }
        memcpy(ko->archs[ko->narchs], p, len);
        ko->archs[ko->narchs++][len] = '\0';
        p += len;
        if (*p == ',' && *++p == '\0') {
            acc_error_set(ACC_ERR_INVALID, "--arch: '%s' ends with a comma", list);
            return EXIT_USAGE;
        }
    }
    if (ko->narchs == 0) {
        acc_error_set(ACC_ERR_INVALID, "--arch needs at least one architecture, e.g. sm_90");
        return EXIT_USAGE;
    }
    for (i = 0; i < ko->narchs; i++) {
        if (acc_nvrtc_check_arch(ko->archs[i]) != ACC_OK) {
            acc_error_prefix(ACC_ERR_UNSUPPORTED, "--arch %s: ", ko->archs[i]);
            return acc_nvrtc_available() ? EXIT_USAGE : EXIT_INPUT;
        }
    }
    return EXIT_OK;
}

int compile_kernel_opts(const compile_opts_t *o, acc_kbuild_opts_t *ko, acc_kcache_t **cache)
{
    int rc;

    *ko = o->kernels;
    *cache = NULL;
    if (o->arch && (rc = parse_archs(o->arch, ko)) != EXIT_OK)
        return rc;
    if (o->emit_cuda)
        ko->source_dir = o->emit_cuda;
    if (ko->narchs && acc_kcache_create(NULL, cache) != ACC_OK)
        return EXIT_INPUT;
    ko->cache = *cache;
    return EXIT_OK;
}

int compile_exit_for(acc_status_t st)
{
    return st == ACC_ERR_IO ? EXIT_OUTPUT : EXIT_INPUT;
}

void compile_variants_text(const acc_kbuild_opts_t *ko, char *out, size_t cap)
{
    size_t len = 0, i;
    out[0] = '\0';
    for (i = 0; i < ko->ntypes && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? ", " : "",
                                acc_dtype_name(ko->types[i]));
    for (i = 0; i < ko->nops && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? ", " : "; ",
                                acc_redop_name(ko->ops[i]));
}

void compile_cache_text(const acc_kbuild_stats_t *s, size_t from_cache, const acc_kcache_t *cache,
                        char *out, size_t cap)
{
    snprintf(out, cap,
             "%zu built (%llu NVRTC compilations, %.1f s, %.0f ms each), %zu from the cache%s%s",
             s->built, (unsigned long long)s->compiles, s->compile_s,
             s->compiles ? s->compile_s * 1e3 / (double)s->compiles : 0.0, from_cache,
             acc_kcache_dir(cache)[0] ? " in " : " (memory only)", acc_kcache_dir(cache));
}

/* ---- the run's plans -------------------------------------------------------------------- */

/* The run's plans (verified): --verify FILE's, --import-msccl's or --algo's, else every
 * algorithm that applies (of --coll C).  *plans taken. */
static int collect(const compile_opts_t *o, const acc_topo_t *topo, acc_plan_t ***plans, size_t *n)
{
    acc_coll_t coll = ACC_COLL_COUNT;
    int rc;

    if (o->verify_file || o->import_msccl || o->algo) {
        if (!(*plans = acc_mem_calloc(1, sizeof(**plans)))) {
            acc_error_set(ACC_ERR_NOMEM, "out of memory");
            return compile_fail(EXIT_INPUT);
        }
        *n = 1;
        if ((rc = compile_obtain_plan(o, topo, &(*plans)[0])) != EXIT_OK)
            *n = 0;
        return rc;
    }
    if (o->coll && acc_coll_parse(o->coll, &coll) != ACC_OK)
        return compile_fail(EXIT_USAGE);
    if (acc_algo_generate_all(topo, coll, plans, n) != ACC_OK)
        return compile_fail(EXIT_INPUT);
    return EXIT_OK;
}

static void summary(const compile_opts_t *o, const acc_kbuild_opts_t *ko, const acc_kbuild_t *kb,
                    const acc_kcache_t *cache, size_t nplans, double t0)
{
    acc_kbuild_stats_t s;
    char what[512];

    acc_kbuild_stats(kb, &s);
    compile_variants_text(ko, what, sizeof(what));
    printf("%zu plans, %zu kernel modules (%s)\n", nplans, s.sources, what);
    if (o->emit_cuda)
        printf("wrote %zu CUDA sources into %s\n", s.sources, o->emit_cuda);
    if (ko->narchs) {
        compile_cache_text(&s, s.cubins - s.built, cache, what, sizeof(what));
        printf("%zu CUBINs for %s: %s; %.1f s in all\n", s.cubins, o->arch, what, acc_now_s() - t0);
    }
}

int compile_cuda_actions(const compile_opts_t *o, const acc_topo_t *topo)
{
    acc_plan_t **plans = NULL;
    acc_kbuild_opts_t ko;
    acc_kcache_t *cache = NULL;
    acc_kbuild_t *kb = NULL;
    size_t nplans = 0, p;
    double t0 = acc_now_s();
    acc_status_t st = ACC_OK;
    int rc;

    if ((rc = compile_kernel_opts(o, &ko, &cache)) != EXIT_OK) {
        rc = compile_fail(rc);
        goto out;
    }
    if ((st = acc_kbuild_create(&ko, &kb)) != ACC_OK) {
        rc = compile_fail(compile_exit_for(st));
        goto out;
    }
    if ((rc = collect(o, topo, &plans, &nplans)) != EXIT_OK)
        goto out;
    for (p = 0; p < nplans && st == ACC_OK; p++)
        st = acc_kbuild_plan(kb, plans[p], NULL, NULL);
    if (st != ACC_OK)
        rc = compile_fail(compile_exit_for(st));
    else
        summary(o, &ko, kb, cache, nplans, t0);
out:
    acc_kbuild_destroy(kb);
    acc_kcache_destroy(cache);
    for (p = 0; p < nplans; p++)
        acc_plan_destroy(plans[p]);
    acc_mem_free(plans);
    return rc;
}
