/*
 * Recording the job's own model profile (acc_fusion.h, "Recording"): rank 0 takes notes during
 * a few iterations after warm-up - when the backward pass began, when each gradient was marked
 * ready (acc_fusion_ready keeps that moment anyway) or each buffer of the caller's was handed
 * over, when the backward pass ended, and when the previous iteration had - and once it has
 * enough, a thread of its own turns the medians into a profile and stores it in the database
 * as the recording of the job's model.  The job's own calls only read the clock and copy one
 * number per gradient per recorded iteration; the arithmetic, the text and the database are
 * the thread's, so that a slow or locked database file never holds an iteration up.
 */
#include "fusion_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_WARMUP 2
#define DEFAULT_ITERS  5
/* DDP rebuilds its buckets once, after its first iteration; a job whose buffers keep changing
 * has no timeline to record.  Start again at a change, this many times record_iters at most. */
#define MAX_RESTARTS 4

typedef struct {
    uint64_t count;
    acc_dtype_t dt;
    double t;
} rec_buffer_t;

struct fu_record {
    int warmup, iters;
    int seen;     /* iterations ended since recording began, warm-up included */
    int restarts; /* times the caller's buffers changed */
    int done;     /* the notes are complete; the thread has them */
    /* the list recorded: the registered gradients (counts NULL), or the buffers of the first
     * recorded iteration */
    size_t n;
    uint64_t *counts;
    acc_dtype_t *dts;
    /* the buffers of the iteration in flight */
    rec_buffer_t *cur;
    size_t ncur, curcap;
    /* the notes: iteration k's gradient i was ready at ready[k * n + i] (a fraction of the
     * backward pass), after forward_ms[k] and within backward_ms[k] */
    double *ready, *forward_ms, *backward_ms;
    int nsamples;
    int marked; /* every recorded iteration's backward pass began with acc_fusion_backward */
    /* what the profile and its record say about where it was recorded */
    char gpu[96]; /* the compute entry's GPU: a name acc knows or sm_NN; "" none known */
    int sm;
    char device[96];
    char host[ACC_DB_NAME_MAX];
    char db_path[4096];
    char name[ACC_DB_NAME_MAX]; /* the key's model when the engine made a key; "" otherwise */
    /* the storing thread */
    pthread_t thread;
    int thread_started;
};

/* ---- getting ready (rank 0) ------------------------------------------------------------- */

/* What computes: the GPU on the cuda backend; on the host backend the topology's GPU, which the
 * CPU stands in for.  gpu is what the compute entry names, resolvable by the profile loader. */
static void find_device(acc_fusion_t *f, fu_record_t *r)
{
    acc_cuda_info_t info;
    int dev = rt_cuda_comm_device(f->comm);

    if (dev >= 0 && acc_cuda_info(dev, &info) == ACC_OK) {
        snprintf(r->device, sizeof(r->device), "%s", info.name);
        r->sm = info.sm;
        if (acc_topo_gpu_model_by_name(info.name))
            snprintf(r->gpu, sizeof(r->gpu), "%s", info.name);
    } else {
        if (dev >= 0)
            snprintf(r->device, sizeof(r->device), "GPU %d", dev);
        else
            snprintf(r->device, sizeof(r->device), "CPU (%s backend)",
                     acc_backend_name(acc_comm_backend(f->comm)));
        r->sm = acc_profile_topo_sm(f->comm->topo);
    }
    if (!r->gpu[0] && r->sm && acc_topo_gpu_arch(r->sm))
        snprintf(r->gpu, sizeof(r->gpu), "sm_%d", r->sm);
    if (!r->gpu[0])
        r->sm = 0;
}

static void record_free(fu_record_t *r)
{
    if (!r)
        return;
    acc_mem_free(r->counts);
    acc_mem_free(r->dts);
    acc_mem_free(r->cur);
    acc_mem_free(r->ready);
    acc_mem_free(r->forward_ms);
    acc_mem_free(r->backward_ms);
    acc_mem_free(r);
}

/* Rank 0's notes, or NULL with a warning saying why the job goes on without them. */
static fu_record_t *record_new(acc_fusion_t *f)
{
    const char *path = fu_db_path(f);
    fu_record_t *r;

    if (!path) {
        ACC_WARN(RUNTIME, "fusion engine: not recording the job's profile: there is no database "
                          "to store it in (set ACC_DB)");
        return NULL;
    }
    int iters = f->opts.record_iters ? f->opts.record_iters : DEFAULT_ITERS;

    if (!(r = acc_mem_calloc(1, sizeof(*r))) ||
        !(r->forward_ms = acc_mem_calloc((size_t)iters, sizeof(double))) ||
        !(r->backward_ms = acc_mem_calloc((size_t)iters, sizeof(double)))) {
        record_free(r);
        ACC_WARN(RUNTIME, "fusion engine: not recording the job's profile: out of memory");
        return NULL;
    }
    r->warmup = f->opts.record_warmup ? f->opts.record_warmup : DEFAULT_WARMUP;
    r->iters = iters;
    r->marked = 1;
    snprintf(r->db_path, sizeof(r->db_path), "%s", path);
    if (gethostname(r->host, sizeof(r->host) - 1) != 0)
        snprintf(r->host, sizeof(r->host), "?");
    find_device(f, r);
    return r;
}

