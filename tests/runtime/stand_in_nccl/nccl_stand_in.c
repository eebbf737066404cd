/*
 * A stand-in libnccl.so.2 for machines without a GPU: NCCL's API over acc's host backend, one
 * process per rank, host memory for buffers.  It serves the runtime's tests (a communicator made
 * from "NCCL", the fallback that goes to "NCCL") and records every call it receives, one line
 * each, in the file FAKE_NCCL_LOG names, so that tests can see what reached NCCL.  It exports
 * NCCL's API as NCCL does (pnccl<Name>, and ncclName an alias of it): built as NCCL 2.32.3,
 * every function of nccl.h and of the device API's host side (those beyond 2.28 recorded and
 * refused, nccl_stand_in_new.c, unless defined here); built with STAND_IN_VERSION=22809, the 41
 * functions of 2.28.9 only - an older NCCL.  What the host backend cannot do (point-to-point,
 * alltoall, splitting, windows, PreMulSum) is recorded and refused with ncclInvalidUsage.
 *
 * It behaves as NCCL does where the drop-in must cope with it:
 *   - NCCL calls some of its exported functions itself, through the dynamic linker, so that a
 *     preloaded library receives them: every collective asks ncclCommGetAsyncError first (as
 *     NCCL's enqueue does), ncclBcast calls ncclBroadcast, and stand_in_internal_broadcast()
 *     is NCCL's own ncclBroadcast for the tests to trigger.
 *   - FAKE_NCCL_DEVICE=N: its communicators say they are on GPU N (ncclCommCuDevice), for tests
 *     with a stub CUDA driver (tests/runtime/stub_cuda/), whose "device memory" is host memory;
 *     a broadcast from memory that driver did not allocate is recorded as "from host memory".
 *   - FAKE_NCCL_HANG_COUNT=N: an all-reduce of N elements never completes - as a kernel hung on
 *     a peer, it keeps the stub driver's synchronisations waiting - until ncclCommAbort of its
 *     communicator, from another thread, ends it with ncclRemoteError.
 */
#include "acc_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef STAND_IN_VERSION
#define STAND_IN_VERSION 23203
#endif

typedef int ncclResult_t;
typedef acc_comm_t *ncclComm_t;
typedef struct {
    char internal[128];
} ncclUniqueId;

enum {
    ncclSuccess = 0,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6
};

#define EXPORT __attribute__((visibility("default")))
/* NCCL's export pattern: the call is pncclName, ncclName an alias of it.  (Strong here: the
 * refusals of nccl_stand_in_new.c are weak, and give way to what this file defines.) */
#define ALIAS(name) EXPORT __typeof__(p##name) name __attribute__((alias("p" #name)))

static void record(const char *fmt, ...) ACC_PRINTF(1, 2);

/* NCCL's own API, called through the dynamic linker as NCCL calls it. */
EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err);
EXPORT ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, int t, int root, ncclComm_t c,
                                  void *stream);

/* ---- the stub CUDA driver, when the process has one (tests/runtime/stub_cuda/) ---------- */

static void *stub_fn(const char *name)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD), *f = NULL;
    if (h) {
        f = dlsym(h, name);
        dlclose(h);
    }
    return f;
}

/* A kernel of NCCL's starts (+1) or ends (-1) on the stub's device. */
static void device_busy(int delta)
{
    void (*busy)(int) = (void (*)(int))stub_fn("stub_cuda_busy");
    if (busy)
        busy(delta);
}

/* Is p memory the stub allocated as device memory?  1 without a stub (nothing to tell). */
static int device_memory(const void *p)
{
    int (*owns)(const void *) = (int (*)(const void *))stub_fn("stub_cuda_is_device");
    return !owns || owns(p);
}

/* ---- hung collectives and their abort ---------------------------------------------------- */

static pthread_mutex_t hang_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hang_cond = PTHREAD_COND_INITIALIZER;
static ncclComm_t aborted[64];
static int naborted;

static int was_aborted(ncclComm_t c)
{
    for (int i = 0; i < naborted; i++)
        if (aborted[i] == c)
            return 1;
    return 0;
}

