/*
 * dropin_api.h - every function nccl.h 2.28 declares, once: X(return type, name without the
 * "nccl" prefix, parameters, arguments).  The drop-in exports each as pnccl<Name> and, as NCCL
 * does, ncclName as a weak alias of it.  The list uses nccl.h's type names only, so that the
 * build checks it against the real nccl.h wherever one is installed (dropin_abi_check.c).
 *
 * DROPIN_FORWARDED: calls acc never serves, handed to the real NCCL as they are.
 * DROPIN_OWN: calls the drop-in implements (dropin_comm.c, dropin_coll.c): communicator life
 * (acc joins and leaves with NCCL), errors, collectives, groups.
 */
#ifndef ACC_DROPIN_API_H
#define ACC_DROPIN_API_H

#define DROPIN_FORWARDED(X)                                                                        \
    X(ncclResult_t, MemAlloc, (void **ptr, size_t size), (ptr, size))                              \
    X(ncclResult_t, MemFree, (void *ptr), (ptr))                                                   \
    X(ncclResult_t, GetVersion, (int *version), (version))                                         \
    X(ncclResult_t, GetUniqueId, (ncclUniqueId * uniqueId), (uniqueId))                            \
    X(ncclResult_t, CommRevoke, (ncclComm_t comm, int revokeFlags), (comm, revokeFlags))           \
    X(ncclResult_t, CommCount, (const ncclComm_t comm, int *count), (comm, count))                 \
    X(ncclResult_t, CommCuDevice, (const ncclComm_t comm, int *device), (comm, device))            \
    X(ncclResult_t, CommUserRank, (const ncclComm_t comm, int *rank), (comm, rank))                \
    X(ncclResult_t, CommRegister, (const ncclComm_t comm, void *buff, size_t size, void **handle), \
      (comm, buff, size, handle))                                                                  \
    X(ncclResult_t, CommDeregister, (const ncclComm_t comm, void *handle), (comm, handle))         \
    X(ncclResult_t, CommWindowRegister,                                                            \
      (ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int winFlags),                 \
      (comm, buff, size, win, winFlags))                                                           \
    X(ncclResult_t, CommWindowDeregister, (ncclComm_t comm, ncclWindow_t win), (comm, win))        \
    X(ncclResult_t, RedOpCreatePreMulSum,                                                          \
      (ncclRedOp_t * op, void *scalar, ncclDataType_t datatype, ncclScalarResidence_t residence,   \
       ncclComm_t comm),                                                                           \
      (op, scalar, datatype, residence, comm))                                                     \
    X(ncclResult_t, RedOpDestroy, (ncclRedOp_t op, ncclComm_t comm), (op, comm))

#define DROPIN_OWN(X)                                                                              \
    X(ncclResult_t, CommInitRankConfig,                                                            \
      (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t *config),        \
      (comm, nranks, commId, rank, config))                                                        \
    X(ncclResult_t, CommInitRank, (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank),  \
      (comm, nranks, commId, rank))                                                                \
    X(ncclResult_t, CommInitAll, (ncclComm_t * comm, int ndev, const int *devlist),                \
      (comm, ndev, devlist))                                                                       \
    X(ncclResult_t, CommInitRankScalable,                                                          \
      (ncclComm_t * newcomm, int nranks, int myrank, int nId, ncclUniqueId *commIds,               \
       ncclConfig_t *config),                                                                      \
      (newcomm, nranks, myrank, nId, commIds, config))                                             \
    X(ncclResult_t, CommSplit,                                                                     \
      (ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config),            \
      (comm, color, key, newcomm, config))                                                         \
    X(ncclResult_t, CommShrink,                                                                    \
      (ncclComm_t comm, int *excludeRanksList, int excludeRanksCount, ncclComm_t *newcomm,         \
       ncclConfig_t *config, int shrinkFlags),                                                     \
      (comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags))                   \
    X(ncclResult_t, CommFinalize, (ncclComm_t comm), (comm))                                       \
    X(ncclResult_t, CommDestroy, (ncclComm_t comm), (comm))                                        \
    X(ncclResult_t, CommAbort, (ncclComm_t comm), (comm))                                          \
    X(ncclResult_t, CommGetAsyncError, (ncclComm_t comm, ncclResult_t * asyncError),               \
      (comm, asyncError))                                                                          \
    X(const char *, GetErrorString, (ncclResult_t result), (result))                               \
    X(const char *, GetLastError, (ncclComm_t comm), (comm))                                       \
    X(void, ResetDebugInit, (void), ())                                                            \
    X(ncclResult_t, Reduce,                                                                        \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,                \
       ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream),                            \
      (sendbuff, recvbuff, count, datatype, op, root, comm, stream))                               \
    X(ncclResult_t, Bcast,                                                                         \
      (void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,               \
       cudaStream_t stream),                                                                       \
      (buff, count, datatype, root, comm, stream))                                                 \
    X(ncclResult_t, Broadcast,                                                                     \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,      \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, count, datatype, root, comm, stream))                                   \
    X(ncclResult_t, AllReduce,                                                                     \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,                \
       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream),                                      \
      (sendbuff, recvbuff, count, datatype, op, comm, stream))                                     \
    X(ncclResult_t, ReduceScatter,                                                                 \
      (const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,            \
       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream),                                      \
      (sendbuff, recvbuff, recvcount, datatype, op, comm, stream))                                 \
    X(ncclResult_t, AllGather,                                                                     \
      (const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,            \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, sendcount, datatype, comm, stream))                                     \
    X(ncclResult_t, AlltoAll,                                                                      \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,                \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, count, datatype, comm, stream))                                         \
    X(ncclResult_t, Gather,                                                                        \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,      \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, count, datatype, root, comm, stream))                                   \
    X(ncclResult_t, Scatter,                                                                       \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,      \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, count, datatype, root, comm, stream))                                   \
    X(ncclResult_t, Send,                                                                          \
      (const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,     \
       cudaStream_t stream),                                                                       \
      (sendbuff, count, datatype, peer, comm, stream))                                             \
    X(ncclResult_t, Recv,                                                                          \
      (void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,           \
       cudaStream_t stream),                                                                       \
      (recvbuff, count, datatype, peer, comm, stream))                                             \
    X(ncclResult_t, GroupStart, (void), ())                                                        \
    X(ncclResult_t, GroupEnd, (void), ())                                                          \
    X(ncclResult_t, GroupSimulateEnd, (ncclSimInfo_t * simInfo), (simInfo))

#define DROPIN_API(X) DROPIN_FORWARDED(X) DROPIN_OWN(X)

#endif /* ACC_DROPIN_API_H */
