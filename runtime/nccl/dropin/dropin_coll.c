/*
 * The calls: a collective runs through acc when acc serves it (acc_comm_serves: a range of the
 * tables gives it acc's plan, the same answer on every rank), on the caller's stream; anything
 * else goes to the real NCCL unchanged.
 *
 * Groups.  ncclGroupStart/End always reach NCCL too, so that NCCL's own group (communicators
 * made inside it, and NCCL's calls of its own API) stays intact.  Inside a group the drop-in
 * holds back the collectives acc serves; the first call that is not acc's sends the group to
 * NCCL: what was held back joins NCCL's open group, and the rest follows it there.  A group
 * whose every call is acc's runs through acc, in order, at the outermost end.  Because NCCL
 * asks every rank to make the same collective calls in the same order, the choice is the same
 * on every rank; a group that mixes point-to-point calls on some ranks with collectives acc
 * serves on others would split, and is left to the job (NCCL's rules forbid little there).
 */
#include "dropin_internal.h"

#include "nccl_lib.h"

static const char *const names[DROPIN_IDX_COUNT] = {
#define DROPIN_NAME(ret, name, params, args) "nccl" #name,
    DROPIN_API(DROPIN_NAME)
#undef DROPIN_NAME
};

/* One call as the job made it. */
typedef struct {
    int index;       /* its entry point */
    acc_coll_t coll; /* ACC_COLL_COUNT: none acc runs (point-to-point, alltoall, gather, ...) */
    const void *send;
    void *recv;
    size_t count;
    ncclDataType_t type;
    ncclRedOp_t op;
    int root; /* or the peer */
    ncclComm_t comm;
    cudaStream_t stream;
} dropin_op_t;

/* This thread's group: its depth, whether it goes to NCCL, and the calls held back for acc. */
static _Thread_local struct {
    int depth;
    int nccl;
    dropin_op_t *ops;
    size_t n, cap;
} grp;

int dropin_group_depth(void)
{
    return grp.depth;
}