/* The collective of FAKE_NCCL_HANG_COUNT elements: waits for its communicator's abort. */
static int hangs(size_t n, ncclComm_t c)
{
    const char *h = getenv("FAKE_NCCL_HANG_COUNT");
    if (!h || strtoull(h, NULL, 10) != n)
        return 0;
    device_busy(1);
    pthread_mutex_lock(&hang_lock);
    /* Said under the lock: an abort that follows this line takes the lock after the wait has
     * released it, so the communicator is no longer touched here when the abort frees it. */
    record("hung count=%zu", n);
    while (!was_aborted(c))
        pthread_cond_wait(&hang_cond, &hang_lock);
    pthread_mutex_unlock(&hang_lock);
    device_busy(-1);
    record("hung call ended by abort");
    return 1;
}

/* What NCCL's enqueue checks first: the communicator's async error, through the API. */
static ncclResult_t ready(ncclComm_t c)
{
    ncclResult_t e = ncclSuccess, rc = ncclCommGetAsyncError(c, &e);
    return rc != ncclSuccess ? rc : e;
}

static void record(const char *fmt, ...)
{
    /* The stand-in is test code standing in for a vendor library: it reads its own variable,
     * as fake_nvml does, not acc's settings. */
    const char *path = getenv("FAKE_NCCL_LOG");
    FILE *f;
    va_list ap;
    if (!path || !(f = fopen(path, "a")))
        return;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

static ncclResult_t status(acc_status_t st)
{
    if (st == ACC_OK)
        return ncclSuccess;
    return st == ACC_ERR_INVALID ? ncclInvalidArgument : ncclInternalError;
}

static acc_dtype_t dtype(int t)
{
    switch (t) {
    case 2:
        return ACC_DT_I32;
    case 6:
        return ACC_DT_F16;
    case 8:
        return ACC_DT_F64;
    case 9:
        return ACC_DT_BF16;
    case 7:
        return ACC_DT_F32;
    default:
        return (acc_dtype_t)-1; /* int8 and the rest: refused, as acc has no such type */
    }
}

static acc_redop_t redop(int op)
{
    static const acc_redop_t map[] = {ACC_RED_SUM, ACC_RED_PROD, ACC_RED_MAX, ACC_RED_MIN,
                                      ACC_RED_AVG};
    return op >= 0 && op < 5 ? map[op] : (acc_redop_t)-1;
}

EXPORT ncclResult_t pncclGetVersion(int *v)
{
    record("ncclGetVersion");
    *v = STAND_IN_VERSION;
    return ncclSuccess;
}
ALIAS(ncclGetVersion);

EXPORT const char *pncclGetErrorString(ncclResult_t r)
{
    return r == ncclSuccess ? "no error" : "stand-in NCCL error";
}
ALIAS(ncclGetErrorString);

EXPORT const char *pncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    record("ncclGetLastError");
    return "";
}
ALIAS(ncclGetLastError);

EXPORT void pncclResetDebugInit(void)
{
    record("ncclResetDebugInit");
}
ALIAS(ncclResetDebugInit);

EXPORT ncclResult_t pncclGetUniqueId(ncclUniqueId *id)
{
    record("ncclGetUniqueId");
    return status(acc_get_unique_id((acc_unique_id_t *)id));
}
ALIAS(ncclGetUniqueId);

/* Device memory, as NCCL's: the stub driver's when there is one, else (no GPU) host memory. */
EXPORT ncclResult_t pncclMemAlloc(void **ptr, size_t size)
{
    int (*alloc)(void **, size_t) = (int (*)(void **, size_t))stub_fn("cuMemAlloc_v2");
    record("ncclMemAlloc size=%zu", size);
    if (getenv("FAKE_NCCL_DEVICE") && alloc)
        return alloc(ptr, size ? size : 1) == 0 ? ncclSuccess : ncclSystemError;
    *ptr = malloc(size ? size : 1);
    return *ptr ? ncclSuccess : ncclSystemError;
}
ALIAS(ncclMemAlloc);

