/*
 * Joining a communicator costs nothing until it pays: acc joins one of NCCL's communicators at
 * its first call that acc's tables give acc, never at its creation, so that communicators that
 * never make such a call (PyTorch's point-to-point pairs, groups of a size the database has no
 * tables for) never pay for a broadcast, a synchronisation or acc's bootstrap.
 *
 * Every rank must decide to join at the same call, because the join is collective (an NCCL
 * broadcast of acc's unique id on the communicator, then acc's bootstrap).  NCCL asks every rank
 * to make the same collective calls with the same arguments; the decision adds only what the
 * database says about a communicator of that many ranks (any topology of that rank count it
 * holds), which is the same on every rank that reads the same file - unlike the topology a rank
 * discovers, which a degraded link can change on one node.  What the join then loads (the
 * topology, the tables of its fingerprint) the ranks compare as communicators always do, and
 * any difference sends every call to NCCL on every rank.  Before any of that, the ranks vote
 * (dropin_vote): the same file and the same settings are what make the decision the same on
 * every rank, so they check that they have them, once per communicator, instead of trusting
 * it.  A rank that fails inside the join
 * (after taking part in the broadcast, which it always does) leaves its peers waiting in acc's
 * bootstrap, which gives up after ACC_TIMEOUT_MS: every rank then falls back, none hangs.
 */
#include "dropin_internal.h"

#include "acc_db.h"
#include "rt_internal.h"

#include <string.h>

/* What the database says about communicators of one rank count: the selection tables of every
 * topology of that many ranks, per collective.  Immutable once made, kept for the process. */
typedef struct tables {
    int nranks;
    uint64_t digest; /* of every table below, what the ranks vote on; never 0 */
    size_t ntopos;
    acc_select_table_t **t; /* [ntopos][ACC_COLL_COUNT] */
    struct tables *next;
} tables_t;

/* Written under lock, read without it: each is set once, and the list only ever grows at its
 * head, so a reader that sees a node sees it whole. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int looked;      /* __atomic: the settings and the database were looked at */
static int off;         /* ACC_DISABLE, or no database: never join (set before looked) */
static acc_db_t *db;    /* open while the library is loaded */
static tables_t *known; /* __atomic: per rank count asked */

static void look(void)
{
    const char *path = NULL;
    int64_t disable = 0;

    if (acc_setting_int(ACC_SETTING_DISABLE, &disable) != ACC_OK || disable != 0) {
        off = 1; /* ACC_DISABLE=1, or a value communicators will name as invalid: acc is off */
    } else if (rt_db_locate(NULL, &path) != ACC_OK ||
               acc_db_open(path, ACC_DB_READONLY, &db) != ACC_OK) {
        off = 1;
        ACC_INFO(RUNTIME, "acc drop-in NCCL: NCCL runs every call: %s", acc_error_message());
    }
    __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
}

static const tables_t *find(int nranks)
{
    const tables_t *ts = __atomic_load_n(&known, __ATOMIC_ACQUIRE);
    while (ts && ts->nranks != nranks)
        ts = ts->next;
    return ts;
}

/* What decides every join: each topology's fingerprint and each table's ranges and choices
 * (not the predicted times, which do not change what runs). */
static uint64_t digest_of(const tables_t *ts)
{
    uint64_t h = acc_fnv1a64(&ts->nranks, sizeof(ts->nranks));
    for (size_t i = 0; i < ts->ntopos * ACC_COLL_COUNT; i++) {
        const acc_select_table_t *t = ts->t[i];
        h ^= acc_fnv1a64(&i, sizeof(i)) + (t ? 0x9e3779b97f4a7c15ull : 0);
        for (size_t e = 0; t && e < t->n; e++) {
            const acc_select_entry_t *x = &t->entries[e];
            h = h * 1099511628211ull ^
                acc_fnv1a64(t->topo_fingerprint, strlen(t->topo_fingerprint));
            h = h * 1099511628211ull ^ acc_fnv1a64(&x->min_bytes, sizeof(x->min_bytes));
            h = h * 1099511628211ull ^ acc_fnv1a64(&x->max_bytes, sizeof(x->max_bytes));
            h = h * 1099511628211ull ^ (uint64_t)x->use_nccl;
            h = h * 1099511628211ull ^ acc_fnv1a64(x->algo, strlen(x->algo));
            h = h * 1099511628211ull ^ acc_fnv1a64(x->params, strlen(x->params));
            h = h * 1099511628211ull ^ acc_fnv1a64(x->plan_hash, strlen(x->plan_hash));
        }
    }
    return h ? h : 1; /* 0 is the vote of a rank where acc is off */
}

static tables_t *load(int nranks)
{
    acc_db_topo_info_t *topos = NULL;
    size_t n = 0, k = 0;
    tables_t *ts = acc_mem_calloc(1, sizeof(*ts));

    if (!ts)
        return NULL;
    ts->nranks = nranks;
    if (acc_db_list_topologies(db, &topos, &n) == ACC_OK && n &&
        (ts->t = acc_mem_calloc(n * ACC_COLL_COUNT, sizeof(acc_select_table_t *)))) {
        for (size_t i = 0; i < n; i++) {
            if (topos[i].nodes * topos[i].gpus_per_node != nranks)
                continue;
            for (int c = 0; c < ACC_COLL_COUNT; c++)
                if (acc_db_get_selection(db, topos[i].fingerprint, (acc_coll_t)c,
                                         &ts->t[k * ACC_COLL_COUNT + c]) != ACC_OK)
                    ts->t[k * ACC_COLL_COUNT + c] = NULL;
            k++;
        }
    }
    ts->ntopos = k;
    ts->digest = digest_of(ts);
    acc_mem_free(topos);
    return ts;
}

