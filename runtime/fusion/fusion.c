/*
 * The fusion engine's API: creation, registration, the iteration (the backward pass's start,
 * gradients marked ready, the caller's own buffers, its end) and what the engine tells about
 * itself.  See acc_fusion.h.
 */
#include "fusion_internal.h"

#include <string.h>

void acc_fusion_opts_init(acc_fusion_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->average = 1;
    o->strategy = ACC_SEARCH_BAYES;
}

static acc_status_t check_opts(const acc_fusion_opts_t *o)
{
    if (o->average != 0 && o->average != 1)
        return acc_error_set(ACC_ERR_INVALID, "fusion engine: average is %d; 1 (mean) or 0 (sum)",
                             o->average);
    if (o->online < -1 || o->online > 1)
        return acc_error_set(ACC_ERR_INVALID,
                             "fusion engine: online is %d; 1 (on), -1 (off) or 0 (ACC_TUNE_ONLINE)",
                             o->online);
    if (o->strategy != ACC_SEARCH_BAYES && o->strategy != ACC_SEARCH_GRID)
        return acc_error_set(ACC_ERR_INVALID,
                             "fusion engine: online tuning searches with bayes or grid, not %s",
                             acc_search_strategy_name(o->strategy));
    if (o->budget < 0 || o->warmup < 0 || o->measure_iters < 0)
        return acc_error_set(ACC_ERR_INVALID,
                             "fusion engine: budget %d, warmup %d and measure_iters %d must not "
                             "be negative (0: the default)",
                             o->budget, o->warmup, o->measure_iters);
    if (o->record < -1 || o->record > 1 || o->record_warmup < 0 || o->record_iters < 0 ||
        o->batch < 0)
        return acc_error_set(ACC_ERR_INVALID,
                             "fusion engine: record is %d (1 on, -1 off, 0 ACC_RECORD); "
                             "record_warmup %d, record_iters %d and batch %d must not be "
                             "negative (0: the default)",
                             o->record, o->record_warmup, o->record_iters, o->batch);
    if (o->precision && !acc_profile_precision_valid(o->precision))
        return acc_error_set(ACC_ERR_INVALID,
                             "fusion engine: precision '%s' is not fp32, tf32, fp16 or bf16",
                             o->precision);
    if (o->config)
        return acc_tune_config_check(o->config);
    return o->space ? acc_tune_space_check(o->space) : ACC_OK;
}

/* Copies of what the options borrow. */
typedef struct {
    acc_fusion_t f;
    acc_tune_config_t config;
    acc_tune_space_t space;
} engine_t;

