/*
 * Measured times: a plan's time at one size on a machine of a topology, beside the model's
 * predictions.  acc_db_build hands them to the table builder, which prefers them.
 */
#include "db_internal.h"

#include <math.h>
#include <string.h>

static acc_status_t check_measurement(acc_db_t *db, const acc_db_measurement_t *m)
{
    acc_status_t s;
    if ((s = db_check_hash(db, m->topo_fingerprint, "topology fingerprint")) != ACC_OK ||
        (s = db_check_hash(db, m->plan_hash, "plan hash")) != ACC_OK ||
        (s = db_check_field(db, m->source, ACC_DB_TEXT_MAX, 1, "measurement source")) != ACC_OK)
        return s;
    if ((unsigned)m->coll >= ACC_COLL_COUNT || (unsigned)m->dtype >= ACC_DT_COUNT)
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: a measurement of collective %d, data type %d: no such one",
                             db->path, (int)m->coll, (int)m->dtype);
    if (!(m->us > 0) || !isfinite(m->us) || m->nbytes > (uint64_t)INT64_MAX)
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: a measurement of %g us at %llu bytes: the time must be above 0 "
                             "and the size below 2^63",
                             db->path, m->us, (unsigned long long)m->nbytes);
    return ACC_OK;
}

/* The plan exists, is of the collective and has as many ranks as the topology. */
static acc_status_t check_plan(acc_db_t *db, const acc_db_measurement_t *m)
{
    char a[16], b[16];
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    if ((s = db_prepare(db,
                        "SELECT p.coll, p.nranks, t.nodes * t.gpus_per_node FROM plans p, "
                        "topologies t WHERE p.hash = ?1 AND t.fingerprint = ?2",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, m->plan_hash);
    db_bind_text(st, 2, m->topo_fingerprint);
    r = db_step_row(db, st, "checking a measurement's plan");
    if (r < 0)
        s = (acc_status_t)r;
    else if (r == 0)
        s = acc_error_set(ACC_ERR_NOT_FOUND,
                          "%s: a measurement names plan %s or topology %s, which the database "
                          "does not hold; store them first",
                          db->path, db_short(m->plan_hash, a), db_short(m->topo_fingerprint, b));
    else if (strcmp((const char *)sqlite3_column_text(st, 0), acc_coll_name(m->coll)) != 0 ||
             sqlite3_column_int64(st, 1) != sqlite3_column_int64(st, 2))
        s = acc_error_set(ACC_ERR_INVALID,
                          "%s: plan %s is a %s plan of %lld ranks, not a %s plan for topology "
                          "%s's %lld ranks",
                          db->path, db_short(m->plan_hash, a), sqlite3_column_text(st, 0),
                          (long long)sqlite3_column_int64(st, 1), acc_coll_name(m->coll),
                          db_short(m->topo_fingerprint, b), (long long)sqlite3_column_int64(st, 2));
    sqlite3_finalize(st);
    return s;
}

static acc_status_t put_measurement(acc_db_t *db, void *ctx)
{
    const acc_db_measurement_t *m = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;

    if ((s = check_plan(db, m)) != ACC_OK ||
        (s = db_prepare(db,
                        "INSERT INTO measurements (topo_fingerprint, coll, dtype, plan_hash, "
                        "nbytes, measured_us, source) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
                        "ON CONFLICT DO UPDATE SET measured_us = excluded.measured_us, source = "
                        "excluded.source WHERE measured_us IS NOT excluded.measured_us OR "
                        "source IS NOT excluded.source",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, m->topo_fingerprint);
    db_bind_text(st, 2, acc_coll_name(m->coll));
    db_bind_text(st, 3, acc_dtype_name(m->dtype));
    db_bind_text(st, 4, m->plan_hash);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)m->nbytes);
    sqlite3_bind_double(st, 6, m->us);
    db_bind_text(st, 7, m->source);
    s = db_step_done(db, st, "storing a measurement");
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_put_measurement(acc_db_t *db, const acc_db_measurement_t *m)
{
    acc_status_t s = check_measurement(db, m);
    return s != ACC_OK ? s : db_txn(db, 1, "storing a measurement", put_measurement, (void *)m);
}

typedef struct {
    const char *fingerprint;
    acc_dtype_t dtype;
    acc_select_measured_t *v;
    size_t n, cap;
} list_t;

static acc_status_t add_row(acc_db_t *db, sqlite3_stmt *st, list_t *l)
{
    acc_select_measured_t *m;
    void *p = l->v;
    acc_status_t s;

    if (acc_array_reserve(&p, &l->cap, l->n + 1, sizeof(*l->v)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory loading measurements");
    l->v = p;
    m = &l->v[l->n];
    memset(m, 0, sizeof(*m));
    if (acc_coll_parse((const char *)sqlite3_column_text(st, 0), &m->coll) != ACC_OK)
        return acc_error_set(ACC_ERR_PARSE, "%s: a measurement of an unknown collective '%s'",
                             db->path, sqlite3_column_text(st, 0));
    if ((s = db_column_text(db, st, 1, m->plan_hash, sizeof(m->plan_hash), "plan hash")) != ACC_OK)
        return s;
    m->nbytes = (uint64_t)sqlite3_column_int64(st, 2);
    m->us = sqlite3_column_double(st, 3);
    l->n++;
    return ACC_OK;
}

static acc_status_t get_measurements(acc_db_t *db, void *ctx)
{
    list_t *l = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    l->n = 0; /* a retried transaction starts again */
    if ((s = db_prepare(db,
                        "SELECT coll, plan_hash, nbytes, measured_us FROM measurements WHERE "
                        "topo_fingerprint = ?1 AND dtype = ?2 ORDER BY coll, plan_hash, nbytes",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, l->fingerprint);
    db_bind_text(st, 2, acc_dtype_name(l->dtype));
    while ((r = db_step_row(db, st, "loading measurements")) > 0 &&
           (s = add_row(db, st, l)) == ACC_OK)
        ;
    if (r < 0)
        s = (acc_status_t)r;
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_get_measurements(acc_db_t *db, const char *topo_fingerprint, acc_dtype_t dtype,
                                     acc_select_measured_t **out, size_t *count)
{
    list_t l;
    acc_status_t s;

    *out = NULL;
    *count = 0;
    if ((s = db_check_hash(db, topo_fingerprint, "topology fingerprint")) != ACC_OK)
        return s;
    if ((unsigned)dtype >= ACC_DT_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "%s: measurements of data type %d: no such type",
                             db->path, (int)dtype);
    memset(&l, 0, sizeof(l));
    l.fingerprint = topo_fingerprint;
    l.dtype = dtype;
    if ((s = db_txn(db, 0, "loading measurements", get_measurements, &l)) != ACC_OK || !l.n) {
        acc_mem_free(l.v);
        return s;
    }
    *out = l.v;
    *count = l.n;
    return ACC_OK;
}
