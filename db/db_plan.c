/* Plans, stored as their YAML text under its SHA-256, and verified again on every load. */
#include "db_internal.h"

#include <string.h>

typedef struct {
    const acc_plan_t *plan;
    const char *hash;
    const char *yaml;
    const acc_cplan_t *cp; /* its class form (one class per rank), which ranks read */
    const acc_cplan_bin_t *bin;
} put_plan_t;

static acc_status_t put_plan(acc_db_t *db, void *ctx)
{
    const put_plan_t *p = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;

    /* The key is the hash of the text, so a stored row with this key already holds this plan. */
    if ((s = db_prepare(db,
                        "INSERT INTO plans (hash, coll, algo, params, nranks, yaml) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (hash) DO NOTHING",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, p->hash);
    db_bind_text(st, 2, acc_coll_name(p->plan->coll));
    db_bind_text(st, 3, p->plan->algo);
    db_bind_text(st, 4, p->plan->params);
    sqlite3_bind_int(st, 5, p->plan->nranks);
    db_bind_text(st, 6, p->yaml);
    s = db_step_done(db, st, "storing a plan");
    sqlite3_finalize(st);
    return s == ACC_OK ? db_put_class_rows(db, p->hash, p->cp, p->bin) : s;
}

acc_status_t acc_db_put_plan(acc_db_t *db, const acc_plan_t *plan,
                             char hash_out[ACC_SHA256_HEX_LEN + 1])
{
    char hash[ACC_SHA256_HEX_LEN + 1], what[96], sh[16];
    acc_buf_t yaml;
    acc_cplan_t *cp = NULL;
    acc_cplan_bin_t bin;
    put_plan_t p;
    acc_status_t s;

    acc_buf_init(&yaml);
    memset(&bin, 0, sizeof(bin));
    if ((s = acc_plan_dump_yaml_hash(plan, &yaml, hash)) != ACC_OK ||
        (s = acc_cplan_from_plan(plan, &cp)) != ACC_OK ||
        (s = acc_cplan_encode(cp, plan, &bin)) != ACC_OK) {
        acc_error_prefix(s, "%s: storing a plan: ", db->path);
        goto out;
    }
    p.plan = plan;
    p.hash = hash;
    p.yaml = yaml.data;
    p.cp = cp;
    p.bin = &bin;
    snprintf(what, sizeof(what), "storing %s plan %s", plan->algo, db_short(hash, sh));
    if ((s = db_txn(db, 1, what, put_plan, &p)) != ACC_OK)
        goto out;
    if (hash_out)
        memcpy(hash_out, hash, sizeof(hash));
out:
    acc_buf_free(&yaml);
    acc_cplan_bin_free(&bin);
    acc_cplan_destroy(cp);
    return s;
}

typedef struct {
    const char *hash;
    char *yaml;
    size_t len;
    char coll[32];
    int nranks;
} get_plan_t;

static acc_status_t get_plan(acc_db_t *db, void *ctx)
{
    get_plan_t *g = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    acc_mem_free(g->yaml);
    g->yaml = NULL;
    if ((s = db_prepare(db, "SELECT yaml, coll, nranks FROM plans WHERE hash = ?1", &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, g->hash);
    r = db_step_row(db, st, "loading a plan");
    if (r == 0) {
        sqlite3_finalize(st);
        st = NULL;
        /* A table built by class (above 4,096 ranks) stores its plans in class form alone. */
        if ((s = db_prepare(db, "SELECT 1 FROM plan_heads WHERE hash = ?1", &st)) != ACC_OK)
            return s;
        db_bind_text(st, 1, g->hash);
        r = db_step_row(db, st, "loading a plan");
        s = r < 0 ? (acc_status_t)r
            : r == 0
                ? acc_error_set(ACC_ERR_NOT_FOUND, "%s: no plan with hash %s", db->path, g->hash)
                : acc_error_set(ACC_ERR_NOT_FOUND,
                                "%s: plan %s is stored in class form alone, without its "
                                "text (a table built by class, above 4,096 ranks): a rank "
                                "reads its own part of it (acc_db_get_rank_plan)",
                                db->path, g->hash);
    } else if (r < 0) {
        s = (acc_status_t)r;
    } else {
        const char *text = (const char *)sqlite3_column_text(st, 0);
        g->len = (size_t)sqlite3_column_bytes(st, 0);
        g->nranks = sqlite3_column_int(st, 2);
        /* Copied by length: a tampered text may hold NUL bytes, and the hash covers them. */
        if (!(g->yaml = acc_mem_alloc(g->len + 1))) {
            s = acc_error_set(ACC_ERR_NOMEM, "out of memory loading a plan");
        } else {
            if (g->len)
                memcpy(g->yaml, text, g->len);
            g->yaml[g->len] = '\0';
            s = db_column_text(db, st, 1, g->coll, sizeof(g->coll), "plan collective");
        }
    }
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_get_plan(acc_db_t *db, const char *hash, acc_plan_t **out)
{
    char actual[ACC_SHA256_HEX_LEN + 1], label[4200];
    get_plan_t g;
    acc_plan_t *plan = NULL;
    acc_status_t s;

    *out = NULL;
    if ((s = db_check_hash(db, hash, "plan hash")) != ACC_OK)
        return s;
    memset(&g, 0, sizeof(g));
    g.hash = hash;
    if ((s = db_txn(db, 0, "loading a plan", get_plan, &g)) != ACC_OK)
        goto out;
    if ((s = acc_sha256_hex(g.yaml, g.len, actual)) != ACC_OK)
        goto out;
    if (strcmp(actual, hash) != 0) {
        s = acc_error_set(ACC_ERR_PARSE,
                          "%s: the text of stored plan %s hashes to %s: it was altered; the plan "
                          "is not used: rebuild the database with acc-compile --db",
                          db->path, hash, actual);
        goto out;
    }
    snprintf(label, sizeof(label), "%s: plan %.12s", db->path, hash);
    if ((s = acc_plan_load_yaml(g.yaml, g.len, label, &plan)) != ACC_OK)
        goto out;
    if (strcmp(acc_coll_name(plan->coll), g.coll) != 0 || plan->nranks != g.nranks) {
        s = acc_error_set(ACC_ERR_PARSE,
                          "%s: stored plan %s is a %s plan for %d ranks but is filed as %s for %d "
                          "ranks; the file was altered: rebuild it with acc-compile --db",
                          db->path, hash, acc_coll_name(plan->coll), plan->nranks, g.coll,
                          g.nranks);
        goto out;
    }
    /* Nothing executable is taken from a file on trust. */
    if ((s = acc_plan_verify(plan)) != ACC_OK) {
        acc_error_prefix(s,
                         "%s: stored %s plan %.12s (%s, %d ranks) fails verification and is "
                         "not used; rebuild the database with acc-compile --db: ",
                         db->path, plan->algo, hash, acc_coll_name(plan->coll), plan->nranks);
        goto out;
    }
    *out = plan;
    plan = NULL;
out:
    acc_plan_destroy(plan);
    acc_mem_free(g.yaml);
    return s;
}
