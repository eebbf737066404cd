/*
 * acc_tune.h - the tuner: model profiles, the training-iteration simulator and the search for the
 * best gradient-fusion size and stream count per (model, topology, network).
 *
 * Conventions (as in acc_common.h).  Functions that can fail return an acc_status_t and record a
 * message naming the file and line (or the object) involved.  acc_x_create / acc_x_load hand the
 * caller a new object to release with acc_x_destroy; destroy(NULL) does nothing.  Pointer
 * parameters are borrowed unless marked "taken"; strings inside a returned object live as long as
 * the object.  Objects are not locked: one object, one thread at a time; a loaded profile is
 * read-only and may then be shared between threads.
 *
 * Sections: model profiles (below).  The iteration simulator and the search strategies build on
 * the profile types and are declared after them; then reports, and last the tuning key and what
 * the database keeps of tuning (runs, optima, warm starts).
 */
#ifndef ACC_TUNE_H
#define ACC_TUNE_H

#include "acc_common.h"
#include "acc_cost.h" /* acc_nccl_options_t, acc_topo_t */
#include "acc_db.h"   /* acc_db_t: runs and optima are kept there */
#include "acc_plan.h" /* acc_dtype_t */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- model profiles -----------------------------------------------------------------------
 *
 * A model profile describes what data-parallel training of one model asks of the network: every
 * parameter tensor, in the order its gradient becomes final during the backward pass, with its
 * element count, the data type its gradient is reduced in, and the moment it is ready as a
 * fraction of the backward pass; and, per GPU generation, the measured compute time of one
 * training iteration, each with the publication it comes from.  The text form (YAML, version 1)
 * is documented in tuner/models/README.md; the shipped profiles are generated from the models'
 * architecture definitions by tuner/models/gen_profiles.c.
 */

/* The YAML format version this library reads and writes. */
#define ACC_PROFILE_VERSION 1

typedef struct {
    char *name;        /* the framework's parameter name, e.g. "layer4.2.conv3.weight" */
    uint64_t elems;    /* elements, > 0 */
    acc_dtype_t dtype; /* of the gradient as it is all-reduced */
    /* Fraction of the backward pass (0..1) after which this gradient is final.  Non-decreasing
     * along the tensor list; 1 means at the very end of the backward pass. */
    double ready;
} acc_profile_tensor_t;

typedef struct {
    char *gpu;       /* as written: "sm_80" or a GPU model name acc knows ("A100 SXM4 80GB") */
    int sm;          /* compute capability resolved from gpu, e.g. 80 */
    char *precision; /* math precision: "fp32", "tf32", "fp16" or "bf16" (the last two: mixed) */
    int batch;       /* samples per GPU in one forward+backward pass (one micro-batch) */
    /* Micro-batches the source's recipe accumulates before each gradient reduction (>= 1).  The
     * gradients are reduced once per accumulation, during the backward pass of the last one. */
    int accumulation;
    double iteration_ms; /* one micro-batch: forward + backward (+ optimizer step), one GPU */
    double forward_ms;   /* the forward part when published; 0 when not */
    char *source;        /* where the figure comes from, and how it was turned into a time */
    /* 1: no time is published for this GPU; the figure is derived from the model's FLOPs and
     * the GPU's published throughput (source says how), and tools list it as assumed. */
    int assumed;
} acc_profile_compute_t;

typedef struct {
    char *name;        /* file stem and database key: "resnet50" */
    char *description; /* "" when none */
    char *sample;      /* what one sample of `batch` is ("one 224x224 RGB image"); "" when none */
    char **sources;    /* where the architecture and the published totals come from */
    size_t nsources;
    uint64_t params;        /* total elements = sum of the tensors' elems */
    uint64_t forward_flops; /* forward FLOPs of one sample (2 per multiply-add); 0 unknown */
    acc_profile_tensor_t *tensors;
    size_t ntensors;
    acc_profile_compute_t *compute;
    size_t ncompute;
} acc_profile_t;

/* An empty profile named `name` (letters, digits, '.', '_', '-'), to be filled with the calls
 * below; acc_profile_check() tells when it is complete. */
acc_status_t acc_profile_create(const char *name, acc_profile_t **out);
void acc_profile_destroy(acc_profile_t *p);

acc_status_t acc_profile_set_description(acc_profile_t *p, const char *text);
acc_status_t acc_profile_set_sample(acc_profile_t *p, const char *text);
acc_status_t acc_profile_add_source(acc_profile_t *p, const char *text);
/* Append a tensor (the list is in gradient-ready order) and add its elements to p->params. */
acc_status_t acc_profile_add_tensor(acc_profile_t *p, const char *name, uint64_t elems,
                                    acc_dtype_t dtype, double ready);
/* Append a compute entry; the strings are copied and c->sm is resolved from c->gpu (an
 * unknown GPU is ACC_ERR_NOT_FOUND). */
acc_status_t acc_profile_add_compute(acc_profile_t *p, const acc_profile_compute_t *c);

/* The invariants every loaded or dumped profile satisfies: at least one tensor, unique names,
 * elems > 0, ready within 0..1 and non-decreasing, params equal to the sum of the tensors,
 * compute entries with batch >= 1, accumulation >= 1, iteration_ms > 0, 0 <= forward_ms <
 * iteration_ms.  The message names the tensor or entry at fault. */
