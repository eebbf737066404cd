/*
 * acc-bench --model: a model's data-parallel training iterations replayed on the runtime
 * (acc_fusion_replay: the profile's compute as time that passes, its gradients handed to the
 * fusion engine as the backward pass produces them), once per policy - DDP's defaults,
 * Horovod's defaults, acc's stored optimum, and online tuning from where the job would start -
 * each printed with its measured iteration time and exposed communication beside the iteration
 * simulator's prediction for the same setting.
 *
 * The policy `record` measures what recording the job's profile (ACC_RECORD) costs it: DDP's
 * defaults replayed with and without recording, alternately (without, with, with, without, so
 * that a drift of the machine cancels to first order), each run RECORD_WARMUP iterations, the
 * RECORD_ITERS recorded and RECORD_AFTER more while rank 0's thread stores the profile; the row
 * gives the median of those iterations with recording, and the settings column its difference
 * to the median of the same iterations without, beside the engine's own account of the time
 * its calls spent recording.  The recording is stored in the database like a job's.
 *
 * The prediction prices allreduce with times measured on this runtime first (a few sizes from
 * 1 KiB to 64 MiB, the slowest rank's mean), not with the topology's GPUs, so that it predicts
 * what is measured here; the simulator reads between and beyond those sizes linearly.  The
 * copies into and out of the pack buffer (and compression's casts), the CPU's work on the host
 * backend, are priced at rates measured the same way, every rank copying at once.  It does not
 * model the cores the ranks share beyond that.
 *
 * --grad-scale S emulates a faster network on a slower one: every gradient times S, and every
 * fusion size of every policy times S (DDP's caps, Horovod's threshold, negotiate's, the stored
 * optimum, online tuning's range and start), so that each bucket holds the tensors it would
 * hold on the topology's own network, and communication takes the share of the iteration it
 * takes there.  The network's latency is not scaled.  Online tuning's measurements belong to
 * the emulation then, not to the key: they go to the database's name with ".scaled.db".
 */
#include "acc_bench.h"
#include "acc_fusion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The record policy's runs (above). */
#define RECORD_WARMUP 2
#define RECORD_ITERS  5
#define RECORD_AFTER  2
#define RECORD_RUN    (RECORD_WARMUP + RECORD_ITERS + RECORD_AFTER)

/* Sizes the allreduce is measured at for the prediction: 1 KiB to 64 MiB by factors of 16. */
#define CALIB_MIN   (1ull << 10)
#define CALIB_MAX   (64ull << 20)
#define CALIB_ITERS 3
/* The copies are measured on buffers of this many fp32 elements (64 MiB): beyond the caches,
 * as a model's gradients are. */
#define COPY_ELEMS (16u << 20)

typedef struct {
    const bench_replay_t *r;
    acc_comm_t *comm;
    acc_tune_target_t *t;
    acc_profile_t *scaled;                 /* the profile at --grad-scale; NULL at 1 */
    const acc_profile_t *profile;          /* what is replayed: t's or the scaled one */
    const acc_profile_compute_t *compute;  /* its compute entry */
    double scale;                          /* --grad-scale, 1 when not given */
    double copy_gbs, cast_gbs, uncast_gbs; /* the copies, as measured */
    acc_tune_comm_t *curve;
    acc_itersim_t *sim;
    const char *topo, *db; /* as given, for the stored optimum */
    FILE *out;             /* rank 0's; NULL on the others */
    int failed;            /* a rank cannot go on */
    int missing;           /* a policy had no stored optimum; the others ran */
} replay_t;

/* The mean time of one allreduce of `bytes` on every rank, the slowest rank's, in us. */
static acc_status_t time_allreduce(acc_comm_t *c, float *buf, uint64_t bytes, double *us)
{
    size_t count = (size_t)(bytes / sizeof(float));
    double t0 = 0, mine;
    acc_status_t st = ACC_OK;
    for (int i = 0; i <= CALIB_ITERS && st == ACC_OK; i++) {
        if (i == 1)
            t0 = acc_now_s();
        st = acc_allreduce(buf, buf, count, ACC_DT_F32, ACC_RED_SUM, c, NULL);
    }
    mine = (acc_now_s() - t0) * 1e6 / CALIB_ITERS;
    if (st == ACC_OK)
        st = acc_allreduce(&mine, us, 1, ACC_DT_F64, ACC_RED_MAX, c, NULL);
    return st;
}

