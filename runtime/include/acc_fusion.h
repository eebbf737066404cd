/*
 * acc_fusion.h - the fusion engine: a data-parallel job's gradients all-reduced while the
 * backward pass produces them, fused into buckets of the fusion size, on several streams, with
 * optional 16-bit compression; its configuration found in the database (the optimum acc-tune
 * stored, or one an earlier job measured) or in the settings table, and optionally tuned online
 * while the job runs, leaving its measurements in the database for the next job; it can also
 * record the job's own model profile there, for acc-tune.
 *
 * Conventions (errors, ownership, threads) as in acc_common.h and acc_runtime.h, and:
 *
 * Use.  Create an engine on a communicator (borrowed; it must outlive the engine), register
 *   every gradient once, in the order the backward pass produces them (the same order and
 *   sizes on every rank), then per iteration mark each gradient ready when it is final and end
 *   the iteration with acc_fusion_wait(), after which every registered gradient holds the sum
 *   (or the mean) over the ranks.  A gradient must not be written between being marked ready
 *   and the end of the iteration.  A gradient not marked by the end of the iteration counts as
 *   zero (an unused parameter, as DDP's find_unused_parameters treats it).  Instead of
 *   registered gradients an engine may reduce buffers the caller fused itself (DDP's buckets,
 *   acc_fusion_reduce); one engine does one or the other.
 * Buckets.  Gradients are packed, in registration order, into one buffer per engine; a bucket
 *   is a run of consecutive gradients of one type.  Under acc's policy a bucket holds as many
 *   as fit in the fusion size (one larger gradient alone) and starts as soon as its last
 *   gradient is ready; DDP's policy closes a bucket once it reaches its cap (the first at
 *   first_bytes); Horovod's and negotiate take, every cycle, what is ready on every rank, in
 *   any order: a thread of the engine's runs rounds of agreement on a communicator of its own
 *   (Horovod: rank 0 gathers what each rank has ready and answers with what all have, a
 *   reduce and a broadcast; negotiate: one allreduce, no coordinator) and every rank fuses
 *   exactly that set, so ranks that finish their gradients in different orders still fuse
 *   the same buckets.  Bucket k goes to stream k mod streams (round robin), each stream a
 *   thread with a communicator of its own (acc_comm_dup) that reduces its buckets one after
 *   another.  Under acc's policy with a timeout (a cycle) rank 0 decides where buckets end and
 *   tells the others; otherwise every rank computes them from the sizes alone.
 * Compression.  Under fp16 or bf16, fp32 gradients are cast when packed, reduced in the 16-bit
 *   type (accumulating in fp32) and cast back when unpacked; when averaging they are divided by
 *   the rank count before the cast, so that the sum stays in the 16-bit range (DDP's
 *   fp16_compress_hook divides first for the same reason).  Other types travel as they are.
 * Settings, in order of precedence: the configuration the options give; ACC_FUSION_BYTES,
 *   ACC_STREAMS and ACC_COMPRESSION; the stored optimum of the job's key (the model ACC_MODEL,
 *   else a fingerprint of the registered gradients; the communicator's topology with
 *   ACC_NETWORK applied; its network's name: the key acc-tune writes), the measured one before
 *   the simulated one; else acc's policy with 25 MiB buckets, one stream and no compression.
 *   Rank 0 decides and every rank uses its decision.  The configuration is fixed when the first
 *   iteration starts (after registration) and changes only between iterations.  An invalid
 *   value of one of those settings is an error in the log naming it, and the engine starts as
 *   if none of them were set: the job trains on.
 * Online tuning (ACC_TUNE_ONLINE=1 or the option).  Rank 0 times whole iterations (the host
 *   clock from the end of one to the end of the next), searches fusion size x streams x
 *   compression (the compressions ACC_TUNE_COMPRESSION allows) from the configuration the job
 *   started with and the stored optima of similar keys, with the tuner's search (Bayesian by
 *   default), measuring each configuration for a few iterations after one to settle; it
 *   broadcasts every change, so all ranks switch between the same two iterations.  It stops
 *   at its budget of iterations or when nothing is expected to improve, keeps the best it
 *   measured, and stores every measurement and the optimum in the database as measured.
 * Recording (ACC_RECORD=1 or the option).  The engine can record the job's own model profile
 *   (acc_tune.h): for record_iters iterations after record_warmup, rank 0 notes when each
 *   registered gradient is marked ready (or, on an engine of the caller's buffers, each
 *   buffer's size, type and the moment it is handed over: DDP's buckets) relative to the start
 *   of the backward pass (acc_fusion_backward; without it, the first gradient's moment), the
 *   backward pass's length (until acc_fusion_wait is called) and what came before it since the
 *   previous iteration ended (forward pass, optimizer step: the rest of the compute).  Once it
 *   has them, a thread of rank 0's turns the medians into a profile - gradients in the order
 *   they became ready, ready as a fraction of the backward pass, one compute entry for the GPU
 *   (on the cuda backend the device's, on the host backend the topology's, which the host
 *   stands in for) with the batch and precision given - and stores it in the database as the
 *   recording of the job's model (the key's model: ACC_MODEL, else the gradient list's
 *   fingerprint) with the host, the device, the rank count and the date; acc-tune --model NAME
 *   finds it there.  It costs the job a clock reading per gradient and one pass over the
 *   gradients per recorded iteration; a failure to store is one warning, never the job's.
 * Backends.  On the host backend gradients and buffers are host memory, packed and unpacked
 *   by the CPU.  On the cuda backend they are device memory of the communicator's GPU, final
 *   when handed over (the caller synchronises the CUDA stream that wrote them first): the pack
 *   buffer is device memory, packing and unpacking are copies and conversion kernels on CUDA
 *   streams of the engine's (each stream's allreduce queued on its own), the conversions are
 *   compiled by NVRTC the first time a configuration compresses (ACC_ERR_UNSUPPORTED in a
 *   build without it), they round exactly as the host does, and acc_fusion_wait returns once
 *   the GPU has finished.  Either way rank 0's decisions travel in host memory, on a
 *   host-backend duplicate of the communicator.
 * Forks.  In a process forked after the engine was made its calls fail and its destruction
 *   releases nothing: it is the parent's, as its communicator is.
 * Threads.  One thread at a time per engine, like a communicator; on the cuda backend a thread
 *   on which the communicator's GPU's primary context is current (as after acc_cuda_init or
 *   the CUDA runtime's use of that device).
 */
