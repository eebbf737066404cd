/*
 * dropin_internal.h - what the drop-in NCCL's files share: the real NCCL (dropin_real.c), the
 * communicators acc runs beside NCCL's (dropin_comm.c) and the calls (dropin_coll.c).  Internal
 * to libacc-nccl.so.
 *
 * The drop-in exports NCCL's API (dropin_api.h) and runs a collective through acc only when acc
 * serves it; everything else, and everything acc cannot finish, goes to the real NCCL unchanged.
 * acc never turns a call into an NCCL error: a failure inside acc sends that call, and every later
 * one of the communicator, to NCCL, with one log line.
 */
#ifndef ACC_DROPIN_INTERNAL_H
#define ACC_DROPIN_INTERNAL_H

#include "acc_runtime.h"
#include "dropin_api.h"
#include "nccl_abi.h"

#include <pthread.h>

/* Every exported function, as pnccl<Name> and ncclName (default visibility: the library is
 * built with hidden visibility, and its version script lists these names only). */
#define DROPIN_EXPORT __attribute__((visibility("default")))
#define DROPIN_DECLARE(ret, name, params, args)                                                    \
    DROPIN_EXPORT ret pnccl##name params;                                                          \
    DROPIN_EXPORT ret nccl##name params;
DROPIN_API(DROPIN_DECLARE)
#undef DROPIN_DECLARE

/* ncclName as a weak alias of pnccl<Name>, as NCCL exports its API; placed after the definition,
 * in the same file (an alias must be). */
#define DROPIN_ALIAS(name)                                                                         \
    DROPIN_EXPORT __typeof__(pnccl##name) nccl##name __attribute__((weak, alias("pnccl" #name)))

/* ---- the real NCCL (dropin_real.c) ------------------------------------------------------ */
/* Its entry points; an entry the library lacks (an older NCCL) is NULL. */
typedef struct {
#define DROPIN_FIELD(ret, name, params, args) ret(*name) params;
    DROPIN_API(DROPIN_FIELD)
#undef DROPIN_FIELD
} dropin_real_t;

/* The real NCCL, opened at the first call (ACC_NCCL_LIBRARY, else libnccl.so.2); NULL when it
 * cannot be opened or is this library itself, said once in the log. */
const dropin_real_t *dropin_real(void);
/* One index per entry point. */
enum {
#define DROPIN_INDEX(ret, name, params, args) DROPIN_IDX_##name,
    DROPIN_API(DROPIN_INDEX)
#undef DROPIN_INDEX
        DROPIN_IDX_COUNT
};
/* What a call of an entry point the real NCCL lacks (or of any, without NCCL) returns, after
 * saying so once per entry point: ncclSystemError without NCCL, else ncclInvalidUsage.  name
 * without the "nccl" prefix. */
ncclResult_t dropin_unavailable(int index, const char *name);
/* The real entry point `name`, or the early return of dropin_unavailable. */
#define DROPIN_REAL(r, name)                                                                       \
    const dropin_real_t *r = dropin_real();                                                        \
    if (!r || !r->name)                                                                            \
        return dropin_unavailable(DROPIN_IDX_##name, #name);

/* ---- communicators (dropin_comm.c) ------------------------------------------------------ */
/* acc's communicator beside one of NCCL's, shared by the calls that use it.  mu guards off
 * and calls, so that an error ncclCommGetAsyncError finds with no call in acc cannot be one a
 * call is about to hand to NCCL. */
typedef struct {
    ncclComm_t nccl;
    acc_comm_t *acc;
    int rank;
    pthread_mutex_t mu;
    int off;            /* acc failed: NCCL runs every call from then on */
    int calls;          /* calls inside acc now */
    acc_status_t async; /* acc's failure found outside calls (ncclCommGetAsyncError) */
    char error[512];    /* its message */
    int refs;           /* under the map's lock */
} dropin_comm_t;

/* After NCCL made a communicator on this thread: acc joins it (a collective step of every
 * rank's, like NCCL's init), unless it was made inside a group or where acc cannot run (then
 * one log line says why).  how names the call, for the log. */
void dropin_attach(ncclComm_t comm, const char *how);
/* The communicator acc runs beside comm, with a reference (dropin_comm_put); NULL when acc does
 * not run beside it, or no longer. */
dropin_comm_t *dropin_comm_get(ncclComm_t comm);
void dropin_comm_put(dropin_comm_t *s);
/* A call through acc: begin says whether acc may still run calls of the communicator (1) or
 * NCCL must (0); end takes acc's status.  A failure (anything but ACC_OK, ACC_NO_DATA -- not
 * acc's to run -- and ACC_ERR_INVALID -- arguments NCCL will judge) sends this call and every
 * later one to NCCL, and the first is logged, naming what failed. */
int dropin_comm_begin(dropin_comm_t *s);
void dropin_comm_end(dropin_comm_t *s, acc_status_t st, const char *what);

/* ---- groups (dropin_coll.c) ------------------------------------------------------------- */
/* This thread's group depth: communicators made inside a group get no acc (their init finishes
 * only at the group's end, when acc cannot join in step). */
int dropin_group_depth(void);

#endif /* ACC_DROPIN_INTERNAL_H */
