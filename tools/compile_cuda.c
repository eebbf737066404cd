/* acc-compile's kernel actions: --emit-cuda DIR writes the generated CUDA sources of the run's
 * plans, --arch LIST compiles them with NVRTC for each architecture through the kernel cache
 * and reports what it did.  The run's plans are the one of --algo, --verify FILE or
 * --import-msccl FILE, else every algorithm that applies to the topology (of --coll C), with
 * default arguments; each in the types of --types (fp32, fp16 and bf16 by default, the types
 * of training) with the reductions of --ops (sum by default).  With --db the plans are the
 * selected ones instead (compile_db.c), built with the helpers below. */
#include "compile_cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_PLANS 64

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
    int vals[ACC_DT_COUNT], i, rc;
    /* acc_dtype_parse also takes float32, float16, f32, int, ... and is case-blind. */
    rc = parse_list("--types", list,
                    "fp32 (float), fp16 (half), bf16 (bfloat16), fp64 (double), int32", parse_dtype,
                    vals, ACC_DT_COUNT, &o->ntypes);
    for (i = 0; i < o->ntypes; i++)
        o->types[i] = (acc_dtype_t)vals[i];
    return rc;
}

int compile_parse_ops(const char *list, compile_opts_t *o)
{
    int vals[ACC_RED_COUNT], i, rc;
    rc = parse_list("--ops", list, "sum, prod, min, max, avg", parse_redop, vals, ACC_RED_COUNT,
                    &o->nops);
    for (i = 0; i < o->nops; i++)
        o->ops[i] = (acc_redop_t)vals[i];
    return rc;
}

int compile_parse_archs(const char *list, char archs[COMPILE_MAX_ARCHS][16], int *n)
{
    const char *p = list;
    int i;

    /* The whole list is read first, so that a malformed one is a usage error with or without
     * NVRTC. */
    *n = 0;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= 16 || *n == COMPILE_MAX_ARCHS) {
            acc_error_set(ACC_ERR_INVALID,
                          "--arch takes a comma-separated list such as sm_80,sm_90 (at most %d), "
                          "not '%s'",
                          COMPILE_MAX_ARCHS, list);
            return EXIT_USAGE;
        }
        memcpy(archs[*n], p, len);
        archs[(*n)++][len] = '\0';
        p += len;
        if (*p == ',' && *++p == '\0') {
            acc_error_set(ACC_ERR_INVALID, "--arch: '%s' ends with a comma", list);
            return EXIT_USAGE;
        }
    }
    if (*n == 0) {
        acc_error_set(ACC_ERR_INVALID, "--arch needs at least one architecture, e.g. sm_90");
        return EXIT_USAGE;
    }
    for (i = 0; i < *n; i++) {
        if (acc_nvrtc_check_arch(archs[i]) != ACC_OK) {
            acc_error_prefix(ACC_ERR_UNSUPPORTED, "--arch %s: ", archs[i]);
            return acc_nvrtc_available() ? EXIT_USAGE : EXIT_INPUT;
        }
    }
    return EXIT_OK;
}

/* ---- modules ---------------------------------------------------------------------------- */

int compile_variants(const compile_opts_t *o, acc_coll_t coll, acc_dtype_t dts[], acc_redop_t ops[])
{
    int nops = acc_coll_reduces(coll) ? o->nops : 1, t, r, n = 0;
    for (t = 0; t < o->ntypes; t++) {
        for (r = 0; r < nops; r++) {
            dts[n] = o->types[t];
            ops[n] = acc_coll_reduces(coll) ? o->ops[r] : ACC_RED_SUM;
            n++;
        }
    }
    return n;
}

void compile_variants_text(const compile_opts_t *o, char *out, size_t cap)
{
    size_t len = 0;
    int i;
    out[0] = '\0';
    for (i = 0; i < o->ntypes && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? ", " : "",
                                acc_dtype_name(o->types[i]));
    for (i = 0; i < o->nops && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? ", " : "; ",
                                acc_redop_name(o->ops[i]));
}

int compile_write_source(const char *dir, const acc_kernel_t *k)
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

int compile_make_dir(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        acc_error_set(ACC_ERR_IO, "--emit-cuda: cannot create '%s': %s", dir, strerror(errno));
        return EXIT_OUTPUT;
    }
    return EXIT_OK;
}