static acc_status_t copy_opts(engine_t *e, const acc_fusion_opts_t *o)
{
    acc_fusion_t *f = &e->f;
    f->opts = *o;
    if (o->config) {
        e->config = *o->config;
        f->opts.config = &e->config;
    }
    if (o->space) {
        e->space = *o->space;
        f->opts.space = &e->space;
    }
    if ((o->model && !(f->model = acc_mem_strdup(o->model))) ||
        (o->network && !(f->network = acc_mem_strdup(o->network))) ||
        (o->db && !(f->db = acc_mem_strdup(o->db))) ||
        (o->precision && !(f->precision = acc_mem_strdup(o->precision))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a fusion engine");
    f->opts.model = f->model;
    f->opts.network = f->network;
    f->opts.db = f->db;
    f->opts.precision = f->precision;
    return ACC_OK;
}

static void engine_free(acc_fusion_t *f)
{
    if (f->error != ACC_OK)
        acc_comm_abort(f->ctl);
    else
        acc_comm_destroy(f->ctl);
    pthread_mutex_destroy(&f->lock);
    pthread_cond_destroy(&f->done);
    pthread_cond_destroy(&f->packed);
    acc_mem_free(f->grads);
    f->mem->free(f->pack);
    f->mem->close(f);
    acc_mem_free(f->model);
    acc_mem_free(f->network);
    acc_mem_free(f->db);
    acc_mem_free(f->precision);
    acc_mem_free(f);
}

acc_status_t acc_fusion_create(acc_comm_t *comm, const acc_fusion_opts_t *opts, acc_fusion_t **out)
{
    acc_fusion_opts_t o;
    engine_t *e;
    acc_fusion_t *f;
    acc_status_t st;

    if (!out || !comm)
        return acc_error_set(ACC_ERR_INVALID, "acc_fusion_create: NULL argument");
    *out = NULL;
    if (opts)
        o = *opts;
    else
        acc_fusion_opts_init(&o);
    if ((st = check_opts(&o)) != ACC_OK)
        return st;
    if (!(e = acc_mem_calloc(1, sizeof(*e))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a fusion engine");
    f = &e->f;
    f->comm = comm;
    f->mem = acc_comm_backend(comm) == ACC_BACKEND_CUDA ? &fu_device_mem : &fu_host_mem;
    f->rank = acc_comm_rank(comm);
    f->nranks = acc_comm_size(comm);
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->done, NULL);
    pthread_cond_init(&f->packed, NULL);
    /* Opening the memory fails on one rank alone (a GPU's): every rank hears of it. */
    if ((st = copy_opts(e, &o)) != ACC_OK || (st = comm_dup_host(comm, &f->ctl)) != ACC_OK ||
        (st = comm_agree(f->ctl, f->mem->open(f), "opening the fusion engine's memory")) !=
            ACC_OK) {
        engine_free(f);
        return acc_error_prefix(st, "creating a fusion engine: ");
    }
    *out = f;
    return ACC_OK;
}

acc_status_t fu_forked(const acc_fusion_t *f, const char *what)
{
    if (!comm_forked(f->comm))
        return ACC_OK;
    return acc_error_set(ACC_ERR_INVALID,
                         "%s: the fusion engine belongs to process %d, which forked this one; a "
                         "forked child cannot use its parent's engine",
                         what, f->comm->pid);
}

acc_status_t acc_fusion_register(acc_fusion_t *f, void *grad, size_t count, acc_dtype_t dt,
                                 int *index)
{
    acc_status_t st;
    void *v;
    /* A gradient of no elements (DDP accepts them) may have no buffer. */
    if (!f || (!grad && count))
        return acc_error_set(ACC_ERR_INVALID, "acc_fusion_register: NULL argument");
    if ((st = fu_forked(f, "acc_fusion_register")) != ACC_OK)
        return st;
    if (f->configured || f->external)
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_fusion_register: gradients are registered before the first "
                             "iteration, on an engine that reduces no buffers of the caller's");
    if ((unsigned)dt >= ACC_DT_COUNT || count > SIZE_MAX / 8 || f->ngrads >= (size_t)INT32_MAX)
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_fusion_register: gradient %zu has %zu elements of type %d; "
                             "give a known type and a size whose bytes fit in memory",
                             f->ngrads, count, (int)dt);
    v = f->grads;
    if (acc_array_reserve(&v, &f->gcap, f->ngrads + 1, sizeof(*f->grads)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory registering a gradient");
    f->grads = v;
    memset(&f->grads[f->ngrads], 0, sizeof(*f->grads));
    f->grads[f->ngrads].user = grad;
    f->grads[f->ngrads].count = count;
    f->grads[f->ngrads].dt = dt;
    if (index)
        *index = (int)f->ngrads;
    f->ngrads++;
    return ACC_OK;
}

/* The engine's sticky failure, with its message. */
static acc_status_t failed(const acc_fusion_t *f)
{
    if (f->error == ACC_OK)
        return ACC_OK;
    return acc_error_set(f->error, "fusion engine, rank %d: %s", f->rank, f->error_msg);
}

/* A failure of the main thread's own (packing): sticky, as a stream's, since this rank can no
 * longer take part in the iteration the others run. */
static acc_status_t broke(acc_fusion_t *f, acc_status_t st)
{
    char msg[512];
    snprintf(msg, sizeof(msg), "%s", acc_error_message());
    pthread_mutex_lock(&f->lock);
    fu_fail(f, st, msg);
    pthread_mutex_unlock(&f->lock);
    return failed(f);
}

/* Start an iteration; the first one fixes the configuration (collective). */
static acc_status_t begin(acc_fusion_t *f)
{
    acc_status_t st;
    if (f->in_iter)
        return ACC_OK;
    if (!f->configured) {
        if ((st = fu_configure(f)) != ACC_OK || (st = fu_online_start(f)) != ACC_OK ||
            (st = fu_record_start(f)) != ACC_OK)
            return st;
        f->last_end = acc_now_s();
    }
    pthread_mutex_lock(&f->lock);
    f->gen++;
    f->prefix = f->next_first = 0;
    f->launched = f->ran = 0;
    f->in_iter = 1;
    fu_streams_begin(f);
    fu_nego_begin(f);
    pthread_mutex_unlock(&f->lock);
    return ACC_OK;
}

acc_status_t acc_fusion_ready(acc_fusion_t *f, int index)
{
    double t0 = acc_now_s();
    fu_grad_t *g;
    acc_status_t st;

    if (!f)
        return acc_error_set(ACC_ERR_INVALID, "acc_fusion_ready: NULL engine");
    if ((st = fu_forked(f, "acc_fusion_ready")) != ACC_OK || (st = failed(f)) != ACC_OK)
        return st;
    if (index < 0 || (size_t)index >= f->ngrads)
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_fusion_ready: gradient %d is not registered (%zu are)", index,
                             f->ngrads);
    if ((st = begin(f)) != ACC_OK)
        return st;
    g = &f->grads[index];
    if (g->gen == f->gen)
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_fusion_ready: gradient %d is already ready in this iteration",
                             index);
    /* Negotiated: marked only, the negotiator packs it with its bucket. */
    if (f->negotiated) {
        pthread_mutex_lock(&f->lock);
        g->gen = f->gen;
        g->ready_s = t0;
        g->zero = 0;
        pthread_mutex_unlock(&f->lock);
        f->spent += acc_now_s() - t0;
        return failed(f);
    }
    /* Packed means in memory: a stream may take the gradient as soon as it is published. */
    if ((st = fu_pack(f, g, 0, f->q)) != ACC_OK || (st = f->mem->sync(f->q)) != ACC_OK)
        return broke(f, st);
    pthread_mutex_lock(&f->lock);
    g->gen = f->gen;
    g->ready_s = t0;
    while (f->prefix < f->ngrads && f->grads[f->prefix].gen == f->gen)
        f->prefix++;
    fu_packed(f);
    fu_plan(f, 0, acc_now_s());
    pthread_mutex_unlock(&f->lock);
    f->spent += acc_now_s() - t0;
    return failed(f);
}

acc_status_t acc_fusion_backward(acc_fusion_t *f)
{
    if (!f)
        return acc_error_set(ACC_ERR_INVALID, "acc_fusion_backward: NULL engine");
    f->backward_s = acc_now_s();
    return ACC_OK;
}

acc_status_t acc_fusion_reduce(acc_fusion_t *f, void *buf, size_t count, acc_dtype_t dt)
{
    double t0 = acc_now_s();
    fu_bucket_t b;
    acc_status_t st;

    if (!f || (!buf && count))
        return acc_error_set(ACC_ERR_INVALID, "acc_fusion_reduce: NULL argument");
    if ((st = fu_forked(f, "acc_fusion_reduce")) != ACC_OK || (st = failed(f)) != ACC_OK)
        return st;
    if (f->ngrads || (unsigned)dt >= ACC_DT_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "acc_fusion_reduce: %s",
                             f->ngrads ? "the engine reduces its registered gradients; a "
                                         "buffer of the caller's needs an engine of its own"
                                       : "unknown data type");
    f->external = 1;
    if ((st = begin(f)) != ACC_OK)
        return st;
    /* An empty buffer is a call that does nothing (it may have no address: a bucket without
     * one is a range of registered gradients to the streams). */
    if (!count)
        return failed(f);
    memset(&b, 0, sizeof(b));
    b.buf = buf;
    b.count = count;
    b.dt = dt;
    pthread_mutex_lock(&f->lock);
    if (fu_stream_push(f, (int)(f->external_calls % (uint64_t)f->cfg.streams), &b) == ACC_OK) {
        f->launched++;
        f->external_calls++;
    }
    pthread_mutex_unlock(&f->lock);
    if (f->rec)
        fu_record_buffer(f, count, dt, t0);
    f->spent += acc_now_s() - t0;
    return failed(f);
}

/* Count the gradients not marked as zero, start everything, wait for every stream. */
static void finish(acc_fusion_t *f)
{
    acc_status_t st = ACC_OK;
    size_t i;
    if (f->negotiated) {
        /* The unmarked count as zeros; the negotiator's last rounds take them. */
        pthread_mutex_lock(&f->lock);
        for (i = 0; i < f->ngrads; i++)
            if (f->grads[i].gen != f->gen) {
                f->grads[i].gen = f->gen;
                f->grads[i].zero = 1;
            }
        fu_streams_wait(f);
        f->in_iter = 0;
        pthread_mutex_unlock(&f->lock);
        return;
    }
    for (i = 0; i < f->ngrads && st == ACC_OK; i++)
        if (f->grads[i].gen != f->gen)
            st = fu_pack(f, &f->grads[i], 1, f->q);
    /* A failure starts nothing more, but the streams still reach the end of the iteration. */
    if (st != ACC_OK || (st = f->mem->sync(f->q)) != ACC_OK)
        broke(f, st);
    pthread_mutex_lock(&f->lock);
    for (i = 0; i < f->ngrads; i++)
        f->grads[i].gen = f->gen;
    f->prefix = f->ngrads;
    fu_packed(f);
    fu_plan(f, 1, acc_now_s());
    fu_streams_wait(f);
    f->in_iter = 0;
    pthread_mutex_unlock(&f->lock);
}

acc_status_t acc_fusion_wait(acc_fusion_t *f)
{
    double t0 = acc_now_s(), end;
    acc_status_t st;

    if (!f)
        return acc_error_set(ACC_ERR_INVALID, "acc_fusion_wait: NULL engine");
    if ((st = fu_forked(f, "acc_fusion_wait")) != ACC_OK || (st = failed(f)) != ACC_OK ||
        (st = begin(f)) != ACC_OK)
        return st;
    if (f->rec)
        fu_record_iteration(f, t0);
    finish(f);
    end = acc_now_s();
    f->spent += end - t0;
    f->iterations++;
    f->last_ms = f->last_end > 0 ? (end - f->last_end) * 1e3 : 0;
    f->last_exposed_ms = f->spent * 1e3;
    f->last_buckets = f->ran;
    f->spent = 0;
    if ((st = failed(f)) != ACC_OK)
        return st;
    if (f->online && (st = fu_online_step(f, f->last_ms, f->last_exposed_ms)) != ACC_OK)
        return st;
    /* What happened between iterations (a new configuration) is no part of the next one. */
    f->last_end = acc_now_s();
    return ACC_OK;
}

acc_status_t acc_fusion_set_config(acc_fusion_t *f, const acc_tune_config_t *config)
{
    acc_tune_config_t c;
    int32_t none = 0;
    acc_status_t st;

    if (!f || !config)
        return acc_error_set(ACC_ERR_INVALID, "acc_fusion_set_config: NULL argument");
    if ((st = fu_forked(f, "acc_fusion_set_config")) != ACC_OK || (st = failed(f)) != ACC_OK)
        return st;
    if (f->in_iter)
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_fusion_set_config: an iteration is in flight; call it after "
                             "acc_fusion_wait");
    if (f->online)
        fu_online_stop(f, 1);
    c = *config;
    st = f->rank == 0 ? acc_tune_config_check(&c) : ACC_OK;
    f->source = ACC_FUSION_FROM_OPTIONS;
    if ((st = fu_share_config(f, st, &c, &none)) != ACC_OK ||
        (st = fu_apply(f, &c, ACC_FUSION_FROM_OPTIONS)) != ACC_OK)
        return st;
    f->last_end = acc_now_s();
    return ACC_OK;
}

