/*
 * acc_select.h - the selection table: for one topology and one collective, which schedule to use
 * for which message size.  The same structure serves the compiler's defaults, user overrides,
 * the database and the runtime; beside it, NCCL's own choice per size serves the NCCL tuner
 * plugin.
 *
 * A table is a sorted list of non-overlapping byte ranges [min_bytes, max_bytes], each naming
 * either an acc plan (algorithm, parameters, and the hash of its verified IR text) or "NCCL" with
 * the algorithm and protocol NCCL would use.  Ranges need not cover every size: a size outside
 * every range means "no advice" (plain NCCL).  Conventions as in acc_common.h.
 *
 * Each entry also says which of the runtime's backends can run its choice (acc_plan_backends,
 * the one rule, decided where the table is built): an acc plan whose steps cross nodes runs on
 * the host backend but not on the cuda backend, which gives such calls to NCCL; NCCL's own
 * ranges run on GPUs (the cuda backend) only - the host backend serves them with acc's ring.
 * So a GPU job (the cuda backend, the drop-in NCCL) takes an acc range only where
 * acc_select_entry_runs_on says the cuda backend runs it, and NCCL everywhere else.
 */
#ifndef ACC_SELECT_H
#define ACC_SELECT_H

#include "acc_cplan.h"
#include "acc_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    ACC_SELECT_MODEL = 0, /* predicted by the cost model */
    ACC_SELECT_MEASURED,  /* measured with acc-bench or online */
    ACC_SELECT_USER,      /* a user override */
    ACC_SELECT_SOURCE_COUNT
} acc_select_source_t;

typedef struct {
    uint64_t min_bytes, max_bytes;    /* inclusive */
    int use_nccl;                     /* 1: leave this range to NCCL */
    char algo[ACC_PLAN_NAME_MAX];     /* acc: generator name; NCCL: "Ring", "Tree", "NVLS", ... */
    char params[ACC_PLAN_PARAMS_MAX]; /* acc: the plan's params; NCCL: "proto=LL128 channels=24" */
    char plan_hash[ACC_SHA256_HEX_LEN + 1]; /* acc: SHA-256 of the plan's YAML text; "" for NCCL */
    double predicted_us;                    /* at the range's lower end; < 0 unknown */
    double measured_us;                     /* < 0 unknown */
    acc_select_source_t source;
    /* ACC_BACKENDS_*: the backends that can run this choice - for acc's plans
     * acc_plan_backends(plan, the topology's GPUs per node), for NCCL's ACC_BACKENDS_CUDA.
     * Whoever makes an entry sets it: 0 runs nowhere (every backend's fallback serves it). */
    unsigned backends;
} acc_select_entry_t;

typedef struct {
    acc_coll_t coll;
    char topo_fingerprint[ACC_SHA256_HEX_LEN + 1];
    acc_select_entry_t *entries; /* sorted by min_bytes, non-overlapping */
    size_t n, cap;
} acc_select_table_t;

const char *acc_select_source_name(acc_select_source_t s); /* "model", "measured", "user" */
acc_status_t acc_select_source_parse(const char *s, acc_select_source_t *out);

acc_status_t acc_select_create(acc_coll_t coll, const char *topo_fingerprint,
                               acc_select_table_t **out);
void acc_select_destroy(acc_select_table_t *t);
/* Add an entry; it must not overlap an existing one (ACC_ERR_INVALID naming both ranges). */
acc_status_t acc_select_add(acc_select_table_t *t, const acc_select_entry_t *e);
/* Join neighbouring entries that name the same choice (same use_nccl, algo, params and plan hash)
 * and whose ranges touch (max + 1 == next min), keeping the first predicted time. */
void acc_select_merge(acc_select_table_t *t);
/* The entry whose range holds nbytes, or NULL.  O(log n). */
const acc_select_entry_t *acc_select_lookup(const acc_select_table_t *t, uint64_t nbytes);
/* Does `backend` run acc's plan of e?  0 for NCCL's ranges and for a plan it cannot run, which
 * that backend's fallback serves (NCCL on the cuda backend). */
int acc_select_entry_runs_on(const acc_select_entry_t *e, acc_backend_t backend);
/* Same choice? (ignores range and times) */
int acc_select_same_choice(const acc_select_entry_t *a, const acc_select_entry_t *b);

