/*
 * tune_show.c - reading tuning results back: `acc-tune show` (profiles, optima and runs), `acc-tune
 * plot` (the heatmap of one key) and `acc-tune export` (the optimum as settings for acc, DDP or
 * Horovod).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_cli.h"

static int write_stdout(const acc_buf_t *b)
{
    if (acc_buf_status(b) != ACC_OK ||
        fwrite(b->data ? b->data : "", 1, b->len, stdout) != b->len || fflush(stdout) != 0) {
        acc_error_set(ACC_ERR_IO, "could not write to standard output");
        return tune_fail(EXIT_OUTPUT);
    }
    return EXIT_OK;
}

/* The stored topology's name for a fingerprint, else the fingerprint's first 12 digits. */
static const char *topo_label(const acc_db_topo_info_t *topos, size_t n, const char *fp)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp(topos[i].fingerprint, fp) == 0 && topos[i].name[0])
            return topos[i].name;
    return fp;
}

static void csv_field(acc_buf_t *b, const char *s)
{
    /* RFC 4180: quote fields holding a comma, a quote or a line break; double the quotes. */
    if (!strpbrk(s, ",\"\n\r")) {
        acc_buf_puts(b, s);
        return;
    }
    acc_buf_puts(b, "\"");
    for (; *s; s++)
        acc_buf_append(b, s, 1 + (*s == '"'));
    acc_buf_puts(b, "\"");
}

static void runs_csv(acc_buf_t *b, const acc_db_tuning_run_t *runs, size_t n,
                     const acc_db_topo_info_t *topos, size_t ntopos)
{
    size_t i;
    acc_buf_puts(b, "id,model,topology,fingerprint,network,strategy,method,params,score_us,"
                    "seconds,created_us,acc_version\n");
    for (i = 0; i < n; i++) {
        const acc_db_tuning_run_t *r = &runs[i];
        acc_buf_printf(b, "%lld,", (long long)r->id);
        csv_field(b, r->model);
        acc_buf_puts(b, ",");
        csv_field(b, topo_label(topos, ntopos, r->topo_fingerprint));
        acc_buf_printf(b, ",%s,", r->topo_fingerprint);
        csv_field(b, r->network);
        acc_buf_puts(b, ",");
        csv_field(b, r->strategy);
        acc_buf_puts(b, ",");
        csv_field(b, r->method);
        acc_buf_puts(b, ",");
        csv_field(b, r->params);
        acc_buf_printf(b, ",%.6f,%.6f,%lld,", r->score, r->seconds, (long long)r->created_us);
        csv_field(b, r->acc_version);
        acc_buf_puts(b, "\n");
    }
}

/* One side of a key's optima: fusion, streams, compression and iteration time, or dashes. */
static void optimum_cells(acc_buf_t *b, const acc_db_optimum_t *o)
{
    acc_tune_config_t c;
    if (!o) {
        acc_buf_printf(b, "  %8s %7s %-8s %12s", "-", "-", "-", "-");
        return;
    }
    /* The stored text form says the compression; one written by hand has none. */
    if (acc_tune_config_parse(o->params, &c) != ACC_OK)
        c.compress = ACC_COMPRESS_NONE;
    acc_buf_printf(b, "  %7lluK %7d %-8s %12.3f", (unsigned long long)(o->fusion_bytes >> 10),
                   o->streams, acc_compress_name(c.compress), o->score / 1000.0);
}

static int same_key(const acc_db_optimum_t *a, const acc_db_optimum_t *b)
{
    return strcmp(a->model, b->model) == 0 &&
           strcmp(a->topo_fingerprint, b->topo_fingerprint) == 0 &&
           strcmp(a->network, b->network) == 0;
}

/* One line per key: the simulated optimum (acc-tune) beside the measured one (a job's online
 * tuning), then the configurations in full.  Optima come sorted by key, then method. */
