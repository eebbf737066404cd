/*
 * acc_runtime.h - libacc's runtime: communicators that run acc's schedules across processes
 * (NCCL's API shape, NCCL as the fallback), and below them the executors: the host executor
 * (every rank a thread, real buffers: the reference the kernels are checked against), the
 * sequential reference and its checks, a minimal CUDA driver layer opened at run time, and the
 * single-GPU executor that runs all ranks of a plan's kernel module on one device.
 *
 * Conventions (errors, ownership, threads) as in acc_common.h, and:
 *
 * Running without a GPU.  The CUDA driver (libcuda.so.1) is opened with dlopen() the first time
 *   a GPU function is called, never at load time, so every binary starts on a machine without
 *   a driver or a GPU; the GPU functions then return ACC_ERR_NO_DEVICE with the reason (no
 *   driver, no device, driver too old).
 * Threads.  An executor and the CUDA objects below are used by one thread at a time; the driver
 *   layer itself is safe to use from any thread (it is opened once, under a lock).  The host
 *   executor runs its own threads and returns when they have all finished.
 */
#ifndef ACC_RUNTIME_H
#define ACC_RUNTIME_H

#include "acc_kernels.h"
#include "acc_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the host executor ------------------------------------------------------------------ */

/* Run a plan with plan->nranks ranks as threads over real buffers.  in[r] / out[r] are rank r's
 * input and output buffers sized per acc_plan_buf_elems (ignored where the collective has none,
 * e.g. non-root inputs of broadcast); with inplace, in[] is ignored and the input is read from
 * out[] as described in acc_plan.h.  AVG divides the sum by nranks once, at the end.  The plan
 * must have passed acc_plan_verify. */
acc_status_t acc_host_exec(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op, uint64_t count,
                           void *const *in, void *const *out, int inplace);

/* ---- the sequential reference ---------------------------------------------------------- */
/* What tests and acc-bench compare results with. */
typedef enum {
    ACC_FILL_EXACT = 0, /* values whose reductions are exact in every type and order */
    ACC_FILL_RANDOM,    /* values in [-1, 1) (floats) or full-range (int32): rounding shows */
} acc_fill_t;

/* Element e of rank r's input in the deterministic pattern of (seed, mode, op), already
 * rounded to the type. */
long double acc_host_value(acc_dtype_t dt, acc_redop_t op, acc_fill_t mode, uint32_t seed, int rank,
                           uint64_t e);
/* Prepare the buffers of a call as acc_host_exec takes them: every rank's input filled with the
 * pattern, every byte of output that is not also input poisoned (0xA5), so that a result
 * left over from an earlier run cannot pass for a new one. */
void acc_host_prepare(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op, acc_fill_t mode,
                      uint32_t seed, uint64_t count, void *const *in, void *const *out,
                      int inplace);

/* Count the output elements of a call that differ from the postcondition computed sequentially
 * from the fill pattern by more than the documented bound (host_check.c).  out[r] as given to
 * acc_host_exec (with inplace, the aliasing buffer).  *worst receives the largest error seen
 * in units of the bound (0 when exact; > 1 means wrong); optional. */
uint64_t acc_host_check(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op, acc_fill_t mode,
                        uint32_t seed, uint64_t count, void *const *out, int inplace,
                        double *worst);

/* One rank's part of the reference, for programs where every rank is a process of its own
 * (acc-bench, the communicator tests): fill rank's input of a call of `count` elements (as the
 * collective API counts them) with the pattern acc_host_prepare uses, and count the wrong
 * elements of rank's output (for a reduce, only the root has one).  *worst as in
 * acc_host_check; optional. */
void acc_host_fill_rank(acc_coll_t coll, int nranks, int rank, acc_dtype_t dt, acc_redop_t op,
                        acc_fill_t mode, uint32_t seed, uint64_t count, void *in);
uint64_t acc_host_check_rank(acc_coll_t coll, int nranks, int root, int rank, acc_dtype_t dt,
                             acc_redop_t op, acc_fill_t mode, uint32_t seed, uint64_t count,
                             const void *out, double *worst);

/* n elements of type `from` at src as type `to` at dst, on this CPU, as the host backend's
 * fusion engine packs and unpacks gradients: a copy for equal types (scale 1), fp32 to fp16 or
 * bf16 multiplied by scale first (in fp32), or fp16/bf16 to fp32 (scale 1); rounded to nearest,
 * ties to even, with the CPU's vector conversions where it has them (the same bits as without).
 * ACC_ERR_INVALID for any other pair.  dst and src must not overlap. */
