/*
 * A stand-in libnccl.so.2 for machines without a GPU: NCCL's API over acc's host backend, one
 * process per rank, host memory for buffers.  It serves the runtime's tests (a communicator made
 * from "NCCL", the fallback that goes to "NCCL") and records every call it receives, one line
 * each, in the file FAKE_NCCL_LOG names, so that tests can see what reached NCCL.  It exports
 * every function of nccl.h 2.28 as NCCL does (pnccl<Name>, and ncclName as a weak alias of it);
 * what the host backend cannot do (point-to-point, alltoall, splitting, windows, PreMulSum) is
 * recorded and refused with ncclInvalidUsage.
 */
#include "acc_runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    ncclInvalidUsage = 5
};

#define EXPORT __attribute__((visibility("default")))
/* NCCL's export pattern: the call is pncclName, ncclName a weak alias of it. */
#define ALIAS(name) EXPORT __typeof__(p##name) name __attribute__((weak, alias("p" #name)))

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
    *v = 22809;
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

EXPORT ncclResult_t pncclMemAlloc(void **ptr, size_t size)
{
    record("ncclMemAlloc size=%zu", size);
    *ptr = malloc(size ? size : 1);
    return *ptr ? ncclSuccess : ncclSystemError;
}
ALIAS(ncclMemAlloc);

EXPORT ncclResult_t pncclMemFree(void *ptr)
{
    record("ncclMemFree");
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
    (void)comm;
    record("ncclCommCuDevice");
    *device = -1; /* no GPU: buffers are host memory */
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
REFUSED(ncclCommRevoke, (ncclComm_t comm, int flags))
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

EXPORT ncclResult_t pncclAllReduce(const void *s, void *r, size_t n, int t, int op, ncclComm_t c,
                                   void *stream)
{
    record("ncclAllReduce count=%zu type=%d op=%d", n, t, op);
    return status(acc_allreduce(s, r, n, dtype(t), redop(op), c, stream));
}
ALIAS(ncclAllReduce);

EXPORT ncclResult_t pncclAllGather(const void *s, void *r, size_t n, int t, ncclComm_t c,
                                   void *stream)
{
    record("ncclAllGather count=%zu type=%d", n, t);
    return status(acc_allgather(s, r, n, dtype(t), c, stream));
}
ALIAS(ncclAllGather);

EXPORT ncclResult_t pncclReduceScatter(const void *s, void *r, size_t n, int t, int op,
                                       ncclComm_t c, void *stream)
{
    record("ncclReduceScatter count=%zu type=%d op=%d", n, t, op);
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
    record("ncclBroadcast count=%zu type=%d root=%d", n, t, root);
    return broadcast(s, r, n, t, root, c, stream);
}
ALIAS(ncclBroadcast);

EXPORT ncclResult_t pncclBcast(void *buf, size_t n, int t, int root, ncclComm_t c, void *stream)
{
    record("ncclBcast count=%zu type=%d root=%d", n, t, root);
    return broadcast(buf, buf, n, t, root, c, stream);
}
ALIAS(ncclBcast);

EXPORT ncclResult_t pncclReduce(const void *s, void *r, size_t n, int t, int op, int root,
                                ncclComm_t c, void *stream)
{
    record("ncclReduce count=%zu type=%d op=%d root=%d", n, t, op, root);
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