/* The process's tables for nranks, made at the first question; later ones take no lock. */
static const tables_t *tables_for(int nranks)
{
    const tables_t *found = NULL;
    tables_t *ts;

    if (__atomic_load_n(&looked, __ATOMIC_ACQUIRE) && (off || (found = find(nranks))))
        return off ? NULL : found;
    pthread_mutex_lock(&lock);
    if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE))
        look();
    if (!off && !(found = find(nranks)) && (ts = load(nranks))) {
        ts->next = known;
        __atomic_store_n(&known, ts, __ATOMIC_RELEASE);
        found = ts;
    }
    pthread_mutex_unlock(&lock);
    return off ? NULL : found;
}

__attribute__((destructor)) static void tables_free(void)
{
    while (known) {
        tables_t *ts = known;
        known = ts->next;
        for (size_t i = 0; ts->t && i < ts->ntopos * ACC_COLL_COUNT; i++)
            acc_select_destroy(ts->t[i]);
        acc_mem_free(ts->t);
        acc_mem_free(ts);
    }
    acc_db_close(db);
    db = NULL;
}

int dropin_tables_say_acc(int nranks, int on_gpu, acc_coll_t coll, size_t count, acc_dtype_t dt)
{
    acc_backend_t backend = on_gpu ? ACC_BACKEND_CUDA : ACC_BACKEND_HOST;
    const tables_t *ts = tables_for(nranks);
    uint64_t nbytes =
        (uint64_t)count * acc_dtype_size(dt) *
        (coll == ACC_COLL_ALLGATHER || coll == ACC_COLL_REDUCE_SCATTER ? (uint64_t)nranks : 1);
    for (size_t i = 0; ts && i < ts->ntopos; i++) {
        const acc_select_table_t *t = ts->t[i * ACC_COLL_COUNT + coll];
        const acc_select_entry_t *e = t ? acc_select_lookup(t, nbytes) : NULL;
        if (e && acc_select_entry_runs_on(e, backend))
            return 1;
    }
    return 0;
}

void dropin_vote(dropin_comm_t *s)
{
    const tables_t *ts = tables_for(s->nranks);
    uint64_t mine = ts ? ts->digest : 0;
    int same = 0;
    acc_status_t st = DROPIN_INTO(rt_nccl_agree(s->nccl, mine, &same));

    pthread_mutex_lock(&s->mu);
    s->voted = 1;
    if (st != ACC_OK || !same) {
        if (s->state == DROPIN_IDLE)
            s->state = DROPIN_NCCL;
        if (s->rank == 0 && st != ACC_OK)
            ACC_WARN(RUNTIME,
                     "acc drop-in NCCL: communicator of %d ranks: the ranks could not compare "
                     "their tables (%s); NCCL runs every call",
                     s->nranks, acc_error_message());
        else if (s->rank == 0)
            ACC_WARN(RUNTIME,
                     "acc drop-in NCCL: communicator of %d ranks: the ranks' tables differ, so "
                     "NCCL runs every call (every rank must read the same ACC_DB with the same "
                     "ACC_DISABLE%s)",
                     s->nranks, mine ? "" : "; acc is off on rank 0");
    }
    pthread_mutex_unlock(&s->mu);
}

acc_comm_t *dropin_join(dropin_comm_t *s)
{
    acc_comm_opts_t opts;
    acc_comm_t *acc = NULL;

    acc_comm_opts_init(&opts);
    opts.external_fallback = 1; /* calls acc does not serve come back here, for NCCL */
    nccl_lib_check_single();
    /* acc's core calls NCCL itself (the broadcast of acc's id): NCCL's calls of its API meanwhile
     * are NCCL's. */
    if (DROPIN_INTO(acc_comm_from_nccl(&acc, s->nccl, &opts)) != ACC_OK) {
        ACC_WARN(RUNTIME,
                 "acc drop-in NCCL: rank %d: acc could not join a communicator of %d ranks, so "
                 "NCCL runs all its calls: %s",
                 s->rank, s->nranks, acc_error_message());
        return NULL;
    }
    /* acc's host backend runs on host memory; the buffers of a communicator on a GPU are device
     * memory.  The ranks chose the backend together, so they all leave together. */
    if (s->on_gpu && acc_comm_backend(acc) == ACC_BACKEND_HOST) {
        if (acc_comm_rank(acc) == 0)
            ACC_INFO(RUNTIME,
                     "acc drop-in NCCL: communicator of %d ranks on GPUs: acc's host backend "
                     "cannot run on device memory, so NCCL runs all its calls",
                     acc_comm_size(acc));
        acc_comm_abort(acc);
        return NULL;
    }
    /* No tables agreed (rank 0 said why): acc would serve nothing. */
    if (acc_comm_fallback_reason(acc)[0]) {
        acc_comm_abort(acc);
        return NULL;
    }
    return acc;
}
