/* Selection tables: one header row per (topology, collective) and its byte ranges as entries.
 * A put replaces the whole table in one transaction; a get checks what it reads against the
 * content hash kept in the header. */
#include "db_internal.h"

#include <math.h>
#include <string.h>

acc_status_t db_selection_hash(const acc_select_entry_t *e, size_t n, int with_backends,
                               char out[ACC_SHA256_HEX_LEN + 1])
{
    char backends[32];
    acc_buf_t b;
    acc_status_t s;
    size_t i;

    acc_buf_init(&b);
    for (i = 0; i < n; i++) {
        acc_buf_printf(&b, "%llu %llu %d %s\t%s\t%s %.17g", (unsigned long long)e[i].min_bytes,
                       (unsigned long long)e[i].max_bytes, e[i].use_nccl, e[i].algo, e[i].params,
                       e[i].plan_hash, e[i].predicted_us);
        if (e[i].measured_us != -1.0 || e[i].source != ACC_SELECT_MODEL)
            acc_buf_printf(&b, " %.17g %s", e[i].measured_us, acc_select_source_name(e[i].source));
        if (with_backends) {
            acc_backends_format(e[i].backends, backends, sizeof(backends));
            acc_buf_printf(&b, "\t%s", backends);
        }
        acc_buf_puts(&b, "\n");
    }
    if ((s = acc_buf_status(&b)) == ACC_OK)
        s = acc_sha256_hex(b.data ? b.data : "", b.len, out);
    acc_buf_free(&b);
    return s;
}

static int terminated(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

static acc_status_t check_entry(const acc_db_t *db, const acc_select_table_t *t, size_t i)
{
    const acc_select_entry_t *e = &t->entries[i];
    const char *coll = acc_coll_name(t->coll);

    if (e->min_bytes > e->max_bytes || (i > 0 && t->entries[i - 1].max_bytes >= e->min_bytes))
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: %s selection entry %zu (%llu..%llu bytes) is empty, out of "
                             "order or overlaps the one before",
                             db->path, coll, i, (unsigned long long)e->min_bytes,
                             (unsigned long long)e->max_bytes);
    if ((e->use_nccl != 0 && e->use_nccl != 1) || !terminated(e->algo, sizeof(e->algo)) ||
        !terminated(e->params, sizeof(e->params)) || !e->algo[0] || e->source < 0 ||
        e->source >= ACC_SELECT_SOURCE_COUNT)
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: %s selection entry %zu: use_nccl must be 0 or 1, algo a "
                             "non-empty name and source one of model, measured, user",
                             db->path, coll, i);
    if (e->use_nccl ? e->plan_hash[0] != '\0' : !db_is_sha256_hex(e->plan_hash))
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: %s selection entry %zu (%s): an acc entry names its plan by "
                             "SHA-256 hash and an NCCL entry names none",
                             db->path, coll, i, e->algo);
    if (e->backends & ~ACC_BACKENDS_ALL)
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: %s selection entry %zu (%s): backends 0x%x names other than "
                             "host and cuda",
                             db->path, coll, i, e->algo, e->backends);
    if (!isfinite(e->predicted_us) || !isfinite(e->measured_us))
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: %s selection entry %zu: times must be finite (negative for "
                             "unknown)",
                             db->path, coll, i);
    return ACC_OK;
}

typedef struct {
    const acc_select_table_t *t;
    const char *hash;
} put_sel_t;