#define FORWARD_CASE(name, args)                                                                   \
    case DROPIN_IDX_##name:                                                                        \
        return r->name ? r->name args : dropin_unavailable(DROPIN_IDX_##name, #name);

static ncclResult_t forward(const dropin_op_t *k)
{
    const dropin_real_t *r = dropin_real();
    if (!r)
        return dropin_unavailable(k->index, names[k->index] + 4);
    switch (k->index) {
        FORWARD_CASE(AllReduce, (k->send, k->recv, k->count, k->type, k->op, k->comm, k->stream))
        FORWARD_CASE(AllGather, (k->send, k->recv, k->count, k->type, k->comm, k->stream))
        FORWARD_CASE(ReduceScatter,
                     (k->send, k->recv, k->count, k->type, k->op, k->comm, k->stream))
        FORWARD_CASE(Broadcast, (k->send, k->recv, k->count, k->type, k->root, k->comm, k->stream))
        FORWARD_CASE(Bcast, (k->recv, k->count, k->type, k->root, k->comm, k->stream))
        FORWARD_CASE(Reduce,
                     (k->send, k->recv, k->count, k->type, k->op, k->root, k->comm, k->stream))
        FORWARD_CASE(AlltoAll, (k->send, k->recv, k->count, k->type, k->comm, k->stream))
        FORWARD_CASE(Gather, (k->send, k->recv, k->count, k->type, k->root, k->comm, k->stream))
        FORWARD_CASE(Scatter, (k->send, k->recv, k->count, k->type, k->root, k->comm, k->stream))
        FORWARD_CASE(Send, (k->send, k->count, k->type, k->root, k->comm, k->stream))
        FORWARD_CASE(Recv, (k->recv, k->count, k->type, k->root, k->comm, k->stream))
    default:
        return ncclInternalError;
    }
}

/* acc's communicator when acc serves k -- with a reference and the call begun
 * (dropin_comm_begin) -- and k's type and reduction as acc's; NULL when NCCL runs k. */
static dropin_comm_t *acc_serving(const dropin_op_t *k, acc_dtype_t *dt, acc_redop_t *op)
{
    dropin_comm_t *s;
    int serves = 0;

    *op = ACC_RED_SUM;
    if (k->coll == ACC_COLL_COUNT || !nccl_dtype_to_acc((int)k->type, dt) ||
        (acc_coll_reduces(k->coll) && !nccl_redop_to_acc((int)k->op, op)) ||
        !(s = dropin_comm_get(k->comm)))
        return NULL;
    if (!dropin_comm_begin(s)) {
        dropin_comm_put(s);
        return NULL;
    }
    if (acc_comm_serves(s->acc, k->coll, k->count, *dt, k->root, &serves) != ACC_OK || !serves) {
        dropin_comm_end(s, ACC_NO_DATA, names[k->index]);
        dropin_comm_put(s);
        return NULL;
    }
    return s;
}

static acc_status_t run_acc(const dropin_op_t *k, acc_comm_t *c, acc_dtype_t dt, acc_redop_t op)
{
    acc_stream_t st = (acc_stream_t)k->stream;
    switch (k->coll) {
    case ACC_COLL_ALLREDUCE:
        return acc_allreduce(k->send, k->recv, k->count, dt, op, c, st);
    case ACC_COLL_ALLGATHER:
        return acc_allgather(k->send, k->recv, k->count, dt, c, st);
    case ACC_COLL_REDUCE_SCATTER:
        return acc_reduce_scatter(k->send, k->recv, k->count, dt, op, c, st);
    case ACC_COLL_BROADCAST:
        return acc_broadcast(k->send, k->recv, k->count, dt, k->root, c, st);
    case ACC_COLL_REDUCE:
        return acc_reduce(k->send, k->recv, k->count, dt, op, k->root, c, st);
    default:
        return acc_error_set(ACC_NO_DATA, "%s is not acc's", names[k->index]);
    }
}

/* Through acc when acc serves k, else (and when acc does not finish it) through NCCL.  1 when
 * acc ran it. */
static int try_acc(const dropin_op_t *k)
{
    acc_dtype_t dt;
    acc_redop_t op;
    dropin_comm_t *s = acc_serving(k, &dt, &op);
    acc_status_t st;

    if (!s)
        return 0;
    st = run_acc(k, s->acc, dt, op);
    dropin_comm_end(s, st, names[k->index]);
    dropin_comm_put(s);
    return st == ACC_OK;
}

/* ---- groups ------------------------------------------------------------------------------ */

static void group_reset(void)
{
    acc_mem_free(grp.ops);
    grp.ops = NULL;
    grp.n = grp.cap = 0;
    grp.nccl = 0;
}

/* The group goes to NCCL: what was held back joins NCCL's open group, in order. */
static ncclResult_t group_to_nccl(void)
{
    ncclResult_t rc = ncclSuccess, one;
    grp.nccl = 1;
    for (size_t i = 0; i < grp.n; i++)
        if ((one = forward(&grp.ops[i])) != ncclSuccess && rc == ncclSuccess)
            rc = one;
    grp.n = 0;
    return rc;
}

static ncclResult_t group_add(const dropin_op_t *k)
{
    acc_dtype_t dt;
    acc_redop_t op;
    dropin_comm_t *s;
    ncclResult_t rc = ncclSuccess, one;

    if (!grp.nccl && (s = acc_serving(k, &dt, &op))) {
        /* acc's: held back for the group's end, which asks again and runs it */
        dropin_comm_end(s, ACC_NO_DATA, names[k->index]);
        dropin_comm_put(s);
        if (acc_array_reserve((void **)&grp.ops, &grp.cap, grp.n + 1, sizeof(*grp.ops)) == ACC_OK) {
            grp.ops[grp.n++] = *k;
            return ncclSuccess;
        }
    }
    if (!grp.nccl)
        rc = group_to_nccl();
    one = forward(k);
    return rc != ncclSuccess ? rc : one;
}

/* The outermost end of a group whose calls are all acc's: each through acc, in order; from the
 * first one acc does not finish on, the rest go to NCCL as one group of their own. */
static ncclResult_t group_run_acc(const dropin_real_t *r)
{
    ncclResult_t rc = ncclSuccess, one;
    size_t i = 0;

    while (i < grp.n && try_acc(&grp.ops[i]))
        i++;
    if (i == grp.n)
        return ncclSuccess;
    if ((rc = r->GroupStart()) != ncclSuccess)
        return rc;
    for (; i < grp.n; i++)
        if ((one = forward(&grp.ops[i])) != ncclSuccess && rc == ncclSuccess)
            rc = one;
    one = r->GroupEnd();
    return rc != ncclSuccess ? rc : one;
}

static ncclResult_t submit(const dropin_op_t *k)
{
    if (grp.depth > 0)
        return group_add(k);
    return try_acc(k) ? ncclSuccess : forward(k);
}

ncclResult_t pncclGroupStart(void)
{
    DROPIN_REAL(r, GroupStart)
    ncclResult_t rc = r->GroupStart();
    grp.depth += rc == ncclSuccess;
    return rc;
}
DROPIN_ALIAS(GroupStart);

ncclResult_t pncclGroupEnd(void)
{
    DROPIN_REAL(r, GroupEnd)
    ncclResult_t rc = r->GroupEnd(), mine;

    if (grp.depth == 0 || --grp.depth > 0)
        return rc; /* NCCL judges an end without a start, and keeps its own depth */
    /* NCCL's group has ended: it held nothing of a group acc runs. */
    mine = grp.n ? group_run_acc(r) : ncclSuccess;
    group_reset();
    return rc != ncclSuccess ? rc : mine;
}
DROPIN_ALIAS(GroupEnd);

/* NCCL simulates the group instead of running it: everything held back joins it first. */
ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t *info)
{
    DROPIN_REAL(r, GroupSimulateEnd)
    ncclResult_t rc = ncclSuccess, one;

    if (grp.depth == 1) {
        rc = group_to_nccl();
        group_reset();
    }
    if (grp.depth > 0)
        grp.depth--;
    one = r->GroupSimulateEnd(info);
    return rc != ncclSuccess ? rc : one;
}
DROPIN_ALIAS(GroupSimulateEnd);

