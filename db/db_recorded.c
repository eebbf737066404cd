/* Profiles training jobs recorded of themselves (the fusion engine's ACC_RECORD): one per name
 * and GPU generation, with where, when and how they were recorded. */
#include "db_internal.h"

#include "acc_yaml.h"

#include <string.h>

/* Every column but the text, in the order read_recorded() reads them. */
#define RECORDED_COLUMNS                                                                           \
    "name, sm, device, host, backend, ranks, batch, iterations, recorded_us, acc_version, "        \
    "param_count"

static acc_status_t check_recorded(const acc_db_t *db, const acc_db_recorded_t *r)
{
    acc_status_t s;
    if ((s = db_check_field(db, r->name, sizeof(r->name), 1, "recorded profile name")) != ACC_OK ||
        (s = db_check_field(db, r->device, sizeof(r->device), 0, "recorded profile device")) !=
            ACC_OK ||
        (s = db_check_field(db, r->host, sizeof(r->host), 0, "recorded profile host")) != ACC_OK ||
        (s = db_check_field(db, r->backend, sizeof(r->backend), 0, "recorded profile backend")) !=
            ACC_OK ||
        (s = db_check_field(db, r->acc_version, sizeof(r->acc_version), 0,
                            "recorded profile acc version")) != ACC_OK)
        return s;
    if (r->sm < 0 || r->ranks < 1 || r->batch < 0 || r->iterations < 1 || r->recorded_us < 0 ||
        r->param_count > (uint64_t)INT64_MAX)
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: recorded profile %s: sm %d, ranks %d, batch %d, iterations %d "
                             "and time %lld must not be negative, ranks and iterations at least 1",
                             db->path, r->name, r->sm, r->ranks, r->batch, r->iterations,
                             (long long)r->recorded_us);
    return ACC_OK;
}

typedef struct {
    const acc_db_recorded_t *rec;
    const char *yaml;
} put_t;

