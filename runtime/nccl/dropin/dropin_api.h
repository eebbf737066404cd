/*
 * dropin_api.h - every function of NCCL's public API, once: nccl.h 2.28.9 to 2.32.3 and the host
 * side of the device API (nccl_device/host.h).  Each entry is X(since, return type, name without
 * the "nccl" prefix, parameters, arguments); `since` names the first NCCL that declares it
 * (V22809: 2.28.9 or older, V22902, V22907, V23004, and the 2.31/2.32 additions by the macro
 * their header defines beside them, COLLCONFIG and ENCRYPTION), so that the ABI check
 * (dropin_abi_check.c) compares each entry with whichever nccl.h it is built against.  The
 * drop-in exports each as pnccl<Name> and, as NCCL does, ncclName as a weak alias of it.  The
 * lists use NCCL's type names only, so that they read in nccl.h's namespace as well as in
 * nccl_abi.h's.
 *
 * DROPIN_FORWARDED: calls acc never serves and never looks at, handed to the real NCCL as they
 *   are, the entry point resolved at its first call (dropin_real.c).
 * DROPIN_PLAIN: the same, for the functions that do not return ncclResult_t.
 * DROPIN_OWN: calls the drop-in implements (dropin_comm.c, dropin_coll.c, dropin_group.c):
 *   communicator life (acc joins lazily and leaves with NCCL), errors, collectives, groups.
 * DROPIN_DEVICE, DROPIN_DEVICE_PLAIN: the host side of the device API, forwarded; nccl_device/
 *   host.h declares only ncclName, the library exports pnccl<Name> too.
 * DROPIN_DEVICE_WINDOWS: two functions host.h declares only for Windows (in C++ terms) and the
 *   Linux library exports all the same; forwarded, and checked against the library's export
 *   list rather than a header.
 */
#ifndef ACC_DROPIN_API_H
#define ACC_DROPIN_API_H

