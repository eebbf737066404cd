/*
 * The cuda backend's face to the communicator: the GPU of each rank, the instance that serves
 * a call and its launch on the caller's stream, NCCL for the rest.  Calls are asynchronous, as
 * NCCL's are: they return once queued on the stream, and a failure inside a launch shows at
 * the next call or through acc_comm_get_async_error.
 */
#include "cuda_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char host[64];
    int32_t device;
} gpu_of_t;

/* A rank's place, as rank 0 works it out: its index among its host's ranks, the first rank on
 * its GPU (same host and device) and how many ranks share that GPU. */
typedef struct {
    int32_t local, first, sharers;
} gpu_place_t;

typedef struct {
    const gpu_of_t *g;
    int rank;
} ranked_t;

static int by_gpu(const void *x, const void *y)
{
    const ranked_t *a = x, *b = y;
    int c = strcmp(a->g->host, b->g->host);
    if (c == 0)
        c = (a->g->device > b->g->device) - (a->g->device < b->g->device);
    return c ? c : (a->rank > b->rank) - (a->rank < b->rank);
}

/* Rank 0: every rank's place from every rank's host and device (-1 before the devices are
 * chosen, when only the index among the host's ranks counts), sorted in O(N log N). */
static acc_status_t places(const gpu_of_t *all, int n, gpu_place_t *place)
{
    ranked_t *v = acc_mem_alloc((size_t)n * sizeof(*v));
    if (!v)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (int r = 0; r < n; r++)
        v[r] = (ranked_t){&all[r], r};
    qsort(v, (size_t)n, sizeof(*v), by_gpu);
    for (int i = 0, host0 = 0, gpu0 = 0; i < n; i++) {
        if (i && strcmp(v[i].g->host, v[i - 1].g->host) != 0)
            host0 = gpu0 = i;
        else if (i && v[i].g->device != v[i - 1].g->device)
            gpu0 = i;
        place[v[i].rank].local = i - host0;
        place[v[i].rank].first = v[gpu0].rank;
        place[v[gpu0].rank].sharers = i - gpu0 + 1;
    }
    for (int i = 0; i < n; i++)
        place[v[i].rank].sharers = place[place[v[i].rank].first].sharers;
    acc_mem_free(v);
    return ACC_OK;
}

/* Rank 0 gathers every rank's host and device, and each rank fetches its place and its node's
 * ranks': O(1) bytes per rank (docs/scale.md). */
static acc_status_t exchange(acc_comm_t *c, const gpu_of_t *mine, gpu_of_t *all, gpu_place_t *place,
                             const int *want, int n)
{
    acc_status_t st = boot_gather(c->boot, mine, sizeof(*mine), all);
    if (st == ACC_OK && c->rank == 0)
        st = places(all, c->nranks, place);
    return st == ACC_OK ? boot_fetch(c->boot, place, sizeof(*place), want, n) : st;
}

/* Which GPU this rank uses - the option, else its index among the ranks of its host modulo the
 * GPUs there - and how many ranks share it; which rank's GPU each rank of its node uses. */
