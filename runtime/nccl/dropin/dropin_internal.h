/*
 * dropin_internal.h - what the drop-in NCCL's files share: the real NCCL (dropin_real.c), the
 * communicators acc may run beside NCCL's (dropin_comm.c, dropin_join.c), the calls
 * (dropin_coll.c) and groups (dropin_group.c).  Internal to libacc-nccl.so.
 *
 * The drop-in exports NCCL's API (dropin_api.h) and runs a collective through acc only when acc
 * serves it; everything else, and everything acc cannot finish, goes to the real NCCL unchanged.
 * acc never turns a call into an NCCL error while it can still give the job NCCL's result: a
 * failure inside acc sends that call, and every later one of the communicator, to NCCL, with one
 * log line.  The one exception is a call whose result acc may already have written over and
 * cannot restore (an in-place call on device memory): it fails, since success with a wrong
 * result is the one outcome a job must never see.
 *
 * NCCL's own calls.  libnccl.so.2 calls some of its exported functions itself
 * (ncclCommGetAsyncError in every enqueue, ncclBroadcast, ncclGetErrorString, ...), and under
 * LD_PRELOAD those calls land here.  Every entry point the drop-in implements first asks whether
 * NCCL is its caller and hands such a call to the real function at once; the forwarded ones
 * only load the resolved entry point and call it.  NCCL is the caller when this thread is inside
 * a call the drop-in made into NCCL (dropin_nccl_depth: which also covers a call NCCL makes as
 * a tail call, whose return address is no longer NCCL's), or when the return address lies in
 * NCCL's code (NCCL's own threads) - both O(1), without a lock.
 */
#ifndef ACC_DROPIN_INTERNAL_H
#define ACC_DROPIN_INTERNAL_H

#include "acc_runtime.h"
#include "dropin_api.h"
#include "nccl_abi.h"
#include "nccl_lib.h"

#include <pthread.h>

/* Every exported function, as pnccl<Name> and ncclName (default visibility: the library is
 * built with hidden visibility, and its version script lists these names only). */
#define DROPIN_EXPORT __attribute__((visibility("default")))
#define DROPIN_DECLARE(since, ret, name, params, args)                                             \
    DROPIN_EXPORT ret pnccl##name params;                                                          \
    DROPIN_EXPORT ret nccl##name params;
DROPIN_API(DROPIN_DECLARE)
#undef DROPIN_DECLARE

/* ncclName as a weak alias of pnccl<Name>, as NCCL exports its API; placed after the definition,
 * in the same file (an alias must be). */
