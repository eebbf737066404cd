/* The schema as a list of forward migrations.  A new file runs every step; an older file runs
 * the steps it lacks, all in the one transaction that opens it for writing.  Each step is what
 * acc needed when it was added (db/SCHEMA.md tells the story); a step is never edited once
 * released, only followed by another. */
#include "db_internal.h"

#include <stdio.h>

/* Version 1: what acc-compile writes.  Topologies by fingerprint, plans by the hash of their
 * YAML text, and one selection table per (topology, collective) whose entries are the byte
 * ranges.  The entries are clustered by (table, min_bytes) so that loading a table reads
 * consecutive pages. */
static const char step1[] =
    "CREATE TABLE topologies (\n"
    "  fingerprint TEXT PRIMARY KEY CHECK (length(fingerprint) = 64),\n"
    "  name TEXT NOT NULL,\n"
    "  source TEXT NOT NULL,\n"
    "  format TEXT NOT NULL,\n"
    "  nodes INTEGER NOT NULL CHECK (nodes >= 1),\n"
    "  gpus_per_node INTEGER NOT NULL CHECK (gpus_per_node >= 0),\n"
    "  yaml TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE plans (\n"
    "  hash TEXT PRIMARY KEY CHECK (length(hash) = 64),\n"
    "  coll TEXT NOT NULL,\n"
    "  algo TEXT NOT NULL,\n"
    "  params TEXT NOT NULL,\n"
    "  nranks INTEGER NOT NULL CHECK (nranks >= 1),\n"
    "  yaml TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE selections (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  topo_fingerprint TEXT NOT NULL REFERENCES topologies(fingerprint) ON DELETE CASCADE,\n"
    "  coll TEXT NOT NULL,\n"
    "  content_hash TEXT NOT NULL CHECK (length(content_hash) = 64),\n"
    "  acc_version TEXT NOT NULL,\n"
    "  UNIQUE (topo_fingerprint, coll)\n"
    ");\n"
    "CREATE TABLE selection_entries (\n"
    "  selection_id INTEGER NOT NULL REFERENCES selections(id) ON DELETE CASCADE,\n"
    "  min_bytes INTEGER NOT NULL,\n"
    "  max_bytes INTEGER NOT NULL,\n"
    "  use_nccl INTEGER NOT NULL CHECK (use_nccl IN (0, 1)),\n"
    "  algo TEXT NOT NULL,\n"
    "  params TEXT NOT NULL,\n"
    "  plan_hash TEXT REFERENCES plans(hash),\n"
    "  predicted_us REAL NOT NULL,\n"
    "  PRIMARY KEY (selection_id, min_bytes)\n"
    ") WITHOUT ROWID;\n";

/* Version 2: CUBINs from NVRTC, one per plan, architecture and compiler version, with the hash
 * of the CUDA source they were built from so that the runtime only takes a kernel matching the
 * source it generates from the verified plan. */
static const char step2[] = "CREATE TABLE kernels (\n"
                            "  plan_hash TEXT NOT NULL REFERENCES plans(hash),\n"
                            "  arch TEXT NOT NULL,\n"
                            "  compiler_version TEXT NOT NULL,\n"
                            "  source_hash TEXT NOT NULL CHECK (length(source_hash) = 64),\n"
                            "  cubin BLOB NOT NULL,\n"
                            "  log TEXT NOT NULL,\n"
                            "  PRIMARY KEY (plan_hash, arch, compiler_version)\n"
                            ");\n";

/* Version 3: acc-tune.  Model profiles and networks by name, every evaluated configuration, and
 * the current optimum per (model, topology, network).  Tuning also measures collectives, so the
 * selection entries gain a measured time and the source of the choice; entries written before
 * were predictions by the cost model, which is what the defaults say. */