acc_status_t acc_profile_check(const acc_profile_t *p);

/* Text form.  `name` (a path or "<string>") is used in messages, which read "NAME:LINE: ...".
 * load(dump(p)) equals p, and dumping a loaded dump gives the same bytes. */
acc_status_t acc_profile_load_yaml(const char *text, size_t len, const char *name,
                                   acc_profile_t **out);
acc_status_t acc_profile_load_file(const char *path, acc_profile_t **out);
acc_status_t acc_profile_dump_yaml(const acc_profile_t *p, acc_buf_t *out);

/* The first compute entry for compute capability `sm` and, unless `precision` is NULL, that
 * precision; NULL when there is none.  Entries are listed mixed precision first. */
const acc_profile_compute_t *acc_profile_find_compute(const acc_profile_t *p, int sm,
                                                      const char *precision);
/* A copy of p whose every gradient has factor x its elements (rounded, at least one): the same
 * tensors, order, moments and compute.  It emulates on a network 1/factor times slower the
 * share of the iteration that communication takes on p's own (acc-bench --grad-scale).
 * factor in (0, 1]; ACC_ERR_RANGE otherwise. */
acc_status_t acc_profile_scale(const acc_profile_t *p, double factor, acc_profile_t **out);
/* 1 when s is a precision a compute entry may name (fp32, tf32, fp16, bf16), else 0. */
int acc_profile_precision_valid(const char *s);
/* Backward time of one micro-batch: iteration_ms - forward_ms when forward_ms is known, else
 * two thirds of iteration_ms (backward costs about twice the forward pass). */
double acc_profile_backward_ms(const acc_profile_compute_t *c);
/* Bytes of gradient reduced per iteration: the sum of elems x the size of each dtype. */
uint64_t acc_profile_grad_bytes(const acc_profile_t *p);

/* The directory of shipped profiles: ACC_MODEL_DIR when set, else the installed copy, else the
 * source tree this build came from.  Borrowed. */
const char *acc_profile_builtin_dir(void);
/* Names of the profiles there (file stems of *.yaml), sorted; free with acc_strv_free. */
acc_status_t acc_profile_builtin_list(char ***names, size_t *count);
/* Load <builtin dir>/<name>.yaml.  An unknown name is ACC_ERR_NOT_FOUND naming the directory
 * and the profiles it holds. */
acc_status_t acc_profile_load_builtin(const char *name, acc_profile_t **out);

/* ---- where a model's profile is found (tuner/profile_find.c) ---------------------------------
 *
 * A model is named three ways: a path (with '/', or ending in .yaml) is a profile file; a name
 * is a profile a training job recorded of itself (the runtime's ACC_RECORD, kept in the
 * database) or a shipped one.  For a given GPU generation a recording of that name for it wins
 * over the shipped profile, which wins over a recording for another generation; so a job's own
 * timeline replaces the published one where it was measured, and only there.
 */
typedef enum {
    ACC_PROFILE_OTHER = 0, /* made by a program (acc_profile_create) */
    ACC_PROFILE_SHIPPED,   /* the shipped set (acc_profile_builtin_dir) */
    ACC_PROFILE_FILE,      /* a file the user named */
    ACC_PROFILE_RECORDED   /* recorded by a training job, read from the database */
} acc_profile_kind_t;

typedef struct {
    acc_profile_kind_t kind;
    char path[1024];            /* SHIPPED, FILE: the file; OTHER: what made it, or "" */
    acc_db_recorded_t recorded; /* RECORDED: where, when and how it was recorded */
} acc_profile_origin_t;

/* The profile of `model` for compute capability sm (0: any) as described above; db (NULL:
 * none) holds the recordings.  *origin (optional) says where it was found.  ACC_ERR_NOT_FOUND
 * names the shipped profiles and the recorded ones when the name is neither. */
acc_status_t acc_profile_find(const char *model, int sm, acc_db_t *db, acc_profile_t **out,
                              acc_profile_origin_t *origin);
/* Store p in db as a training job's recording, described by rec (its name and param_count are
 * taken from p; the rest as given), replacing that of the same name and rec->sm. */
acc_status_t acc_profile_put_recorded(acc_db_t *db, const acc_profile_t *p,
                                      const acc_db_recorded_t *rec);
/* The compute capability whose compute entries a topology's profile needs: that of its GPUs
 * (the first one's); 0 when it has none. */
int acc_profile_topo_sm(const acc_topo_t *topo);
/* For people: "shipped (PATH)", "file PATH", "recorded on HOST/DEVICE at 2025-06-01 12:34:56
 * UTC (host backend, 4 ranks, batch 32, median of 5 iterations)", or OTHER's text. */
void acc_profile_origin_text(const acc_profile_origin_t *o, char *buf, size_t n);

/* ---- collective times (tuner/itersim_comm.c) ----------------------------------------------------
 *
 * The simulator needs the time of one allreduce of any size on the cluster.  It takes it from the
 * compiler's sweep (acc_select_build: at each power of two from 1 KiB to 4 GiB, acc's fastest
 * verified plan and NCCL's own choice as its 2.28 model predicts it) and reads between the
 * sweep's sizes linearly in bytes: within one regime a collective costs alpha + beta x bytes
 * (Hockney's model, which NCCL's own tuning model also follows), so the straight line between
 * two neighbouring sizes is exact there, and its intercept and slope are the latency part and
 * the bandwidth part that concurrent collectives share (acc_itersim_run).  Below the smallest
 * size the first segment is extended (times stay >= 0), above the largest the last one.
 *
 * Each point also says how many thread blocks (CTAs) the call keeps busy: NCCL's channel count
 * for NCCL's choice, the plan's lanes for acc's plan.  Each holds one SM while the call runs.
 * Where a forced choice has no time at some size (no acc plan applies there), it takes AUTO's,
 * as the runtime would fall back to the other.
 */
