/*
 * tuner_abi.h - NCCL's tuner plugin interface, versions 4 (NCCL 2.24 to 2.27), 5 (2.28, 2.29),
 * 6 (2.30 to 2.32) and 7 (NCCL's source after 2.30.7), as NCCL's
 * src/include/plugin/tuner/tuner_v4.h to _v7.h and its logger (nccl_common.h) define them;
 * reference/07-runtime-anchors.md §1 tells how NCCL loads and calls a plugin.  The constants
 * struct is the full one of 2.28.9, perChMaxNVLSTreeBws included (the example plugin's copy lacks
 * it); v6 keeps v5's; v7 adds a fifth compute-capability row (Rubin) to the bandwidth tables.
 * The tuner test is built on NCCL's own headers (tests/data/nccl/plugin/tuner/), so that a drift
 * here shows.  Internal to the plugin.
 */
#ifndef ACC_TUNER_ABI_H
#define ACC_TUNER_ABI_H

#include "nccl_abi.h"

typedef enum {
    ncclFuncBroadcast = 0,
    ncclFuncReduce = 1,
    ncclFuncAllGather = 2,
    ncclFuncReduceScatter = 3,
    ncclFuncAllReduce = 4,
    ncclFuncSendRecv = 5,
    ncclFuncSend = 6,
    ncclFuncRecv = 7,
    ncclNumFuncs = 8
} ncclFunc_t;

typedef enum {
    NCCL_LOG_NONE = 0,
    NCCL_LOG_VERSION = 1,
    NCCL_LOG_WARN = 2,
    NCCL_LOG_INFO = 3,
    NCCL_LOG_ABORT = 4,
    NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

/* Subsystem flags of a log line (NCCL_DEBUG_SUBSYS). */
enum { NCCL_INIT = 1, NCCL_TUNING = 64 };

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char *file,
                                  int line, const char *fmt, ...);

/* The cost table's dimensions in 2.24 to 2.28: NCCL passes a flat float[7][3] as float**. */
#define NCCL_NUM_ALGORITHMS 7
#define NCCL_NUM_PROTOCOLS  3
/* An entry NCCL will not run (unsupported, or ruled out by NCCL_ALGO / NCCL_PROTO). */
#define NCCL_ALGO_PROTO_IGNORE -1.0f

typedef struct {
    int nNvlDomains;
    int minRanksPerNvlDomain;
    int maxRanksPerNvlDomain;
} ncclNvlDomainInfo_v5_t;

typedef struct {
    double baseLatencies[7][3];
    double hwLatencies[3][7][3];
    double llMaxBws[4][3];
    double perChMaxRingLL128Bws[4][3];
    double perChMaxTreeLL128Bws[4][3];
    double perChMaxTreeBws[4][3];
    double perChMaxNVLSTreeBws[4][3];
} ncclTunerConstants_v5_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                         ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t *nvlDomainInfo,
                         ncclTunerConstants_v5_t *constants);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*finalize)(void *context);
} ncclTuner_v5_t;

/* v5 and an optional chunk size, which NCCL asks for once it has chosen algorithm, protocol and
 * channels (NULL: NCCL keeps its own). */
typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                         ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t *nvlDomainInfo,
                         ncclTunerConstants_v5_t *constants);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*finalize)(void *context);
    ncclResult_t (*getChunkSize)(void *context, ncclFunc_t collType, size_t nBytes, int algo,
                                 int proto, int nChannels, size_t *chunkSize);
} ncclTuner_v6_t;

/* v7: v6 with constants whose bandwidth tables have a row per compute capability up to Rubin
 * (5 where v5 has 4); the functions are v6's. */
#define NCCL_NUM_COMPCAPS_V7 5

typedef struct {
    double baseLatencies[7][3];
    double hwLatencies[3][7][3];
    double llMaxBws[NCCL_NUM_COMPCAPS_V7][3];
    double perChMaxRingLL128Bws[NCCL_NUM_COMPCAPS_V7][3];
    double perChMaxTreeLL128Bws[NCCL_NUM_COMPCAPS_V7][3];
    double perChMaxTreeBws[NCCL_NUM_COMPCAPS_V7][3];
    double perChMaxNVLSTreeBws[NCCL_NUM_COMPCAPS_V7][3];
} ncclTunerConstants_v7_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                         ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t *nvlDomainInfo,
                         ncclTunerConstants_v7_t *constants);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*finalize)(void *context);
    ncclResult_t (*getChunkSize)(void *context, ncclFunc_t collType, size_t nBytes, int algo,
                                 int proto, int nChannels, size_t *chunkSize);
} ncclTuner_v7_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                         void **context);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*destroy)(void *context);
} ncclTuner_v4_t;

#endif /* ACC_TUNER_ABI_H */
