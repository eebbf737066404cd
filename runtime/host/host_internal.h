/*
 * host_internal.h - the host backend: every rank a process, the lanes of its plans threads.
 * Internal to runtime/host/.
 *
 * Instances.  A plan runs through an instance: the plan, an element size and a capacity (the
 * largest count it holds).  Every rank builds the same instances in the same order (calls are
 * collective and the tables agreed on), so an instance is created collectively, on first use
 * and whenever a call outgrows it.  Each rank owns one shared-memory segment per instance,
 * which the ranks of its node map too:
 *   - the rings of the connections it receives on: a header (messages sent, messages taken)
 *     and `slots` message slots, each a chunk-length table and the data;
 *   - the signal counters other ranks raise towards it;
 *   - its scratch buffer, and the element count of each scratch chunk;
 *   - for plans with peer-memory operations ("staged"), its input and output: the caller's
 *     buffers are copied in before the lanes start and out after they end, since peers read and
 *     write there.  Plans that only pass messages run on the caller's buffers.
 * Every rank computes every segment's layout from the plan alone, so only names travel.
 *
 * Between nodes.  A connection whose ends are on different nodes is a TCP socket: the sender's
 * lane writes each message (its length table, then its data) to it, and a thread of the
 * receiver reads it into the ring in the receiver's segment as slots free up.  A sender thus
 * blocks exactly when the ring and the socket are full, the capacity the verifier assumed or
 * more, so verified plans cannot deadlock here either.  Peer-memory operations between nodes
 * cannot run on this backend (the instance is refused and the call takes the fallback).
 *
 * Counting instead of resetting.  Ring counters, signal counters and lane progress only grow
 * (32-bit, compared modulo 2^32); a call's targets are the instance's completed calls times
 * the plan's per-call counts plus what the operation names.  Nothing is reset between calls;
 * a call that fails leaves the counters inconsistent, so it breaks the communicator.
 *
 * Waiting.  Every wait spins briefly, then sleeps on a futex of the word it waits on (shared
 * between processes), waking every 100 ms to look at the abort flag and the deadline
 * (ACC_TIMEOUT_MS); a writer wakes sleepers only when one announced itself.
 */
#ifndef ACC_HOST_INTERNAL_H
#define ACC_HOST_INTERNAL_H

#include "rt_internal.h"

#include <stdatomic.h>

/* A word others wait on, with the count of those sleeping on it; one per cache line. */
typedef struct {
    _Atomic uint32_t value;
    _Atomic uint32_t sleepers;
    char pad[56];
} hb_word_t;

/* A ring's header in the receiver's segment. */
typedef struct {
    hb_word_t sent;  /* messages in the ring so far (by the sender, or the receiver's thread) */
    hb_word_t taken; /* messages the receiver has consumed */
} hb_ring_t;

/* A slot: its chunk-length table, then the data (at a 64-byte boundary). */
typedef struct {
    uint32_t nchunks;
    uint32_t pad;
    uint64_t lens[]; /* maxcnt of them */
} hb_slot_t;

typedef struct {
    int from, to, lane;
    uint32_t maxcnt;     /* chunks of its largest message */
    uint32_t per_call;   /* messages per call */
    uint64_t slot_bytes; /* length table and data of one slot */
    uint64_t off;        /* the ring header's offset in the receiver's segment; slots follow */
    int remote;          /* its ends are on different nodes */
    /* this rank's end */
    uint32_t count;       /* messages sent or taken so far */
    int fd;               /* remote: the socket (-1 otherwise) */
    unsigned char *stage; /* remote, sending: where a message is built before it is written */
} hb_conn_t;

/* A signal counter (from -> to, slot), in the receiver's segment. */
typedef struct {
    int from, to;
    uint32_t slot, per_call;
    uint64_t off;
} hb_ctr_t;

/* Where things are in one rank's segment. */
typedef struct {
    uint64_t in, out;     /* staged plans only */
    uint64_t scratch;     /* scratch chunks, scratch_cap elements apart */
    uint64_t scratch_len; /* int64 per scratch chunk: elements it holds, -1 unwritten */
    uint64_t bytes;
} hb_layout_t;

typedef struct hb_inst hb_inst_t;

/* One call in flight: what the lanes of this rank read. */
typedef struct {
    hb_inst_t *in;
    acc_dtype_t dt;
    acc_redop_t op;
    uint64_t count;
    uint64_t elems[ACC_BUF_COUNT];      /* in, out: for this count; scratch: its capacity */
    unsigned char *base[ACC_BUF_COUNT]; /* this rank's buffers */
    double deadline;                    /* 0: none */
    int timeout_ms;
    const volatile int *abort_flag;
    /* the first failure of a lane */
    pthread_mutex_t lock;
    acc_status_t status;
    char msg[512];
} hb_call_t;

