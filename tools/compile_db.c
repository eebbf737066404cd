/* acc-compile's database actions: --db stores the topology, every selected plan and the
 * selection table of every collective, and with --arch the CUBINs of the tables' plans, in one
 * call of the database build (acc_db_build), and prints its report; --print-selection reads
 * tables back. */
#include "compile_cli.h"
#include "acc_db.h"
#include "acc_select.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The collectives of --coll C, else every one with a table; EXIT_USAGE for an unknown name. */
static int colls_of(const compile_opts_t *o, acc_coll_t colls[ACC_COLL_COUNT], size_t *n)
{
    const acc_coll_t *all = acc_select_colls(n);
    size_t i;

    if (o->coll) {
        *n = 1;
        return acc_coll_parse(o->coll, &colls[0]) == ACC_OK ? EXIT_OK : EXIT_USAGE;
    }
    for (i = 0; i < *n; i++)
        colls[i] = all[i];
    return EXIT_OK;
}

static void print_report(const compile_opts_t *o, const acc_topo_t *topo,
                         const acc_db_build_opts_t *bo, const acc_kcache_t *cache,
                         const acc_db_build_report_t *r)
{
    char what[512];
    size_t i;

    printf("%s: topology %s (%s), fingerprint %.16s\n", o->db,
           acc_topo_name(topo)[0] ? acc_topo_name(topo) : "-", acc_topo_source(topo),
           r->fingerprint);
    for (i = 0; i < r->ntables; i++)
        printf("  %-15s %zu size ranges, %zu plans stored\n", acc_coll_name(r->tables[i].coll),
               r->tables[i].ranges, r->tables[i].plans);
    if (!o->arch && !o->emit_cuda)
        return;
    compile_variants_text(&bo->kernels, what, sizeof(what));
    printf("  kernels         %zu plans, %zu modules (%s)", r->kernels.plans, r->kernels.modules,
           what);
    if (o->emit_cuda)
        printf(", sources in %s", o->emit_cuda);
    if (!r->kernels.plans)
        printf(": no range runs acc's plan on GPUs%s",
               acc_topo_nodes(topo) > 1 ? " (the cuda backend leaves multi-node plans to NCCL)"
                                        : "");
    printf("\n");
    if (!o->arch)
        return;
    compile_cache_text(&r->kernels, r->cached, cache, what, sizeof(what));
    printf("  CUBINs          %zu stored for %s (%s): %s; %.1f s\n", r->cubins, o->arch,
           r->compiler, what, r->kernels.seconds);
}

int compile_db_store(const compile_opts_t *o, const acc_topo_t *topo)
{
    acc_db_t *db = NULL;
    acc_kcache_t *cache = NULL;
    acc_db_build_opts_t bo;
    acc_db_build_report_t report;
    acc_status_t st;
    int rc;

    /* Bad options fail before the database is created or touched. */
    acc_db_build_opts_init(&bo);
    if ((rc = colls_of(o, bo.colls, &bo.ncolls)) != EXIT_OK ||
        (rc = compile_kernel_opts(o, &bo.kernels, &cache)) != EXIT_OK) {
        rc = compile_fail(rc);
        goto out;
    }
    if (acc_db_build_opts_check(&bo) != ACC_OK) {
        rc = compile_fail(EXIT_USAGE);
        goto out;
    }
    /* Built from the same inputs before: said, and the file left as it is (opened read-only;
     * a file that cannot be read that way goes on to the full build and its messages). */
    if (access(o->db, F_OK) == 0 && acc_db_open(o->db, ACC_DB_READONLY, &db) == ACC_OK) {
        int current = 0;
        st = acc_db_build_current(db, topo, &bo, &current);
        acc_db_close(db);
        db = NULL;
        if (st == ACC_OK && current) {
            char fp[ACC_SHA256_HEX_LEN + 1];
            acc_topo_fingerprint(topo, fp);
            printf("%s: topology %s (%s), fingerprint %.16s: unchanged, built from the same "
                   "topology and options by this acc; nothing written\n",
                   o->db, acc_topo_name(topo)[0] ? acc_topo_name(topo) : "-", acc_topo_source(topo),
                   fp);
            goto out;
        }
    }
    /* A file that cannot be written there (a missing or read-only directory, a directory
     * named as the file) is output not written; a file that is no acc database is input. */
    if ((st = acc_db_open(o->db, 0, &db)) != ACC_OK) {
        rc = compile_fail(compile_exit_for(st));
        goto out;
    }
    if ((st = acc_db_build(db, topo, &bo, &report)) != ACC_OK) {
        rc = compile_fail(compile_exit_for(st));
        goto out;
    }
    print_report(o, topo, &bo, cache, &report);
out:
    acc_db_close(db);
    acc_kcache_destroy(cache);
    return rc;
}

