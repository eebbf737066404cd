/*
 * Online tuning: the job measures its own iterations and the tuner's search (acc_tune_search,
 * with a measurement instead of the simulator) decides what to measure next.
 *
 * The search is a loop that asks for one evaluation at a time, while measuring takes the
 * job's iterations, which the caller drives.  So on rank 0 the search runs on a thread of its
 * own that hands each configuration to the engine and sleeps until the engine hands back the
 * median of its measured iterations; only one of the two threads runs at a time.  Every
 * configuration is kept for `warmup` iterations that are not measured (new buffers, new
 * streams) and `measure` that are, the same count on every rank, so every rank knows without
 * asking at which iteration a change may come; there rank 0 broadcasts the next configuration
 * (or the end of tuning) and all apply it before the next iteration.  Rank 0 stores each
 * measurement as it comes, and the best as the key's measured optimum when tuning ends.
 */
#include "fusion_internal.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_MEASURE 5
#define MAX_WARM        4

struct fu_online {
    acc_fusion_t *f;
    int warmup, measure; /* iterations per configuration */
    int seen;            /* iterations since the configuration changed */
    acc_tune_config_t start;
    /* rank 0 */
    double *iter_ms, *exposed_ms;
    int nsamples;
    pthread_t thread;
    int thread_started;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int want, have, finished, cancel;
    acc_tune_config_t ask;
    acc_itersim_result_t result;
    acc_status_t status;
    char msg[256];
    acc_tune_space_t space;
    acc_tune_search_opts_t sopts;
    acc_tune_config_t warm[MAX_WARM + 1];
    acc_tune_search_result_t *res;
    /* the store (rank 0, when a database can be written) */
    acc_db_t *db;
    int have_best;
    acc_tune_config_t best;
    double best_ms;
    int64_t best_run;
};

/* ---- the search's side (its own thread) ---- */

static acc_status_t measure(void *ctx, const acc_tune_config_t *c, acc_itersim_result_t *out)
{
    fu_online_t *o = ctx;
    acc_status_t st = ACC_OK;

    pthread_mutex_lock(&o->lock);
    o->ask = *c;
    o->want = 1;
    pthread_cond_broadcast(&o->cv);
    while (!o->have && !o->cancel)
        pthread_cond_wait(&o->cv, &o->lock);
    if (o->have)
        *out = o->result;
    else
        st = acc_error_set(ACC_ERR_ABORTED, "online tuning stopped before the end of its search");
    o->have = 0;
    pthread_mutex_unlock(&o->lock);
    return st;
}

/* Each measurement is a tuning run, kept at once (a job may end before tuning does). */
static acc_status_t on_eval(void *ctx, const acc_tune_eval_t *e, size_t done, size_t budget)
{
    fu_online_t *o = ctx;
    acc_fusion_t *f = o->f;
    int64_t id = 0;
    (void)done;
    (void)budget;
    if (o->db && acc_tune_run_add_measured(o->db, &f->key, &e->config, e->result.iteration_ms,
                                           e->warm ? ACC_TUNE_RUN_WARM
                                                   : acc_search_strategy_name(o->sopts.strategy),
                                           e->seconds, &id) != ACC_OK) {
        ACC_WARN(RUNTIME, "online tuning: not storing its measurements: %s", acc_error_message());
        acc_db_close(o->db);
        o->db = NULL;
    }
    if (!o->have_best || e->result.iteration_ms < o->best_ms) {
        o->have_best = 1;
        o->best = e->config;
        o->best_ms = e->result.iteration_ms;
        o->best_run = id;
    }
    return ACC_OK;
}

static void *search_main(void *arg)
{
    fu_online_t *o = arg;
    acc_tune_search_result_t *res = NULL;
    acc_status_t st = acc_tune_search(NULL, &o->space, &o->sopts, &res);

    pthread_mutex_lock(&o->lock);
    o->status = st;
    if (st != ACC_OK)
        snprintf(o->msg, sizeof(o->msg), "%s", acc_error_message());
    o->res = res;
    o->finished = 1;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->lock);
    return NULL;
}