acc_status_t acc_host_convert(void *dst, acc_dtype_t to, const void *src, acc_dtype_t from,
                              size_t n, double scale);

/* ---- the CUDA driver, opened at first use ----------------------------------------------- */

typedef struct acc_cuda_stream *acc_cuda_stream_t; /* NULL: the legacy default stream */
typedef struct acc_cuda_event *acc_cuda_event_t;
typedef struct acc_cuda_graph acc_cuda_graph_t;

typedef struct {
    char name[96];
    int sm;       /* 90 for compute capability 9.0 */
    int sm_count; /* multiprocessors */
    uint64_t mem_bytes;
    int driver_version; /* 13000 for CUDA 13.0 */
} acc_cuda_info_t;

/* Open the driver, initialise it and make device's primary context current on this thread.
 * ACC_ERR_NO_DEVICE when there is no usable GPU, saying why. */
acc_status_t acc_cuda_init(int device);
acc_status_t acc_cuda_info(int device, acc_cuda_info_t *out);
/* Device memory; pointers are device addresses, never dereferenced on the host. */
acc_status_t acc_cuda_malloc(size_t bytes, void **out);
void acc_cuda_free(void *ptr);
acc_status_t acc_cuda_memset(void *dst, int byte, size_t bytes);
acc_status_t acc_cuda_htod(void *dst, const void *src, size_t bytes);
acc_status_t acc_cuda_dtoh(void *dst, const void *src, size_t bytes);
acc_status_t acc_cuda_dtod_async(void *dst, const void *src, size_t bytes, acc_cuda_stream_t s);
acc_status_t acc_cuda_stream_create(acc_cuda_stream_t *out);
void acc_cuda_stream_destroy(acc_cuda_stream_t s);
acc_status_t acc_cuda_stream_sync(acc_cuda_stream_t s);
acc_status_t acc_cuda_event_create(acc_cuda_event_t *out);
void acc_cuda_event_destroy(acc_cuda_event_t e);
acc_status_t acc_cuda_event_record(acc_cuda_event_t e, acc_cuda_stream_t s);
/* Milliseconds from a to b, both recorded and complete. */
acc_status_t acc_cuda_event_ms(acc_cuda_event_t a, acc_cuda_event_t b, float *ms);
/* Record what is launched on s (which must not be the default stream) between begin and end
 * into an executable graph. */
acc_status_t acc_cuda_capture_begin(acc_cuda_stream_t s);
acc_status_t acc_cuda_capture_end(acc_cuda_stream_t s, acc_cuda_graph_t **out);
acc_status_t acc_cuda_graph_launch(acc_cuda_graph_t *g, acc_cuda_stream_t s);
void acc_cuda_graph_destroy(acc_cuda_graph_t *g);

/* ---- the single-GPU executor ------------------------------------------------------------ */

/* All ranks of a plan emulated on one GPU: each rank's buffers live on the device, one launch
 * holds every rank's thread blocks (which must all be resident at once; the executor checks
 * the occupancy and refuses plans that do not fit, rather than risk a hang), peer-memory
 * operations read and write the other ranks' buffers, and messages pass through staging
 * buffers per connection.  At most ACC_GPU_MAX_RANKS ranks. */
#define ACC_GPU_MAX_RANKS ACC_KARG_RANKS

typedef struct acc_gpu_exec acc_gpu_exec_t;

typedef struct {
    int device;          /* CUDA device ordinal */
    int copies;          /* thread blocks per lane; 0: chosen per call from the size */
    double timeout_s;    /* a wait inside a launch gives up (and is reported) after this;
                            0: 20 s; negative: never */
    acc_kcache_t *cache; /* borrowed; NULL: a memory cache of the executor's own */
} acc_gpu_opts_t;

/* Compile (through the cache), load and lay out everything for calls of up to max_count
 * elements.  opts may be NULL (all defaults). */
acc_status_t acc_gpu_exec_create(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op,
                                 uint64_t max_count, const acc_gpu_opts_t *opts,
                                 acc_gpu_exec_t **out);
