/* Plans in their binary class form (acc_cplan.h, schema 11): a head per plan and a row per
 * class program, so that a rank reads the head and its own programs and nothing else. */
#include "db_internal.h"

#include "acc_cplan.h"

#include <string.h>

/* The rows of bin under hash, in the caller's transaction; an existing head of that hash
 * already holds this form (the hash names the plan). */
acc_status_t db_put_class_rows(acc_db_t *db, const char *hash, const acc_cplan_t *cp,
                               const acc_cplan_bin_t *bin)
{
    char head_sha[ACC_SHA256_HEX_LEN + 1];
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int fresh;

    if ((s = acc_sha256_hex(bin->head.data, bin->head.len, head_sha)) != ACC_OK ||
        (s = db_prepare(db,
                        "INSERT INTO plan_heads (hash, coll, algo, params, nranks, head_sha, head) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (hash) DO NOTHING",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, hash);
    db_bind_text(st, 2, acc_coll_name(cp->coll));
    db_bind_text(st, 3, cp->algo);
    db_bind_text(st, 4, cp->params);
    sqlite3_bind_int(st, 5, cp->nranks);
    db_bind_text(st, 6, head_sha);
    sqlite3_bind_blob64(st, 7, bin->head.data, bin->head.len, SQLITE_STATIC);
    s = db_step_done(db, st, "storing a plan's class form");
    sqlite3_finalize(st);
    fresh = sqlite3_changes(db->sql) > 0;
    if (s != ACC_OK || !fresh)
        return s;
    if ((s = db_prepare(db,
                        "INSERT INTO plan_programs (hash, lane, cls, program) "
                        "VALUES (?1, ?2, ?3, ?4)",
                        &st)) != ACC_OK)
        return s;
    for (uint32_t i = 0; i < bin->nprogs && s == ACC_OK; i++) {
        sqlite3_reset(st);
        db_bind_text(st, 1, hash);
        sqlite3_bind_int(st, 2, bin->lane[i]);
        sqlite3_bind_int64(st, 3, bin->cls[i]);
        sqlite3_bind_blob64(st, 4, bin->progs[i].data, bin->progs[i].len, SQLITE_STATIC);
        s = db_step_done(db, st, "storing a plan's class program");
    }
    sqlite3_finalize(st);
    return s;
}

typedef struct {
    const char *hash;
    const acc_cplan_t *cp;
    const acc_cplan_bin_t *bin;
} put_class_t;

static acc_status_t put_class(acc_db_t *db, void *ctx)
{
    const put_class_t *p = ctx;
    return db_put_class_rows(db, p->hash, p->cp, p->bin);
}

acc_status_t acc_db_put_cplan(acc_db_t *db, const acc_cplan_t *cp, const acc_plan_t *expl,
                              char hash_out[ACC_SHA256_HEX_LEN + 1])
{
    char hash[ACC_SHA256_HEX_LEN + 1], what[96];
    acc_cplan_bin_t bin;
    acc_status_t s;

    if ((s = acc_cplan_encode(cp, expl, &bin)) != ACC_OK)
        return acc_error_prefix(s, "%s: storing a class plan: ", db->path);
    /* Its name: the SHA-256 of its bytes. */
    if ((s = acc_cplan_bin_hash(&bin, hash)) == ACC_OK) {
        put_class_t p = {hash, cp, &bin};
        snprintf(what, sizeof(what), "storing %s class plan %.12s", cp->algo, hash);
        s = db_txn(db, 1, what, put_class, &p);
    }
    if (s == ACC_OK && hash_out)
        memcpy(hash_out, hash, sizeof(hash));
    acc_cplan_bin_free(&bin);
    return s;
}

typedef struct {
    const char *hash;
    int rank;   /* whose view; -1: the whole plan */
    acc_plan_t *plan;
    sqlite3_stmt *prog; /* the program query, kept between reads */
    acc_db_t *db;
} get_class_t;

static acc_status_t read_prog(void *ctx, int lane, uint32_t cls, const void **data, size_t *len)
{
    get_class_t *g = ctx;
    int r;
    sqlite3_reset(g->prog);
    db_bind_text(g->prog, 1, g->hash);
    sqlite3_bind_int(g->prog, 2, lane);
    sqlite3_bind_int64(g->prog, 3, cls);
    r = db_step_row(g->db, g->prog, "loading a class program");
    if (r < 0)
        return (acc_status_t)r;
    if (r == 0)
        return acc_error_set(ACC_ERR_NOT_FOUND, "no program stored: rebuild the database");
    *data = sqlite3_column_blob(g->prog, 0);
    *len = (size_t)sqlite3_column_bytes(g->prog, 0);
    return ACC_OK;
}

/* The plan's head, its SHA-256 checked against the one stored beside it. */
static acc_status_t load_head(acc_db_t *db, const char *hash, const char *name, acc_chead_t **h)
{
    char sha[ACC_SHA256_HEX_LEN + 1], stored[ACC_SHA256_HEX_LEN + 1];
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    if ((s = db_prepare(db, "SELECT head, head_sha FROM plan_heads WHERE hash = ?1", &st)) !=
        ACC_OK)
        return s;
    db_bind_text(st, 1, hash);
    r = db_step_row(db, st, "loading a plan's head");
    if (r == 0)
        s = acc_error_set(ACC_ERR_NOT_FOUND, "%s: no class form stored", name);
    else if (r < 0)
        s = (acc_status_t)r;
    else if ((s = db_column_text(db, st, 1, stored, sizeof(stored), "head digest")) == ACC_OK &&
             (s = acc_sha256_hex(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0),
                                 sha)) == ACC_OK) {
        if (strcmp(sha, stored) != 0)
            s = acc_error_set(ACC_ERR_PARSE,
                              "%s: the stored head hashes to %.12s, not %.12s: it was altered; "
                              "rebuild the database with acc-compile --db",
                              name, sha, stored);
        else
            s = acc_chead_load(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0),
                               name, h);
    }
    sqlite3_finalize(st);
    return s;
}