/* A table as stored, each range with the backends that run it and, where GPUs get NCCL, the
 * rule that says why (its plan read back to ask). */
static void print_table(acc_db_t *db, const acc_topo_t *topo, const acc_select_table_t *t)
{
    char rule[256], runs[128];
    acc_select_notes_t notes;
    acc_buf_t b;
    size_t i;

    acc_select_notes_init(&notes);
    acc_buf_init(&b);
    printf("%s on %s (fingerprint %.16s): %zu ranges\n", acc_coll_name(t->coll),
           acc_topo_name(topo)[0] ? acc_topo_name(topo) : acc_topo_source(topo),
           t->topo_fingerprint, t->n);
    printf("  %12s %12s  %-6s %-10s %-40s %10s  %s\n", "from bytes", "to bytes", "by", "algorithm",
           "parameters", "pred. us", "backends");
    for (i = 0; i < t->n; i++) {
        const acc_select_entry_t *e = &t->entries[i];
        acc_plan_t *plan = NULL;
        /* A plan stored in class form alone (a table built by class) has no YAML: rank 0's
         * view answers for it (the rule is the rank count's, or its steps between nodes). */
        if (!e->use_nccl && !acc_select_entry_runs_on(e, ACC_BACKEND_CUDA) &&
            acc_db_get_plan(db, e->plan_hash, &plan) != ACC_OK &&
            acc_db_get_rank_plan(db, e->plan_hash, 0, &plan) != ACC_OK)
            plan = NULL;
        acc_error_clear();
        acc_select_gpu_rule(e, plan, acc_topo_gpus_per_node(topo), rule, sizeof(rule));
        acc_select_backends_text(e, &notes, rule, runs, sizeof(runs));
        acc_plan_destroy(plan);
        printf("  %12llu %12llu  %-6s %-10s %-40s %10.2f  %s\n", (unsigned long long)e->min_bytes,
               (unsigned long long)e->max_bytes, e->use_nccl ? "NCCL" : "acc", e->algo, e->params,
               e->predicted_us, runs);
    }
    acc_select_notes_text(&notes, &b);
    if (b.len)
        fwrite(b.data, 1, b.len, stdout);
    acc_buf_free(&b);
}

int compile_db_print_selection(const compile_opts_t *o, const acc_topo_t *topo)
{
    acc_db_t *db = NULL;
    char fp[ACC_SHA256_HEX_LEN + 1];
    acc_coll_t colls[ACC_COLL_COUNT];
    acc_select_table_t *tables[ACC_COLL_COUNT]; /* kept for --plot */
    size_t n, i;
    int rc = EXIT_OK, found = 0;

    if ((rc = colls_of(o, colls, &n)) != EXIT_OK)
        return compile_fail(rc);
    if (acc_topo_fingerprint(topo, fp) != ACC_OK ||
        acc_db_open(o->db, ACC_DB_READONLY, &db) != ACC_OK)
        return compile_fail(EXIT_INPUT);
    for (i = 0; i < n; i++) {
        acc_select_table_t *t = NULL;
        acc_status_t st;
        st = acc_db_get_selection(db, fp, colls[i], &t);
        if (st == ACC_ERR_NOT_FOUND)
            continue;
        if (st != ACC_OK) {
            rc = compile_fail(EXIT_INPUT);
            break;
        }
        print_table(db, topo, t);
        tables[found++] = t;
    }
    if (rc == EXIT_OK && !found) {
        acc_error_set(ACC_ERR_NOT_FOUND,
                      "%s holds no selection for %s (fingerprint %.16s); "
                      "store one with acc-compile --topo %s --db %s",
                      o->db, acc_topo_source(topo), fp, o->topo, o->db);
        rc = compile_fail(EXIT_INPUT);
    }
    if (rc == EXIT_OK && o->plot) {
        acc_buf_t b;
        acc_buf_init(&b);
        if (acc_select_bands_svg((const acc_select_table_t *const *)tables, (size_t)found,
                                 acc_topo_name(topo)[0] ? acc_topo_name(topo) : o->topo,
                                 &b) != ACC_OK)
            rc = compile_fail(EXIT_INPUT);
        else
            rc = compile_write(o->plot, &b);
        acc_buf_free(&b);
    }
    for (i = 0; i < (size_t)found; i++)
        acc_select_destroy(tables[i]);
    acc_db_close(db);
    return rc;
}