typedef enum {
    ACC_TUNE_ALGO_AUTO = 0, /* the selection: at each size the faster of acc's plan and NCCL */
    ACC_TUNE_ALGO_ACC,      /* acc's fastest plan at every size (forced) */
    ACC_TUNE_ALGO_NCCL,     /* NCCL's own choice at every size (forced) */
    ACC_TUNE_ALGO_COUNT
} acc_tune_algo_t;

const char *acc_tune_algo_name(acc_tune_algo_t a); /* "auto", "acc", "nccl"; "?" otherwise */
acc_status_t acc_tune_algo_parse(const char *s, acc_tune_algo_t *out);

/* One size of an allreduce cost curve.  us < 0: that choice has no time at this size. */
typedef struct {
    uint64_t nbytes;
    double us[ACC_TUNE_ALGO_COUNT];
    int ctas[ACC_TUNE_ALGO_COUNT];
} acc_tune_comm_point_t;

typedef struct acc_tune_comm acc_tune_comm_t;

typedef struct {
    int nccl_only;           /* 1: NCCL's model only (fast; acc's plans are not swept) */
    uint64_t max_bytes;      /* largest size swept; 0: 4 GiB */
    acc_nccl_options_t nccl; /* the NCCL replica's options */
} acc_tune_comm_opts_t;

void acc_tune_comm_opts_init(acc_tune_comm_opts_t *opts);
/* The allreduce curves of a finalized topology (borrowed; not needed afterwards).  A topology
 * of one GPU gives a model without communication (every time 0).  opts may be NULL. */
acc_status_t acc_tune_comm_create(const acc_topo_t *topo, const acc_tune_comm_opts_t *opts,
                                  acc_tune_comm_t **out);
/* Curves given point by point (measurements, tests): sizes strictly ascending, at least one
 * point; times >= 0 or < 0 for "none"; sm_count is the GPU's SMs (0: no SM accounting). */
acc_status_t acc_tune_comm_create_points(int nranks, int sm_count,
                                         const acc_tune_comm_point_t *points, size_t n,
                                         acc_tune_comm_t **out);
void acc_tune_comm_destroy(acc_tune_comm_t *c);

int acc_tune_comm_ranks(const acc_tune_comm_t *c);
int acc_tune_comm_sm_count(const acc_tune_comm_t *c);
/* Whether this choice has times (acc's plans are absent from a nccl_only model). */
int acc_tune_comm_has(const acc_tune_comm_t *c, acc_tune_algo_t algo);
/* The sweep's points, ascending. */
const acc_tune_comm_point_t *acc_tune_comm_points(const acc_tune_comm_t *c, size_t *n);

typedef struct {
    double us;     /* the whole call alone on the network */
    double lat_us; /* its latency part, 0..us */
    double bw_us;  /* its bandwidth part: us - lat_us */
    int ctas;      /* thread blocks it holds */
} acc_tune_cost_t;

/* The cost of one allreduce of nbytes; ACC_ERR_UNSUPPORTED when algo has no times here. */
acc_status_t acc_tune_comm_cost(const acc_tune_comm_t *c, acc_tune_algo_t algo, uint64_t nbytes,
                                acc_tune_cost_t *out);

/* ---- fusion configurations (tuner/search.c) --------------------------------------------------
 *
 * How gradients become collectives.  The policies are those of the peers, and acc's own:
 *   NONE     one allreduce per tensor, launched as soon as it is ready;
 *   DDP      PyTorch DDP's buckets: assigned once, in gradient-ready order, per data type; a
 *            bucket closes when its size reaches its cap (so it overshoots by at most one
 *            tensor), the first bucket's cap is first_bytes and every later one fusion_bytes; a
 *            bucket is reduced when all its tensors are ready, strictly in bucket order;
 *   HOROVOD  Horovod's cycle: every cycle_ms the background loop takes the tensors that are
 *            ready on every rank, as rank 0 (its coordinator) finds out from the others and
 *            tells them, in order, and fuses them into buffers of at most fusion_bytes (a
 *            larger tensor goes alone); one buffer per data type and fusion;
 *   NEGOTIATE  the same without a coordinator: every cycle each rank contributes one word per
 *            tensor, ready or not, to one allreduce (MIN), which tells every rank at once what
 *            is ready everywhere, and all fuse exactly that set: for jobs whose ranks finish
 *            their gradients in different orders, with one collective per cycle instead of
 *            Horovod's reduce to rank 0 and broadcast back;
 *   ACC      acc's fusion: buffers filled in ready order up to fusion_bytes, per data type,
 *            launched as soon as the next tensor would not fit (a runtime knows every tensor's
 *            size in advance), when cycle_ms has passed since the buffer's first gradient was
 *            ready (cycle_ms > 0), or when the backward pass ends.
 * Each buffer goes to one of `streams` streams, by round robin or to the least-loaded one (the
 * stream whose queued work ends first); a stream reduces its buffers one after another.
 *
 * Compression: fp32 gradients may travel as fp16 or bf16 (cast when packed, reduced in the
 * 16-bit type with fp32 accumulation, cast back when unpacked; Horovod's and DDP's fp16 and
 * bf16 compression).  It halves the bytes each buffer of fp32 gradients puts on the network;
 * fusion_bytes still counts the gradients' own bytes, as DDP's bucket_cap_mb does under its
 * compression hooks.  Gradients of other types travel as they are.
 */
