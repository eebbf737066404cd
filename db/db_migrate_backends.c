/* Schema step 10's fill: which backends can run each stored selection entry, derived from the
 * entry's plan and its topology's node size by acc_plan_backends, the rule the runtime's
 * backends apply; and each table's content hash again, now over the backends too. */
#include "db_internal.h"

#include <string.h>

typedef struct {
    int64_t id;
    int gpus_per_node;
    acc_coll_t coll;
    char fp[ACC_SHA256_HEX_LEN + 1];
    char hash[ACC_SHA256_HEX_LEN + 1];
} sel_row_t;

/* Every stored selection, with its topology's GPUs per node. */
static acc_status_t list_selections(acc_db_t *db, sel_row_t **out, size_t *n)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    acc_status_t s;
    int r;
    char coll[32];

    *out = NULL;
    *n = 0;
    if ((s = db_prepare(db,
                        "SELECT s.id, t.gpus_per_node, s.coll, s.topo_fingerprint, s.content_hash "
                        "FROM selections s JOIN topologies t ON t.fingerprint = "
                        "s.topo_fingerprint ORDER BY s.id",
                        &st)) != ACC_OK)
        return s;
    while ((r = db_step_row(db, st, "listing the selections")) == 1) {
        sel_row_t *row;
        if (acc_array_reserve((void **)out, &cap, *n + 1, sizeof(**out)) != ACC_OK) {
            s = acc_error_set(ACC_ERR_NOMEM, "out of memory listing the selections");
            break;
        }
        row = &(*out)[(*n)++];
        memset(row, 0, sizeof(*row));
        row->id = sqlite3_column_int64(st, 0);
        row->gpus_per_node = sqlite3_column_int(st, 1);
        if ((s = db_column_text(db, st, 2, coll, sizeof(coll), "selection collective")) != ACC_OK ||
            (s = db_column_text(db, st, 3, row->fp, sizeof(row->fp), "selection topology")) !=
                ACC_OK ||
            (s = db_column_text(db, st, 4, row->hash, sizeof(row->hash), "content hash")) != ACC_OK)
            break;
        if ((s = acc_coll_parse(coll, &row->coll)) != ACC_OK) {
            s = acc_error_prefix(s, "%s: selection %lld: ", db->path, (long long)row->id);
            break;
        }
    }
    sqlite3_finalize(st);
    return s != ACC_OK ? s : r < 0 ? (acc_status_t)r : ACC_OK;
}

/* The backends of the stored plan `hash` on nodes of gpus_per_node ranks.  A plan whose text no
 * longer matches its hash, or that does not load or verify, runs nowhere (0): the runtime would
 * refuse it too, and says so when a call reaches it. */
static unsigned plan_backends(acc_db_t *db, const char *hash, int gpus_per_node)
{
    sqlite3_stmt *st = NULL;
    acc_plan_t *plan = NULL;
    char actual[ACC_SHA256_HEX_LEN + 1], label[128], why[512] = "";
    unsigned set = 0;
    int r;

    if (db_prepare(db, "SELECT yaml FROM plans WHERE hash = ?1", &st) != ACC_OK)
        return 0;
    db_bind_text(st, 1, hash);
    snprintf(label, sizeof(label), "%s: plan %.12s", db->path, hash);
    if ((r = db_step_row(db, st, "loading a plan")) == 1) {
        const char *text = (const char *)sqlite3_column_text(st, 0);
        size_t len = (size_t)sqlite3_column_bytes(st, 0);
        if (acc_sha256_hex(text ? text : "", len, actual) != ACC_OK || strcmp(actual, hash) != 0)
            snprintf(why, sizeof(why), "its text does not match its hash");
        else if (acc_plan_load_yaml(text, len, label, &plan) != ACC_OK ||
                 acc_plan_verify(plan) != ACC_OK)
            snprintf(why, sizeof(why), "%s", acc_error_message());
        else
            set = acc_plan_backends(plan, gpus_per_node);
    } else {
        snprintf(why, sizeof(why), "it is not stored");
    }
    sqlite3_finalize(st);
    acc_plan_destroy(plan);
    if (why[0])
        ACC_WARN(DB, "%s: plan %.12s of a selection runs on no backend: %s", db->path, hash, why);
    return set;
}

static acc_status_t fill_one(acc_db_t *db, const sel_row_t *row)
{
    acc_select_table_t *t = NULL;
    sqlite3_stmt *st = NULL;
    char old[ACC_SHA256_HEX_LEN + 1], now[ACC_SHA256_HEX_LEN + 1], text[32];
    acc_status_t s;
    size_t i;

    if ((s = acc_select_create(row->coll, row->fp, &t)) != ACC_OK)
        return s;
    if ((s = db_selection_read(db, row->id, t)) == ACC_ERR_PARSE || s == ACC_ERR_INVALID) {
        /* Rows altered outside acc: left as they are, which loading refuses as before. */
        ACC_WARN(DB, "%s", acc_error_message());
        s = ACC_OK;
        goto out;
    }
    if (s != ACC_OK || (s = db_selection_hash(t->entries, t->n, 0, old)) != ACC_OK ||
        (s = db_prepare(db,
                        "UPDATE selection_entries SET backends = ?1 WHERE selection_id = ?2 AND "
                        "min_bytes = ?3",
                        &st)) != ACC_OK)
        goto out;
    for (i = 0; i < t->n && s == ACC_OK; i++) {
        acc_select_entry_t *e = &t->entries[i];
        e->backends =
            e->use_nccl ? ACC_BACKENDS_CUDA : plan_backends(db, e->plan_hash, row->gpus_per_node);
        acc_backends_format(e->backends, text, sizeof(text));
        sqlite3_reset(st);
        db_bind_text(st, 1, text);
        sqlite3_bind_int64(st, 2, row->id);
        sqlite3_bind_int64(st, 3, db_u64_to_sql(e->min_bytes));
        s = db_step_done(db, st, "storing a selection entry's backends");
    }
    sqlite3_finalize(st);
    st = NULL;
    /* A table whose entries matched their hash gets the hash of today's text; one that did not
     * (altered outside acc) keeps its old hash, and loading it still fails. */
    if (s != ACC_OK || strcmp(old, row->hash) != 0 ||
        (s = db_selection_hash(t->entries, t->n, 1, now)) != ACC_OK ||
        (s = db_prepare(db, "UPDATE selections SET content_hash = ?1 WHERE id = ?2", &st)) !=
            ACC_OK)
        goto out;
    db_bind_text(st, 1, now);
    sqlite3_bind_int64(st, 2, row->id);
    s = db_step_done(db, st, "storing a selection's content hash");
out:
    sqlite3_finalize(st);
    acc_select_destroy(t);
    return s;
}

acc_status_t db_fill_backends(acc_db_t *db)
{
    sel_row_t *rows = NULL;
    size_t n = 0;
    acc_status_t s = list_selections(db, &rows, &n);

    for (size_t i = 0; i < n && s == ACC_OK; i++)
        if ((s = fill_one(db, &rows[i])) != ACC_OK)
            s = acc_error_prefix(
                s, "the %s selection of topology %.12s: ", acc_coll_name(rows[i].coll), rows[i].fp);
    acc_mem_free(rows);
    return s;
}
