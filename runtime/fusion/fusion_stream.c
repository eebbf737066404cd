/*
 * The streams: a stream is a thread with a communicator of its own (acc_comm_dup), since one
 * communicator runs one call at a time, and on the cuda backend a CUDA stream (its queue) that
 * its calls are queued on.  A stream takes its buckets in order; each is an allreduce in place
 * on the pack buffer (or the caller's buffer), then the unpack into the caller's gradients.
 * When rank 0 decides where buckets end (a cycle), rank 0's stream broadcasts each bucket's
 * range on its control communicator before reducing it and the other ranks' stream receives
 * it there and waits until its own rank has packed those gradients; so every rank reduces the
 * same buckets in the same order on every stream.
 */
#include "fusion_internal.h"

#include <string.h>

/* Wake every thread of the engine (a failure, the end). */
static void wake_all(acc_fusion_t *f)
{
    int s;
    pthread_cond_broadcast(&f->done);
    pthread_cond_broadcast(&f->packed);
    fu_nego_wake(f);
    for (s = 0; s < f->nstreams_made; s++)
        pthread_cond_signal(&f->streams[s].cv);
}

void fu_fail(acc_fusion_t *f, acc_status_t st, const char *msg)
{
    if (f->error != ACC_OK)
        return;
    f->error = st;
    snprintf(f->error_msg, sizeof(f->error_msg), "%s", msg);
    wake_all(f);
}

void fu_packed(acc_fusion_t *f)
{
    if (f->directed && f->rank != 0)
        pthread_cond_broadcast(&f->packed);
}

acc_status_t fu_stream_push(acc_fusion_t *f, int s, const fu_bucket_t *b)
{
    fu_stream_t *x = &f->streams[s];
    if (x->qtail == x->qcap) {
        void *q = x->queue;
        size_t cap = x->qcap;
        /* Slots before qhead are spent: move the live ones down before growing. */
        if (x->qhead > 0) {
            memmove(x->queue, x->queue + x->qhead, (x->qtail - x->qhead) * sizeof(*x->queue));
            x->qtail -= x->qhead;
            x->qhead = 0;
        }
        if (x->qtail == x->qcap &&
            acc_array_reserve(&q, &cap, x->qcap + 1, sizeof(*x->queue)) != ACC_OK) {
            fu_fail(f, ACC_ERR_NOMEM, "fusion engine: out of memory queueing a bucket");
            return ACC_ERR_NOMEM;
        }
        x->queue = q;
        x->qcap = cap;
    }
    x->queue[x->qtail++] = *b;
    pthread_cond_signal(&x->cv);
    return ACC_OK;
}

/* Does rank 0 tell this stream where its buckets end? */
static int follows(const fu_stream_t *x)
{
    return x->f->directed && x->f->rank != 0;
}

static int has_work(const fu_stream_t *x)
{
    if (x->gen <= x->done_gen)
        return 0;
    return follows(x) || x->qhead < x->qtail;
}

/* Rank 0's decision about this stream's next bucket, as two int32s: its gradients. */
static acc_status_t share_range(fu_stream_t *x, fu_bucket_t *b)
{
    int32_t r[2] = {b->first, b->last};
    acc_status_t st = acc_broadcast(r, r, 2, ACC_DT_I32, 0, x->ctl, NULL);
    b->first = r[0];
    b->last = r[1];
    if (st == ACC_OK && b->last >= 0 &&
        (b->first < 0 || b->first >= b->last || (size_t)b->last > x->f->ngrads))
        st = acc_error_set(ACC_ERR_INTERNAL,
                           "fusion engine, stream %d: rank 0 sent the bucket [%d, %d) of %zu "
                           "gradients; were the same gradients registered on every rank?",
                           x->index, (int)b->first, (int)b->last, x->f->ngrads);
    return st;
}

/* Wait until this rank has packed gradients [0, last); ACC_ERR_ABORTED when the engine stops. */
static acc_status_t wait_packed(fu_stream_t *x, size_t last)
{
    acc_fusion_t *f = x->f;
    acc_status_t st = ACC_OK;
    pthread_mutex_lock(&f->lock);
    while (f->prefix < last && !f->quit && f->error == ACC_OK)
        pthread_cond_wait(&f->packed, &f->lock);
    if (f->prefix < last)
        st = acc_error_set(ACC_ERR_ABORTED, "fusion engine, stream %d: stopped", x->index);
    pthread_mutex_unlock(&f->lock);
    return st;
}

