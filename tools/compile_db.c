/* acc-compile's database actions: --db stores the topology, every selected plan and the
 * selection table of every collective; --print-selection reads tables back. */
#include "acc_compile.h"
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

int compile_db_store(const compile_opts_t *o, const acc_topo_t *topo)
{
    acc_db_t *db = NULL;
    acc_select_builder_t *b = NULL;
    char fp[ACC_SHA256_HEX_LEN + 1];
    size_t i;
    int rc = EXIT_OK;

    if (acc_db_open(o->db, 0, &db) != ACC_OK)
        return compile_fail(EXIT_INPUT);
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
        acc_select_result_destroy(r);
    }
out:
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
               (unsigned long long)e->max_bytes, e->use_nccl ? "NCCL" : "acc", e->algo,
               e->params, e->predicted_us);
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
        acc_error_set(ACC_ERR_NOT_FOUND, "%s holds no selection for %s (fingerprint %.16s); "
                      "store one with acc-compile --topo %s --db %s", o->db, acc_topo_source(topo),
                      fp, o->topo, o->db);
        rc = compile_fail(EXIT_INPUT);
    }
    acc_db_close(db);
    return rc;
}