#define ACC_TUNE_MAX_STREAMS 16
/* Room for the text form of any configuration (acc_tune_config_format), NUL included. */
#define ACC_TUNE_CONFIG_TEXT_MAX 160

typedef enum {
    ACC_FUSION_NONE = 0,
    ACC_FUSION_DDP,
    ACC_FUSION_HOROVOD,
    ACC_FUSION_ACC,
    ACC_FUSION_NEGOTIATE,
    ACC_FUSION_POLICY_COUNT
} acc_fusion_policy_t;

typedef enum { ACC_STREAMS_ROUND_ROBIN = 0, ACC_STREAMS_LEAST_LOADED } acc_stream_assign_t;

typedef enum {
    ACC_COMPRESS_NONE = 0,
    ACC_COMPRESS_FP16,
    ACC_COMPRESS_BF16,
    ACC_COMPRESS_COUNT
} acc_compress_t;

const char *acc_compress_name(acc_compress_t c); /* "none", "fp16", "bf16"; "?" otherwise */
acc_status_t acc_compress_parse(const char *s, acc_compress_t *out);
/* A comma-separated list of compressions ("none,fp16") as a bit (1 << acc_compress_t) each;
 * an unknown or empty entry is ACC_ERR_INVALID naming it. */
acc_status_t acc_compress_parse_list(const char *text, unsigned *mask);
/* The type a gradient of type dt travels in under c: fp16 or bf16 for fp32, dt otherwise. */
acc_dtype_t acc_compress_dtype(acc_compress_t c, acc_dtype_t dt);

/* "none", "ddp", "horovod", "acc", "negotiate" */
const char *acc_fusion_policy_name(acc_fusion_policy_t p);
acc_status_t acc_fusion_policy_parse(const char *s, acc_fusion_policy_t *out);

typedef struct {
    acc_fusion_policy_t policy;
    uint64_t fusion_bytes; /* buffer / bucket cap, >= 1 (unused by NONE) */
    uint64_t first_bytes;  /* DDP's first bucket; 0: fusion_bytes */
    double cycle_ms;       /* HOROVOD: the cycle (> 0); ACC: the timeout (0: none) */
    int streams;           /* 1..ACC_TUNE_MAX_STREAMS */
    acc_stream_assign_t assign;
    acc_tune_algo_t algo;
    acc_compress_t compress;
} acc_tune_config_t;

/* Negotiation: buffers of at most fusion_bytes of what every rank has ready, agreed every
 * cycle_ms (> 0) by one allreduce; streams by round robin. */
void acc_tune_config_negotiate(acc_tune_config_t *c, uint64_t fusion_bytes, double cycle_ms,
                               int streams);
/* The peers' defaults (reference/03-fusion-autotune.md):
 *   DDP: 25 MiB buckets, a 1 MiB first bucket, one stream (reducer.hpp kDefaultBucketBytesCap,
 *        kDefaultFirstBucketBytes; one NCCL stream per process group);
 *   Horovod: 128 MiB fusion threshold and a 1 ms cycle, the defaults since Horovod PR #2468
 *        (2020; 64 MiB and 5 ms before), one stream (HOROVOD_NUM_NCCL_STREAMS=1);
 *   no fusion: one allreduce per tensor, one stream.
 * All three use NCCL's own choice of algorithm. */
void acc_tune_config_ddp(acc_tune_config_t *c);
void acc_tune_config_horovod(acc_tune_config_t *c);
void acc_tune_config_nofusion(acc_tune_config_t *c);
/* acc's policy with fusion_bytes, streams and algo; least-loaded streams, no timeout. */
void acc_tune_config_acc(acc_tune_config_t *c, uint64_t fusion_bytes, int streams,
                         acc_tune_algo_t algo);
acc_status_t acc_tune_config_check(const acc_tune_config_t *c);
/* Text form, as tuning runs store it: "policy=acc fusion=32M streams=2 algo=auto" plus
 * "first=1M", "cycle=1ms", "assign=rr|least" and "compress=fp16|bf16" where they differ from
 * the policy's default.
 * parse(format(c)) == c; parse rejects unknown keys and bad values, naming them. */
acc_status_t acc_tune_config_format(const acc_tune_config_t *c, char *buf, size_t size);
acc_status_t acc_tune_config_parse(const char *text, acc_tune_config_t *out);

