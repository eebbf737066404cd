/*
 * tune_run.c - `acc-tune --model M --topo T ...`: price the cluster's allreduce, simulate the
 * peers' defaults, search the space, store every evaluation as a tuning run and the best as the
 * optimum of (model, topology, network), and report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tune_cli.h"

#define MAX_WARM 4

typedef struct {
    acc_db_t *db;
    const acc_tune_target_t *t;
    const char *strategy;
    int tty, quiet;
    int64_t *ids; /* run id of each evaluation */
    double best_ms;
    int last_tenth;
    int db_failed; /* the callback could not store a run */
} progress_t;

static void progress(progress_t *p, size_t done, size_t budget)
{
    int width = 30, fill = budget ? (int)((double)done / (double)budget * width) : width;
    int tenth = budget ? (int)(10.0 * (double)done / (double)budget) : 10;
    char best[32] = "-"; /* halving has no full-fidelity score until its last rung */

    if (p->quiet)
        return;
    if (p->best_ms > 0)
        snprintf(best, sizeof(best), "%.3f ms", p->best_ms);
    if (p->tty) {
        fprintf(stderr, "\racc-tune: %s [%.*s%*s] %zu/%zu  best %s ", p->strategy, fill,
                "##############################", width - fill, "", done, budget, best);
        fflush(stderr);
    } else if (tenth > p->last_tenth && done < budget) {
        /* A log or a pipe gets a line per tenth of the budget, not a line per evaluation. */
        p->last_tenth = tenth;
        fprintf(stderr, "acc-tune: %s: %zu of at most %zu evaluations, best %s\n", p->strategy,
                done, budget, best);
    }
}

static acc_status_t on_eval(void *ctx, const acc_tune_eval_t *e, size_t done, size_t budget)
{
    progress_t *p = ctx;
    acc_status_t st;

    st = acc_tune_run_add(p->db, &p->t->key, &e->config, e->fidelity, e->result.iteration_ms,
                          e->warm ? ACC_TUNE_RUN_WARM : p->strategy, e->seconds, &p->ids[done - 1]);
    if (st != ACC_OK) {
        p->db_failed = 1;
        return acc_error_prefix(st, "storing tuning run %zu: ", done);
    }
    if (e->fidelity >= 1.0 && (p->best_ms == 0 || e->result.iteration_ms < p->best_ms))
        p->best_ms = e->result.iteration_ms;
    progress(p, done, budget);
    return ACC_OK;
}

static int make_comm(const tune_opts_t *o, const acc_tune_target_t *t, acc_tune_comm_t **comm)
{
    acc_tune_comm_opts_t co;
    acc_tune_comm_opts_init(&co);
    co.nccl_only = o->nccl_only;
    if (!o->quiet && acc_topo_ranks(t->topo) > 1)
        fprintf(stderr, "acc-tune: pricing allreduce on %d GPUs from 1 KiB to 4 GiB (%s)...\n",
                acc_topo_ranks(t->topo),
                o->nccl_only ? "NCCL's model" : "acc's plans, simulated, and NCCL's model");
    if (acc_tune_comm_create(t->topo, &co, comm) != ACC_OK)
        return tune_fail(EXIT_INPUT);
    return EXIT_OK;
}

/* The space as asked, less the choices the collective times do not have (unless asked for). */
static int make_space(const tune_opts_t *o, const acc_tune_comm_t *comm, acc_tune_space_t *sp)
{
    int a;
    *sp = o->space;
    for (a = 0; a < ACC_TUNE_ALGO_COUNT; a++) {
        if (!((sp->algos >> a) & 1) || acc_tune_comm_has(comm, (acc_tune_algo_t)a))
            continue;
        if (o->algos_given) {
            acc_error_set(ACC_ERR_UNSUPPORTED, "--algo %s: no such times here%s",
                          acc_tune_algo_name((acc_tune_algo_t)a),
                          o->nccl_only ? " (--nccl-only prices NCCL's choice only)" : "");
            return tune_fail(EXIT_USAGE);
        }
        sp->algos &= ~(1u << a);
    }
    if (acc_tune_space_check(sp) != ACC_OK)
        return tune_fail(EXIT_USAGE);
    return EXIT_OK;
}

