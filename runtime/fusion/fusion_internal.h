/*
 * fusion_internal.h - the fusion engine's parts.  Internal to runtime/fusion/.
 *
 *   fusion.c          the API: create, register, ready, reduce, wait, destroy, information;
 *   fusion_plan.c     where buckets end under each policy, and the pack buffer's layout;
 *   fusion_stream.c   the streams: a thread and a communicator each, packing and unpacking;
 *   fusion_config.c   the configuration a job starts with: options, settings, stored optimum;
 *   fusion_online.c   online tuning: rank 0 measures, the tuner's search decides, all follow.
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
 */
#ifndef ACC_FUSION_INTERNAL_H
#define ACC_FUSION_INTERNAL_H

#include "acc_fusion.h"
#include "rt_internal.h"

#include <pthread.h>

/* A registered gradient. */
typedef struct {
    void *user;       /* the caller's buffer */
    uint64_t count;   /* elements */
    acc_dtype_t dt;   /* its type */
    acc_dtype_t wire; /* the type it travels in under the configuration */
    size_t offset;    /* bytes into the pack buffer */
    uint64_t gen;     /* the iteration it was last packed for */
    double ready_s;   /* when (acc_now_s) it was marked, for the cycle */
} fu_grad_t;

/* A bucket: gradients [first, last), or a buffer of the caller's (buf); last < 0 marks the end
 * of the iteration on its stream. */
typedef struct {
    int32_t first, last;
    void *buf;
    uint64_t count;
    acc_dtype_t dt;
} fu_bucket_t;

typedef struct {
    acc_fusion_t *f;
    int index;
    acc_comm_t *comm; /* its own (acc_comm_dup) */
    pthread_t thread;
    pthread_cond_t cv; /* work queued, an iteration begun, the engine stopping */
    int running;
    fu_bucket_t *queue; /* what the main thread planned for it, in order */
    size_t qhead, qtail, qcap;
    uint64_t gen;      /* the iteration it is to work on */
    uint64_t done_gen; /* the last iteration whose end it reached */
    void *stage;       /* compressed copies of the caller's buffers (acc_fusion_reduce) */
    size_t stage_bytes;
} fu_stream_t;

typedef struct fu_online fu_online_t;

struct acc_fusion {
    acc_comm_t *comm; /* the caller's, borrowed */
    acc_comm_t *ctl;  /* rank 0's decisions travel here */
    int rank, nranks;
    acc_fusion_opts_t opts; /* strings copied below */
    char *model, *network, *db;

    fu_grad_t *grads;
    size_t ngrads, gcap;
    int external; /* 1: acc_fusion_reduce's buffers, not registered gradients */

    /* the configuration */
    int configured;
    acc_tune_config_t cfg;
    acc_fusion_source_t source, started_from;
    acc_tune_key_t key;
    int directed; /* 1: rank 0 decides where buckets end and tells the others */
    unsigned char *pack;
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
    uint64_t ran;      /* buckets the streams reduced */
    double next_tick;  /* Horovod's next cycle */

    /* measurements */
    double last_end; /* when the previous iteration ended; 0: none yet */
    double spent;    /* seconds in the engine's calls this iteration */
    uint64_t iterations;
    double last_ms, last_exposed_ms;
    uint64_t last_buckets;

    fu_online_t *online; /* NULL unless tuning */
};

/* fusion_plan.c */
/* Lay the gradients out for f->cfg (types on the wire, offsets) and size the pack buffer. */
acc_status_t fu_layout(acc_fusion_t *f);
/* Queue every bucket that is due (now, or all of them at the end of the iteration) and, at
 * the end, the end markers.  With f->lock held; on ranks that follow rank 0 it does nothing. */
void fu_plan(acc_fusion_t *f, int end, double now);
/* Pack gradient g (of this iteration) from the caller's buffer, or zeros. */
void fu_pack(acc_fusion_t *f, fu_grad_t *g, int zero);
/* Convert n elements between a gradient's type and its wire type; `scale` multiplies on the
 * way in (1/ranks when averaging a compressed gradient, else 1). */
void fu_convert(void *dst, acc_dtype_t to, const void *src, acc_dtype_t from, uint64_t n,
                double scale);

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

#endif