acc_status_t acc_fusion_info(const acc_fusion_t *f, acc_fusion_info_t *out)
{
    if (!f || !out)
        return acc_error_set(ACC_ERR_INVALID, "acc_fusion_info: NULL argument");
    memset(out, 0, sizeof(*out));
    if (!f->configured)
        return acc_error_set(ACC_NO_DATA, "the fusion engine is configured when the first "
                                          "iteration starts");
    out->config = f->cfg;
    out->source = f->source;
    out->started_from = f->started_from;
    out->key = f->key;
    out->tuning = f->online != NULL;
    out->iterations = f->iterations;
    out->last_ms = f->last_ms;
    out->last_exposed_ms = f->last_exposed_ms;
    out->buckets = f->last_buckets;
    out->recording = f->recording;
    out->record_ms = f->record_s * 1e3;
    return ACC_OK;
}

acc_status_t acc_fusion_destroy(acc_fusion_t *f)
{
    acc_status_t st = ACC_OK;
    if (!f)
        return ACC_OK;
    /* In a forked child the engine's threads do not exist, and its memory, queues and peers
     * are the parent's: nothing here is this process's to release. */
    if (comm_forked(f->comm))
        return ACC_OK;
    if (f->in_iter && f->error == ACC_OK)
        st = acc_fusion_wait(f);
    if (f->online)
        fu_online_stop(f, f->error == ACC_OK);
    fu_record_stop(f);
    fu_streams_stop(f);
    fu_nego_stop(f);
    engine_free(f);
    return st;
}