#define DROPIN_ALIAS(name)                                                                         \
    DROPIN_EXPORT __typeof__(pnccl##name) nccl##name __attribute__((weak, alias("pnccl" #name)))

/* ---- the real NCCL (dropin_real.c) ------------------------------------------------------ */
/* One index per entry point. */
enum {
#define DROPIN_INDEX(since, ret, name, params, args) DROPIN_IDX_##name,
    DROPIN_API(DROPIN_INDEX)
#undef DROPIN_INDEX
        DROPIN_IDX_COUNT
};
extern const char *const dropin_names[DROPIN_IDX_COUNT]; /* "ncclAllReduce", ... */

/* The resolved entry points, filled at each one's first call (dropin_resolve). */
extern void *dropin_slots[DROPIN_IDX_COUNT];
/* The real NCCL's entry point `index` (pnccl<Name>, else ncclName), looked up at its first use;
 * NULL when NCCL cannot be opened or lacks it (said once per entry point). */
void *dropin_resolve(int index);
static inline void *dropin_sym(int index)
{
    void *f = __atomic_load_n(&dropin_slots[index], __ATOMIC_ACQUIRE);
    return f ? f : dropin_resolve(index);
}
/* The real function `name` with its own type, or NULL. */
#define DROPIN_FN(name) ((__typeof__(&pnccl##name))dropin_sym(DROPIN_IDX_##name))
/* What a call of an entry point the real NCCL lacks returns: ncclSystemError without an NCCL,
 * ncclInvalidUsage when the NCCL opened predates the function. */
ncclResult_t dropin_unavailable(int index);
/* The real NCCL, opened (NULL when it cannot be). */
const nccl_lib_t *dropin_nccl(void);
/* How deep this thread is in calls the drop-in made into NCCL. */
extern __thread int dropin_nccl_depth;
/* expr, a call into NCCL, with this thread marked as inside NCCL meanwhile. */
#define DROPIN_INTO(expr)                                                                          \
    __extension__({                                                                                \
        __typeof__(expr) r_;                                                                       \
        dropin_nccl_depth++;                                                                       \
        r_ = (expr);                                                                               \
        dropin_nccl_depth--;                                                                       \
        r_;                                                                                        \
    })
#define DROPIN_INTO_VOID(expr)                                                                     \
    do {                                                                                           \
        dropin_nccl_depth++;                                                                       \
        expr;                                                                                      \
        dropin_nccl_depth--;                                                                       \
    } while (0)
/* A call of an entry point the drop-in implements that comes from NCCL itself. */
#define DROPIN_FROM_NCCL()                                                                         \
    (dropin_nccl_depth > 0 || nccl_lib_is_caller(__builtin_return_address(0)))
/* Hand the call to the real function as it is (or its unavailable result). */
#define DROPIN_PASS(name, args)                                                                    \
    do {                                                                                           \
        __typeof__(&pnccl##name) f_ = DROPIN_FN(name);                                             \
        return f_ ? DROPIN_INTO(f_ args) : dropin_unavailable(DROPIN_IDX_##name);                  \
    } while (0)

/* ---- communicators (dropin_comm.c, dropin_join.c) ---------------------------------------- */
/* What acc is to one of NCCL's communicators. */
typedef enum {
    DROPIN_NCCL,    /* NCCL's alone for good: acc could not join, or it left */
    DROPIN_IDLE,    /* acc may join at the first call its tables give it, and has not */
    DROPIN_JOINING, /* a call is joining now: other calls meanwhile are NCCL's */
    DROPIN_JOINED,  /* acc runs the calls it serves */
} dropin_state_t;

typedef struct dropin_comm {
    ncclComm_t nccl;
    int shape_known;  /* nranks, rank and on_gpu asked of NCCL (at the first use: a
                         communicator made inside a group is NCCL's to finish first) */
    int nranks, rank; /* NCCL's */
    int on_gpu;       /* NCCL's buffers are device memory (ncclCommCuDevice >= 0) */
    /* mu guards every field below; it is never held across a call into acc or NCCL. */
    pthread_mutex_t mu;
    pthread_cond_t idle; /* users dropped to 0 */
    dropin_state_t state;
    int voted;       /* the ranks compared what their tables say (dropin_vote) */
    acc_comm_t *acc; /* JOINED; or acc's communicator that stopped, released when unused */
    int users;       /* uses now (dropin_comm_get .. put) */
    int closing;     /* destroyed or aborted: out of the map, the last user releases it */
    int abort;       /* release acc without a goodbye */
    int lost;        /* acc lost a result it had reported queued: the job hears it */
    ncclResult_t lost_as;
    char error[512]; /* why, for ncclGetLastError */
    /* Held while acc's communicator is used (a call, its async error): the one user of an acc
     * communicator at a time, as acc's API asks.  Never taken to stop acc (comm_stop). */
    pthread_mutex_t acc_mu;
} dropin_comm_t;

/* Register a communicator NCCL has just made, which acc may join later (state IDLE).  Nothing
 * else happens at creation. */
void dropin_register(ncclComm_t comm);
/* nranks, rank and on_gpu, asked of NCCL once; 0 when NCCL cannot say (then NCCL's alone). */
int dropin_shape(dropin_comm_t *s);
/* The state of comm with a use taken (dropin_comm_put gives it back), or NULL when the drop-in
 * does not know comm.  A use keeps the state and acc's communicator alive. */
dropin_comm_t *dropin_comm_get(ncclComm_t comm);
void dropin_comm_put(dropin_comm_t *s);
/* Out of the map, for ncclCommFinalize/Destroy (abort 0: waits for the calls using it, then acc
 * says goodbye to its peers) or ncclCommAbort (abort 1: acc's waits stop at once and the last
 * user releases it, never waiting for the device). */
void dropin_leave(ncclComm_t comm, int abort);
/* acc stops serving s for good (under s->mu): NCCL runs every later call.  acc's communicator,
 * if any, stops waiting at once and is released without a goodbye when no call uses it.  why
 * (a sentence; NULL: quiet) goes to the log at level, after the rank, when acc had joined. */
void dropin_switch_off(dropin_comm_t *s, acc_log_level_t level, const char *why);

/* Would acc's tables give this call to acc on a communicator of nranks, on GPUs (the cuda
 * backend) or not (the host backend)?  Only a range whose plan that backend can run counts
 * (acc_select_entry_runs_on): on GPUs a multi-node plan is NCCL's.  Asked before acc has
 * joined, from the database alone (the same file on every rank gives the same answer on every
 * rank, whatever else differs between them).  (dropin_join.c) */
int dropin_tables_say_acc(int nranks, int on_gpu, acc_coll_t coll, size_t count, acc_dtype_t dt);
/* The ranks' vote, before any may join: every rank of s's communicator passes the digest of
 * what its own tables say about communicators of its size (0 when acc is off there:
 * ACC_DISABLE, no database), through one NCCL all-reduce, at the same call - the first of the
 * communicator's collectives acc could run (or, in a group, right after the group's end).
 * Ranks whose settings or databases differ would otherwise decide differently whether to join
 * and wait in each other's collectives for ever; where the digests differ, every rank leaves
 * the communicator to NCCL, and rank 0 says why.  s used, s->mu not held. */
void dropin_vote(dropin_comm_t *s);

/* acc's communicator beside s, made collectively (every rank of the communicator calls this at
 * the same call, s JOINING, s->mu not held), or NULL with one log line saying why. */
acc_comm_t *dropin_join(dropin_comm_t *s);

/* ---- calls (dropin_coll.c) ---------------------------------------------------------------- */
/* One call as the job made it. */
typedef struct {
    int index;       /* its entry point */
    acc_coll_t coll; /* ACC_COLL_COUNT: a collective acc has no plans for (alltoall, gather, ...) */
    const void *send;
    void *recv;
    size_t count;
    ncclDataType_t type;
    ncclRedOp_t op;
    int root;
    ncclComm_t comm;
    cudaStream_t stream;
    const ncclCollConfig_t *config; /* the *Config variants' */
} dropin_op_t;

/* Can acc run k on s at all (a collective acc has plans for, of its types and reductions, no
 * per-call configuration)?  *dt, *op: k's as acc's. */
int dropin_acc_kind(const dropin_op_t *k, acc_dtype_t *dt, acc_redop_t *op);
/* Would acc run k on s (JOINED and acc serves it, or IDLE and its tables say acc)?  s used. */
int dropin_wants(dropin_comm_t *s, const dropin_op_t *k);
/* k through acc on s, joining first when IDLE (s used, s->mu not held).  1 when acc ran it;
 * 0 when NCCL must (nothing of k's output was touched, or it was restored); minus an NCCL error
 * when acc failed after it may have written an in-place output it cannot restore: the call
 * fails with it. */
int dropin_run_acc(dropin_comm_t *s, const dropin_op_t *k);
/* acc joins s if it is IDLE, at the first of ops that is s's (a group's calls).  1 when acc is
 * JOINED to s then. */
int dropin_join_for(dropin_comm_t *s, const dropin_op_t *ops, size_t n);
/* For the job's ncclCommGetAsyncError: has a call acc queued on the device failed since (the
 * cuda backend's launches give up after ACC_TIMEOUT_MS)?  Then its result is lost: s->lost. */
void dropin_check_device(dropin_comm_t *s);
/* k to the real NCCL. */
ncclResult_t dropin_forward(const dropin_op_t *k);
/* The order acc runs several communicators' calls in, the same on every rank (acc's nonce). */
int dropin_order(const dropin_comm_t *a, const dropin_comm_t *b);

/* ---- groups (dropin_group.c) -------------------------------------------------------------- */
/* This thread's group depth. */
int dropin_group_depth(void);
/* Hold k for the end of this thread's group. */
ncclResult_t dropin_group_add(const dropin_op_t *k);

#endif /* ACC_DROPIN_INTERNAL_H */