static void optima_table(acc_buf_t *b, const acc_db_optimum_t *opt, size_t n,
                         const acc_db_tuning_run_t *runs, size_t nruns,
                         const acc_db_topo_info_t *topos, size_t ntopos)
{
    size_t i, j, keys = 0;
    for (i = 0; i < n; i++)
        keys += i == 0 || !same_key(&opt[i - 1], &opt[i]);
    acc_buf_printf(b, "optima (%zu)\n%-12s %-24s %-10s  %-41s  %-41s %6s\n", keys, "", "", "",
                   "simulated (acc-tune)", "measured (online tuning)", "");
    acc_buf_printf(b, "%-12s %-24s %-10s  %8s %7s %-8s %12s  %8s %7s %-8s %12s %6s\n", "model",
                   "topology", "network", "fusion", "streams", "compress", "iteration ms", "fusion",
                   "streams", "compress", "iteration ms", "runs");
    for (i = 0; i < n; i = j) {
        const acc_db_optimum_t *sim = NULL, *meas = NULL;
        size_t count = 0, k;
        for (j = i; j < n && same_key(&opt[i], &opt[j]); j++)
            *(strcmp(opt[j].method, ACC_TUNE_MEASURED) == 0 ? &meas : &sim) = &opt[j];
        for (k = 0; k < nruns; k++)
            count += strcmp(runs[k].model, opt[i].model) == 0 &&
                     strcmp(runs[k].topo_fingerprint, opt[i].topo_fingerprint) == 0 &&
                     strcmp(runs[k].network, opt[i].network) == 0;
        acc_buf_printf(b, "%-12s %-24.24s %-10s", opt[i].model,
                       topo_label(topos, ntopos, opt[i].topo_fingerprint),
                       opt[i].network[0] ? opt[i].network : "-");
        optimum_cells(b, sim);
        optimum_cells(b, meas);
        acc_buf_printf(b, " %6zu\n", count);
        for (k = i; k < j; k++)
            acc_buf_printf(b, "    %-9s %s\n", opt[k].method, opt[k].params);
    }
}

static void runs_table(acc_buf_t *b, const acc_db_tuning_run_t *runs, size_t n,
                       const acc_db_topo_info_t *topos, size_t ntopos, size_t top)
{
    size_t i;
    acc_buf_printf(b,
                   "\nruns (%zu; best %zu shown, --csv for all)\n%6s %-12s %-24s %-10s %-9s "
                   "%-16s %12s %s\n",
                   n, n < top ? n : top, "id", "model", "topology", "network", "strategy", "method",
                   "iteration ms", "configuration");
    for (i = 0; i < n && i < top; i++)
        acc_buf_printf(b, "%6lld %-12s %-24.24s %-10s %-9s %-16s %12.3f %s\n",
                       (long long)runs[i].id, runs[i].model,
                       topo_label(topos, ntopos, runs[i].topo_fingerprint),
                       runs[i].network[0] ? runs[i].network : "-", runs[i].strategy, runs[i].method,
                       runs[i].score / 1000.0, runs[i].params);
}

/* The key --topo and --network give (with --model's when given), for filtering. */
static int show_key(const tune_opts_t *o, acc_db_t *db, acc_tune_key_t *key)
{
    acc_tune_target_t *t = NULL;
    acc_topo_t *base = NULL, *topo = NULL;
    int rc;

    if (o->model) {
        if ((rc = tune_target_open(o, db, &t)) == EXIT_OK)
            *key = t->key;
        acc_tune_target_destroy(t);
        return rc;
    }
    rc = EXIT_OK;
    if (acc_topo_load(o->topo, &base) != ACC_OK ||
        acc_tune_network_apply(base, o->network, db, &topo, key) != ACC_OK)
        rc = tune_fail(EXIT_INPUT);
    acc_topo_destroy(topo);
    acc_topo_destroy(base);
    return rc;
}

int tune_show(const tune_opts_t *o)
{
    acc_db_t *db = NULL;
    acc_db_optimum_t *opt = NULL;
    acc_db_tuning_run_t *runs = NULL;
    acc_db_topo_info_t *topos = NULL;
    size_t nopt = 0, nruns = 0, ntopos = 0, i, keep = 0;
    acc_tune_key_t key;
    const char *model = o->model, *fp = NULL, *net = NULL;
    acc_buf_t b;
    int rc = EXIT_OK;

    acc_buf_init(&b);
    if (acc_db_open(o->db, ACC_DB_READONLY, &db) != ACC_OK)
        return tune_fail(EXIT_INPUT);
    if (o->topo) {
        if ((rc = show_key(o, db, &key)) != EXIT_OK)
            goto out;
        /* A profile given as a file is stored under its name. */
        model = o->model ? key.model : NULL;
        fp = key.fingerprint;
        net = key.network;
    }
    if (acc_db_list_optima(db, &opt, &nopt) != ACC_OK ||
        acc_db_list_tuning_runs(db, model, fp, net, &runs, &nruns) != ACC_OK ||
        acc_db_list_topologies(db, &topos, &ntopos) != ACC_OK) {
        rc = tune_fail(EXIT_INPUT);
        goto out;
    }
    for (i = 0; i < nopt; i++)
        if ((!model || strcmp(opt[i].model, model) == 0) &&
            (!fp || (strcmp(opt[i].topo_fingerprint, fp) == 0 && strcmp(opt[i].network, net) == 0)))
            opt[keep++] = opt[i];
    if (o->csv)
        runs_csv(&b, runs, nruns, topos, ntopos);
    else if ((rc = tune_show_profiles(model, db, &b)) != EXIT_OK)
        goto out;
    else {
        optima_table(&b, opt, keep, runs, nruns, topos, ntopos);
        runs_table(&b, runs, nruns, topos, ntopos, 20);
    }
    rc = write_stdout(&b);
out:
    acc_buf_free(&b);
    acc_mem_free(opt);
    acc_mem_free(runs);
    acc_mem_free(topos);
    acc_db_close(db);
    return rc;
}

