/*
 * acc_db.h - the acc database: one SQLite file holding topologies, plans, selection tables,
 * NCCL's own choice per size, kernels, model profiles, networks, tuning runs and optima.  All SQL
 * lives in db/; the rest of acc calls the typed functions below.  The schema and its meaning are in
 * db/SCHEMA.md.
 *
 * Files.  An acc database carries PRAGMA application_id ACC_DB_APPLICATION_ID and its schema
 * version in PRAGMA user_version.  Opening for writing creates a missing or empty file and
 * upgrades an older schema in place (forward migrations, one transaction); it refuses, without
 * touching the file, anything else: another program's SQLite file, a newer schema, a damaged or
 * truncated file, random bytes, a read-only file or directory.  Every refusal names the file and
 * says what to do.  The file is in WAL mode while written, so that many processes read while
 * one writes; the last writer to close it leaves it in rollback-journal mode, one file that any
 * user reads from a read-only directory or mount without writing anything.
 *
 * Writes.  Every put/add is one transaction: after a crash, a full disk or a kill the file holds
 * either the previous state or the new one, never a mix.  Writers wait for each other (SQLite's
 * busy timeout, then retries with exponential backoff, ACC_DB_BUSY_MS in all) and fail with
 * ACC_ERR_BUSY after that.  Storing the same thing twice leaves the file as it was: every table
 * has a natural key and puts are upserts.
 *
 * Trust.  Nothing read back is trusted: a topology must reproduce its fingerprint, a plan its
 * hash, and a plan must pass acc_plan_verify again, or the load fails with a message and returns
 * nothing.  The runtime opens files with acc_db_open_runtime(), which turns every problem into
 * ACC_DB_NO_DATA and one warning, so that a training job never fails because of acc.
 *
 * Errors, ownership and threads as in acc_common.h; SQLite errors become ACC_ERR_SQLITE (or
 * ACC_ERR_BUSY, ACC_ERR_IO, ACC_ERR_NOMEM where closer) with SQLite's code and message kept.  An
 * acc_db_t is one connection: use it from one thread at a time; open one per thread or process.
 */
#ifndef ACC_DB_H
#define ACC_DB_H

#include "acc_common.h"
#include "acc_cplan.h"
#include "acc_kernels.h"
#include "acc_plan.h"
#include "acc_select.h"
#include "acc_topo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACC_DB_APPLICATION_ID 0x41434331 /* "ACC1" in the file header */
#define ACC_DB_SCHEMA_VERSION 12         /* the newest schema this acc reads and writes */
/* Longest time a call waits for other writers before giving up with ACC_ERR_BUSY. */
#define ACC_DB_BUSY_MS 30000

/* acc_db_open_runtime's answer when the file cannot be used: not a failure of the caller, who
 * carries on without acc data (plain NCCL behaviour).  Positive, so that it is neither ACC_OK
 * nor one of the ACC_ERR_* failures. */
#define ACC_DB_NO_DATA ACC_NO_DATA

/* Lengths of the text fields of the records below, terminating NUL included.  Longer values are
 * refused with ACC_ERR_RANGE when stored, never cut. */
#define ACC_DB_NAME_MAX 64
#define ACC_DB_TEXT_MAX 256

typedef struct acc_db acc_db_t;

/* ---- opening ---------------------------------------------------------------------------- */
enum {
    ACC_DB_READONLY = 1 << 0, /* never write; the file must exist and have the current schema */
    ACC_DB_CHECK = 1 << 1,    /* also run SQLite's quick_check (always done for writers) */
};

/* Open or create the database at path.  *out is NULL on failure. */
acc_status_t acc_db_open(const char *path, unsigned flags, acc_db_t **out);
/* The runtime's open: read-only, and any problem (missing, foreign, damaged, older or newer
 * schema, NULL or empty path) gives ACC_DB_NO_DATA with *out NULL, the reason in
 * acc_error_message(), and one warning "no usable data" per process (later ones at debug
 * level).  Never fails otherwise. */