void acc_gpu_exec_destroy(acc_gpu_exec_t *x);
/* Enqueue one call on stream s (captured into a graph when s is capturing).  in[r] and out[r]
 * are device buffers laid out as acc_host_exec takes host buffers (in place: out[r] only, the
 * larger of the two).  A failure inside the launch shows in acc_gpu_exec_check. */
acc_status_t acc_gpu_exec_launch(acc_gpu_exec_t *x, uint64_t count, void *const *in,
                                 void *const *out, int inplace, acc_cuda_stream_t s);
/* Wait for s and report the first failure of any launch since the last check (which wait
 * gave up, at which rank, lane and operation); a failure also resets the executor's counters
 * so that it can be used again. */
acc_status_t acc_gpu_exec_check(acc_gpu_exec_t *x, acc_cuda_stream_t s);
/* One synchronous call on host buffers, with acc_host_exec's arguments: copy in, launch,
 * check, copy out. */
acc_status_t acc_gpu_exec_host(acc_gpu_exec_t *x, uint64_t count, void *const *in, void *const *out,
                               int inplace);
/* The thread blocks per lane a call of count elements uses, and how many blocks the device
 * holds at once for this kernel. */
int acc_gpu_exec_copies(const acc_gpu_exec_t *x, uint64_t count);
int acc_gpu_exec_capacity(const acc_gpu_exec_t *x);
const acc_kernel_t *acc_gpu_exec_kernel(const acc_gpu_exec_t *x);

/* ---- communicators ---------------------------------------------------------------------- */
/*
 * A communicator is a group of ranks, one per process, that run collectives together, in the
 * shape of NCCL's API: a unique id made by one process and handed to all (the launcher's job),
 * then acc_comm_init_rank() in every rank; or acc_comm_from_nccl() on a communicator the job
 * already has.  Calls take NCCL's arguments in NCCL's order.
 *
 * Backends.  'cuda' runs the stored CUBINs of acc's plans, one GPU per process, peer memory
 * between the GPUs of a node through CUDA IPC, NCCL for the steps between nodes and for every
 * size the tables give NCCL.  'host' runs the same plans on the CPU: one process per rank,
 * POSIX shared memory as peer memory between the ranks of a node, TCP between nodes; it needs no
 * GPU, so everything above the kernels (bootstrap, loading, selection, fallback, faults) runs
 * for real on any machine.  On the host backend "NCCL" means acc's ring plan, reported as the
 * fallback.  ACC_BACKEND chooses; buffers are device memory on 'cuda', host memory on 'host'.
 *
 * Loading.  At creation every rank finds its topology (opts.topo, else ACC_TOPO, else live
 * discovery), its fingerprint, and the database (opts.db, else ACC_DB, else /etc/acc/acc.db,
 * else share/acc/acc.db of the prefix acc runs from), reads the selection table of each collective
 * for that fingerprint and verifies every plan a table names.  The ranks then compare what they
 * loaded: one digest over the tables; any difference, and any problem on any rank (no database,
 * another topology, a newer schema, a damaged file, a plan failing verification, a topology
 * whose GPU count is not the rank count), sends every call of the communicator to the fallback,
 * with exactly one warning line (rank 0's) saying what and why.  Per call, the size (NCCL's
 * nBytes: the whole buffer for allgather and reduce-scatter) picks the table's range.
 *
 * Failures.  acc never takes a job down: what it cannot serve goes to the fallback, and an
 * invalid ACC_* setting turns acc's schedules off with one error naming it.  Bad arguments (a
 * null buffer, a count whose bytes overflow, an unknown type or reduction, a root out of range)
 * are refused with ACC_ERR_INVALID before any memory is touched.  A peer that does not answer
 * within ACC_TIMEOUT_MS makes the call fail with ACC_ERR_TIMEOUT naming the step it waited for
 * and the ranks that have exited; calls that differ between ranks fail with ACC_ERR_INVALID
 * naming both; either way the communicator is then broken (every later call and
 * acc_comm_get_async_error give that error) and should be destroyed or aborted.  Set-up
 * (acc_comm_init_rank, acc_comm_dup) completes on every rank or fails on every rank.  README's
 * "What acc guarantees on faults" lists every case.
 *
 * Life.  A communicator that was destroyed or aborted refuses calls (ACC_ERR_INVALID or
 * ACC_ERR_ABORTED) for the rest of the process: its handle stays valid memory, a few kilobytes.
 * In a process forked after it was made, calls on it fail and acc_comm_destroy/abort release
 * nothing: it is the parent's.
 *
 * Threads.  One thread at a time per communicator, as with NCCL (calls made on several threads
 * at once run one after another); acc_comm_abort and acc_comm_get_async_error may be called
 * from another thread while a call runs.  Host-backend calls are synchronous: they return when
 * this rank's part is complete.
 */
