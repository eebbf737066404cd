/*
 * A communicator's life as the job drives it, and its errors.
 *
 * Creation records the communicator and nothing more: acc joins later, at the first call its
 * tables give acc (dropin_join.c), so a communicator that never makes one costs nothing.
 * Communicators acc never joins: those of ncclCommInitAll (several ranks in one thread, where
 * acc's ranks would each need a thread to join), non-blocking ones (their calls may return
 * before they are queued, which acc's join cannot wait out), and grown ones (ncclCommGrow:
 * ranks that arrive later than the rest cannot all reach one call together) - every call of
 * those is NCCL's, as is every call of a communicator the drop-in has no record of.
 *
 * Leaving.  Finalize and destroy say goodbye (acc's part leaves with its peers, after the calls
 * using it); abort never waits - acc's part stops by its own flag and the real ncclCommAbort
 * is called at once, whatever is hung on the device.  Revoke, a shrink with NCCL_SHRINK_ABORT
 * (for the parent) and suspend switch acc off for good: acc stops at once and its part is
 * released when no call uses it; suspend also gives acc's device memory back before NCCL's
 * own suspend, as NCCL does with its own.
 *
 * Errors.  ncclCommGetAsyncError is NCCL's: what NCCL reports about its own state passes
 * unchanged, and NCCL's own calls of it (one per enqueue) never see acc at all.  The job's
 * calls of it add the one failure of acc's that the job must hear: a call acc had queued on the
 * device and then lost (dropin_check_device), or an in-place call whose result acc lost.  Every
 * other failure of acc's is acc's business - it falls back to NCCL and says so in the log.
 */
#include "dropin_internal.h"

#include "rt_internal.h"

/* ---- creation ------------------------------------------------------------------------------ */

/* A blocking communicator made by NCCL: acc may join it later.  (A configuration that asks for
 * a non-blocking one returns ncclInProgress or leaves it non-blocking: NCCL's alone.) */
static ncclResult_t made(ncclResult_t rc, ncclComm_t *comm, const ncclConfig_t *config)
{
    const ncclConfigPrefix *c = (const ncclConfigPrefix *)config;
    if (rc == ncclSuccess && comm && *comm && (!c || c->blocking != 0))
        dropin_register(*comm);
    nccl_lib_check_single(); /* the program may have loaded another NCCL since */
    return rc;
}

ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    __typeof__(&pncclCommInitRank) f;
    if (DROPIN_FROM_NCCL())
        DROPIN_PASS(CommInitRank, (comm, nranks, id, rank));
    if (!(f = DROPIN_FN(CommInitRank)))
        return dropin_unavailable(DROPIN_IDX_CommInitRank);
    return made(DROPIN_INTO(f(comm, nranks, id, rank)), comm, NULL);
}
DROPIN_ALIAS(CommInitRank);

ncclResult_t pncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                     ncclConfig_t *config)
{
    __typeof__(&pncclCommInitRankConfig) f;
    if (DROPIN_FROM_NCCL())
        DROPIN_PASS(CommInitRankConfig, (comm, nranks, id, rank, config));
    if (!(f = DROPIN_FN(CommInitRankConfig)))
        return dropin_unavailable(DROPIN_IDX_CommInitRankConfig);
    return made(DROPIN_INTO(f(comm, nranks, id, rank, config)), comm, config);
}
DROPIN_ALIAS(CommInitRankConfig);

ncclResult_t pncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nids,
                                       ncclUniqueId *ids, ncclConfig_t *config)
{
    __typeof__(&pncclCommInitRankScalable) f;
    if (DROPIN_FROM_NCCL())
        DROPIN_PASS(CommInitRankScalable, (comm, nranks, rank, nids, ids, config));
    if (!(f = DROPIN_FN(CommInitRankScalable)))
        return dropin_unavailable(DROPIN_IDX_CommInitRankScalable);
    return made(DROPIN_INTO(f(comm, nranks, rank, nids, ids, config)), comm, config);
}
DROPIN_ALIAS(CommInitRankScalable);

ncclResult_t pncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
    DROPIN_PASS(CommInitAll, (comms, ndev, devlist));
}
DROPIN_ALIAS(CommInitAll);

ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                            ncclConfig_t *config)
{
    __typeof__(&pncclCommSplit) f;
    if (DROPIN_FROM_NCCL())
        DROPIN_PASS(CommSplit, (comm, color, key, newcomm, config));
    if (!(f = DROPIN_FN(CommSplit)))
        return dropin_unavailable(DROPIN_IDX_CommSplit);
    /* NCCL_SPLIT_NOCOLOR ranks get no communicator */
    return made(DROPIN_INTO(f(comm, color, key, newcomm, config)), newcomm, config);
}
DROPIN_ALIAS(CommSplit);