/* The stored optimum of the target's key; EXIT_INPUT when there is none, with the command that
 * stores it. */
static int get_optimum(const tune_opts_t *o, acc_db_t *db, const acc_tune_target_t *t,
                       acc_tune_optimum_t *opt)
{
    acc_status_t st = acc_tune_optimum_get(db, &t->key, opt);
    char net[ACC_DB_NAME_MAX + 32];
    const char *topo = o->topo ? o->topo : "...", *dbp = o->db ? o->db : "FILE";

    /* On one node the key has no network (""): say so rather than print an empty name. */
    if (t->key.network[0])
        snprintf(net, sizeof(net), "network '%s'", t->key.network);
    else
        snprintf(net, sizeof(net), "%s", "no network (one node)");
    if (st == ACC_NO_DATA)
        acc_error_set(ACC_ERR_NOT_FOUND,
                      "no optimum for %s on %s (fingerprint %.12s), %s, in %s; store one with "
                      "acc-tune --model %s --topo '%s'%s%s%s --db %s",
                      t->key.model, topo, t->key.fingerprint, net, dbp, o->model, topo,
                      o->network ? " --network '" : "", o->network ? o->network : "",
                      o->network ? "'" : "", dbp);
    return st == ACC_OK ? EXIT_OK : tune_fail(EXIT_INPUT);
}

int tune_plot(const tune_opts_t *o)
{
    acc_db_t *db = NULL;
    acc_tune_target_t *t = NULL;
    acc_tune_point_t *pts = NULL, *base = NULL, best;
    size_t npts = 0, nbase = 0, i;
    acc_tune_optimum_t opt;
    acc_tune_report_t rep;
    char title[512];
    acc_buf_t b;
    int rc;

    acc_buf_init(&b);
    if (acc_db_open(o->db, ACC_DB_READONLY, &db) != ACC_OK)
        return tune_fail(EXIT_INPUT);
    if ((rc = tune_target_open(o, db, &t)) != EXIT_OK ||
        (rc = get_optimum(o, db, t, &opt)) != EXIT_OK)
        goto out;
    if (acc_tune_report_points(db, &t->key, &pts, &npts, &base, &nbase) != ACC_OK) {
        rc = tune_fail(EXIT_INPUT);
        goto out;
    }
    snprintf(best.label, sizeof(best.label), "optimum");
    best.config = opt.config;
    best.fidelity = 1.0;
    best.iteration_ms = opt.iteration_ms;
    best.buffers = 0;
    /* The compute-only time is the profile's: the same for every point of this key. */
    best.compute_ms = t->compute->accumulation * t->compute->iteration_ms;
    for (i = 0; i < npts; i++)
        pts[i].compute_ms = best.compute_ms;
    for (i = 0; i < nbase; i++)
        base[i].compute_ms = best.compute_ms;
    acc_tune_target_title(t, title, sizeof(title));
    memset(&rep, 0, sizeof(rep));
    rep.title = title;
    rep.points = pts;
    rep.npoints = npts;
    rep.best = &best;
    rep.baselines = base;
    rep.nbaselines = nbase;
    if (acc_tune_report_svg(&rep, &b) != ACC_OK) {
        rc = tune_fail(EXIT_INPUT);
        goto out;
    }
    if (acc_write_file(o->plot, b.data, b.len) != ACC_OK)
        rc = tune_fail(EXIT_OUTPUT);
out:
    acc_buf_free(&b);
    acc_mem_free(pts);
    acc_mem_free(base);
    acc_tune_target_destroy(t);
    acc_db_close(db);
    return rc;
}

