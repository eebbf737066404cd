/*
 * acc_plan.h - the plan IR: one collective algorithm instantiated for one rank count, with every
 * data movement explicit.  The semantics are written down once, in schedules/FORMAT.md; this
 * header is their C form.
 *
 * Buffers and chunks.  Each rank has three buffers: input (ACC_BUF_IN), output (ACC_BUF_OUT) and
 * scratch (ACC_BUF_SCRATCH), of in_chunks, out_chunks and scratch_chunks chunks.  A buffer of K
 * chunks holding n elements is cut so that chunk i covers elements [floor(i*n/K),
 * floor((i+1)*n/K)): sizes that do not divide give chunks that differ by at most one element,
 * and may be empty.  Scratch chunks are as large as output chunks.  What n is per buffer follows
 * from the collective and the element count `count` of a call (NCCL's convention):
 *   allreduce       in: count            out: count
 *   allgather       in: count            out: count x nranks
 *   reduce_scatter  in: count x nranks   out: count
 *   broadcast       in: count (root)     out: count
 *   reduce          in: count            out: count (root)
 *   alltoall        in: count x nranks   out: count x nranks
 * Postconditions, with C = chunks per rank (in_chunks for allgather, out_chunks for
 * reduce_scatter, ...), for every rank r and chunk i:
 *   allreduce       out_r[i] = (+)_s in_s[i]
 *   allgather       out_r[s*C + i] = in_s[i]
 *   reduce_scatter  out_r[i] = (+)_s in_s[r*C + i]
 *   broadcast       out_r[i] = in_root[i]
 *   reduce          out_root[i] = (+)_s in_s[i]
 *   alltoall        out_r[s*C + i] = in_s[r*C + i]
 * each contribution exactly once.  In place (when the plan supports it), the input aliases the
 * output: allreduce/broadcast/reduce in == out; allgather in_r == out_r[r*C .. r*C+C);
 * reduce_scatter out_r == in_r[r*C .. r*C+C); alltoall in == out.
 *
 * Execution.  Each rank runs `nlanes` lanes concurrently; a lane runs its operations in order.
 * An operation may name one explicit dependency on an operation of another lane of the same rank
 * (it starts only after that one has completed).  Message passing is per (sender, receiver,
 * lane) connection: sends and receives match in FIFO order, a send completes once its data is in
 * the connection, and a connection holds at most `slots` messages in flight; the fused
 * receive-and-send forms start only when a message is waiting and the outgoing connection has a
 * free slot.  Peer-memory
 * operations (put, get, reduce-from-peers) touch other ranks' buffers directly; they are ordered
 * only by signal/wait, and another rank may touch a rank's memory only after a wait that
 * observes a signal from it, each such access ordered by signal/wait before the end of one of
 * that rank's lanes: SIGNAL(peer, slot) adds 1 to the counter (me -> peer, slot) after all
 * earlier operations of the lane have completed, and WAIT(peer, slot, value) blocks until the
 * counter (peer -> me, slot) has reached `value` (counters start at 0 and only grow).
 * Out of place, `in` is never written, and a broadcast's non-root inputs and a reduce's
 * non-root outputs are not touched.
 *
 * Errors, ownership and threads as in acc_common.h.  A plan is built by one thread and read-only
 * afterwards.
 */
#ifndef ACC_PLAN_H
#define ACC_PLAN_H

#include "acc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    ACC_COLL_ALLREDUCE = 0,
    ACC_COLL_ALLGATHER,
    ACC_COLL_REDUCE_SCATTER,
    ACC_COLL_BROADCAST,
    ACC_COLL_REDUCE,
    ACC_COLL_ALLTOALL,
    ACC_COLL_COUNT
} acc_coll_t;

typedef enum { ACC_PROTO_SIMPLE = 0, ACC_PROTO_LL, ACC_PROTO_LL128, ACC_PROTO_COUNT } acc_proto_t;

typedef enum { ACC_BUF_IN = 0, ACC_BUF_OUT = 1, ACC_BUF_SCRATCH = 2, ACC_BUF_COUNT } acc_bufid_t;

/* Chunks [off, off + cnt) of one of a rank's buffers. */
typedef struct {
    uint8_t buf; /* acc_bufid_t */
    uint32_t off;
    uint32_t cnt;
} acc_ref_t;