#ifndef ACC_FUSION_H
#define ACC_FUSION_H

#include "acc_runtime.h"
#include "acc_tune.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct acc_fusion acc_fusion_t;

/* Where the configuration in use came from. */
typedef enum {
    ACC_FUSION_FROM_DEFAULT = 0, /* nothing stored, nothing set */
    ACC_FUSION_FROM_OPTIONS,     /* acc_fusion_opts_t.config or acc_fusion_set_config */
    ACC_FUSION_FROM_SETTINGS,    /* ACC_FUSION_BYTES, ACC_STREAMS or ACC_COMPRESSION */
    ACC_FUSION_FROM_SIMULATED,   /* the stored optimum acc-tune found */
    ACC_FUSION_FROM_MEASURED,    /* the stored optimum an earlier job measured */
    ACC_FUSION_FROM_ONLINE,      /* this job's online tuning */
    ACC_FUSION_SOURCE_COUNT
} acc_fusion_source_t;

/* "default", "options", "settings", "simulated optimum", "measured optimum", "online" */
const char *acc_fusion_source_name(acc_fusion_source_t s);

typedef struct {
    /* The whole configuration (borrowed, read at creation); NULL: the settings, the stored
     * optimum, the default, field by field as described above. */
    const acc_tune_config_t *config;
    int average;         /* 1 (default): the mean over the ranks; 0: the sum */
    const char *model;   /* the key's model; NULL: ACC_MODEL */
    const char *network; /* the key's network; NULL: ACC_NETWORK */
    const char *db;      /* NULL: the communicator's database (acc_comm_opts_t.db, ACC_DB, ...) */
    int online;          /* 1: tune online; -1: do not; 0: ACC_TUNE_ONLINE */
    /* Online tuning (read only when it is on): */
    const acc_tune_space_t *space;  /* NULL: acc's policy, fusion 256K..256M, 1..4 streams,
                                       collective choice auto, ACC_TUNE_COMPRESSION's list */
    acc_search_strategy_t strategy; /* bayes (default) or grid */
    int budget;        /* iterations; 0: ACC_TUNE_BUDGET, else a quarter of a full grid's */
    int warmup;        /* iterations after each change that are not measured; 0: 1 */
    int measure_iters; /* iterations measured per configuration (the median counts); 0: 5 */
    uint64_t seed;     /* the search's seed; 0: 1 */
    /* Recording the job's profile (see above): */
    int record;        /* 1: record; -1: do not; 0: ACC_RECORD */
    int record_warmup; /* iterations not recorded first; 0: 2 */
    int record_iters;  /* iterations recorded (the medians count); 0: 5 */
    int batch;         /* the profile's batch: samples per rank and micro-batch; 0: not given */
    /* The profile's math precision: fp32, tf32, fp16 or bf16; NULL: fp16 or bf16 when every
     * gradient has that type, else fp32. */
    const char *precision;
} acc_fusion_opts_t;

