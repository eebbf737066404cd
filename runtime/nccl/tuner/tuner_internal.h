/*
 * tuner_internal.h - what the tuner plugin's files share: a communicator's context and the
 * loading of its tables (tuner_load.c).  Internal to the plugin.
 */
#ifndef ACC_TUNER_INTERNAL_H
#define ACC_TUNER_INTERNAL_H

#include "acc_select.h"
#include "tuner_abi.h"

/* One communicator's tables, by NCCL's function (the collectives NCCL tunes, Broadcast to
 * AllReduce); NULL where there is no advice.  Read-only after init, so getCollInfo needs no
 * lock. */
#define TUNER_FUNCS (ncclFuncAllReduce + 1)

typedef struct {
    size_t nranks, nnodes;
    acc_select_nccl_t *tables[TUNER_FUNCS];
} tuner_ctx_t;

/* Fill ctx->tables for its shape (nranks, nnodes) from the database, read into memory here so
 * that getCollInfo never touches SQLite.  Never fails: what cannot be loaded leaves tables NULL.
 * line (cap bytes) receives the one line to log, *level its level: WARN when the process has
 * no usable topology or database, INFO otherwise. */
void tuner_load(tuner_ctx_t *ctx, char *line, size_t cap, ncclDebugLogLevel *level);
void tuner_unload(tuner_ctx_t *ctx);

#endif /* ACC_TUNER_INTERNAL_H */
