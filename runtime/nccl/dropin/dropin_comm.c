/*
 * Communicators: acc joins every communicator NCCL makes (acc_comm_from_nccl, right after NCCL's
 * init, as a collective step of every rank), and leaves with it (finalize, destroy, abort).
 * Calls find acc's communicator by NCCL's handle in a small map; a reference keeps it alive
 * while a call uses it, even when another thread destroys or aborts the communicator.
 *
 * Errors.  A failure of acc at a call is handled there (dropin_comm_end): NCCL runs the call.
 * ncclCommGetAsyncError reports NCCL's error and, when there is none, a failure acc found with
 * no call of the communicator inside acc -- one no call could hand to NCCL (a kernel of the GPU
 * backend that failed after its launch returned): its results are lost, and the job must hear
 * it, as it hears NCCL's own.
 */
#include "dropin_internal.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static dropin_comm_t **comms;
static size_t ncomms, comms_cap;

static void add(dropin_comm_t *s)
{
    pthread_mutex_lock(&map_lock);
    if (acc_array_reserve((void **)&comms, &comms_cap, ncomms + 1, sizeof(*comms)) == ACC_OK) {
        comms[ncomms++] = s;
        s = NULL;
    }
    pthread_mutex_unlock(&map_lock);
    if (s) {
        /* The other ranks run their calls through acc: this one's acc calls fail with them, and
         * each rank then hands them to NCCL. */
        ACC_WARN(RUNTIME, "acc drop-in NCCL: out of memory; acc leaves this communicator");
        acc_comm_abort(s->acc);
        pthread_mutex_destroy(&s->mu);
        acc_mem_free(s);
    }
}

dropin_comm_t *dropin_comm_get(ncclComm_t comm)
{
    dropin_comm_t *s = NULL;
    pthread_mutex_lock(&map_lock);
    for (size_t i = 0; i < ncomms && !s; i++)
        if (comms[i]->nccl == comm) {
            s = comms[i];
            s->refs++;
        }
    pthread_mutex_unlock(&map_lock);
    return s;
}

void dropin_comm_put(dropin_comm_t *s)
{
    int last;
    if (!s)
        return;
    pthread_mutex_lock(&map_lock);
    last = --s->refs == 0;
    pthread_mutex_unlock(&map_lock);
    if (last) {
        pthread_mutex_destroy(&s->mu);
        acc_mem_free(s);
    }
}

/* Out of the map, with the map's reference: no new call finds it. */
static dropin_comm_t *detach(ncclComm_t comm)
{
    dropin_comm_t *s = NULL;
    pthread_mutex_lock(&map_lock);
    for (size_t i = 0; i < ncomms && !s; i++)
        if (comms[i]->nccl == comm) {
            s = comms[i];
            comms[i] = comms[--ncomms];
        }
    pthread_mutex_unlock(&map_lock);
    return s;
}

void dropin_attach(ncclComm_t comm, const char *how)
{
    const dropin_real_t *r = dropin_real();
    acc_comm_opts_t opts;
    acc_comm_t *acc = NULL;
    dropin_comm_t *s;
    int dev = -1;

    if (!r || !comm)
        return;
    if (dropin_group_depth() > 0) {
        ACC_INFO(RUNTIME,
                 "acc drop-in NCCL: a communicator made by %s inside a group: NCCL runs "
                 "all its calls",
                 how);
        return;
    }
    acc_comm_opts_init(&opts);
    opts.external_fallback = 1; /* calls acc does not serve come back here, for NCCL */
    if (acc_comm_from_nccl(&acc, comm, &opts) != ACC_OK) {
        ACC_WARN(RUNTIME,
                 "acc drop-in NCCL: acc could not join the communicator %s made, so NCCL "
                 "runs all its calls: %s",
                 how, acc_error_message());
        return;
    }
    /* acc's host backend runs on host memory; the buffers of a communicator on a GPU are device
     * memory.  Every rank sees its GPU, so they all leave together. */
    if (r->CommCuDevice && r->CommCuDevice(comm, &dev) == ncclSuccess && dev >= 0 &&
        acc_comm_backend(acc) == ACC_BACKEND_HOST) {
        if (acc_comm_rank(acc) == 0)
            ACC_INFO(RUNTIME,
                     "acc drop-in NCCL: communicator of %d ranks on GPUs: acc's host "
                     "backend cannot run on device memory, so NCCL runs all its calls",
                     acc_comm_size(acc));
        acc_comm_destroy(acc);
        return;
    }
    if (!(s = acc_mem_calloc(1, sizeof(*s)))) {
        ACC_WARN(RUNTIME, "acc drop-in NCCL: out of memory; acc leaves this communicator");
        acc_comm_abort(acc);
        return;
    }
    s->nccl = comm;
    s->acc = acc;
    s->rank = acc_comm_rank(acc);
    s->refs = 1; /* the map's */
    pthread_mutex_init(&s->mu, NULL);
    add(s);
}

