/* acc-compile's database actions: --db stores the topology, every selected plan and the
 * selection table of every collective, and with --arch the CUBINs of the tables' plans;
 * --print-selection reads tables back. */
#include "compile_cli.h"
#include "acc_db.h"
#include "acc_select.h"

#include <stdio.h>
#include <string.h>

static const acc_coll_t stored_colls[] = {ACC_COLL_ALLREDUCE, ACC_COLL_ALLGATHER,
                                          ACC_COLL_REDUCE_SCATTER, ACC_COLL_BROADCAST,
                                          ACC_COLL_REDUCE};
#define NSTORED (sizeof(stored_colls) / sizeof(stored_colls[0]))

/* The collectives a run covers: --coll C, else all of the above. */
static int wanted(const compile_opts_t *o, acc_coll_t c)
{
    acc_coll_t only;
    return !o->coll || (acc_coll_parse(o->coll, &only) == ACC_OK && only == c);
}

static acc_status_t store_result(acc_db_t *db, const acc_select_result_t *r, const char *fp)
{
    size_t i;
    acc_status_t st = ACC_OK;

    for (i = 0; i < r->nplans && st == ACC_OK; i++)
        st = acc_db_put_plan(db, r->plans[i].plan, NULL);
    if (st != ACC_OK)
        return st;
    /* The builder names the topology by fingerprint already; make sure it is this one. */
    snprintf(r->table->topo_fingerprint, sizeof(r->table->topo_fingerprint), "%s", fp);
    return acc_db_put_selection(db, r->table);
}

/* --arch with --db: the CUBINs of the plans the tables name, per architecture, type and
 * reduction, compiled through the kernel cache. */
typedef struct {
    const compile_opts_t *o;
    acc_db_t *db;
    acc_kcache_t *cache;
    char archs[COMPILE_MAX_ARCHS][16];
    int narchs;
    char compiler_version[ACC_DB_NAME_MAX]; /* "nvrtc 12.4" */
    int plans, modules, stored;
    double ms; /* wall time spent on kernels */
} kernels_t;

static int kernels_begin(kernels_t *ks, const compile_opts_t *o)
{
    int rc, major = 0, minor = 0;

    memset(ks, 0, sizeof(*ks));
    ks->o = o;
    /* Checked before anything is stored: a build without NVRTC, or an architecture it does
     * not know, must not leave a database that looks complete. */
    if (o->arch && (rc = compile_parse_archs(o->arch, ks->archs, &ks->narchs)) != EXIT_OK)
        return rc;
    if (o->emit_cuda && (rc = compile_make_dir(o->emit_cuda)) != EXIT_OK)
        return rc;
    if (!ks->narchs)
        return EXIT_OK;
    if (acc_nvrtc_version(&major, &minor) != ACC_OK ||
        acc_kcache_create(NULL, &ks->cache) != ACC_OK)
        return EXIT_INPUT;
    snprintf(ks->compiler_version, sizeof(ks->compiler_version), "nvrtc %d.%d", major, minor);
    return EXIT_OK;
}

/* One module of one plan: its source (--emit-cuda) and a row per architecture.  Modules that
 * do not depend on the reduction, or share a source (fp16 and bf16 data movement), get their
 * rows all the same, so that every lookup is one key; the cache compiles them once. */
static int store_module(kernels_t *ks, const acc_kernel_t *k, const char *plan_hash, acc_dtype_t dt,
                        acc_redop_t op)
{
    acc_db_kernel_t row;
    size_t len = 0;
    const char *src = acc_kernel_source(k, &len);
    int a;

    ks->modules++;
    if (ks->o->emit_cuda && compile_write_source(ks->o->emit_cuda, k) != EXIT_OK)
        return EXIT_OUTPUT;
    memset(&row, 0, sizeof(row));
    snprintf(row.plan_hash, sizeof(row.plan_hash), "%s", plan_hash);
    snprintf(row.compiler_version, sizeof(row.compiler_version), "%s", ks->compiler_version);
    row.dtype = dt;
    row.redop = op;
    if (ks->narchs && acc_sha256_hex(src, len, row.source_hash) != ACC_OK)
        return EXIT_INPUT;
    for (a = 0; a < ks->narchs; a++) {
        const void *cubin;
        snprintf(row.arch, sizeof(row.arch), "%s", ks->archs[a]);
        if (acc_kcache_kernel(ks->cache, k, row.arch, &cubin, &row.cubin_size) != ACC_OK)
            return EXIT_INPUT;
        row.cubin = (uint8_t *)cubin; /* borrowed from the cache; put only reads it */
        if (acc_db_put_kernel(ks->db, &row) != ACC_OK)
            return EXIT_OUTPUT;
        ks->stored++;
    }
    return EXIT_OK;
}

static int store_kernels(kernels_t *ks, const acc_select_result_t *r)
{
    acc_dtype_t dts[COMPILE_MAX_VARIANTS];
    acc_redop_t ops[COMPILE_MAX_VARIANTS];
    int nv = compile_variants(ks->o, r->coll, dts, ops), v, rc = EXIT_OK;
    double t0 = (acc_now_s() * 1e3);
    size_t i;

    for (i = 0; i < r->nplans && rc == EXIT_OK; i++) {
        const acc_select_plan_t *sp = &r->plans[i];
        /* Plans no acc range names (acc's best where NCCL keeps the size) are never run. */
        if (!sp->hash[0])
            continue;
        ks->plans++;
        for (v = 0; v < nv && rc == EXIT_OK; v++) {
            acc_kernel_t *k = NULL;
            if (acc_kernel_generate(sp->plan, dts[v], ops[v], &k) != ACC_OK)
                rc = EXIT_INPUT;
            else
                rc = store_module(ks, k, sp->hash, dts[v], ops[v]);
            acc_kernel_destroy(k);
        }
    }
    ks->ms += (acc_now_s() * 1e3) - t0;
    return rc;
}

