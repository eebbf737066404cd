/* What acc-tune keeps: model profiles and networks by name. Tuning runs and optima, which refer
 * to these, are in db_tune_runs.c; the profiles jobs recorded of themselves in db_recorded.c. */
#include "db_internal.h"

#include "acc_yaml.h"

#include <string.h>

typedef struct {
    const char *name, *yaml, *origin;
    uint64_t param_count;
    char *yaml_out;
} profile_t;

static acc_status_t put_profile(acc_db_t *db, void *ctx)
{
    const profile_t *p = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;

    if ((s = db_prepare(db,
                        "INSERT INTO model_profiles (name, yaml, param_count, origin) VALUES (?1, "
                        "?2, ?3, ?4) ON CONFLICT (name) DO UPDATE SET yaml = excluded.yaml, "
                        "param_count = excluded.param_count, origin = excluded.origin WHERE yaml "
                        "IS NOT excluded.yaml OR param_count IS NOT excluded.param_count OR "
                        "origin IS NOT excluded.origin",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, p->name);
    db_bind_text(st, 2, p->yaml);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)p->param_count);
    db_bind_text(st, 4, p->origin);
    s = db_step_done(db, st, "storing a model profile");
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_put_profile(acc_db_t *db, const char *name, const char *yaml,
                                uint64_t param_count, const char *origin)
{
    char what[128];
    acc_yaml_doc_t *doc = NULL;
    profile_t p;
    acc_status_t s;

    if (!origin)
        origin = "";
    if ((s = db_check_field(db, name, ACC_DB_NAME_MAX, 1, "model profile name")) != ACC_OK ||
        (s = db_check_field(db, origin, ACC_DB_TEXT_MAX, 0, "model profile origin")) != ACC_OK)
        return s;
    if (!yaml)
        return acc_error_set(ACC_ERR_INVALID, "%s: model profile %s has no text", db->path, name);
    if (param_count > (uint64_t)INT64_MAX)
        return acc_error_set(ACC_ERR_RANGE,
                             "%s: model profile %s: parameter count %llu is too "
                             "large",
                             db->path, name, (unsigned long long)param_count);
    /* A profile that does not parse would only fail later, in acc-tune, far from its source. */
    snprintf(what, sizeof(what), "model profile %s", name);
    if ((s = acc_yaml_parse(yaml, strlen(yaml), what, &doc)) != ACC_OK)
        return acc_error_prefix(s, "%s: storing: ", db->path);
    acc_yaml_destroy(doc);
    p.name = name;
    p.yaml = yaml;
    p.origin = origin;
    p.param_count = param_count;
    snprintf(what, sizeof(what), "storing model profile %s", name);
    return db_txn(db, 1, what, put_profile, &p);
}

static acc_status_t get_profile(acc_db_t *db, void *ctx)
{
    profile_t *p = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    acc_mem_free(p->yaml_out);
    p->yaml_out = NULL;
    if ((s = db_prepare(db, "SELECT yaml, param_count FROM model_profiles WHERE name = ?1", &st)) !=
        ACC_OK)
        return s;
    db_bind_text(st, 1, p->name);
    r = db_step_row(db, st, "loading a model profile");
    if (r == 0) {
        s = acc_error_set(ACC_ERR_NOT_FOUND,
                          "%s: no model profile named %s; store it with "
                          "acc-tune first",
                          db->path, p->name);
    } else if (r < 0) {
        s = (acc_status_t)r;
    } else {
        const unsigned char *text = sqlite3_column_text(st, 0);
        sqlite3_int64 n = sqlite3_column_int64(st, 1);
        p->param_count = n < 0 ? 0 : (uint64_t)n;
        if (!(p->yaml_out = acc_mem_strdup(text ? (const char *)text : "")))
            s = acc_error_set(ACC_ERR_NOMEM, "out of memory loading a model profile");
    }
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_get_profile(acc_db_t *db, const char *name, char **yaml, uint64_t *param_count)
{
    profile_t p;
    acc_status_t s;

    *yaml = NULL;
    if ((s = db_check_field(db, name, ACC_DB_NAME_MAX, 1, "model profile name")) != ACC_OK)
        return s;
    memset(&p, 0, sizeof(p));
    p.name = name;
    if ((s = db_txn(db, 0, "loading a model profile", get_profile, &p)) != ACC_OK) {
        acc_mem_free(p.yaml_out);
        return s;
    }
    *yaml = p.yaml_out;
    if (param_count)
        *param_count = p.param_count;
    return ACC_OK;
}

typedef struct {
    acc_db_profile_t *items;
    size_t n, cap;
} list_profiles_t;

static acc_status_t list_profiles(acc_db_t *db, void *ctx)
{
    list_profiles_t *l = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    l->n = 0;
    if ((s = db_prepare(db, "SELECT name, param_count, origin FROM model_profiles ORDER BY name",
                        &st)) != ACC_OK)
        return s;
    while ((r = db_step_row(db, st, "listing model profiles")) == 1) {
        void *v = l->items;
        acc_db_profile_t *p;
        if (acc_array_reserve(&v, &l->cap, l->n + 1, sizeof(*l->items)) != ACC_OK) {
            s = acc_error_set(ACC_ERR_NOMEM, "out of memory listing model profiles");
            break;
        }
        l->items = v;
        p = &l->items[l->n];
        memset(p, 0, sizeof(*p));
        p->param_count = db_u64_from_sql(sqlite3_column_int64(st, 1));
        if ((s = db_column_text(db, st, 0, p->name, sizeof(p->name), "model profile name")) !=
                ACC_OK ||
            (s = db_column_text(db, st, 2, p->origin, sizeof(p->origin), "model profile origin")) !=
                ACC_OK)
            break;
        l->n++;
    }
    sqlite3_finalize(st);
    return s != ACC_OK ? s : r < 0 ? (acc_status_t)r : ACC_OK;
}

acc_status_t acc_db_list_profiles(acc_db_t *db, acc_db_profile_t **out, size_t *count)
{
    list_profiles_t l;
    acc_status_t s;

    memset(&l, 0, sizeof(l));
    *out = NULL;
    *count = 0;
    if ((s = db_txn(db, 0, "listing model profiles", list_profiles, &l)) != ACC_OK) {
        acc_mem_free(l.items);
        return s;
    }
    *out = l.items;
    *count = l.n;
    return ACC_OK;
}

static acc_status_t put_network(acc_db_t *db, void *ctx)
{
    const acc_db_network_t *n = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;

    if ((s = db_prepare(db,
                        "INSERT INTO networks (name, description, params) VALUES (?1, ?2, ?3) "
                        "ON CONFLICT (name) DO UPDATE SET description = excluded.description, "
                        "params = excluded.params WHERE description IS NOT excluded.description "
                        "OR params IS NOT excluded.params",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, n->name);
    db_bind_text(st, 2, n->description);
    db_bind_text(st, 3, n->params);
    s = db_step_done(db, st, "storing a network");
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_put_network(acc_db_t *db, const acc_db_network_t *net)
{
    char what[128];
    acc_status_t s;

    if ((s = db_check_field(db, net->name, sizeof(net->name), 1, "network name")) != ACC_OK ||
        (s = db_check_field(db, net->description, sizeof(net->description), 0,
                            "network description")) != ACC_OK ||
        (s = db_check_field(db, net->params, sizeof(net->params), 0, "network parameters")) !=
            ACC_OK)
        return s;
    snprintf(what, sizeof(what), "storing network %s", net->name);
    return db_txn(db, 1, what, put_network, (void *)net);
}

typedef struct {
    const char *name;
    acc_db_network_t *out;
} get_network_t;

static acc_status_t get_network(acc_db_t *db, void *ctx)
{
    get_network_t *g = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    if ((s = db_prepare(db, "SELECT description, params FROM networks WHERE name = ?1", &st)) !=
        ACC_OK)
        return s;
    db_bind_text(st, 1, g->name);
    r = db_step_row(db, st, "loading a network");
    if (r == 0)
        s = acc_error_set(ACC_ERR_NOT_FOUND, "%s: no network named %s", db->path, g->name);
    else if (r < 0)
        s = (acc_status_t)r;
    else if ((s = db_column_text(db, st, 0, g->out->description, sizeof(g->out->description),
                                 "network description")) == ACC_OK)
        s = db_column_text(db, st, 1, g->out->params, sizeof(g->out->params), "network parameters");
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_get_network(acc_db_t *db, const char *name, acc_db_network_t *out)
{
    get_network_t g;
    acc_status_t s;

    memset(out, 0, sizeof(*out));
    if ((s = db_check_field(db, name, sizeof(out->name), 1, "network name")) != ACC_OK)
        return s;
    g.name = name;
    g.out = out;
    if ((s = db_txn(db, 0, "loading a network", get_network, &g)) != ACC_OK) {
        memset(out, 0, sizeof(*out));
        return s;
    }
    snprintf(out->name, sizeof(out->name), "%s", name);
    return ACC_OK;
}
