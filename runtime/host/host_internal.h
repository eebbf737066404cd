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
 * A rank lays out its own segment and those of the ranks near it (that it sends to, receives
 * from, signals or touches) from the edges into them (acc_plan_view_t), which are all it
 * reads of other ranks' programs; every rank lays out a segment alike, so only names travel.
 *
 * Between nodes.  A connection whose ends are on different nodes is a TCP socket.  The sending
 * lane builds each message in an outbox of `slots` slots in its own memory and writes it to the
 * socket itself when nothing is queued before it; what the socket does not take waits in the
 * outbox for the connection's thread (host_net.c).  The receiving lane reads messages from the
 * socket into the ring in its own segment as slots free up.  A message waits in the outbox
 * exactly when the ring and the socket are full, the capacity the verifier assumed or more, so
 * verified plans cannot deadlock here either.  Peer-memory operations between nodes
 * cannot run on this backend (the instance is refused and the call takes the fallback).
 *
 * Counting instead of resetting.  Ring counters and signal counters only grow (32-bit,
 * compared modulo 2^32); a call's targets are the instance's completed calls times the plan's
 * per-call counts plus what the operation names.  Nothing is reset between calls;
 * a call that fails leaves the counters inconsistent, so it breaks the communicator.
 *
 * Running the lanes.  One thread per rank - the caller's - runs all its lanes, taking each
 * lane as far as it can go without waiting (an operation runs only once what it needs is
 * there: a message, room for one, a signal, the operation of another lane it depends on) and
 * moving to the next.  When no lane can move it sleeps on the rank's doorbell, a word in its
 * segment that everything that could unblock it rings: a peer committing a message to it or
 * taking one from it, a signal, the threads of its remote connections; or, when lanes wait for
 * remote messages or outbox room, in poll() on those sockets and the instance's eventfd, which
 * the connections' threads write (briefly, when lanes also wait on the doorbell, since poll()
 * cannot wait on a futex).  Threads per lane, on a
 * machine with fewer cores than ranks x lanes, would mostly wait for each other.  A call fails
 * when no lane has moved for ACC_TIMEOUT_MS, naming what the first stuck lane waits for.
 *
 * Waking.  A sleeper counts itself on the word before it looks at it a last time, and a writer
 * makes the system call only when someone sleeps (both sequentially consistent), so no wake-up
 * is lost and none costs a system call when nobody waits.
 */
#ifndef ACC_HOST_INTERNAL_H
#define ACC_HOST_INTERNAL_H

#include "rt_internal.h"

#include <stdatomic.h>

/* Sockets per remote connection at most: one per interface ACC_SOCKET_IFNAME names. */
#define HB_MAX_RAILS NET_MAX_IFS

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
    uint32_t sig;    /* the sending rank's call signature (hb_call_rec_t) */
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
    uint32_t count; /* messages sent or taken so far */
    /* remote: its sockets, one per rail (hb_state_t.nrails; -1 otherwise), across which each
     * message is striped (hb_stripe) */
    int nrails;
    int fd[HB_MAX_RAILS];
    /* remote, sending: the outbox (slots of slot_bytes); messages handed to its thread
     * (queued) and written by it (drained), and where the lane's own write of the first one
     * stopped on each rail (bytes of the rail's stripe) */
    unsigned char *outbox;
    hb_word_t queued, drained;
    uint64_t tx_off[HB_MAX_RAILS];
    /* remote, receiving: bytes of the next message's stripe read so far, per rail */
    uint64_t rx_off[HB_MAX_RAILS];
} hb_conn_t;

/* The segment's first page: its magic, then the rank's doorbell, then the call it runs. */
#define HB_BELL_OFFSET 64
#define HB_CALL_OFFSET 128

/* The call a rank runs on an instance, which its peers check theirs against: a message carries
 * the sender's call signature, and a rank that waits on a peer's signal reads the peer's
 * record.  The signature covers the call's collective, count, type, reduction and root and its
 * number among the communicator's calls, so ranks that called differently (misuse), or made
 * different calls before (and left messages a call of theirs never read), fail with a message
 * instead of mixing their data.  Words each written and read atomically; the first again
 * after the others tells a record read whole. */
typedef struct {
    _Atomic uint64_t id; /* calls of the instance completed << 32 | signature */
    _Atomic uint64_t count;
    _Atomic uint64_t what; /* collective | type << 8 | reduction << 16 | (root + 1) << 32 */
    _Atomic uint64_t seq;  /* the call's number among the communicator's */
} hb_call_rec_t;

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
    uint32_t seq;   /* the call's number among the communicator's (hb_state_t.runs) */
    uint32_t sig;   /* of the call's collective, count, type, reduction, root and seq */
    int timeout_ms; /* no lane moving for this long fails the call; <= 0 never */
    const volatile int *abort_flag;
    const acc_comm_t *comm; /* whose peers a timeout looks for */
    /* the failure of the call */
    acc_status_t status;
    char msg[512];
} hb_call_t;