EXPORT ncclResult_t pncclMemFree(void *ptr)
{
    int (*dev_free)(void *) = (int (*)(void *))stub_fn("cuMemFree_v2");
    record("ncclMemFree");
    if (getenv("FAKE_NCCL_DEVICE") && dev_free)
        return dev_free(ptr) == 0 ? ncclSuccess : ncclInvalidArgument;
    free(ptr);
    return ncclSuccess;
}
ALIAS(ncclMemFree);

static ncclResult_t init_rank(ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank)
{
    acc_comm_opts_t o;
    acc_comm_opts_init(&o);
    o.backend = ACC_BACKEND_HOST;
    o.disable = 1; /* the stand-in is "NCCL": its own schedules are the ring */
    /* NCCL waits as long as a job needs: tests break acc's communicators with short timeouts
     * (ACC_TIMEOUT_MS), never the stand-in's. */
    o.timeout_ms = 120000;
    return status(acc_comm_init_rank(comm, nranks, (const acc_unique_id_t *)id, rank, &o));
}

EXPORT ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    record("ncclCommInitRank nranks=%d rank=%d", nranks, rank);
    return init_rank(comm, nranks, &id, rank);
}
ALIAS(ncclCommInitRank);

EXPORT ncclResult_t pncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                            void *config)
{
    (void)config;
    record("ncclCommInitRankConfig nranks=%d rank=%d", nranks, rank);
    return init_rank(comm, nranks, &id, rank);
}
ALIAS(ncclCommInitRankConfig);

EXPORT ncclResult_t pncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nids,
                                              ncclUniqueId *ids, void *config)
{
    (void)config;
    record("ncclCommInitRankScalable nranks=%d rank=%d nids=%d", nranks, rank, nids);
    return nids >= 1 ? init_rank(comm, nranks, &ids[0], rank) : ncclInvalidArgument;
}
ALIAS(ncclCommInitRankScalable);

EXPORT ncclResult_t pncclCommFinalize(ncclComm_t comm)
{
    (void)comm;
    record("ncclCommFinalize");
    return ncclSuccess;
}
ALIAS(ncclCommFinalize);

EXPORT ncclResult_t pncclCommDestroy(ncclComm_t comm)
{
    record("ncclCommDestroy");
    return status(acc_comm_destroy(comm));
}
ALIAS(ncclCommDestroy);

EXPORT ncclResult_t pncclCommAbort(ncclComm_t comm)
{
    record("ncclCommAbort");
    pthread_mutex_lock(&hang_lock);
    if (naborted < 64)
        aborted[naborted++] = comm;
    pthread_cond_broadcast(&hang_cond);
    pthread_mutex_unlock(&hang_lock);
    return status(acc_comm_abort(comm));
}
ALIAS(ncclCommAbort);

EXPORT ncclResult_t pncclCommCount(const ncclComm_t comm, int *count)
{
    record("ncclCommCount");
    *count = acc_comm_size(comm);
    return ncclSuccess;
}
ALIAS(ncclCommCount);

EXPORT ncclResult_t pncclCommUserRank(const ncclComm_t comm, int *rank)
{
    record("ncclCommUserRank");
    *rank = acc_comm_rank(comm);
    return ncclSuccess;
}
ALIAS(ncclCommUserRank);

EXPORT ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int *device)
{
    const char *dev = getenv("FAKE_NCCL_DEVICE");
    (void)comm;
    record("ncclCommCuDevice");
    *device = dev ? atoi(dev) : -1; /* no GPU: buffers are host memory */
    return ncclSuccess;
}
ALIAS(ncclCommCuDevice);

EXPORT ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err)
{
    acc_status_t st = ACC_OK;
    record("ncclCommGetAsyncError");
    acc_comm_get_async_error(comm, &st);
    *err = status(st);
    return ncclSuccess;
}
ALIAS(ncclCommGetAsyncError);

EXPORT ncclResult_t pncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
    (void)comm;
    record("ncclCommRegister size=%zu", size);
    *handle = buff;
    return ncclSuccess;
}
ALIAS(ncclCommRegister);