static const char step3[] =
    "CREATE TABLE model_profiles (\n"
    "  name TEXT PRIMARY KEY,\n"
    "  yaml TEXT NOT NULL,\n"
    "  param_count INTEGER NOT NULL CHECK (param_count >= 0)\n"
    ");\n"
    "CREATE TABLE networks (\n"
    "  name TEXT PRIMARY KEY,\n"
    "  description TEXT NOT NULL,\n"
    "  params TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE tuning_runs (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  model TEXT NOT NULL REFERENCES model_profiles(name),\n"
    "  topo_fingerprint TEXT NOT NULL REFERENCES topologies(fingerprint),\n"
    "  network TEXT NOT NULL,\n"
    "  params TEXT NOT NULL,\n"
    "  score REAL NOT NULL,\n"
    "  method TEXT NOT NULL,\n"
    "  strategy TEXT NOT NULL,\n"
    "  seconds REAL NOT NULL,\n"
    "  acc_version TEXT NOT NULL,\n"
    "  created_us INTEGER NOT NULL,\n"
    "  UNIQUE (model, topo_fingerprint, network, params, method, strategy, created_us)\n"
    ");\n"
    "CREATE INDEX tuning_runs_by_score ON tuning_runs (model, topo_fingerprint, network, score);\n"
    "CREATE TABLE optima (\n"
    "  model TEXT NOT NULL REFERENCES model_profiles(name),\n"
    "  topo_fingerprint TEXT NOT NULL REFERENCES topologies(fingerprint),\n"
    "  network TEXT NOT NULL,\n"
    "  fusion_bytes INTEGER NOT NULL CHECK (fusion_bytes >= 0),\n"
    "  streams INTEGER NOT NULL CHECK (streams >= 1),\n"
    "  algo TEXT NOT NULL,\n"
    "  params TEXT NOT NULL,\n"
    "  score REAL NOT NULL,\n"
    "  run_id INTEGER REFERENCES tuning_runs(id),\n"
    "  PRIMARY KEY (model, topo_fingerprint, network)\n"
    ");\n"
    "ALTER TABLE selection_entries ADD COLUMN measured_us REAL NOT NULL DEFAULT -1;\n"
    "ALTER TABLE selection_entries ADD COLUMN source TEXT NOT NULL DEFAULT 'model';\n";

/* Version 4: one plan gives a kernel module per data type and reduction, so kernels are keyed by
 * them as well.  SQLite cannot change a primary key in place, so the table is made anew.  The
 * rows of versions 2 and 3 do not record the type and reduction they were built for and cannot
 * be attributed without guessing; they are derived data that acc-compile --arch rebuilds, so
 * they are dropped.  The names are acc_dtype_name()'s and acc_redop_name()'s, with no CHECK on
 * the lists so that a type added later needs no table rebuild; redop is 'none' for collectives
 * that do not reduce, whose module is the same for every reduction. */
static const char step4[] = "DROP TABLE kernels;\n"
                            "CREATE TABLE kernels (\n"
                            "  plan_hash TEXT NOT NULL REFERENCES plans(hash),\n"
                            "  arch TEXT NOT NULL,\n"
                            "  dtype TEXT NOT NULL CHECK (length(dtype) > 0),\n"
                            "  redop TEXT NOT NULL CHECK (length(redop) > 0),\n"
                            "  compiler_version TEXT NOT NULL,\n"
                            "  source_hash TEXT NOT NULL CHECK (length(source_hash) = 64),\n"
                            "  cubin BLOB NOT NULL,\n"
                            "  log TEXT NOT NULL,\n"
                            "  PRIMARY KEY (plan_hash, arch, dtype, redop, compiler_version)\n"
                            ");\n";

/* Version 5: times measured on a machine of a topology, per plan and size, beside the model's
 * predictions (bench_kernels, acc-bench); the table builder prefers them.  The collective and
 * data type are acc_coll_name()'s and acc_dtype_name()'s. */