/* ---- the engine's side ---- */

/* Sleep until the search asks for a measurement or ends; *next is its request or, at the end,
 * the best configuration measured (the start when there is none).  1 while it searches. */
static int next_request(fu_online_t *o, acc_tune_config_t *next)
{
    int searching;
    pthread_mutex_lock(&o->lock);
    while (!o->want && !o->finished)
        pthread_cond_wait(&o->cv, &o->lock);
    searching = o->want;
    o->want = 0;
    *next = searching ? o->ask : o->have_best ? o->best : o->start;
    if (!searching && o->status != ACC_OK && o->status != ACC_ERR_ABORTED)
        ACC_WARN(RUNTIME, "online tuning ended early: %s", o->msg);
    pthread_mutex_unlock(&o->lock);
    return searching;
}

/* Hand the medians to the search and take its next request. */
static int report(acc_fusion_t *f, fu_online_t *o, acc_tune_config_t *next)
{
    pthread_mutex_lock(&o->lock);
    memset(&o->result, 0, sizeof(o->result));
    o->result.iteration_ms = acc_median(o->iter_ms, o->nsamples);
    o->result.exposed_ms = acc_median(o->exposed_ms, o->nsamples);
    o->result.buffers = (size_t)f->last_buckets;
    o->have = 1;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->lock);
    o->nsamples = 0;
    return next_request(o, next);
}

/* The space online tuning searches: the option's, else acc's policy over fusion 256K..256M,
 * 1..4 streams and the compressions ACC_TUNE_COMPRESSION allows; the collective choice is the
 * communicator's own (auto). */
static acc_status_t online_space(const acc_fusion_t *f, acc_tune_space_t *sp)
{
    acc_status_t st;
    if (f->opts.space) {
        *sp = *f->opts.space;
        return ACC_OK;
    }
    acc_tune_space_init(sp);
    sp->fusion_max = 256ull << 20;
    sp->streams_max = 4;
    sp->algos = 1u << ACC_TUNE_ALGO_AUTO;
    sp->assign = ACC_STREAMS_ROUND_ROBIN;
    if ((st = acc_compress_parse_list(acc_setting_str(ACC_SETTING_TUNE_COMPRESSION),
                                      &sp->compressions)) != ACC_OK)
        return acc_error_prefix(st, "ACC_TUNE_COMPRESSION: ");
    return ACC_OK;
}

/* Open the database for the measurements and store what they refer to: the key's profile (a
 * recording of it for this GPU, a shipped one or a profile file of that name, else one made
 * from the registered gradients) and the topology.  Failing that, tuning goes on without
 * storing, with one warning. */
static void open_store(acc_fusion_t *f, fu_online_t *o)
{
    const char *path = fu_db_path(f);
    acc_tune_target_t t;
    acc_profile_t *p = NULL;
    acc_topo_t *topo = NULL;
    acc_status_t st;
    size_t i;

    memset(&t, 0, sizeof(t));
    /* A job that was given its configuration never looked its key up. */
    if (!f->key.model[0] && fu_engine_key(f, &f->key, NULL) != ACC_OK)
        ACC_INFO(RUNTIME, "online tuning: %s", acc_error_message());
    if (!path || !f->key.model[0]) {
        ACC_WARN(RUNTIME, "online tuning: nothing will be stored (%s)",
                 !path ? "no database: set ACC_DB" : "no key: name the model with ACC_MODEL");
        return;
    }
    if ((st = fu_engine_key(f, &t.key, &topo)) == ACC_OK &&
        (st = acc_db_open(path, 0, &o->db)) == ACC_OK &&
        acc_profile_find(f->key.model, acc_profile_topo_sm(topo), o->db, &p, &t.origin) != ACC_OK) {
        snprintf(t.origin.path, sizeof(t.origin.path),
                 "made from the registered gradients by online tuning");
        if ((st = acc_profile_create(f->key.model, &p)) == ACC_OK)
            for (i = 0; i < f->ngrads && st == ACC_OK; i++) {
                char name[32];
                snprintf(name, sizeof(name), "grad%zu", i);
                st = acc_profile_add_tensor(p, name, f->grads[i].count, f->grads[i].dt,
                                            (double)(i + 1) / (double)f->ngrads);
            }
    }
    if (st == ACC_OK) {
        t.profile = p;
        t.topo = topo;
        st = acc_tune_store_prepare(o->db, &t);
    }
    if (st != ACC_OK) {
        ACC_WARN(RUNTIME, "online tuning: nothing will be stored: %s", acc_error_message());
        acc_db_close(o->db);
        o->db = NULL;
    }
    acc_profile_destroy(p);
    acc_topo_destroy(topo);
}