void compile_cache_text(acc_kcache_t *cache, int cubins, char *out, size_t cap)
{
    acc_kcache_stats_t stats;
    long long built;
    acc_kcache_stats(cache, &stats);
    built = (long long)stats.links; /* one link per module not found in the cache */
    snprintf(out, cap,
             "%lld built (%llu NVRTC compilations, %.1f s, %.0f ms each), %lld from the cache%s%s",
             built, (unsigned long long)stats.compiles, stats.compile_ms / 1e3,
             stats.compiles ? stats.compile_ms / (double)stats.compiles : 0.0, cubins - built,
             acc_kcache_dir(cache)[0] ? " in " : " (memory only)", acc_kcache_dir(cache));
}

/* ---- the run's plans -------------------------------------------------------------------- */

/* The run's plans (verified); returns how many, or -1 with the message set. */
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

/* Generate, write and compile the modules of one plan; *modules and *cubins count them.
 * Collectives that only move data have one module per element size (fp16 and bf16 give the
 * same source): each is handled once. */
static int plan_modules(const compile_opts_t *o, const acc_plan_t *plan, acc_kcache_t *cache,
                        char archs[][16], int narchs, int *modules, int *cubins)
{
    acc_dtype_t dts[COMPILE_MAX_VARIANTS];
    acc_redop_t ops[COMPILE_MAX_VARIANTS];
    char seen[COMPILE_MAX_VARIANTS][128];
    int nv = compile_variants(o, plan->coll, dts, ops), nseen = 0, v, a, i, rc = EXIT_OK;

    for (v = 0; v < nv && rc == EXIT_OK; v++) {
        acc_kernel_t *k = NULL;
        if (acc_kernel_generate(plan, dts[v], ops[v], &k) != ACC_OK)
            return EXIT_INPUT;
        for (i = 0; i < nseen && strcmp(seen[i], acc_kernel_name(k)) != 0; i++)
            ;
        if (i < nseen) {
            acc_kernel_destroy(k);
            continue;
        }
        snprintf(seen[nseen++], sizeof(seen[0]), "%s", acc_kernel_name(k));
        (*modules)++;
        if (o->emit_cuda)
            rc = compile_write_source(o->emit_cuda, k);
        for (a = 0; a < narchs && rc == EXIT_OK; a++) {
            const void *cubin;
            size_t size;
            if (acc_kcache_kernel(cache, k, archs[a], &cubin, &size) != ACC_OK)
                rc = EXIT_INPUT;
            else
                (*cubins)++;
        }
        acc_kernel_destroy(k);
    }
    return rc;
}

int compile_cuda_actions(const compile_opts_t *o, const acc_topo_t *topo)
{
    acc_plan_t *plans[MAX_PLANS];
    char archs[COMPILE_MAX_ARCHS][16], what[512];
    acc_kcache_t *cache = NULL;
    int nplans, narchs = 0, p, modules = 0, cubins = 0, rc = EXIT_OK;
    double t0 = (acc_now_s() * 1e3);

    if (o->arch && (rc = compile_parse_archs(o->arch, archs, &narchs)) != EXIT_OK)
        return compile_fail(rc);
    if (o->emit_cuda && (rc = compile_make_dir(o->emit_cuda)) != EXIT_OK)
        return compile_fail(rc);
    if ((nplans = collect(o, topo, plans)) < 0)
        return compile_fail(EXIT_INPUT);
    if (narchs && acc_kcache_create(NULL, &cache) != ACC_OK) {
        rc = compile_fail(EXIT_INPUT);
        goto out;
    }
    for (p = 0; p < nplans && rc == EXIT_OK; p++)
        if ((rc = plan_modules(o, plans[p], cache, archs, narchs, &modules, &cubins)) != EXIT_OK)
            rc = compile_fail(rc);
    if (rc != EXIT_OK)
        goto out;
    compile_variants_text(o, what, sizeof(what));
    printf("%d plans, %d kernel modules (%s)\n", nplans, modules, what);
    if (o->emit_cuda)
        printf("wrote %d CUDA sources into %s\n", modules, o->emit_cuda);
    if (narchs) {
        compile_cache_text(cache, cubins, what, sizeof(what));
        printf("%d CUBINs for %s: %s; %.1f s in all\n", cubins, o->arch, what,
               ((acc_now_s() * 1e3) - t0) / 1e3);
    }
out:
    acc_kcache_destroy(cache);
    for (p = 0; p < nplans; p++)
        acc_plan_destroy(plans[p]);
    return rc;
}