struct hb_inst {
    const acc_plan_t *plan;
    int rank; /* this process's */
    int id;   /* per communicator, in creation order (equal on every rank) */
    size_t es;
    uint64_t cap; /* elements of count it holds */
    uint64_t scratch_cap;
    int staged;
    hb_conn_t *conns;
    uint32_t nconns;
    hb_ctr_t *ctrs;
    uint32_t nctrs;
    hb_layout_t *layouts; /* per rank */
    unsigned char **seg;  /* per rank: its segment as mapped here; NULL off this node */
    uint64_t *seg_bytes;
    /* per operation of this rank's lanes: the connection received from and sent to, the
     * counter it raises or waits on; lane_first[l] + k indexes them */
    uint32_t *lane_first;
    uint32_t *in_conn, *out_conn, *ctr;
    uint8_t *publish;    /* another lane depends on this operation */
    hb_word_t *progress; /* per lane: operations completed, over all calls */
    uint64_t calls;      /* calls completed */
    /* the receiving threads of remote connections */
    pthread_t *net_threads;
    int nnet;
    volatile int stop; /* the receiving threads end (read and written with __atomic) */
    hb_call_t *call;   /* the call in flight */
};

/* A lane at work: the call, which lane, which operation (for messages). */
typedef struct {
    hb_call_t *call;
    int lane;
    uint32_t k;
    const acc_op_t *op;
    const void **ptrs; /* REDUCE_PEERS sources, npeer_pool + 2 */
} hb_lane_t;

/* The backend's state per communicator: the lane threads and the instances. */
typedef struct {
    acc_comm_t *comm;
    /* lane threads: thread i runs lane i + 1 of the call in flight */
    pthread_t *threads;
    int nthreads;
    hb_word_t go;   /* bumped to start a call */
    hb_word_t done; /* lanes finished, over all calls */
    hb_call_t *call;
    int nlanes;
    _Atomic int quit;
    /* instances, and plans this backend could not set up (not retried) */
    hb_inst_t **insts;
    size_t ninsts, insts_cap;
    int next_id;
    const acc_plan_t **refused;
    size_t nrefused, refused_cap;
} hb_state_t;

/* ---- instances (host_inst.c) ---- */
/* Collective: every rank calls it for the same plan at the same call. */
acc_status_t hb_inst_create(acc_comm_t *c, int id, const acc_plan_t *plan, size_t es, uint64_t cap,
                            hb_inst_t **out);
void hb_inst_destroy(acc_comm_t *c, hb_inst_t *in);
/* Can plan run on this communicator's nodes?  Peer memory only within a node. */
acc_status_t hb_plan_fits(const acc_comm_t *c, const acc_plan_t *plan);

/* ---- waiting and the lane threads (host_lanes.c) ---- */
/* Wait until (int32_t)(word - target) >= 0.  peer is the rank whose progress is awaited (-1:
 * none) and the text says what for; both go into the timeout's message.  0, or -1 with the
 * call's failure recorded. */
int hb_wait(hb_lane_t *lc, hb_word_t *w, uint32_t target, int peer, const char *fmt, ...)
    ACC_PRINTF(5, 6);
/* word += 1 (release), waking sleepers. */
void hb_raise(hb_word_t *w);
/* The same wait for threads outside a call (the receivers of remote connections): 0 when
 * reached, -1 when *stop was set. */
int hb_wait_until(hb_word_t *w, uint32_t target, const volatile int *stop);
/* Record the lane's failure, prefixed with rank, lane and operation (the first failure of a
 * call wins); returns -1. */
int hb_fail(hb_lane_t *lc, acc_status_t st, const char *fmt, ...) ACC_PRINTF(3, 4);
/* Run every lane of this rank for one call, lane 0 on the calling thread. */
acc_status_t hb_run_lanes(hb_state_t *s, hb_call_t *call);
/* Enough threads for plans of nlanes lanes. */
acc_status_t hb_pool_grow(hb_state_t *s, int nlanes);
void hb_pool_stop(hb_state_t *s);

/* ---- operations (host_ops.c) ---- */
int hb_run_op(hb_lane_t *lc);

/* ---- between nodes (host_net.c) ---- */
/* Connect the remote connections of an instance: senders connect, receivers accept and start
 * a thread per connection that fills its ring. */
acc_status_t hb_net_connect(acc_comm_t *c, hb_inst_t *in);
void hb_net_stop(hb_inst_t *in);
/* Write one message to a remote connection's socket. */
int hb_net_send(hb_lane_t *lc, hb_conn_t *cn, const hb_slot_t *slot, uint64_t bytes);

/* The slot of message number `n` of connection cn, in the receiver's segment as mapped here. */
static inline hb_slot_t *hb_slot(const hb_inst_t *in, const hb_conn_t *cn, uint32_t n)
{
    unsigned char *seg = in->seg[cn->to];
    return (hb_slot_t *)(seg + cn->off + sizeof(hb_ring_t) +
                         (uint64_t)(n % (uint32_t)in->plan->slots) * cn->slot_bytes);
}

static inline hb_ring_t *hb_ring(const hb_inst_t *in, const hb_conn_t *cn)
{
    return (hb_ring_t *)(in->seg[cn->to] + cn->off);
}

/* Bytes of a slot's length table, rounded so the data starts on a 64-byte boundary. */
static inline uint64_t hb_slot_header(uint32_t maxcnt)
{
    return (sizeof(hb_slot_t) + (uint64_t)maxcnt * sizeof(uint64_t) + 63) & ~(uint64_t)63;
}

#endif