/* One call as the job made it, to acc or NCCL. */
static ncclResult_t submit_call(int index, acc_coll_t coll, const void *send, void *recv,
                                size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                                ncclComm_t comm, cudaStream_t stream)
{
    dropin_op_t k = {index, coll, send, recv, count, type, op, root, comm, stream};
    return submit(&k);
}

/* ---- the calls --------------------------------------------------------------------------- */

ncclResult_t pncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                            cudaStream_t stream)
{
    return submit_call(DROPIN_IDX_AllReduce, ACC_COLL_ALLREDUCE, sendbuff, recvbuff, count,
                       datatype, op, 0, comm, stream);
}
DROPIN_ALIAS(AllReduce);

ncclResult_t pncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    return submit_call(DROPIN_IDX_AllGather, ACC_COLL_ALLGATHER, sendbuff, recvbuff, sendcount,
                       datatype, ncclSum, 0, comm, stream);
}
DROPIN_ALIAS(AllGather);

ncclResult_t pncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                cudaStream_t stream)
{
    return submit_call(DROPIN_IDX_ReduceScatter, ACC_COLL_REDUCE_SCATTER, sendbuff, recvbuff,
                       recvcount, datatype, op, 0, comm, stream);
}
DROPIN_ALIAS(ReduceScatter);

ncclResult_t pncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                            ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
    return submit_call(DROPIN_IDX_Broadcast, ACC_COLL_BROADCAST, sendbuff, recvbuff, count,
                       datatype, ncclSum, root, comm, stream);
}
DROPIN_ALIAS(Broadcast);

/* The in-place broadcast of NCCL's first API. */
ncclResult_t pncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream)
{
    return submit_call(DROPIN_IDX_Bcast, ACC_COLL_BROADCAST, buff, buff, count, datatype, ncclSum,
                       root, comm, stream);
}
DROPIN_ALIAS(Bcast);

ncclResult_t pncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                         ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                         cudaStream_t stream)
{
    return submit_call(DROPIN_IDX_Reduce, ACC_COLL_REDUCE, sendbuff, recvbuff, count, datatype, op,
                       root, comm, stream);
}
DROPIN_ALIAS(Reduce);

/* Calls acc has no plans for: NCCL's, inside a group too (which then goes to NCCL whole). */

ncclResult_t pncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    return submit_call(DROPIN_IDX_AlltoAll, ACC_COLL_COUNT, sendbuff, recvbuff, count, datatype,
                       ncclSum, 0, comm, stream);
}
DROPIN_ALIAS(AlltoAll);

ncclResult_t pncclGather(const void *sendbuff, void *recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
    return submit_call(DROPIN_IDX_Gather, ACC_COLL_COUNT, sendbuff, recvbuff, count, datatype,
                       ncclSum, root, comm, stream);
}
DROPIN_ALIAS(Gather);

ncclResult_t pncclScatter(const void *sendbuff, void *recvbuff, size_t count,
                          ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
    return submit_call(DROPIN_IDX_Scatter, ACC_COLL_COUNT, sendbuff, recvbuff, count, datatype,
                       ncclSum, root, comm, stream);
}
DROPIN_ALIAS(Scatter);

ncclResult_t pncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t stream)
{
    return submit_call(DROPIN_IDX_Send, ACC_COLL_COUNT, sendbuff, NULL, count, datatype, ncclSum,
                       peer, comm, stream);
}
DROPIN_ALIAS(Send);

ncclResult_t pncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t stream)
{
    return submit_call(DROPIN_IDX_Recv, ACC_COLL_COUNT, NULL, recvbuff, count, datatype, ncclSum,
                       peer, comm, stream);
}
DROPIN_ALIAS(Recv);
