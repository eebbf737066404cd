/*
 * Rounds of agreement: the fusion of HOROVOD and NEGOTIATE on registered gradients, for jobs
 * whose ranks finish their gradients in different orders.
 *
 * A thread of the engine's (the negotiator) runs rounds while an iteration lasts, each a cycle
 * after the previous one began: it notes which gradients this rank has marked ready and no
 * bucket has taken (one int32 per gradient, 1 or 0: the runtime has no bitwise AND, and a
 * word per gradient is a few KiB for the largest shipped model), and learns from the other
 * ranks' which are ready everywhere: NEGOTIATE by one allreduce (MIN) that every rank makes
 * together, HOROVOD by Horovod's coordinator, a reduce (MIN) to rank 0 and its broadcast back.
 * Every rank then knows the same set and fuses exactly it: in registration order, per data
 * type, into buckets of at most the fusion size (a larger gradient alone), packed one after
 * another into the pack buffer in the order they were taken (f->order), and queued round robin
 * on the streams; the round that takes the last gradient queues the end of the iteration.
 * Rounds are collective on a host-backend duplicate of the communicator of their own, so the
 * ranks run them in lockstep whatever their clocks, and stop together, at the same round.
 *
 * The main thread only marks gradients (acc_fusion_ready packs nothing under these policies);
 * at the end of the iteration it marks the unmarked ones as zeros, which their bucket packs.
 */
#include "fusion_internal.h"

#include <string.h>
#include <time.h>

struct fu_nego {
    pthread_t thread;
    int running;
    pthread_cond_t cv; /* an iteration begun, the caller's marks all in, the engine stopping */
    acc_comm_t *comm;  /* the rounds' own (host backend) */
    acc_cuda_stream_t q;
    int32_t *mine, *all;  /* per gradient: ready here and untaken / ready everywhere */
    unsigned char *taken; /* per gradient: in a bucket this iteration */
    size_t *bucket;       /* a round's buckets: where each starts in f->order, then the end */
    uint64_t gen;         /* the iteration to work on */
    uint64_t done_gen;    /* the last iteration whose end it queued */
};

/* Sleep on the negotiator's condition until `until` (acc_now_s's clock) or a signal; with
 * f->lock held. */
static void wait_until(acc_fusion_t *f, double until)
{
    struct timespec ts;
    double now = acc_now_s(), real;
    if (until <= now)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    real = (double)ts.tv_sec + ts.tv_nsec / 1e9 + (until - now);
    ts.tv_sec = (time_t)real;
    ts.tv_nsec = (long)((real - (double)ts.tv_sec) * 1e9);
    pthread_cond_timedwait(&f->nego->cv, &f->lock, &ts);
}

/* This round's answer from every rank: which gradients are ready everywhere (ng->all). */
static acc_status_t exchange(acc_fusion_t *f)
{
    fu_nego_t *ng = f->nego;
    size_t n = f->ngrads;
    acc_status_t st;

    if (f->cfg.policy == ACC_FUSION_NEGOTIATE)
        return acc_allreduce(ng->mine, ng->all, n, ACC_DT_I32, ACC_RED_MIN, ng->comm, NULL);
    if ((st = acc_reduce(ng->mine, ng->all, n, ACC_DT_I32, ACC_RED_MIN, 0, ng->comm, NULL)) !=
        ACC_OK)
        return st;
    return acc_broadcast(ng->all, ng->all, n, ACC_DT_I32, 0, ng->comm, NULL);
}

/* Fuse what this round found ready everywhere: buckets per data type in registration order,
 * each gradient packed from the caller's buffer (zeros for the unmarked) at *off on in the
 * order taken (*pos of them so far this iteration); then, once packed, every bucket queued. */
static acc_status_t take(acc_fusion_t *f, size_t *pos, size_t *off)
{
    fu_nego_t *ng = f->nego;
    size_t nb = 0;
    acc_status_t st = ACC_OK;

    for (int dt = 0; dt < ACC_DT_COUNT && st == ACC_OK; dt++) {
        uint64_t bytes = 0;
        int open = 0;
        for (size_t i = 0; i < f->ngrads && st == ACC_OK; i++) {
            fu_grad_t *g = &f->grads[i];
            uint64_t gb = g->count * acc_dtype_size(g->dt);
            if (ng->taken[i] || ng->all[i] != 1 || (int)g->dt != dt)
                continue;
            if (!open || bytes + gb > f->cfg.fusion_bytes) {
                /* A bucket starts here, aligned; its gradients follow one another. */
                ng->bucket[nb++] = *pos;
                *off = (*off + FU_PACK_ALIGN - 1) / FU_PACK_ALIGN * FU_PACK_ALIGN;
                bytes = 0;
                open = 1;
            }
            bytes += gb;
            ng->taken[i] = 1;
            f->order[(*pos)++] = (int32_t)i;
            g->offset = *off;
            *off += (size_t)(g->count * acc_dtype_size(g->wire));
            st = fu_pack(f, g, g->zero, ng->q);
        }
    }
    /* Packed means in memory: a stream may take a bucket as soon as it is queued. */
    if (st == ACC_OK)
        st = f->mem->sync(ng->q);
    ng->bucket[nb] = *pos;
    pthread_mutex_lock(&f->lock);
    for (size_t b = 0; b < nb && st == ACC_OK && f->error == ACC_OK; b++)
        fu_launch(f, ng->bucket[b], ng->bucket[b + 1]);
    pthread_mutex_unlock(&f->lock);
    return st;
}

/* One iteration's rounds, until every gradient is taken; the end of the iteration is queued on
 * every stream whatever happened, so that they reach it. */