#define DROPIN_FORWARDED(X)                                                                        \
    X(V22809, ncclResult_t, MemAlloc, (void **ptr, size_t size), (ptr, size))                      \
    X(V22809, ncclResult_t, MemFree, (void *ptr), (ptr))                                           \
    X(V22809, ncclResult_t, GetVersion, (int *version), (version))                                 \
    X(V22809, ncclResult_t, GetUniqueId, (ncclUniqueId * uniqueId), (uniqueId))                    \
    X(V22809, ncclResult_t, CommCount, (const ncclComm_t comm, int *count), (comm, count))         \
    X(V22809, ncclResult_t, CommCuDevice, (const ncclComm_t comm, int *device), (comm, device))    \
    X(V22809, ncclResult_t, CommUserRank, (const ncclComm_t comm, int *rank), (comm, rank))        \
    X(V22809, ncclResult_t, CommRegister,                                                          \
      (const ncclComm_t comm, void *buff, size_t size, void **handle), (comm, buff, size, handle)) \
    X(V22809, ncclResult_t, CommDeregister, (const ncclComm_t comm, void *handle), (comm, handle)) \
    X(V22809, ncclResult_t, CommWindowRegister,                                                    \
      (ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int winFlags),                 \
      (comm, buff, size, win, winFlags))                                                           \
    X(V22809, ncclResult_t, CommWindowDeregister, (ncclComm_t comm, ncclWindow_t win),             \
      (comm, win))                                                                                 \
    X(V22809, ncclResult_t, RedOpCreatePreMulSum,                                                  \
      (ncclRedOp_t * op, void *scalar, ncclDataType_t datatype, ncclScalarResidence_t residence,   \
       ncclComm_t comm),                                                                           \
      (op, scalar, datatype, residence, comm))                                                     \
    X(V22809, ncclResult_t, RedOpDestroy, (ncclRedOp_t op, ncclComm_t comm), (op, comm))           \
    X(V22809, ncclResult_t, Send,                                                                  \
      (const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,     \
       cudaStream_t stream),                                                                       \
      (sendbuff, count, datatype, peer, comm, stream))                                             \
    X(V22809, ncclResult_t, Recv,                                                                  \
      (void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,           \
       cudaStream_t stream),                                                                       \
      (recvbuff, count, datatype, peer, comm, stream))                                             \
    X(V22902, ncclResult_t, CommGetUniqueId, (ncclComm_t comm, ncclUniqueId * uniqueId),           \
      (comm, uniqueId))                                                                            \
    X(V22902, ncclResult_t, CommGrow,                                                              \
      (ncclComm_t comm, int nRanks, const ncclUniqueId *uniqueId, int rank, ncclComm_t *newcomm,   \
       ncclConfig_t *config),                                                                      \
      (comm, nRanks, uniqueId, rank, newcomm, config))                                             \
    X(V22902, ncclResult_t, WinGetUserPtr, (ncclComm_t comm, ncclWindow_t win, void **outUserPtr), \
      (comm, win, outUserPtr))                                                                     \
    X(V22902, ncclResult_t, PutSignal,                                                             \
      (const void *localbuff, size_t count, ncclDataType_t datatype, int peer,                     \
       ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags,        \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (localbuff, count, datatype, peer, peerWin, peerWinOffset, sigIdx, ctx, flags, comm,         \
       stream))                                                                                    \
    X(V22902, ncclResult_t, Signal,                                                                \
      (int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm, cudaStream_t stream),   \
      (peer, sigIdx, ctx, flags, comm, stream))                                                    \
    X(V22902, ncclResult_t, WaitSignal,                                                            \
      (int nDesc, ncclWaitSignalDesc_t *signalDescs, ncclComm_t comm, cudaStream_t stream),        \
      (nDesc, signalDescs, comm, stream))                                                          \
    X(V22907, ncclResult_t, CommResume, (ncclComm_t comm), (comm))                                 \
    X(V22907, ncclResult_t, CommMemStats,                                                          \
      (ncclComm_t comm, ncclCommMemStat_t stat, uint64_t * value), (comm, stat, value))            \
    X(V23004, ncclResult_t, ParamBind, (ncclParamHandle_t * out, const char *key), (out, key))     \
    X(V23004, ncclResult_t, ParamGetI8, (ncclParamHandle_t h, int8_t * out), (h, out))             \
    X(V23004, ncclResult_t, ParamGetI16, (ncclParamHandle_t h, int16_t * out), (h, out))           \
    X(V23004, ncclResult_t, ParamGetI32, (ncclParamHandle_t h, int32_t * out), (h, out))           \
    X(V23004, ncclResult_t, ParamGetI64, (ncclParamHandle_t h, int64_t * out), (h, out))           \
    X(V23004, ncclResult_t, ParamGetU8, (ncclParamHandle_t h, uint8_t * out), (h, out))            \
    X(V23004, ncclResult_t, ParamGetU16, (ncclParamHandle_t h, uint16_t * out), (h, out))          \
    X(V23004, ncclResult_t, ParamGetU32, (ncclParamHandle_t h, uint32_t * out), (h, out))          \
    X(V23004, ncclResult_t, ParamGetU64, (ncclParamHandle_t h, uint64_t * out), (h, out))          \
    X(V23004, ncclResult_t, ParamGetStr, (ncclParamHandle_t h, const char **out), (h, out))        \
    X(V23004, ncclResult_t, ParamGet, (ncclParamHandle_t h, void *out, int maxLen, int *len),      \
      (h, out, maxLen, len))                                                                       \
    X(V23004, ncclResult_t, ParamGetParameter,                                                     \
      (const char *key, const char **value, int *valueLen), (key, value, valueLen))                \
    X(V23004, ncclResult_t, ParamGetAllParameterKeys, (const char ***table, int *tableLen),        \
      (table, tableLen))                                                                           \
    X(ENCRYPTION, ncclResult_t, SetEncryption, (const ncclEncryptionConfig_t *config), (config))

#define DROPIN_PLAIN(X)                                                                            \
    X(V22809, const char *, GetErrorString, (ncclResult_t result), (result))                       \
    X(LINUX, void, ResetDebugInit, (void), ())                                                     \
    X(V23004, void, ParamDumpAll, (void), ())

#define DROPIN_OWN(X)                                                                              \
    X(V22809, ncclResult_t, CommInitRankConfig,                                                    \
      (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t *config),        \
      (comm, nranks, commId, rank, config))                                                        \
    X(V22809, ncclResult_t, CommInitRank,                                                          \
      (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank),                              \
      (comm, nranks, commId, rank))                                                                \
    X(V22809, ncclResult_t, CommInitAll, (ncclComm_t * comm, int ndev, const int *devlist),        \
      (comm, ndev, devlist))                                                                       \
    X(V22809, ncclResult_t, CommInitRankScalable,                                                  \
      (ncclComm_t * newcomm, int nranks, int myrank, int nId, ncclUniqueId *commIds,               \
       ncclConfig_t *config),                                                                      \
      (newcomm, nranks, myrank, nId, commIds, config))                                             \
    X(V22809, ncclResult_t, CommSplit,                                                             \
      (ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config),            \
      (comm, color, key, newcomm, config))                                                         \
    X(V22809, ncclResult_t, CommShrink,                                                            \
      (ncclComm_t comm, int *excludeRanksList, int excludeRanksCount, ncclComm_t *newcomm,         \
       ncclConfig_t *config, int shrinkFlags),                                                     \
      (comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags))                   \
    X(V22809, ncclResult_t, CommRevoke, (ncclComm_t comm, int revokeFlags), (comm, revokeFlags))   \
    X(V22809, ncclResult_t, CommFinalize, (ncclComm_t comm), (comm))                               \
    X(V22809, ncclResult_t, CommDestroy, (ncclComm_t comm), (comm))                                \
    X(V22809, ncclResult_t, CommAbort, (ncclComm_t comm), (comm))                                  \
    X(V22907, ncclResult_t, CommSuspend, (ncclComm_t comm, int flags), (comm, flags))              \
    X(V22809, ncclResult_t, CommGetAsyncError, (ncclComm_t comm, ncclResult_t * asyncError),       \
      (comm, asyncError))                                                                          \
    X(V22809, const char *, GetLastError, (ncclComm_t comm), (comm))                               \
    X(V22809, ncclResult_t, Reduce,                                                                \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,                \
       ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream),                            \
      (sendbuff, recvbuff, count, datatype, op, root, comm, stream))                               \
    X(V22809, ncclResult_t, Bcast,                                                                 \
      (void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,               \
       cudaStream_t stream),                                                                       \
      (buff, count, datatype, root, comm, stream))                                                 \
    X(V22809, ncclResult_t, Broadcast,                                                             \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,      \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, count, datatype, root, comm, stream))                                   \
    X(V22809, ncclResult_t, AllReduce,                                                             \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,                \
       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream),                                      \
      (sendbuff, recvbuff, count, datatype, op, comm, stream))                                     \
    X(V22809, ncclResult_t, ReduceScatter,                                                         \
      (const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,            \
       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream),                                      \
      (sendbuff, recvbuff, recvcount, datatype, op, comm, stream))                                 \
    X(V22809, ncclResult_t, AllGather,                                                             \
      (const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,            \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, sendcount, datatype, comm, stream))                                     \
    X(V22809, ncclResult_t, AlltoAll,                                                              \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,                \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, count, datatype, comm, stream))                                         \
    X(V22809, ncclResult_t, Gather,                                                                \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,      \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, count, datatype, root, comm, stream))                                   \
    X(V22809, ncclResult_t, Scatter,                                                               \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,      \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, count, datatype, root, comm, stream))                                   \
    X(COLLCONFIG, ncclResult_t, AllReduceConfig,                                                   \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,                \
       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),      \
      (sendbuff, recvbuff, count, datatype, op, comm, stream, config))                             \
    X(COLLCONFIG, ncclResult_t, BroadcastConfig,                                                   \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,      \
       ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),                      \
      (sendbuff, recvbuff, count, datatype, root, comm, stream, config))                           \
    X(COLLCONFIG, ncclResult_t, ReduceConfig,                                                      \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,                \
       ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream,                             \
       const ncclCollConfig_t *config),                                                            \
      (sendbuff, recvbuff, count, datatype, op, root, comm, stream, config))                       \
    X(COLLCONFIG, ncclResult_t, AllGatherConfig,                                                   \
      (const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,            \
       ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),                      \
      (sendbuff, recvbuff, sendcount, datatype, comm, stream, config))                             \
    X(COLLCONFIG, ncclResult_t, ReduceScatterConfig,                                               \
      (const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,            \
       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),      \
      (sendbuff, recvbuff, recvcount, datatype, op, comm, stream, config))                         \
    X(COLLCONFIG, ncclResult_t, AlltoAllConfig,                                                    \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,                \
       ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),                      \
      (sendbuff, recvbuff, count, datatype, comm, stream, config))                                 \
    X(COLLCONFIG, ncclResult_t, GatherConfig,                                                      \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,      \
       ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),                      \
      (sendbuff, recvbuff, count, datatype, root, comm, stream, config))                           \
    X(COLLCONFIG, ncclResult_t, ScatterConfig,                                                     \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,      \
       ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),                      \
      (sendbuff, recvbuff, count, datatype, root, comm, stream, config))                           \
    X(V22809, ncclResult_t, GroupStart, (void), ())                                                \
    X(V22809, ncclResult_t, GroupEnd, (void), ())                                                  \
    X(V22809, ncclResult_t, GroupSimulateEnd, (ncclSimInfo_t * simInfo), (simInfo))