/* ---- the training-iteration simulator (tuner/itersim.c) --------------------------------------
 *
 * One data-parallel training iteration on every GPU of the cluster, as seen by one rank:
 *
 *  - Compute.  The compute entry's time of one micro-batch is forward + backward, the
 *    optimizer step included as published; backward is acc_profile_backward_ms(), the rest
 *    (forward and the optimizer step) is not overlapped with communication.  With accumulation
 *    N the first N - 1 micro-batches only compute; the gradients are reduced during the
 *    backward pass of the last one.  The optimizer step really runs after the last reduction;
 *    counting it before the backward pass gives the same total, since nothing overlaps it.
 *  - Gradients.  Tensor i is ready after ready_i x backward of backward work.
 *  - Fusion and streams as in the configuration (above).
 *  - Collectives.  A collective alone costs lat + bw (acc_tune_comm_cost).  Collectives in
 *    flight on different streams share the links: their latency parts overlap freely and the
 *    bandwidth parts of the k in flight each progress at 1/k of the rate (processor sharing:
 *    every allreduce here spans every rank and loads the same links, so the fair share of the
 *    bottleneck is equal; NCCL's kernels on separate streams do run concurrently).
 *  - SMs.  A collective holds its CTAs' SMs while it runs (NCCL launches one CTA per channel,
 *    each resident for the whole kernel), so backward compute proceeds at
 *    1 - (CTAs in flight / SMs of the GPU), never below 0.  This is what makes streams cost
 *    something: each concurrent collective takes its own SMs.  opts.sm_contention = 0 turns
 *    it off.
 *  - Compression.  A buffer of fp32 gradients costs what its 16-bit form costs.
 *  - Rounds (HOROVOD, NEGOTIATE).  A round starts a cycle after the previous one started (or
 *    when it landed, if later; the first a cycle into the backward pass), finds the tensors
 *    copied by then, and lands the time of its collectives later (one allreduce of a word per
 *    tensor, or two for Horovod's reduce and broadcast), when its buffers are handed over.
 *  - Copies (opts.copy_gbs, cast_gbs, uncast_gbs; 0: not modelled).  A fusion engine on the
 *    host copies each gradient into its buffer when it is ready, on the thread that marks it,
 *    one after another (cast to 16 bits under compression), so a gradient reaches the policy
 *    when its copy ends, and the backward pass ends when the last copy does; after its
 *    allreduce a stream copies (or casts back) the buffer's gradients out before it takes its
 *    next buffer, a serial tail that shares no link.
 *  - The iteration ends when the backward pass has ended and the last reduction has landed.
 *
 * Not modelled: copies on GPUs (DDP reduces bucket views; device copies are small beside the
 * network), framework overheads per buffer (Horovod's response cache, kernel launches), skew
 * between ranks (and so the order in which they finish their gradients), the forward pass of the
 * next iteration overlapping the tail.
 *
 * Outputs: iteration time, compute-only time (one GPU: exactly the profile's time), the exposed
 * communication (the difference), and the scaling efficiency compute / iteration.
 */
typedef struct acc_itersim acc_itersim_t;

typedef struct {
    /* Fraction of the tensors simulated as separate units, 0 < fidelity <= 1: below 1,
     * consecutive tensors of one data type are merged into about fidelity x n groups of
     * similar size, each ready when its last member is (coarse evaluations for successive
     * halving; a group cannot be split between buffers).  1 (the default) is exact. */
    double fidelity;
    int sm_contention; /* 1 (default): collectives take SMs from compute; 0: they do not */
    /* The fusion engine's copies on the host, in GB/s of the gradients' own bytes: copied into
     * or out of a buffer, cast from fp32 to 16 bits, cast back.  0 (default): not modelled. */
    double copy_gbs, cast_gbs, uncast_gbs;
} acc_itersim_opts_t;

void acc_itersim_opts_init(acc_itersim_opts_t *opts);

/* A simulator of `profile` (borrowed, must outlive the simulator) computing as `compute` (one
 * of profile->compute; borrowed) on the cluster whose collectives `comm` (borrowed; NULL: one
 * GPU, no communication) prices.  opts may be NULL. */
acc_status_t acc_itersim_create(const acc_profile_t *profile, const acc_profile_compute_t *compute,
                                const acc_tune_comm_t *comm, const acc_itersim_opts_t *opts,
                                acc_itersim_t **out);
void acc_itersim_destroy(acc_itersim_t *sim);
/* The same iteration at another fidelity. */
acc_status_t acc_itersim_refine(const acc_itersim_t *sim, double fidelity, acc_itersim_t **out);

const acc_profile_t *acc_itersim_profile(const acc_itersim_t *sim);
const acc_tune_comm_t *acc_itersim_comm(const acc_itersim_t *sim);
double acc_itersim_fidelity(const acc_itersim_t *sim);
size_t acc_itersim_units(const acc_itersim_t *sim); /* tensors or groups simulated */

typedef struct {
    double iteration_ms; /* the whole iteration, accumulated micro-batches included */
    double compute_ms;   /* the same on one GPU: N x the compute entry's time */
    double exposed_ms;   /* iteration_ms - compute_ms */
    double efficiency;   /* compute_ms / iteration_ms, 0..1 */
    double backward_ms;  /* the last backward pass as simulated (stretched by SM use) */
    double tail_ms;      /* from the end of the backward pass to the last reduction, >= 0 */
    double comm_busy_ms; /* time with at least one collective in flight */
    size_t buffers;      /* collectives launched */
    uint64_t bytes;      /* gradient bytes reduced */
    uint64_t largest;    /* the largest buffer */
    int peak_inflight;   /* most collectives in flight at once */
    uint64_t events;     /* simulator events processed (its cost) */
} acc_itersim_result_t;

acc_status_t acc_itersim_run(const acc_itersim_t *sim, const acc_tune_config_t *config,
                             acc_itersim_result_t *out);