struct hb_inst {
    const acc_plan_t *plan;
    /* What this rank knows of the plan: its programs, the edges into the ranks near it
     * (plan->view, or the view worked out here from a whole plan, owned) */
    const acc_plan_view_t *view;
    acc_plan_t *own_view;
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
    /* per operation of this rank's lanes, likewise: it completes a reduction, so an average
     * divides there (the view's, acc_plan_final_reductions); NULL: the call divides its output
     * at the end */
    const uint8_t *final;
    uint32_t *next; /* per lane: its next operation in the call in flight */
    uint64_t calls; /* calls completed */
    /* the threads of remote sending connections, which empty outboxes and then write evfd */
    pthread_t *net_threads;
    int nnet;
    int evfd;
    volatile int stop; /* those threads end (read and written with __atomic) */
};

/* A lane at work: the call, which lane, which operation (for messages). */
typedef struct {
    hb_call_t *call;
    int lane;
    uint32_t k;
    const acc_op_t *op;
    const void **ptrs; /* REDUCE_PEERS sources, npeer_pool + 2 */
} hb_lane_t;

/* The backend's state per communicator: the instances, and whose segments are whose. */
typedef struct {
    acc_comm_t *comm;
    /* instances */
    hb_inst_t **insts;
    size_t ninsts, insts_cap;
    int next_id;
    uint32_t runs; /* calls run so far (their numbers, hb_call_t.seq) */
    /* per rank of this rank's node (of every rank on rank 0; 0 elsewhere): its process id and
     * PID namespace, which name its segments (host_shm.c), and its machine (the kernel's boot
     * id): where both are this rank's, its process id tells whether it lives */
    int *pids;
    unsigned *pidns, *machine;
    /* Rails (host_rails.c): sockets per remote connection, 1 (the bootstrap's addresses) or
     * the interfaces ACC_SOCKET_IFNAME names that every rank has; for more than 1, this rank's
     * listening socket and interface per rail, and the addresses per rail
     * (rail_addr[rank * nrails + rail]) of every rank on rank 0, of this rank's peers elsewhere
     * (hb_rails_fetch). */
    int nrails;
    int rail_listen[HB_MAX_RAILS];
    net_if_t rail_if[HB_MAX_RAILS];
    net_addr_t *rail_addr;
} hb_state_t;

/* ---- instances (host_inst.c) ---- */
/* Collective: every rank calls it for the same plan at the same call. */
acc_status_t hb_inst_create(acc_comm_t *c, int id, const acc_plan_t *plan, size_t es, uint64_t cap,
                            hb_inst_t **out);
void hb_inst_destroy(acc_comm_t *c, hb_inst_t *in);
/* Can plan run on this communicator's nodes?  acc_plan_runs_on's answer for the host backend. */
acc_status_t hb_plan_fits(const acc_comm_t *c, const acc_plan_t *plan);
/* The connection (from, to, lane) of an instance, or UINT32_MAX. */
uint32_t hb_find_conn(const hb_inst_t *in, int from, int to, int lane);

/* ---- segments (host_shm.c) ---- */
/* This process's PID namespace (the inode of /proc/self/ns/pid; 0 when unknown), and its
 * machine (a hash of the kernel's boot id; 0 when unknown). */
unsigned hb_pid_namespace(void);
unsigned hb_machine(void);
void hb_seg_name(const acc_comm_t *c, const hb_state_t *s, const hb_inst_t *in, int r, char *buf,
                 size_t n);
/* Create (this rank's) or open and map rank r's segment of in; a segment /dev/shm cannot hold
 * fails with ACC_ERR_NOMEM saying what /dev/shm holds. */
acc_status_t hb_seg_map(const acc_comm_t *c, const hb_state_t *s, hb_inst_t *in, int r, int create);
/* Remove the name of this rank's segment (its memory stays until the last mapping goes). */
void hb_seg_unlink(const acc_comm_t *c, const hb_state_t *s, const hb_inst_t *in);