int dropin_comm_begin(dropin_comm_t *s)
{
    int ok;
    pthread_mutex_lock(&s->mu);
    ok = !s->off;
    s->calls += ok;
    pthread_mutex_unlock(&s->mu);
    return ok;
}

void dropin_comm_end(dropin_comm_t *s, acc_status_t st, const char *what)
{
    int failed = st != ACC_OK && st != ACC_NO_DATA && st != ACC_ERR_INVALID, first;
    pthread_mutex_lock(&s->mu);
    s->calls--;
    first = failed && !s->off;
    s->off |= failed;
    pthread_mutex_unlock(&s->mu);
    if (first)
        ACC_WARN(RUNTIME,
                 "acc drop-in NCCL: rank %d: %s failed in acc (%s: %s); NCCL runs it and "
                 "every later call of this communicator",
                 s->rank, what, acc_status_name(st), acc_error_message());
}

/* ---- joining NCCL's communicators ------------------------------------------------------ */

/* NCCL's init first; acc joins only a communicator NCCL has finished: one a non-blocking init
 * left in progress (ncclInProgress) cannot carry acc's id yet, and NCCL alone runs it. */
static ncclResult_t made(ncclResult_t rc, ncclComm_t *comm, const char *how)
{
    if (rc == ncclSuccess && comm && *comm)
        dropin_attach(*comm, how);
    else if (rc == ncclInProgress)
        ACC_INFO(RUNTIME,
                 "acc drop-in NCCL: %s made a non-blocking communicator: NCCL runs all its "
                 "calls",
                 how);
    return rc;
}

ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    DROPIN_REAL(r, CommInitRank)
    return made(r->CommInitRank(comm, nranks, id, rank), comm, "ncclCommInitRank");
}
DROPIN_ALIAS(CommInitRank);

ncclResult_t pncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                     ncclConfig_t *config)
{
    DROPIN_REAL(r, CommInitRankConfig)
    return made(r->CommInitRankConfig(comm, nranks, id, rank, config), comm,
                "ncclCommInitRankConfig");
}
DROPIN_ALIAS(CommInitRankConfig);

ncclResult_t pncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nids,
                                       ncclUniqueId *ids, ncclConfig_t *config)
{
    DROPIN_REAL(r, CommInitRankScalable)
    return made(r->CommInitRankScalable(comm, nranks, rank, nids, ids, config), comm,
                "ncclCommInitRankScalable");
}
DROPIN_ALIAS(CommInitRankScalable);

ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                            ncclConfig_t *config)
{
    DROPIN_REAL(r, CommSplit)
    /* NCCL_SPLIT_NOCOLOR ranks get no communicator */
    return made(r->CommSplit(comm, color, key, newcomm, config), newcomm, "ncclCommSplit");
}
DROPIN_ALIAS(CommSplit);

ncclResult_t pncclCommShrink(ncclComm_t comm, int *exclude, int nexclude, ncclComm_t *newcomm,
                             ncclConfig_t *config, int flags)
{
    DROPIN_REAL(r, CommShrink)
    return made(r->CommShrink(comm, exclude, nexclude, newcomm, config, flags), newcomm,
                "ncclCommShrink");
}
DROPIN_ALIAS(CommShrink);

