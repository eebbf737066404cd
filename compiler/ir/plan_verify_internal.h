/*
 * plan_verify_internal.h - the verifier's shared state, split by stage:
 *   plan_verify.c        entry points, header and per-operation checks, buffer layout, the
 *                        postcondition, messages;
 *   plan_verify_value.c  symbolic values (which contributions a chunk holds), hash-consed, and
 *                        the small hash map used for connections, counters and snapshots;
 *   plan_verify_sim.c    the execution model: lanes, FIFO connections with slots, counters,
 *                        dependencies, deadlock reports;
 *   plan_verify_order.c  happens-before: vector clocks per group of ranks that share memory or
 *                        counters, and the per-chunk access history that finds unordered accesses.
 * Not installed; used by these four files only.
 */
#ifndef PLAN_VERIFY_INTERNAL_H
#define PLAN_VERIFY_INTERNAL_H

#include "acc_plan.h"
#include "plan_internal.h"

/* Largest plans the verifier accepts: chunk locations over all ranks (24 bytes each, checked
 * against the memory the process may use before they are allocated; 2^28 keeps every value id
 * in 31 bits), and chunk-steps of work (a sum over operations of chunks touched).  A 1024-rank
 * hierarchical allreduce needs a few million of each; an 8,192-rank recursive-doubling
 * allgather 67 million locations (1.6 GB in all). */
#define PV_MAX_LOCATIONS (1u << 28)
#define PV_MAX_WORK      (1ull << 31)
#define PV_NONE          UINT32_MAX
#define PV_MAX_RANKS     (1 << 20)
/* From this many ranks on, a plan the same under XOR by any rank is proven on rank 0 alone
 * (plan_verify_xor.c); below, the whole plan is run, which costs little there. */
#define PV_XOR_RANKS 512

/* ---- values ------------------------------------------------------------------------------
 * A value is the set of ranks whose input chunk `chunk` it holds (for copies, one rank).  Sets are
 * sorted lists of disjoint rank intervals in an append-only arena, so that a chunk's value is one
 * uint32_t id (0: nothing written) and a copy copies the id.  Ring and hierarchical partial sums
 * are one or two intervals. */
typedef struct {
    uint32_t *arena; /* records: chunk, number of intervals, then lo, hi (exclusive) pairs */
    size_t len, cap;
    uint32_t *tmp; /* scratch for unions */
    size_t tmp_cap;
    uint32_t nranks;
} pv_values_t;

void pv_values_free(pv_values_t *vs);
/* The value "input chunk `chunk` of rank `rank`"; PV_NONE when out of memory. */
uint32_t pv_value_single(pv_values_t *vs, uint32_t chunk, uint32_t rank);
/* Union of two values of one chunk; *overlap is set when a rank is in both (a duplicate
 * contribution, and then the union is not formed).  PV_NONE when out of memory. */
uint32_t pv_value_union(pv_values_t *vs, uint32_t a, uint32_t b, int *overlap);
uint32_t pv_value_chunk(const pv_values_t *vs, uint32_t id);
/* The first rank in both a and b, for messages. */
uint32_t pv_value_common(const pv_values_t *vs, uint32_t a, uint32_t b);
/* Is the value exactly {rank} / all of [0, nranks)? */
int pv_value_is_single(const pv_values_t *vs, uint32_t id, uint32_t rank);
int pv_value_is_all(const pv_values_t *vs, uint32_t id, uint32_t nranks);
/* "{0-2,5}" (long sets are shortened). */
void pv_value_ranks(const pv_values_t *vs, uint32_t id, acc_buf_t *b);
uint32_t pv_value_first_rank(const pv_values_t *vs, uint32_t id);
/* Value id with every rank moved by shift (mod nranks) and its chunk made `chunk`: what a
 * translate of the plan holds.  PV_NONE when out of memory. */
uint32_t pv_value_moved(pv_values_t *vs, uint32_t id, uint32_t chunk, uint32_t shift);
/* The same with every rank r made r ^ t. */
uint32_t pv_value_xored(pv_values_t *vs, uint32_t id, uint32_t chunk, uint32_t t);

