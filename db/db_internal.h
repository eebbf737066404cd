/*
 * db_internal.h - what the files of db/ share: the connection object, SQLite error mapping,
 * transactions with retry, statement helpers, field checks, and the migration list.  Never
 * installed; the db tests include it to build files of older schema versions and to interrupt a
 * write on purpose.
 */
#ifndef ACC_DB_INTERNAL_H
#define ACC_DB_INTERNAL_H

#include "acc_cplan.h"
#include "acc_db.h"

#include <sqlite3.h>

struct acc_db {
    sqlite3 *sql;
    char *path;
    int readonly;
    int version;   /* schema version of the file once open */
    uint64_t seed; /* backoff jitter, so that waiting writers do not retry in lock step */
};

/* ---- errors (db_sql.c) ------------------------------------------------------------------ */
/* Turn SQLite result code rc into an acc status and a message
 *     "PATH: WHAT: sqlite3_errmsg (SQLite error RC: errstr[, errno text]); what to do"
 * sql may be NULL (a failed open).  Returns the mapped status. */
acc_status_t db_error_rc(sqlite3 *sql, const char *path, int rc, const char *fmt, ...)
    ACC_PRINTF(4, 5);
#define db_error(db, rc, ...) db_error_rc((db)->sql, (db)->path, (rc), __VA_ARGS__)

/* ---- transactions (db_sql.c) ------------------------------------------------------------ */
/* Run fn inside BEGIN (read) or BEGIN IMMEDIATE (write) ... COMMIT.  When SQLite reports the
 * file busy or locked at any point, the transaction is rolled back and fn run again after an
 * exponentially growing, jittered pause, until ACC_DB_BUSY_MS have passed.  fn must therefore
 * start from scratch each time (reset what it fills in).  Any other failure rolls back and is
 * returned as is.  `what` names the operation in messages ("storing topology 1a2b3c4d"). */
typedef acc_status_t (*db_txn_fn)(acc_db_t *db, void *ctx);
acc_status_t db_txn(acc_db_t *db, int write, const char *what, db_txn_fn fn, void *ctx);

/* Called, when set, inside every write transaction just before COMMIT.  Only the tests set it,
 * to kill a writer at the worst moment and show that the file keeps its previous state. */
extern void (*db_before_commit_hook)(const char *what);

/* ---- statements (db_sql.c) -------------------------------------------------------------- */
acc_status_t db_prepare(acc_db_t *db, const char *sql, sqlite3_stmt **out);
/* Step a statement that returns no row (INSERT, UPDATE, DELETE). */
acc_status_t db_step_done(acc_db_t *db, sqlite3_stmt *st, const char *what);
/* Step a statement: 1 when a row is ready, 0 when done, <0 (an acc status) on error. */
int db_step_row(acc_db_t *db, sqlite3_stmt *st, const char *what);
/* Run SQL text without results (may hold several statements). */
acc_status_t db_exec(acc_db_t *db, const char *sql, const char *what);
/* A single integer answer of a query (PRAGMA user_version, SELECT count(*)). */
acc_status_t db_query_int(acc_db_t *db, const char *sql, int64_t *out);
/* Bind NUL-terminated text (borrowed until the statement is reset) or NULL for a NULL s. */
int db_bind_text(sqlite3_stmt *st, int col, const char *s);

/* Byte counts are unsigned 64-bit; SQLite integers are signed, so the bits are stored as they
 * are and sizes of 2^63 and more read back negative in SQL (never in C). */
sqlite3_int64 db_u64_to_sql(uint64_t v);
uint64_t db_u64_from_sql(sqlite3_int64 v);

/* Copy column col into dst[cap] (NULL reads as "").  A stored value that does not fit is an
 * error naming the field, since only a foreign writer can have put it there. */
acc_status_t db_column_text(acc_db_t *db, sqlite3_stmt *st, int col, char *dst, size_t cap,
                            const char *field);