#define DROPIN_DEVICE(X)                                                                           \
    X(DEVICE, ncclResult_t, CommQueryProperties, (ncclComm_t comm, ncclCommProperties_t * props),  \
      (comm, props))                                                                               \
    X(DEVICE, ncclResult_t, DevCommCreate,                                                         \
      (ncclComm_t comm, ncclDevCommRequirements_t const *reqs, ncclDevComm_t *outDevComm),         \
      (comm, reqs, outDevComm))                                                                    \
    X(DEVICE, ncclResult_t, DevCommDestroy, (ncclComm_t comm, ncclDevComm_t const *devComm),       \
      (comm, devComm))                                                                             \
    X(DEVICE, ncclResult_t, GetLsaMultimemDevicePointer,                                           \
      (ncclWindow_t window, size_t offset, void **outPtr), (window, offset, outPtr))               \
    X(DEVICE, ncclResult_t, GetMultimemDevicePointer,                                              \
      (ncclWindow_t window, size_t offset, ncclMultimemHandle_t multimem, void **outPtr),          \
      (window, offset, multimem, outPtr))                                                          \
    X(DEVICE, ncclResult_t, GetLsaDevicePointer,                                                   \
      (ncclWindow_t window, size_t offset, int lsaRank, void **outPtr),                            \
      (window, offset, lsaRank, outPtr))                                                           \
    X(DEVICE, ncclResult_t, GetPeerDevicePointer,                                                  \
      (ncclWindow_t window, size_t offset, int peer, void **outPtr),                               \
      (window, offset, peer, outPtr))                                                              \
    X(DEVICE, ncclResult_t, GetMultimemDeviceLeInfo,                                               \
      (ncclWindow_t window, size_t offset, ncclCftLeId * leId, size_t * leOffset),                 \
      (window, offset, leId, leOffset))                                                            \
    X(DEVICE, ncclResult_t, GetCftDeviceLeInfo,                                                    \
      (ncclWindow_t window, size_t offset, int peerCft, ncclTeam_t cftTeam, ncclCftLeId *leId,     \
       size_t *leOffset),                                                                          \
      (window, offset, peerCft, cftTeam, leId, leOffset))                                          \
    X(DEVICE, ncclResult_t, GetPeerDeviceLeInfo,                                                   \
      (ncclWindow_t window, size_t offset, int peerWorld, ncclCftLeId *leId, size_t *leOffset),    \
      (window, offset, peerWorld, leId, leOffset))                                                 \
    X(DEVICE, ncclResult_t, LsaBarrierCreateRequirement,                                           \
      (ncclTeam_t team, int nBarriers, ncclLsaBarrierHandle_t *outHandle,                          \
       ncclDevResourceRequirements_t *outReq),                                                     \
      (team, nBarriers, outHandle, outReq))                                                        \
    X(DEVICE, ncclResult_t, GinBarrierCreateRequirement,                                           \
      (ncclComm_t comm, ncclTeam_t team, int nBarriers, ncclGinBarrierHandle_t *outHandle,         \
       ncclDevResourceRequirements_t *outReq),                                                     \
      (comm, team, nBarriers, outHandle, outReq))                                                  \
    X(DEVICE, ncclResult_t, CftBarrierCreateRequirement,                                           \
      (ncclTeam_t team, int nBarriers, ncclCftBarrierHandle_t *outHandle,                          \
       ncclDevResourceRequirements_t *outReq),                                                     \
      (team, nBarriers, outHandle, outReq))                                                        \
    X(DEVICE, ncclResult_t, LLA2ACreateRequirement,                                                \
      (int nBlocks, int nSlots, ncclLLA2AHandle_t *outHandle,                                      \
       ncclDevResourceRequirements_t *outReq),                                                     \
      (nBlocks, nSlots, outHandle, outReq))

