/*
 * What the database keeps of tuning: the profile and topology a key refers to, one tuning run
 * per evaluation, the optimum of each key, optima of similar keys as warm starts, and runs read
 * back as report points.  Every call goes through acc_db.h; the SQL is db/'s.
 */
#include "acc_tune.h"

#include <stdio.h>
#include <string.h>

/* The database keeps scores in microseconds; the tuner speaks milliseconds. */
#define US_PER_MS 1000.0

acc_status_t acc_tune_store_prepare(acc_db_t *db, const acc_tune_target_t *t)
{
    char origin[ACC_DB_TEXT_MAX];
    acc_buf_t yaml;
    acc_status_t st;

    acc_buf_init(&yaml);
    acc_profile_origin_text(&t->origin, origin, sizeof(origin));
    if ((st = acc_profile_dump_yaml(t->profile, &yaml)) == ACC_OK &&
        (st = acc_buf_status(&yaml)) == ACC_OK)
        st = acc_db_put_profile(db, t->profile->name, yaml.data, t->profile->params, origin);
    acc_buf_free(&yaml);
    if (st == ACC_OK)
        st = acc_db_put_topology(db, t->topo, NULL);
    return st;
}

/* How an evaluation was scored: the simulator, at the fidelity given when below 1. */
static void method_text(double fidelity, char *out, size_t n)
{
    if (fidelity >= 1.0)
        snprintf(out, n, "itersim");
    else
        snprintf(out, n, "itersim@%.6g", fidelity);
}

/* The fidelity method_text wrote; -1 for a method that is not the simulator's. */
static double method_fidelity(const char *method)
{
    const char *at = strchr(method, '@');
    double f;
    if (strncmp(method, "itersim", 7) != 0)
        return -1;
    if (!at)
        return method[7] ? -1 : 1.0;
    if (at != method + 7)
        return -1;
    return acc_parse_double(at + 1, &f) == ACC_OK && f > 0 && f <= 1 ? f : -1;
}

/* A key into a record's key fields, which have the sizes of acc_tune_key_t's in runs and optima. */
static void key_fields(const acc_tune_key_t *key, char model[ACC_DB_NAME_MAX],
                       char fingerprint[ACC_SHA256_HEX_LEN + 1], char network[ACC_DB_NAME_MAX])
{
    memcpy(model, key->model, sizeof(key->model));
    memcpy(fingerprint, key->fingerprint, sizeof(key->fingerprint));
    memcpy(network, key->network, sizeof(key->network));
}

static acc_status_t run_add(acc_db_t *db, const acc_tune_key_t *key, const acc_tune_config_t *c,
                            const char *method, double iteration_ms, const char *strategy,
                            double seconds, int64_t *id)
{
    acc_db_tuning_run_t run;
    acc_status_t st;

    memset(&run, 0, sizeof(run));
    key_fields(key, run.model, run.topo_fingerprint, run.network);
    if ((st = acc_tune_config_format(c, run.params, sizeof(run.params))) != ACC_OK)
        return st;
    run.score = iteration_ms * US_PER_MS;
    snprintf(run.method, sizeof(run.method), "%s", method);
    snprintf(run.strategy, sizeof(run.strategy), "%s", strategy);
    run.seconds = seconds;
    return acc_db_add_tuning_run(db, &run, id);
}

acc_status_t acc_tune_run_add(acc_db_t *db, const acc_tune_key_t *key, const acc_tune_config_t *c,
                              double fidelity, double iteration_ms, const char *strategy,
                              double seconds, int64_t *id)
{
    char method[32];
    method_text(fidelity, method, sizeof(method));
    return run_add(db, key, c, method, iteration_ms, strategy, seconds, id);
}

acc_status_t acc_tune_run_add_measured(acc_db_t *db, const acc_tune_key_t *key,
                                       const acc_tune_config_t *c, double iteration_ms,
                                       const char *strategy, double seconds, int64_t *id)
{
    return run_add(db, key, c, ACC_TUNE_MEASURED, iteration_ms, strategy, seconds, id);
}