/* The reduction of a run of one type: the mean is the backend's AVG (the sum divided once,
 * at the end) unless the values were divided when packed (compressed). */
static acc_redop_t reduction(const acc_fusion_t *f, acc_dtype_t dt, acc_dtype_t wire)
{
    return f->opts.average && wire == dt ? ACC_RED_AVG : ACC_RED_SUM;
}

static acc_status_t run_range(fu_stream_t *x, const fu_bucket_t *b)
{
    acc_fusion_t *f = x->f;
    const fu_grad_t *g0 = fu_bucket_grad(f, b->first);
    uint64_t count = 0;
    acc_status_t st;
    int32_t i;

    if (follows(x) && (st = wait_packed(x, (size_t)b->last)) != ACC_OK)
        return st;
    /* A bucket's gradients lie one after another from its first one's offset. */
    for (i = b->first; i < b->last; i++)
        count += fu_bucket_grad(f, i)->count;
    st = acc_allreduce(f->pack + g0->offset, f->pack + g0->offset, (size_t)count, g0->wire,
                       reduction(f, g0->dt, g0->wire), x->comm, x->q);
    for (i = b->first; i < b->last && st == ACC_OK; i++) {
        const fu_grad_t *g = fu_bucket_grad(f, i);
        if (g->count) /* a gradient of no elements may have no buffer */
            st = f->mem->convert(f, g->user, g->dt, f->pack + g->offset, g->wire, g->count, 1.0,
                                 x->q);
    }
    return st;
}

/* Staging of at least `bytes`; what the old one holds may still be read by the queue. */
static acc_status_t stage_reserve(fu_stream_t *x, size_t bytes)
{
    const fu_mem_t *mem = x->f->mem;
    void *p = NULL;
    acc_status_t st;

    if (bytes <= x->stage_bytes)
        return ACC_OK;
    if ((st = mem->sync(x->q)) != ACC_OK)
        return st;
    mem->free(x->stage);
    x->stage = NULL;
    x->stage_bytes = 0;
    if ((st = mem->alloc(bytes, &p)) != ACC_OK)
        return acc_error_prefix(st, "fusion engine: staging %zu bytes: ", bytes);
    x->stage = p;
    x->stage_bytes = bytes;
    return ACC_OK;
}

/* A buffer of the caller's: in place, or through the stream's staging copy when compressed. */
static acc_status_t run_buffer(fu_stream_t *x, const fu_bucket_t *b)
{
    acc_fusion_t *f = x->f;
    acc_dtype_t wire = acc_compress_dtype(f->cfg.compress, b->dt);
    size_t bytes = (size_t)(b->count * acc_dtype_size(wire));
    acc_status_t st;

    if (wire == b->dt)
        return acc_allreduce(b->buf, b->buf, (size_t)b->count, b->dt, reduction(f, b->dt, wire),
                             x->comm, x->q);
    if ((st = stage_reserve(x, bytes)) != ACC_OK ||
        (st = f->mem->convert(f, x->stage, wire, b->buf, b->dt, b->count,
                              f->opts.average ? 1.0 / f->nranks : 1.0, x->q)) != ACC_OK ||
        (st = acc_allreduce(x->stage, x->stage, (size_t)b->count, wire, ACC_RED_SUM, x->comm,
                            x->q)) != ACC_OK)
        return st;
    return f->mem->convert(f, b->buf, b->dt, x->stage, wire, b->count, 1.0, x->q);
}

/* One bucket of the stream's, from the queue or, when rank 0 decides, from rank 0.  At the
 * end of the iteration, what the stream queued must be done before it says so. */
static acc_status_t run_one(fu_stream_t *x, fu_bucket_t *b)
{
    acc_status_t st = ACC_OK;
    if (x->f->directed && (st = share_range(x, b)) != ACC_OK)
        return st;
    if (b->last < 0)
        return x->f->mem->sync(x->q);
    return b->buf ? run_buffer(x, b) : run_range(x, b);
}