/* The allreduce times of this runtime, as the simulator's collective times. */
static acc_status_t calibrate(replay_t *w)
{
    acc_tune_comm_point_t pts[8];
    float *buf = calloc(CALIB_MAX / sizeof(float), sizeof(float));
    size_t n = 0;
    acc_status_t st = ACC_OK;

    if (!buf)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory measuring allreduce");
    if (w->out)
        fprintf(w->out, "# allreduce on this runtime (for the prediction):");
    for (uint64_t b = CALIB_MIN; b <= CALIB_MAX && st == ACC_OK; b *= 16, n++) {
        double us = 0;
        char text[32];
        st = time_allreduce(w->comm, buf, b, &us);
        memset(&pts[n], 0, sizeof(pts[n]));
        pts[n].nbytes = b;
        for (int a = 0; a < ACC_TUNE_ALGO_COUNT; a++)
            pts[n].us[a] = us;
        bench_time_text(us, text, sizeof(text));
        if (w->out)
            fprintf(w->out, " %lluK %s us", (unsigned long long)(b >> 10), text);
    }
    if (w->out)
        fprintf(w->out, "\n");
    free(buf);
    if (st == ACC_OK)
        st = acc_tune_comm_create_points(acc_comm_size(w->comm), 0, pts, n, &w->curve);
    return st;
}

/* GB/s of one conversion of COPY_ELEMS elements (the slowest rank's, every rank at once). */
static acc_status_t copy_rate(replay_t *w, void *dst, acc_dtype_t to, const void *src,
                              acc_dtype_t from, double scale, double *gbs)
{
    double t0, mine = 0, slowest = 0;
    acc_status_t st = acc_host_convert(dst, to, src, from, COPY_ELEMS, scale);
    for (int i = 0; i < CALIB_ITERS && st == ACC_OK; i++) {
        t0 = acc_now_s();
        st = acc_host_convert(dst, to, src, from, COPY_ELEMS, scale);
        mine += acc_now_s() - t0;
    }
    if (st == ACC_OK)
        st = acc_allreduce(&mine, &slowest, 1, ACC_DT_F64, ACC_RED_MAX, w->comm, NULL);
    /* rates in bytes of the gradients themselves (fp32) */
    *gbs = slowest > 0 ? 4.0 * COPY_ELEMS * CALIB_ITERS / slowest / 1e9 : 0;
    return st;
}

/* The fusion engine's copies on this machine: a gradient copied, cast to fp16 (scaled, as when
 * averaging) and back. */
static acc_status_t calibrate_copies(replay_t *w)
{
    float *a = calloc(COPY_ELEMS, sizeof(float)), *b = calloc(COPY_ELEMS, sizeof(float));
    uint16_t *h = calloc(COPY_ELEMS, sizeof(uint16_t));
    acc_status_t st = ACC_ERR_NOMEM;

    if (a && b && h) {
        for (size_t i = 0; i < COPY_ELEMS; i++)
            a[i] = (float)(i % 1000) * 0.001f;
        st = copy_rate(w, b, ACC_DT_F32, a, ACC_DT_F32, 1.0, &w->copy_gbs);
        if (st == ACC_OK)
            st = copy_rate(w, h, ACC_DT_F16, a, ACC_DT_F32, 0.25, &w->cast_gbs);
        if (st == ACC_OK)
            st = copy_rate(w, b, ACC_DT_F32, h, ACC_DT_F16, 1.0, &w->uncast_gbs);
    } else {
        acc_error_set(ACC_ERR_NOMEM, "out of memory measuring copies");
    }
    if (st == ACC_OK && w->out)
        fprintf(w->out,
                "# copies on this machine (for the prediction): %.2f GB/s, cast to fp16 %.2f, "
                "back %.2f\n",
                w->copy_gbs, w->cast_gbs, w->uncast_gbs);
    free(a);
    free(b);
    free(h);
    return st;
}

/* A configuration's fusion sizes at --grad-scale (at least one byte). */
static void scale_config(const replay_t *w, acc_tune_config_t *c)
{
    if (w->scale >= 1)
        return;
    c->fusion_bytes = (uint64_t)((double)c->fusion_bytes * w->scale + 0.5);
    c->fusion_bytes = c->fusion_bytes ? c->fusion_bytes : 1;
    if (c->first_bytes) {
        c->first_bytes = (uint64_t)((double)c->first_bytes * w->scale + 0.5);
        c->first_bytes = c->first_bytes ? c->first_bytes : 1;
    }
}