/* ---- field checks for puts (db_sql.c) --------------------------------------------------- */
/* ACC_ERR_RANGE when s (non-NULL) needs more than cap bytes with its NUL; ACC_ERR_INVALID when
 * s is NULL or, with nonempty set, empty. */
acc_status_t db_check_field(const acc_db_t *db, const char *s, size_t cap, int nonempty,
                            const char *field);
/* 64 lowercase hex digits, as acc_sha256_hex writes them. */
int db_is_sha256_hex(const char *s);
acc_status_t db_check_hash(const acc_db_t *db, const char *s, const char *field);
/* Inside a transaction: ACC_ERR_NOT_FOUND, naming what (e.g. "the allreduce selection") and
 * the fingerprint, unless a topology of that fingerprint is stored. */
acc_status_t db_check_topology_stored(acc_db_t *db, const char *fingerprint, const char *what);
/* Now, as Unix time in microseconds: when a run or a recording was stored. */
int64_t db_now_us(void);
/* The first 12 hex digits of a hash, for messages. */
const char *db_short(const char *hash, char buf[16]);

/* ---- selection tables (db_select.c) ----------------------------------------------------- */
/* SHA-256 of the canonical text of n entries (SCHEMA.md): with_backends 0 gives the text of
 * schema versions 1 to 9, which did not store the backends, 1 today's. */
acc_status_t db_selection_hash(const acc_select_entry_t *e, size_t n, int with_backends,
                               char out[ACC_SHA256_HEX_LEN + 1]);
/* Inside a transaction: add the entries of stored selection `id` to t, each checked. */
acc_status_t db_selection_read(acc_db_t *db, int64_t id, acc_select_table_t *t);

/* ---- schema (db_migrate.c) -------------------------------------------------------------- */
typedef struct {
    int version;      /* the schema version this step produces */
    const char *what; /* what it adds, for logs and SCHEMA.md */
    const char *sql;
    /* What SQL alone cannot do, run after it in the same transaction (NULL: nothing): data
     * derived by acc's own code, such as which backends run each stored plan. */
    acc_status_t (*fill)(acc_db_t *db);
} db_migration_t;

/* Step 10's fill (db_migrate_backends.c): each selection entry's backends, from its plan and
 * the topology's nodes, and each table's content hash again where the old one held. */
acc_status_t db_fill_backends(acc_db_t *db);

/* Step 11's fill (db_class.c): the class form of every stored plan. */
acc_status_t db_fill_class_forms(acc_db_t *db);
/* A plan's class form under hash, inside the caller's transaction (db_class.c). */
acc_status_t db_put_class_rows(acc_db_t *db, const char *hash, const acc_cplan_t *cp,
                               const acc_cplan_bin_t *bin);
/* The steps 1..ACC_DB_SCHEMA_VERSION, in order. */
const db_migration_t *db_migrations(int *count);
/* Inside a write transaction: apply steps from+1..to and record application_id and to as the
 * user_version.  from = 0 is an empty file. */
acc_status_t db_schema_upgrade(sqlite3 *sql, const char *path, int from, int to);

/* ---- summary helpers (db_summary.c) ----------------------------------------------------- */
/* "64 KiB", "1 GiB", "0 B" for a byte count. */
void db_format_bytes(uint64_t bytes, char *out, size_t cap);

/* ---- whether a build is current (db_build_key.c) ----------------------------------------- */
/* The digest of what acc_db_build's result for topo (fingerprint fp) depends on: acc's code, the
 * topology, the options and the times measured on it (opts->select's, else the database's). */
acc_status_t db_build_key(acc_db_t *db, const acc_topo_t *topo, const acc_db_build_opts_t *opts,
                          const char *fp, char key[ACC_SHA256_HEX_LEN + 1]);
/* Record key as the inputs the tables of fp were last built from. */
acc_status_t db_build_key_put(acc_db_t *db, const char *fp, const char *key);

#endif /* ACC_DB_INTERNAL_H */