static acc_status_t check_refs(acc_db_t *db, const acc_select_table_t *t)
{
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    size_t i;
    int r = 0;
    char what[64];

    snprintf(what, sizeof(what), "the %s selection", acc_coll_name(t->coll));
    s = db_check_topology_stored(db, t->topo_fingerprint, what);
    /* Each plan must exist and be a plan of this collective for every rank of the topology. */
    if (s != ACC_OK || (s = db_prepare(db,
                                       "SELECT p.coll, p.nranks, t.nodes * t.gpus_per_node "
                                       "FROM plan_heads p, topologies t WHERE p.hash = ?1 AND "
                                       "t.fingerprint = ?2",
                                       &st)) != ACC_OK)
        return s;
    for (i = 0; i < t->n && s == ACC_OK; i++) {
        const acc_select_entry_t *e = &t->entries[i];
        const char *coll;
        if (e->use_nccl)
            continue;
        sqlite3_reset(st);
        db_bind_text(st, 1, e->plan_hash);
        db_bind_text(st, 2, t->topo_fingerprint);
        if ((r = db_step_row(db, st, "looking up a plan")) < 0) {
            s = (acc_status_t)r;
        } else if (r == 0) {
            s = acc_error_set(ACC_ERR_NOT_FOUND,
                              "%s: %s selection entry %zu (%llu..%llu bytes, %s) names plan %s, "
                              "which is not stored; store the plan first",
                              db->path, acc_coll_name(t->coll), i, (unsigned long long)e->min_bytes,
                              (unsigned long long)e->max_bytes, e->algo, e->plan_hash);
        } else if (!(coll = (const char *)sqlite3_column_text(st, 0)) ||
                   strcmp(coll, acc_coll_name(t->coll)) != 0 ||
                   sqlite3_column_int(st, 1) != sqlite3_column_int(st, 2)) {
            s = acc_error_set(ACC_ERR_INVALID,
                              "%s: %s selection entry %zu (%s) names plan %.12s, a %s plan for "
                              "%d ranks, but the table is for %s on %d ranks",
                              db->path, acc_coll_name(t->coll), i, e->algo, e->plan_hash,
                              coll ? coll : "?", sqlite3_column_int(st, 1), acc_coll_name(t->coll),
                              sqlite3_column_int(st, 2));
        }
    }
    sqlite3_finalize(st);
    return s;
}

