/* NCCL's own choice per size range, one set of rows per (topology, collective): what the NCCL
 * tuner plugin serves.  A put replaces the ranges of its key in one transaction; a get checks
 * every row as it reads it, since only acc writes them and anything else is damage. */
#include "db_internal.h"

#include <math.h>
#include <string.h>

/* NCCL's names, as acc_nccl_algo_name and acc_nccl_proto_name print them; -1 when unknown. */
static int algo_index(const char *name)
{
    for (int a = 0; a < ACC_NCCL_ALGO_COUNT; a++)
        if (strcmp(name, acc_nccl_algo_name((acc_nccl_algo_t)a)) == 0)
            return a;
    return -1;
}

static int proto_index(const char *name)
{
    for (int p = 0; p < ACC_NCCL_PROTO_COUNT; p++)
        if (strcmp(name, acc_nccl_proto_name((acc_nccl_proto_t)p)) == 0)
            return p;
    return -1;
}

/* 1 when the rows of t's key are t's already, 0 when not, or a negative status: storing them
 * again would rewrite the same rows and change the file's bytes for nothing. */
static int stored_already(acc_db_t *db, const acc_select_nccl_t *t)
{
    sqlite3_stmt *st = NULL;
    size_t i = 0;
    int r = 0, same = 1;
    acc_status_t s = db_prepare(db,
                                "SELECT min_bytes, max_bytes, algo, proto, channels, "
                                "predicted_us, measured_us, source FROM nccl_choices WHERE "
                                "topo_fingerprint = ?1 AND coll = ?2 ORDER BY min_bytes",
                                &st);

    if (s != ACC_OK)
        return s;
    db_bind_text(st, 1, t->topo_fingerprint);
    db_bind_text(st, 2, acc_coll_name(t->coll));
    while (same && (r = db_step_row(db, st, "comparing NCCL's choices")) == 1) {
        const acc_select_nccl_entry_t *e = i < t->n ? &t->entries[i] : NULL;
        const char *algo = (const char *)sqlite3_column_text(st, 2);
        const char *proto = (const char *)sqlite3_column_text(st, 3);
        const char *source = (const char *)sqlite3_column_text(st, 7);
        same = e && db_u64_from_sql(sqlite3_column_int64(st, 0)) == e->min_bytes &&
               db_u64_from_sql(sqlite3_column_int64(st, 1)) == e->max_bytes && algo &&
               strcmp(algo, acc_nccl_algo_name(e->algo)) == 0 && proto &&
               strcmp(proto, acc_nccl_proto_name(e->proto)) == 0 &&
               sqlite3_column_int(st, 4) == e->channels &&
               sqlite3_column_double(st, 5) == e->predicted_us &&
               sqlite3_column_double(st, 6) == e->measured_us && source &&
               strcmp(source, acc_select_source_name(e->source)) == 0;
        i++;
    }
    sqlite3_finalize(st);
    if (same && r < 0)
        return r;
    return same && i == t->n;
}

