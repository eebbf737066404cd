/*
 * The drop-in's record of NCCL's communicators: a map from NCCL's handle to what acc is to it
 * (dropin_comm_t), and the life of that record.
 *
 * Every call that looks at acc's part takes a use first (dropin_comm_get), under the map's
 * lock, so that nothing it reads can be freed while it runs; leaving takes the record out of
 * the map (no call finds it after) and frees it when the last use ends.  Leaving with a goodbye
 * (ncclCommFinalize/Destroy) waits for the calls using it, as NCCL's destroy does; leaving by
 * abort never waits: acc's waits stop (comm_stop), the real ncclCommAbort is reached at once,
 * and whichever call lets go last releases acc's part - which never waits for the device
 * either (the cuda backend parks its device memory until a later synchronisation).
 */
#include "dropin_internal.h"

#include "rt_internal.h"

#include <stdint.h>
#include <string.h>

/* ---- the map: open addressing on NCCL's handle, under map_lock ------------------------- */

#define TOMB ((dropin_comm_t *)(uintptr_t)1)

static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static dropin_comm_t **table;
static size_t cap, filled; /* filled: live entries and tombstones */

static size_t home(ncclComm_t comm)
{
    uint64_t h = (uint64_t)(uintptr_t)comm * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

static dropin_comm_t **find(ncclComm_t comm)
{
    for (size_t i = 0, at = cap ? home(comm) : 0; i < cap; i++, at = (at + 1) & (cap - 1)) {
        if (!table[at])
            return NULL;
        if (table[at] != TOMB && table[at]->nccl == comm)
            return &table[at];
    }
    return NULL;
}

/* Room for one more: a table twice as large when more than half of it is live, else the same
 * size without its tombstones.  0, or -1 when out of memory. */
static int make_room(void)
{
    dropin_comm_t **old = table;
    size_t old_cap = cap, live = 0;

    if (cap && (filled + 1) * 4 <= cap * 3)
        return 0;
    for (size_t i = 0; i < old_cap; i++)
        live += old[i] && old[i] != TOMB;
    cap = !old_cap ? 64 : live * 2 >= old_cap ? old_cap * 2 : old_cap;
    if (!(table = acc_mem_calloc(cap, sizeof(*table)))) {
        table = old;
        cap = old_cap;
        return -1;
    }
    filled = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i] && old[i] != TOMB) {
            size_t at = home(old[i]->nccl);
            while (table[at])
                at = (at + 1) & (cap - 1);
            table[at] = old[i];
            filled++;
        }
    acc_mem_free(old);
    return 0;
}

/* ---- one record --------------------------------------------------------------------------- */

static void record_free(dropin_comm_t *s)
{
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->acc_mu);
    pthread_cond_destroy(&s->idle);
    acc_mem_free(s);
}

/* acc's part, given up: with a goodbye to its peers, or without. */
static void release_acc(acc_comm_t *acc, int abort)
{
    if (!acc)
        return;
    if (abort)
        acc_comm_abort(acc);
    else if (acc_comm_destroy(acc) != ACC_OK)
        ACC_WARN(RUNTIME, "acc drop-in NCCL: %s", acc_error_message());
}

/* The last use of a record out of the map. */
static void release(dropin_comm_t *s)
{
    release_acc(s->acc, s->abort || s->state != DROPIN_JOINED);
    record_free(s);
}

void dropin_register(ncclComm_t comm)
{
    dropin_comm_t *s = acc_mem_calloc(1, sizeof(*s)), **old;
    dropin_comm_t *stale = NULL;

    if (!s) {
        ACC_WARN(RUNTIME, "acc drop-in NCCL: out of memory; NCCL runs every call of a "
                          "communicator");
        return;
    }
    s->nccl = comm;
    s->state = DROPIN_IDLE;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->acc_mu, NULL);
    pthread_cond_init(&s->idle, NULL);
    pthread_mutex_lock(&map_lock);
    /* NCCL freed a communicator without the drop-in seeing it and made another at its address:
     * the old record goes, as by an abort. */
    if ((old = find(comm))) {
        stale = *old;
        *old = TOMB;
    }
    if (make_room() == 0) {
        size_t at = home(comm);
        while (table[at] && table[at] != TOMB)
            at = (at + 1) & (cap - 1);
        filled += !table[at];
        table[at] = s;
        s = NULL;
    }
    pthread_mutex_unlock(&map_lock);
    if (s) {
        ACC_WARN(RUNTIME, "acc drop-in NCCL: out of memory; NCCL runs every call of a "
                          "communicator");
        record_free(s);
    }
    if (stale) {
        pthread_mutex_lock(&stale->mu);
        stale->closing = stale->abort = 1;
        if (stale->acc)
            comm_stop(stale->acc);
        s = stale->users == 0 ? stale : NULL;
        pthread_mutex_unlock(&stale->mu);
        if (s)
            release(s);
    }
}