static int run_baselines(progress_t *p, const acc_itersim_t *sim, acc_tune_point_t base[3])
{
    void (*const make[3])(acc_tune_config_t *) = {acc_tune_config_ddp, acc_tune_config_horovod,
                                                  acc_tune_config_nofusion};
    int i;

    for (i = 0; i < 3; i++) {
        acc_tune_eval_t e;
        memset(&e, 0, sizeof(e));
        make[i](&e.config);
        e.fidelity = 1.0;
        if (acc_itersim_run(sim, &e.config, &e.result) != ACC_OK)
            return tune_fail(EXIT_INPUT);
        acc_tune_point_from_eval(&e, acc_tune_baseline_label(e.config.policy), &base[i]);
        if (acc_tune_run_add(p->db, &p->t->key, &e.config, 1.0, e.result.iteration_ms,
                             ACC_TUNE_RUN_BASELINE, 0, NULL) != ACC_OK)
            return tune_fail(EXIT_OUTPUT);
    }
    return EXIT_OK;
}

static int store_optimum(progress_t *p, const acc_tune_search_result_t *r)
{
    const acc_tune_eval_t *e = &r->evals[r->best];
    acc_tune_optimum_t opt;

    memset(&opt, 0, sizeof(opt)); /* simulated: opt.measured stays 0 */
    opt.config = e->config;
    opt.iteration_ms = e->result.iteration_ms;
    opt.run_id = p->ids[r->best];
    if (acc_tune_optimum_put(p->db, &p->t->key, &opt) != ACC_OK)
        return tune_fail(EXIT_OUTPUT);
    return EXIT_OK;
}

static int report(const tune_opts_t *o, const acc_tune_target_t *t,
                  const acc_tune_search_result_t *r, const acc_tune_point_t base[3],
                  size_t space_size)
{
    acc_tune_point_t *pts = acc_mem_calloc(r->nevals, sizeof(*pts)), best;
    acc_tune_report_t rep;
    char title[512];
    acc_buf_t b;
    size_t i;
    int rc = EXIT_OK;

    if (!pts) {
        acc_error_set(ACC_ERR_NOMEM, "out of memory for the report");
        return tune_fail(EXIT_OUTPUT);
    }
    for (i = 0; i < r->nevals; i++)
        acc_tune_point_from_eval(
            &r->evals[i],
            r->evals[i].warm ? ACC_TUNE_RUN_WARM : acc_search_strategy_name(r->strategy), &pts[i]);
    best = pts[r->best];
    acc_tune_target_title(t, title, sizeof(title));
    memset(&rep, 0, sizeof(rep));
    rep.title = title;
    rep.points = pts;
    rep.npoints = r->nevals;
    rep.best = &best;
    rep.baselines = base;
    rep.nbaselines = 3;
    acc_buf_init(&b);
    if (o->csv) {
        acc_tune_report_csv(&rep, &b);
    } else {
        acc_tune_report_text(&rep, 5, &b);
        if (t->compute->assumed)
            acc_buf_printf(&b,
                           "\nAssumed: %s's compute time on %s (%.3f ms per micro-batch) is "
                           "%s\n",
                           t->profile->name, t->compute->gpu, t->compute->iteration_ms,
                           t->compute->source);
        acc_buf_printf(&b,
                       "\n%s search: %zu evaluations of %zu configurations (%.1f "
                       "full-evaluation equivalents), %.2f s; optimum stored for (%s, %.12s, "
                       "%s) in %s\n",
                       acc_search_strategy_name(r->strategy), r->nevals, space_size, r->cost,
                       r->seconds, t->key.model, t->key.fingerprint,
                       t->key.network[0] ? t->key.network : "\"\"", o->db);
    }
    if (acc_buf_status(&b) != ACC_OK || fwrite(b.data, 1, b.len, stdout) != b.len ||
        fflush(stdout) != 0) {
        acc_error_set(ACC_ERR_IO, "could not write the report to standard output");
        rc = tune_fail(EXIT_OUTPUT);
    }
    acc_buf_free(&b);
    acc_mem_free(pts);
    return rc;
}

