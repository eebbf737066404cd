/*
 * The calls: a collective runs through acc when acc serves it (acc_comm_serves: a range of the
 * tables gives it acc's plan, the same answer on every rank), on the caller's stream; anything
 * else goes to the real NCCL unchanged.  Inside a group the calls wait for the group's end
 * (dropin_group.c).
 *
 * When acc fails at a call, the call goes to NCCL - which needs the call's input as the job
 * gave it.  An in-place call's input is its output, and acc may have written part of it before
 * failing (a peer that stopped answering mid-way): handing NCCL that buffer is how an
 * all-reduce of ones over 8 ranks once returned 10 with success.  So on the host backend (host
 * memory) the input of an in-place call is kept aside while acc runs and put back before NCCL
 * runs the call; on the cuda backend, where keeping it would cost a copy of every call on the
 * device, an in-place call acc failed after it may have started fails (the job's error
 * handling, as for NCCL's own failures), and the job's ncclCommGetAsyncError says so too.
 */
#include "dropin_internal.h"

#include "rt_internal.h"
#include "exec/gpu_exec.h"

#include <string.h>

int dropin_acc_kind(const dropin_op_t *k, acc_dtype_t *dt, acc_redop_t *op)
{
    *op = ACC_RED_SUM;
    return k->coll != ACC_COLL_COUNT && !k->config && nccl_dtype_to_acc((int)k->type, dt) &&
           (!acc_coll_reduces(k->coll) || nccl_redop_to_acc((int)k->op, op));
}

int dropin_wants(dropin_comm_t *s, const dropin_op_t *k)
{
    acc_dtype_t dt;
    acc_redop_t op;
    dropin_state_t state;
    acc_comm_t *acc;
    int serves = 0, voted;

    if (!dropin_acc_kind(k, &dt, &op) || !dropin_shape(s))
        return 0;
    pthread_mutex_lock(&s->mu);
    state = s->closing ? DROPIN_NCCL : s->state;
    voted = s->voted;
    acc = s->acc;
    pthread_mutex_unlock(&s->mu);
    if (state == DROPIN_IDLE)
        return voted && dropin_tables_say_acc(s->nranks, s->on_gpu, k->coll, k->count, dt);
    if (state != DROPIN_JOINED)
        return 0;
    pthread_mutex_lock(&s->acc_mu);
    if (acc_comm_serves(acc, k->coll, k->count, dt, k->root, &serves) != ACC_OK)
        serves = 0;
    pthread_mutex_unlock(&s->acc_mu);
    return serves;
}

/* ---- acc's side -------------------------------------------------------------------------- */

static acc_status_t run(const dropin_op_t *k, acc_comm_t *c, acc_dtype_t dt, acc_redop_t op)
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
        return acc_error_set(ACC_NO_DATA, "%s is not acc's", dropin_names[k->index]);
    }
}

/* The input of k when its output overlaps it (an in-place call): its address and size. */
static size_t overlapping_input(const dropin_op_t *k, int nranks, acc_dtype_t dt)
{
    size_t es = acc_dtype_size(dt), in = k->count * es, out = k->count * es;
    const char *s = k->send, *r = k->recv;
    if (k->coll == ACC_COLL_REDUCE_SCATTER)
        in *= (size_t)nranks;
    if (k->coll == ACC_COLL_ALLGATHER)
        out *= (size_t)nranks;
    return s && r && in && s < r + out && r < s + in ? in : 0;
}

/* Join s when it is IDLE and this call is the first its tables give acc.  Under s->mu, which
 * it drops while joining; the state after. */