static const char step5[] =
    "CREATE TABLE measurements (\n"
    "  topo_fingerprint TEXT NOT NULL REFERENCES topologies(fingerprint) ON DELETE CASCADE,\n"
    "  coll TEXT NOT NULL,\n"
    "  dtype TEXT NOT NULL,\n"
    "  plan_hash TEXT NOT NULL REFERENCES plans(hash),\n"
    "  nbytes INTEGER NOT NULL,\n"
    "  measured_us REAL NOT NULL CHECK (measured_us > 0),\n"
    "  source TEXT NOT NULL,\n"
    "  PRIMARY KEY (topo_fingerprint, coll, dtype, plan_hash, nbytes)\n"
    ") WITHOUT ROWID;\n";

/* Version 6: NCCL's own choice per size range, for the NCCL tuner plugin.  The selection table
 * names NCCL only where acc leaves a size to it; a job that keeps NCCL's kernels needs NCCL's best
 * algorithm, protocol and channel count at every size, which the sweep finds as well.  Names are
 * NCCL's (acc_nccl_algo_name, acc_nccl_proto_name); channels 0 leaves NCCL's own count.  Files
 * upgraded from version 5 have none until acc-compile --db builds their tables again. */
static const char step6[] =
    "CREATE TABLE nccl_choices (\n"
    "  topo_fingerprint TEXT NOT NULL REFERENCES topologies(fingerprint) ON DELETE CASCADE,\n"
    "  coll TEXT NOT NULL,\n"
    "  min_bytes INTEGER NOT NULL,\n"
    "  max_bytes INTEGER NOT NULL,\n"
    "  algo TEXT NOT NULL,\n"
    "  proto TEXT NOT NULL,\n"
    "  channels INTEGER NOT NULL CHECK (channels >= 0),\n"
    "  predicted_us REAL NOT NULL,\n"
    "  measured_us REAL NOT NULL DEFAULT -1,\n"
    "  source TEXT NOT NULL DEFAULT 'model',\n"
    "  PRIMARY KEY (topo_fingerprint, coll, min_bytes)\n"
    ") WITHOUT ROWID;\n";

/* Version 7: an optimum is found by simulation (acc-tune) or measured on the machine (online
 * tuning in the runtime), and a key keeps one of each, so that they can be compared and the job
 * can prefer the measured one.  The method joins the primary key; SQLite cannot change a
 * primary key in place, so the table is made anew.  Optima of versions 3 to 6 were written by
 * acc-tune's simulator or by hand, both of which the default 'itersim' describes. */
static const char step7[] =
    "CREATE TABLE optima_v7 (\n"
    "  model TEXT NOT NULL REFERENCES model_profiles(name),\n"
    "  topo_fingerprint TEXT NOT NULL REFERENCES topologies(fingerprint),\n"
    "  network TEXT NOT NULL,\n"
    "  method TEXT NOT NULL CHECK (length(method) > 0),\n"
    "  fusion_bytes INTEGER NOT NULL CHECK (fusion_bytes >= 0),\n"
    "  streams INTEGER NOT NULL CHECK (streams >= 1),\n"
    "  algo TEXT NOT NULL,\n"
    "  params TEXT NOT NULL,\n"
    "  score REAL NOT NULL,\n"
    "  run_id INTEGER REFERENCES tuning_runs(id),\n"
    "  PRIMARY KEY (model, topo_fingerprint, network, method)\n"
    ");\n"
    "INSERT INTO optima_v7 SELECT model, topo_fingerprint, network, 'itersim', fusion_bytes, "
    "streams, algo, params, score, run_id FROM optima;\n"
    "DROP TABLE optima;\n"
    "ALTER TABLE optima_v7 RENAME TO optima;\n";

/* Version 8: profiles a training job recorded of itself (the fusion engine's gradient timeline:
 * each gradient's size, type and ready time, and the iteration's compute time), one per model
 * and GPU generation, with where and when they were recorded; and, for the profiles tuning runs
 * refer to, where their text came from (a shipped profile, a file, a recording), which files of
 * older versions did not keep ('' there). */