/* The nearest power of two to v (at least 1). */
static uint64_t pow2_near(double v)
{
    uint64_t p = 1;
    while ((double)(p * 2) <= v * 1.41421356)
        p *= 2;
    return p;
}

/* The configuration of a policy that is not tuned online; 0, or 1 with the reason printed. */
static int fixed_config(replay_t *w, const char *policy, acc_tune_config_t *c, const char **from)
{
    acc_tune_optimum_t opt;
    acc_status_t st;

    if (!strcmp(policy, "ddp")) {
        acc_tune_config_ddp(c);
        *from = "DDP defaults";
        return 0;
    }
    if (!strcmp(policy, "horovod")) {
        acc_tune_config_horovod(c);
        *from = "Horovod defaults";
        return 0;
    }
    if (!strcmp(policy, "negotiate")) {
        /* Horovod's threshold and cycle: only the coordinator differs. */
        acc_tune_config_horovod(c);
        acc_tune_config_negotiate(c, c->fusion_bytes, c->cycle_ms, 1);
        *from = "Horovod's defaults, no coordinator";
        return 0;
    }
    st = acc_fusion_stored(w->r->model, w->topo, w->r->network, w->db, &opt);
    if (st == ACC_OK) {
        *c = opt.config;
        *from = opt.measured ? "acc measured optimum" : "acc simulated optimum";
        return 0;
    }
    if (w->out)
        fprintf(w->out,
                "  %-8s no stored optimum (%s): run acc-tune --model %s --topo %s --db "
                "... first\n",
                policy, acc_error_message(), w->r->model, w->topo);
    return 1;
}

/* Most iterations one replay runs (online tuning's budget is bounded by its setting). */
#define MAX_ITERS 100000

/* Run the replay: every iteration's time in (*ms)[0 .. *n) (taken), the iterations online
 * tuning took in *tuned, and what the engine used at the end in *info.  It runs iters
 * iterations; one that tunes runs until tuning ends, then iters more: the steady state is what
 * is measured. */
static acc_status_t run(replay_t *w, const acc_fusion_opts_t *o, int iters, double **ms, int *n,
                        int *tuned, acc_fusion_info_t *info)
{
    acc_fusion_replay_t *rp = NULL;
    acc_status_t st, dst;
    size_t cap = 0;

    *tuned = *n = 0;
    *ms = NULL;
    if ((st = acc_fusion_replay_create(w->comm, w->profile, w->compute, o, &rp)) != ACC_OK)
        return st;
    if (w->r->jitter > 1 && (st = acc_fusion_replay_set_jitter(rp, w->r->jitter, 1)) != ACC_OK) {
        acc_fusion_replay_destroy(rp);
        return st;
    }
    while (st == ACC_OK && *n < MAX_ITERS && (*n < iters || *n - *tuned < iters)) {
        void *v = *ms;
        if ((st = acc_array_reserve(&v, &cap, (size_t)*n + 1, sizeof(double))) != ACC_OK)
            break;
        *ms = v;
        st = acc_fusion_replay_run(rp, 1, &(*ms)[*n]);
        (*n)++;
        if (st == ACC_OK && (st = acc_fusion_info(acc_fusion_replay_engine(rp), info)) == ACC_OK &&
            info->tuning)
            *tuned = *n;
    }
    dst = acc_fusion_replay_destroy(rp);
    return st != ACC_OK ? st : dst;
}

/* One policy's row: measured beside predicted. */
static void row(replay_t *w, const char *policy, const double *ms, int iters, int tuned,
                const acc_fusion_info_t *info, const char *from)
{
    double compute = w->compute->accumulation * w->compute->iteration_ms, meas;
    double times[4096];
    char cfg[ACC_TUNE_CONFIG_TEXT_MAX], tuning[64] = "";
    acc_itersim_result_t pred;
    int first = tuned ? tuned : 1, n = 0;

    /* The first iteration builds buffers and streams; after online tuning, its steady state. */
    for (int k = first; k < iters && n < 4096; k++)
        times[n++] = ms[k];
    meas = acc_median(times, n);
    if (acc_itersim_run(w->sim, &info->config, &pred) != ACC_OK ||
        acc_tune_config_format(&info->config, cfg, sizeof(cfg)) != ACC_OK) {
        fprintf(stderr, "acc-bench: %s: %s\n", policy, acc_error_message());
        w->failed = 1;
        return;
    }
    if (!strcmp(policy, "online"))
        snprintf(tuning, sizeof(tuning), " from the %s, %s %d iterations",
                 acc_fusion_source_name(info->started_from),
                 info->tuning ? "still tuning after" : "tuned in", tuned);
    if (!w->out)
        return;
    if (!n)
        fprintf(w->out, "  %-8s %5d  %12s  %10s", policy, 0, "-", "-");
    else
        fprintf(w->out, "  %-8s %5d  %12.3f  %10.3f", policy, n, meas, meas - compute);
    fprintf(w->out, "  %12.3f  %10.3f  %s (%s%s)\n", pred.iteration_ms, pred.iteration_ms - compute,
            cfg, from, tuning);
    /* The search outlasted the replay's ceiling: nothing is left to measure the result with. */
    if (!n && info->tuning)
        fprintf(w->out,
                "  %-8s nothing measured: online tuning was still measuring configurations "
                "after %d iterations (each for a few iterations, until its budget is spent: "
                "ACC_TUNE_BUDGET iterations, by default a quarter of what a full grid would "
                "take); give a smaller ACC_TUNE_BUDGET\n",
                "", tuned);
    fflush(w->out);
}