#define ACC_OP_MAP(X)                                                                              \
    X(SEND, "send")                  /* send src to peer */                                        \
    X(RECV, "recv")                  /* dst = message from peer */                                 \
    X(RECV_REDUCE_COPY, "rrc")       /* dst = src (+) message from peer */                         \
    X(RECV_COPY_SEND, "rcs")         /* dst = message from peer; send dst to peer2 */              \
    X(RECV_REDUCE_SEND, "rrs")       /* send (src (+) message from peer) to peer2 */               \
    X(RECV_REDUCE_COPY_SEND, "rrcs") /* dst = src (+) message from peer; send dst to peer2 */      \
    X(COPY, "copy")                  /* dst = src, both local */                                   \
    X(REDUCE, "reduce")              /* dst = dst (+) src, both local */                           \
    X(PUT, "put")                    /* peer's dst = my src */                                     \
    X(GET, "get")                    /* my dst = peer's src */                                     \
    X(REDUCE_PEERS, "reduce_peers")  /* dst = (+) of src at each rank of the peer list */          \
    X(SIGNAL, "signal")              /* counter (me -> peer, slot) += 1 */                         \
    X(WAIT, "wait")                  /* until counter (peer -> me, slot) >= value */               \
    X(NOP, "nop")                    /* only carries a dependency */

typedef enum {
#define ACC_OP_ENUM(name, str) ACC_OP_##name,
    ACC_OP_MAP(ACC_OP_ENUM)
#undef ACC_OP_ENUM
        ACC_OP_COUNT
} acc_opcode_t;

/* One operation.  Unused fields are -1 (peers, dep) or zero (refs). */
typedef struct {
    uint8_t code;       /* acc_opcode_t */
    uint16_t slot;      /* SIGNAL / WAIT counter slot */
    int32_t peer;       /* SEND target; RECV* source; PUT/GET/SIGNAL/WAIT peer */
    int32_t peer2;      /* forwarding target of the *_SEND fused forms */
    acc_ref_t src;      /* SEND, RRC/RRS/RRCS local operand, COPY, REDUCE, PUT, GET (at peer),
                           REDUCE_PEERS (the same chunks at every listed rank) */
    acc_ref_t dst;      /* RECV*, COPY, REDUCE, PUT (at peer), GET, REDUCE_PEERS (local) */
    uint32_t value;     /* WAIT: counter value to reach */
    uint32_t peers_off; /* REDUCE_PEERS: its ranks are plan->peer_pool[peers_off .. +npeers) */
    uint32_t npeers;
    int32_t dep_lane; /* explicit dependency: operation dep_op of lane dep_lane of this rank */
    int32_t dep_op;
} acc_op_t;

typedef struct {
    acc_op_t *ops;
    uint32_t nops;
    uint32_t cap;
} acc_lane_prog_t;

#define ACC_PLAN_NAME_MAX   32
#define ACC_PLAN_PARAMS_MAX 256

typedef struct acc_plan {
    acc_coll_t coll;
    int nranks;
    int root;                         /* broadcast / reduce; -1 otherwise */
    char algo[ACC_PLAN_NAME_MAX];     /* generator name, "ring"; "msccl" for imports */
    char params[ACC_PLAN_PARAMS_MAX]; /* "lanes=2 chunks=4 order=0,1,3,2": how it was made */
    uint32_t in_chunks, out_chunks, scratch_chunks;
    int nlanes;
    int slots; /* messages in flight per connection (default 8) */
    acc_proto_t proto;
    int inplace;            /* 1 when the plan is also correct in place */
    acc_lane_prog_t *progs; /* nranks x nlanes, index rank * nlanes + lane */
    uint32_t *peer_pool;
    uint32_t npeer_pool, peer_pool_cap;
    /* NULL: a whole plan, every rank's programs.  Otherwise a rank's view of the plan
     * (acc_plan_view_t): the programs of view->rank alone, every other rank's lanes empty. */
    struct acc_plan_view *view;
    /* 0: every rank's programs (or a view's one).  Otherwise a quotient (acc_cplan_quotient):
     * only ranks 0 .. period - 1 have programs, and the plan is the same when every rank r is
     * moved to r + period (mod nranks) - which the simulator plays on one period of the ranks
     * (acc_sim_plan).  Nothing else reads a quotient: it cannot be proven, written or run. */
    int period;
    /* With period: the plan is the same when every rank r is moved to r ^ s for every multiple
     * s of period (a power of two), not r + s (halving and doubling, acc_cplan_quotient). */
    int period_xor;
} acc_plan_t;