static const char step8[] =
    "CREATE TABLE recorded_profiles (\n"
    "  name TEXT NOT NULL CHECK (length(name) > 0),\n"
    "  sm INTEGER NOT NULL CHECK (sm >= 0),\n"
    "  device TEXT NOT NULL,\n"
    "  host TEXT NOT NULL,\n"
    "  backend TEXT NOT NULL,\n"
    "  ranks INTEGER NOT NULL CHECK (ranks >= 1),\n"
    "  batch INTEGER NOT NULL CHECK (batch >= 0),\n"
    "  iterations INTEGER NOT NULL CHECK (iterations >= 1),\n"
    "  recorded_us INTEGER NOT NULL CHECK (recorded_us >= 0),\n"
    "  acc_version TEXT NOT NULL,\n"
    "  param_count INTEGER NOT NULL CHECK (param_count >= 0),\n"
    "  yaml TEXT NOT NULL,\n"
    "  PRIMARY KEY (name, sm)\n"
    ");\n"
    "ALTER TABLE model_profiles ADD COLUMN origin TEXT NOT NULL DEFAULT '';\n";

/* Version 9: per topology, a digest of the inputs its tables were last built from (acc's code,
 * the topology, the build's options, the times measured on it), so that building again from the
 * same ones is one read and writes nothing (acc_db_build_current). */
static const char step9[] =
    "CREATE TABLE builds (\n"
    "  topo_fingerprint TEXT PRIMARY KEY REFERENCES topologies(fingerprint) ON DELETE CASCADE,\n"
    "  inputs_hash TEXT NOT NULL CHECK (length(inputs_hash) = 64),\n"
    "  acc_version TEXT NOT NULL\n"
    ");\n";

/* Version 10: each selection entry says which of the runtime's backends can run its choice
 * (acc_plan_backends), so that a GPU job is never offered an acc plan the cuda backend cannot
 * run (one whose steps cross nodes) and takes NCCL there instead.  The column is derived from
 * each entry's plan and the topology's node size by acc's own rule, which SQL cannot state: the
 * step's fill (db_fill_backends) sets it, and the content hashes that covered the entries. */
static const char step10[] =
    "ALTER TABLE selection_entries ADD COLUMN backends TEXT NOT NULL DEFAULT '';\n";

/* Version 11: every plan's binary class form (acc_cplan.h), so that a rank reads the head and
 * its own programs and nothing else (acc_db_get_rank_plan): a head per plan, under the plan's
 * hash, with the SHA-256 of its bytes, and one row per class program.  The step's fill
 * (db_fill_class_forms) writes the rows of the plans already stored, from their YAML. */
static const char step11[] = "CREATE TABLE plan_heads (\n"
                             "  hash TEXT PRIMARY KEY CHECK (length(hash) = 64),\n"
                             "  coll TEXT NOT NULL,\n"
                             "  algo TEXT NOT NULL,\n"
                             "  params TEXT NOT NULL,\n"
                             "  nranks INTEGER NOT NULL CHECK (nranks >= 1),\n"
                             "  head_sha TEXT NOT NULL CHECK (length(head_sha) = 64),\n"
                             "  head BLOB NOT NULL\n"
                             ");\n"
                             "CREATE TABLE plan_programs (\n"
                             "  hash TEXT NOT NULL REFERENCES plan_heads(hash) ON DELETE CASCADE,\n"
                             "  lane INTEGER NOT NULL CHECK (lane >= 0),\n"
                             "  cls INTEGER NOT NULL CHECK (cls >= 0),\n"
                             "  program BLOB NOT NULL,\n"
                             "  PRIMARY KEY (hash, lane, cls)\n"
                             ") WITHOUT ROWID;\n";

/* Version 12: a selection entry names a plan by its class form (plan_heads), which every
 * stored plan has since version 11, instead of by its YAML (plans): a table built by class
 * (above 4,096 ranks) names plans stored in class form alone.  SQLite cannot change a foreign
 * key in place, so the table is made anew, its rows copied. */