/* Online tuning at --grad-scale: it starts from the stored optimum (acc's defaults without
 * one) scaled, searches online tuning's range scaled, and stores in a database of its own. */
static int online_scaled(replay_t *w, acc_fusion_opts_t *o, acc_tune_config_t *c,
                         acc_tune_space_t *space, char *db, size_t n)
{
    acc_tune_optimum_t opt;
    const char *base = w->db ? w->db : acc_setting_str(ACC_SETTING_DB);
    if (acc_fusion_stored(w->r->model, w->topo, w->r->network, w->db, &opt) == ACC_OK)
        *c = opt.config;
    else
        acc_tune_config_acc(c, 25ull << 20, 1, ACC_TUNE_ALGO_AUTO);
    scale_config(w, c);
    acc_tune_space_init(space);
    space->fusion_min = pow2_near((double)(256ull << 10) * w->scale);
    space->fusion_max = pow2_near((double)(256ull << 20) * w->scale);
    space->streams_max = 4;
    space->algos = 1u << ACC_TUNE_ALGO_AUTO;
    space->assign = ACC_STREAMS_ROUND_ROBIN;
    if (acc_compress_parse_list(acc_setting_str(ACC_SETTING_TUNE_COMPRESSION),
                                &space->compressions) != ACC_OK) {
        fprintf(stderr, "acc-bench: ACC_TUNE_COMPRESSION: %s\n", acc_error_message());
        w->failed = 1;
        return 1;
    }
    o->config = c;
    o->space = space;
    if (base && base[0]) {
        snprintf(db, n, "%s.scaled.db", base);
        o->db = db;
    }
    return 0;
}