dropin_comm_t *dropin_comm_get(ncclComm_t comm)
{
    dropin_comm_t **p, *s = NULL;
    if (!comm)
        return NULL;
    pthread_mutex_lock(&map_lock);
    if ((p = find(comm))) {
        s = *p;
        pthread_mutex_lock(&s->mu);
        s->users++;
        pthread_mutex_unlock(&s->mu);
    }
    pthread_mutex_unlock(&map_lock);
    return s;
}

void dropin_comm_put(dropin_comm_t *s)
{
    acc_comm_t *stopped = NULL;
    int last;

    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    last = --s->users == 0;
    if (last && s->state == DROPIN_NCCL && s->acc && !s->closing) {
        /* acc stopped serving it while calls used it: now nothing does. */
        stopped = s->acc;
        s->acc = NULL;
    }
    if (last)
        pthread_cond_broadcast(&s->idle);
    /* A record left by abort is freed by its last use; one left with a goodbye by the leaver. */
    last = last && s->closing && s->abort;
    pthread_mutex_unlock(&s->mu);
    release_acc(stopped, 1);
    if (last)
        release(s);
}

int dropin_shape(dropin_comm_t *s)
{
    const nccl_lib_t *l = dropin_nccl();
    int nranks = 0, rank = -1, dev = -1, known;

    pthread_mutex_lock(&s->mu);
    known = s->shape_known;
    pthread_mutex_unlock(&s->mu);
    if (known)
        return known > 0;
    if (!l || DROPIN_INTO(l->comm_count(s->nccl, &nranks)) != 0 ||
        DROPIN_INTO(l->comm_user_rank(s->nccl, &rank)) != 0 ||
        DROPIN_INTO(l->comm_cu_device(s->nccl, &dev)) != 0)
        known = -1;
    else
        known = 1;
    pthread_mutex_lock(&s->mu);
    s->nranks = nranks;
    s->rank = rank;
    s->on_gpu = dev >= 0;
    s->shape_known = known;
    pthread_mutex_unlock(&s->mu);
    return known > 0;
}

void dropin_switch_off(dropin_comm_t *s, acc_log_level_t level, const char *why)
{
    if (s->state == DROPIN_NCCL)
        return;
    if (s->acc)
        comm_stop(s->acc); /* its calls in flight give up within a wait slice */
    if (why && s->state != DROPIN_IDLE)
        acc_log(level, ACC_SUBSYS_RUNTIME, "acc drop-in NCCL: rank %d: %s", s->rank, why);
    s->state = DROPIN_NCCL;
}

void dropin_leave(ncclComm_t comm, int abort)
{
    dropin_comm_t **p, *s = NULL;
    int mine;

    pthread_mutex_lock(&map_lock);
    if ((p = find(comm))) {
        s = *p;
        *p = TOMB;
    }
    pthread_mutex_unlock(&map_lock);
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->closing = 1;
    s->abort = abort;
    if (abort && s->acc)
        comm_stop(s->acc);
    while (!abort && s->users > 0)
        pthread_cond_wait(&s->idle, &s->mu);
    mine = s->users == 0;
    pthread_mutex_unlock(&s->mu);
    if (mine)
        release(s);
}

int dropin_order(const dropin_comm_t *a, const dropin_comm_t *b)
{
    const uint8_t *x = a->acc ? boot_nonce(a->acc->boot) : NULL;
    const uint8_t *y = b->acc ? boot_nonce(b->acc->boot) : NULL;
    if (!x || !y)
        return (x != NULL) - (y != NULL);
    return memcmp(x, y, BOOT_NONCE_BYTES);
}