static dropin_state_t join_if_idle(dropin_comm_t *s, const dropin_op_t *k, acc_dtype_t dt)
{
    acc_comm_t *acc;
    int capturing = 0;

    if (s->state != DROPIN_IDLE || s->closing)
        return s->closing ? DROPIN_NCCL : s->state;
    /* The vote and the join allocate and synchronise, which a stream being captured into a
     * graph cannot take part in: NCCL captures this call, and acc votes or joins at a later one
     * (every rank captures the same calls). */
    if (s->on_gpu && rt_cuda_capturing((acc_cuda_stream_t)k->stream, &capturing) == ACC_OK &&
        capturing)
        return DROPIN_IDLE;
    if (!s->voted) { /* this is the communicator's first call acc could run, on every rank */
        pthread_mutex_unlock(&s->mu);
        dropin_vote(s);
        pthread_mutex_lock(&s->mu);
        if (s->state != DROPIN_IDLE || s->closing)
            return s->closing ? DROPIN_NCCL : s->state;
    }
    if (!dropin_tables_say_acc(s->nranks, s->on_gpu, k->coll, k->count, dt))
        return DROPIN_IDLE;
    s->state = DROPIN_JOINING;
    pthread_mutex_unlock(&s->mu);
    acc = dropin_join(s);
    pthread_mutex_lock(&s->mu);
    if (s->state == DROPIN_JOINING && acc && !s->closing) {
        s->state = DROPIN_JOINED;
        s->acc = acc;
    } else {
        if (s->state == DROPIN_JOINING)
            s->state = DROPIN_NCCL;
        pthread_mutex_unlock(&s->mu);
        if (acc)
            acc_comm_abort(acc); /* switched off or aborted while it joined */
        pthread_mutex_lock(&s->mu);
    }
    return s->closing ? DROPIN_NCCL : s->state;
}

int dropin_join_for(dropin_comm_t *s, const dropin_op_t *ops, size_t n)
{
    acc_dtype_t dt;
    acc_redop_t op;
    dropin_state_t st;
    size_t i = 0;

    while (i < n && ops[i].comm != s->nccl)
        i++;
    if (i == n || !dropin_acc_kind(&ops[i], &dt, &op) || !dropin_shape(s))
        return 0;
    pthread_mutex_lock(&s->mu);
    st = join_if_idle(s, &ops[i], dt);
    pthread_mutex_unlock(&s->mu);
    return st == DROPIN_JOINED;
}

/* acc failed at k: NCCL runs every later call.  lost: a result acc had reported done (an
 * earlier launch) or may have written over (this in-place call) is gone, which the job hears
 * through the call and ncclCommGetAsyncError. */
static void failed(dropin_comm_t *s, const dropin_op_t *k, acc_status_t st, int lost, int earlier)
{
    char why[700];
    pthread_mutex_lock(&s->mu);
    if (lost && !s->lost) {
        s->lost = 1;
        s->lost_as = st == ACC_ERR_TIMEOUT ? ncclRemoteError : ncclInternalError;
        snprintf(s->error, sizeof(s->error), "acc: %s: %s",
                 earlier ? "a call acc had queued failed on the device"
                         : "an in-place call failed in acc after it started",
                 acc_error_message());
    }
    if (earlier)
        snprintf(why, sizeof(why),
                 "a call acc had queued failed on the device (%s: %s); NCCL runs every later "
                 "call of this communicator",
                 acc_status_name(st), acc_error_message());
    else
        snprintf(why, sizeof(why),
                 "%s failed in acc (%s: %s); %s every later call of this communicator",
                 dropin_names[k->index], acc_status_name(st), acc_error_message(),
                 lost ? "its in-place result is lost, the call fails, and NCCL runs"
                      : "NCCL runs it and");
    dropin_switch_off(s, lost ? ACC_LOG_ERROR : ACC_LOG_WARN, why);
    pthread_mutex_unlock(&s->mu);
}

void dropin_check_device(dropin_comm_t *s)
{
    acc_comm_t *acc;
    acc_status_t e = ACC_OK;

    pthread_mutex_lock(&s->mu);
    acc = s->state == DROPIN_JOINED ? s->acc : NULL;
    pthread_mutex_unlock(&s->mu);
    /* Only the cuda backend runs calls after they return; a call using acc now is looked at
     * the next time. */
    if (!acc || acc_comm_backend(acc) != ACC_BACKEND_CUDA || pthread_mutex_trylock(&s->acc_mu))
        return;
    if (acc_comm_get_async_error(acc, &e) != ACC_OK)
        e = ACC_OK;
    pthread_mutex_unlock(&s->acc_mu);
    if (e != ACC_OK)
        failed(s, NULL, e, 1, 1);
}