acc_status_t fu_record_start(acc_fusion_t *f)
{
    int32_t v[2] = {ACC_OK, 0};
    int64_t env = 0;
    char msg[256] = "ACC_RECORD is not 0 or 1";
    acc_status_t st;

    if (f->rank == 0) {
        if (f->opts.record)
            v[1] = f->opts.record > 0;
        else if ((v[0] = acc_setting_int(ACC_SETTING_RECORD, &env)) == ACC_OK && env != 0 &&
                 env != 1)
            v[0] = acc_error_set(ACC_ERR_INVALID, "ACC_RECORD=%lld is not 0 or 1", (long long)env);
        else
            v[1] = env == 1;
        if (v[0] == ACC_OK && v[1] && !(f->rec = record_new(f)))
            v[1] = 0;
        if (v[0] != ACC_OK)
            snprintf(msg, sizeof(msg), "%s", acc_error_message());
    }
    if ((st = acc_broadcast(v, v, 2, ACC_DT_I32, 0, f->ctl, NULL)) != ACC_OK)
        return acc_error_prefix(st, "fusion engine, rank %d: sharing whether to record: ", f->rank);
    if (v[0] != ACC_OK)
        return acc_error_set((acc_status_t)v[0], "fusion engine%s: %s",
                             f->rank ? " (rank 0's setting)" : "", msg);
    f->recording = v[1];
    return ACC_OK;
}

/* ---- taking notes (rank 0, the job's thread) --------------------------------------------- */

void fu_record_buffer(acc_fusion_t *f, uint64_t count, acc_dtype_t dt, double t)
{
    fu_record_t *r = f->rec;
    double t0 = acc_now_s();
    void *v = r->cur;

    if (r->done)
        return;
    if (acc_array_reserve(&v, &r->curcap, r->ncur + 1, sizeof(*r->cur)) == ACC_OK) {
        r->cur = v;
        r->cur[r->ncur].count = count;
        r->cur[r->ncur].dt = dt;
        r->cur[r->ncur].t = t;
    } else {
        r->cur = v;
    }
    r->ncur++; /* beyond curcap: the iteration cannot be noted (see same_buffers) */
    f->record_s += acc_now_s() - t0;
}

/* Start the notes again with this iteration's buffers as the list; 0 when out of memory. */
static int restart(fu_record_t *r, size_t n)
{
    size_t i;
    acc_mem_free(r->counts);
    acc_mem_free(r->dts);
    acc_mem_free(r->ready);
    r->counts = acc_mem_calloc(n, sizeof(*r->counts));
    r->dts = acc_mem_calloc(n, sizeof(*r->dts));
    r->ready = acc_mem_calloc(n * (size_t)r->iters, sizeof(double));
    r->n = n;
    r->nsamples = 0;
    if (!r->counts || !r->dts || !r->ready)
        return 0;
    for (i = 0; i < n; i++) {
        r->counts[i] = r->cur[i].count;
        r->dts[i] = r->cur[i].dt;
    }
    return 1;
}

static int same_buffers(const fu_record_t *r)
{
    size_t i;
    if (r->ncur != r->n || r->ncur > r->curcap)
        return 0;
    for (i = 0; i < r->n; i++)
        if (r->cur[i].count != r->counts[i] || r->cur[i].dt != r->dts[i])
            return 0;
    return 1;
}

/* The list of this iteration: the registered gradients, or the caller's buffers, which must be
 * those of the iterations noted before; 0 when the iteration cannot be noted. */
static int this_list(acc_fusion_t *f, fu_record_t *r)
{
    if (!f->external) {
        if (!r->ready && (r->n = f->ngrads) &&
            !(r->ready = acc_mem_calloc(r->n * (size_t)r->iters, sizeof(double))))
            return 0;
        return r->n > 0;
    }
    if (!r->ncur || r->ncur > r->curcap)
        return 0;
    if (r->ready && same_buffers(r))
        return 1;
    if (r->ready && ++r->restarts > MAX_RESTARTS * r->iters) {
        ACC_WARN(RUNTIME,
                 "fusion engine: not recording the job's profile: the buffers handed "
                 "over changed %d times; record a job whose buffers settle",
                 r->restarts - 1);
        r->done = 1;
        f->recording = 0;
        return 0;
    }
    if (!restart(r, r->ncur)) {
        ACC_WARN(RUNTIME, "fusion engine: not recording the job's profile: out of memory");
        r->done = 1;
        f->recording = 0;
        return 0;
    }
    return 1;
}