typedef struct acc_comm acc_comm_t;
/* A CUDA stream (CUstream); NULL is the default stream.  Ignored by the host backend. */
typedef acc_cuda_stream_t acc_stream_t;

#define ACC_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[ACC_UNIQUE_ID_BYTES];
} acc_unique_id_t;

/* A new id whose rendezvous this process serves (a thread, until every rank of the
 * communicator has arrived, or ACC_TIMEOUT_MS after the first did): call it in one process and
 * hand the bytes to every rank.  It serves one communicator; used again, every rank fails at
 * once. */
acc_status_t acc_get_unique_id(acc_unique_id_t *id);
/* An id naming a rendezvous at "HOST:PORT" that rank 0's process serves itself (the
 * MASTER_ADDR:MASTER_PORT convention of launchers): every rank builds it from the same text.
 * Rank 0 holds the port only during the rendezvous, so it serves one communicator after
 * another. */
acc_status_t acc_unique_id_from_string(const char *host_port, acc_unique_id_t *id);
/* An id for ranks on this machine whose rendezvous rank 0 serves on a free loopback port: for
 * programs that fork their ranks themselves, which must not fork while a rendezvous thread of
 * acc_get_unique_id runs (a thread may hold a lock of the allocator at the fork, and some
 * allocators - the sanitizers' - do not recover from that). */
acc_status_t acc_unique_id_local(acc_unique_id_t *id);

/* acc_backend_t, acc_backend_name and acc_backend_parse: acc_plan.h, beside what each backend
 * can run (acc_plan_runs_on). */

typedef struct {
    acc_backend_t backend; /* AUTO: ACC_BACKEND */
    const char *topo;      /* NULL: ACC_TOPO */
    const char *db;        /* NULL: ACC_DB and the search path */
    int timeout_ms;        /* 0: ACC_TIMEOUT_MS; negative: wait for ever */
    int device;            /* cuda: the GPU; -1: the rank modulo the GPUs visible */
    int disable;           /* 1: the fallback for every call (as ACC_DISABLE=1) */
    /* 1: the caller runs the fallback itself (a drop-in NCCL hands those calls to the real
     * one): calls acc would give its fallback return ACC_NO_DATA without touching memory. */
    int external_fallback;
} acc_comm_opts_t;

void acc_comm_opts_init(acc_comm_opts_t *opts);

/* Join the communicator of id as rank `rank` of nranks; every rank must call it.  opts may be
 * NULL (defaults).  Failures here are failures of the job's own set-up (an id nobody serves, a
 * rank out of range, ranks that disagree on nranks), never of acc's data. */
acc_status_t acc_comm_init_rank(acc_comm_t **out, int nranks, const acc_unique_id_t *id, int rank,
                                const acc_comm_opts_t *opts);
/* Build a communicator over an existing NCCL communicator (ncclComm_t, borrowed: it must
 * outlive this one); bootstrap and the fallback go through it. */
acc_status_t acc_comm_from_nccl(acc_comm_t **out, void *nccl_comm, const acc_comm_opts_t *opts);
/* A new communicator of the same ranks, made with the options comm was made with; every rank
 * must call it, in the same order relative to comm's collectives.  The two are independent:
 * each may be used by its own thread at the same time.  A duplicate of a communicator made
 * from NCCL does not hold the NCCL communicator (on the cuda backend it finds its fallback as
 * acc_comm_init_rank does). */
acc_status_t acc_comm_dup(acc_comm_t *comm, acc_comm_t **out);
/* Wait for this rank's calls, free everything.  NULL does nothing. */
acc_status_t acc_comm_destroy(acc_comm_t *comm);
/* End in-flight calls (they return ACC_ERR_ABORTED) and free everything without waiting for
 * peers.  NULL does nothing. */
acc_status_t acc_comm_abort(acc_comm_t *comm);
/* The error that broke the communicator, or ACC_OK; its message in acc_error_message(). */
acc_status_t acc_comm_get_async_error(acc_comm_t *comm, acc_status_t *err);
int acc_comm_rank(const acc_comm_t *comm);
int acc_comm_size(const acc_comm_t *comm);
acc_backend_t acc_comm_backend(const acc_comm_t *comm);
/* Why the communicator runs everything through the fallback ("" when it does not). */
const char *acc_comm_fallback_reason(const acc_comm_t *comm);

