/*
 * The simulator's event queue.  Symmetric plans schedule thousands of events for the same
 * instant (every rank's flow of one ring step finishes together), so events are kept in
 * buckets, one per distinct time, and only buckets go through the binary heap: a push is an
 * append to a bucket found through a small direct-mapped cache of recently used times, and the
 * heap holds as many entries as there are distinct times pending.  Two buckets may hold the same
 * time when the cache forgot the first; the event loop takes both in the same batch.
 */
#include "sim_internal.h"

#include <string.h>

static uint32_t cache_slot(double t)
{
    uint64_t bits;
    memcpy(&bits, &t, sizeof(bits));
    bits ^= bits >> 29;
    bits *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(bits >> 56) % SIM_BUCKET_CACHE;
}

static int earlier(const sim_queue_t *q, uint32_t a, uint32_t b)
{
    if (q->bk[a].t != q->bk[b].t)
        return q->bk[a].t < q->bk[b].t;
    return q->bk[a].seq < q->bk[b].seq;
}

static void sift_up(sim_queue_t *q, uint32_t i)
{
    uint32_t v = q->heap[i];
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!earlier(q, v, q->heap[p]))
            break;
        q->heap[i] = q->heap[p];
        i = p;
    }
    q->heap[i] = v;
}

static void sift_down(sim_queue_t *q, uint32_t i)
{
    uint32_t v = q->heap[i], n = q->nheap;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && earlier(q, q->heap[c + 1], q->heap[c]))
            c++;
        if (!earlier(q, q->heap[c], v))
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    q->heap[i] = v;
}

static acc_status_t grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
    size_t c = *cap;
    if (need <= *cap)
        return ACC_OK;
    if (acc_array_reserve(arr, &c, need, elem) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the simulator's event queue");
    *cap = (uint32_t)c;
    return ACC_OK;
}

static acc_status_t new_bucket(sim_queue_t *q, double t, uint32_t *out)
{
    uint32_t b;
    acc_status_t st;
    void *p;

    if (q->bk_free != SIM_NONE) {
        b = q->bk_free;
        q->bk_free = q->bk[b].head;
    } else {
        p = q->bk;
        if ((st = grow(&p, &q->bk_cap, q->nbk + 1, sizeof(sim_bucket_t))) != ACC_OK)
            return st;
        q->bk = p;
        b = q->nbk++;
    }
    p = q->heap;
    if ((st = grow(&p, &q->heap_cap, q->nheap + 1, sizeof(uint32_t))) != ACC_OK)
        return st;
    q->heap = p;
    q->bk[b].t = t;
    q->bk[b].seq = q->seq++;
    q->bk[b].head = q->bk[b].tail = SIM_NONE;
    q->bk[b].live = 1;
    q->heap[q->nheap] = b;
    sift_up(q, q->nheap++);
    *out = b;
    return ACC_OK;
}

acc_status_t sim_queue_push(sim_queue_t *q, double t, sim_ev_type_t type, uint32_t a, uint32_t b)
{
    uint32_t slot = cache_slot(t), bk = q->cache[slot].bucket, e;
    acc_status_t st;

    if (bk == SIM_NONE || bk >= q->nbk || !q->bk[bk].live || q->bk[bk].t != t) {
        if ((st = new_bucket(q, t, &bk)) != ACC_OK)
            return st;
        q->cache[slot].t = t;
        q->cache[slot].bucket = bk;
    }
    if (q->ev_free != SIM_NONE) {
        e = q->ev_free;
        q->ev_free = q->ev[e].next;
    } else {
        void *p = q->ev;
        if ((st = grow(&p, &q->ev_cap, q->nev + 1, sizeof(sim_event_t))) != ACC_OK)
            return st;
        q->ev = p;
        e = q->nev++;
    }
    q->ev[e].next = SIM_NONE;
    q->ev[e].type = (uint32_t)type;
    q->ev[e].a = a;
    q->ev[e].b = b;
    if (q->bk[bk].tail == SIM_NONE)
        q->bk[bk].head = e;
    else
        q->ev[q->bk[bk].tail].next = e;
    q->bk[bk].tail = e;
    q->pushed++;
    return ACC_OK;
}

double sim_queue_next_time(const sim_queue_t *q)
{
    return q->nheap ? q->bk[q->heap[0]].t : -1.0;
}

uint32_t sim_queue_pop(sim_queue_t *q, double *t)
{
    uint32_t b;
    if (!q->nheap)
        return SIM_NONE;
    b = q->heap[0];
    q->heap[0] = q->heap[--q->nheap];
    if (q->nheap)
        sift_down(q, 0);
    q->bk[b].live = 0; /* no more events join it: new ones at this time get a new bucket */
    *t = q->bk[b].t;
    return b;
}

void sim_queue_release(sim_queue_t *q, uint32_t b)
{
    if (q->bk[b].tail != SIM_NONE) {
        q->ev[q->bk[b].tail].next = q->ev_free;
        q->ev_free = q->bk[b].head;
    }
    q->bk[b].head = q->bk_free;
    q->bk_free = b;
}

void sim_queue_reset(sim_queue_t *q)
{
    uint32_t i;
    q->nev = q->nbk = q->nheap = 0;
    q->ev_free = q->bk_free = SIM_NONE;
    q->pushed = 0;
    q->seq = 0;
    for (i = 0; i < SIM_BUCKET_CACHE; i++)
        q->cache[i].bucket = SIM_NONE;
}

void sim_queue_free(sim_queue_t *q)
{
    acc_mem_free(q->ev);
    acc_mem_free(q->bk);
    acc_mem_free(q->heap);
    memset(q, 0, sizeof(*q));
}
