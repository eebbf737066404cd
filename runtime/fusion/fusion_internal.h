/*
 * fusion_internal.h - the fusion engine's parts.  Internal to runtime/fusion/.
 *
 *   fusion.c          the API: create, register, ready, reduce, wait, destroy, information;
 *   fusion_plan.c     where buckets end under each policy, and the pack buffer's layout;
 *   fusion_stream.c   the streams: a thread and a communicator each, packing and unpacking;
 *   fusion_config.c   the configuration a job starts with: options, settings, stored optimum;
 *   fusion_grads.c    every rank registered the same gradients (checked before the first
 *                     iteration);
 *   fusion_online.c   online tuning: rank 0 measures, the tuner's search decides, all follow;
 *   fusion_negotiate.c  rounds of agreement (HOROVOD's coordinator, NEGOTIATE's allreduce) on
 *                     what is ready everywhere, and the buckets of exactly that;
 *   fusion_record.c   recording the job's own profile: rank 0 notes the timeline, a thread of
 *                     its own stores the medians as a model profile;
 *   fusion_mem.c      the engine's memory on the host backend: host memory, the CPU's copies;
 *   fusion_device.c   the same on the cuda backend: device memory, CUDA streams, a kernel that
 *                     converts.
 *
 * Locking.  The caller's thread (the "main" thread) and the stream threads share f->lock.
 * The main thread alone changes the configuration, and only between iterations, when every
 * stream has finished (so nothing else reads it then); during an iteration it publishes
 * progress (gradients packed, buckets queued) under the lock and the streams publish what
 * they finished.  Each waits on a condition of its own, so that a change wakes only those it
 * concerns (a gradient marked ready wakes no idle stream): a stream on its cv for work, the
 * streams that follow rank 0 on f->packed for their gradients, the main thread on f->done for
 * the end of the iteration.  Data are packed and reduced outside
 * the lock: a bucket's bytes belong to its stream from the moment it is queued (and, on
 * ranks that follow rank 0, from the moment its gradients are packed) until it is finished.
 *
 * Device memory.  On the cuda backend the pack buffer and the staging are device memory, and
 * what moves their bytes is queued on CUDA streams, called queues here (q) so as not to be
 * taken for the engine's streams: the main thread packs on its own queue (f->q) and waits for
 * it before it publishes the gradients as packed, so a bucket is complete before any stream
 * can take it; a stream queues its buckets' allreduces and unpacks on its queue, in order, and
 * waits for it at the end of the iteration, before it says it reached the end.  So when
 * acc_fusion_wait returns, every gradient is final in memory, on either backend.  Control
 * messages (rank 0's decisions, bucket ranges) travel in host memory on host-backend
 * duplicates of the communicator (f->ctl, and each stream's x->ctl).
 */
#ifndef ACC_FUSION_INTERNAL_H
#define ACC_FUSION_INTERNAL_H

#include "acc_fusion.h"
#include "rt_internal.h"

#include <pthread.h>

/* Pack offsets are aligned to the largest element so that every run starts aligned. */
#define FU_PACK_ALIGN 8

/* A registered gradient. */
typedef struct {
    void *user;       /* the caller's buffer */
    uint64_t count;   /* elements */
    acc_dtype_t dt;   /* its type */
    acc_dtype_t wire; /* the type it travels in under the configuration */
    size_t offset;    /* bytes into the pack buffer */
    uint64_t gen;     /* the iteration it was last packed (negotiated: marked) for */
    double ready_s;   /* when (acc_now_s) it was marked, for the cycle */
    int zero;         /* negotiated: counted as zero (unmarked at the end of the iteration) */
} fu_grad_t;

/* A bucket: gradients [first, last) (negotiated: f->order[first .. last)), or a buffer of the
 * caller's (buf); last < 0 marks the end of the iteration on its stream. */
typedef struct {
    int32_t first, last;
    void *buf;
    uint64_t count;
    acc_dtype_t dt;
} fu_bucket_t;