acc_status_t acc_db_open_runtime(const char *path, acc_db_t **out);
void acc_db_close(acc_db_t *db);
const char *acc_db_path(const acc_db_t *db);
int acc_db_schema_version(const acc_db_t *db);

/* ---- topologies, by fingerprint --------------------------------------------------------- */
typedef struct {
    char fingerprint[ACC_SHA256_HEX_LEN + 1];
    char name[ACC_DB_NAME_MAX];
    char format[32];              /* acc_topo_format_name of the input it came from */
    char source[ACC_DB_TEXT_MAX]; /* display text: a longer path keeps its end after "..." */
    int nodes, gpus_per_node;
} acc_db_topo_info_t;

/* Store a finalized topology (its canonical YAML, name, source and format); fp_out (optional)
 * receives its fingerprint.  A stored topology of the same fingerprint is replaced. */
acc_status_t acc_db_put_topology(acc_db_t *db, const acc_topo_t *topo,
                                 char fp_out[ACC_SHA256_HEX_LEN + 1]);
/* Load and finalize; fails if the stored text no longer gives this fingerprint. */
acc_status_t acc_db_get_topology(acc_db_t *db, const char *fingerprint, acc_topo_t **out);
/* Every stored topology, by name then fingerprint; *out taken (acc_mem_free). */
acc_status_t acc_db_list_topologies(acc_db_t *db, acc_db_topo_info_t **out, size_t *count);

/* ---- plans, by SHA-256 of their YAML text ------------------------------------------------ */
/* Store a plan that has passed acc_plan_verify; hash_out (optional) receives its hash
 * (acc_plan_hash). */
acc_status_t acc_db_put_plan(acc_db_t *db, const acc_plan_t *plan,
                             char hash_out[ACC_SHA256_HEX_LEN + 1]);
/* Load, check the hash and verify again: a plan that fails is reported (ACC_ERR_VERIFY or
 * ACC_ERR_PARSE naming the file and hash) and never returned.  ACC_ERR_NOT_FOUND, saying so,
 * for a plan stored in class form alone (acc_db_get_rank_plan reads it). */
acc_status_t acc_db_get_plan(acc_db_t *db, const char *hash, acc_plan_t **out);
/* Rank `rank`'s view of a stored plan (acc_plan_view_t), from its binary class form: the head
 * and the rank's own class programs are read, nothing else - no other plan, no other rank's
 * program, no YAML.  The head's SHA-256 and each program's digest are checked and every
 * operation bounded (acc_cplan_rank_view); the plan was proven when it was stored.
 * ACC_ERR_NOT_FOUND when the plan has no class form. */
acc_status_t acc_db_get_rank_plan(acc_db_t *db, const char *hash, int rank, acc_plan_t **out);
/* The whole plan from its binary class form (every class's program, no YAML), proven again
 * (acc_plan_verify) before it is returned: what a reader that runs every rank's code (the cuda
 * backend's kernels) takes at a job's first call. */
acc_status_t acc_db_get_whole_plan(acc_db_t *db, const char *hash, acc_plan_t **out);
/* Store a proven class plan in its binary form alone (plans of a size whose explicit form is
 * never made); it is named by the SHA-256 of that form, which hash_out (optional) receives.
 * expl (optional), its expansion, gives the flags of the reductions' last steps. */
acc_status_t acc_db_put_cplan(acc_db_t *db, const acc_cplan_t *cp, const acc_plan_t *expl,
                              char hash_out[ACC_SHA256_HEX_LEN + 1]);

/* ---- selection tables, by (topology fingerprint, collective) ---------------------------- */
/* Store table->entries for (table->topo_fingerprint, table->coll), replacing the previous table
 * of that key in the same transaction.  The topology and every plan an entry names must be
 * stored already. */
