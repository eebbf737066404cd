/*
 * nccl_abi.h - the types of NCCL's ABI that acc's NCCL-side libraries (the drop-in NCCL and the
 * tuner plugin) are called with, as nccl.h 2.28 defines them: the same names, values and
 * layouts, so that each definition can be checked against NCCL's header line by line, without
 * needing the CUDA headers nccl.h includes.  Opaque types stay opaque: acc passes them through.
 * Internal to runtime/nccl/.
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
    ncclNumResults = 8
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

/* Passed through untouched: their layouts are NCCL's business. */
typedef struct ncclConfig_v22800 ncclConfig_t;
typedef struct ncclSimInfo_v22200 ncclSimInfo_t;

#endif /* ACC_NCCL_ABI_H */