/* Where the engine's buffers live and how their bytes move: host memory and the CPU
 * (fusion_mem.c, the host backend) or device memory of the communicator's GPU (fusion_device.c,
 * the cuda backend).  Work is queued on q in order and complete when sync(q) returns; on the
 * host q is NULL and every call has done its work when it returns.  alloc, free, zero,
 * convert and sync may be called from any thread of the engine once it has entered. */
typedef struct {
    /* The engine's device state (f->dev) and the main thread's queue (f->q); close frees what
     * open made, also when open failed halfway, and nothing when open never ran. */
    acc_status_t (*open)(acc_fusion_t *f);
    void (*close)(acc_fusion_t *f);
    /* Be ready to convert fp32 <-> fp16/bf16, before the first configuration that compresses
     * (on the main thread, between iterations). */
    acc_status_t (*prepare)(acc_fusion_t *f);
    /* A thread of the engine's begins (the device's context current on it). */
    acc_status_t (*enter)(const acc_fusion_t *f);
    acc_status_t (*queue_create)(acc_cuda_stream_t *q);
    void (*queue_destroy)(acc_cuda_stream_t q);
    acc_status_t (*alloc)(size_t bytes, void **out); /* zeroed */
    void (*free)(void *p);
    acc_status_t (*zero)(void *dst, size_t bytes, acc_cuda_stream_t q);
    /* n elements of type `from` at src as type `to` at dst: a copy for equal types, else fp32
     * to fp16/bf16 multiplied by scale first (1/ranks when averaging compressed gradients) or
     * fp16/bf16 to fp32 (scale 1); rounded as the host executor rounds (host_reduce.h). */
    acc_status_t (*convert)(const acc_fusion_t *f, void *dst, acc_dtype_t to, const void *src,
                            acc_dtype_t from, uint64_t n, double scale, acc_cuda_stream_t q);
    acc_status_t (*sync)(acc_cuda_stream_t q);
} fu_mem_t;

extern const fu_mem_t fu_host_mem;   /* fusion_mem.c */
extern const fu_mem_t fu_device_mem; /* fusion_device.c */

/* The engine's state on the device (fusion_device.c). */
typedef struct fu_device fu_device_t;
/* The CUDA source of the device's conversions (fusion_device.c). */
const char *fu_device_source(void);

typedef struct {
    acc_fusion_t *f;
    int index;
    acc_comm_t *comm;    /* its own (acc_comm_dup) */
    acc_comm_t *ctl;     /* rank 0's bucket ranges: comm itself on the host backend, else a
                            host-backend duplicate of its own */
    acc_cuda_stream_t q; /* its queue */
    pthread_t thread;
    pthread_cond_t cv; /* work queued, an iteration begun, the engine stopping */
    int running;
    fu_bucket_t *queue; /* what the main thread planned for it, in order */
    size_t qhead, qtail, qcap;
    uint64_t gen;      /* the iteration it is to work on */
    uint64_t done_gen; /* the last iteration whose end it reached */
    void *stage;       /* compressed copies of the caller's buffers (acc_fusion_reduce), in
                          the engine's memory */
    size_t stage_bytes;
} fu_stream_t;

typedef struct fu_online fu_online_t;
typedef struct fu_nego fu_nego_t;
typedef struct fu_record fu_record_t;

struct acc_fusion {
    acc_comm_t *comm; /* the caller's, borrowed */
    acc_comm_t *ctl;  /* rank 0's decisions travel here: a host-backend duplicate */
    const fu_mem_t *mem;
    fu_device_t *dev;    /* NULL on the host backend */
    acc_cuda_stream_t q; /* the main thread's queue */
    int rank, nranks;
    acc_fusion_opts_t opts; /* strings copied below */
    char *model, *network, *db, *precision;

    fu_grad_t *grads;
    size_t ngrads, gcap;
    int external; /* 1: acc_fusion_reduce's buffers, not registered gradients */