/* A map from 64-bit keys to uint32_t values (connections, counters, snapshots). */
typedef struct {
    uint64_t *keys;
    uint32_t *vals;
    size_t cap, count;
} pv_map_t;

void pv_map_free(pv_map_t *m);
/* The value for key, or PV_NONE. */
uint32_t pv_map_get(const pv_map_t *m, uint64_t key);
acc_status_t pv_map_put(pv_map_t *m, uint64_t key, uint32_t val);

/* ---- execution state ---------------------------------------------------------------------- */

/* One chunk of memory of one rank: its value and its access history (the last write and the reads
 * since, as epochs: a thread of the owner's group and that thread's clock). */
typedef struct {
    uint32_t val;
    uint32_t wthr, wclk;
    uint32_t rthr, rclk; /* rthr PV_NONE: no read since the write */
    uint32_t rset;       /* more concurrent reads: index into pv_order_t.rsets, 0 when none */
} pv_loc_t;

typedef struct {
    uint32_t cnt;
    uint32_t op; /* the sending operation's index in its lane */
    uint32_t one;
    uint32_t *vals; /* cnt values (points at `one` when cnt is 1) */
} pv_msg_t;

/* A FIFO connection (sender, receiver, lane).  On a quotient, from is in the period and to
 * may not be: rto receives on it (the rank of the period that to's translate by `shift` is). */
typedef struct {
    int from, to, lane;
    int rto;
    uint32_t shift;
    uint32_t nsend, nrecv; /* static counts, for reports */
    pv_msg_t *ring;
    uint32_t cap, head, len;
} pv_conn_t;

/* A signal counter (from -> to, slot). */
typedef struct {
    int from, to;
    uint32_t slot;
    uint32_t value;
    uint32_t nsig;       /* SIGNAL operations on it in the whole plan */
    uint32_t *lane_nsig; /* per lane of `from`: how many of those it issues (NULL: all in one) */
    uint32_t snap;       /* first of nsig snapshots (vector clocks) in order of arrival */
    uint32_t *snap_lane; /* lane of each arrived signal */
    uint32_t lane0;      /* the first lane seen signalling it (set-up only) */
} pv_counter_t;

enum { PV_RUNNABLE = 0, PV_BLOCKED, PV_DONE };
enum { PV_WHY_NONE = 0, PV_WHY_DEP, PV_WHY_RECV, PV_WHY_SEND, PV_WHY_WAIT };

typedef struct {
    uint32_t pc;
    uint8_t state, queued, why, dep_waiters;
    uint32_t on; /* connection or counter blocked on */
} pv_thread_t;

/* Happens-before.  Ranks that share memory or counters (put, get, reduce_peers, signal, wait)
 * form a group; a thread (a lane, or a rank's "start", which precedes all its lanes) has an index
 * within its group, and a vector clock over the group's threads. */
typedef struct {
    uint32_t n, cap;
    uint32_t *e; /* pairs thread, clock */
} pv_rset_t;

typedef struct {
    uint32_t *gid;     /* per rank: its group */
    uint32_t *gpos;    /* per rank: its position in the group */
    uint32_t *gsize;   /* per group: ranks */
    uint32_t *gfirst;  /* per group: offset of its member list in `members` */
    uint32_t *members; /* ranks by group */
    uint32_t ngroups;
    uint32_t stride; /* threads per rank: nlanes + 1 */
    uint32_t **vc;   /* per thread (rank * nlanes + lane): its vector clock */
    uint32_t *vc_pool;
    uint32_t *snaps; /* snapshot arena: dependency targets, then signals */
    size_t nsnaps_words;
    pv_map_t dep_snap; /* (thread, op) -> offset in snaps */
    pv_rset_t *rsets;
    uint32_t nrsets, rsets_cap;
} pv_order_t;