int tune_run(const tune_opts_t *o)
{
    acc_db_t *db = NULL;
    acc_tune_target_t *t = NULL;
    acc_tune_comm_t *comm = NULL;
    acc_itersim_t *sim = NULL;
    acc_tune_search_result_t *res = NULL;
    acc_tune_config_t warm[MAX_WARM];
    acc_tune_search_opts_t so;
    acc_tune_space_t space;
    acc_tune_point_t base[3];
    progress_t p;
    int rc;

    memset(&p, 0, sizeof(p));
    if (acc_db_open(o->db, 0, &db) != ACC_OK)
        return tune_fail(EXIT_INPUT);
    if ((rc = tune_target_open(o, db, &t)) != EXIT_OK)
        goto out;
    if (acc_tune_store_prepare(db, t) != ACC_OK) {
        rc = tune_fail(EXIT_OUTPUT);
        goto out;
    }
    if ((rc = make_comm(o, t, &comm)) != EXIT_OK || (rc = make_space(o, comm, &space)) != EXIT_OK)
        goto out;
    if (acc_itersim_create(t->profile, t->compute, comm, NULL, &sim) != ACC_OK) {
        rc = tune_fail(EXIT_INPUT);
        goto out;
    }
    acc_tune_search_opts_init(&so);
    so.strategy = o->strategy;
    so.budget = o->budget;
    so.seed = o->seed;
    if (acc_tune_warm_starts(db, &t->key, warm, MAX_WARM, &so.nwarm) != ACC_OK) {
        rc = tune_fail(EXIT_INPUT);
        goto out;
    }
    so.warm = warm;
    p.db = db;
    p.t = t;
    p.strategy = acc_search_strategy_name(o->strategy);
    p.tty = isatty(STDERR_FILENO);
    p.quiet = o->quiet;
    p.last_tenth = -1;
    if (!(p.ids = acc_mem_calloc(acc_tune_space_size(&space) + MAX_WARM + (o->budget ? o->budget : 0),
                             sizeof(*p.ids)))) {
        acc_error_set(ACC_ERR_NOMEM, "out of memory");
        rc = tune_fail(EXIT_OUTPUT);
        goto out;
    }
    so.on_eval = on_eval;
    so.ctx = &p;
    if ((rc = run_baselines(&p, sim, base)) != EXIT_OK)
        goto out;
    if (acc_tune_search(sim, &space, &so, &res) != ACC_OK) {
        /* The callback's failures are the database's: output; the rest is the input's. */
        rc = tune_fail(p.db_failed ? EXIT_OUTPUT : EXIT_INPUT);
        goto out;
    }
    if (!o->quiet)
        /* Bayes may stop before its budget: say where each search ended. */
        fprintf(stderr, "%sacc-tune: %s: done after %zu evaluations, best %.3f ms\n",
                p.tty ? "\n" : "", p.strategy, res->nevals, p.best_ms);
    if ((rc = store_optimum(&p, res)) != EXIT_OK)
        goto out;
    rc = report(o, t, res, base, acc_tune_space_size(&space));
out:
    acc_tune_search_result_destroy(res);
    acc_itersim_destroy(sim);
    acc_tune_comm_destroy(comm);
    acc_tune_target_destroy(t);
    acc_mem_free(p.ids);
    acc_db_close(db);
    return rc;
}