const char *acc_coll_name(acc_coll_t c); /* "allreduce", "allgather", "reduce_scatter", ... */
/* Accepts the names above and "reducescatter", "reduce-scatter", "all_reduce" ... */
acc_status_t acc_coll_parse(const char *s, acc_coll_t *out);
const char *acc_proto_name(acc_proto_t p); /* "Simple", "LL", "LL128" */
acc_status_t acc_proto_parse(const char *s, acc_proto_t *out);
const char *acc_op_name(acc_opcode_t code);
acc_status_t acc_op_parse(const char *s, acc_opcode_t *out);
const char *acc_buf_name(acc_bufid_t b); /* "in", "out", "scratch" */
/* Does the collective reduce (allreduce, reduce_scatter, reduce)? */
int acc_coll_reduces(acc_coll_t c);
/* The rank an operation sends a message to (send, and the fused forms' forwarding target), and
 * the one it receives a message from (recv and the fused forms); -1 when it sends or receives
 * none.  Peer-memory operations pass no messages. */
int acc_op_send_peer(const acc_op_t *op);
int acc_op_recv_peer(const acc_op_t *op);

/* ---- building ------------------------------------------------------------------------- */
acc_status_t acc_plan_create(acc_coll_t coll, int nranks, int nlanes, uint32_t in_chunks,
                             uint32_t out_chunks, uint32_t scratch_chunks, acc_plan_t **out);
void acc_plan_destroy(acc_plan_t *plan);
acc_status_t acc_plan_clone(const acc_plan_t *plan, acc_plan_t **out);
acc_lane_prog_t *acc_plan_prog(const acc_plan_t *plan, int rank, int lane);
/* An acc_op_t with every field "unused". */
acc_op_t acc_op_init(acc_opcode_t code);
/* Append an operation; *index (optional) receives its position in the lane. */
acc_status_t acc_plan_add(acc_plan_t *plan, int rank, int lane, const acc_op_t *op,
                          uint32_t *index);
/* Store a peer list for REDUCE_PEERS; *off receives the pool offset. */
acc_status_t acc_plan_add_peers(acc_plan_t *plan, const uint32_t *ranks, uint32_t n, uint32_t *off);
static inline acc_ref_t acc_ref(acc_bufid_t buf, uint32_t off, uint32_t cnt)
{
    acc_ref_t r;
    r.buf = (uint8_t)buf;
    r.off = off;
    r.cnt = cnt;
    return r;
}
/* Shorthands for the common operations. */
acc_status_t acc_plan_send(acc_plan_t *p, int rank, int lane, int peer, acc_ref_t src);
acc_status_t acc_plan_recv(acc_plan_t *p, int rank, int lane, int peer, acc_ref_t dst);
acc_status_t acc_plan_copy(acc_plan_t *p, int rank, int lane, acc_ref_t src, acc_ref_t dst);
acc_status_t acc_plan_set_params(acc_plan_t *p, const char *fmt, ...) ACC_PRINTF(2, 3);

/* Total operations, and a structural comparison (same header and operations). */
size_t acc_plan_op_count(const acc_plan_t *plan);
int acc_plan_equal(const acc_plan_t *a, const acc_plan_t *b);

/* Chunk ranges: elements [first, first + n) of chunk i of a buffer of k chunks over `elems`. */
void acc_chunk_range(uint64_t elems, uint32_t k, uint32_t i, uint64_t *first, uint64_t *n);
/* Elements in each buffer for a call of `count` elements (the table above). */
uint64_t acc_plan_buf_elems(const acc_plan_t *plan, acc_bufid_t buf, uint64_t count);

/* ---- text form (schedules/FORMAT.md): YAML, load(dump(p)) equals p -------------------- */
acc_status_t acc_plan_dump_yaml(const acc_plan_t *plan, acc_buf_t *out);
acc_status_t acc_plan_load_yaml(const char *text, size_t len, const char *name, acc_plan_t **out);
acc_status_t acc_plan_load_file(const char *path, acc_plan_t **out);
/* A plan's identity: the SHA-256 of its YAML text (acc_plan_dump_yaml) in lowercase hex.
 * Selection tables name plans by it and the database stores them under it. */
acc_status_t acc_plan_hash(const acc_plan_t *plan, char hex[ACC_SHA256_HEX_LEN + 1]);
/* The same for a caller that keeps the text too (the database stores it): yaml is emptied and
 * receives the text that was hashed. */