/* Collectives, NCCL's arguments in NCCL's order.  Counts are elements: allgather's count is each
 * rank's part (recvbuf holds nranks of them), reduce_scatter's the part each rank receives
 * (sendbuf holds nranks of them).  sendbuf == recvbuf (allgather: sendbuf at rank's part of
 * recvbuf; reduce_scatter: recvbuf at rank's part of sendbuf) is in place.  A count of 0 does
 * nothing and succeeds. */
acc_status_t acc_allreduce(const void *sendbuf, void *recvbuf, size_t count, acc_dtype_t dt,
                           acc_redop_t op, acc_comm_t *comm, acc_stream_t stream);
acc_status_t acc_allgather(const void *sendbuf, void *recvbuf, size_t sendcount, acc_dtype_t dt,
                           acc_comm_t *comm, acc_stream_t stream);
acc_status_t acc_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                acc_dtype_t dt, acc_redop_t op, acc_comm_t *comm,
                                acc_stream_t stream);
acc_status_t acc_broadcast(const void *sendbuf, void *recvbuf, size_t count, acc_dtype_t dt,
                           int root, acc_comm_t *comm, acc_stream_t stream);
acc_status_t acc_reduce(const void *sendbuf, void *recvbuf, size_t count, acc_dtype_t dt,
                        acc_redop_t op, int root, acc_comm_t *comm, acc_stream_t stream);
/* Calls between acc_group_start() and acc_group_end() (per thread, nestable) are queued and
 * run at the outermost end, in order; their arguments are checked when they are made. */
acc_status_t acc_group_start(void);
acc_status_t acc_group_end(void);

/* Would acc run its own plan for this call (1), or the fallback (0)?  The arguments as the
 * collective takes them; the answer is the same on every rank.  It can still turn out 0 at the
 * call, when the backend cannot set a plan up (then every rank falls back together). */
acc_status_t acc_comm_serves(const acc_comm_t *comm, acc_coll_t coll, size_t count, acc_dtype_t dt,
                             int root, int *serves);

/* Run one verified plan of this communicator's rank count through its backend, whatever the
 * tables say: for benchmarks, and for measuring the backend's own tables (acc-bench --tables).
 * The collective is the plan's (its root for broadcast and reduce), the arguments those of the
 * collective's call (count as acc_allreduce's, acc_allgather's, ...).  Collective: every rank
 * with the same plan.  ACC_ERR_UNSUPPORTED, on every rank alike, when the backend cannot run
 * the plan on these ranks (peer memory between nodes on the host backend); other failures
 * break the communicator as a collective's do.  Not counted in acc_comm_stats.  The plan is
 * borrowed until the communicator is destroyed: the backend keeps what it set up for it. */
acc_status_t acc_comm_run_plan(acc_comm_t *comm, const acc_plan_t *plan, const void *sendbuf,
                               void *recvbuf, size_t count, acc_dtype_t dt, acc_redop_t op,
                               acc_stream_t stream);

/* What ran, per collective and size range of the tables (and one row per fallback reason):
 * calls and bytes since creation. */
typedef struct {
    acc_coll_t coll;
    uint64_t min_bytes, max_bytes; /* the range (inclusive) */
    int fallback;                  /* 1: the fallback ran */
    char ran[96];                  /* "ring lanes=2 chunks=4 proto=Simple" or "fallback: ring" */
    uint64_t calls, bytes;
} acc_comm_stat_t;

/* Rows with at least one call, by collective then range; *out taken (acc_mem_free). */
acc_status_t acc_comm_stats(const acc_comm_t *comm, acc_comm_stat_t **out, size_t *n);

/* Remove from /dev/shm the shared memory that host-backend communicators of dead processes
 * left behind (a job killed while its ranks set a plan up): segments whose creating process,
 * in this PID namespace, no longer exists.  A process's first host-backend communicator does
 * it too; `acc-info --cleanup` runs it.  *removed (optional): how many. */
acc_status_t acc_comm_cleanup(int *removed);

#ifdef __cplusplus
}
#endif
#endif /* ACC_RUNTIME_H */