typedef struct pv {
    const acc_plan_t *plan;
    int inplace;
    int nranks, nlanes;
    /* The ranks that run: nranks, or a quotient's period, with how chunks move (plan.period). */
    int nexec;
    const plan_quot_map_t *quot;
    uint32_t *xbuf; /* a moved message and its chunks' places (received(), plan_verify_sim.c) */
    /* Physical layout per rank: storages IN, OUT, SCRATCH of size psize[], a logical buffer b
     * at rank r maps to storage pmap[b] at chunk off + r * pshift[b]. */
    uint32_t psize[ACC_BUF_COUNT];
    uint8_t pmap[ACC_BUF_COUNT];
    uint32_t pshift[ACC_BUF_COUNT];
    uint32_t pbase[ACC_BUF_COUNT];
    uint32_t rank_locs;
    pv_loc_t *locs;
    pv_values_t values;
    pv_thread_t *thr;
    uint32_t *queue;
    size_t qhead, qlen;
    pv_conn_t *conns;
    uint32_t nconns;
    pv_map_t conn_map;
    pv_counter_t *ctrs;
    uint32_t nctrs;
    pv_map_t ctr_map;
    pv_order_t order;
    /* Optional (acc_plan_final_reductions): per operation, in program order over ranks and
     * lanes from final_base[rank * nlanes + lane], PV_FINAL_* bits of the values its reduction
     * produced. */
    uint8_t *finals;
    size_t *final_base;
} pv_t;

enum { PV_FINAL_ALL = 1, PV_FINAL_PART = 2 };

/* plan_verify.c */
/* Describe an operation: "rank 3 lane 0 op 7 (recv from 2)". */
void pv_describe_op(const pv_t *v, int rank, int lane, uint32_t op, acc_buf_t *b);
/* Describe a reference at a rank: "out[5]" or "in[0:2]". */
void pv_describe_ref(acc_ref_t ref, acc_buf_t *b);
/* Describe a value: "the sum of in[5] over ranks {0-2}" or "in[5] of rank 3" or "nothing". */
void pv_describe_value(const pv_t *v, uint32_t val, acc_buf_t *b);
/* Set an ERR_VERIFY message "rank R lane L op I (name): ..." */
acc_status_t pv_fail(const pv_t *v, int rank, int lane, uint32_t op, const char *fmt, ...)
    ACC_PRINTF(5, 6);
/* Location of chunk k of a logical buffer at a rank. */
static inline pv_loc_t *pv_loc(const pv_t *v, int rank, uint8_t buf, uint32_t k)
{
    return &v->locs[(size_t)rank * v->rank_locs + v->pbase[v->pmap[buf]] + k +
                    (uint32_t)rank * v->pshift[buf]];
}
static inline const acc_op_t *pv_op(const pv_t *v, int rank, int lane, uint32_t i)
{
    return &v->plan->progs[(size_t)rank * v->nlanes + lane].ops[i];
}

/* plan_verify_sim.c */
acc_status_t pv_sim_setup(pv_t *v);
acc_status_t pv_sim_run(pv_t *v);
void pv_sim_free(pv_t *v);

/* plan_verify_order.c */
acc_status_t pv_order_setup(pv_t *v);
void pv_order_free(pv_t *v);
/* A thread starts operation `op`: its own clock becomes op + 1. */
void pv_order_begin(pv_t *v, int rank, int lane, uint32_t op);
/* The thread has waited for operation dep_op of lane dep_lane (which has completed). */
void pv_order_dep(pv_t *v, int rank, int lane, int dep_lane, uint32_t dep_op);
/* Operation `op` of the thread has completed (snapshots its clock if another lane waits on it). */
acc_status_t pv_order_end(pv_t *v, int rank, int lane, uint32_t op);
/* SIGNAL on counter c; WAIT on counter c for `value`. */
void pv_order_signal(pv_t *v, int rank, int lane, uint32_t c);
void pv_order_wait(pv_t *v, int rank, int lane, uint32_t c, uint32_t value);
/* Thread (rank, lane) running op `op` reads / writes chunk k of buffer buf at rank `at`. */
acc_status_t pv_order_access(pv_t *v, int rank, int lane, uint32_t op, int at, uint8_t buf,
                             uint32_t k, int write);
/* After a complete run: every access by another rank to a rank's memory precedes its end. */
acc_status_t pv_order_finish(pv_t *v);
/* Initial epoch of every location of a rank: written by the rank's start. */
void pv_order_init_loc(const pv_t *v, int rank, pv_loc_t *loc);

#endif /* PLAN_VERIFY_INTERNAL_H */
