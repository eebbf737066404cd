/*
 * tune_db.c - acc-tune's use of the database: the profile and topology a key refers to, one
 * tuning run per evaluation, optima, warm-start points and runs read back for reports.
 */
#include <stdlib.h>
#include <string.h>

#include "tune_cli.h"

acc_status_t tune_db_prepare(acc_db_t *db, const tune_target_t *t)
{
    acc_buf_t yaml;
    acc_status_t st;

    acc_buf_init(&yaml);
    if ((st = acc_profile_dump_yaml(t->profile, &yaml)) == ACC_OK &&
        (st = acc_buf_status(&yaml)) == ACC_OK)
        st = acc_db_put_profile(db, t->profile->name, yaml.data, t->profile->params);
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

static double method_fidelity(const char *method)
{
    const char *at = strchr(method, '@');
    double f;
    if (strncmp(method, "itersim", 7) != 0)
        return -1;
    if (!at)
        return 1.0;
    return acc_parse_double(at + 1, &f) == ACC_OK && f > 0 && f <= 1 ? f : -1;
}

acc_status_t tune_db_add_run(acc_db_t *db, const tune_target_t *t, const acc_tune_config_t *c,
                             double fidelity, double iteration_ms, const char *strategy,
                             double seconds, int64_t *id)
{
    acc_db_tuning_run_t run;
    acc_status_t st;

    memset(&run, 0, sizeof(run));
    snprintf(run.model, sizeof(run.model), "%s", t->profile->name);
    memcpy(run.topo_fingerprint, t->fingerprint, sizeof(run.topo_fingerprint));
    snprintf(run.network, sizeof(run.network), "%s", t->network);
    if ((st = acc_tune_config_format(c, run.params, sizeof(run.params))) != ACC_OK)
        return st;
    run.score = iteration_ms * 1000.0; /* the database keeps microseconds */
    method_text(fidelity, run.method, sizeof(run.method));
    snprintf(run.strategy, sizeof(run.strategy), "%s", strategy);
    run.seconds = seconds;
    return acc_db_add_tuning_run(db, &run, id);
}

/* How close an optimum's key is to the target's; 0: not similar. */
static int similarity(const acc_db_optimum_t *o, const tune_target_t *t)
{
    int model = strcmp(o->model, t->profile->name) == 0;
    int topo = strcmp(o->topo_fingerprint, t->fingerprint) == 0;
    int net = strcmp(o->network, t->network) == 0;
    if (model && topo && net)
        return 4;
    if (model && topo)
        return 3;
    if (model)
        return 2;
    return topo ? 1 : 0;
}

static acc_status_t optimum_config(const acc_db_optimum_t *o, acc_tune_config_t *c)
{
    acc_tune_algo_t algo;
    if (acc_tune_config_parse(o->params, c) == ACC_OK)
        return ACC_OK;
    /* Written by something else: its typed fields are enough for a starting point. */
    if (!o->fusion_bytes || o->streams < 1 || o->streams > ACC_TUNE_MAX_STREAMS ||
        acc_tune_algo_parse(o->algo, &algo) != ACC_OK)
        return ACC_ERR_PARSE;
    acc_tune_config_acc(c, o->fusion_bytes, o->streams, algo);
    return ACC_OK;
}

acc_status_t tune_db_warm(acc_db_t *db, const tune_target_t *t, acc_tune_config_t *out, size_t max,
                          size_t *n)
{
    acc_db_optimum_t *opt = NULL;
    size_t count = 0, i;
    acc_status_t st;
    int level;

    *n = 0;
    if ((st = acc_db_list_optima(db, &opt, &count)) != ACC_OK)
        return st;
    for (level = 4; level >= 1 && *n < max; level--)
        for (i = 0; i < count && *n < max; i++)
            if (similarity(&opt[i], t) == level && optimum_config(&opt[i], &out[*n]) == ACC_OK)
                (*n)++;
    acc_free(opt);
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

acc_status_t tune_db_points(acc_db_t *db, const char *model, const char *fingerprint,
                            const char *network, acc_tune_point_t **points, size_t *npoints,
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
    if ((st = acc_db_list_tuning_runs(db, model, fingerprint, network, &runs, &count)) != ACC_OK)
        return st;
    /* Runs come best first: of several runs of one baseline the best is kept. */
    for (i = 0; i < count && st == ACC_OK; i++) {
        acc_tune_point_t p;
        int base = strcmp(runs[i].strategy, "baseline") == 0;
        memset(&p, 0, sizeof(p));
        p.fidelity = method_fidelity(runs[i].method);
        if (p.fidelity < 0 || acc_tune_config_parse(runs[i].params, &p.config) != ACC_OK)
            continue; /* not a run of acc-tune's simulator: nothing to draw it with */
        p.iteration_ms = runs[i].score / 1000.0;
        snprintf(p.label, sizeof(p.label), "%s",
                 base ? acc_tune_baseline_label(p.config.policy) : runs[i].strategy);
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
    acc_free(runs);
    if (st != ACC_OK) {
        acc_free(*points);
        acc_free(*baselines);
        *points = *baselines = NULL;
        *npoints = *nbaselines = 0;
    }
    return st;
}