/* ---- building tables from the cost models --------------------------------------------------
 *
 * acc_select_build() fills a table for one collective on one topology from predictions: at
 * every size of the sweep (each power of two from min_bytes to max_bytes; by default 1 KiB to
 * 4 GiB) it simulates every applicable generator of acc_algo_list() with its parameter variants
 * (lanes, chunks, inner/outer for hierarchical ones, each protocol), keeps acc's fastest, puts it
 * beside NCCL's own choice (acc_nccl_model_select) and the lower bound (acc_cost_bound), and
 * records the faster of the two.  A size's entry spans up to the next size of the sweep; equal
 * neighbours are merged (acc_select_merge).  Collectives NCCL's model does not cover (broadcast,
 * reduce) get acc's plans only.
 *
 * Each variant is generated and verified once (acc_algo_generate: plans do not depend on the
 * size) and simulated at every size, by a few threads with one simulator each, made once per
 * builder.  A variant is not simulated at a size where its time at a smaller size already
 * exceeds acc's best there: the simulator's times do not fall as the size grows
 * (opts.exhaustive turns this off, for tests).  Ties go to the earlier candidate, so the result
 * does not depend on the threads.  Plans that lose everywhere are freed as soon as they do, so
 * that 1024-rank sweeps stay within memory.  Which variants are tried is in
 * compiler/select_variants.c: fewer on large topologies, where plans have millions of
 * operations.
 *
 * Times are microseconds, bandwidths GB/s, sizes NCCL's nBytes (acc_cost.h).
 */
#include "acc_cost.h"

/* A time measured on the topology for one plan at one size (acc_db_get_measurements reads the
 * ones a database holds); the table builder prefers it to its model's prediction. */
typedef struct {
    acc_coll_t coll;
    char plan_hash[ACC_SHA256_HEX_LEN + 1]; /* acc_plan_hash of the plan as run, its protocol in */
    uint64_t nbytes;                        /* NCCL's nBytes */
    double us;
} acc_select_measured_t;

/* ---- NCCL's own choice per size -------------------------------------------------------------
 *
 * For one topology and collective: the algorithm, protocol and channel count NCCL runs in each
 * size range, as acc's selection found them (NCCL's model today, measurements when they exist),
 * whether or not the selection table leaves the range to NCCL.  It is what the NCCL tuner plugin
 * serves to jobs that keep NCCL's kernels.  Ranges as in the selection table: sorted,
 * non-overlapping, inclusive, keyed by NCCL's nBytes; a size outside every range means "no
 * advice". */
typedef struct {
    uint64_t min_bytes, max_bytes; /* inclusive */
    acc_nccl_algo_t algo;
    acc_nccl_proto_t proto;
    int channels;        /* 0: NCCL's own count; else the count to ask NCCL for */
    double predicted_us; /* at the range's lower end; < 0 unknown */
    double measured_us;  /* < 0 unknown */
    acc_select_source_t source;
} acc_select_nccl_entry_t;

typedef struct {
    acc_coll_t coll;
    char topo_fingerprint[ACC_SHA256_HEX_LEN + 1];
    acc_select_nccl_entry_t *entries; /* sorted by min_bytes, non-overlapping */
    size_t n, cap;
} acc_select_nccl_t;

acc_status_t acc_select_nccl_create(acc_coll_t coll, const char *topo_fingerprint,
                                    acc_select_nccl_t **out);
void acc_select_nccl_destroy(acc_select_nccl_t *t);
/* Add a range after the last one.  ACC_ERR_INVALID when it is empty, starts at or before the
 * last one's end, or names an algorithm or protocol outside NCCL's numbering, negative channels
 * or an unknown source.  A range that touches the last one and names the same algorithm,
 * protocol and channels extends it (keeping the first times). */
acc_status_t acc_select_nccl_append(acc_select_nccl_t *t, const acc_select_nccl_entry_t *e);
/* The range that holds nbytes, or NULL.  O(log n). */
const acc_select_nccl_entry_t *acc_select_nccl_lookup(const acc_select_nccl_t *t, uint64_t nbytes);

typedef struct {
    uint64_t min_bytes, max_bytes; /* the sweep; 0: 1 KiB and 4 GiB */
    acc_dtype_t dtype;             /* element type the simulator reduces; default float */
    int max_lanes;                 /* most lanes tried; 0: from the topology */
    int exhaustive;                /* 1: simulate every variant at every size */
    int threads;                   /* 0: one per online CPU, at most 8; else 1 to 16 */
    acc_nccl_options_t nccl;       /* the NCCL replica's options */
    /* Times measured on this topology with this data type (borrowed, any collectives): a
     * candidate plan whose hash and size one names takes that time instead of its prediction,
     * and is never pruned; the entry it wins records it (measured_us, ACC_SELECT_MEASURED). */
    const acc_select_measured_t *measured;
    size_t nmeasured;
} acc_select_build_opts_t;