static void *stream_main(void *arg)
{
    fu_stream_t *x = arg;
    acc_fusion_t *f = x->f;
    /* Without its device's context the thread can run nothing: every bucket fails with why. */
    acc_status_t entered = f->mem->enter(f);
    char why[512];

    snprintf(why, sizeof(why), "%s", entered != ACC_OK ? acc_error_message() : "");
    pthread_mutex_lock(&f->lock);
    for (;;) {
        fu_bucket_t b;
        acc_status_t st;
        while (!f->quit && !has_work(x))
            pthread_cond_wait(&x->cv, &f->lock);
        if (f->quit)
            break;
        memset(&b, 0, sizeof(b));
        if (!follows(x))
            b = x->queue[x->qhead++];
        pthread_mutex_unlock(&f->lock);
        st = entered == ACC_OK ? run_one(x, &b) : acc_error_set(entered, "%s", why);
        pthread_mutex_lock(&f->lock);
        if (st != ACC_OK) {
            char msg[512];
            snprintf(msg, sizeof(msg), "stream %d: %s", x->index, acc_error_message());
            fu_fail(f, st, msg);
        }
        if (st == ACC_OK && b.last >= 0)
            f->ran++;
        if (st != ACC_OK || b.last < 0) {
            x->qhead = x->qtail = 0;
            x->done_gen = x->gen;
            pthread_cond_signal(&f->done);
        }
    }
    pthread_mutex_unlock(&f->lock);
    return NULL;
}

/* Free what open_stream made (abort: do not wait for the peers, which may be gone). */
static void close_stream(fu_stream_t *x, int abort)
{
    const fu_mem_t *mem = x->f->mem;
    if (x->ctl != x->comm) {
        if (abort)
            acc_comm_abort(x->ctl);
        else
            acc_comm_destroy(x->ctl);
    }
    if (abort)
        acc_comm_abort(x->comm);
    else
        acc_comm_destroy(x->comm);
    x->comm = x->ctl = NULL;
    mem->free(x->stage);
    x->stage = NULL;
    mem->queue_destroy(x->q);
    x->q = NULL;
    acc_mem_free(x->queue);
    x->queue = NULL;
}

/* Stream f->nstreams_made: its communicators (collective), its queue and its thread. */
static acc_status_t open_stream(acc_fusion_t *f)
{
    fu_stream_t *x = &f->streams[f->nstreams_made];
    acc_status_t st;

    memset(x, 0, sizeof(*x));
    x->f = f;
    x->index = f->nstreams_made;
    if ((st = acc_comm_dup(f->comm, &x->comm)) != ACC_OK)
        return acc_error_prefix(st, "fusion engine, stream %d: ", x->index);
    /* Bucket ranges are host memory, which only a host-backend communicator takes. */
    x->ctl = x->comm;
    if (acc_comm_backend(x->comm) != ACC_BACKEND_HOST &&
        (st = comm_dup_host(f->comm, &x->ctl)) != ACC_OK) {
        x->ctl = x->comm;
        goto out;
    }
    /* Every rank hears of a queue that one rank could not make. */
    if ((st = comm_agree(x->ctl, f->mem->queue_create(&x->q), "making a stream's queue")) != ACC_OK)
        goto out;
    pthread_cond_init(&x->cv, NULL);
    if (pthread_create(&x->thread, NULL, stream_main, x) != 0) {
        pthread_cond_destroy(&x->cv);
        st = acc_error_set(ACC_ERR_SYSTEM, "cannot start its thread");
        goto out;
    }
    x->running = 1;
    f->nstreams_made++;
    return ACC_OK;
out:
    close_stream(x, 1);
    return acc_error_prefix(st, "fusion engine, stream %d: ", x->index);
}

acc_status_t fu_streams_grow(acc_fusion_t *f, int n)
{
    acc_status_t st;
    while (f->nstreams_made < n)
        if ((st = open_stream(f)) != ACC_OK)
            return st;
    return ACC_OK;
}

void fu_streams_begin(acc_fusion_t *f)
{
    int s;
    for (s = 0; s < f->cfg.streams; s++) {
        f->streams[s].gen = f->gen;
        pthread_cond_signal(&f->streams[s].cv);
    }
}

void fu_streams_wait(acc_fusion_t *f)
{
    int s, busy = 1;
    while (busy) {
        busy = 0;
        for (s = 0; s < f->cfg.streams; s++)
            busy |= f->streams[s].done_gen < f->gen;
        if (busy)
            pthread_cond_wait(&f->done, &f->lock);
    }
}

void fu_streams_stop(acc_fusion_t *f)
{
    int s;
    pthread_mutex_lock(&f->lock);
    f->quit = 1;
    wake_all(f);
    pthread_mutex_unlock(&f->lock);
    for (s = 0; s < f->nstreams_made; s++) {
        fu_stream_t *x = &f->streams[s];
        if (x->running) {
            pthread_join(x->thread, NULL);
            pthread_cond_destroy(&x->cv);
        }
        x->running = 0;
        /* A failed engine's peers may be gone: do not wait for them. */
        close_stream(x, f->error != ACC_OK);
    }
    f->nstreams_made = 0;
}