acc_status_t acc_db_put_selection(acc_db_t *db, const acc_select_table_t *table);
/* ACC_ERR_NOT_FOUND when the database has no table for this key. */
acc_status_t acc_db_get_selection(acc_db_t *db, const char *topo_fingerprint, acc_coll_t coll,
                                  acc_select_table_t **out);

/* ---- NCCL's own choice per size, by (topology fingerprint, collective) -------------------- */
/* What the NCCL tuner plugin serves (acc_select.h).  Store table->entries for
 * (table->topo_fingerprint, table->coll), replacing the previous ranges of that key in the same
 * transaction; the topology must be stored already. */
acc_status_t acc_db_put_nccl_choices(acc_db_t *db, const acc_select_nccl_t *table);
/* ACC_ERR_NOT_FOUND when the database has no NCCL choices for this key (a file upgraded from
 * schema version 4 has none until acc-compile --db builds its tables again). */
acc_status_t acc_db_get_nccl_choices(acc_db_t *db, const char *topo_fingerprint, acc_coll_t coll,
                                     acc_select_nccl_t **out);

/* Store one sweep of acc_select_build for the topology stored under topo_fingerprint: every plan
 * the sweep kept, then its table and NCCL's choice per size (when NCCL's model covers the
 * collective).  A table built for another topology (r->table names another
 * fingerprint) is refused with ACC_ERR_INVALID naming both, before anything is stored. */
acc_status_t acc_db_put_sweep(acc_db_t *db, const char *topo_fingerprint,
                              const acc_select_result_t *r);

/* ---- kernels, by (plan hash, architecture, data type, reduction, compiler version) -------- */
/* One plan gives one kernel module (acc_kernel_generate) per data type and reduction.  A
 * collective that does not reduce (acc_coll_reduces) has one module per type for every
 * reduction: its kernels are stored once per type, and put and get ignore the reduction named
 * for them (the row says "none"). */
typedef struct {
    char plan_hash[ACC_SHA256_HEX_LEN + 1];
    char arch[16]; /* "sm_90", "sm_90a" */
    acc_dtype_t dtype;
    acc_redop_t redop;                      /* ignored when the plan's collective does not reduce */
    char compiler_version[ACC_DB_NAME_MAX]; /* "nvrtc 12.4" */
    char source_hash[ACC_SHA256_HEX_LEN + 1]; /* SHA-256 of the generated CUDA source */
    uint8_t *cubin;                           /* get: taken, see acc_db_kernel_clear */
    size_t cubin_size;
    char *log; /* compile log; get: taken; NULL means "" */
} acc_db_kernel_t;

/* The plan must be stored already.  A stored kernel of the same key is replaced. */
acc_status_t acc_db_put_kernel(acc_db_t *db, const acc_db_kernel_t *kernel);
/* A kernel is only returned when it was built from the source the caller generates now from
 * the verified plan: a stored source hash other than source_hash gives ACC_ERR_NOT_FOUND, as
 * does a missing kernel (the message says which acc-compile command builds it). */
acc_status_t acc_db_get_kernel(acc_db_t *db, const char *plan_hash, const char *arch,
                               acc_dtype_t dtype, acc_redop_t redop, const char *compiler_version,
                               const char *source_hash, acc_db_kernel_t *out);
/* Free what a get filled in and zero the record. */
void acc_db_kernel_clear(acc_db_kernel_t *kernel);
/* How many kernels the file holds of plan_hash and of arch (NULL: any plan, any arch). */
acc_status_t acc_db_count_kernels(acc_db_t *db, const char *plan_hash, const char *arch,
                                  uint64_t *count);

/* ---- measured times, by (topology, collective, data type, plan hash, size) --------------- */
/* A plan's time at one size measured on a machine of the topology (bench_kernels, acc-bench),
 * stored beside the model's predictions; acc_db_build hands them to the table builder, which
 * prefers them (acc_select_build_opts_t.measured). */