/* Several ranks in one process and thread: acc's ranks each need a thread of their own to
 * join, so NCCL runs these communicators alone. */
ncclResult_t pncclCommInitAll(ncclComm_t *comms_out, int ndev, const int *devlist)
{
    DROPIN_REAL(r, CommInitAll)
    ncclResult_t rc = r->CommInitAll(comms_out, ndev, devlist);
    if (rc == ncclSuccess)
        ACC_INFO(RUNTIME,
                 "acc drop-in NCCL: ncclCommInitAll made %d communicators in one "
                 "process: NCCL runs all their calls",
                 ndev);
    return rc;
}
DROPIN_ALIAS(CommInitAll);

/* ---- leaving with NCCL ------------------------------------------------------------------- */

/* acc leaves with a goodbye to its peers (finalize, destroy) or without (abort). */
static void leave(ncclComm_t comm, int abort)
{
    dropin_comm_t *s = detach(comm);
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->off = 1;
    pthread_mutex_unlock(&s->mu);
    /* A call still inside acc (a hung one, ended by an abort from another thread) returns
     * before acc frees the communicator; the state itself lives until that call lets go. */
    if (abort)
        acc_comm_abort(s->acc);
    else if (acc_comm_destroy(s->acc) != ACC_OK)
        ACC_WARN(RUNTIME, "acc drop-in NCCL: %s", acc_error_message());
    s->acc = NULL;
    dropin_comm_put(s);
}

ncclResult_t pncclCommFinalize(ncclComm_t comm)
{
    DROPIN_REAL(r, CommFinalize)
    leave(comm, 0);
    return r->CommFinalize(comm);
}
DROPIN_ALIAS(CommFinalize);

ncclResult_t pncclCommDestroy(ncclComm_t comm)
{
    DROPIN_REAL(r, CommDestroy)
    leave(comm, 0);
    return r->CommDestroy(comm);
}
DROPIN_ALIAS(CommDestroy);

ncclResult_t pncclCommAbort(ncclComm_t comm)
{
    DROPIN_REAL(r, CommAbort)
    leave(comm, 1);
    return r->CommAbort(comm);
}
DROPIN_ALIAS(CommAbort);

/* ---- errors ------------------------------------------------------------------------------ */

ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async_error)
{
    DROPIN_REAL(r, CommGetAsyncError)
    ncclResult_t rc = r->CommGetAsyncError(comm, async_error);
    dropin_comm_t *s;
    acc_status_t e = ACC_OK;

    if (rc != ncclSuccess || !async_error || *async_error != ncclSuccess ||
        !(s = dropin_comm_get(comm)))
        return rc;
    pthread_mutex_lock(&s->mu);
    if (s->async == ACC_OK && !s->off && s->calls == 0 &&
        acc_comm_get_async_error(s->acc, &e) == ACC_OK && e != ACC_OK) {
        s->async = e;
        s->off = 1;
        snprintf(s->error, sizeof(s->error), "acc: %s", acc_error_message());
        ACC_ERROR(RUNTIME, "acc drop-in NCCL: rank %d: %s", s->rank, s->error);
    }
    if (s->async != ACC_OK)
        *async_error = s->async == ACC_ERR_TIMEOUT ? ncclRemoteError : ncclInternalError;
    pthread_mutex_unlock(&s->mu);
    dropin_comm_put(s);
    return rc;
}
DROPIN_ALIAS(CommGetAsyncError);

const char *pncclGetLastError(ncclComm_t comm)
{
    static _Thread_local char text[512];
    const dropin_real_t *r = dropin_real();
    dropin_comm_t *s = comm ? dropin_comm_get(comm) : NULL;
    int mine = 0;

    if (s) {
        pthread_mutex_lock(&s->mu);
        if ((mine = s->async != ACC_OK))
            snprintf(text, sizeof(text), "%s", s->error);
        pthread_mutex_unlock(&s->mu);
        dropin_comm_put(s);
    }
    if (mine)
        return text;
    return r && r->GetLastError ? r->GetLastError(comm) : "";
}
DROPIN_ALIAS(GetLastError);