/* Rank 0: the space, the warm points (where the job started, then the stored optima of
 * similar keys), the budget, the store, and the search's thread. */
static acc_status_t start_search(acc_fusion_t *f, fu_online_t *o)
{
    int per = o->warmup + o->measure;
    int64_t budget = f->opts.budget;
    size_t nwarm = 0;
    acc_status_t st;

    if ((st = online_space(f, &o->space)) != ACC_OK)
        return st;
    if (!budget && (st = acc_setting_int(ACC_SETTING_TUNE_BUDGET, &budget)) != ACC_OK)
        return st;
    if (budget < 0 || (budget && budget < per))
        return acc_error_set(ACC_ERR_INVALID,
                             "online tuning: a budget of %lld iterations does not measure one "
                             "configuration (%d iterations each)",
                             (long long)budget, per);
    open_store(f, o);
    o->warm[0] = o->start;
    if (o->db)
        acc_tune_warm_starts(o->db, &f->key, o->warm + 1, MAX_WARM, &nwarm);
    acc_tune_search_opts_init(&o->sopts);
    o->sopts.strategy = f->opts.strategy;
    o->sopts.budget = (size_t)(budget / per);
    o->sopts.seed = f->opts.seed ? f->opts.seed : 1;
    o->sopts.warm = o->warm;
    o->sopts.nwarm = 1 + nwarm;
    o->sopts.on_eval = on_eval;
    o->sopts.ctx = o;
    o->sopts.measure = measure;
    o->sopts.measure_ctx = o;
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->cv, NULL);
    if (pthread_create(&o->thread, NULL, search_main, o) != 0)
        return acc_error_set(ACC_ERR_SYSTEM, "online tuning: cannot start the search's thread");
    o->thread_started = 1;
    return ACC_OK;
}

static void online_free(fu_online_t *o)
{
    if (o->thread_started) {
        pthread_join(o->thread, NULL);
        pthread_mutex_destroy(&o->lock);
        pthread_cond_destroy(&o->cv);
    }
    acc_tune_search_result_destroy(o->res);
    acc_db_close(o->db);
    acc_mem_free(o->iter_ms);
    acc_mem_free(o->exposed_ms);
    acc_mem_free(o);
}

/* Is tuning on?  Rank 0's answer, which it shares. */
static acc_status_t wanted(acc_fusion_t *f, int *on)
{
    int32_t v[2] = {ACC_OK, 0};
    int64_t env = 0;
    acc_status_t st;

    if (f->rank == 0) {
        if (f->opts.online)
            v[1] = f->opts.online > 0;
        else if ((v[0] = acc_setting_int(ACC_SETTING_TUNE_ONLINE, &env)) == ACC_OK)
            v[1] = env != 0;
    }
    if ((st = acc_broadcast(v, v, 2, ACC_DT_I32, 0, f->ctl, NULL)) != ACC_OK)
        return st;
    if (v[0] != ACC_OK)
        return acc_error_set((acc_status_t)v[0], "fusion engine: ACC_TUNE_ONLINE is not 0 or 1 "
                                                 "on rank 0");
    *on = v[1];
    return ACC_OK;
}

