/*
 * A stand-in libnccl.so.2 for machines without a GPU: NCCL's API over acc's host backend, one
 * process per rank, host memory for buffers.  It serves the runtime's tests (a communicator made
 * from "NCCL", the fallback that goes to "NCCL") and records every call it receives, one line
 * each, in the file FAKE_NCCL_LOG names, so that tests can see what reached NCCL.  Only what
 * acc and its tests call is here; anything else is absent, as in a library that lacks it.
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

enum { ncclSuccess = 0, ncclInternalError = 3, ncclInvalidArgument = 4, ncclInvalidUsage = 5 };

#define EXPORT __attribute__((visibility("default")))

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

EXPORT ncclResult_t ncclGetVersion(int *v)
{
    *v = 22809;
    return ncclSuccess;
}

EXPORT const char *ncclGetErrorString(ncclResult_t r)
{
    return r == ncclSuccess ? "no error" : "stand-in NCCL error";
}

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    record("ncclGetUniqueId");
    return status(acc_get_unique_id((acc_unique_id_t *)id));
}

EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    acc_comm_opts_t o;
    acc_comm_opts_init(&o);
    o.backend = ACC_BACKEND_HOST;
    o.disable = 1; /* the stand-in is "NCCL": its own schedules are the ring */
    record("ncclCommInitRank nranks=%d rank=%d", nranks, rank);
    return status(acc_comm_init_rank(comm, nranks, (acc_unique_id_t *)&id, rank, &o));
}

EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    record("ncclCommDestroy");
    return status(acc_comm_destroy(comm));
}

EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    record("ncclCommAbort");
    return status(acc_comm_abort(comm));
}

EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
    *count = acc_comm_size(comm);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
    *rank = acc_comm_rank(comm);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device)
{
    (void)comm;
    *device = -1; /* no GPU: buffers are host memory */
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err)
{
    acc_status_t st = ACC_OK;
    acc_comm_get_async_error(comm, &st);
    *err = status(st);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, int t, int op, ncclComm_t c,
                                  void *stream)
{
    record("ncclAllReduce count=%zu type=%d op=%d", n, t, op);
    return status(acc_allreduce(s, r, n, dtype(t), redop(op), c, stream));
}

EXPORT ncclResult_t ncclAllGather(const void *s, void *r, size_t n, int t, ncclComm_t c,
                                  void *stream)
{
    record("ncclAllGather count=%zu type=%d", n, t);
    return status(acc_allgather(s, r, n, dtype(t), c, stream));
}

EXPORT ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, int t, int op, ncclComm_t c,
                                      void *stream)
{
    record("ncclReduceScatter count=%zu type=%d op=%d", n, t, op);
    return status(acc_reduce_scatter(s, r, n, dtype(t), redop(op), c, stream));
}

EXPORT ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, int t, int root, ncclComm_t c,
                                  void *stream)
{
    record("ncclBroadcast count=%zu type=%d root=%d", n, t, root);
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

EXPORT ncclResult_t ncclReduce(const void *s, void *r, size_t n, int t, int op, int root,
                               ncclComm_t c, void *stream)
{
    record("ncclReduce count=%zu type=%d op=%d root=%d", n, t, op, root);
    return status(acc_reduce(s, r, n, dtype(t), redop(op), root, c, stream));
}

EXPORT ncclResult_t ncclGroupStart(void)
{
    record("ncclGroupStart");
    return status(acc_group_start());
}

EXPORT ncclResult_t ncclGroupEnd(void)
{
    record("ncclGroupEnd");
    return status(acc_group_end());
}
