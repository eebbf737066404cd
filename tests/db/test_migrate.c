/* Forward migrations: a file written at every earlier schema version, with the rows an acc of
 * that version wrote, opens upgraded to the current version with its data kept. */
#include "db_test_util.h"

#include <sys/wait.h>

/* A file as an acc of schema version k created it: the migration list cut at k. */
static void create_at_version(const char *path, int k)
{
    sqlite3 *h = NULL;
    tu_remove(path);
    CHECK(sqlite3_open(path, &h) == SQLITE_OK);
    CHECK(sqlite3_exec(h, "PRAGMA journal_mode = WAL; BEGIN IMMEDIATE", NULL, NULL, NULL) ==
          SQLITE_OK);
    CHECK_OK(db_schema_upgrade(h, path, 0, k));
    CHECK(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
}

/* A file of version `from` upgraded in place to `to`, as an acc of version `to` did it. */
static void upgrade_to(const char *path, int from, int to)
{
    sqlite3 *h = NULL;
    CHECK(sqlite3_open(path, &h) == SQLITE_OK);
    CHECK(sqlite3_exec(h, "PRAGMA foreign_keys = ON; BEGIN IMMEDIATE", NULL, NULL, NULL) ==
          SQLITE_OK);
    CHECK_OK(db_schema_upgrade(h, path, from, to));
    CHECK(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    CHECK(sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) == SQLITE_OK);
}

static void run(sqlite3 *h, sqlite3_stmt *st)
{
    CHECK_MSG(sqlite3_step(st) == SQLITE_DONE, "%s", sqlite3_errmsg(h));
    sqlite3_finalize(st);
}

/* The selection content hash as SCHEMA.md defines it for entries of schema 1 and 2 (no
 * measured time, no source). */
static void v1_content_hash(const acc_select_table_t *t, char out[ACC_SHA256_HEX_LEN + 1])
{
    acc_buf_t b;
    size_t i;
    acc_buf_init(&b);
    for (i = 0; i < t->n; i++) {
        const acc_select_entry_t *e = &t->entries[i];
        acc_buf_printf(&b, "%llu %llu %d %s\t%s\t%s %.17g\n", (unsigned long long)e->min_bytes,
                       (unsigned long long)e->max_bytes, e->use_nccl, e->algo, e->params,
                       e->plan_hash, e->predicted_us);
    }
    CHECK_OK(acc_sha256_hex(b.data, b.len, out));
    acc_buf_free(&b);
}

typedef struct {
    /* the machine (NULL: "nodes=2 gpus=4 ..."), the selection's row id (0: 7), and whether the
     * rows of kernels and tuning go in too (bare 0) */
    const char *spec;
    int sel_id, bare;
    char fp[ACC_SHA256_HEX_LEN + 1];
    char plan_hash[ACC_SHA256_HEX_LEN + 1];
    char source_hash[ACC_SHA256_HEX_LEN + 1];
    acc_select_table_t *table; /* as schema 1 knew it: predictions only */
    acc_plan_t *plan;
} old_data_t;

/* Insert, with plain SQL, the rows an acc of schema version k wrote. */
static void write_old_rows(const char *path, int k, old_data_t *d)
{
    acc_topo_t *t = tu_synth(d->spec ? d->spec : "nodes=2 gpus=4 arch=a100 nvlink=12 nic=4x200");
    int id = d->sel_id ? d->sel_id : 7;
    acc_buf_t yaml, plan_yaml;
    char content[ACC_SHA256_HEX_LEN + 1];
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    size_t i;

    acc_buf_init(&yaml);
    acc_buf_init(&plan_yaml);
    CHECK_OK(acc_topo_fingerprint(t, d->fp));
    CHECK_OK(acc_topo_export_yaml(t, &yaml));
    d->plan = fx_ring_allreduce(8, 1);
    CHECK_OK(acc_plan_dump_yaml(d->plan, &plan_yaml));
    CHECK_OK(acc_sha256_hex(plan_yaml.data, plan_yaml.len, d->plan_hash));
    d->table = tu_table(ACC_COLL_ALLREDUCE, d->fp, d->plan_hash, 12, 0);
    for (i = 0; i < d->table->n; i++) {
        d->table->entries[i].measured_us = -1.0;
        d->table->entries[i].source = ACC_SELECT_MODEL;
    }
    v1_content_hash(d->table, content);

    CHECK(sqlite3_open(path, &h) == SQLITE_OK);
    CHECK(sqlite3_exec(h, "BEGIN", NULL, NULL, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(h,
                             "INSERT INTO topologies VALUES (?1, ?2, ?4, 'synthetic', ?5, ?6, ?3)",
                             -1, &st, NULL) == SQLITE_OK);
    bind_text(st, 1, d->fp);
    bind_text(st, 2, acc_topo_name(t));
    bind_text(st, 3, yaml.data);
    bind_text(st, 4, acc_topo_source(t));
    sqlite3_bind_int(st, 5, acc_topo_nodes(t));
    sqlite3_bind_int(st, 6, acc_topo_gpus_per_node(t));
    run(h, st);
    /* One plan text serves every machine of 8 ranks here: stored once. */
    CHECK(sqlite3_prepare_v2(h,
                             "INSERT OR IGNORE INTO plans VALUES (?1, 'allreduce', 'ring', ?2, 8, "
                             "?3)",
                             -1, &st, NULL) == SQLITE_OK);
    bind_text(st, 1, d->plan_hash);
    bind_text(st, 2, d->plan->params);
    bind_text(st, 3, plan_yaml.data);
    run(h, st);
    CHECK(sqlite3_prepare_v2(h, "INSERT INTO selections VALUES (?3, ?1, 'allreduce', ?2, '0.0.9')",
                             -1, &st, NULL) == SQLITE_OK);
    bind_text(st, 1, d->fp);
    bind_text(st, 2, content);
    sqlite3_bind_int(st, 3, id);
    run(h, st);
    for (i = 0; i < d->table->n; i++) {
        const acc_select_entry_t *e = &d->table->entries[i];
        CHECK(sqlite3_prepare_v2(h,
                                 "INSERT INTO selection_entries (selection_id, min_bytes, "
                                 "max_bytes, use_nccl, algo, params, plan_hash, predicted_us) "
                                 "VALUES (?8, ?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                 -1, &st, NULL) == SQLITE_OK);
        sqlite3_bind_int(st, 8, id);
        sqlite3_bind_int64(st, 1, (sqlite3_int64)e->min_bytes);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)e->max_bytes);
        sqlite3_bind_int(st, 3, e->use_nccl);
        bind_text(st, 4, e->algo);
        bind_text(st, 5, e->params);
        if (e->use_nccl)
            sqlite3_bind_null(st, 6);
        else
            bind_text(st, 6, e->plan_hash);
        sqlite3_bind_double(st, 7, e->predicted_us);
        run(h, st);
    }
    if (k >= 2 && !d->bare) {
        static const uint8_t cubin[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33};
        CHECK_OK(acc_sha256_hex("kernel source", 13, d->source_hash));
        /* Version 4 keys kernels by type and reduction as well. */
        CHECK(sqlite3_prepare_v2(h,
                                 k >= 4 ? "INSERT INTO kernels VALUES (?1, 'sm_80', 'float', "
                                          "'sum', 'nvrtc 12.2', ?2, ?3, '')"
                                        : "INSERT INTO kernels VALUES (?1, 'sm_80', 'nvrtc 12.2', "
                                          "?2, ?3, '')",
                                 -1, &st, NULL) == SQLITE_OK);
        bind_text(st, 1, d->plan_hash);
        bind_text(st, 2, d->source_hash);
        sqlite3_bind_blob(st, 3, cubin, sizeof(cubin), SQLITE_STATIC);
        run(h, st);
    }
    if (k >= 3 && !d->bare) {
        /* What acc-tune of version 3 wrote: a profile, a run and the optimum it found. */
        /* Version 8 added where a profile came from (origin). */
        CHECK(sqlite3_exec(h,
                           k >= 8 ? "INSERT INTO model_profiles VALUES ('gpt2', 'layers: 12\n', "
                                    "124000000, '');"
                                  : "INSERT INTO model_profiles VALUES ('gpt2', 'layers: 12\n', "
                                    "124000000);",
                           NULL, NULL, NULL) == SQLITE_OK);
        CHECK(sqlite3_prepare_v2(h,
                                 "INSERT INTO tuning_runs VALUES (5, 'gpt2', ?1, '', "
                                 "'fusion=25M streams=2', 812.5, 'model', 'grid', 0.25, '0.3.0', "
                                 "1700000000000000)",
                                 -1, &st, NULL) == SQLITE_OK);
        bind_text(st, 1, d->fp);
        run(h, st);
        /* Version 7 keys optima by method as well. */
        CHECK(sqlite3_prepare_v2(h,
                                 k >= 7 ? "INSERT INTO optima VALUES ('gpt2', ?1, '', 'itersim', "
                                          "26214400, 2, 'ring', '', 812.5, 5)"
                                        : "INSERT INTO optima VALUES ('gpt2', ?1, '', 26214400, "
                                          "2, 'ring', '', 812.5, 5)",
                                 -1, &st, NULL) == SQLITE_OK);
        bind_text(st, 1, d->fp);
        run(h, st);
    }
    CHECK(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
    acc_buf_free(&yaml);
    acc_buf_free(&plan_yaml);
    acc_topo_destroy(t);
}

/* After the upgrade: the old rows read back through the current API, and the new tables work. */
static void check_upgraded(const char *path, int k, old_data_t *d)
{
    acc_db_t *db = tu_open(path, ACC_DB_READONLY | ACC_DB_CHECK);
    acc_topo_t *t = NULL;
    acc_plan_t *p = NULL;
    acc_select_table_t *sel = NULL;
    acc_db_kernel_t kern, back;

    CHECK_INT(acc_db_schema_version(db), ACC_DB_SCHEMA_VERSION);
    CHECK_OK(acc_db_get_topology(db, d->fp, &t));
    CHECK_INT(acc_topo_ranks(t), 8);
    CHECK_OK(acc_db_get_plan(db, d->plan_hash, &p));
    CHECK(acc_plan_equal(p, d->plan));
    {
        /* Version 11: every stored plan has its class form, which a rank reads alone. */
        acc_plan_t *mine = NULL, *whole = NULL;
        CHECK_OK(acc_db_get_rank_plan(db, d->plan_hash, 5, &mine));
        CHECK_OK(acc_plan_view_of(p, 5, &whole));
        CHECK_INT(mine->view->nedges, whole->view->nedges);
        CHECK_INT(acc_plan_prog(mine, 5, 0)->nops, acc_plan_prog(p, 5, 0)->nops);
        acc_plan_destroy(mine);
        acc_plan_destroy(whole);
    }
    /* Entries from before version 3 are cost-model predictions with no measurement.  Version 10
     * says which backends run each: the ring crosses the two nodes, which the host backend runs
     * and the cuda backend leaves to NCCL; NCCL's ranges are the GPUs'. */
    CHECK_OK(acc_db_get_selection(db, d->fp, ACC_COLL_ALLREDUCE, &sel));
    for (size_t i = 0; i < d->table->n; i++)
        d->table->entries[i].backends =
            d->table->entries[i].use_nccl ? ACC_BACKENDS_CUDA : ACC_BACKENDS_HOST;
    tu_check_same_table(sel, d->table);
    CHECK_INT(sel->entries[1].source, ACC_SELECT_MODEL);
    CHECK(sel->entries[1].measured_us < 0);
    /* Kernels of versions 2 and 3 do not say which type and reduction they were built for:
     * version 4 drops them rather than guess, and says how to build them again; later versions
     * keep them. */
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM kernels"), k >= 4);
    if (k >= 3) {
        acc_db_optimum_t o;
        /* Optima from before version 7 were simulated (or set by hand). */
        CHECK_OK(acc_db_get_optimum(db, "gpt2", d->fp, "", "itersim", &o));
        CHECK_STR(o.method, "itersim");
        CHECK(o.fusion_bytes == 25ull << 20);
        CHECK_INT(o.streams, 2);
        CHECK_INT(o.run_id, 5);
    }
    if (k >= 3) {
        /* Before version 8 a stored profile did not say where it came from. */
        acc_db_profile_t *profs = NULL;
        size_t n = 0;
        CHECK_OK(acc_db_list_profiles(db, &profs, &n));
        CHECK_INT(n, 1);
        CHECK_STR(profs[0].name, "gpt2");
        CHECK_STR(profs[0].origin, "");
        CHECK(profs[0].param_count == 124000000ull);
        acc_mem_free(profs);
    }
    if (k >= 4) {
        CHECK_OK(acc_db_get_kernel(db, d->plan_hash, "sm_80", ACC_DT_F32, ACC_RED_SUM, "nvrtc 12.2",
                                   d->source_hash, &kern));
        CHECK_INT(kern.cubin_size, 8);
        acc_db_kernel_clear(&kern);
    } else {
        CHECK_ERR(acc_db_get_kernel(db, d->plan_hash, "sm_80", ACC_DT_F32, ACC_RED_SUM,
                                    "nvrtc 12.2", d->source_hash[0] ? d->source_hash : d->plan_hash,
                                    &kern),
                  ACC_ERR_NOT_FOUND);
        CHECK_MSG_HAS("acc-compile --topo SRC --db");
        CHECK(kern.cubin == NULL);
    }
    /* Before version 6 NCCL's own choices were not kept: none until the tables are built
     * again, and the message says how. */
    {
        acc_select_nccl_t *nccl = NULL;
        CHECK_ERR(acc_db_get_nccl_choices(db, d->fp, ACC_COLL_ALLREDUCE, &nccl), ACC_ERR_NOT_FOUND);
        CHECK_MSG_HAS("acc-compile --topo T --db");
    }
    acc_topo_destroy(t);
    acc_plan_destroy(p);
    acc_select_destroy(sel);
    acc_db_close(db);

    /* What the new versions added is usable in the upgraded file. */
    db = tu_open(path, 0);
    CHECK_OK(acc_db_put_profile(db, "bert-large", "layers: 24\n", 340000000ull, "file a.yaml"));
    {
        /* Version 8: profiles jobs recorded, and where stored ones came from. */
        acc_db_recorded_t rec, got;
        acc_db_profile_t *profs = NULL;
        char *yaml = NULL;
        size_t n = 0;
        memset(&rec, 0, sizeof(rec));
        snprintf(rec.name, sizeof(rec.name), "my-model");
        rec.sm = 90;
        rec.ranks = 4;
        rec.iterations = 5;
        CHECK_OK(acc_db_put_recorded(db, &rec, "name: my-model\n"));
        CHECK_OK(acc_db_get_recorded(db, "my-model", 90, &got, &yaml));
        CHECK_STR(yaml, "name: my-model\n");
        CHECK_INT(got.ranks, 4);
        acc_mem_free(yaml);
        CHECK_OK(acc_db_list_profiles(db, &profs, &n));
        CHECK_STR(profs[0].name, "bert-large");
        CHECK_STR(profs[0].origin, "file a.yaml");
        acc_mem_free(profs);
    }
    {
        acc_db_tuning_run_t r;
        memset(&r, 0, sizeof(r));
        snprintf(r.model, sizeof(r.model), "bert-large");
        memcpy(r.topo_fingerprint, d->fp, sizeof(r.topo_fingerprint));
        snprintf(r.params, sizeof(r.params), "fusion=32M");
        snprintf(r.method, sizeof(r.method), "model");
        snprintf(r.strategy, sizeof(r.strategy), "grid");
        CHECK_OK(acc_db_add_tuning_run(db, &r, NULL));
    }
    sel = tu_table(ACC_COLL_ALLREDUCE, d->fp, d->plan_hash, 12, 1);
    CHECK_OK(acc_db_put_selection(db, sel));
    acc_select_destroy(sel);
    {
        acc_select_nccl_t *nccl = tu_nccl(ACC_COLL_ALLREDUCE, d->fp, 5, 0), *nback = NULL;
        CHECK_OK(acc_db_put_nccl_choices(db, nccl));
        CHECK_OK(acc_db_get_nccl_choices(db, d->fp, ACC_COLL_ALLREDUCE, &nback));
        tu_check_same_nccl(nback, nccl);
        acc_select_nccl_destroy(nback);
        acc_select_nccl_destroy(nccl);
    }
    {
        static const uint8_t cubin[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33, 0x90};
        memset(&kern, 0, sizeof(kern));
        memcpy(kern.plan_hash, d->plan_hash, sizeof(kern.plan_hash));
        snprintf(kern.arch, sizeof(kern.arch), "sm_90");
        kern.dtype = ACC_DT_F16;
        kern.redop = ACC_RED_SUM;
        snprintf(kern.compiler_version, sizeof(kern.compiler_version), "nvrtc 12.4");
        CHECK_OK(acc_sha256_hex("kernel source v4", 16, kern.source_hash));
        kern.cubin = (uint8_t *)cubin;
        kern.cubin_size = sizeof(cubin);
        CHECK_OK(acc_db_put_kernel(db, &kern));
        CHECK_OK(acc_db_get_kernel(db, d->plan_hash, "sm_90", ACC_DT_F16, ACC_RED_SUM, "nvrtc 12.4",
                                   kern.source_hash, &back));
        CHECK_INT(back.cubin_size, sizeof(cubin));
        CHECK(memcmp(back.cubin, cubin, sizeof(cubin)) == 0);
        acc_db_kernel_clear(&back);
    }
    {
        acc_db_measurement_t m;
        acc_select_measured_t *got = NULL;
        size_t n = 0;
        memset(&m, 0, sizeof(m));
        memcpy(m.topo_fingerprint, d->fp, sizeof(m.topo_fingerprint));
        memcpy(m.plan_hash, d->plan_hash, sizeof(m.plan_hash));
        m.coll = ACC_COLL_ALLREDUCE;
        m.dtype = ACC_DT_F32;
        m.nbytes = 4096;
        m.us = 9.5;
        snprintf(m.source, sizeof(m.source), "after an upgrade");
        CHECK_OK(acc_db_put_measurement(db, &m));
        CHECK_OK(acc_db_get_measurements(db, d->fp, ACC_DT_F32, &got, &n));
        CHECK_INT(n, 1);
        acc_mem_free(got);
    }
    acc_db_close(db);
}

static char *schema_text(const char *path)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    acc_buf_t b;
    acc_buf_init(&b);
    CHECK(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(h, "SELECT sql FROM sqlite_master ORDER BY name", -1, &st, NULL) ==
          SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
        acc_buf_printf(&b, "%s\n", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(h);
    return acc_buf_take(&b);
}

ACC_TEST(every_earlier_version_upgrades_with_data_kept)
{
    const char *fresh = tu_fresh("migrate_fresh.db");
    char *want;
    int k, count;

    CHECK(db_migrations(&count) != NULL);
    CHECK_INT(count, ACC_DB_SCHEMA_VERSION);
    acc_db_close(tu_open(fresh, 0));
    want = schema_text(fresh);
    for (k = 1; k < ACC_DB_SCHEMA_VERSION; k++) {
        char name[64];
        const char *path;
        old_data_t d;
        char *got;

        snprintf(name, sizeof(name), "migrate_from_v%d.db", k);
        path = tu_fresh(name);
        memset(&d, 0, sizeof(d));
        /* Files of version 10 on were written by an acc that had upgraded them from 9: the
         * rows of version 9, then each step's fill (a table's backends and content hash). */
        create_at_version(path, k < 9 ? k : 9);
        write_old_rows(path, k < 9 ? k : 9, &d);
        if (k > 9)
            upgrade_to(path, 9, k);
        CHECK_INT(tu_sql_int(path, "PRAGMA user_version"), k);
        if (k >= 2)
            CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM kernels"), 1);
        acc_db_close(tu_open(path, 0));
        CHECK_INT(tu_sql_int(path, "PRAGMA user_version"), ACC_DB_SCHEMA_VERSION);
        CHECK_INT(tu_sql_int(path, "PRAGMA application_id"), ACC_DB_APPLICATION_ID);
        /* An upgraded file has exactly the schema of a new one. */
        got = schema_text(path);
        CHECK_STR(got, want);
        acc_mem_free(got);
        check_upgraded(path, k, &d);
        acc_select_destroy(d.table);
        acc_plan_destroy(d.plan);
    }
    acc_mem_free(want);
}

/* Tables of schema 9 did not say which backends run them: the upgrade asks each plan, on its
 * topology's nodes, with the rule the runtime's backends apply.  A plan of two nodes runs on the
 * host backend only (a GPU job gets NCCL there), one of one node on both; NCCL's ranges on GPUs.
 * The tables load afterwards (their content hashes follow), except one altered outside acc
 * before the upgrade, which is still refused. */
ACC_TEST(version_9_tables_learn_which_backends_run_them)
{
    const char *path = tu_fresh("migrate_backends.db");
    old_data_t all[3], *two = &all[0], *one = &all[1], *bad = &all[2];
    acc_select_table_t *sel = NULL;
    acc_db_t *db;

    memset(all, 0, sizeof(all));
    one->spec = "gpus=8 arch=a100 nvlink=12 nic=8x200";
    one->sel_id = 8;
    one->bare = 1;
    bad->spec = "nodes=4 gpus=2 arch=a100 nvlink=12 nic=2x200";
    bad->sel_id = 9;
    bad->bare = 1;
    create_at_version(path, 9);
    for (int i = 0; i < 3; i++)
        write_old_rows(path, 9, &all[i]);
    tu_sql(path, "UPDATE selection_entries SET predicted_us = 99 WHERE selection_id = 9");
    db = tu_open(path, 0);
    CHECK_INT(acc_db_schema_version(db), ACC_DB_SCHEMA_VERSION);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM selection_entries WHERE selection_id = 7 AND "
                               "use_nccl = 0 AND backends = 'host'"),
              8);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM selection_entries WHERE selection_id = 8 AND "
                               "use_nccl = 0 AND backends = 'host cuda'"),
              8);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM selection_entries WHERE use_nccl = 1 AND "
                               "backends = 'cuda'"),
              12);
    CHECK_OK(acc_db_get_selection(db, two->fp, ACC_COLL_ALLREDUCE, &sel));
    for (size_t i = 0; i < sel->n; i++) {
        CHECK_INT(acc_select_entry_runs_on(&sel->entries[i], ACC_BACKEND_CUDA), 0);
        CHECK_INT(acc_select_entry_runs_on(&sel->entries[i], ACC_BACKEND_HOST),
                  !sel->entries[i].use_nccl);
    }
    acc_select_destroy(sel);
    sel = NULL;
    CHECK_OK(acc_db_get_selection(db, one->fp, ACC_COLL_ALLREDUCE, &sel));
    for (size_t i = 0; i < sel->n; i++)
        CHECK_INT(acc_select_entry_runs_on(&sel->entries[i], ACC_BACKEND_CUDA),
                  !sel->entries[i].use_nccl);
    acc_select_destroy(sel);
    sel = NULL;
    CHECK_ERR(acc_db_get_selection(db, bad->fp, ACC_COLL_ALLREDUCE, &sel), ACC_ERR_PARSE);
    CHECK_MSG_HAS("does not match its content hash");
    /* acc-info's summary: the one-node table as before, the two-node one says what GPUs run. */
    {
        acc_buf_t b;
        acc_buf_init(&b);
        CHECK_OK(acc_db_summary(db, &b));
        printf("%s", b.data);
        CHECK(strstr(b.data, "acc 8, NCCL 4; on GPUs acc 0 (the cuda backend gives NCCL the "
                             "rest)\n") != NULL);
        CHECK(strstr(b.data, "acc 8, NCCL 4\n") != NULL);
        acc_buf_free(&b);
    }
    acc_db_close(db);
    /* What a load trusts is checked: backends changed outside acc break the content hash, and
     * a word other than host or cuda is refused by name. */
    tu_sql(path, "UPDATE selection_entries SET backends = 'host cuda' WHERE selection_id = 8 AND "
                 "use_nccl = 1");
    tu_sql(path, "UPDATE selection_entries SET backends = 'gpu' WHERE selection_id = 7");
    db = tu_open(path, ACC_DB_READONLY);
    CHECK_ERR(acc_db_get_selection(db, one->fp, ACC_COLL_ALLREDUCE, &sel), ACC_ERR_PARSE);
    CHECK_MSG_HAS("does not match its content hash");
    CHECK_ERR(acc_db_get_selection(db, two->fp, ACC_COLL_ALLREDUCE, &sel), ACC_ERR_PARSE);
    CHECK_MSG_HAS("has an invalid entry at 0 bytes");
    acc_db_close(db);
    for (int i = 0; i < 3; i++) {
        acc_select_destroy(all[i].table);
        acc_plan_destroy(all[i].plan);
    }
}