static void *store_main(void *arg);

/* Note iteration r->nsamples, ended at t. */
static void note(acc_fusion_t *f, fu_record_t *r, double t)
{
    double *ready = &r->ready[(size_t)r->nsamples * r->n];
    double first = t, bwd, span;
    int marked = f->backward_s > f->last_end && f->backward_s <= t;
    size_t i;

    for (i = 0; i < r->n; i++) {
        /* A gradient not marked in this iteration counts as ready at its end. */
        ready[i] = f->external ? r->cur[i].t : f->grads[i].gen == f->gen ? f->grads[i].ready_s : t;
        if (ready[i] < first)
            first = ready[i];
    }
    bwd = marked && f->backward_s < first ? f->backward_s : first;
    r->marked &= marked;
    span = t - bwd;
    for (i = 0; i < r->n; i++)
        ready[i] = span > 0 ? fmin(1.0, fmax(0.0, (ready[i] - bwd) / span)) : 1.0;
    r->forward_ms[r->nsamples] =
        f->last_end > 0 && bwd > f->last_end ? (bwd - f->last_end) * 1e3 : 0;
    r->backward_ms[r->nsamples] = span * 1e3;
    r->nsamples++;
}

void fu_record_iteration(acc_fusion_t *f, double t)
{
    fu_record_t *r = f->rec;
    double t0 = acc_now_s();

    if (r->done)
        return;
    if (r->seen++ >= r->warmup && this_list(f, r)) {
        note(f, r, t);
        if (r->nsamples == r->iters) {
            r->done = 1;
            /* The thread must not read the key, which online tuning may rewrite meanwhile. */
            snprintf(r->name, sizeof(r->name), "%s", f->key.model);
            if (pthread_create(&r->thread, NULL, store_main, f) == 0) {
                r->thread_started = 1;
                f->recording = 2;
            } else {
                ACC_WARN(RUNTIME, "fusion engine: the job's profile was recorded but not "
                                  "stored: no thread to store it");
            }
        }
    }
    r->ncur = 0;
    f->record_s += acc_now_s() - t0;
}

void fu_record_stop(acc_fusion_t *f)
{
    fu_record_t *r = f->rec;
    if (!r)
        return;
    if (r->thread_started)
        pthread_join(r->thread, NULL);
    f->rec = NULL;
    record_free(r);
}

/* ---- the profile (the storing thread) ---------------------------------------------------- */

/* v rounded to 1/per: k / per is the double nearest the decimal, which the profile's text then
 * prints as such (0.439815, not 0.43981499999999996). */
static double round_to(double v, double per)
{
    return floor(v * per + 0.5) / per;
}

typedef struct {
    double ready;
    size_t index;
} order_t;

static int by_ready(const void *a, const void *b)
{
    const order_t *x = a, *y = b;
    if (x->ready != y->ready)
        return x->ready < y->ready ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* The precision option, else what the gradients' type says. */
static const char *precision_of(const acc_fusion_t *f, const fu_record_t *r)
{
    acc_dtype_t first;
    size_t i;
    if (f->precision)
        return f->precision;
    first = r->counts ? r->dts[0] : f->grads[0].dt;
    for (i = 1; i < r->n; i++)
        if ((r->counts ? r->dts[i] : f->grads[i].dt) != first)
            return "fp32";
    return first == ACC_DT_F16 ? "fp16" : first == ACC_DT_BF16 ? "bf16" : "fp32";
}

static acc_status_t add_compute(const acc_fusion_t *f, fu_record_t *r, acc_profile_t *p)
{
    acc_profile_compute_t c;
    double fwd = acc_median(r->forward_ms, (size_t)r->nsamples);
    double bwd = acc_median(r->backward_ms, (size_t)r->nsamples);
    char source[1024], date[40] = "?", stand_in[128] = "", batch[32] = "batch not given";
    struct tm tm;
    time_t now = time(NULL);

    if (!r->gpu[0])
        return ACC_OK; /* nothing says which GPU computed: no entry rather than a guess */
    memset(&c, 0, sizeof(c));
    c.gpu = r->gpu;
    c.precision = (char *)precision_of(f, r);
    c.batch = f->opts.batch ? f->opts.batch : 1;
    c.accumulation = 1;
    /* Microseconds, as the clock means them; both parts at least one. */
    c.forward_ms = fmax(round_to(fwd, 1e3), 1e-3);
    c.iteration_ms = round_to(c.forward_ms + fmax(round_to(bwd, 1e3), 1e-3), 1e3);
    if (gmtime_r(&now, &tm))
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm);
    if (f->opts.batch)
        snprintf(batch, sizeof(batch), "batch %d", f->opts.batch);
    if (acc_comm_backend(f->comm) != ACC_BACKEND_CUDA)
        snprintf(stand_in, sizeof(stand_in), ", standing in for %s", r->gpu);
    snprintf(source, sizeof(source),
             "recorded by acc %s's fusion engine on %s (%s, %s backend, %d ranks%s), %s: median "
             "of %d iterations after %d of warm-up; backward pass from %s to acc_fusion_wait; "
             "%s",
             ACC_VERSION_STRING, r->host, r->device, acc_backend_name(acc_comm_backend(f->comm)),
             f->nranks, stand_in, date, r->nsamples, r->warmup,
             r->marked ? "acc_fusion_backward"
                       : "the first gradient (acc_fusion_backward not called)",
             batch);
    c.source = source;
    return acc_profile_add_compute(p, &c);
}