/* ---- the search (tuner/search.c, search_bayes.c, search_halving.c) -----------------------------
 *
 * The space: fusion sizes at each power of two from fusion_min to fusion_max (256 KiB to 1 GiB:
 * 13 sizes, a log scale), stream counts streams_min..streams_max (1 to 8), the collective
 * choices in `algos` (auto, acc, nccl) and the compressions in `compressions` (none by
 * default): 13 x 8 x 3 = 312 configurations by default, all with one fusion policy.  A
 * category is a pair (choice, compression), numbered choice first; point i of the space is
 * fusion i % F, streams (i / F) % S, category i / (F S).  The score of a configuration is its
 * iteration time, simulated or measured (acc_tune_search_opts_t.measure); lower is better.
 *
 * Strategies:
 *   GRID     every configuration (the reference);
 *   BAYES    Bayesian optimisation: a Gaussian process on log2(fusion) and streams, each scaled
 *            to [0, 1], with a Matern 5/2 kernel and the collective choice as a category
 *            (correlation rho between choices); log iteration time, standardised; length scales
 *            and rho chosen by marginal likelihood on a small grid; the next point is the
 *            unevaluated configuration of largest expected improvement (xi = 0.01, as Horovod),
 *            found by enumerating the space; it starts from the warm points and a stratified
 *            random design and stops at the budget or when no point is expected to improve;
 *   HALVING  successive halving: many configurations at low fidelity, the better half kept
 *            and re-evaluated at twice the fidelity, until the last rung at fidelity 1.
 *            Fidelity is acc_itersim_opts_t.fidelity: the iteration simulated with the tensor
 *            list merged into fewer, larger groups, which costs proportionally less and keeps
 *            the shape of the timeline; only full-fidelity scores can be the optimum.
 * Every evaluation, at any fidelity, counts one against the budget.  Warm points (optima
 * already known for similar models, topologies or networks) are evaluated first, at full
 * fidelity, by every strategy.
 */
typedef struct {
    acc_fusion_policy_t policy;      /* the policy tuned: ACC (default), DDP or HOROVOD */
    double cycle_ms;                 /* its cycle / timeout (acc_tune_config_t.cycle_ms) */
    acc_stream_assign_t assign;      /* default: the policy's */
    uint64_t fusion_min, fusion_max; /* powers of two */
    int streams_min, streams_max;    /* 1..ACC_TUNE_MAX_STREAMS */
    unsigned algos;                  /* bit (1 << acc_tune_algo_t) per choice searched */
    unsigned compressions;           /* bit (1 << acc_compress_t) per compression searched */
} acc_tune_space_t;

/* ACC policy, 256 KiB..1 GiB, 1..8 streams, every choice, no compression, least-loaded, no
 * timeout. */
void acc_tune_space_init(acc_tune_space_t *s);
acc_status_t acc_tune_space_check(const acc_tune_space_t *s);
size_t acc_tune_space_size(const acc_tune_space_t *s);
size_t acc_tune_space_fusions(const acc_tune_space_t *s);
int acc_tune_space_streams(const acc_tune_space_t *s);
int acc_tune_space_algos(const acc_tune_space_t *s);      /* number of choices searched */
int acc_tune_space_categories(const acc_tune_space_t *s); /* choices x compressions */
void acc_tune_space_config(const acc_tune_space_t *s, size_t index, acc_tune_config_t *out);
/* The point nearest to c: fusion rounded in log2 and clamped, streams clamped, algo and
 * compression as c's when searched, else the first searched.  For warm starts. */
size_t acc_tune_space_nearest(const acc_tune_space_t *s, const acc_tune_config_t *c);

typedef enum {
    ACC_SEARCH_GRID = 0,
    ACC_SEARCH_BAYES,
    ACC_SEARCH_HALVING,
    ACC_SEARCH_STRATEGY_COUNT
} acc_search_strategy_t;

const char *acc_search_strategy_name(acc_search_strategy_t s); /* "grid", "bayes", "halving" */
acc_status_t acc_search_strategy_parse(const char *s, acc_search_strategy_t *out);

typedef struct {
    acc_tune_config_t config;
    size_t index;    /* in the space */
    double fidelity; /* 1: exact */
    int warm;        /* 1: a warm-start point */
    acc_itersim_result_t result;
    double seconds; /* wall time of the evaluation */
} acc_tune_eval_t;

/* Called after each evaluation (to store it, to show progress); `done` evaluations of at most
 * `budget` so far.  A status other than ACC_OK stops the search with that status. */
typedef acc_status_t (*acc_tune_eval_fn)(void *ctx, const acc_tune_eval_t *e, size_t done,
                                         size_t budget);
/* Measure configuration c (on the machine, instead of simulating it): at least out's
 * iteration_ms, the rest where known, 0 otherwise.  A status other than ACC_OK stops the
 * search with that status. */
typedef acc_status_t (*acc_tune_measure_fn)(void *ctx, const acc_tune_config_t *c,
                                            acc_itersim_result_t *out);

