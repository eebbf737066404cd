/* Tuning runs (every evaluated configuration) and optima (the best configuration per model,
 * topology and network). */
#include "db_internal.h"

#include <math.h>
#include <string.h>

static acc_status_t check_tune_key(const acc_db_t *db, const char *model, const char *fp,
                                   const char *network)
{
    acc_status_t s;
    if ((s = db_check_field(db, model, ACC_DB_NAME_MAX, 1, "model name")) != ACC_OK ||
        (s = db_check_hash(db, fp, "topology fingerprint")) != ACC_OK ||
        (s = db_check_field(db, network, ACC_DB_NAME_MAX, 0, "network name")) != ACC_OK)
        return s;
    return ACC_OK;
}

/* The model profile and the topology a run or optimum refers to must be stored, so that a
 * result can always be reproduced; the foreign keys would refuse it too, with a vaguer message. */
static acc_status_t check_refs(acc_db_t *db, const char *model, const char *fp)
{
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    if ((s = db_prepare(db,
                        "SELECT (SELECT count(*) FROM model_profiles WHERE name = ?1), "
                        "(SELECT count(*) FROM topologies WHERE fingerprint = ?2)",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, model);
    db_bind_text(st, 2, fp);
    r = db_step_row(db, st, "looking up the model and topology");
    if (r < 0)
        s = (acc_status_t)r;
    else if (r == 1 && !sqlite3_column_int(st, 0))
        s = acc_error_set(ACC_ERR_NOT_FOUND,
                          "%s: model profile %s is not stored; store it "
                          "first (acc_db_put_profile)",
                          db->path, model);
    else if (r == 1 && !sqlite3_column_int(st, 1))
        s = acc_error_set(ACC_ERR_NOT_FOUND,
                          "%s: topology %s is not stored; store it first "
                          "(acc-compile --topo T --db %s)",
                          db->path, fp, db->path);
    sqlite3_finalize(st);
    return s;
}

typedef struct {
    acc_db_tuning_run_t run; /* with the defaults filled in */
    int64_t id;
} add_run_t;

static void bind_run_key(sqlite3_stmt *st, const acc_db_tuning_run_t *r)
{
    db_bind_text(st, 1, r->model);
    db_bind_text(st, 2, r->topo_fingerprint);
    db_bind_text(st, 3, r->network);
    db_bind_text(st, 4, r->params);
    db_bind_text(st, 5, r->method);
    db_bind_text(st, 6, r->strategy);
    sqlite3_bind_int64(st, 7, r->created_us);
}

static acc_status_t add_run(acc_db_t *db, void *ctx)
{
    add_run_t *a = ctx;
    const acc_db_tuning_run_t *r = &a->run;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int row;

    a->id = 0;
    if ((s = check_refs(db, r->model, r->topo_fingerprint)) != ACC_OK ||
        (s = db_prepare(db,
                        "INSERT INTO tuning_runs (model, topo_fingerprint, network, params, "
                        "method, strategy, created_us, score, seconds, acc_version) VALUES (?1, "
                        "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT DO NOTHING",
                        &st)) != ACC_OK)
        return s;
    bind_run_key(st, r);
    sqlite3_bind_double(st, 8, r->score);
    sqlite3_bind_double(st, 9, r->seconds);
    db_bind_text(st, 10, r->acc_version);
    s = db_step_done(db, st, "adding a tuning run");
    sqlite3_finalize(st);
    /* The id of the new row, or of the identical run stored before. */
    if (s != ACC_OK || (s = db_prepare(db,
                                       "SELECT id FROM tuning_runs WHERE model = ?1 AND "
                                       "topo_fingerprint = ?2 AND network = ?3 AND params = ?4 "
                                       "AND method = ?5 AND strategy = ?6 AND created_us = ?7",
                                       &st)) != ACC_OK)
        return s;
    bind_run_key(st, r);
    row = db_step_row(db, st, "looking up the tuning run");
    if (row == 1)
        a->id = sqlite3_column_int64(st, 0);
    else
        s = row < 0 ? (acc_status_t)row
                    : acc_error_set(ACC_ERR_INTERNAL, "%s: the tuning run just added is missing",
                                    db->path);
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_add_tuning_run(acc_db_t *db, const acc_db_tuning_run_t *run, int64_t *id_out)
{
    add_run_t a;
    char what[160], sh[16];
    acc_status_t s;

    if ((s = check_tune_key(db, run->model, run->topo_fingerprint, run->network)) != ACC_OK ||
        (s = db_check_field(db, run->params, sizeof(run->params), 0, "run parameters")) != ACC_OK ||
        (s = db_check_field(db, run->method, sizeof(run->method), 1, "run method")) != ACC_OK ||
        (s = db_check_field(db, run->strategy, sizeof(run->strategy), 1, "run strategy")) !=
            ACC_OK ||
        (s = db_check_field(db, run->acc_version, sizeof(run->acc_version), 0,
                            "run acc version")) != ACC_OK)
        return s;
    if (!isfinite(run->score) || !isfinite(run->seconds) || run->seconds < 0 || run->created_us < 0)
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: tuning run of %s (%s): score and seconds must be finite, "
                             "seconds and time not negative",
                             db->path, run->model, run->params);
    a.run = *run;
    if (!a.run.acc_version[0])
        snprintf(a.run.acc_version, sizeof(a.run.acc_version), "%s", ACC_VERSION_STRING);
    if (a.run.created_us == 0)
        a.run.created_us = db_now_us();
    snprintf(what, sizeof(what), "adding a tuning run of %s on %s", run->model,
             db_short(run->topo_fingerprint, sh));
    if ((s = db_txn(db, 1, what, add_run, &a)) != ACC_OK)
        return s;
    if (id_out)
        *id_out = a.id;
    return ACC_OK;
}

typedef struct {
    const char *model, *fp, *network;
    acc_db_tuning_run_t *items;
    size_t n, cap;
} list_runs_t;

static acc_status_t read_run(acc_db_t *db, sqlite3_stmt *st, acc_db_tuning_run_t *r)
{
    acc_status_t s;
    memset(r, 0, sizeof(*r));
    r->id = sqlite3_column_int64(st, 0);
    r->score = sqlite3_column_double(st, 5);
    r->seconds = sqlite3_column_double(st, 8);
    r->created_us = sqlite3_column_int64(st, 10);
    if ((s = db_column_text(db, st, 1, r->model, sizeof(r->model), "run model")) != ACC_OK ||
        (s = db_column_text(db, st, 2, r->topo_fingerprint, sizeof(r->topo_fingerprint),
                            "run topology")) != ACC_OK ||
        (s = db_column_text(db, st, 3, r->network, sizeof(r->network), "run network")) != ACC_OK ||
        (s = db_column_text(db, st, 4, r->params, sizeof(r->params), "run parameters")) != ACC_OK ||
        (s = db_column_text(db, st, 6, r->method, sizeof(r->method), "run method")) != ACC_OK ||
        (s = db_column_text(db, st, 7, r->strategy, sizeof(r->strategy), "run strategy")) !=
            ACC_OK ||
        (s = db_column_text(db, st, 9, r->acc_version, sizeof(r->acc_version),
                            "run acc version")) != ACC_OK)
        return s;
    return ACC_OK;
}

static acc_status_t list_runs(acc_db_t *db, void *ctx)
{
    list_runs_t *l = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    l->n = 0;
    if ((s = db_prepare(db,
                        "SELECT id, model, topo_fingerprint, network, params, score, method, "
                        "strategy, seconds, acc_version, created_us FROM tuning_runs WHERE "
                        "(?1 IS NULL OR model = ?1) AND (?2 IS NULL OR topo_fingerprint = ?2) "
                        "AND (?3 IS NULL OR network = ?3) ORDER BY score, id",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, l->model);
    db_bind_text(st, 2, l->fp);
    db_bind_text(st, 3, l->network);
    while ((r = db_step_row(db, st, "listing tuning runs")) == 1) {
        void *p = l->items;
        if (acc_array_reserve(&p, &l->cap, l->n + 1, sizeof(*l->items)) != ACC_OK) {
            s = acc_error_set(ACC_ERR_NOMEM, "out of memory listing tuning runs");
            break;
        }
        l->items = p;
        if ((s = read_run(db, st, &l->items[l->n])) != ACC_OK)
            break;
        l->n++;
    }
    sqlite3_finalize(st);
    return s != ACC_OK ? s : r < 0 ? (acc_status_t)r : ACC_OK;
}

acc_status_t acc_db_list_tuning_runs(acc_db_t *db, const char *model, const char *topo_fingerprint,
                                     const char *network, acc_db_tuning_run_t **out, size_t *count)
{
    list_runs_t l = {model, topo_fingerprint, network, NULL, 0, 0};
    acc_status_t s = db_txn(db, 0, "listing tuning runs", list_runs, &l);

    *out = NULL;
    *count = 0;
    if (s != ACC_OK) {
        acc_mem_free(l.items);
        return s;
    }
    *out = l.items;
    *count = l.n;
    return ACC_OK;
}

static acc_status_t put_opt(acc_db_t *db, void *ctx)
{
    const acc_db_optimum_t *o = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    if ((s = check_refs(db, o->model, o->topo_fingerprint)) != ACC_OK)
        return s;
    if (o->run_id != 0) {
        /* The run that found an optimum must be a run of the same model, topology and network. */
        if ((s = db_prepare(db,
                            "SELECT count(*) FROM tuning_runs WHERE id = ?4 AND model = ?1 AND "
                            "topo_fingerprint = ?2 AND network = ?3",
                            &st)) != ACC_OK)
            return s;
        db_bind_text(st, 1, o->model);
        db_bind_text(st, 2, o->topo_fingerprint);
        db_bind_text(st, 3, o->network);
        sqlite3_bind_int64(st, 4, o->run_id);
        r = db_step_row(db, st, "looking up the tuning run");
        if (r < 0)
            s = (acc_status_t)r;
        else if (r == 1 && !sqlite3_column_int(st, 0))
            s = acc_error_set(ACC_ERR_NOT_FOUND,
                              "%s: the optimum of %s names tuning run %lld, which is not a "
                              "stored run of that model, topology and network",
                              db->path, o->model, (long long)o->run_id);
        sqlite3_finalize(st);
        if (s != ACC_OK)
            return s;
    }
    if ((s = db_prepare(db,
                        "INSERT INTO optima (model, topo_fingerprint, network, fusion_bytes, "
                        "streams, algo, params, score, run_id, method) VALUES (?1, ?2, ?3, ?4, "
                        "?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (model, topo_fingerprint, network, "
                        "method) DO UPDATE SET fusion_bytes = excluded.fusion_bytes, streams = "
                        "excluded.streams, algo = excluded.algo, params = excluded.params, score = "
                        "excluded.score, run_id = excluded.run_id",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, o->model);
    db_bind_text(st, 2, o->topo_fingerprint);
    db_bind_text(st, 3, o->network);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)o->fusion_bytes);
    sqlite3_bind_int(st, 5, o->streams);
    db_bind_text(st, 6, o->algo);
    db_bind_text(st, 7, o->params);
    sqlite3_bind_double(st, 8, o->score);
    if (o->run_id != 0)
        sqlite3_bind_int64(st, 9, o->run_id);
    else
        sqlite3_bind_null(st, 9);
    db_bind_text(st, 10, o->method);
    s = db_step_done(db, st, "storing an optimum");
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_put_optimum(acc_db_t *db, const acc_db_optimum_t *opt)
{
    char what[160], sh[16];
    acc_status_t s;

    if ((s = check_tune_key(db, opt->model, opt->topo_fingerprint, opt->network)) != ACC_OK ||
        (s = db_check_field(db, opt->method, sizeof(opt->method), 1, "optimum method")) != ACC_OK ||
        (s = db_check_field(db, opt->algo, sizeof(opt->algo), 0, "optimum algorithm")) != ACC_OK ||
        (s = db_check_field(db, opt->params, sizeof(opt->params), 0, "optimum parameters")) !=
            ACC_OK)
        return s;
    if (opt->streams < 1 || opt->fusion_bytes > (uint64_t)INT64_MAX || !isfinite(opt->score) ||
        opt->run_id < 0)
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: optimum of %s: streams must be at least 1, the fusion size "
                             "below 2^63 bytes and the score finite",
                             db->path, opt->model);
    snprintf(what, sizeof(what), "storing the optimum of %s on %s", opt->model,
             db_short(opt->topo_fingerprint, sh));
    return db_txn(db, 1, what, put_opt, (void *)opt);
}

#define OPT_COLUMNS                                                                                \
    "SELECT model, topo_fingerprint, network, fusion_bytes, streams, algo, params, score, "        \
    "coalesce(run_id, 0), method FROM optima "

static acc_status_t read_opt(acc_db_t *db, sqlite3_stmt *st, acc_db_optimum_t *o)
{
    acc_status_t s;
    memset(o, 0, sizeof(*o));
    o->fusion_bytes = (uint64_t)sqlite3_column_int64(st, 3);
    o->streams = sqlite3_column_int(st, 4);
    o->score = sqlite3_column_double(st, 7);
    o->run_id = sqlite3_column_int64(st, 8);
    if ((s = db_column_text(db, st, 0, o->model, sizeof(o->model), "optimum model")) != ACC_OK ||
        (s = db_column_text(db, st, 1, o->topo_fingerprint, sizeof(o->topo_fingerprint),
                            "optimum topology")) != ACC_OK ||
        (s = db_column_text(db, st, 2, o->network, sizeof(o->network), "optimum network")) !=
            ACC_OK ||
        (s = db_column_text(db, st, 5, o->algo, sizeof(o->algo), "optimum algorithm")) != ACC_OK ||
        (s = db_column_text(db, st, 6, o->params, sizeof(o->params), "optimum parameters")) !=
            ACC_OK ||
        (s = db_column_text(db, st, 9, o->method, sizeof(o->method), "optimum method")) != ACC_OK)
        return s;
    return ACC_OK;
}

typedef struct {
    const char *model, *fp, *network, *method;
    acc_db_optimum_t *items; /* get: one, caller's; list: grown here */
    size_t n, cap;
    int list;
} opts_t;

static acc_status_t read_opts(acc_db_t *db, void *ctx)
{
    opts_t *o = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    o->n = 0;
    if ((s = db_prepare(db,
                        o->list ? OPT_COLUMNS "ORDER BY model, topo_fingerprint, network, method"
                                : OPT_COLUMNS "WHERE model = ?1 AND topo_fingerprint = ?2 AND "
                                              "network = ?3 AND method = ?4",
                        &st)) != ACC_OK)
        return s;
    if (!o->list) {
        db_bind_text(st, 1, o->model);
        db_bind_text(st, 2, o->fp);
        db_bind_text(st, 3, o->network);
        db_bind_text(st, 4, o->method);
    }
    while ((r = db_step_row(db, st, "loading optima")) == 1) {
        if (o->list) {
            void *p = o->items;
            if (acc_array_reserve(&p, &o->cap, o->n + 1, sizeof(*o->items)) != ACC_OK) {
                s = acc_error_set(ACC_ERR_NOMEM, "out of memory listing optima");
                break;
            }
            o->items = p;
        }
        if ((s = read_opt(db, st, &o->items[o->n])) != ACC_OK)
            break;
        o->n++;
        if (!o->list)
            break;
    }
    sqlite3_finalize(st);
    return s != ACC_OK ? s : r < 0 ? (acc_status_t)r : ACC_OK;
}

acc_status_t acc_db_get_optimum(acc_db_t *db, const char *model, const char *topo_fingerprint,
                                const char *network, const char *method, acc_db_optimum_t *out)
{
    opts_t o = {model, topo_fingerprint, network, method, out, 0, 1, 0};
    acc_status_t s;

    memset(out, 0, sizeof(*out));
    if ((s = check_tune_key(db, model, topo_fingerprint, network)) != ACC_OK ||
        (s = db_check_field(db, method, sizeof(out->method), 1, "optimum method")) != ACC_OK ||
        (s = db_txn(db, 0, "loading an optimum", read_opts, &o)) != ACC_OK)
        return s;
    if (o.n == 0)
        return acc_error_set(ACC_ERR_NOT_FOUND,
                             "%s: no %s optimum for model %s on topology %.12s%s%s; find one "
                             "with acc-tune",
                             db->path, method, model, topo_fingerprint, network[0] ? " over " : "",
                             network);
    return ACC_OK;
}

acc_status_t acc_db_list_optima(acc_db_t *db, acc_db_optimum_t **out, size_t *count)
{
    opts_t o = {NULL, NULL, NULL, NULL, NULL, 0, 0, 1};
    acc_status_t s = db_txn(db, 0, "listing optima", read_opts, &o);

    *out = NULL;
    *count = 0;
    if (s != ACC_OK) {
        acc_mem_free(o.items);
        return s;
    }
    *out = o.items;
    *count = o.n;
    return ACC_OK;
}
