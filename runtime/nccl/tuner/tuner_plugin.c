/*
 * libnccl-tuner-acc.so: an NCCL tuner plugin (NCCL_TUNER_PLUGIN=acc) that serves, per size, the
 * algorithm, protocol and channel count of NCCL's own that acc's selection found best (the
 * image build's table, db/SCHEMA.md version 6).  NCCL keeps running its own kernels.
 *
 * What NCCL 2.28 to 2.32 (and NCCL's source since, with v7) do with a plugin decides how this one
 * is written (reference/07 §1.3): any error from init fails the communicator and any from
 * getCollInfo fails the collective, so neither ever returns one; the cost table arrives as a flat
 * float[numAlgo][numProto] cast to float**, so it is indexed as such, never as row pointers;
 * entries NCCL will not run are -1 and stay untouched (NCCL_ALGO / NCCL_PROTO keep the last word);
 * the chosen entry is set to 0, which makes it NCCL's argmin; the channel count is set only where
 * the table names one, since NCCL takes any non-zero value as an override.  Each communicator gets
 * its own context.
 */
#include "tuner_internal.h"

#define EXPORT __attribute__((visibility("default")))

static void say(ncclDebugLogger_t log, ncclDebugLogLevel level, const char *line)
{
    /* NCCL passes its logger; some releases have been seen to pass none (reference/07 §6). */
    if (log)
        log(level, NCCL_INIT | NCCL_TUNING, __FILE__, __LINE__, "%s", line);
    else if (level == NCCL_LOG_WARN)
        ACC_WARN(RUNTIME, "%s", line);
    else
        ACC_INFO(RUNTIME, "%s", line);
}

static ncclResult_t init_context(size_t nranks, size_t nnodes, ncclDebugLogger_t log,
                                 void **context)
{
    tuner_ctx_t *ctx = acc_mem_calloc(1, sizeof(*ctx));
    ncclDebugLogLevel level = NCCL_LOG_WARN;
    char line[1024];

    *context = ctx;
    if (!ctx) {
        say(log, level, "acc tuner: out of memory; every choice stays NCCL's");
        return ncclSuccess;
    }
    ctx->nranks = nranks;
    ctx->nnodes = nnodes;
    tuner_load(ctx, line, sizeof(line), &level);
    say(log, level, line);
    return ncclSuccess;
}

static ncclResult_t init_v5(void **context, uint64_t comm_id, size_t nranks, size_t nnodes,
                            ncclDebugLogger_t log, ncclNvlDomainInfo_v5_t *nvl_domains,
                            ncclTunerConstants_v5_t *constants)
{
    (void)comm_id;
    (void)nvl_domains;
    (void)constants; /* NCCL's model stays NCCL's: acc only picks among its choices */
    return init_context(nranks, nnodes, log, context);
}

static ncclResult_t init_v7(void **context, uint64_t comm_id, size_t nranks, size_t nnodes,
                            ncclDebugLogger_t log, ncclNvlDomainInfo_v5_t *nvl_domains,
                            ncclTunerConstants_v7_t *constants)
{
    (void)comm_id;
    (void)nvl_domains;
    (void)constants; /* as in v5: NCCL's model, Rubin's row included, stays NCCL's */
    return init_context(nranks, nnodes, log, context);
}

static ncclResult_t init_v4(size_t nranks, size_t nnodes, ncclDebugLogger_t log, void **context)
{
    return init_context(nranks, nnodes, log, context);
}

static ncclResult_t get_coll_info(void *context, ncclFunc_t coll, size_t nbytes, int pipe_ops,
                                  float **cost_table, int nalgos, int nprotos, int reg_buff,
                                  int *nchannels)
{
    const tuner_ctx_t *ctx = context;
    /* NCCL's float[numAlgo][numProto], flat, behind a float** (reference/07 §1.5). */
    float *cost = (float *)cost_table;
    const acc_select_nccl_entry_t *e;
    float *cell;

    (void)pipe_ops;
    (void)reg_buff;
    /* nBytes is NCCL's: the whole buffer for allgather and reduce-scatter, as the tables are
     * keyed (acc_select.h), so it is looked up as it comes. */
    if (!ctx || !cost || coll < ncclFuncBroadcast || coll >= TUNER_FUNCS ||
        !(e = acc_select_nccl_lookup(ctx->tables[coll], nbytes)) || (int)e->algo >= nalgos ||
        (int)e->proto >= nprotos)
        return ncclSuccess;
    cell = &cost[(size_t)e->algo * (size_t)nprotos + (size_t)e->proto];
    if (*cell < 0)
        return ncclSuccess; /* NCCL will not run it here: its own choice stands */
    *cell = 0.0f;
    if (e->channels > 0 && nchannels)
        *nchannels = e->channels;
    return ncclSuccess;
}

static ncclResult_t finalize(void *context)
{
    tuner_ctx_t *ctx = context;
    if (ctx) {
        tuner_unload(ctx);
        acc_mem_free(ctx);
    }
    return ncclSuccess;
}

/* The only names the library exports (tuner.map): NCCL's source after 2.30.7 probes v7 first,
 * 2.30 to 2.32 v6, then v5 and v4, as older ones do.  v6's and v7's chunk size stays NCCL's:
 * acc's database holds algorithm, protocol and channels per size, measured or predicted, but no
 * chunk size - nothing measures NCCL's chunk sizes yet - and NCCL lets the entry be NULL, which
 * also spares NCCL a call per collective. */
EXPORT const ncclTuner_v7_t ncclTunerPlugin_v7 = {"acc", init_v7, get_coll_info, finalize, NULL};
EXPORT const ncclTuner_v6_t ncclTunerPlugin_v6 = {"acc", init_v5, get_coll_info, finalize, NULL};
EXPORT const ncclTuner_v5_t ncclTunerPlugin_v5 = {"acc", init_v5, get_coll_info, finalize};
EXPORT const ncclTuner_v4_t ncclTunerPlugin_v4 = {"acc", init_v4, get_coll_info, finalize};