/* Defaults: 1 KiB .. 4 GiB, float, lanes from the topology, pruning on, threads per CPU, NCCL's
 * defaults. */
void acc_select_build_opts_init(acc_select_build_opts_t *opts);

/* One size of the sweep. */
typedef struct {
    uint64_t nbytes;
    int use_nccl; /* the table's choice here: 1 NCCL, 0 acc's plan */
    /* acc's fastest plan at this size (whether or not chosen); plan -1 when none applies */
    int plan; /* index into the result's plans */
    double acc_us, acc_algbw, acc_busbw;
    int acc_measured;        /* 1: acc_us was measured (opts.measured), not predicted */
    double acc_predicted_us; /* the model's time for that plan */
    /* NCCL's choice as its model predicts it; nccl_ok 0 when NCCL has no model for this
     * collective */
    int nccl_ok;
    acc_nccl_choice_t nccl;
    double speedup; /* NCCL's time / acc's best time; 0 when either is missing */
    /* bound_ok 0 when acc_cost_bound has no bound for this collective */
    int bound_ok;
    acc_bound_t bound;
    double bound_fraction; /* bound.us / the chosen time (acc's or NCCL's), 0..1; 0 unknown */
} acc_select_row_t;

/* A plan the table names, with the params and hash its entries carry. */
typedef struct {
    acc_plan_t *plan;                  /* verified; plan->proto is the protocol chosen; by
                                          class, the quotient the simulator played */
    acc_cplan_t *cplan;                /* by class (above ACC_SELECT_CLASS_RANKS): the class
                                          plan, proven by class, its proto set too (for an
                                          explicit plan a table names, its one-class-per-rank
                                          form, which names and stores it); else NULL */
    char params[ACC_PLAN_PARAMS_MAX];  /* the generator's params and "proto=..." */
    char hash[ACC_SHA256_HEX_LEN + 1]; /* SHA-256 of acc_plan_dump_yaml(plan), or by class of
                                          its binary form (acc_cplan_hash); "" when no table
                                          entry names the plan (NCCL keeps its sizes) */
} acc_select_plan_t;

typedef struct {
    acc_coll_t coll;
    acc_dtype_t dtype;
    char topo_name[ACC_PLAN_PARAMS_MAX]; /* the topology's name, else its source */
    int nranks, nodes, gpus_per_node;
    acc_select_row_t *rows; /* one per size of the sweep, ascending */
    size_t nrows;
    acc_select_table_t *table; /* merged, source ACC_SELECT_MODEL */
    /* NCCL's choice at every size of the sweep, merged; NULL when NCCL's model does not cover
     * the collective (broadcast, reduce) */
    acc_select_nccl_t *nccl;
    acc_select_plan_t *plans; /* every plan some row names */
    size_t nplans;
    size_t variants; /* plans generated and verified */
    /* acc_sim_plan calls made: depends on the order the sweep's threads finish in (a
     * candidate is pruned at a size once another has beaten it there), so it varies between
     * identical runs while the table does not; reports leave it out. */
    size_t simulations;
    /* Above ACC_SELECT_CLASS_RANKS: a line for each generator the sweep left out, and why
     * ("allreduce hier (inner=direct outer=ring): ..."). */
    char **left_out;
    size_t nleft_out;
} acc_select_result_t;

/* Above this many ranks a sweep works by class: a generator with a class form (acc_cplan.h)
 * is built and proven in it and priced on its quotient, one node's ranks played
 * (acc_cplan_quotient); one without is built rank by rank as below this, and left out, with
 * its reason in left_out, where that cannot be done (the explicit form's limits).  At and
 * below it every plan is built rank by rank, as tables were before classes. */
#define ACC_SELECT_CLASS_RANKS 4096

/* Is a sweep of nranks ranks by class? */
static inline int acc_select_by_class(int nranks)
{
    return nranks > ACC_SELECT_CLASS_RANKS;
}

typedef struct acc_select_builder acc_select_builder_t;

/* A builder for one topology (borrowed, finalized; must outlive the builder): the NCCL model and
 * the simulators are made once here and shared by every collective built.  opts may be NULL.
 * One builder, one calling thread at a time (it runs its own worker threads). */
acc_status_t acc_select_builder_create(const acc_topo_t *topo, const acc_select_build_opts_t *opts,
                                       acc_select_builder_t **out);
void acc_select_builder_destroy(acc_select_builder_t *b);
/* The sweep and table of one collective.  ACC_ERR_UNSUPPORTED when neither acc nor NCCL's model
 * has anything for it (alltoall). */