#define DROPIN_DEVICE_PLAIN(X)                                                                     \
    X(DEVICE, ncclTeam_t, TeamWorld, (ncclComm_t comm), (comm))                                    \
    X(DEVICE, ncclTeam_t, TeamLsa, (ncclComm_t comm), (comm))                                      \
    X(DEVICE, ncclTeam_t, TeamCft, (ncclComm_t comm, ncclCftTeamMode_t mode), (comm, mode))        \
    X(DEVICE, ncclTeam_t, TeamCftMultimem, (ncclComm_t comm), (comm))                              \
    X(DEVICE, ncclTeam_t, TeamRail, (ncclComm_t comm), (comm))                                     \
    X(DEVICE, int, TeamRankToWorld, (ncclComm_t comm, ncclTeam_t team, int rank),                  \
      (comm, team, rank))                                                                          \
    X(DEVICE, int, TeamRankToLsa, (ncclComm_t comm, ncclTeam_t team, int rank),                    \
      (comm, team, rank))                                                                          \
    X(DEVICE, int, LLA2ACalcSlots, (int maxElts, int maxEltSize), (maxElts, maxEltSize))

#define DROPIN_DEVICE_WINDOWS(X)                                                                   \
    X(WINDOWS, ncclResult_t, GinOutboxCreateRequirement,                                           \
      (int nBlocks, int size_log2, struct ncclGinOutboxHandle *outHandle,                          \
       ncclDevResourceRequirements_t *outReq),                                                     \
      (nBlocks, size_log2, outHandle, outReq))                                                     \
    X(WINDOWS, ncclResult_t, GinInboxA2ACreateRequirement,                                         \
      (ncclTeam_t peers, int nBlocks, int size_log2, struct ncclGinInboxA2AHandle *outHandle,      \
       ncclDevResourceRequirements_t *outReq),                                                     \
      (peers, nBlocks, size_log2, outHandle, outReq))

/* Every ncclResult_t function forwarded as it is. */
#define DROPIN_PASSED(X) DROPIN_FORWARDED(X) DROPIN_DEVICE(X) DROPIN_DEVICE_WINDOWS(X)
/* Every function of nccl.h; and every function the drop-in exports. */
#define DROPIN_NCCL_H(X) DROPIN_FORWARDED(X) DROPIN_PLAIN(X) DROPIN_OWN(X)
#define DROPIN_API(X)                                                                              \
    DROPIN_NCCL_H(X) DROPIN_DEVICE(X) DROPIN_DEVICE_PLAIN(X) DROPIN_DEVICE_WINDOWS(X)

#endif /* ACC_DROPIN_API_H */