typedef struct {
    acc_search_strategy_t strategy;
    /* Most evaluations; 0: GRID every point, BAYES and HALVING a quarter of the space. */
    size_t budget;
    uint64_t seed;                 /* same seed, same evaluations */
    const acc_tune_config_t *warm; /* borrowed; nwarm of them */
    size_t nwarm;
    acc_tune_eval_fn on_eval; /* may be NULL */
    void *ctx;
    /* When set, every evaluation is a measurement (fidelity 1) and the search runs without a
     * simulator; successive halving, whose rungs are the simulator's fidelities, refuses it. */
    acc_tune_measure_fn measure;
    void *measure_ctx;
} acc_tune_search_opts_t;

void acc_tune_search_opts_init(acc_tune_search_opts_t *opts);

typedef struct {
    acc_search_strategy_t strategy;
    acc_tune_eval_t *evals; /* in the order made */
    size_t nevals;
    size_t best;    /* the full-fidelity evaluation of least iteration time; among equal
                       times the fewest streams, then the smallest fusion size */
    double cost;    /* sum of the evaluations' fidelities: full-evaluation equivalents */
    double seconds; /* wall time of the search */
} acc_tune_search_result_t;

/* Search `space` with `sim` (fidelity 1), or with opts->measure (then sim may be NULL).  The
 * space's choices must be ones sim's collective times have (ACC_ERR_UNSUPPORTED naming the one
 * missing). */
acc_status_t acc_tune_search(const acc_itersim_t *sim, const acc_tune_space_t *space,
                             const acc_tune_search_opts_t *opts, acc_tune_search_result_t **out);
void acc_tune_search_result_destroy(acc_tune_search_result_t *r);

/* ---- reports (tuner/tune_report.c) -----------------------------------------------------------
 *
 * What a search found, beside the peers' defaults: a text table, CSV, and an SVG heatmap of
 * iteration time over fusion size x streams.  Points come from a search (acc_tune_point_from_eval)
 * or from tuning runs read back from the database.
 */
typedef struct {
    char label[32]; /* the strategy ("grid", "bayes", ...) or baseline's name */
    acc_tune_config_t config;
    double fidelity; /* 1: exact */
    double iteration_ms;
    double compute_ms; /* the compute-only time; <= 0: unknown */
    size_t buffers;    /* collectives per iteration; 0: unknown */
} acc_tune_point_t;

void acc_tune_point_from_eval(const acc_tune_eval_t *e, const char *label, acc_tune_point_t *out);
/* "DDP defaults", "Horovod defaults", "no fusion" for the three baselines, by policy; else the
 * policy's name. */
const char *acc_tune_baseline_label(acc_fusion_policy_t p);

typedef struct {
    const char *title;              /* "resnet50 on dgx-h100-2node (16 GPUs)" */
    const acc_tune_point_t *points; /* evaluations, any fidelity; may be NULL */
    size_t npoints;
    const acc_tune_point_t *best;      /* the optimum; NULL when none */
    const acc_tune_point_t *baselines; /* may be NULL */
    size_t nbaselines;
} acc_tune_report_t;

/* The optimum and every baseline with iteration time, exposed communication, efficiency and
 * the optimum's speedup over it; then the best evaluated configurations (up to `top`). */
acc_status_t acc_tune_report_text(const acc_tune_report_t *r, size_t top, acc_buf_t *out);
/* One row per point and baseline: label, policy, fusion_bytes, first_bytes, cycle_ms, streams,
 * assign, algo, fidelity, iteration_ms, compute_ms, exposed_ms, efficiency, buffers. */
acc_status_t acc_tune_report_csv(const acc_tune_report_t *r, acc_buf_t *out);
/* Heatmap: fusion size across, streams down, each cell the best full-fidelity time of its
 * (fusion, streams) over the collective choices and of the optimum's policy; the optimum
 * ringed; the baselines and the optimum's speedup over each listed below.  ACC_ERR_NOT_FOUND
 * when there is no full-fidelity point to draw. */
acc_status_t acc_tune_report_svg(const acc_tune_report_t *r, acc_buf_t *out);

/* ---- the tuning key (tuner/tune_target.c) ----------------------------------------------------
 *
 * A tuning result belongs to a key: the model (its profile's name), the cluster (the fingerprint
 * of the topology with the network applied) and the network's name.  The fingerprint depends on
 * what the cluster is, not on how it was described, so the topology's own network given again as
 * parameters is the same key.  The network's name in a key is, on more than one node: the stored
 * network's name when a network was named, else the fabric's name (fabric=... of the parameters
 * or of the topology), else the parameters as given (their first 63 characters), else "net"; on
 * one node it is "" (there is no network).
 *
 * A network is given as the name of a network stored in the database (acc_db_put_network; a
 * string without '='), as parameters "nic=GBPS latency=US rail=0|1 oversub=X nodes=N
 * fabric=NAME" (acc_topo_with_network), or as NULL for the topology's own.
 */
typedef struct {
    char model[ACC_DB_NAME_MAX];
    char fingerprint[ACC_SHA256_HEX_LEN + 1];
    char network[ACC_DB_NAME_MAX];
} acc_tune_key_t;

/* What a key is made of.  The fields are read-only. */
typedef struct {
    acc_tune_key_t key;
    acc_profile_t *profile;               /* the model */
    acc_profile_origin_t origin;          /* where the profile was found */
    acc_topo_t *topo;                     /* finalized, the network applied */
    const acc_profile_compute_t *compute; /* the profile's entry for the topology's GPU */
} acc_tune_target_t;

