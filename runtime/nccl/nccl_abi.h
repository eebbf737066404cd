/*
 * nccl_abi.h - the types of NCCL's ABI that acc's NCCL-side libraries (the drop-in NCCL and the
 * tuner plugin) are called with, as nccl.h 2.28 to 2.32 and the host side of NCCL's device API
 * (nccl_device/host.h, 2.32) define them: the same names, values and layouts, so that each
 * definition can be checked against NCCL's headers line by line, without needing the CUDA
 * headers they include.  Opaque types stay opaque: acc passes them through.  Every struct NCCL
 * versions is append-only, so a prefix of it (ncclConfigPrefix) reads any version.  Internal to
 * runtime/nccl/.
 */
#ifndef ACC_NCCL_ABI_H
#define ACC_NCCL_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef struct ncclComm *ncclComm_t;
typedef struct ncclWindow_vidmem *ncclWindow_t;
typedef struct CUstream_st *cudaStream_t;

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
    ncclTimeout = 8, /* 2.30 */
    ncclNumResults = 9
} ncclResult_t;

/* ncclRedOp_t holds the built-in reductions and the handles ncclRedOpCreatePreMulSum makes
 * (ncclNumOps and up), in an int-sized enum. */
typedef enum { ncclNumOps_dummy = 5 } ncclRedOp_dummy_t;
typedef enum {
    ncclSum = 0,
    ncclProd = 1,
    ncclMax = 2,
    ncclMin = 3,
    ncclAvg = 4,
    ncclNumOps = 5,
    ncclMaxRedOp = 0x7fffffff >> (32 - 8 * sizeof(ncclRedOp_dummy_t))
} ncclRedOp_t;

typedef enum {
    ncclInt8 = 0,
    ncclUint8 = 1,
    ncclInt32 = 2,
    ncclUint32 = 3,
    ncclInt64 = 4,
    ncclUint64 = 5,
    ncclFloat16 = 6,
    ncclFloat32 = 7,
    ncclFloat64 = 8,
    ncclBfloat16 = 9,
    ncclFloat8e4m3 = 10,
    ncclFloat8e5m2 = 11,
    ncclNumTypes = 12
} ncclDataType_t;

typedef enum { ncclScalarDevice = 0, ncclScalarHostImmediate = 1 } ncclScalarResidence_t;

/* Passed through untouched: their layouts are NCCL's business.  (The tag of ncclConfig_t changes
 * with NCCL's version - ncclConfig_v22800, ncclConfig_v23100 - and only the pointer crosses the
 * drop-in, so any tag does.) */
typedef struct ncclConfig_v22800 ncclConfig_t;
typedef struct ncclSimInfo_v22200 ncclSimInfo_t;
typedef struct ncclCollConfig_v23200 ncclCollConfig_t;             /* 2.32 */
typedef struct ncclEncryptionConfig_v23200 ncclEncryptionConfig_t; /* 2.32 */
typedef struct ncclParamHandle *ncclParamHandle_t;                 /* 2.30.4 */

/* What every version of ncclConfig_t begins with (fields are only ever appended). */
typedef struct {
    size_t size;
    unsigned int magic;
    unsigned int version;
    int blocking;
} ncclConfigPrefix;

/* 2.29.7 */
typedef enum {
    ncclStatGpuMemSuspend = 0,
    ncclStatGpuMemSuspended = 1,
    ncclStatGpuMemPersist = 2,
    ncclStatGpuMemTotal = 3
} ncclCommMemStat_t;
#define NCCL_SUSPEND_MEM 0x01

/* 2.27.3: ncclCommShrink's flag that aborts the parent's outstanding work. */
#define NCCL_SHRINK_ABORT 0x01

/* 2.29.2 */
typedef struct {
    int opCnt;
    int peer;
    int sigIdx;
    int ctx;
} ncclWaitSignalDesc_t;

/* ---- the host side of the device API (nccl_device/core.h, host.h; 2.28 to 2.32) -------- */
/* Passed by value, so laid out as NCCL does. */
typedef struct ncclTeam {
    int nRanks, rank, stride;
} ncclTeam_t;
typedef struct ncclMultimemHandle {
    void *mcBasePtr;
} ncclMultimemHandle_t;
typedef uint32_t ncclCftLeId;
typedef enum {
    NCCL_CFT_TEAM_FLAT,
    NCCL_CFT_TEAM_HIER_MULTIMEM,
    NCCL_CFT_TEAM_HIER_LSA
} ncclCftTeamMode_t;
/* Passed by pointer only. */
typedef struct ncclDevComm ncclDevComm_t;
typedef struct ncclDevCommRequirements ncclDevCommRequirements_t;
typedef struct ncclCommProperties ncclCommProperties_t;
typedef struct ncclDevResourceRequirements ncclDevResourceRequirements_t;
typedef struct ncclLsaBarrierHandle ncclLsaBarrierHandle_t;
typedef struct ncclGinBarrierHandle ncclGinBarrierHandle_t;
typedef struct ncclCftBarrierHandle ncclCftBarrierHandle_t;
typedef struct ncclLLA2AHandle ncclLLA2AHandle_t;
/* Declared by host.h for Windows only (nccl_device/gin_win_stub.h), exported on Linux too. */
struct ncclGinOutboxHandle;
struct ncclGinInboxA2AHandle;

#endif /* ACC_NCCL_ABI_H */