acc_status_t acc_select_build(acc_select_builder_t *b, acc_coll_t coll, acc_select_result_t **out);
void acc_select_result_destroy(acc_select_result_t *r);
/* The collectives acc_select_build makes tables for, in enum order (all but alltoall). */
const acc_coll_t *acc_select_colls(size_t *count);

/* ---- the report of a sweep (compiler/report.c, report_svg.c) ----
 * Text: per size the chosen plan, predicted time, algbw, busbw, NCCL's choice and time, the
 * speedup and the fraction of the bound, then the merged table, each range with the backends
 * that run it (acc_select_backends_text) and the notes that say why GPUs get NCCL.  JSON: the
 * same as one object {"topology", "ranks", "dtype", "collectives": [{"collective", "sizes":
 * [...], "selection": [...], "left_out": [...]}]}, each selection entry with "backends" (["host",
 * "cuda"]), "gpus" ("acc" or "nccl": what a GPU job runs there) and "gpus_why" (the rule, ""
 * where acc), "left_out" the lines of acc_select_result_t.left_out (the text has them under the
 * result's first line).  SVG: busbw
 * against size for acc, NCCL (model) and the bound, one panel per result. */
acc_status_t acc_select_report_text(const acc_select_result_t *const *res, size_t n,
                                    acc_buf_t *out);
acc_status_t acc_select_report_json(const acc_select_result_t *const *res, size_t n,
                                    acc_buf_t *out);
/* The short text: per result a line of what it is and its merged table, without the per-size
 * rows (acc-compile --report of every collective). */
acc_status_t acc_select_report_ranges(const acc_select_result_t *const *res, size_t n,
                                      acc_buf_t *out);
acc_status_t acc_select_report_svg(const acc_select_result_t *const *res, size_t n, acc_buf_t *out);

/* Which backend runs each range, for the reports and acc-compile --print-selection.  A range's
 * text is "runs on: host cuda" where both run acc's plan, "runs on: host; GPUs: NCCL (1)" where
 * the cuda backend cannot, its note (1) the rule that keeps it from doing so, and "GPUs: NCCL;
 * host backend: acc's ring" for NCCL's ranges.  The notes are numbered in order of first use;
 * beyond ACC_SELECT_NOTES_MAX distinct rules a range has no number. */
#define ACC_SELECT_NOTES_MAX 8
typedef struct {
    char rules[ACC_SELECT_NOTES_MAX][256];
    int count;
} acc_select_notes_t;
void acc_select_notes_init(acc_select_notes_t *n);
/* The rule's number (from 1), added when new; 0 when the notes are full. */
int acc_select_note(acc_select_notes_t *n, const char *rule);
/* Why the cuda backend does not run acc's entry e, whose plan is `plan` (borrowed; NULL when it
 * could not be read) on nodes of ranks_per_node ranks: acc_plan_runs_on's rule, e.g. "the cuda
 * backend runs multi-node plans through NCCL"; "" where it does, and for NCCL's ranges. */
void acc_select_gpu_rule(const acc_select_entry_t *e, const acc_plan_t *plan, int ranks_per_node,
                         char *out, size_t cap);
/* e's text as above, rule being acc_select_gpu_rule's. */
void acc_select_backends_text(const acc_select_entry_t *e, acc_select_notes_t *n, const char *rule,
                              char *out, size_t cap);
/* The notes, one a line: "  (1) RULE". */
void acc_select_notes_text(const acc_select_notes_t *n, acc_buf_t *out);
/* A named series of busbw (GB/s) by message size (bytes), n points, borrowed. */
typedef struct {
    const char *name;
    const uint64_t *bytes;
    const double *busbw;
    size_t n;
} acc_select_series_t;

/* Bus bandwidth against message size for n series on log-log axes (acc-bench --plot), each a
 * <path class="series" data-series="NAME"> with a point per size; title and subtitle may be
 * NULL.  Points of size 0 or busbw <= 0 are left out (a gap). */
acc_status_t acc_select_series_svg(const char *title, const char *subtitle,
                                   const acc_select_series_t *s, size_t n, acc_buf_t *out);
/* The tables (borrowed, each with at least one range) as an SVG picture (acc-compile
 * --print-selection --plot): a row per table on a log size axis, a <rect class="band"
 * data-collective="C" data-choice="acc|nccl"> per range, coloured by the algorithm that serves
 * it, labelled where it fits, with a legend; topo_name goes into the title. */
acc_status_t acc_select_bands_svg(const acc_select_table_t *const *tables, size_t n,
                                  const char *topo_name, acc_buf_t *out);

#ifdef __cplusplus
}
#endif
#endif /* ACC_SELECT_H */