/* The medians of the notes as a profile named `name`. */
static acc_status_t build(const acc_fusion_t *f, fu_record_t *r, const char *name,
                          acc_profile_t **out)
{
    acc_profile_t *p = NULL;
    order_t *order = acc_mem_calloc(r->n, sizeof(*order));
    double *v = acc_mem_calloc((size_t)r->nsamples, sizeof(double));
    acc_status_t st;
    size_t i;
    int k;

    if (!order || !v) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory building the recorded profile");
        goto out;
    }
    for (i = 0; i < r->n; i++) {
        for (k = 0; k < r->nsamples; k++)
            v[k] = r->ready[(size_t)k * r->n + i];
        order[i].ready = acc_median(v, (size_t)r->nsamples);
        order[i].index = i;
    }
    /* Listed in the order the gradients became ready, as a profile lists them. */
    qsort(order, r->n, sizeof(*order), by_ready);
    if ((st = acc_profile_create(name, &p)) != ACC_OK ||
        (st = acc_profile_set_description(
             p, "the gradient timeline of a training job, recorded by acc's fusion engine")) !=
            ACC_OK)
        goto out;
    for (i = 0; i < r->n && st == ACC_OK; i++) {
        size_t g = order[i].index;
        char tname[32];
        /* counts: the caller's buffers (f->external, which the job's calls keep writing). */
        snprintf(tname, sizeof(tname), "%s%zu", r->counts ? "buffer" : "grad", g);
        st = acc_profile_add_tensor(p, tname, r->counts ? r->counts[g] : f->grads[g].count,
                                    r->counts ? r->dts[g] : f->grads[g].dt,
                                    round_to(order[i].ready, 1e6));
    }
    if (st == ACC_OK)
        st = add_compute(f, r, p);
    if (st == ACC_OK)
        st = acc_profile_check(p);
out:
    acc_mem_free(order);
    acc_mem_free(v);
    if (st != ACC_OK) {
        acc_profile_destroy(p);
        p = NULL;
    }
    *out = p;
    return st;
}

static void *store_main(void *arg)
{
    acc_fusion_t *f = arg;
    fu_record_t *r = f->rec;
    char name[ACC_DB_NAME_MAX];
    acc_profile_t *p = NULL;
    acc_db_recorded_t rec;
    acc_db_t *db = NULL;
    acc_status_t st;

    /* The key's model when the engine looked its optimum up, else the same name made now. */
    if (r->name[0])
        snprintf(name, sizeof(name), "%s", r->name);
    else if ((st = fu_model_name(f, r->counts, r->dts, r->n, name, sizeof(name))) != ACC_OK)
        goto out;
    if ((st = build(f, r, name, &p)) != ACC_OK)
        goto out;
    memset(&rec, 0, sizeof(rec));
    rec.sm = p->ncompute ? r->sm : 0;
    snprintf(rec.device, sizeof(rec.device), "%s", r->device);
    snprintf(rec.host, sizeof(rec.host), "%s", r->host);
    snprintf(rec.backend, sizeof(rec.backend), "%s", acc_backend_name(acc_comm_backend(f->comm)));
    rec.ranks = f->nranks;
    rec.batch = f->opts.batch;
    rec.iterations = r->nsamples;
    if ((st = acc_db_open(r->db_path, 0, &db)) == ACC_OK &&
        (st = acc_profile_put_recorded(db, p, &rec)) == ACC_OK)
        ACC_INFO(RUNTIME,
                 "fusion engine: recorded the profile of %s (%zu gradients, %.3f ms of compute "
                 "on %s) in %s",
                 p->name, p->ntensors, p->ncompute ? p->compute[0].iteration_ms : 0,
                 r->gpu[0] ? r->gpu : "no known GPU", r->db_path);
out:
    if (st != ACC_OK)
        ACC_WARN(RUNTIME, "fusion engine: the job's profile was recorded but not stored: %s",
                 acc_error_message());
    acc_db_close(db);
    acc_profile_destroy(p);
    return NULL;
}