typedef struct {
    char topo_fingerprint[ACC_SHA256_HEX_LEN + 1];
    acc_coll_t coll;
    acc_dtype_t dtype;
    char plan_hash[ACC_SHA256_HEX_LEN + 1]; /* acc_plan_hash of the plan as run */
    uint64_t nbytes;                        /* NCCL's nBytes */
    double us;                              /* > 0 */
    char source[ACC_DB_TEXT_MAX];           /* what measured it: tool, GPU, driver, date */
} acc_db_measurement_t;

/* The topology and the plan must be stored already, the plan of m->coll for as many ranks as
 * the topology has.  A measurement of the same key is replaced. */
acc_status_t acc_db_put_measurement(acc_db_t *db, const acc_db_measurement_t *m);
/* Every time measured on the topology with this data type, of any collective, as the table
 * builder takes them; *out taken (acc_mem_free), NULL when there are none. */
acc_status_t acc_db_get_measurements(acc_db_t *db, const char *topo_fingerprint, acc_dtype_t dtype,
                                     acc_select_measured_t **out, size_t *count);

/* ---- the image build: a topology's tables, plans and kernels in one call (db_build.c) ----- */
typedef struct {
    /* The collectives whose tables are built, each once, in this order; by default every one
     * acc_select_build covers (acc_select_colls). */
    acc_coll_t colls[ACC_COLL_COUNT];
    size_t ncolls;
    acc_select_build_opts_t select; /* the sweep's options (acc_select_build_opts_init) */
    /* The kernels of the plans the tables run on GPUs (ranges whose backends include cuda; the
     * cuda backend hands multi-node plans to NCCL, so they get none): types, reductions,
     * architectures, cache and source directory.  Modules are made only with an architecture (then
     * their CUBINs are stored) or a source directory (then their sources are written). */
    acc_kbuild_opts_t kernels;
} acc_db_build_opts_t;

/* What acc_db_build stored for one collective. */
typedef struct {
    acc_coll_t coll;
    size_t ranges; /* entries of its table */
    size_t plans;  /* plans stored with it (acc's best at some size, named by a range or not) */
} acc_db_build_table_t;

typedef struct {
    char fingerprint[ACC_SHA256_HEX_LEN + 1];    /* the topology's, as stored */
    acc_db_build_table_t tables[ACC_COLL_COUNT]; /* in the order built */
    size_t ntables;
    size_t plans;    /* plans stored, over all tables */
    size_t measured; /* measured times the sweeps were given */
    /* The modules of the plans the tables name (all zero when no kernels were asked for):
     * kernels.plans, .modules, .built (linked now), .compiles (NVRTC runs), .compile_s and
     * .seconds (the time spent on kernels, storing them included). */
    acc_kbuild_stats_t kernels;
    size_t cubins; /* kernel rows stored: modules x architectures */
    size_t cached; /* of those, rows whose CUBIN was not linked for them: found in the cache, or
                      shared with a module of the same source (cubins - kernels.built) */
    char compiler[ACC_DB_NAME_MAX]; /* "nvrtc 13.0" with architectures, else "" */
    double seconds;                 /* the whole build */
} acc_db_build_report_t;

/* Defaults: every collective of acc_select_colls, acc_select_build_opts_init's sweep,
 * acc_kbuild_opts_init's kernels (which make nothing until given an architecture or a
 * directory). */
void acc_db_build_opts_init(acc_db_build_opts_t *opts);
/* ACC_ERR_INVALID naming the field for an empty or repeated list of collectives or one without
 * tables (alltoall), and acc_kbuild_opts_check's errors for the kernels' options.  Callers that
 * must not create a database for bad options check before opening it. */