acc_status_t acc_tune_optimum_put(acc_db_t *db, const acc_tune_key_t *key,
                                  const acc_tune_optimum_t *o)
{
    acc_db_optimum_t opt;
    acc_status_t st;

    memset(&opt, 0, sizeof(opt));
    key_fields(key, opt.model, opt.topo_fingerprint, opt.network);
    snprintf(opt.method, sizeof(opt.method), "%s", o->measured ? ACC_TUNE_MEASURED : "itersim");
    opt.fusion_bytes = o->config.fusion_bytes;
    opt.streams = o->config.streams;
    snprintf(opt.algo, sizeof(opt.algo), "%s", acc_tune_algo_name(o->config.algo));
    if ((st = acc_tune_config_format(&o->config, opt.params, sizeof(opt.params))) != ACC_OK)
        return st;
    opt.score = o->iteration_ms * US_PER_MS;
    opt.run_id = o->run_id;
    return acc_db_put_optimum(db, &opt);
}

/* A stored optimum as a configuration: its text form, or, for one written by something other
 * than acc-tune, its typed fields under acc's policy.  ACC_ERR_PARSE when neither is usable. */
static acc_status_t optimum_config(const acc_db_optimum_t *o, acc_tune_config_t *c)
{
    acc_tune_algo_t algo;
    if (acc_tune_config_parse(o->params, c) == ACC_OK)
        return ACC_OK;
    if (!o->fusion_bytes || o->streams < 1 || o->streams > ACC_TUNE_MAX_STREAMS ||
        acc_tune_algo_parse(o->algo, &algo) != ACC_OK)
        return acc_error_set(ACC_ERR_PARSE,
                             "the optimum of %s on %.12s (network '%s') is unusable: "
                             "configuration \"%s\", fusion %llu, %d streams, algo '%s'; tune "
                             "again to replace it",
                             o->model, o->topo_fingerprint, o->network, o->params,
                             (unsigned long long)o->fusion_bytes, o->streams, o->algo);
    acc_tune_config_acc(c, o->fusion_bytes, o->streams, algo);
    return ACC_OK;
}

acc_status_t acc_tune_optimum_get(acc_db_t *db, const acc_tune_key_t *key, acc_tune_optimum_t *out)
{
    acc_db_optimum_t opt;
    acc_status_t st;

    memset(out, 0, sizeof(*out));
    /* A measurement on the machine outranks a simulation of it. */
    st =
        acc_db_get_optimum(db, key->model, key->fingerprint, key->network, ACC_TUNE_MEASURED, &opt);
    out->measured = st == ACC_OK;
    if (st == ACC_ERR_NOT_FOUND)
        st = acc_db_get_optimum(db, key->model, key->fingerprint, key->network, "itersim", &opt);
    if (st == ACC_ERR_NOT_FOUND) {
        acc_error_set(ACC_NO_DATA,
                      "no optimum, simulated or measured, for %s on topology %.12s%s%s in %s",
                      key->model, key->fingerprint, key->network[0] ? " over " : "", key->network,
                      acc_db_path(db));
        return ACC_NO_DATA;
    }
    if (st != ACC_OK || (st = optimum_config(&opt, &out->config)) != ACC_OK) {
        memset(out, 0, sizeof(*out));
        return st;
    }
    out->iteration_ms = opt.score / US_PER_MS;
    out->run_id = opt.run_id;
    return ACC_OK;
}

/* How close an optimum's key is to `key`: 4 the same key, 3 the same model and topology, 2 the
 * same model, 1 the same topology, 0 not similar. */
static int similarity(const acc_db_optimum_t *o, const acc_tune_key_t *key)
{
    int model = strcmp(o->model, key->model) == 0;
    int topo = strcmp(o->topo_fingerprint, key->fingerprint) == 0;
    int net = strcmp(o->network, key->network) == 0;
    if (model && topo && net)
        return 4;
    if (model && topo)
        return 3;
    if (model)
        return 2;
    return topo ? 1 : 0;
}