acc_status_t acc_plan_dump_yaml_hash(const acc_plan_t *plan, acc_buf_t *yaml,
                                     char hex[ACC_SHA256_HEX_LEN + 1]);

/* ---- verification ---------------------------------------------------------------------- */
/* Symbolic execution proving the postcondition (every output chunk holds exactly the right
 * contributions, each once), freedom from deadlock, bounds, no unordered writes to one chunk,
 * and peer-memory reads only after the matching signal; in place too when plan->inplace.
 * On failure the message names rank, lane, operation index and name, chunk, and what was
 * expected. */
acc_status_t acc_plan_verify(const acc_plan_t *plan);
/* The same for one buffer mode only (inplace 0 or 1). */
acc_status_t acc_plan_verify_mode(const acc_plan_t *plan, int inplace);
/* Which operations of a plan complete a reduction: per operation, in program order (rank 0's
 * lanes in order, then rank 1's, ...), 1 when every value it reduces into its destination (or,
 * for recv_reduce_send, into its message) holds every rank's contribution, else 0.  An
 * averaging executor divides there, once, instead of in a pass over the output after the call.
 * The plan is verified (out of place) on the way; ACC_ERR_UNSUPPORTED when an operation
 * completes some of its chunks and not others.  *flags taken (acc_mem_free), *n of them. */
acc_status_t acc_plan_final_reductions(const acc_plan_t *plan, uint8_t **flags, size_t *n);

/* ---- a rank's view ------------------------------------------------------------------- */
/* What one rank needs of a plan to run its part, without any other rank's program: beside its
 * own programs, the edges into every rank near it (itself and every rank it sends to, receives
 * from, signals, waits on or touches the memory of), from which the host backend lays out
 * those ranks' memory exactly as the whole plan would, and the flags of its own operations
 * that complete a reduction.  A view is made from the whole plan (acc_plan_view_of) or, without
 * it, from the binary class form (acc_cplan_rank_view); both give the same view. */
typedef struct {
    uint8_t sig; /* 0: messages on lane `chan`; 1: signals on counter slot `chan` */
    int32_t from, to;
    uint32_t chan;   /* lane (messages) or slot (signals) */
    uint32_t maxcnt; /* messages: chunks of the largest one */
    uint32_t count;  /* messages or signals per call */
} acc_plan_edge_t;

typedef struct acc_plan_view {
    int rank;
    int staged; /* some rank's operation touches a peer's memory (put, get, reduce_peers) */
    /* The ranks near `rank`, ascending, itself included. */
    int32_t *near;
    uint32_t nnear;
    /* Every edge into a near rank, sorted by (to, sig, from, chan), each (from, to, sig,
     * chan) once. */
    acc_plan_edge_t *edges;
    uint32_t nedges;
    /* Per operation of rank's lanes in order: 1 where it completes a reduction
     * (acc_plan_final_reductions); NULL when that is not known (an average then divides at
     * the end of the call). */
    uint8_t *final;
} acc_plan_view_t;

/* The view of rank `rank` of a whole, verified plan: the plan's header and rank's programs
 * copied, the edges and flags worked out from every rank's programs. */
acc_status_t acc_plan_view_of(const acc_plan_t *plan, int rank, acc_plan_t **out);
void acc_plan_view_destroy(acc_plan_view_t *view);
/* ---- MSCCL algorithm XML --------------------------------------------------------------- */
acc_status_t acc_plan_import_msccl(const char *text, size_t len, const char *name,
                                   acc_plan_t **out);
acc_status_t acc_plan_import_msccl_file(const char *path, acc_plan_t **out);
/* Message-passing plans only; peer-memory operations give ACC_ERR_UNSUPPORTED. */
acc_status_t acc_plan_export_msccl(const acc_plan_t *plan, acc_buf_t *out);

/* ---- data types and reductions -------------------------------------------------------- */
/* Element types: enum suffix, name, bytes.  The names are what YAML, the database, kernel names
 * and command lines use; acc_dtype_parse also takes the spellings of NCCL, numpy and PyTorch. */
#define ACC_DTYPE_MAP(X)                                                                           \
    X(F32, "float", 4)                                                                             \
    X(F16, "half", 2)                                                                              \
    X(BF16, "bfloat16", 2)                                                                         \
    X(F64, "double", 8)                                                                            \
    X(I32, "int32", 4)