ACC_TEST(readers_do_not_upgrade_and_say_how)
{
    const char *path = tu_fresh("migrate_ro.db");
    acc_db_t *db = NULL;
    old_data_t d;

    memset(&d, 0, sizeof(d));
    create_at_version(path, 1);
    write_old_rows(path, 1, &d);
    CHECK_ERR(acc_db_open(path, ACC_DB_READONLY, &db), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("schema version 1");
    CHECK_MSG_HAS("open it once for writing");
    CHECK(db == NULL);
    CHECK_INT(acc_db_open_runtime(path, &db), ACC_DB_NO_DATA);
    CHECK(db == NULL);
    CHECK_INT(tu_sql_int(path, "PRAGMA user_version"), 1);
    acc_select_destroy(d.table);
    acc_plan_destroy(d.plan);
}

ACC_TEST(simultaneous_openers_upgrade_once)
{
    /* Eight processes open one version-1 file for writing at the same moment: each must see
     * either the old file, and upgrade it, or the upgraded one; none may fail or upgrade
     * twice. */
    const char *path = tu_fresh("migrate_race.db");
    int go[2], i, status;
    pid_t pids[8];
    old_data_t d;

    memset(&d, 0, sizeof(d));
    create_at_version(path, 1);
    write_old_rows(path, 1, &d);
    CHECK(pipe(go) == 0);
    for (i = 0; i < 8; i++) {
        pids[i] = fork();
        CHECK(pids[i] >= 0);
        if (pids[i] == 0) {
            acc_db_t *db = NULL;
            char x;
            close(go[1]);
            if (read(go[0], &x, 1) != 0) /* released when the parent closes its end */
                _exit(3);
            if (acc_db_open(path, 0, &db) != ACC_OK) {
                fprintf(stderr, "opener %d: %s\n", i, acc_error_message());
                _exit(1);
            }
            acc_db_close(db);
            _exit(0);
        }
    }
    close(go[0]);
    close(go[1]);
    for (i = 0; i < 8; i++) {
        CHECK(waitpid(pids[i], &status, 0) == pids[i]);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "opener %d failed", i);
    }
    CHECK_INT(tu_sql_int(path, "PRAGMA user_version"), ACC_DB_SCHEMA_VERSION);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM selection_entries"), 12);
    check_upgraded(path, 1, &d);
    acc_select_destroy(d.table);
    acc_plan_destroy(d.plan);
}