/* The record policy (above): rows of its own. */
static void record_policy(replay_t *w)
{
    double with[64], without[64], first[32], last[32], record_ms = 0, med_with, med_without, spread;
    int rounds = w->r->iters / RECORD_RUN, nwith = 0, nwithout = 0, nfirst = 0, nlast = 0,
        recorded = 0;
    acc_fusion_opts_t o;
    acc_fusion_info_t info;
    acc_tune_config_t c;
    char cfg[ACC_TUNE_CONFIG_TEXT_MAX], text[320];
    acc_itersim_result_t pred;

    if (rounds < 1)
        rounds = 1;
    if (rounds > 64 / (2 * (RECORD_ITERS + RECORD_AFTER)))
        rounds = 64 / (2 * (RECORD_ITERS + RECORD_AFTER));
    acc_tune_config_ddp(&c);
    acc_fusion_opts_init(&o);
    o.config = &c;
    o.online = -1;
    o.model = w->t->key.model;
    o.network = w->r->network;
    o.record_warmup = RECORD_WARMUP;
    o.record_iters = RECORD_ITERS;
    o.batch = w->t->compute->batch;
    o.precision = w->t->compute->precision;
    for (int k = 0; k < 4 * rounds && !w->failed; k++) {
        int on = k % 4 == 1 || k % 4 == 2, tuned, n = 0;
        double *ms = NULL;
        o.record = on ? 1 : -1;
        if (run(w, &o, RECORD_RUN, &ms, &n, &tuned, &info) != ACC_OK) {
            acc_mem_free(ms);
            fprintf(stderr, "acc-bench: rank %d: record: %s\n", acc_comm_rank(w->comm),
                    acc_error_message());
            w->failed = 1;
            break;
        }
        for (int i = RECORD_WARMUP; i < RECORD_RUN; i++) {
            if (on) {
                with[nwith++] = ms[i];
                continue;
            }
            without[nwithout++] = ms[i];
            /* The two runs without of a round, apart: how far runs differ by themselves. */
            if (k % 4 == 0)
                first[nfirst++] = ms[i];
            else
                last[nlast++] = ms[i];
        }
        acc_mem_free(ms);
        if (on) {
            record_ms += info.record_ms;
            recorded += RECORD_RUN;
        }
    }
    if (w->failed || !w->out)
        return;
    med_with = acc_median(with, (size_t)nwith);
    med_without = acc_median(without, (size_t)nwithout);
    spread = fabs(acc_median(first, (size_t)nfirst) / acc_median(last, (size_t)nlast) - 1) * 100;
    if (acc_itersim_run(w->sim, &info.config, &pred) != ACC_OK ||
        acc_tune_config_format(&info.config, cfg, sizeof(cfg)) != ACC_OK) {
        fprintf(stderr, "acc-bench: record: %s\n", acc_error_message());
        w->failed = 1;
        return;
    }
    snprintf(text, sizeof(text),
             "recording: %+.2f %% against %.3f ms without (same run, %d round%s; runs without "
             "differ by %.2f %%); the engine's calls %.4f ms per iteration (%.4f %%)",
             (med_with / med_without - 1) * 100, med_without, rounds, rounds == 1 ? "" : "s",
             spread, record_ms / recorded, record_ms / recorded / med_without * 100);
    fprintf(w->out, "  %-8s %5d  %12.3f  %10.3f  %12.3f  %10.3f  %s (DDP defaults; %s)\n", "record",
            nwith, med_with, med_with - w->t->compute->accumulation * w->t->compute->iteration_ms,
            pred.iteration_ms,
            pred.iteration_ms - w->t->compute->accumulation * w->t->compute->iteration_ms, cfg,
            text);
    fprintf(w->out,
            "# the recording is stored as %s's for sm_%d: acc-tune --model %s tunes it there\n",
            w->t->key.model, w->t->compute->sm, w->t->key.model);
    fflush(w->out);
}

static void policy(replay_t *w, const char *name)
{
    acc_fusion_opts_t o;
    acc_fusion_info_t info;
    acc_tune_config_t c;
    acc_tune_space_t space;
    char scaled_db[4200];
    const char *from = "online";
    double *ms = NULL;
    int tuned = 0, iters = 0;

    acc_fusion_opts_init(&o);
    o.model = w->t->key.model;
    o.network = w->r->network;
    /* What a job of the profile would say of itself, should it record (ACC_RECORD). */
    o.batch = w->t->compute->batch;
    o.precision = w->t->compute->precision;
    if (!strcmp(name, "record")) {
        record_policy(w);
        return;
    }
    if (!strcmp(name, "online")) {
        o.online = 1;
        if (w->scale < 1 && online_scaled(w, &o, &c, &space, scaled_db, sizeof(scaled_db)) != 0)
            return;
    } else if (fixed_config(w, name, &c, &from)) {
        w->missing = 1;
        return;
    } else {
        scale_config(w, &c);
        o.config = &c;
        o.online = -1;
    }
    if (run(w, &o, w->r->iters, &ms, &iters, &tuned, &info) != ACC_OK) {
        fprintf(stderr, "acc-bench: rank %d: %s: %s\n", acc_comm_rank(w->comm), name,
                acc_error_message());
        w->failed = 1;
    } else {
        if (!strcmp(name, "online"))
            from = acc_fusion_source_name(info.source);
        row(w, name, ms, iters, tuned, &info, from);
    }
    acc_mem_free(ms);
}

static void header(replay_t *w)
{
    const acc_profile_compute_t *c = w->compute;
    if (!w->out)
        return;
    fprintf(w->out,
            "# acc-bench --model %s --runtime %s: %d ranks, each a process; %s, %s, batch %d%s: "
            "%.3f ms of compute per iteration\n",
            w->profile->name, acc_backend_name(acc_comm_backend(w->comm)), acc_comm_size(w->comm),
            c->gpu, c->precision, c->batch, c->accumulation > 1 ? " accumulated" : "",
            c->accumulation * c->iteration_ms);
    if (w->scale < 1 || w->r->jitter > 1)
        fprintf(w->out,
                "# gradients and fusion sizes x %.6g (%.1f MB of gradients per iteration); ranks "
                "mark runs of %d gradients in orders of their own\n",
                w->scale, (double)acc_profile_grad_bytes(w->profile) / 1e6,
                w->r->jitter > 1 ? w->r->jitter : 1);
    if (c->assumed)
        fprintf(w->out, "# assumed: that compute time is %s\n", c->source);
}