int dropin_run_acc(dropin_comm_t *s, const dropin_op_t *k)
{
    acc_dtype_t dt;
    acc_redop_t op;
    acc_comm_t *acc;
    acc_status_t st, before = ACC_OK;
    void *kept = NULL;
    size_t keep = 0;
    int serves = 0, host, aborted;

    if (!dropin_acc_kind(k, &dt, &op) || !dropin_shape(s))
        return 0;
    pthread_mutex_lock(&s->mu);
    if (join_if_idle(s, k, dt) != DROPIN_JOINED) {
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    acc = s->acc; /* alive while s is used: released only when no call uses it */
    pthread_mutex_unlock(&s->mu);

    pthread_mutex_lock(&s->acc_mu);
    host = acc_comm_backend(acc) == ACC_BACKEND_HOST;
    if (acc_comm_serves(acc, k->coll, k->count, dt, k->root, &serves) != ACC_OK || !serves) {
        pthread_mutex_unlock(&s->acc_mu);
        return 0;
    }
    /* A launch of an earlier call that failed on the device breaks the communicator: that
     * call's result is lost (the job hears it), this one goes to NCCL untouched. */
    if (acc_comm_get_async_error(acc, &before) != ACC_OK || before != ACC_OK) {
        pthread_mutex_unlock(&s->acc_mu);
        failed(s, k, before, !host, 1);
        return 0;
    }
    if (host && (keep = overlapping_input(k, s->nranks, dt)) && (kept = acc_mem_alloc(keep)))
        memcpy(kept, k->send, keep);
    if (keep && !kept && host) {
        pthread_mutex_unlock(&s->acc_mu);
        return 0; /* no room to keep the input: NCCL runs it, acc stays */
    }
    st = run(k, acc, dt, op);
    pthread_mutex_unlock(&s->acc_mu);
    if (st == ACC_OK || st == ACC_NO_DATA || st == ACC_ERR_INVALID) {
        /* ACC_NO_DATA: not acc's after all, nothing touched; ACC_ERR_INVALID: arguments NCCL
         * will judge. */
        acc_mem_free(kept);
        return st == ACC_OK;
    }
    if (kept)
        memcpy((void *)k->send, kept, keep);
    acc_mem_free(kept);
    pthread_mutex_lock(&s->mu);
    aborted = s->closing;
    pthread_mutex_unlock(&s->mu);
    if (aborted)
        return -(int)ncclInternalError; /* the job aborted the communicator meanwhile */
    if (host || !overlapping_input(k, s->nranks, dt)) {
        failed(s, k, st, 0, 0);
        return 0;
    }
    failed(s, k, st, 1, 0);
    return -(int)(st == ACC_ERR_TIMEOUT ? ncclRemoteError : ncclInternalError);
}

/* ---- NCCL's side ------------------------------------------------------------------------- */

#define FORWARD_CASE(name, args)                                                                   \
    case DROPIN_IDX_##name:                                                                        \
        DROPIN_PASS(name, args);

/* The *Config variants with no configuration are the plain calls (nccl.h says so), which an
 * NCCL older than 2.31 has. */
#define FORWARD_CONFIG_CASE(name, plain, args, plain_args)                                         \
    case DROPIN_IDX_##name:                                                                        \
        if (!k->config && !DROPIN_FN(name))                                                        \
            DROPIN_PASS(plain, plain_args);                                                        \
        DROPIN_PASS(name, args);

ncclResult_t dropin_forward(const dropin_op_t *k)
{
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
        FORWARD_CONFIG_CASE(
            AllReduceConfig, AllReduce,
            (k->send, k->recv, k->count, k->type, k->op, k->comm, k->stream, k->config),
            (k->send, k->recv, k->count, k->type, k->op, k->comm, k->stream))
        FORWARD_CONFIG_CASE(AllGatherConfig, AllGather,
                            (k->send, k->recv, k->count, k->type, k->comm, k->stream, k->config),
                            (k->send, k->recv, k->count, k->type, k->comm, k->stream))
        FORWARD_CONFIG_CASE(
            ReduceScatterConfig, ReduceScatter,
            (k->send, k->recv, k->count, k->type, k->op, k->comm, k->stream, k->config),
            (k->send, k->recv, k->count, k->type, k->op, k->comm, k->stream))
        FORWARD_CONFIG_CASE(
            BroadcastConfig, Broadcast,
            (k->send, k->recv, k->count, k->type, k->root, k->comm, k->stream, k->config),
            (k->send, k->recv, k->count, k->type, k->root, k->comm, k->stream))
        FORWARD_CONFIG_CASE(
            ReduceConfig, Reduce,
            (k->send, k->recv, k->count, k->type, k->op, k->root, k->comm, k->stream, k->config),
            (k->send, k->recv, k->count, k->type, k->op, k->root, k->comm, k->stream))
        FORWARD_CONFIG_CASE(AlltoAllConfig, AlltoAll,
                            (k->send, k->recv, k->count, k->type, k->comm, k->stream, k->config),
                            (k->send, k->recv, k->count, k->type, k->comm, k->stream))
        FORWARD_CONFIG_CASE(
            GatherConfig, Gather,
            (k->send, k->recv, k->count, k->type, k->root, k->comm, k->stream, k->config),
            (k->send, k->recv, k->count, k->type, k->root, k->comm, k->stream))
        FORWARD_CONFIG_CASE(
            ScatterConfig, Scatter,
            (k->send, k->recv, k->count, k->type, k->root, k->comm, k->stream, k->config),
            (k->send, k->recv, k->count, k->type, k->root, k->comm, k->stream))
    default:
        return ncclInternalError;
    }
}