typedef enum {
#define ACC_DTYPE_ENUM(id, name, bytes) ACC_DT_##id,
    ACC_DTYPE_MAP(ACC_DTYPE_ENUM)
#undef ACC_DTYPE_ENUM
        ACC_DT_COUNT
} acc_dtype_t;

/* Reductions: enum suffix, name.  AVG is a sum divided by the rank count once, at the end. */
#define ACC_REDOP_MAP(X)                                                                           \
    X(SUM, "sum")                                                                                  \
    X(PROD, "prod")                                                                                \
    X(MIN, "min")                                                                                  \
    X(MAX, "max")                                                                                  \
    X(AVG, "avg")

typedef enum {
#define ACC_REDOP_ENUM(id, name) ACC_RED_##id,
    ACC_REDOP_MAP(ACC_REDOP_ENUM)
#undef ACC_REDOP_ENUM
        ACC_RED_COUNT
} acc_redop_t;

const char *acc_dtype_name(acc_dtype_t t); /* "float", "half", "bfloat16", "double", "int32" */
acc_status_t acc_dtype_parse(const char *s, acc_dtype_t *out);
size_t acc_dtype_size(acc_dtype_t t);
const char *acc_redop_name(acc_redop_t op); /* "sum", "prod", "min", "max", "avg" */
acc_status_t acc_redop_parse(const char *s, acc_redop_t *out);

/* ---- which backend can run a plan (ir/plan_backends.c) ---------------------------------------
 *
 * The runtime runs plans on one of two backends: host (CPU processes, shared memory within a
 * node, TCP between nodes) and cuda (one process per GPU, CUDA IPC within a node; NCCL serves
 * whatever it cannot run).  AUTO lets a communicator choose (ACC_BACKEND).  What each can run is
 * decided here alone, for the runtime's backends, the selection tables (which store, per choice,
 * the set of backends that can run it) and the reports. */
typedef enum { ACC_BACKEND_AUTO = 0, ACC_BACKEND_HOST, ACC_BACKEND_CUDA } acc_backend_t;
const char *acc_backend_name(acc_backend_t b); /* "auto", "host", "cuda" */
acc_status_t acc_backend_parse(const char *s, acc_backend_t *out);

/* A set of backends: bit (1 << backend) for each of host and cuda. */
#define ACC_BACKENDS_HOST (1u << ACC_BACKEND_HOST)
#define ACC_BACKENDS_CUDA (1u << ACC_BACKEND_CUDA)
#define ACC_BACKENDS_ALL  (ACC_BACKENDS_HOST | ACC_BACKENDS_CUDA)

/* Can `backend` (host or cuda) run verified plan p when rank r is on node node_of[r] (node_of
 * NULL: every rank on one node)?  ACC_OK, or ACC_ERR_UNSUPPORTED whose message starts with the
 * rule and goes on with the first step that breaks it:
 *   host: no operation reads or writes another node's memory (put, get, reduce_peers: the host
 *         backend reaches other nodes through messages only);
 *   cuda: at most ACC_KARG_RANKS ranks (each rank's buffers travel in the launch arguments), and
 *         no step reaches another node ("the cuda backend runs multi-node plans through NCCL"):
 *         its kernels move data through peer memory within a node only. */
acc_status_t acc_plan_runs_on(const acc_plan_t *p, acc_backend_t backend, const int *node_of);
/* The same on a machine whose ranks are numbered node-major, ranks_per_node on each node
 * (acc_topo.h's numbering; <= 0 or >= p->nranks: one node). */
acc_status_t acc_plan_runs_on_nodes(const acc_plan_t *p, acc_backend_t backend, int ranks_per_node);
/* The set of backends that can run p there (0 also when out of memory). */
unsigned acc_plan_backends(const acc_plan_t *p, int ranks_per_node);
/* The rule of a refusal's message, for reports: its text up to the first ": " (the whole
 * message when it has none), at most cap - 1 bytes. */
void acc_plan_backend_rule(const char *message, char *out, size_t cap);
/* A set as text: the names of its backends, space-separated, in enum order ("host cuda",
 * "host", "cuda", "" for none); and back, ACC_ERR_INVALID naming an unknown word. */
void acc_backends_format(unsigned set, char *out, size_t cap);
acc_status_t acc_backends_parse(const char *s, unsigned *out);

#ifdef __cplusplus
}
#endif
#endif /* ACC_PLAN_H */