/* A rank's view, or (rank -1) the whole plan: expanded from every class's program and proven
 * again, since nothing executable is taken from a file on trust. */
static acc_status_t get_class(acc_db_t *db, void *ctx)
{
    get_class_t *g = ctx;
    acc_chead_t *h = NULL;
    acc_cplan_t *cp = NULL;
    char name[128];
    acc_status_t s;

    acc_plan_destroy(g->plan);
    g->plan = NULL;
    g->db = db;
    snprintf(name, sizeof(name), "%s: plan %.12s", db->path, g->hash);
    if ((s = load_head(db, g->hash, name, &h)) != ACC_OK)
        return s;
    if ((s = db_prepare(db,
                        "SELECT program FROM plan_programs WHERE hash = ?1 AND lane = ?2 AND "
                        "cls = ?3",
                        &g->prog)) == ACC_OK) {
        if (g->rank >= 0)
            s = acc_cplan_rank_view(h, g->rank, read_prog, g, &g->plan);
        else if ((s = acc_cplan_load(h, read_prog, g, &cp)) == ACC_OK &&
                 (s = acc_cplan_expand(cp, &g->plan)) == ACC_OK &&
                 (s = acc_plan_verify(g->plan)) != ACC_OK)
            acc_error_prefix(s,
                             "%s: stored %s plan fails verification and is not used; rebuild "
                             "the database with acc-compile --db: ",
                             name, g->plan->algo);
    }
    sqlite3_finalize(g->prog);
    g->prog = NULL;
    acc_cplan_destroy(cp);
    acc_chead_destroy(h);
    return s;
}

static acc_status_t get_class_plan(acc_db_t *db, const char *hash, int rank, acc_plan_t **out)
{
    get_class_t g;
    acc_status_t s;

    *out = NULL;
    if ((s = db_check_hash(db, hash, "plan hash")) != ACC_OK)
        return s;
    memset(&g, 0, sizeof(g));
    g.hash = hash;
    g.rank = rank;
    if ((s = db_txn(db, 0, rank >= 0 ? "loading a rank's plan" : "loading a plan", get_class,
                    &g)) != ACC_OK) {
        acc_plan_destroy(g.plan);
        return s;
    }
    *out = g.plan;
    return ACC_OK;
}

acc_status_t acc_db_get_rank_plan(acc_db_t *db, const char *hash, int rank, acc_plan_t **out)
{
    if (rank < 0)
        return acc_error_set(ACC_ERR_INVALID, "%s: the view of rank %d", db->path, rank);
    return get_class_plan(db, hash, rank, out);
}

acc_status_t acc_db_get_whole_plan(acc_db_t *db, const char *hash, acc_plan_t **out)
{
    return get_class_plan(db, hash, -1, out);
}

/* Step 11's fill: the class form of every plan stored before it, from its YAML.  A plan whose
 * text no longer loads gets none; reading it whole still says why. */
acc_status_t db_fill_class_forms(acc_db_t *db)
{
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    if ((s = db_prepare(db, "SELECT hash, yaml FROM plans", &st)) != ACC_OK)
        return s;
    while ((r = db_step_row(db, st, "reading the plans")) > 0) {
        char hash[ACC_SHA256_HEX_LEN + 1];
        acc_plan_t *plan = NULL;
        acc_cplan_t *cp = NULL;
        acc_cplan_bin_t bin;
        if (db_column_text(db, st, 0, hash, sizeof(hash), "plan hash") != ACC_OK ||
            acc_plan_load_yaml((const char *)sqlite3_column_text(st, 1),
                               (size_t)sqlite3_column_bytes(st, 1), hash, &plan) != ACC_OK ||
            acc_plan_verify(plan) != ACC_OK) {
            acc_plan_destroy(plan);
            continue;
        }
        if ((s = acc_cplan_from_plan(plan, &cp)) == ACC_OK &&
            (s = acc_cplan_encode(cp, plan, &bin)) == ACC_OK) {
            s = db_put_class_rows(db, hash, cp, &bin);
            acc_cplan_bin_free(&bin);
        }
        acc_cplan_destroy(cp);
        acc_plan_destroy(plan);
        if (s != ACC_OK)
            break;
    }
    sqlite3_finalize(st);
    return s != ACC_OK ? s : r < 0 ? (acc_status_t)r : ACC_OK;
}