/* One call as the job made it, to acc or NCCL. */
static ncclResult_t submit(const dropin_op_t *k)
{
    dropin_comm_t *s;
    int ran;

    if (dropin_group_depth() > 0)
        return dropin_group_add(k);
    if (!(s = dropin_comm_get(k->comm)))
        return dropin_forward(k);
    ran = dropin_run_acc(s, k);
    dropin_comm_put(s);
    if (ran > 0)
        return ncclSuccess;
    if (ran < 0)
        return (ncclResult_t)-ran;
    return dropin_forward(k);
}

/* ---- the entry points --------------------------------------------------------------------- */

/* Each: NCCL's own call straight to NCCL, else the job's through submit. */
#define CALL(name, coll, args, send, recv, count, type, op, root, comm, stream, config)            \
    {                                                                                              \
        if (DROPIN_FROM_NCCL())                                                                    \
            DROPIN_PASS(name, args);                                                               \
        dropin_op_t k = {                                                                          \
            DROPIN_IDX_##name, coll, send, recv, count, type, op, root, comm, stream, config};     \
        return submit(&k);                                                                         \
    }

ncclResult_t pncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                            cudaStream_t stream)
    CALL(AllReduce, ACC_COLL_ALLREDUCE, (sendbuff, recvbuff, count, datatype, op, comm, stream),
         sendbuff, recvbuff, count, datatype, op, 0, comm, stream, NULL) DROPIN_ALIAS(AllReduce);

ncclResult_t pncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
    CALL(AllGather, ACC_COLL_ALLGATHER, (sendbuff, recvbuff, sendcount, datatype, comm, stream),
         sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, comm, stream, NULL)
        DROPIN_ALIAS(AllGather);

ncclResult_t pncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                cudaStream_t stream)
    CALL(ReduceScatter, ACC_COLL_REDUCE_SCATTER,
         (sendbuff, recvbuff, recvcount, datatype, op, comm, stream), sendbuff, recvbuff, recvcount,
         datatype, op, 0, comm, stream, NULL) DROPIN_ALIAS(ReduceScatter);

ncclResult_t pncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                            ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
    CALL(Broadcast, ACC_COLL_BROADCAST, (sendbuff, recvbuff, count, datatype, root, comm, stream),
         sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream, NULL)
        DROPIN_ALIAS(Broadcast);

/* The in-place broadcast of NCCL's first API. */
ncclResult_t pncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream)
    CALL(Bcast, ACC_COLL_BROADCAST, (buff, count, datatype, root, comm, stream), buff, buff, count,
         datatype, ncclSum, root, comm, stream, NULL) DROPIN_ALIAS(Bcast);

ncclResult_t pncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                         ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                         cudaStream_t stream)
    CALL(Reduce, ACC_COLL_REDUCE, (sendbuff, recvbuff, count, datatype, op, root, comm, stream),
         sendbuff, recvbuff, count, datatype, op, root, comm, stream, NULL) DROPIN_ALIAS(Reduce);

/* Collectives acc has no plans for: NCCL's, inside a group too (where they decide that the
 * communicator's calls of the group go to NCCL). */

ncclResult_t pncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
    CALL(AlltoAll, ACC_COLL_COUNT, (sendbuff, recvbuff, count, datatype, comm, stream), sendbuff,
         recvbuff, count, datatype, ncclSum, 0, comm, stream, NULL) DROPIN_ALIAS(AlltoAll);