/* Share rank 0's next configuration (tuning = 0: the last) and apply it everywhere. */
static acc_status_t share_and_apply(acc_fusion_t *f, acc_status_t st, acc_tune_config_t *next,
                                    int32_t *tuning)
{
    f->source = ACC_FUSION_FROM_ONLINE;
    if ((st = fu_share_config(f, st, next, tuning)) != ACC_OK)
        return st;
    f->online->seen = 0;
    return fu_apply(f, next, ACC_FUSION_FROM_ONLINE);
}

acc_status_t fu_online_start(acc_fusion_t *f)
{
    fu_online_t *o;
    acc_tune_config_t next;
    int32_t tuning = 1;
    acc_status_t st = ACC_OK;
    int on = 0;

    if ((st = wanted(f, &on)) != ACC_OK || !on)
        return st;
    if (!(o = acc_mem_calloc(1, sizeof(*o))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for online tuning");
    o->f = f;
    o->warmup = f->opts.warmup ? f->opts.warmup : 1;
    o->measure = f->opts.measure_iters ? f->opts.measure_iters : DEFAULT_MEASURE;
    if (!(o->iter_ms = acc_mem_calloc((size_t)o->measure, sizeof(double))) ||
        !(o->exposed_ms = acc_mem_calloc((size_t)o->measure, sizeof(double)))) {
        online_free(o);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for online tuning");
    }
    o->start = f->cfg;
    f->online = o;
    next = f->cfg;
    if (f->rank == 0 && (st = start_search(f, o)) == ACC_OK)
        tuning = next_request(o, &next);
    if ((st = share_and_apply(f, st, &next, &tuning)) != ACC_OK || !tuning)
        fu_online_stop(f, st == ACC_OK);
    return st;
}

acc_status_t fu_online_step(acc_fusion_t *f, double iteration_ms, double exposed_ms)
{
    fu_online_t *o = f->online;
    acc_tune_config_t next = f->cfg;
    int32_t tuning = 1;
    acc_status_t st;

    if (++o->seen <= o->warmup)
        return ACC_OK;
    if (f->rank == 0) {
        o->iter_ms[o->nsamples] = iteration_ms;
        o->exposed_ms[o->nsamples] = exposed_ms;
        o->nsamples++;
    }
    if (o->seen < o->warmup + o->measure)
        return ACC_OK;
    if (f->rank == 0)
        tuning = report(f, o, &next);
    if ((st = share_and_apply(f, ACC_OK, &next, &tuning)) != ACC_OK || !tuning)
        fu_online_stop(f, st == ACC_OK);
    return st;
}

void fu_online_stop(acc_fusion_t *f, int store)
{
    fu_online_t *o = f->online;
    acc_tune_optimum_t opt;

    if (!o)
        return;
    f->online = NULL;
    if (o->thread_started) {
        pthread_mutex_lock(&o->lock);
        o->cancel = 1;
        pthread_cond_broadcast(&o->cv);
        pthread_mutex_unlock(&o->lock);
        pthread_join(o->thread, NULL);
        o->thread_started = 0;
        pthread_mutex_destroy(&o->lock);
        pthread_cond_destroy(&o->cv);
    }
    if (store && o->db && o->have_best) {
        memset(&opt, 0, sizeof(opt));
        opt.config = o->best;
        opt.iteration_ms = o->best_ms;
        opt.run_id = o->best_run;
        opt.measured = 1;
        if (acc_tune_optimum_put(o->db, &f->key, &opt) != ACC_OK)
            ACC_WARN(RUNTIME, "online tuning: the measured optimum was not stored: %s",
                     acc_error_message());
    }
    online_free(o);
}