static acc_status_t insert_entries(acc_db_t *db, const acc_select_table_t *t, int64_t id)
{
    char backends[32];
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    size_t i;

    if ((s = db_prepare(db, "DELETE FROM selection_entries WHERE selection_id = ?1", &st)) !=
        ACC_OK)
        return s;
    sqlite3_bind_int64(st, 1, id);
    s = db_step_done(db, st, "replacing the selection entries");
    sqlite3_finalize(st);
    if (s != ACC_OK ||
        (s = db_prepare(db,
                        "INSERT INTO selection_entries (selection_id, min_bytes, max_bytes, "
                        "use_nccl, algo, params, plan_hash, predicted_us, measured_us, source, "
                        "backends) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                        &st)) != ACC_OK)
        return s;
    for (i = 0; i < t->n && s == ACC_OK; i++) {
        const acc_select_entry_t *e = &t->entries[i];
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, db_u64_to_sql(e->min_bytes));
        sqlite3_bind_int64(st, 3, db_u64_to_sql(e->max_bytes));
        sqlite3_bind_int(st, 4, e->use_nccl);
        db_bind_text(st, 5, e->algo);
        db_bind_text(st, 6, e->params);
        db_bind_text(st, 7, e->use_nccl ? NULL : e->plan_hash);
        sqlite3_bind_double(st, 8, e->predicted_us);
        sqlite3_bind_double(st, 9, e->measured_us);
        db_bind_text(st, 10, acc_select_source_name(e->source));
        acc_backends_format(e->backends, backends, sizeof(backends));
        db_bind_text(st, 11, backends);
        s = db_step_done(db, st, "storing a selection entry");
    }
    sqlite3_finalize(st);
    return s;
}

static acc_status_t put_sel(acc_db_t *db, void *ctx)
{
    const put_sel_t *p = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int64_t id = 0;
    int r, same = 0;

    if ((s = db_prepare(db,
                        "SELECT content_hash FROM selections WHERE topo_fingerprint = ?1 AND "
                        "coll = ?2",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, p->t->topo_fingerprint);
    db_bind_text(st, 2, acc_coll_name(p->t->coll));
    if ((r = db_step_row(db, st, "looking up the selection")) == 1)
        same = strcmp((const char *)sqlite3_column_text(st, 0), p->hash) == 0;
    sqlite3_finalize(st);
    if (r < 0)
        return (acc_status_t)r;
    if (same) /* storing the same table again changes nothing */
        return ACC_OK;
    if ((s = check_refs(db, p->t)) != ACC_OK)
        return s;
    if ((s = db_prepare(db,
                        "INSERT INTO selections (topo_fingerprint, coll, content_hash, "
                        "acc_version) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (topo_fingerprint, "
                        "coll) DO UPDATE SET content_hash = excluded.content_hash, "
                        "acc_version = excluded.acc_version RETURNING id",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, p->t->topo_fingerprint);
    db_bind_text(st, 2, acc_coll_name(p->t->coll));
    db_bind_text(st, 3, p->hash);
    db_bind_text(st, 4, ACC_VERSION_STRING);
    if ((r = db_step_row(db, st, "storing the selection")) == 1)
        id = sqlite3_column_int64(st, 0);
    /* RETURNING rows must be stepped to the end before the statement counts as done. */
    if (r == 1 && (r = db_step_row(db, st, "storing the selection")) > 0)
        r = 0;
    sqlite3_finalize(st);
    if (r < 0)
        return (acc_status_t)r;
    return insert_entries(db, p->t, id);
}

acc_status_t acc_db_put_selection(acc_db_t *db, const acc_select_table_t *table)
{
    char hash[ACC_SHA256_HEX_LEN + 1], what[96], sh[16];
    put_sel_t p;
    acc_status_t s;
    size_t i;

    if (table->coll < 0 || table->coll >= ACC_COLL_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "%s: selection table of unknown collective %d",
                             db->path, (int)table->coll);
    if ((s = db_check_hash(db, table->topo_fingerprint, "selection topology fingerprint")) !=
        ACC_OK)
        return s;
    for (i = 0; i < table->n; i++)
        if ((s = check_entry(db, table, i)) != ACC_OK)
            return s;
    if ((s = db_selection_hash(table->entries, table->n, 1, hash)) != ACC_OK)
        return s;
    p.t = table;
    p.hash = hash;
    snprintf(what, sizeof(what), "storing the %s selection of topology %s",
             acc_coll_name(table->coll), db_short(table->topo_fingerprint, sh));
    return db_txn(db, 1, what, put_sel, &p);
}

typedef struct {
    const char *fp;
    acc_coll_t coll;
    acc_select_table_t *t;
    char hash[ACC_SHA256_HEX_LEN + 1];
} get_sel_t;

static acc_status_t read_entry(acc_db_t *db, sqlite3_stmt *st, acc_select_table_t *t)
{
    acc_select_entry_t e;
    char source[16], backends[32];
    acc_status_t s;

    memset(&e, 0, sizeof(e));
    e.min_bytes = db_u64_from_sql(sqlite3_column_int64(st, 0));
    e.max_bytes = db_u64_from_sql(sqlite3_column_int64(st, 1));
    e.use_nccl = sqlite3_column_int(st, 2);
    e.predicted_us = sqlite3_column_double(st, 6);
    e.measured_us = sqlite3_column_double(st, 7);
    if ((s = db_column_text(db, st, 3, e.algo, sizeof(e.algo), "selection algorithm")) != ACC_OK ||
        (s = db_column_text(db, st, 4, e.params, sizeof(e.params), "selection parameters")) !=
            ACC_OK ||
        (s = db_column_text(db, st, 5, e.plan_hash, sizeof(e.plan_hash), "plan hash")) != ACC_OK ||
        (s = db_column_text(db, st, 8, source, sizeof(source), "selection source")) != ACC_OK ||
        (s = db_column_text(db, st, 9, backends, sizeof(backends), "selection backends")) != ACC_OK)
        return s;
    if (acc_select_source_parse(source, &e.source) != ACC_OK ||
        acc_backends_parse(backends, &e.backends) != ACC_OK ||
        (e.use_nccl ? e.plan_hash[0] != '\0' : !db_is_sha256_hex(e.plan_hash)))
        return acc_error_set(ACC_ERR_PARSE,
                             "%s: the %s selection of topology %.12s has an invalid entry at "
                             "%llu bytes; rebuild the database with acc-compile --db",
                             db->path, acc_coll_name(t->coll), t->topo_fingerprint,
                             (unsigned long long)e.min_bytes);
    if ((s = acc_select_add(t, &e)) != ACC_OK)
        return acc_error_prefix(s, "%s: the %s selection of topology %.12s: ", db->path,
                                acc_coll_name(t->coll), t->topo_fingerprint);
    return ACC_OK;
}

static acc_status_t get_sel(acc_db_t *db, void *ctx)
{
    get_sel_t *g = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int64_t id = 0;
    int r;

    acc_select_destroy(g->t);
    g->t = NULL;
    if ((s = db_prepare(db,
                        "SELECT id, content_hash FROM selections WHERE topo_fingerprint = ?1 AND "
                        "coll = ?2",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, g->fp);
    db_bind_text(st, 2, acc_coll_name(g->coll));
    r = db_step_row(db, st, "looking up the selection");
    if (r == 1) {
        id = sqlite3_column_int64(st, 0);
        s = db_column_text(db, st, 1, g->hash, sizeof(g->hash), "selection content hash");
    } else if (r == 0) {
        s = acc_error_set(ACC_ERR_NOT_FOUND,
                          "%s: no %s selection for topology %s; build it with acc-compile --topo "
                          "T --db %s",
                          db->path, acc_coll_name(g->coll), g->fp, db->path);
    } else {
        s = (acc_status_t)r;
    }
    sqlite3_finalize(st);
    if (s != ACC_OK || (s = acc_select_create(g->coll, g->fp, &g->t)) != ACC_OK)
        return s;
    return db_selection_read(db, id, g->t);
}

acc_status_t db_selection_read(acc_db_t *db, int64_t id, acc_select_table_t *t)
{
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    if ((s = db_prepare(db,
                        "SELECT min_bytes, max_bytes, use_nccl, algo, params, plan_hash, "
                        "predicted_us, measured_us, source, backends FROM selection_entries "
                        "WHERE selection_id = ?1 ORDER BY min_bytes",
                        &st)) != ACC_OK)
        return s;
    sqlite3_bind_int64(st, 1, id);
    while ((r = db_step_row(db, st, "loading the selection")) == 1)
        if ((s = read_entry(db, st, t)) != ACC_OK)
            break;
    sqlite3_finalize(st);
    return s != ACC_OK ? s : r < 0 ? (acc_status_t)r : ACC_OK;
}

acc_status_t acc_db_get_selection(acc_db_t *db, const char *topo_fingerprint, acc_coll_t coll,
                                  acc_select_table_t **out)
{
    char what[96], hash[ACC_SHA256_HEX_LEN + 1];
    get_sel_t g;
    acc_status_t s;

    *out = NULL;
    if ((s = db_check_hash(db, topo_fingerprint, "topology fingerprint")) != ACC_OK)
        return s;
    if (coll < 0 || coll >= ACC_COLL_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "%s: unknown collective %d", db->path, (int)coll);
    memset(&g, 0, sizeof(g));
    g.fp = topo_fingerprint;
    g.coll = coll;
    snprintf(what, sizeof(what), "loading the %s selection", acc_coll_name(coll));
    if ((s = db_txn(db, 0, what, get_sel, &g)) != ACC_OK)
        goto out;
    if ((s = db_selection_hash(g.t->entries, g.t->n, 1, hash)) != ACC_OK)
        goto out;
    if (strcmp(hash, g.hash) != 0) {
        s = acc_error_set(ACC_ERR_PARSE,
                          "%s: the %s selection of topology %.12s does not match its content "
                          "hash: entries were altered outside acc; rebuild it with acc-compile "
                          "--db",
                          db->path, acc_coll_name(coll), topo_fingerprint);
        goto out;
    }
    *out = g.t;
    g.t = NULL;
out:
    acc_select_destroy(g.t);
    return s;
}