ncclResult_t pncclGather(const void *sendbuff, void *recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
    CALL(Gather, ACC_COLL_COUNT, (sendbuff, recvbuff, count, datatype, root, comm, stream),
         sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream, NULL)
        DROPIN_ALIAS(Gather);

ncclResult_t pncclScatter(const void *sendbuff, void *recvbuff, size_t count,
                          ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
    CALL(Scatter, ACC_COLL_COUNT, (sendbuff, recvbuff, count, datatype, root, comm, stream),
         sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream, NULL)
        DROPIN_ALIAS(Scatter);

/* The per-call configuration of 2.31/2.32: with none, the plain call; with one, NCCL's (acc
 * would not honour its CTAs, algorithm filter or completion event). */

ncclResult_t pncclAllReduceConfig(const void *sendbuff, void *recvbuff, size_t count,
                                  ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                  cudaStream_t stream, const ncclCollConfig_t *config)
    CALL(AllReduceConfig, ACC_COLL_ALLREDUCE,
         (sendbuff, recvbuff, count, datatype, op, comm, stream, config), sendbuff, recvbuff, count,
         datatype, op, 0, comm, stream, config) DROPIN_ALIAS(AllReduceConfig);

ncclResult_t pncclAllGatherConfig(const void *sendbuff, void *recvbuff, size_t sendcount,
                                  ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream,
                                  const ncclCollConfig_t *config)
    CALL(AllGatherConfig, ACC_COLL_ALLGATHER,
         (sendbuff, recvbuff, sendcount, datatype, comm, stream, config), sendbuff, recvbuff,
         sendcount, datatype, ncclSum, 0, comm, stream, config) DROPIN_ALIAS(AllGatherConfig);

ncclResult_t pncclReduceScatterConfig(const void *sendbuff, void *recvbuff, size_t recvcount,
                                      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                      cudaStream_t stream, const ncclCollConfig_t *config)
    CALL(ReduceScatterConfig, ACC_COLL_REDUCE_SCATTER,
         (sendbuff, recvbuff, recvcount, datatype, op, comm, stream, config), sendbuff, recvbuff,
         recvcount, datatype, op, 0, comm, stream, config) DROPIN_ALIAS(ReduceScatterConfig);

ncclResult_t pncclBroadcastConfig(const void *sendbuff, void *recvbuff, size_t count,
                                  ncclDataType_t datatype, int root, ncclComm_t comm,
                                  cudaStream_t stream, const ncclCollConfig_t *config)
    CALL(BroadcastConfig, ACC_COLL_BROADCAST,
         (sendbuff, recvbuff, count, datatype, root, comm, stream, config), sendbuff, recvbuff,
         count, datatype, ncclSum, root, comm, stream, config) DROPIN_ALIAS(BroadcastConfig);

ncclResult_t pncclReduceConfig(const void *sendbuff, void *recvbuff, size_t count,
                               ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                               cudaStream_t stream, const ncclCollConfig_t *config)
    CALL(ReduceConfig, ACC_COLL_REDUCE,
         (sendbuff, recvbuff, count, datatype, op, root, comm, stream, config), sendbuff, recvbuff,
         count, datatype, op, root, comm, stream, config) DROPIN_ALIAS(ReduceConfig);

ncclResult_t pncclAlltoAllConfig(const void *sendbuff, void *recvbuff, size_t count,
                                 ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream,
                                 const ncclCollConfig_t *config)
    CALL(AlltoAllConfig, ACC_COLL_COUNT,
         (sendbuff, recvbuff, count, datatype, comm, stream, config), sendbuff, recvbuff, count,
         datatype, ncclSum, 0, comm, stream, config) DROPIN_ALIAS(AlltoAllConfig);

ncclResult_t pncclGatherConfig(const void *sendbuff, void *recvbuff, size_t count,
                               ncclDataType_t datatype, int root, ncclComm_t comm,
                               cudaStream_t stream, const ncclCollConfig_t *config)
    CALL(GatherConfig, ACC_COLL_COUNT,
         (sendbuff, recvbuff, count, datatype, root, comm, stream, config), sendbuff, recvbuff,
         count, datatype, ncclSum, root, comm, stream, config) DROPIN_ALIAS(GatherConfig);

ncclResult_t pncclScatterConfig(const void *sendbuff, void *recvbuff, size_t count,
                                ncclDataType_t datatype, int root, ncclComm_t comm,
                                cudaStream_t stream, const ncclCollConfig_t *config)
    CALL(ScatterConfig, ACC_COLL_COUNT,
         (sendbuff, recvbuff, count, datatype, root, comm, stream, config), sendbuff, recvbuff,
         count, datatype, ncclSum, root, comm, stream, config) DROPIN_ALIAS(ScatterConfig);