static acc_status_t put_recorded(acc_db_t *db, void *ctx)
{
    const put_t *p = ctx;
    const acc_db_recorded_t *r = p->rec;
    sqlite3_stmt *st = NULL;
    acc_status_t s;

    if ((s = db_prepare(db,
                        "INSERT INTO recorded_profiles (" RECORDED_COLUMNS ", yaml) VALUES (?1, "
                        "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT (name, sm) DO "
                        "UPDATE SET device = excluded.device, host = excluded.host, backend = "
                        "excluded.backend, ranks = excluded.ranks, batch = excluded.batch, "
                        "iterations = excluded.iterations, recorded_us = excluded.recorded_us, "
                        "acc_version = excluded.acc_version, param_count = excluded.param_count, "
                        "yaml = excluded.yaml",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, r->name);
    sqlite3_bind_int(st, 2, r->sm);
    db_bind_text(st, 3, r->device);
    db_bind_text(st, 4, r->host);
    db_bind_text(st, 5, r->backend);
    sqlite3_bind_int(st, 6, r->ranks);
    sqlite3_bind_int(st, 7, r->batch);
    sqlite3_bind_int(st, 8, r->iterations);
    sqlite3_bind_int64(st, 9, r->recorded_us);
    db_bind_text(st, 10, r->acc_version);
    sqlite3_bind_int64(st, 11, (sqlite3_int64)r->param_count);
    db_bind_text(st, 12, p->yaml);
    s = db_step_done(db, st, "storing a recorded profile");
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_put_recorded(acc_db_t *db, const acc_db_recorded_t *rec, const char *yaml)
{
    acc_db_recorded_t r = *rec;
    acc_yaml_doc_t *doc = NULL;
    char what[128];
    put_t p;
    acc_status_t s;

    if ((s = check_recorded(db, rec)) != ACC_OK)
        return s;
    if (!yaml)
        return acc_error_set(ACC_ERR_INVALID, "%s: recorded profile %s has no text", db->path,
                             rec->name);
    /* A text that does not parse would only fail later, in acc-tune, far from the job. */
    snprintf(what, sizeof(what), "recorded profile %s", rec->name);
    if ((s = acc_yaml_parse(yaml, strlen(yaml), what, &doc)) != ACC_OK)
        return acc_error_prefix(s, "%s: storing: ", db->path);
    acc_yaml_destroy(doc);
    if (!r.acc_version[0])
        snprintf(r.acc_version, sizeof(r.acc_version), "%s", ACC_VERSION_STRING);
    if (r.recorded_us == 0)
        r.recorded_us = db_now_us();
    p.rec = &r;
    p.yaml = yaml;
    snprintf(what, sizeof(what), "storing the recorded profile %s (sm_%d)", rec->name, rec->sm);
    return db_txn(db, 1, what, put_recorded, &p);
}

static acc_status_t read_recorded(acc_db_t *db, sqlite3_stmt *st, acc_db_recorded_t *r)
{
    acc_status_t s;
    memset(r, 0, sizeof(*r));
    r->sm = sqlite3_column_int(st, 1);
    r->ranks = sqlite3_column_int(st, 5);
    r->batch = sqlite3_column_int(st, 6);
    r->iterations = sqlite3_column_int(st, 7);
    r->recorded_us = sqlite3_column_int64(st, 8);
    r->param_count = db_u64_from_sql(sqlite3_column_int64(st, 10));
    if ((s = db_column_text(db, st, 0, r->name, sizeof(r->name), "recorded profile name")) !=
            ACC_OK ||
        (s = db_column_text(db, st, 2, r->device, sizeof(r->device), "recorded profile device")) !=
            ACC_OK ||
        (s = db_column_text(db, st, 3, r->host, sizeof(r->host), "recorded profile host")) !=
            ACC_OK ||
        (s = db_column_text(db, st, 4, r->backend, sizeof(r->backend),
                            "recorded profile backend")) != ACC_OK ||
        (s = db_column_text(db, st, 9, r->acc_version, sizeof(r->acc_version),
                            "recorded profile acc version")) != ACC_OK)
        return s;
    return ACC_OK;
}

typedef struct {
    const char *name;
    int sm;
    acc_db_recorded_t *out;
    char *yaml; /* the text, when want_yaml */
    int want_yaml;
} get_t;

static acc_status_t get_recorded(acc_db_t *db, void *ctx)
{
    get_t *g = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    acc_mem_free(g->yaml);
    g->yaml = NULL;
    if ((s = db_prepare(db,
                        "SELECT " RECORDED_COLUMNS ", yaml FROM recorded_profiles WHERE name = ?1 "
                        "AND sm = ?2",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, g->name);
    sqlite3_bind_int(st, 2, g->sm);
    r = db_step_row(db, st, "loading a recorded profile");
    if (r == 0)
        s = acc_error_set(ACC_ERR_NOT_FOUND,
                          "%s: no profile %s recorded for sm_%d; record it in a job with "
                          "ACC_RECORD=1",
                          db->path, g->name, g->sm);
    else if (r < 0)
        s = (acc_status_t)r;
    else if ((s = read_recorded(db, st, g->out)) == ACC_OK && g->want_yaml) {
        const unsigned char *text = sqlite3_column_text(st, 11);
        if (!(g->yaml = acc_mem_strdup(text ? (const char *)text : "")))
            s = acc_error_set(ACC_ERR_NOMEM, "out of memory loading a recorded profile");
    }
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_get_recorded(acc_db_t *db, const char *name, int sm, acc_db_recorded_t *out,
                                 char **yaml)
{
    get_t g;
    acc_status_t s;

    memset(out, 0, sizeof(*out));
    if (yaml)
        *yaml = NULL;
    if ((s = db_check_field(db, name, ACC_DB_NAME_MAX, 1, "recorded profile name")) != ACC_OK)
        return s;
    memset(&g, 0, sizeof(g));
    g.name = name;
    g.sm = sm;
    g.out = out;
    g.want_yaml = yaml != NULL;
    if ((s = db_txn(db, 0, "loading a recorded profile", get_recorded, &g)) != ACC_OK) {
        acc_mem_free(g.yaml);
        memset(out, 0, sizeof(*out));
        return s;
    }
    if (yaml)
        *yaml = g.yaml;
    return ACC_OK;
}

typedef struct {
    const char *name;
    acc_db_recorded_t *items;
    size_t n, cap;
} list_t;

static acc_status_t list_recorded(acc_db_t *db, void *ctx)
{
    list_t *l = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    l->n = 0;
    if ((s = db_prepare(db,
                        "SELECT " RECORDED_COLUMNS " FROM recorded_profiles WHERE ?1 IS NULL OR "
                        "name = ?1 ORDER BY name, sm",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, l->name);
    while ((r = db_step_row(db, st, "listing recorded profiles")) == 1) {
        void *v = l->items;
        if (acc_array_reserve(&v, &l->cap, l->n + 1, sizeof(*l->items)) != ACC_OK) {
            s = acc_error_set(ACC_ERR_NOMEM, "out of memory listing recorded profiles");
            break;
        }
        l->items = v;
        if ((s = read_recorded(db, st, &l->items[l->n])) != ACC_OK)
            break;
        l->n++;
    }
    sqlite3_finalize(st);
    return s != ACC_OK ? s : r < 0 ? (acc_status_t)r : ACC_OK;
}

acc_status_t acc_db_list_recorded(acc_db_t *db, const char *name, acc_db_recorded_t **out,
                                  size_t *count)
{
    list_t l;
    acc_status_t s;

    *out = NULL;
    *count = 0;
    memset(&l, 0, sizeof(l));
    l.name = name;
    if ((s = db_txn(db, 0, "listing recorded profiles", list_recorded, &l)) != ACC_OK) {
        acc_mem_free(l.items);
        return s;
    }
    *out = l.items;
    *count = l.n;
    return ACC_OK;
}