static void export_text(acc_buf_t *b, const char *format, const acc_tune_target_t *t,
                        const acc_tune_optimum_t *opt)
{
    const acc_tune_config_t *c = &opt->config;
    char cfg[ACC_TUNE_CONFIG_TEXT_MAX], title[512];
    acc_tune_config_format(c, cfg, sizeof(cfg));
    acc_tune_target_title(t, title, sizeof(title));
    acc_buf_printf(b, "# acc-tune optimum for %s\n# %s: %.3f ms per iteration (%s), run %lld\n",
                   title, cfg, opt->iteration_ms, opt->measured ? "measured" : "simulated",
                   (long long)opt->run_id);
    if (strcmp(format, "env") == 0) {
        /* What the runtime's fusion engine reads (the settings table, acc_common.h). */
        acc_buf_printf(b, "ACC_FUSION_BYTES=%llu\nACC_STREAMS=%d\nACC_COMPRESSION=%s\n",
                       (unsigned long long)c->fusion_bytes, c->streams,
                       acc_compress_name(c->compress));
        return;
    }
    if (strcmp(format, "ddp") == 0) {
        if (c->policy != ACC_FUSION_DDP)
            acc_buf_printf(b,
                           "# tuned for %s's fusion; DDP's buckets have no timeout and a first "
                           "bucket of their own: tune with --policy ddp for DDP itself\n",
                           acc_fusion_policy_name(c->policy));
        if (c->streams > 1)
            acc_buf_printf(b,
                           "# %d streams: DDP reduces on one NCCL stream per process group; "
                           "more need one process group per stream\n",
                           c->streams);
        acc_buf_printf(b,
                       "model = torch.nn.parallel.DistributedDataParallel(model, "
                       "bucket_cap_mb=%.10g)\n",
                       (double)c->fusion_bytes / (1024.0 * 1024.0));
        /* torch.distributed.algorithms.ddp_comm_hooks.default_hooks */
        if (c->compress != ACC_COMPRESS_NONE)
            acc_buf_printf(b, "model.register_comm_hook(None, default_hooks.%s_compress_hook)\n",
                           acc_compress_name(c->compress));
        return;
    }
    if (c->policy != ACC_FUSION_HOROVOD)
        acc_buf_printf(b,
                       "# tuned for %s's fusion; Horovod fuses what each cycle finds ready: "
                       "tune with --policy horovod for Horovod itself\n",
                       acc_fusion_policy_name(c->policy));
    /* HOROVOD_FUSION_THRESHOLD is in bytes, HOROVOD_CYCLE_TIME in ms (horovod/common/common.h). */
    acc_buf_printf(b, "HOROVOD_FUSION_THRESHOLD=%llu\nHOROVOD_NUM_NCCL_STREAMS=%d\n",
                   (unsigned long long)c->fusion_bytes, c->streams);
    if (c->policy == ACC_FUSION_HOROVOD)
        acc_buf_printf(b, "HOROVOD_CYCLE_TIME=%g\n", c->cycle_ms);
    /* Horovod compresses in the optimizer wrapper (horovod/torch/compression.py), fp16 only. */
    if (c->compress == ACC_COMPRESS_FP16)
        acc_buf_printf(b, "# hvd.DistributedOptimizer(..., compression=hvd.Compression.fp16)\n");
    else if (c->compress == ACC_COMPRESS_BF16)
        acc_buf_printf(b, "# tuned with bf16 compression, which Horovod does not offer; "
                          "tune with --compress none,fp16 for Horovod\n");
}

int tune_export(const tune_opts_t *o)
{
    acc_db_t *db = NULL;
    acc_tune_target_t *t = NULL;
    acc_tune_optimum_t opt;
    acc_buf_t b;
    int rc;

    acc_buf_init(&b);
    if (acc_db_open(o->db, ACC_DB_READONLY, &db) != ACC_OK)
        return tune_fail(EXIT_INPUT);
    if ((rc = tune_target_open(o, db, &t)) == EXIT_OK &&
        (rc = get_optimum(o, db, t, &opt)) == EXIT_OK) {
        export_text(&b, o->format, t, &opt);
        rc = write_stdout(&b);
    }
    acc_buf_free(&b);
    acc_tune_target_destroy(t);
    acc_db_close(db);
    return rc;
}