void acc_fusion_opts_init(acc_fusion_opts_t *opts);

/* An engine on comm (borrowed), which every rank creates with the same options.  It makes
 * communicators of its own from comm (acc_comm_dup), so it is collective on comm. */
acc_status_t acc_fusion_create(acc_comm_t *comm, const acc_fusion_opts_t *opts, acc_fusion_t **out);
/* Wait for the iteration in flight, stop the streams, and, when online tuning is still
 * measuring, stop it and store what it measured.  Collective.  NULL does nothing. */
acc_status_t acc_fusion_destroy(acc_fusion_t *f);

/* Register a gradient of count elements of type dt at grad (borrowed; it must stay valid and
 * in place for the engine's life): before the first iteration, in the order the backward
 * pass produces the gradients.  A gradient may have no elements (grad may then be NULL), as
 * DDP's may.  *index (optional) receives its index, 0, 1, ...  The first iteration checks that
 * every rank registered the same list (count, sizes, types, order) and fails on every rank,
 * naming the first difference, when not. */
acc_status_t acc_fusion_register(acc_fusion_t *f, void *grad, size_t count, acc_dtype_t dt,
                                 int *index);
/* The gradient of this index is final for this iteration: pack it, and start every bucket
 * that is complete.  The first call of the job fixes the configuration. */
acc_status_t acc_fusion_ready(acc_fusion_t *f, int index);
/* The backward pass of this iteration (or of the next, between iterations) begins now: the
 * moment a recording measures ready times from.  Only needed for recording; it does nothing
 * else, is not collective and cannot fail but for a NULL engine. */
acc_status_t acc_fusion_backward(acc_fusion_t *f);
/* Reduce a buffer the caller fused (count elements of dt at buf, in place, borrowed until the
 * end of the iteration) on the next stream (round robin over the engine's life, not per
 * iteration: ranks may end their iterations after different buffers), compressed and averaged
 * as configured.  Every rank must hand over the same buffers in the same order.  Only on an
 * engine without registered
 * gradients.  A count of 0 (buf may be NULL) reduces nothing; as the iteration's first call it
 * fixes the configuration (acc_fusion_info) before any buffer is handed over. */
acc_status_t acc_fusion_reduce(acc_fusion_t *f, void *buf, size_t count, acc_dtype_t dt);
/* End the iteration: count unmarked gradients as zero, start what is left, wait for every
 * stream, unpack.  Between iterations the configuration may change (online tuning). */
acc_status_t acc_fusion_wait(acc_fusion_t *f);

/* Replace the configuration from the next iteration on; every rank calls it between the same
 * two iterations with the same configuration (rank 0's is used).  It ends online tuning. */
acc_status_t acc_fusion_set_config(acc_fusion_t *f, const acc_tune_config_t *config);

typedef struct {
    acc_tune_config_t config;         /* in use (assign is always round robin, algo auto) */
    acc_fusion_source_t source;       /* where it came from */
    acc_fusion_source_t started_from; /* where the first iteration's came from */
    acc_tune_key_t key;               /* the key looked up; key.model "" when none could be made */
    int tuning;                       /* 1: online tuning is measuring */
    uint64_t iterations;              /* iterations ended */
    double last_ms;                   /* the last iteration, end to end; 0 before the second */
    double last_exposed_ms;           /* of it, the time spent in the engine's calls */
    uint64_t buckets;                 /* collectives started in the last iteration */
    /* Recording: 0 off, 1 recording, 2 recorded (rank 0 stores the profile on a thread of its
     * own, which acc_fusion_destroy waits for) */
    int recording;
    double record_ms; /* time the engine's calls spent recording so far (rank 0) */
} acc_fusion_info_t;