/* acc off for good on comm, its part released when no call uses it. */
static void switch_off(ncclComm_t comm, const char *why)
{
    dropin_comm_t *s = dropin_comm_get(comm);
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    dropin_switch_off(s, ACC_LOG_INFO, why);
    pthread_mutex_unlock(&s->mu);
    dropin_comm_put(s);
}

ncclResult_t pncclCommShrink(ncclComm_t comm, int *exclude, int nexclude, ncclComm_t *newcomm,
                             ncclConfig_t *config, int flags)
{
    __typeof__(&pncclCommShrink) f;
    if (DROPIN_FROM_NCCL())
        DROPIN_PASS(CommShrink, (comm, exclude, nexclude, newcomm, config, flags));
    if (!(f = DROPIN_FN(CommShrink)))
        return dropin_unavailable(DROPIN_IDX_CommShrink);
    /* The parent's outstanding work is abandoned: acc's part of it stops with NCCL's. */
    if (flags & NCCL_SHRINK_ABORT)
        switch_off(comm, "ncclCommShrink with NCCL_SHRINK_ABORT: acc stops at once");
    return made(DROPIN_INTO(f(comm, exclude, nexclude, newcomm, config, flags)), newcomm, config);
}
DROPIN_ALIAS(CommShrink);

ncclResult_t pncclCommRevoke(ncclComm_t comm, int flags)
{
    if (!DROPIN_FROM_NCCL())
        switch_off(comm, "ncclCommRevoke: acc stops at once");
    DROPIN_PASS(CommRevoke, (comm, flags));
}
DROPIN_ALIAS(CommRevoke);

ncclResult_t pncclCommSuspend(ncclComm_t comm, int flags)
{
    if (!DROPIN_FROM_NCCL()) {
        switch_off(comm, "ncclCommSuspend: acc gives its device memory back");
        rt_cuda_reclaim();
    }
    DROPIN_PASS(CommSuspend, (comm, flags));
}
DROPIN_ALIAS(CommSuspend);

/* ---- leaving ------------------------------------------------------------------------------- */

ncclResult_t pncclCommFinalize(ncclComm_t comm)
{
    if (!DROPIN_FROM_NCCL())
        dropin_leave(comm, 0);
    DROPIN_PASS(CommFinalize, (comm));
}
DROPIN_ALIAS(CommFinalize);

ncclResult_t pncclCommDestroy(ncclComm_t comm)
{
    if (!DROPIN_FROM_NCCL())
        dropin_leave(comm, 0);
    DROPIN_PASS(CommDestroy, (comm));
}
DROPIN_ALIAS(CommDestroy);

ncclResult_t pncclCommAbort(ncclComm_t comm)
{
    if (!DROPIN_FROM_NCCL())
        dropin_leave(comm, 1); /* sets flags; waits for nothing */
    DROPIN_PASS(CommAbort, (comm));
}
DROPIN_ALIAS(CommAbort);

/* ---- errors -------------------------------------------------------------------------------- */

ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async_error)
{
    __typeof__(&pncclCommGetAsyncError) f;
    dropin_comm_t *s;
    ncclResult_t rc;

    if (DROPIN_FROM_NCCL())
        DROPIN_PASS(CommGetAsyncError, (comm, async_error));
    if (!(f = DROPIN_FN(CommGetAsyncError)))
        return dropin_unavailable(DROPIN_IDX_CommGetAsyncError);
    rc = DROPIN_INTO(f(comm, async_error));
    if (rc != ncclSuccess || !async_error || *async_error != ncclSuccess ||
        !(s = dropin_comm_get(comm)))
        return rc;
    dropin_check_device(s);
    pthread_mutex_lock(&s->mu);
    if (s->lost)
        *async_error = s->lost_as;
    pthread_mutex_unlock(&s->mu);
    dropin_comm_put(s);
    return rc;
}
DROPIN_ALIAS(CommGetAsyncError);

const char *pncclGetLastError(ncclComm_t comm)
{
    static _Thread_local char text[512];
    dropin_comm_t *s;
    int mine = 0;

    if (DROPIN_FROM_NCCL() || !(s = dropin_comm_get(comm))) {
        __typeof__(&pncclGetLastError) f = DROPIN_FN(GetLastError);
        return f ? DROPIN_INTO(f(comm)) : "";
    }
    pthread_mutex_lock(&s->mu);
    if ((mine = s->lost))
        snprintf(text, sizeof(text), "%s", s->error);
    pthread_mutex_unlock(&s->mu);
    dropin_comm_put(s);
    if (mine)
        return text;
    {
        __typeof__(&pncclGetLastError) f = DROPIN_FN(GetLastError);
        return f ? DROPIN_INTO(f(comm)) : "";
    }
}
DROPIN_ALIAS(GetLastError);