/* ---- running the lanes (host_lanes.c) ---- */
/* Run every lane of this rank for one call on the calling thread. */
acc_status_t hb_run_lanes(hb_call_t *call);
/* word += 1, waking its sleepers (only they cost a system call). */
void hb_raise(hb_word_t *w);
/* Sleep until word != seen, at most `ns` (threads outside a call use it too). */
void hb_sleep(hb_word_t *w, uint32_t seen, long ns);
/* Record the call's failure, prefixed with rank, lane and operation; returns -1. */
int hb_fail(hb_lane_t *lc, acc_status_t st, const char *fmt, ...) ACC_PRINTF(3, 4);
/* Has (int32_t)(value - target) reached 0? (counters wrap) */
static inline int hb_reached(uint32_t value, uint32_t target)
{
    return (int32_t)(value - target) >= 0;
}

/* ---- operations (host_data.c) ---- */
/* Can the lane's operation run now without waiting?  1 yes, 0 not yet, -1 the call failed
 * (a remote peer's connection broke). */
int hb_op_ready(hb_lane_t *lc);
/* What the waiting operation waits for: HB_WAIT_BELL, HB_WAIT_EVENT (room in an outbox), or
 * the socket it waits to read (>= 0). */
#define HB_WAIT_BELL  (-1)
#define HB_WAIT_EVENT (-2)
int hb_op_wait_on(hb_lane_t *lc);
/* Run it (it must be ready): 0, or -1 with the call's failure recorded. */
int hb_run_op(hb_lane_t *lc);
/* What the lane's operation waits for, in words; returns the rank it waits on (-1: none). */
int hb_op_wait_text(hb_lane_t *lc, char *buf, size_t n);
/* This rank's record of the call it is about to run (before any of its lanes moves). */
void hb_call_publish(const hb_call_t *call, const rt_call_t *rc);

/* ---- rails (host_rails.c) ---- */
/* Collective, in the backend's creation: the rails the ranks agree on from the fewest (least,
 * on rank `fewest`; -1 when a rank's hb_rails_mine failed) and the most interfaces any rank
 * has; rails ready to connect, every rank's addresses on rank 0. */
acc_status_t hb_rails_setup(acc_comm_t *c, hb_state_t *s, int32_t least, int32_t most, int fewest);
/* Collective, in an instance's creation: the addresses (bootstrap and rails) of the remote
 * peers this rank connects to or waits for, from rank 0, those not known yet. */
acc_status_t hb_rails_fetch(acc_comm_t *c, const hb_inst_t *in);
/* The interfaces ACC_SOCKET_IFNAME names here, when the communicator spans nodes: their count
 * (0 when unset or one node), or -1 with the error set. */
int32_t hb_rails_mine(const acc_comm_t *c, hb_state_t *s, acc_status_t *st);
void hb_rails_free(hb_state_t *s);
/* Connect rail r to rank `to`: from this rank's interface r to `to`'s address on it (with one
 * rail, to `to`'s bootstrap address). */
acc_status_t hb_rails_connect(acc_comm_t *c, int to, int r, double deadline, int *fd);
/* Accept one connection on rail r's listening socket (with one rail, the bootstrap's). */
acc_status_t hb_rails_accept(acc_comm_t *c, int r, double deadline, int *fd);

/* ---- between nodes (host_net.c) ---- */
/* Connect the remote connections of an instance and start a thread per outgoing one. */
acc_status_t hb_net_connect(acc_comm_t *c, hb_inst_t *in);
void hb_net_stop(hb_inst_t *in);
/* The lane filled the outbox slot of message `queued`: on the wire now, or to the thread. */
void hb_net_post(hb_inst_t *in, hb_conn_t *cn);
/* Read what the socket of an incoming remote connection holds into the ring, as far as it has
 * room: 0 (whatever arrived is in), or -1 with why the connection failed in why. */
int hb_net_pull(hb_inst_t *in, hb_conn_t *cn, char *why, size_t n);
/* The rail an incoming remote connection waits to read next: the first whose part of the
 * next message is short (0 until the message's header is in). */
int hb_net_short_rail(const hb_inst_t *in, const hb_conn_t *cn);

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

/* Rank r's doorbell; NULL when r is on another node. */
static inline hb_word_t *hb_bell(const hb_inst_t *in, int r)
{
    return in->seg[r] ? (hb_word_t *)(in->seg[r] + HB_BELL_OFFSET) : NULL;
}

/* Slot n of a remote connection's outbox. */
static inline hb_slot_t *hb_outbox_slot(const hb_inst_t *in, const hb_conn_t *cn, uint32_t n)
{
    return (hb_slot_t *)(cn->outbox + (uint64_t)(n % (uint32_t)in->plan->slots) * cn->slot_bytes);
}

/* Bytes of a slot's length table, rounded so the data starts on a 64-byte boundary. */
static inline uint64_t hb_slot_header(uint32_t maxcnt)
{
    return (sizeof(hb_slot_t) + (uint64_t)maxcnt * sizeof(uint64_t) + 63) & ~(uint64_t)63;
}

#endif