/* The cluster's part of a key: *topo (new, finalized) is base (borrowed) with `network` applied
 * (db, which may be NULL, is asked for a named one), and key gets its fingerprint and network
 * name; key->model is left "".  A name not in db is ACC_ERR_NOT_FOUND, an empty network
 * ACC_ERR_INVALID, bad parameters as acc_topo_with_network says. */
acc_status_t acc_tune_network_apply(const acc_topo_t *base, const char *network, acc_db_t *db,
                                    acc_topo_t **topo, acc_tune_key_t *key);
/* The target of `model` (found as acc_profile_find finds it for the topology's GPU: a profile
 * file, else a recording in db for that GPU, else a shipped profile) on `topo` (borrowed) with
 * `network` applied, computing in the profile's entry for the topology's GPU of `precision`
 * (NULL: the first listed for that GPU).  A profile without an entry for the GPU is
 * ACC_ERR_NOT_FOUND listing those it has. */
acc_status_t acc_tune_target_create(const char *model, const acc_topo_t *topo, const char *network,
                                    const char *precision, acc_db_t *db, acc_tune_target_t **out);
/* The same with topo as acc_topo_load takes it ("dgx-h100", a file, "auto" for this machine). */
acc_status_t acc_tune_target_load(const char *model, const char *topo, const char *network,
                                  const char *precision, acc_db_t *db, acc_tune_target_t **out);
void acc_tune_target_destroy(acc_tune_target_t *t);
/* "resnet50 on dgx-h100-2node (16 GPUs, H100 SXM5 80GB, fp16, batch 1280), network ib-ndr" */
void acc_tune_target_title(const acc_tune_target_t *t, char *buf, size_t n);

/* ---- what the database keeps of tuning (tuner/tune_store.c) ----------------------------------
 *
 * Every evaluation is a tuning run of its key: its configuration in text form
 * (acc_tune_config_format), its iteration time, the strategy that made it (a search strategy's
 * name, ACC_TUNE_RUN_WARM for a warm start, ACC_TUNE_RUN_BASELINE for a peer's defaults) and the
 * method: "itersim", or "itersim@F" for an evaluation at fidelity F < 1, or ACC_TUNE_MEASURED
 * for an iteration time measured on the machine (the runtime's online tuning).  The best
 * full-fidelity evaluation of a search is the key's optimum; a key keeps a simulated and a
 * measured one, and the runtime starts from the measured one when there is one.
 */
#define ACC_TUNE_RUN_WARM     "warm"
#define ACC_TUNE_RUN_BASELINE "baseline"
#define ACC_TUNE_MEASURED     "measured"

typedef struct {
    acc_tune_config_t config;
    double iteration_ms; /* simulated, or measured */
    int64_t run_id;      /* the tuning run that found it; 0: none */
    int measured;        /* 1: measured on the machine; 0: simulated */
} acc_tune_optimum_t;

/* Store the target's profile (with where it came from: acc_profile_origin_text, cut to
 * ACC_DB_TEXT_MAX) and topology, which its runs and optimum refer to. */
acc_status_t acc_tune_store_prepare(acc_db_t *db, const acc_tune_target_t *t);
/* Add one evaluation of key as a tuning run; id (optional) receives its id.  The measured
 * form stores a time measured on the machine (method ACC_TUNE_MEASURED). */
acc_status_t acc_tune_run_add(acc_db_t *db, const acc_tune_key_t *key, const acc_tune_config_t *c,
                              double fidelity, double iteration_ms, const char *strategy,
                              double seconds, int64_t *id);
acc_status_t acc_tune_run_add_measured(acc_db_t *db, const acc_tune_key_t *key,
                                       const acc_tune_config_t *c, double iteration_ms,
                                       const char *strategy, double seconds, int64_t *id);
/* Set key's simulated or measured optimum (opt->measured), replacing the previous one. */
acc_status_t acc_tune_optimum_put(acc_db_t *db, const acc_tune_key_t *key,
                                  const acc_tune_optimum_t *opt);
/* key's optimum: the measured one when the database has one, else the simulated one.
 * ACC_NO_DATA (not a failure; *out zeroed, the message names the key) when it has neither;
 * ACC_ERR_PARSE when the one it would return is unusable.  One written by another program
 * without acc's text form is read from its fusion size, streams and algorithm under acc's
 * policy. */
acc_status_t acc_tune_optimum_get(acc_db_t *db, const acc_tune_key_t *key, acc_tune_optimum_t *out);
/* Warm starts: the configurations of up to max stored optima of keys similar to key, most
 * similar first: the same key, then the same model and topology (another network name), then
 * the same model, then the same topology; within each the measured before the simulated, else
 * in the database's order.  Optima that are unusable are skipped. */
acc_status_t acc_tune_warm_starts(acc_db_t *db, const acc_tune_key_t *key, acc_tune_config_t *out,
                                  size_t max, size_t *n);
/* key's runs of the simulator as report points, best first, and the baselines (the best run of
 * each) apart in the order DDP, Horovod, no fusion.  compute_ms and buffers are unknown (0).
 * *points and *baselines taken (acc_mem_free). */
acc_status_t acc_tune_report_points(acc_db_t *db, const acc_tune_key_t *key,
                                    acc_tune_point_t **points, size_t *npoints,
                                    acc_tune_point_t **baselines, size_t *nbaselines);

#ifdef __cplusplus
}
#endif
#endif /* ACC_TUNE_H */
