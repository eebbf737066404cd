/* Where a model's profile is found: a file, a job's recording in the database, or the shipped
 * set (acc_tune.h, "where a model's profile is found"). */
#include "acc_topo.h"
#include "acc_tune.h"
#include "profile_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static int is_file(const char *model)
{
    return strchr(model, '/') || strstr(model, ".yaml");
}

/* The newest recording of name for sm (sm 0: for any generation); 0 when there is none. */
static int pick_recorded(const acc_db_recorded_t *recs, size_t n, int sm, size_t *at)
{
    int found = 0;
    size_t i;
    for (i = 0; i < n; i++)
        if ((!sm || recs[i].sm == sm) && (!found || recs[i].recorded_us > recs[*at].recorded_us)) {
            *at = i;
            found = 1;
        }
    return found;
}

/* Load the recording of rec's name and sm from db. */
static acc_status_t load_recorded(acc_db_t *db, const acc_db_recorded_t *rec, acc_profile_t **out)
{
    acc_db_recorded_t again;
    char *yaml = NULL, where[256];
    acc_status_t st;

    if ((st = acc_db_get_recorded(db, rec->name, rec->sm, &again, &yaml)) != ACC_OK)
        return st;
    /* Messages then read "DB: recorded profile NAME (sm_90):LINE: ...". */
    snprintf(where, sizeof(where), "%s: recorded profile %s (sm_%d)", acc_db_path(db), rec->name,
             rec->sm);
    st = acc_profile_load_yaml(yaml, strlen(yaml), where, out);
    acc_mem_free(yaml);
    return st;
}

/* The names of the recordings in db, for a message: "a (sm_90), b (sm_80)" or "none". */
static void recorded_names(acc_db_t *db, acc_buf_t *b)
{
    acc_db_recorded_t *all = NULL;
    size_t n = 0, i;
    if (acc_db_list_recorded(db, NULL, &all, &n) == ACC_OK)
        for (i = 0; i < n; i++)
            acc_buf_printf(b, "%s%s (sm_%d)", i ? ", " : "", all[i].name, all[i].sm);
    if (!n)
        acc_buf_puts(b, "none");
    acc_mem_free(all);
}

acc_status_t acc_profile_find(const char *model, int sm, acc_db_t *db, acc_profile_t **out,
                              acc_profile_origin_t *origin)
{
    acc_profile_origin_t o;
    acc_db_recorded_t *recs = NULL;
    size_t nrecs = 0, at = 0;
    acc_status_t st;

    *out = NULL;
    memset(&o, 0, sizeof(o));
    if (!model || !model[0])
        return acc_error_set(ACC_ERR_INVALID, "no model given: name a shipped profile "
                                              "(resnet50, ...), a recorded one or a profile file");
    if (is_file(model)) {
        o.kind = ACC_PROFILE_FILE;
        snprintf(o.path, sizeof(o.path), "%s", model);
        st = acc_profile_load_file(model, out);
        goto out;
    }
    /* A name that cannot be a profile's is no database key either: the shipped look-up says so. */
    if (db && profile_name_ok(model) &&
        (st = acc_db_list_recorded(db, model, &recs, &nrecs)) != ACC_OK)
        goto out;
    if (sm && pick_recorded(recs, nrecs, sm, &at)) {
        o.kind = ACC_PROFILE_RECORDED;
        o.recorded = recs[at];
        st = load_recorded(db, &recs[at], out);
        goto out;
    }
    o.kind = ACC_PROFILE_SHIPPED;
    snprintf(o.path, sizeof(o.path), "%s/%s.yaml", acc_profile_builtin_dir(), model);
    st = acc_profile_load_builtin(model, out);
    if (st != ACC_ERR_NOT_FOUND)
        goto out;
    /* Not shipped: a recording for another generation (whose compute entries then say which),
     * else a message naming both places. */
    if (pick_recorded(recs, nrecs, 0, &at)) {
        o.kind = ACC_PROFILE_RECORDED;
        o.recorded = recs[at];
        st = load_recorded(db, &recs[at], out);
    } else if (db) {
        acc_buf_t b;
        acc_buf_init(&b);
        acc_buf_printf(&b, "%s; nor recorded in %s (recorded: ", acc_error_message(),
                       acc_db_path(db));
        recorded_names(db, &b);
        acc_buf_puts(&b, "): record it with ACC_RECORD=1 in a job");
        st = acc_error_set(ACC_ERR_NOT_FOUND, "%s", b.data ? b.data : "");
        acc_buf_free(&b);
    }
out:
    acc_mem_free(recs);
    if (st == ACC_OK && origin)
        *origin = o;
    return st;
}

acc_status_t acc_profile_put_recorded(acc_db_t *db, const acc_profile_t *p,
                                      const acc_db_recorded_t *rec)
{
    acc_db_recorded_t r = *rec;
    acc_buf_t yaml;
    acc_status_t st;

    if (strlen(p->name) >= sizeof(r.name))
        return acc_error_set(ACC_ERR_RANGE,
                             "profile '%s': a recorded profile's name has at most %d characters",
                             p->name, (int)sizeof(r.name) - 1);
    snprintf(r.name, sizeof(r.name), "%s", p->name);
    r.param_count = p->params;
    acc_buf_init(&yaml);
    if ((st = acc_profile_dump_yaml(p, &yaml)) == ACC_OK && (st = acc_buf_status(&yaml)) == ACC_OK)
        st = acc_db_put_recorded(db, &r, yaml.data);
    acc_buf_free(&yaml);
    return st;
}

int acc_profile_topo_sm(const acc_topo_t *topo)
{
    int v = topo ? acc_topo_find(topo, ACC_VTX_GPU, 0) : -1;
    return v >= 0 ? acc_topo_vertex(topo, v)->sm : 0;
}

void acc_profile_origin_text(const acc_profile_origin_t *o, char *buf, size_t n)
{
    const acc_db_recorded_t *r = &o->recorded;
    char date[64] = "?", batch[32] = "batch not given";
    struct tm tm;
    time_t secs;

    switch (o->kind) {
    case ACC_PROFILE_SHIPPED:
        snprintf(buf, n, "shipped (%s)", o->path);
        return;
    case ACC_PROFILE_FILE:
        snprintf(buf, n, "file %s", o->path);
        return;
    case ACC_PROFILE_RECORDED:
        break;
    default:
        snprintf(buf, n, "%s", o->path);
        return;
    }
    secs = (time_t)(r->recorded_us / 1000000);
    if (gmtime_r(&secs, &tm))
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm);
    if (r->batch)
        snprintf(batch, sizeof(batch), "batch %d", r->batch);
    snprintf(buf, n, "recorded on %s/%s at %s (%s backend, %d ranks, %s, median of %d iterations)",
             r->host[0] ? r->host : "?", r->device[0] ? r->device : "?", date, r->backend, r->ranks,
             batch, r->iterations);
}