static acc_status_t choose_gpu(acc_comm_t *c, cb_state_t *s)
{
    gpu_of_t mine, *all = c->rank == 0 ? acc_mem_calloc((size_t)c->nranks, sizeof(gpu_of_t)) : NULL;
    gpu_place_t *place = acc_mem_calloc((size_t)c->nranks, sizeof(gpu_place_t));
    int *want = acc_mem_alloc((size_t)c->nranks * sizeof(int)), n = 0, ndev = 0;
    acc_status_t st = rt_cuda_device_count(&ndev);

    if ((c->rank == 0 && !all) || !place || !want ||
        !(s->gpu_of = acc_mem_calloc((size_t)c->nranks, sizeof(int)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    memset(&mine, 0, sizeof(mine));
    gethostname(mine.host, sizeof(mine.host) - 1);
    mine.device = -1;
    want[n++] = c->rank;
    if (st == ACC_OK && ndev < 1)
        st = acc_error_set(ACC_ERR_NO_DEVICE, "the driver sees no GPU");
    if (st == ACC_OK && (st = exchange(c, &mine, all, place, want, n)) == ACC_OK) {
        s->device = c->device_opt >= 0 ? c->device_opt : place[c->rank].local % ndev;
        mine.device = s->device;
        /* A plan the cuda backend runs is one node's: the node's GPUs are all it asks about. */
        for (int r = 0; r < c->nranks; r++)
            if (r != c->rank && c->node_of[r] == c->node_of[c->rank])
                want[n++] = r;
        st = exchange(c, &mine, all, place, want, n);
    }
    if (st == ACC_OK) {
        s->sharers = place[c->rank].sharers;
        for (int r = 0; r < c->nranks; r++)
            s->gpu_of[r] = -1 - r; /* a GPU of its own, as far as this rank can tell */
        for (int i = 0; i < n; i++)
            s->gpu_of[want[i]] = place[want[i]].first;
    }
out:
    acc_mem_free(all);
    acc_mem_free(place);
    acc_mem_free(want);
    return st;
}

static acc_status_t create(acc_comm_t *c, void **state)
{
    cb_state_t *s = acc_mem_calloc(1, sizeof(*s));
    int major = 0, minor = 0;
    acc_status_t st;

    if (!s)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the cuda backend");
    *state = s;
    if ((st = choose_gpu(c, s)) != ACC_OK || (st = acc_cuda_init(s->device)) != ACC_OK ||
        (st = acc_cuda_info(s->device, &s->info)) != ACC_OK)
        return acc_error_prefix(st, "cuda backend, rank %d: ", c->rank);
    snprintf(s->arch, sizeof(s->arch), "sm_%d", s->info.sm);
    if (acc_nvrtc_available() && acc_nvrtc_version(&major, &minor) == ACC_OK)
        snprintf(s->compiler, sizeof(s->compiler), "nvrtc %d.%d", major, minor);
    if ((st = acc_kcache_create(NULL, &s->cache)) != ACC_OK)
        return st;
    return cb_nccl_setup(c, s);
}

static void free_state(cb_state_t *s)
{
    for (size_t i = 0; i < s->ninsts; i++)
        cb_inst_destroy(s->insts[i]);
    acc_kcache_destroy(s->cache);
    acc_mem_free(s->insts);
    acc_mem_free(s->gpu_of);
    acc_mem_free(s);
}

/* Aborted communicators' states, their device memory still allocated. */
static pthread_mutex_t parked_lock = PTHREAD_MUTEX_INITIALIZER;
static cb_state_t *parked;

/* Free the parked states of `device` (every device when -1): its context has been synchronised
 * since they were parked. */
static void free_parked(int device)
{
    cb_state_t *keep = NULL, *p, *next;
    pthread_mutex_lock(&parked_lock);
    p = parked;
    parked = NULL;
    pthread_mutex_unlock(&parked_lock);
    for (; p; p = next) {
        next = p->parked_next;
        if (device < 0 || p->device == device) {
            free_state(p);
        } else {
            p->parked_next = keep;
            keep = p;
        }
    }
    while (keep) {
        next = keep->parked_next;
        pthread_mutex_lock(&parked_lock);
        keep->parked_next = parked;
        parked = keep;
        pthread_mutex_unlock(&parked_lock);
        keep = next;
    }
}

void rt_cuda_reclaim(void)
{
    int devices[64], n = 0;
    pthread_mutex_lock(&parked_lock);
    for (cb_state_t *p = parked; p && n < 64; p = p->parked_next) {
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen |= devices[i] == p->device;
        if (!seen)
            devices[n++] = p->device;
    }
    pthread_mutex_unlock(&parked_lock);
    for (int i = 0; i < n; i++)
        if (acc_cuda_init(devices[i]) == ACC_OK && rt_cuda_sync_all() == ACC_OK)
            free_parked(devices[i]);
}

static void destroy(acc_comm_t *c, void *state, int abort)
{
    cb_state_t *s = state;
    if (!s)
        return;
    if (abort) {
        /* Never wait on the device here: the kernel an abort is meant to end (NCCL's, hung on
         * a peer) would keep a synchronisation - and cuMemFree, which synchronises - from
         * returning.  Peers' and this rank's launches may still touch the memory, so it stays
         * allocated until the context is next synchronised (rt_cuda_reclaim). */
        cb_nccl_teardown(s, 1);
        pthread_mutex_lock(&parked_lock);
        s->parked_next = parked;
        parked = s;
        pthread_mutex_unlock(&parked_lock);
        return;
    }
    /* Every launch of every rank must be over before any allocation goes: peers write into
     * this rank's memory, and this rank into theirs. */
    rt_cuda_sync_all();
    if (c->error == ACC_OK)
        boot_barrier(c->boot);
    cb_nccl_teardown(s, 0);
    free_parked(s->device);
    free_state(s);
}

/* What the cuda backend runs is acc_plan_runs_on's to say: no step between nodes (NCCL's in this
 * version), no more ranks than the launch arguments hold. */
static acc_status_t supports(const acc_comm_t *c, const acc_plan_t *p)
{
    return acc_plan_runs_on(p, ACC_BACKEND_CUDA, c->node_of);
}

/* An in-place call of a plan that reads its input after writing its output there runs on a
 * copy of the input. */
static int needs_copy(const cb_inst_t *in, const rt_call_t *k)
{
    const acc_plan_t *p = in->plan;
    return !in->staged && k->inplace && !p->inplace &&
           (p->coll != ACC_COLL_BROADCAST || k->root == in->rank);
}

/* That copy's buffer, allocated at the first such call - never while the stream is captured
 * into a graph, where allocating is not allowed: that call goes to the fallback (NCCL) and
 * nothing of it has run. */
static acc_status_t copy_buffer(cb_inst_t *in, const rt_call_t *k)
{
    int capturing = 0;
    if (rt_cuda_capturing(k->stream, &capturing) == ACC_OK && capturing)
        return acc_error_set(ACC_ERR_UNSUPPORTED, "the first in-place call of a plan's size "
                                                  "cannot be captured into a graph");
    return acc_cuda_malloc(
        in->cap * in->es *
            (in->plan->coll == ACC_COLL_REDUCE_SCATTER ? (uint64_t)in->plan->nranks : 1),
        &in->tmp_in);
}

/* The instance of (plan, type, reduction) holding count, made or remade collectively. */
static acc_status_t instance(acc_comm_t *c, cb_state_t *s, const acc_plan_t *plan,
                             const rt_call_t *k, cb_inst_t **out)
{
    uint64_t cap = k->count;
    int capturing = 0;
    size_t i;
    acc_status_t st;

    if ((st = comm_refused(c, plan)) != ACC_OK)
        return st;
    for (i = 0; i < s->ninsts; i++) {
        cb_inst_t *in = s->insts[i];
        if (in->plan != plan || in->dt != k->dt || in->op != k->op)
            continue;
        if (in->cap >= k->count && (!needs_copy(in, k) || in->tmp_in)) {
            *out = in;
            return ACC_OK;
        }
        if (in->cap >= k->count) {
            *out = in;
            return copy_buffer(in, k);
        }
        cap = in->cap * 2 > k->count ? in->cap * 2 : k->count;
        break;
    }
    /* Setting up allocates and exchanges memory, which a stream being captured into a graph
     * cannot take part in: this call goes to the fallback (NCCL captures). */
    if (rt_cuda_capturing(k->stream, &capturing) == ACC_OK && capturing)
        return acc_error_set(ACC_ERR_UNSUPPORTED, "the first call of a plan's size cannot be "
                                                  "captured into a graph");
    if (i < s->ninsts) {
        rt_cuda_sync_all();
        cb_inst_destroy(s->insts[i]);
        s->insts[i] = s->insts[--s->ninsts];
    }
    if (acc_array_reserve((void **)&s->insts, &s->insts_cap, s->ninsts + 1, sizeof(cb_inst_t *)) !=
        ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    if ((st = cb_inst_create(c, s, plan, k->dt, k->op, cap, out)) != ACC_OK) {
        comm_refuse(c, plan);
        return st;
    }
    s->insts[s->ninsts++] = *out;
    return needs_copy(*out, k) ? copy_buffer(*out, k) : ACC_OK;
}

/* The kernel's arguments for this call, the caller's buffers copied in where the plan needs
 * them in the exchanged memory. */
static acc_status_t arguments(acc_comm_t *c, cb_inst_t *in, const rt_call_t *k, acc_kargs_t *a)
{
    const acc_plan_t *p = in->plan;
    int me = c->rank, copies = gx_copies_for(k->count, in->es, p->nlanes, in->kmax);
    int has_in = p->coll != ACC_COLL_BROADCAST || me == p->root;
    uint64_t inb = acc_plan_buf_elems(p, ACC_BUF_IN, k->count) * in->es;

    memset(a, 0, sizeof(*a));
    a->ranks = in->d_ranks;
    a->conns = in->d_conns;
    a->ctrs = in->d_ctrs;
    a->params = in->d_params;
    a->status = (uint64_t)(uintptr_t)in->d_status;
    a->elems_in = acc_plan_buf_elems(p, ACC_BUF_IN, k->count);
    a->elems_out = acc_plan_buf_elems(p, ACC_BUF_OUT, k->count);
    a->scratch_cap = in->scratch_cap;
    a->slice_bytes = (gx_slice_bytes(in->es, gx_max_chunk(p, k->count), copies) + 15) / 16 * 16;
    a->timeout_ns = c->timeout_ms > 0 ? (uint64_t)c->timeout_ms * 1000000u : 0;
    a->copies = (uint32_t)copies;
    a->kmax = (uint32_t)in->kmax;
    a->param_stride = in->kernel->param_stride;
    a->rank0 = (uint32_t)me;
    a->slots = (uint32_t)p->slots;
    a->chunks[0] = p->in_chunks;
    a->chunks[1] = p->out_chunks;
    a->chunks[2] = p->scratch_chunks;
    if (in->staged) {
        for (int r = 0; r < p->nranks && r < ACC_KARG_RANKS; r++)
            if (in->seg[r]) {
                a->io[0][r] = (uint64_t)(uintptr_t)in->seg[r] + in->layouts[r].in;
                a->io[1][r] = (uint64_t)(uintptr_t)in->seg[r] + in->layouts[r].out;
            }
        if (has_in && inb)
            return acc_cuda_dtod_async((void *)(uintptr_t)a->io[0][me], k->send, inb, k->stream);
        return ACC_OK;
    }
    a->io[0][me] = (uint64_t)(uintptr_t)k->send;
    a->io[1][me] = (uint64_t)(uintptr_t)k->recv;
    if (k->inplace && !p->inplace && has_in && inb) {
        /* The plan reads its input after writing its output there: give it a copy (made by
         * instance(), outside any graph capture). */
        if (!in->tmp_in)
            return acc_error_set(ACC_ERR_INTERNAL, "no copy of an in-place call's input");
        a->io[0][me] = (uint64_t)(uintptr_t)in->tmp_in;
        return acc_cuda_dtod_async(in->tmp_in, k->send, inb, k->stream);
    }
    return ACC_OK;
}

static acc_status_t run(acc_comm_t *c, void *state, const acc_plan_t *plan, const rt_call_t *k,
                        int *broken)
{
    cb_state_t *s = state;
    cb_inst_t *in;
    acc_kargs_t a;
    void *params[1] = {&a};
    int me = c->rank, has_out = plan->coll != ACC_COLL_REDUCE || me == plan->root;
    uint64_t blocks;
    acc_status_t st;

    if ((st = instance(c, s, plan, k, &in)) != ACC_OK)
        return st;
    if ((st = cb_inst_status(in, c->timeout_ms)) != ACC_OK) {
        *broken = 1; /* an earlier launch gave up: the counters no longer agree */
        return st;
    }
    if ((st = arguments(c, in, k, &a)) != ACC_OK ||
        (st = rt_cuda_launch(in->fn, (unsigned)(plan->nlanes * (int)a.copies), 1,
                             acc_kthreads(in->kernel->proto, a.slice_bytes), params, k->stream)) !=
            ACC_OK)
        goto out;
    if (in->fn_avg && a.elems_out && has_out) {
        blocks = (a.elems_out + ACC_KTHREADS - 1) / ACC_KTHREADS;
        st = rt_cuda_launch(in->fn_avg, (unsigned)(blocks > 1024 ? 1024 : blocks), 1, ACC_KTHREADS,
                            params, k->stream);
    }
    if (st == ACC_OK && in->staged && has_out && a.elems_out)
        st = acc_cuda_dtod_async(k->recv, (void *)(uintptr_t)a.io[1][me], a.elems_out * in->es,
                                 k->stream);
out:
    /* Once a launch may have been queued, a failure leaves the ranks' counters apart. */
    if (st != ACC_OK)
        *broken = 1;
    return st;
}

static acc_status_t fallback(acc_comm_t *c, void *state, const rt_call_t *k, int *broken)
{
    cb_state_t *s = state;
    acc_status_t st;
    if (!s->nccl || !s->ncomm)
        return acc_error_set(ACC_ERR_UNSUPPORTED, "no NCCL communicator");
    if ((st = cb_nccl_call(c, s, k)) != ACC_OK)
        *broken = 1;
    return st;
}

static acc_status_t async_error(acc_comm_t *c, void *state)
{
    cb_state_t *s = state;
    acc_status_t st;
    for (size_t i = 0; i < s->ninsts; i++)
        if ((st = cb_inst_status(s->insts[i], c->timeout_ms)) != ACC_OK)
            return st;
    return ACC_OK;
}

int rt_cuda_comm_device(const acc_comm_t *c)
{
    const cb_state_t *s = c && c->be == &rt_cuda_backend ? c->be_state : NULL;
    return s ? s->device : -1;
}

const rt_backend_t rt_cuda_backend = {
    .name = "cuda",
    .create = create,
    .destroy = destroy,
    .run = run,
    .supports = supports,
    .fallback = fallback,
    .async_error = async_error,
};