static acc_status_t put_choices(acc_db_t *db, void *ctx)
{
    const acc_select_nccl_t *t = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int same;

    char what[64];

    snprintf(what, sizeof(what), "NCCL's %s choices", acc_coll_name(t->coll));
    if ((s = db_check_topology_stored(db, t->topo_fingerprint, what)) != ACC_OK)
        return s;
    if ((same = stored_already(db, t)) != 0)
        return same > 0 ? ACC_OK : (acc_status_t)same;
    if ((s = db_prepare(db, "DELETE FROM nccl_choices WHERE topo_fingerprint = ?1 AND coll = ?2",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, t->topo_fingerprint);
    db_bind_text(st, 2, acc_coll_name(t->coll));
    s = db_step_done(db, st, "replacing NCCL's choices");
    sqlite3_finalize(st);
    if (s != ACC_OK ||
        (s = db_prepare(db,
                        "INSERT INTO nccl_choices (topo_fingerprint, coll, min_bytes, max_bytes, "
                        "algo, proto, channels, predicted_us, measured_us, source) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                        &st)) != ACC_OK)
        return s;
    for (size_t i = 0; i < t->n && s == ACC_OK; i++) {
        const acc_select_nccl_entry_t *e = &t->entries[i];
        sqlite3_reset(st);
        db_bind_text(st, 1, t->topo_fingerprint);
        db_bind_text(st, 2, acc_coll_name(t->coll));
        sqlite3_bind_int64(st, 3, db_u64_to_sql(e->min_bytes));
        sqlite3_bind_int64(st, 4, db_u64_to_sql(e->max_bytes));
        db_bind_text(st, 5, acc_nccl_algo_name(e->algo));
        db_bind_text(st, 6, acc_nccl_proto_name(e->proto));
        sqlite3_bind_int(st, 7, e->channels);
        sqlite3_bind_double(st, 8, e->predicted_us);
        sqlite3_bind_double(st, 9, e->measured_us);
        db_bind_text(st, 10, acc_select_source_name(e->source));
        s = db_step_done(db, st, "storing an NCCL choice");
    }
    sqlite3_finalize(st);
    return s;
}

/* What a put refuses before it opens a transaction: the checks a get makes again on the way out,
 * so that nothing stored can fail to load. */
static acc_status_t check_table(const acc_db_t *db, const acc_select_nccl_t *t)
{
    acc_select_nccl_t *copy = NULL;
    acc_status_t s;

    if (t->coll < 0 || t->coll >= ACC_COLL_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "%s: NCCL choices of unknown collective %d", db->path,
                             (int)t->coll);
    if ((s = db_check_hash(db, t->topo_fingerprint, "NCCL choices' topology fingerprint")) !=
        ACC_OK)
        return s;
    if ((s = acc_select_nccl_create(t->coll, t->topo_fingerprint, &copy)) != ACC_OK)
        return s;
    for (size_t i = 0; i < t->n && s == ACC_OK; i++) {
        const acc_select_nccl_entry_t *e = &t->entries[i];
        if (!isfinite(e->predicted_us) || !isfinite(e->measured_us))
            s = acc_error_set(ACC_ERR_INVALID,
                              "NCCL choice %zu: times must be finite (negative for unknown)", i);
        else
            s = acc_select_nccl_append(copy, e);
        if (s != ACC_OK)
            acc_error_prefix(s, "%s: NCCL's %s choices: ", db->path, acc_coll_name(t->coll));
    }
    acc_select_nccl_destroy(copy);
    return s;
}

acc_status_t acc_db_put_nccl_choices(acc_db_t *db, const acc_select_nccl_t *table)
{
    char what[96], sh[16];
    acc_status_t s;

    if ((s = check_table(db, table)) != ACC_OK)
        return s;
    snprintf(what, sizeof(what), "storing NCCL's %s choices of topology %s",
             acc_coll_name(table->coll), db_short(table->topo_fingerprint, sh));
    return db_txn(db, 1, what, put_choices, (void *)table);
}

typedef struct {
    const char *fp;
    acc_coll_t coll;
    acc_select_nccl_t *t;
} get_choices_t;

static acc_status_t read_choice(acc_db_t *db, sqlite3_stmt *st, acc_select_nccl_t *t)
{
    acc_select_nccl_entry_t e;
    char algo[32], proto[16], source[16];
    acc_status_t s;
    int a, p;

    memset(&e, 0, sizeof(e));
    e.min_bytes = db_u64_from_sql(sqlite3_column_int64(st, 0));
    e.max_bytes = db_u64_from_sql(sqlite3_column_int64(st, 1));
    e.channels = sqlite3_column_int(st, 4);
    e.predicted_us = sqlite3_column_double(st, 5);
    e.measured_us = sqlite3_column_double(st, 6);
    if ((s = db_column_text(db, st, 2, algo, sizeof(algo), "NCCL algorithm")) != ACC_OK ||
        (s = db_column_text(db, st, 3, proto, sizeof(proto), "NCCL protocol")) != ACC_OK ||
        (s = db_column_text(db, st, 7, source, sizeof(source), "NCCL choice source")) != ACC_OK)
        return s;
    a = algo_index(algo);
    p = proto_index(proto);
    e.algo = (acc_nccl_algo_t)a;
    e.proto = (acc_nccl_proto_t)p;
    if (a < 0 || p < 0 || acc_select_source_parse(source, &e.source) != ACC_OK ||
        acc_select_nccl_append(t, &e) != ACC_OK)
        return acc_error_set(ACC_ERR_PARSE,
                             "%s: NCCL's %s choices of topology %.12s have an invalid row at %llu "
                             "bytes (%s/%s, %d channels, source '%s'); rebuild the database with "
                             "acc-compile --db",
                             db->path, acc_coll_name(t->coll), t->topo_fingerprint,
                             (unsigned long long)e.min_bytes, algo, proto, e.channels, source);
    return ACC_OK;
}

static acc_status_t get_choices(acc_db_t *db, void *ctx)
{
    get_choices_t *g = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    acc_select_nccl_destroy(g->t);
    g->t = NULL;
    if ((s = acc_select_nccl_create(g->coll, g->fp, &g->t)) != ACC_OK ||
        (s = db_prepare(db,
                        "SELECT min_bytes, max_bytes, algo, proto, channels, predicted_us, "
                        "measured_us, source FROM nccl_choices WHERE topo_fingerprint = ?1 AND "
                        "coll = ?2 ORDER BY min_bytes",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, g->fp);
    db_bind_text(st, 2, acc_coll_name(g->coll));
    while ((r = db_step_row(db, st, "loading NCCL's choices")) == 1)
        if ((s = read_choice(db, st, g->t)) != ACC_OK)
            break;
    sqlite3_finalize(st);
    return s != ACC_OK ? s : r < 0 ? (acc_status_t)r : ACC_OK;
}

acc_status_t acc_db_get_nccl_choices(acc_db_t *db, const char *topo_fingerprint, acc_coll_t coll,
                                     acc_select_nccl_t **out)
{
    char what[96];
    get_choices_t g = {topo_fingerprint, coll, NULL};
    acc_status_t s;

    *out = NULL;
    if ((s = db_check_hash(db, topo_fingerprint, "topology fingerprint")) != ACC_OK)
        return s;
    if (coll < 0 || coll >= ACC_COLL_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "%s: unknown collective %d", db->path, (int)coll);
    snprintf(what, sizeof(what), "loading NCCL's %s choices", acc_coll_name(coll));
    if ((s = db_txn(db, 0, what, get_choices, &g)) == ACC_OK && g.t->n == 0)
        s = acc_error_set(ACC_ERR_NOT_FOUND,
                          "%s: no NCCL choices for %s on topology %s; build them with acc-compile "
                          "--topo T --db %s",
                          db->path, acc_coll_name(coll), topo_fingerprint, db->path);
    if (s == ACC_OK) {
        *out = g.t;
        g.t = NULL;
    }
    acc_select_nccl_destroy(g.t);
    return s;
}