acc_status_t acc_db_build_opts_check(const acc_db_build_opts_t *opts);
/* The image build: store the topology (finalized, borrowed), sweep every collective of opts
 * (NULL: the defaults; with the times the database holds measured on the topology, unless
 * opts->select names measurements of its own) and store its plans and table
 * (acc_db_put_sweep), then make the modules
 * of every plan a table names and store their CUBINs per architecture, type and reduction
 * (acc_db_put_kernel; collectives that do not reduce: per type).  Options are checked before
 * anything is stored.  Building again stores nothing new and, with the same kernel cache,
 * compiles nothing.  report (optional) says what was done. */
acc_status_t acc_db_build(acc_db_t *db, const acc_topo_t *topo, const acc_db_build_opts_t *opts,
                          acc_db_build_report_t *report);
/* *current = 1 when db holds the result of acc_db_build(db, topo, opts) already: the last build
 * of topo's tables had the same inputs (this acc's code, the topology, the options, the times
 * measured on it) and wrote no sources (opts->kernels.source_dir).  One read, no sweep, so a
 * database opened read-only answers it and is left as it was (acc-compile --db runs again in
 * no time and changes no byte).  NULL opts: the defaults. */
acc_status_t acc_db_build_current(acc_db_t *db, const acc_topo_t *topo,
                                  const acc_db_build_opts_t *opts, int *current);

/* ---- model profiles and networks, by name ---------------------------------------------- */
/* The profile tuning runs of a model refer to.  yaml must be a well-formed YAML document;
 * param_count is the model's parameter count; origin (NULL: "") says where the text came from,
 * for people ("shipped: PATH", "file: PATH", "recorded on HOST/GPU at DATE"). */
acc_status_t acc_db_put_profile(acc_db_t *db, const char *name, const char *yaml,
                                uint64_t param_count, const char *origin);
/* *yaml taken (acc_mem_free). */
acc_status_t acc_db_get_profile(acc_db_t *db, const char *name, char **yaml, uint64_t *param_count);

typedef struct {
    char name[ACC_DB_NAME_MAX];
    uint64_t param_count;
    char origin[ACC_DB_TEXT_MAX]; /* "" when unknown (stored before schema version 8) */
} acc_db_profile_t;

/* Every stored profile (without its text), by name; *out taken (acc_mem_free). */
acc_status_t acc_db_list_profiles(acc_db_t *db, acc_db_profile_t **out, size_t *count);

/* A profile a training job recorded of itself (the fusion engine's ACC_RECORD), one per name and
 * GPU generation: recording again replaces it. */
typedef struct {
    char name[ACC_DB_NAME_MAX]; /* the profile's name: the job's model, or its gradient list's */
    int sm;                     /* compute capability of its compute entry (90); 0: none */
    char device[96];            /* what computed: the GPU's name, or "CPU (host backend)" */
    char host[ACC_DB_NAME_MAX]; /* rank 0's host name */
    char backend[16];           /* the communicator's: "cuda" or "host" */
    int ranks;                  /* >= 1 */
    int batch;                  /* samples per rank and micro-batch; 0: not given */
    int iterations;             /* iterations the timeline is the median of, >= 1 */
    int64_t recorded_us;        /* Unix time in microseconds; 0 means now */
    char acc_version[32];       /* "" means this acc (ACC_VERSION_STRING) */
    uint64_t param_count;       /* elements of all its gradients */
} acc_db_recorded_t;

/* Store rec with its profile's text (acc_profile_dump_yaml's; it must be a well-formed YAML
 * document), replacing the recording of the same name and sm. */
acc_status_t acc_db_put_recorded(acc_db_t *db, const acc_db_recorded_t *rec, const char *yaml);
/* The recording of name for sm (*yaml taken, acc_mem_free; optional); ACC_ERR_NOT_FOUND naming
 * both when there is none. */
acc_status_t acc_db_get_recorded(acc_db_t *db, const char *name, int sm, acc_db_recorded_t *out,
                                 char **yaml);
/* Every recording (without its text) of name (NULL: of every name), by name then sm; *out taken
 * (acc_mem_free). */
acc_status_t acc_db_list_recorded(acc_db_t *db, const char *name, acc_db_recorded_t **out,
                                  size_t *count);