acc_status_t acc_tune_warm_starts(acc_db_t *db, const acc_tune_key_t *key, acc_tune_config_t *out,
                                  size_t max, size_t *n)
{
    acc_db_optimum_t *opt = NULL;
    size_t count = 0, i;
    acc_status_t st;
    int level;

    *n = 0;
    if ((st = acc_db_list_optima(db, &opt, &count)) != ACC_OK)
        return st;
    /* An unusable optimum is no reason to refuse tuning: it is no starting point, that is all.
     * Within a level, what was measured comes before what was simulated. */
    for (level = 9; level >= 2 && *n < max; level--)
        for (i = 0; i < count && *n < max; i++)
            if (2 * similarity(&opt[i], key) + !strcmp(opt[i].method, ACC_TUNE_MEASURED) == level &&
                optimum_config(&opt[i], &out[*n]) == ACC_OK)
                (*n)++;
    acc_mem_free(opt);
    return ACC_OK;
}

static acc_status_t push(acc_tune_point_t **v, size_t *n, size_t *cap, const acc_tune_point_t *p)
{
    void *a = *v;
    if (acc_array_reserve(&a, cap, *n + 1, sizeof(**v)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory reading tuning runs");
    *v = a;
    (*v)[(*n)++] = *p;
    return ACC_OK;
}

/* A run as a point; 0 when it is not one of the simulator's (nothing to draw it with). */
static int run_point(const acc_db_tuning_run_t *run, int baseline, acc_tune_point_t *p)
{
    memset(p, 0, sizeof(*p));
    p->fidelity = method_fidelity(run->method);
    if (p->fidelity < 0 || acc_tune_config_parse(run->params, &p->config) != ACC_OK)
        return 0;
    p->iteration_ms = run->score / US_PER_MS;
    snprintf(p->label, sizeof(p->label), "%s",
             baseline ? acc_tune_baseline_label(p->config.policy) : run->strategy);
    return 1;
}

acc_status_t acc_tune_report_points(acc_db_t *db, const acc_tune_key_t *key,
                                    acc_tune_point_t **points, size_t *npoints,
                                    acc_tune_point_t **baselines, size_t *nbaselines)
{
    static const acc_fusion_policy_t order[] = {ACC_FUSION_DDP, ACC_FUSION_HOROVOD,
                                                ACC_FUSION_NONE};
    acc_db_tuning_run_t *runs = NULL;
    acc_tune_point_t base_of[ACC_FUSION_POLICY_COUNT];
    size_t count = 0, i, pcap = 0, bcap = 0;
    acc_status_t st;
    int seen[ACC_FUSION_POLICY_COUNT] = {0};

    *points = *baselines = NULL;
    *npoints = *nbaselines = 0;
    if ((st = acc_db_list_tuning_runs(db, key->model, key->fingerprint, key->network, &runs,
                                      &count)) != ACC_OK)
        return st;
    /* Runs come best first: of several runs of one baseline the best is kept. */
    for (i = 0; i < count && st == ACC_OK; i++) {
        acc_tune_point_t p;
        int base = strcmp(runs[i].strategy, ACC_TUNE_RUN_BASELINE) == 0;
        if (!run_point(&runs[i], base, &p))
            continue;
        if (!base) {
            st = push(points, npoints, &pcap, &p);
        } else if (!seen[p.config.policy]) {
            seen[p.config.policy] = 1;
            base_of[p.config.policy] = p;
        }
    }
    /* Baselines in a fixed order, whatever their scores. */
    for (i = 0; i < sizeof(order) / sizeof(order[0]) && st == ACC_OK; i++)
        if (seen[order[i]])
            st = push(baselines, nbaselines, &bcap, &base_of[order[i]]);
    acc_mem_free(runs);
    if (st != ACC_OK) {
        acc_mem_free(*points);
        acc_mem_free(*baselines);
        *points = *baselines = NULL;
        *npoints = *nbaselines = 0;
    }
    return st;
}