static acc_status_t iterate(acc_fusion_t *f, uint64_t gen)
{
    fu_nego_t *ng = f->nego;
    size_t pos = 0, off = 0;
    double round = acc_now_s();
    acc_status_t st = ACC_OK;

    memset(ng->taken, 0, f->ngrads);
    while (pos < f->ngrads && st == ACC_OK) {
        pthread_mutex_lock(&f->lock);
        /* The first round a cycle into the iteration, every next a cycle after the last one
         * began (the simulator's rounds) */
        round += f->cfg.cycle_ms / 1e3;
        while (!f->quit && f->error == ACC_OK && acc_now_s() < round)
            wait_until(f, round);
        round = acc_now_s() > round ? acc_now_s() : round;
        for (size_t i = 0; i < f->ngrads; i++)
            ng->mine[i] = !ng->taken[i] && f->grads[i].gen == gen;
        if (f->quit || f->error != ACC_OK)
            st = acc_error_set(ACC_ERR_ABORTED, "fusion engine: stopped");
        pthread_mutex_unlock(&f->lock);
        if (st == ACC_OK && (st = exchange(f)) == ACC_OK)
            st = take(f, &pos, &off);
    }
    pthread_mutex_lock(&f->lock);
    if (st != ACC_OK && st != ACC_ERR_ABORTED) {
        char msg[512];
        snprintf(msg, sizeof(msg), "negotiation: %s", acc_error_message());
        fu_fail(f, st, msg);
    }
    fu_plan_end(f);
    ng->done_gen = gen;
    pthread_mutex_unlock(&f->lock);
    return st;
}

static void *nego_main(void *arg)
{
    acc_fusion_t *f = arg;
    fu_nego_t *ng = f->nego;
    acc_status_t entered = f->mem->enter(f);

    pthread_mutex_lock(&f->lock);
    for (;;) {
        uint64_t gen;
        while (!f->quit && ng->gen <= ng->done_gen)
            pthread_cond_wait(&ng->cv, &f->lock);
        if (f->quit)
            break;
        gen = ng->gen;
        if (entered != ACC_OK) {
            fu_fail(f, entered, "negotiation: the device could not be entered");
            fu_plan_end(f);
            ng->done_gen = gen;
            continue;
        }
        pthread_mutex_unlock(&f->lock);
        iterate(f, gen);
        pthread_mutex_lock(&f->lock);
    }
    pthread_mutex_unlock(&f->lock);
    return NULL;
}

acc_status_t fu_nego_start(acc_fusion_t *f)
{
    fu_nego_t *ng;
    acc_status_t st;

    if (f->nego)
        return ACC_OK;
    if (!(ng = acc_mem_calloc(1, sizeof(*ng))) ||
        !(ng->mine = acc_mem_calloc(f->ngrads + 1, sizeof(int32_t))) ||
        !(ng->all = acc_mem_calloc(f->ngrads + 1, sizeof(int32_t))) ||
        !(ng->taken = acc_mem_calloc(f->ngrads + 1, 1)) ||
        !(ng->bucket = acc_mem_calloc(f->ngrads + 2, sizeof(size_t))) ||
        !(f->order = acc_mem_calloc(f->ngrads + 1, sizeof(int32_t)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for the negotiation");
        goto out;
    }
    f->nego = ng;
    /* Every rank hears of a queue or a communicator one rank could not make. */
    if ((st = comm_dup_host(f->comm, &ng->comm)) != ACC_OK ||
        (st = comm_agree(ng->comm, f->mem->queue_create(&ng->q),
                         "making the negotiation's "
                         "queue")) != ACC_OK)
        goto out;
    pthread_cond_init(&ng->cv, NULL);
    if (pthread_create(&ng->thread, NULL, nego_main, f) != 0) {
        pthread_cond_destroy(&ng->cv);
        st = acc_error_set(ACC_ERR_SYSTEM, "cannot start the negotiation's thread");
        goto out;
    }
    ng->running = 1;
    return ACC_OK;
out:
    fu_nego_stop(f);
    return acc_error_prefix(st, "fusion engine: ");
}

void fu_nego_begin(acc_fusion_t *f)
{
    if (!f->nego || !f->negotiated)
        return;
    f->nego->gen = f->gen;
    pthread_cond_signal(&f->nego->cv);
}

void fu_nego_wake(acc_fusion_t *f)
{
    if (f->nego && f->nego->running)
        pthread_cond_signal(&f->nego->cv);
}

void fu_nego_stop(acc_fusion_t *f)
{
    fu_nego_t *ng = f->nego;
    if (!ng)
        return;
    if (ng->running) {
        pthread_mutex_lock(&f->lock);
        f->quit = 1;
        pthread_cond_signal(&ng->cv);
        pthread_mutex_unlock(&f->lock);
        /* A round waiting for a failed peer gives up at once. */
        if (f->error != ACC_OK && ng->comm)
            __atomic_store_n(&ng->comm->abort, 1, __ATOMIC_RELEASE);
        pthread_join(ng->thread, NULL);
        pthread_cond_destroy(&ng->cv);
    }
    if (f->error != ACC_OK)
        acc_comm_abort(ng->comm);
    else
        acc_comm_destroy(ng->comm);
    f->mem->queue_destroy(ng->q);
    acc_mem_free(ng->mine);
    acc_mem_free(ng->all);
    acc_mem_free(ng->taken);
    acc_mem_free(ng->bucket);
    acc_mem_free(ng);
    acc_mem_free(f->order);
    f->order = NULL;
    f->nego = NULL;
}