/* What the engine uses now.  Before the first iteration the configuration is not fixed yet:
 * ACC_NO_DATA, with *out zeroed. */
acc_status_t acc_fusion_info(const acc_fusion_t *f, acc_fusion_info_t *out);

/* The stored optimum a job of `model` on topology `topo` (as acc_topo_load takes it) with
 * `network` (NULL: the topology's own) would start from, in database `db` (NULL: ACC_DB and
 * the search path): the measured one, else the simulated one.  ACC_NO_DATA, with the reason,
 * only when the database holds none for this key; a failure for anything else: no database
 * found, one that cannot be read (missing, damaged, another program's), a model neither
 * shipped nor known to the database (a misspelling: ACC_ERR_NOT_FOUND listing the shipped
 * ones), a topology or network that does not load. */
acc_status_t acc_fusion_stored(const char *model, const char *topo, const char *network,
                               const char *db, acc_tune_optimum_t *out);

/* ---- a model replayed on the engine (fusion_replay.c) -------------------------------------
 *
 * A model profile's data-parallel training iteration replayed on the runtime, for benchmarks
 * and tests: per iteration the forward pass (and the micro-batches accumulated before the last
 * one) as time that passes, then the backward pass (begun with acc_fusion_backward), each
 * gradient (one buffer per tensor of the profile, zeros in the communicator's memory,
 * registered in the profile's order) marked ready at its moment of the profile's timeline
 * (ready x backward time after the backward pass began, or at once when the engine made it
 * late), then, once the backward time has passed, the end of the iteration.  Compute waits on
 * the clock without holding a core: on a GPU it would not hold the CPU either, and on the host
 * backend the ranks' communication needs the cores.  The compute time of an iteration is
 * therefore that of the profile's entry, as the iteration simulator counts it
 * (acc_itersim_result_t.compute_ms).
 */
typedef struct acc_fusion_replay acc_fusion_replay_t;

/* A replay of profile computing as `compute` (both borrowed; they must outlive it) on an
 * engine of comm with opts.  Collective. */
acc_status_t acc_fusion_replay_create(acc_comm_t *comm, const acc_profile_t *profile,
                                      const acc_profile_compute_t *compute,
                                      const acc_fusion_opts_t *opts, acc_fusion_replay_t **out);
/* Destroy the engine and the gradients.  Collective.  NULL does nothing. */
acc_status_t acc_fusion_replay_destroy(acc_fusion_replay_t *r);
acc_fusion_t *acc_fusion_replay_engine(acc_fusion_replay_t *r);
/* One iteration's compute: what it would take on a free network, in ms. */
double acc_fusion_replay_compute_ms(const acc_fusion_replay_t *r);
/* Ranks that finish their gradients in different orders: from the next iteration on, each
 * rank marks the tensors of every run of `window` consecutive ones (in the profile's order) in
 * an order of its own, drawn per rank and iteration from seed, each at the moment the profile
 * gives the tensor whose place it takes (so the timeline's moments stay, their tensors move).
 * window 0 or 1: the profile's order (the default). */
acc_status_t acc_fusion_replay_set_jitter(acc_fusion_replay_t *r, int window, uint64_t seed);
/* Run iters iterations; ms (optional, iters of them) receives each one's time from the end
 * of the previous iteration (or the start of this call) to its end.  The backward pass of each
 * begins with acc_fusion_backward. */
acc_status_t acc_fusion_replay_run(acc_fusion_replay_t *r, int iters, double *ms);
/* The replay's timing noise, in ms: each iteration's largest delay between a moment of the
 * profile's timeline (the backward pass's start, a gradient's ready time, the backward pass's
 * end) and the engine's call for it, as the replay's own clock reads it; of the iterations of
 * the last acc_fusion_replay_run, the middle one's (for an even count the later of the two).
 * A recording takes the median of what it notes per iteration, and a median is off by no more
 * than the middle iteration's error, so a recording of those iterations differs from the
 * profile by no more than this (plus the time a call takes to begin), in each moment. */
double acc_fusion_replay_lateness_ms(const acc_fusion_replay_t *r);

#ifdef __cplusplus
}
#endif
#endif /* ACC_FUSION_H */
