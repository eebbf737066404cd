/*
 * A model profile's training iteration replayed on the fusion engine (acc_fusion.h): the
 * benchmark's and the tests' model of a job.
 */
#include "fusion_internal.h"

#include <stdlib.h>
#include <string.h>

struct acc_fusion_replay {
    acc_fusion_t *f;
    const acc_profile_t *p;
    double pre_ms;      /* forward, and the micro-batches before the last */
    double backward_ms; /* the last micro-batch's backward pass */
    void **grads;       /* one buffer per tensor */
    int window;         /* jitter: runs of this many tensors marked in a rank's own order */
    uint64_t seed, iter;
    int *order;         /* the tensor marked at each moment of this iteration */
    double cur_late_s;  /* the iteration's largest delay of a call behind the timeline */
    double late_ms;     /* what lateness_ms says of the last run */
};

acc_status_t acc_fusion_replay_create(acc_comm_t *comm, const acc_profile_t *profile,
                                      const acc_profile_compute_t *compute,
                                      const acc_fusion_opts_t *opts, acc_fusion_replay_t **out)
{
    acc_fusion_replay_t *r;
    acc_status_t st;
    size_t i;

    if (!out || !comm || !profile || !compute)
        return acc_error_set(ACC_ERR_INVALID, "acc_fusion_replay_create: NULL argument");
    *out = NULL;
    if ((st = acc_profile_check(profile)) != ACC_OK)
        return st;
    if (!(r = acc_mem_calloc(1, sizeof(*r))) ||
        !(r->grads = acc_mem_calloc(profile->ntensors, sizeof(*r->grads)))) {
        acc_mem_free(r);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory replaying %s", profile->name);
    }
    r->p = profile;
    r->backward_ms = acc_profile_backward_ms(compute);
    r->pre_ms = compute->accumulation * compute->iteration_ms - r->backward_ms;
    if ((st = acc_fusion_create(comm, opts, &r->f)) != ACC_OK)
        goto out;
    for (i = 0; i < profile->ntensors && st == ACC_OK; i++) {
        const acc_profile_tensor_t *t = &profile->tensors[i];
        /* Zeros, where the engine's buffers live (device memory on the cuda backend): the
         * values do not matter to the time. */
        if ((st = r->f->mem->alloc((size_t)(t->elems * acc_dtype_size(t->dtype)), &r->grads[i])) !=
            ACC_OK)
            acc_error_prefix(st, "%s's gradient %s: ", profile->name, t->name);
        else
            st = acc_fusion_register(r->f, r->grads[i], (size_t)t->elems, t->dtype, NULL);
    }
out:
    if (st != ACC_OK) {
        acc_fusion_replay_destroy(r);
        return st;
    }
    *out = r;
    return ACC_OK;
}

acc_status_t acc_fusion_replay_destroy(acc_fusion_replay_t *r)
{
    const fu_mem_t *mem;
    acc_status_t st;
    size_t i;
    if (!r)
        return ACC_OK;
    /* The engine may still unpack into the gradients: they go after it. */
    mem = r->f ? r->f->mem : &fu_host_mem;
    st = acc_fusion_destroy(r->f);
    for (i = 0; i < r->p->ntensors; i++)
        mem->free(r->grads[i]);
    acc_mem_free(r->grads);
    acc_mem_free(r->order);
    acc_mem_free(r);
    return st;
}

acc_status_t acc_fusion_replay_set_jitter(acc_fusion_replay_t *r, int window, uint64_t seed)
{
    if (!r || window < 0)
        return acc_error_set(ACC_ERR_INVALID, "acc_fusion_replay_set_jitter: %s",
                             r ? "a negative window" : "NULL replay");
    if (window > 1 && !r->order && !(r->order = acc_mem_calloc(r->p->ntensors, sizeof(int))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    r->window = window;
    r->seed = seed;
    return ACC_OK;
}

/* xorshift64*, seeded per rank and iteration */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

/* This iteration's order: the profile's, each run of `window` shuffled (Fisher-Yates). */
static void draw_order(acc_fusion_replay_t *r)
{
    size_t n = r->p->ntensors;
    uint64_t s = (r->seed ^ 0x9e3779b97f4a7c15ull) * (uint64_t)(acc_comm_rank(r->f->comm) + 1) +
                 ++r->iter * 0xbf58476d1ce4e5b9ull;
    for (size_t i = 0; i < n; i++)
        r->order[i] = (int)i;
    for (size_t b = 0; b < n; b += (size_t)r->window) {
        size_t m = n - b < (size_t)r->window ? n - b : (size_t)r->window;
        for (size_t k = m - 1; k > 0; k--) {
            size_t j = (size_t)(next_rand(&s) % (k + 1));
            int t = r->order[b + k];
            r->order[b + k] = r->order[b + j];
            r->order[b + j] = t;
        }
    }
}

acc_fusion_t *acc_fusion_replay_engine(acc_fusion_replay_t *r)
{
    return r ? r->f : NULL;
}

double acc_fusion_replay_compute_ms(const acc_fusion_replay_t *r)
{
    return r->pre_ms + r->backward_ms;
}

/* Sleep until t and note how late the moment is once it has come. */
/* Sleep until t and note how late the moment is once it has come. */
static void wait_for(acc_fusion_replay_t *r, double t)
{
    double late;
    acc_sleep_until(t);
    late = acc_now_s() - t;
    if (late > r->cur_late_s)
        r->cur_late_s = late;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

acc_status_t acc_fusion_replay_run(acc_fusion_replay_t *r, int iters, double *ms)
{
    double last = acc_now_s(), worst = 0;
    double *late = iters > 0 ? acc_mem_calloc((size_t)iters, sizeof(double)) : NULL;
    acc_status_t st = ACC_OK;
    int k;

    for (k = 0; k < iters && st == ACC_OK; k++) {
        double bwd = acc_now_s() + r->pre_ms / 1e3;
        size_t i;
        int jitter = r->window > 1 && r->order;
        if (jitter)
            draw_order(r);
        r->cur_late_s = 0;
        wait_for(r, bwd);
        st = acc_fusion_backward(r->f);
        for (i = 0; i < r->p->ntensors && st == ACC_OK; i++) {
            wait_for(r, bwd + r->p->tensors[i].ready * r->backward_ms / 1e3);
            st = acc_fusion_ready(r->f, jitter ? r->order[i] : (int)i);
        }
        /* The backward pass goes on after its last gradient when that one is ready before 1. */
        if (st == ACC_OK) {
            wait_for(r, bwd + r->backward_ms / 1e3);
            st = acc_fusion_wait(r->f);
        }
        if (late)
            late[k] = r->cur_late_s * 1e3;
        if (r->cur_late_s * 1e3 > worst)
            worst = r->cur_late_s * 1e3;
        if (ms) {
            double now = acc_now_s();
            ms[k] = (now - last) * 1e3;
            last = now;
        }
    }
    /* The middle iteration by lateness (for an even count the later of the two); without the
     * room to sort, the largest delay, which bounds it. */
    r->late_ms = worst;
    if (late && k > 0) {
        qsort(late, (size_t)k, sizeof(double), by_value);
        r->late_ms = late[k / 2];
    }
    acc_mem_free(late);
    return st;
}

double acc_fusion_replay_lateness_ms(const acc_fusion_replay_t *r)
{
    return r->late_ms;
}