    /* the configuration */
    int configured;
    acc_tune_config_t cfg;
    acc_fusion_source_t source, started_from;
    acc_tune_key_t key;
    int directed;        /* 1: rank 0 decides where buckets end and tells the others */
    int negotiated;      /* 1: rounds of agreement decide them (fusion_negotiate.c) */
    fu_nego_t *nego;     /* its thread and state, made when a configuration first needs it */
    int32_t *order;      /* negotiated: the gradients in the order buckets took them */
    unsigned char *pack; /* in the engine's memory */
    size_t pack_bytes, pack_cap;

    fu_stream_t streams[ACC_TUNE_MAX_STREAMS];
    int nstreams_made;
    pthread_mutex_t lock;
    pthread_cond_t done;   /* a stream reached the end of the iteration, or failed */
    pthread_cond_t packed; /* gradients were packed (streams that follow rank 0 wait) */
    int quit;
    acc_status_t error; /* the first failure of a stream: sticky */
    char error_msg[512];

    /* the iteration */
    int in_iter;
    uint64_t gen;
    size_t prefix;     /* gradients [0, prefix) are packed */
    size_t next_first; /* gradients [0, next_first) are in buckets */
    uint64_t launched; /* buckets queued */
    /* The caller's buffers handed over in the engine's life: the next one's stream is this
     * modulo the streams, whatever iteration it falls in, since where a caller ends its
     * iterations may differ between ranks (acc.torch's backend waits when it has nothing
     * queued). */
    uint64_t external_calls;
    uint64_t ran;      /* buckets the streams reduced */

    /* measurements */
    double last_end; /* when the previous iteration ended; 0: none yet */
    double spent;    /* seconds in the engine's calls this iteration */
    uint64_t iterations;
    double last_ms, last_exposed_ms;
    uint64_t last_buckets;

    fu_online_t *online; /* NULL unless tuning */

    /* recording (fusion_record.c) */
    double backward_s; /* when acc_fusion_backward was last called; 0: never */
    int recording;     /* as acc_fusion_info_t.recording, the same on every rank */
    fu_record_t *rec;  /* rank 0's notes while recording, and its storing thread */
    double record_s;   /* seconds the engine's calls spent on it */
};

/* fusion_plan.c */
/* Lay the gradients out for f->cfg (types on the wire, offsets) and size the pack buffer. */
acc_status_t fu_layout(acc_fusion_t *f);
/* Queue every bucket that is due (now, or all of them at the end of the iteration) and, at
 * the end, the end markers.  With f->lock held; on ranks that follow rank 0 it does nothing. */
void fu_plan(acc_fusion_t *f, int end, double now);
/* Queue the packing of gradient g (of this iteration) from the caller's buffer, or zeros, on
 * q; the caller syncs q before it publishes the gradient as packed. */
acc_status_t fu_pack(acc_fusion_t *f, fu_grad_t *g, int zero, acc_cuda_stream_t q);
/* Queue the bucket [first, last) on the next stream, round robin.  With f->lock held. */
void fu_launch(acc_fusion_t *f, size_t first, size_t last);
/* Queue the end of the iteration on every stream in use.  With f->lock held. */
void fu_plan_end(acc_fusion_t *f);

/* The gradient at position pos of a bucket's range. */
static inline fu_grad_t *fu_bucket_grad(const acc_fusion_t *f, int32_t pos)
{
    return &f->grads[f->negotiated ? f->order[pos] : pos];
}

/* fusion_negotiate.c */
/* Make the negotiation's communicator, queue and thread, once (collective). */
acc_status_t fu_nego_start(acc_fusion_t *f);
/* Iteration f->gen begins: its rounds start.  With f->lock held. */
void fu_nego_begin(acc_fusion_t *f);
/* Wake the negotiator (the engine stopping).  With f->lock held. */
void fu_nego_wake(acc_fusion_t *f);
/* Stop the thread (f->quit) and free the rest; NULL state does nothing. */
void fu_nego_stop(acc_fusion_t *f);