EXPORT ncclResult_t pncclCommDeregister(const ncclComm_t comm, void *handle)
{
    (void)comm;
    (void)handle;
    record("ncclCommDeregister");
    return ncclSuccess;
}
ALIAS(ncclCommDeregister);

/* What the host backend cannot do: recorded, then refused. */
#define REFUSED(name, params)                                                                      \
    EXPORT ncclResult_t p##name params                                                             \
    {                                                                                              \
        record(#name);                                                                             \
        return ncclInvalidUsage;                                                                   \
    }                                                                                              \
    ALIAS(name);

REFUSED(ncclCommInitAll, (ncclComm_t * comm, int ndev, const int *devlist))
REFUSED(ncclCommSplit, (ncclComm_t comm, int color, int key, ncclComm_t *newcomm, void *config))
REFUSED(ncclCommShrink,
        (ncclComm_t comm, int *exclude, int nexclude, ncclComm_t *newcomm, void *config, int flags))
REFUSED(ncclCommWindowRegister, (ncclComm_t comm, void *buff, size_t size, void **win, int flags))
REFUSED(ncclCommWindowDeregister, (ncclComm_t comm, void *win))
REFUSED(ncclRedOpCreatePreMulSum, (int *op, void *scalar, int type, int residence, ncclComm_t c))
REFUSED(ncclRedOpDestroy, (int op, ncclComm_t comm))
REFUSED(ncclAlltoAll, (const void *s, void *r, size_t n, int t, ncclComm_t c, void *stream))
REFUSED(ncclGather, (const void *s, void *r, size_t n, int t, int root, ncclComm_t c, void *st))
REFUSED(ncclScatter, (const void *s, void *r, size_t n, int t, int root, ncclComm_t c, void *st))
REFUSED(ncclSend, (const void *s, size_t n, int t, int peer, ncclComm_t c, void *stream))
REFUSED(ncclRecv, (void *r, size_t n, int t, int peer, ncclComm_t c, void *stream))
REFUSED(ncclGroupSimulateEnd, (void *info))

/* Accepted and recorded: the host backend has nothing to revoke, suspend or count. */
EXPORT ncclResult_t pncclCommRevoke(ncclComm_t comm, int flags)
{
    (void)comm;
    record("ncclCommRevoke flags=%d", flags);
    return ncclSuccess;
}
ALIAS(ncclCommRevoke);

#if STAND_IN_VERSION >= 22907
EXPORT ncclResult_t pncclCommSuspend(ncclComm_t comm, int flags)
{
    (void)comm;
    record("ncclCommSuspend flags=%d", flags);
    return ncclSuccess;
}
ALIAS(ncclCommSuspend);

EXPORT ncclResult_t pncclCommResume(ncclComm_t comm)
{
    (void)comm;
    record("ncclCommResume");
    return ncclSuccess;
}
ALIAS(ncclCommResume);
#endif

EXPORT ncclResult_t pncclAllReduce(const void *s, void *r, size_t n, int t, int op, ncclComm_t c,
                                   void *stream)
{
    ncclResult_t rc = ready(c);
    record("ncclAllReduce count=%zu type=%d op=%d", n, t, op);
    if (rc != ncclSuccess)
        return rc;
    if (hangs(n, c))
        return ncclRemoteError;
    return status(acc_allreduce(s, r, n, dtype(t), redop(op), c, stream));
}
ALIAS(ncclAllReduce);

EXPORT ncclResult_t pncclAllGather(const void *s, void *r, size_t n, int t, ncclComm_t c,
                                   void *stream)
{
    ncclResult_t rc = ready(c);
    record("ncclAllGather count=%zu type=%d", n, t);
    if (rc != ncclSuccess)
        return rc;
    return status(acc_allgather(s, r, n, dtype(t), c, stream));
}
ALIAS(ncclAllGather);

EXPORT ncclResult_t pncclReduceScatter(const void *s, void *r, size_t n, int t, int op,
                                       ncclComm_t c, void *stream)
{
    ncclResult_t rc = ready(c);
    record("ncclReduceScatter count=%zu type=%d op=%d", n, t, op);
    if (rc != ncclSuccess)
        return rc;
    return status(acc_reduce_scatter(s, r, n, dtype(t), redop(op), c, stream));
}
ALIAS(ncclReduceScatter);

static ncclResult_t broadcast(const void *s, void *r, size_t n, int t, int root, ncclComm_t c,
                              void *stream)
{
    /* bytes (int8) travel as int32 words and a tail: acc has no 8-bit type */
    if (t == 0) {
        acc_status_t st = ACC_OK;
        size_t words = n / 4, tail = n % 4;
        if (words)
            st = acc_broadcast(s, r, words, ACC_DT_I32, root, c, stream);
        for (size_t i = 0; st == ACC_OK && i < tail; i++) {
            int32_t v = acc_comm_rank(c) == root ? ((const unsigned char *)s)[4 * words + i] : 0;
            st = acc_broadcast(&v, &v, 1, ACC_DT_I32, root, c, stream);
            ((unsigned char *)r)[4 * words + i] = (unsigned char)v;
        }
        return status(st);
    }
    return status(acc_broadcast(s, r, n, dtype(t), root, c, stream));
}

EXPORT ncclResult_t pncclBroadcast(const void *s, void *r, size_t n, int t, int root, ncclComm_t c,
                                   void *stream)
{
    ncclResult_t rc = ready(c);
    record("ncclBroadcast count=%zu type=%d root=%d", n, t, root);
    if (!device_memory(r) || (acc_comm_rank(c) == root && !device_memory(s)))
        record("ncclBroadcast from host memory");
    if (rc != ncclSuccess)
        return rc;
    return broadcast(s, r, n, t, root, c, stream);
}
ALIAS(ncclBroadcast);

/* NCCL's first broadcast, which NCCL implements with its own ncclBroadcast. */
EXPORT ncclResult_t pncclBcast(void *buf, size_t n, int t, int root, ncclComm_t c, void *stream)
{
    record("ncclBcast count=%zu type=%d root=%d", n, t, root);
    return ncclBroadcast(buf, buf, n, t, root, c, stream);
}
ALIAS(ncclBcast);

/* For bench_runtime: NCCL's own ncclCommGetAsyncError, as every enqueue of NCCL's calls it -
 * and uses its result (not a tail call, whose return address would be the bench's). */
EXPORT ncclResult_t stand_in_internal_async_error(ncclComm_t c, ncclResult_t *err);
EXPORT ncclResult_t stand_in_internal_async_error(ncclComm_t c, ncclResult_t *err)
{
    ncclResult_t rc = ncclCommGetAsyncError(c, err);
    return rc == ncclSuccess && *err == ncclSuccess ? ncclSuccess : ncclInvalidUsage;
}

/* For the tests: a broadcast that NCCL itself makes (its code calls its API). */
EXPORT ncclResult_t stand_in_internal_broadcast(void *buf, size_t n, int t, ncclComm_t c);
EXPORT ncclResult_t stand_in_internal_broadcast(void *buf, size_t n, int t, ncclComm_t c)
{
    return ncclBroadcast(buf, buf, n, t, 0, c, NULL);
}

EXPORT ncclResult_t pncclReduce(const void *s, void *r, size_t n, int t, int op, int root,
                                ncclComm_t c, void *stream)
{
    ncclResult_t rc = ready(c);
    record("ncclReduce count=%zu type=%d op=%d root=%d", n, t, op, root);
    if (rc != ncclSuccess)
        return rc;
    return status(acc_reduce(s, r, n, dtype(t), redop(op), root, c, stream));
}
ALIAS(ncclReduce);

EXPORT ncclResult_t pncclGroupStart(void)
{
    record("ncclGroupStart");
    return status(acc_group_start());
}
ALIAS(ncclGroupStart);

EXPORT ncclResult_t pncclGroupEnd(void)
{
    record("ncclGroupEnd");
    return status(acc_group_end());
}
ALIAS(ncclGroupEnd);