static const char step12[] =
    "CREATE TABLE selection_entries_12 (\n"
    "  selection_id INTEGER NOT NULL REFERENCES selections(id) ON DELETE CASCADE,\n"
    "  min_bytes INTEGER NOT NULL,\n"
    "  max_bytes INTEGER NOT NULL,\n"
    "  use_nccl INTEGER NOT NULL CHECK (use_nccl IN (0, 1)),\n"
    "  algo TEXT NOT NULL,\n"
    "  params TEXT NOT NULL,\n"
    "  plan_hash TEXT REFERENCES plan_heads(hash),\n"
    "  predicted_us REAL NOT NULL,\n"
    "  measured_us REAL NOT NULL DEFAULT -1,\n"
    "  source TEXT NOT NULL DEFAULT 'model',\n"
    "  backends TEXT NOT NULL DEFAULT '',\n"
    "  PRIMARY KEY (selection_id, min_bytes)\n"
    ") WITHOUT ROWID;\n"
    "INSERT INTO selection_entries_12 SELECT selection_id, min_bytes, max_bytes, use_nccl, algo, "
    "params, plan_hash, predicted_us, measured_us, source, backends FROM selection_entries;\n"
    "DROP TABLE selection_entries;\n"
    "ALTER TABLE selection_entries_12 RENAME TO selection_entries;\n";

static const db_migration_t migrations[] = {
    {1, "topologies, plans and selection tables", step1, NULL},
    {2, "kernels", step2, NULL},
    {3, "model profiles, networks, tuning runs, optima; measured times in selections", step3, NULL},
    {4, "kernels by data type and reduction (older kernels dropped)", step4, NULL},
    {5, "measured times per topology, plan and size", step5, NULL},
    {6, "NCCL's own choice per size range, for the tuner plugin", step6, NULL},
    {7, "optima by method: simulated and measured side by side", step7, NULL},
    {8, "profiles recorded by training jobs; where stored profiles came from", step8, NULL},
    {9, "the inputs each topology's tables were built from", step9, NULL},
    {10, "the backends that can run each stored choice", step10, db_fill_backends},
    {11, "each plan's class form, read a rank at a time", step11, db_fill_class_forms},
    {12, "selection entries name plans by their class form", step12, NULL},
};

/* The list and the version constant must move together. */
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == ACC_DB_SCHEMA_VERSION,
               "one migration step per schema version");

const db_migration_t *db_migrations(int *count)
{
    *count = (int)(sizeof(migrations) / sizeof(migrations[0]));
    return migrations;
}

acc_status_t db_schema_upgrade(sqlite3 *sql, const char *path, int from, int to)
{
    char pragma[96];
    int v, rc;

    if (from < 0 || to > ACC_DB_SCHEMA_VERSION || from > to)
        return acc_error_set(ACC_ERR_INVALID, "%s: no migration from schema version %d to %d", path,
                             from, to);
    for (v = from + 1; v <= to; v++) {
        const db_migration_t *m = &migrations[v - 1];
        /* The fill's view of the connection: the helpers of db_sql.c take one. */
        acc_db_t view = {.sql = sql, .path = (char *)path, .version = v};
        acc_status_t st;
        rc = sqlite3_exec(sql, m->sql, NULL, NULL, NULL);
        if (rc != SQLITE_OK)
            return db_error_rc(sql, path, rc, "upgrading the schema to version %d (%s)", v,
                               m->what);
        if (m->fill && (st = m->fill(&view)) != ACC_OK)
            return acc_error_prefix(st, "upgrading the schema to version %d (%s): ", v, m->what);
        ACC_DEBUG(DB, "%s: schema step %d: %s", path, v, m->what);
    }
    snprintf(pragma, sizeof(pragma), "PRAGMA application_id = %d; PRAGMA user_version = %d;",
             (int)ACC_DB_APPLICATION_ID, to);
    rc = sqlite3_exec(sql, pragma, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return db_error_rc(sql, path, rc, "recording schema version %d", to);
    return ACC_OK;
}