static void table_head(replay_t *w)
{
    if (!w->out)
        return;
    fprintf(w->out, "#\n# %-8s %5s  %12s  %10s  %12s  %10s  %s\n", "policy", "iters", "measured ms",
            "exposed ms", "predicted ms", "exposed ms", "settings");
}

/* The model on the topology, found as acc-tune finds it: a job's recording for the topology's
 * GPU in the database (--db, else ACC_DB) wins over a shipped profile. */
static acc_status_t find_target(replay_t *w)
{
    const char *path = w->db ? w->db : acc_setting_str(ACC_SETTING_DB);
    acc_db_t *db = NULL;
    acc_status_t st;

    if (path[0] && acc_db_open(path, ACC_DB_READONLY, &db) != ACC_OK)
        db = NULL; /* no database yet: the shipped profiles and files */
    st = acc_tune_target_load(w->r->model, w->topo, w->r->network, NULL, db, &w->t);
    acc_db_close(db);
    return st;
}

/* One rank: join, find the target, measure the collective, replay every policy, leave. */
static int replay_rank(const bench_comm_t *b, const acc_unique_id_t *id, int rank, FILE *out,
                       void *ctx)
{
    replay_t w;
    acc_comm_opts_t opts;
    acc_itersim_opts_t so;
    char *list = NULL, *tok, *save = NULL;
    int rc;

    memset(&w, 0, sizeof(w));
    w.r = ctx;
    w.out = rank == 0 ? out : NULL;
    w.topo = b->topo ? b->topo : acc_setting_str(ACC_SETTING_TOPO);
    w.db = b->db;
    if ((rc = bench_comm_opts(b, &opts)) != EXIT_OK)
        return rc;
    acc_itersim_opts_init(&so);
    so.sm_contention = 0; /* the host's cores are not a GPU's SMs */
    w.scale = w.r->grad_scale > 0 ? w.r->grad_scale : 1;
    if (acc_comm_init_rank(&w.comm, b->nranks, id, rank, &opts) != ACC_OK ||
        find_target(&w) != ACC_OK ||
        (w.scale < 1 && acc_profile_scale(w.t->profile, w.scale, &w.scaled) != ACC_OK)) {
        fprintf(stderr, "acc-bench: rank %d: %s\n", rank, acc_error_message());
        acc_comm_abort(w.comm);
        acc_tune_target_destroy(w.t);
        return EXIT_INPUT;
    }
    w.profile = w.scaled ? w.scaled : w.t->profile;
    w.compute = &w.profile->compute[w.t->compute - w.t->profile->compute];
    header(&w);
    if (calibrate(&w) != ACC_OK || calibrate_copies(&w) != ACC_OK) {
        fprintf(stderr, "acc-bench: rank %d: %s\n", rank, acc_error_message());
        w.failed = 1;
    } else {
        so.copy_gbs = w.copy_gbs;
        so.cast_gbs = w.cast_gbs;
        so.uncast_gbs = w.uncast_gbs;
    }
    if (w.failed || acc_itersim_create(w.profile, w.compute, w.curve, &so, &w.sim) != ACC_OK) {
        fprintf(stderr, "acc-bench: rank %d: %s\n", rank, acc_error_message());
        w.failed = 1;
    }
    table_head(&w);
    if (!w.failed && !(list = acc_mem_strdup(w.r->policies)))
        w.failed = 1;
    for (tok = list ? strtok_r(list, ",", &save) : NULL; tok && !w.failed;
         tok = strtok_r(NULL, ",", &save))
        policy(&w, tok);
    acc_mem_free(list);
    acc_itersim_destroy(w.sim);
    acc_tune_comm_destroy(w.curve);
    acc_profile_destroy(w.scaled);
    acc_tune_target_destroy(w.t);
    if (w.failed) {
        acc_comm_abort(w.comm);
        return EXIT_INPUT;
    }
    return acc_comm_destroy(w.comm) == ACC_OK && !w.missing ? EXIT_OK : EXIT_INPUT;
}

int bench_replay(const bench_comm_t *b, const bench_replay_t *r, FILE *out)
{
    return bench_launch(b, replay_rank, (void *)r, out);
}