typedef struct {
    char name[ACC_DB_NAME_MAX];        /* "ib-ndr-rail" */
    char description[ACC_DB_TEXT_MAX]; /* one line for people */
    char params[ACC_DB_TEXT_MAX];      /* "nic=400 latency_us=2 rail=1 oversub=1" */
} acc_db_network_t;

acc_status_t acc_db_put_network(acc_db_t *db, const acc_db_network_t *net);
acc_status_t acc_db_get_network(acc_db_t *db, const char *name, acc_db_network_t *out);

/* ---- tuning runs and optima, by (model, topology fingerprint, network) ------------------ */
/* One evaluated configuration.  network is "" for a single node.  Lower scores are better. */
typedef struct {
    int64_t id;                                    /* set by the database */
    char model[ACC_DB_NAME_MAX];                   /* a stored model profile */
    char topo_fingerprint[ACC_SHA256_HEX_LEN + 1]; /* a stored topology */
    char network[ACC_DB_NAME_MAX];
    char params[ACC_DB_TEXT_MAX]; /* "fusion=25M streams=2 algo=ring" */
    double score;                 /* the objective, e.g. iteration time in us */
    char method[32];              /* how it was scored: "model", "measured", ... */
    char strategy[32];            /* "grid", "bayes", "halving", ... */
    double seconds;               /* time this evaluation took */
    char acc_version[32];         /* "" means this acc (ACC_VERSION_STRING) */
    int64_t created_us;           /* Unix time in microseconds; 0 means now */
} acc_db_tuning_run_t;

/* Add a run; id_out (optional) receives its id.  Adding a run identical to a stored one in
 * model, topology, network, params, method, strategy and time adds nothing and gives the
 * stored id. */
acc_status_t acc_db_add_tuning_run(acc_db_t *db, const acc_db_tuning_run_t *run, int64_t *id_out);
/* Runs matching the filters (NULL: any), best score first, then by id; *out taken (acc_mem_free).
 */
acc_status_t acc_db_list_tuning_runs(acc_db_t *db, const char *model, const char *topo_fingerprint,
                                     const char *network, acc_db_tuning_run_t **out, size_t *count);

typedef struct {
    char model[ACC_DB_NAME_MAX];
    char topo_fingerprint[ACC_SHA256_HEX_LEN + 1];
    char network[ACC_DB_NAME_MAX];
    /* How the score was obtained, as tuning runs say it ("itersim": simulated, "measured"); a
     * key keeps one optimum per method. */
    char method[32];
    uint64_t fusion_bytes; /* gradient fusion (bucket) size */
    int streams;
    char algo[ACC_PLAN_NAME_MAX];
    char params[ACC_DB_TEXT_MAX]; /* the rest of the configuration */
    double score;
    int64_t run_id; /* the tuning run that found it; 0 when none */
} acc_db_optimum_t;

/* Set the optimum of (model, topology, network, method), replacing the previous one. */
acc_status_t acc_db_put_optimum(acc_db_t *db, const acc_db_optimum_t *opt);
acc_status_t acc_db_get_optimum(acc_db_t *db, const char *model, const char *topo_fingerprint,
                                const char *network, const char *method, acc_db_optimum_t *out);
/* Every optimum, by model, topology, network and method; *out taken (acc_mem_free). */
acc_status_t acc_db_list_optima(acc_db_t *db, acc_db_optimum_t **out, size_t *count);

/* ---- summary ---------------------------------------------------------------------------- */
/* What the file holds, for acc-info: schema version, topologies with their names, collectives
 * and size ranges, counts of plans, kernels (in all and per architecture: "kernels: 30 (sm_80
 * 15, sm_90 15)"), profiles, networks and runs, and the optima. */
acc_status_t acc_db_summary(acc_db_t *db, acc_buf_t *out);

#ifdef __cplusplus
}
#endif
#endif /* ACC_DB_H */