static void kernels_report(const kernels_t *ks)
{
    char what[512];
    compile_variants_text(ks->o, what, sizeof(what));
    printf("  kernels         %d plans, %d modules (%s)", ks->plans, ks->modules, what);
    if (ks->o->emit_cuda)
        printf(", sources in %s", ks->o->emit_cuda);
    printf("\n");
    if (!ks->narchs)
        return;
    compile_cache_text(ks->cache, ks->stored, what, sizeof(what));
    printf("  CUBINs          %d stored for %s (%s): %s; %.1f s\n", ks->stored, ks->o->arch,
           ks->compiler_version, what, ks->ms / 1e3);
}

int compile_db_store(const compile_opts_t *o, const acc_topo_t *topo)
{
    acc_db_t *db = NULL;
    acc_select_builder_t *b = NULL;
    kernels_t ks;
    char fp[ACC_SHA256_HEX_LEN + 1];
    int kernels = o->arch || o->emit_cuda;
    size_t i;
    int rc = EXIT_OK;

    memset(&ks, 0, sizeof(ks));
    if (kernels && (rc = kernels_begin(&ks, o)) != EXIT_OK) {
        rc = compile_fail(rc);
        goto out;
    }
    if (acc_db_open(o->db, 0, &db) != ACC_OK) {
        rc = compile_fail(EXIT_INPUT);
        goto out;
    }
    ks.db = db;
    if (acc_db_put_topology(db, topo, fp) != ACC_OK ||
        acc_select_builder_create(topo, NULL, &b) != ACC_OK) {
        rc = compile_fail(EXIT_INPUT);
        goto out;
    }
    printf("%s: topology %s (%s), fingerprint %.16s\n", o->db,
           acc_topo_name(topo)[0] ? acc_topo_name(topo) : "-", acc_topo_source(topo), fp);
    for (i = 0; i < NSTORED; i++) {
        acc_select_result_t *r = NULL;
        if (!wanted(o, stored_colls[i]))
            continue;
        if (acc_select_build(b, stored_colls[i], &r) != ACC_OK ||
            store_result(db, r, fp) != ACC_OK) {
            acc_select_result_destroy(r);
            rc = compile_fail(EXIT_INPUT);
            goto out;
        }
        printf("  %-15s %zu size ranges, %zu plans stored\n", acc_coll_name(stored_colls[i]),
               r->table->n, r->nplans);
        if (kernels && (rc = store_kernels(&ks, r)) != EXIT_OK) {
            acc_select_result_destroy(r);
            rc = compile_fail(rc);
            goto out;
        }
        acc_select_result_destroy(r);
    }
    if (kernels)
        kernels_report(&ks);
out:
    if (kernels)
        acc_kcache_destroy(ks.cache);
    acc_select_builder_destroy(b);
    acc_db_close(db);
    return rc;
}

static void print_table(const acc_select_table_t *t)
{
    size_t i;
    printf("%s on %.16s: %zu ranges\n", acc_coll_name(t->coll), t->topo_fingerprint, t->n);
    printf("  %12s %12s  %-6s %-10s %-40s %10s\n", "from bytes", "to bytes", "by", "algorithm",
           "parameters", "pred. us");
    for (i = 0; i < t->n; i++) {
        const acc_select_entry_t *e = &t->entries[i];
        printf("  %12llu %12llu  %-6s %-10s %-40s %10.2f\n", (unsigned long long)e->min_bytes,
               (unsigned long long)e->max_bytes, e->use_nccl ? "NCCL" : "acc", e->algo, e->params,
               e->predicted_us);
    }
}

int compile_db_print_selection(const compile_opts_t *o, const acc_topo_t *topo)
{
    acc_db_t *db = NULL;
    char fp[ACC_SHA256_HEX_LEN + 1];
    size_t i;
    int rc = EXIT_OK, found = 0;

    if (acc_topo_fingerprint(topo, fp) != ACC_OK ||
        acc_db_open(o->db, ACC_DB_READONLY, &db) != ACC_OK)
        return compile_fail(EXIT_INPUT);
    for (i = 0; i < NSTORED; i++) {
        acc_select_table_t *t = NULL;
        acc_status_t st;
        if (!wanted(o, stored_colls[i]))
            continue;
        st = acc_db_get_selection(db, fp, stored_colls[i], &t);
        if (st == ACC_ERR_NOT_FOUND)
            continue;
        if (st != ACC_OK) {
            rc = compile_fail(EXIT_INPUT);
            break;
        }
        print_table(t);
        acc_select_destroy(t);
        found++;
    }
    if (rc == EXIT_OK && !found) {
        acc_error_set(ACC_ERR_NOT_FOUND,
                      "%s holds no selection for %s (fingerprint %.16s); "
                      "store one with acc-compile --topo %s --db %s",
                      o->db, acc_topo_source(topo), fp, o->topo, o->db);
        rc = compile_fail(EXIT_INPUT);
    }
    acc_db_close(db);
    return rc;
}