/* fusion_stream.c */
/* Start streams until there are n (each a communicator of its own; collective). */
acc_status_t fu_streams_grow(acc_fusion_t *f, int n);
/* Begin iteration f->gen on the streams in use.  With f->lock held. */
void fu_streams_begin(acc_fusion_t *f);
/* Queue a bucket on stream s.  With f->lock held. */
acc_status_t fu_stream_push(acc_fusion_t *f, int s, const fu_bucket_t *b);
/* Wait, with f->lock held, until every stream in use reached the end of the iteration. */
void fu_streams_wait(acc_fusion_t *f);
/* Stop the threads and free the communicators (abort them when the engine failed). */
void fu_streams_stop(acc_fusion_t *f);
/* Record a failure (the first one wins) and wake every waiter.  With f->lock held. */
void fu_fail(acc_fusion_t *f, acc_status_t st, const char *msg);
/* Gradients [0, f->prefix) are packed: wake the streams that wait for them.  With f->lock. */
void fu_packed(acc_fusion_t *f);

/* fusion_grads.c */
/* Did every rank register the same gradients (count, sizes, types, order)?  Collective; every
 * rank fails with the first difference when not. */
acc_status_t fu_agree_grads(acc_fusion_t *f);
/* The engine belongs to the process this one forked from: ACC_ERR_INVALID saying so, naming
 * what. */
acc_status_t fu_forked(const acc_fusion_t *f, const char *what);

/* fusion_config.c */
/* The job's key: the model (the option, ACC_MODEL, else the gradient list's fingerprint), the
 * communicator's topology with the network (the option, ACC_NETWORK) applied; *topo (optional)
 * receives that topology.  ACC_NO_DATA when no key can be made (no topology, no model). */
acc_status_t fu_engine_key(acc_fusion_t *f, acc_tune_key_t *key, acc_topo_t **topo);
/* Rank 0 decides the configuration of the first iteration, every rank applies it. */
acc_status_t fu_configure(acc_fusion_t *f);
/* Apply cfg from the next iteration on (between iterations; collective: same cfg everywhere). */
acc_status_t fu_apply(acc_fusion_t *f, const acc_tune_config_t *cfg, acc_fusion_source_t src);
/* Broadcast rank 0's configuration and source over f->ctl, with a status that lets every
 * rank fail together when rank 0 failed. */
acc_status_t fu_share_config(acc_fusion_t *f, acc_status_t st, acc_tune_config_t *cfg,
                             int32_t *extra);
/* The database path of the engine: the option, else the communicator's; NULL when none. */
const char *fu_db_path(const acc_fusion_t *f);

/* fusion_online.c */
/* Start online tuning (after the first configuration; collective). */
acc_status_t fu_online_start(acc_fusion_t *f);
/* After each iteration while tuning: measure, decide (rank 0), share, apply. */
acc_status_t fu_online_step(acc_fusion_t *f, double iteration_ms, double exposed_ms);
/* Stop tuning: store what was measured (rank 0) and free it.  store = 0 drops it. */
void fu_online_stop(acc_fusion_t *f, int store);

/* fusion_record.c */
/* Decide (rank 0, shared) whether to record and, on rank 0, get ready to.  Collective, once,
 * when the first iteration starts. */
acc_status_t fu_record_start(acc_fusion_t *f);
/* A buffer of the caller's was handed over at t (acc_fusion_reduce).  Rank 0, recording. */
void fu_record_buffer(acc_fusion_t *f, uint64_t count, acc_dtype_t dt, double t);
/* The backward pass ended at t (acc_fusion_wait was called), before the gradients not marked
 * count as ready: note the iteration, and once enough are noted, start storing them. */
void fu_record_iteration(acc_fusion_t *f, double t);
/* Wait for the storing thread and free the notes (acc_fusion_destroy). */
void fu_record_stop(acc_fusion_t *f);
/* The model part of the job's key (the option or ACC_MODEL, a profile file's name inside it),
 * else the name of the list of (count, type) pairs given: "grads-" and 16 hex digits. */
acc_status_t fu_model_name(const acc_fusion_t *f, const uint64_t *counts, const acc_dtype_t *dts,
                           size_t n, char *out, size_t size);

#endif
