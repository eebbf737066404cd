/* SQLite plumbing shared by the db files: error mapping, transactions with retry and backoff,
 * statement helpers and field checks. */
#include "db_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

void (*db_before_commit_hook)(const char *what);

/* The closest acc status for a SQLite result code (extended codes are reduced to primary). */
static acc_status_t map_rc(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return ACC_ERR_BUSY;
    case SQLITE_NOMEM:
        return ACC_ERR_NOMEM;
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
        return ACC_ERR_IO;
    case SQLITE_TOOBIG:
        return ACC_ERR_RANGE;
    default:
        return ACC_ERR_SQLITE;
    }
}

static const char *advice(int rc, int sys_errno)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return "other processes hold the database; retry when they are done";
    case SQLITE_FULL:
        return "the disk is full; free space and run again (the database was left as it was)";
    case SQLITE_IOERR:
        if (sys_errno == ENOSPC || sys_errno == EFBIG || sys_errno == EDQUOT ||
            rc == SQLITE_IOERR_WRITE || rc == SQLITE_IOERR_FSYNC || rc == SQLITE_IOERR_TRUNCATE ||
            rc == SQLITE_IOERR_SHMSIZE)
            return "writing failed: the disk may be full or a file size limit (ulimit -f) "
                   "reached; free space or raise the limit and run again (the database was left "
                   "as it was)";
        return "check the disk and the file's permissions, then run again";
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
        return "check that the file and its directory exist and are writable, or open it "
               "read-only";
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return "the file is damaged or is not a database; move it away and rebuild it with "
               "acc-compile --db";
    case SQLITE_NOMEM:
        return "free some memory and run again";
    default:
        return "this is a bug in acc or a damaged file; please report it with the file";
    }
}

acc_status_t db_error_rc(sqlite3 *sql, const char *path, int rc, const char *fmt, ...)
{
    char what[512];
    char sys[160] = "";
    const char *msg = sql ? sqlite3_errmsg(sql) : sqlite3_errstr(rc);
    int err = sql ? sqlite3_system_errno(sql) : 0;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    /* The OS error says which of "disk full", "file too large" or "permission denied" it was;
     * SQLite's own text often does not.  SQLite reads errno some calls after the failure, so
     * only the errors that can cause an I/O failure are shown, never a stray ENOENT. */
    if (err == ENOSPC || err == EFBIG || err == EDQUOT || err == EACCES || err == EPERM ||
        err == EROFS || err == EIO)
        snprintf(sys, sizeof(sys), ", %s", strerror(err));
    return acc_error_set(map_rc(rc), "%s: %s: %s (SQLite error %d: %s%s); %s", path, what, msg, rc,
                         sqlite3_errstr(rc), sys, advice(rc, err));
}

static uint64_t next_random(acc_db_t *db)
{
    /* xorshift64: only spreads the retries of competing processes apart. */
    db->seed ^= db->seed << 13;
    db->seed ^= db->seed >> 7;
    db->seed ^= db->seed << 17;
    return db->seed;
}

static void pause_ms(double ms)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1e3);
    ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1e3) * 1e6);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void rollback(acc_db_t *db)
{
    /* SQLite may have rolled back already (some I/O errors and SQLITE_FULL do it itself). */
    if (!sqlite3_get_autocommit(db->sql))
        sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
}

acc_status_t db_txn(acc_db_t *db, int write, const char *what, db_txn_fn fn, void *ctx)
{
    /* Backoff from 1 ms, doubling to 128 ms, each pause jittered to between half and all of it.
     * SQLite's busy handler waits inside each attempt as well; the retries here cover the cases
     * it does not (a snapshot gone stale, recovery by another process, a lock lost on COMMIT). */
    const double deadline = (acc_now_s() * 1e3) + ACC_DB_BUSY_MS;
    double delay = 1.0;
    int attempts = 0;
    acc_status_t st;
    int rc;

    if (write && db->readonly)
        return acc_error_set(ACC_ERR_INVALID, "%s: %s: the database was opened read-only", db->path,
                             what);
    for (;;) {
        attempts++;
        rc = sqlite3_exec(db->sql, write ? "BEGIN IMMEDIATE" : "BEGIN", NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            st = db_error(db, rc, "%s: starting a transaction", what);
        } else {
            st = fn(db, ctx);
            if (st == ACC_OK) {
                if (write && db_before_commit_hook)
                    db_before_commit_hook(what);
                rc = sqlite3_exec(db->sql, "COMMIT", NULL, NULL, NULL);
                if (rc == SQLITE_OK)
                    return ACC_OK;
                st = db_error(db, rc, "%s: committing", what);
            }
            rollback(db);
        }
        if (st != ACC_ERR_BUSY)
            return st;
        if ((acc_now_s() * 1e3) >= deadline)
            return acc_error_set(ACC_ERR_BUSY,
                                 "%s: %s: the database stayed locked by other processes for %d s "
                                 "(%d attempts); retry when they are done",
                                 db->path, what, ACC_DB_BUSY_MS / 1000, attempts);
        ACC_DEBUG(DB, "%s: %s: busy, retrying in %.0f ms", db->path, what, delay);
        pause_ms(delay * (0.5 + 0.5 * (double)(next_random(db) % 1024) / 1024.0));
        if (delay < 128.0)
            delay *= 2.0;
    }
}

acc_status_t db_prepare(acc_db_t *db, const char *sql, sqlite3_stmt **out)
{
    int rc = sqlite3_prepare_v2(db->sql, sql, -1, out, NULL);
    if (rc != SQLITE_OK) {
        *out = NULL;
        return db_error(db, rc, "preparing \"%.60s\"", sql);
    }
    return ACC_OK;
}

acc_status_t db_step_done(acc_db_t *db, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE || rc == SQLITE_ROW)
        return ACC_OK;
    return db_error(db, rc, "%s", what);
}

int db_step_row(acc_db_t *db, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    return (int)db_error(db, rc, "%s", what);
}

acc_status_t db_exec(acc_db_t *db, const char *sql, const char *what)
{
    int rc = sqlite3_exec(db->sql, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? ACC_OK : db_error(db, rc, "%s", what);
}

acc_status_t db_query_int(acc_db_t *db, const char *sql, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    if ((s = db_prepare(db, sql, &st)) != ACC_OK)
        return s;
    r = db_step_row(db, st, sql);
    if (r == 1)
        *out = sqlite3_column_int64(st, 0);
    else if (r == 0)
        s = acc_error_set(ACC_ERR_INTERNAL, "%s: \"%s\" gave no row", db->path, sql);
    else
        s = (acc_status_t)r;
    sqlite3_finalize(st);
    return s;
}

int db_bind_text(sqlite3_stmt *st, int col, const char *s)
{
    if (!s)
        return sqlite3_bind_null(st, col);
    return sqlite3_bind_text(st, col, s, -1, SQLITE_STATIC);
}

acc_status_t db_column_text(acc_db_t *db, sqlite3_stmt *st, int col, char *dst, size_t cap,
                            const char *field)
{
    const unsigned char *s = sqlite3_column_text(st, col);
    size_t n = (size_t)sqlite3_column_bytes(st, col);

    if (!s) {
        dst[0] = '\0';
        return ACC_OK;
    }
    if (n >= cap || strlen((const char *)s) != n)
        return acc_error_set(ACC_ERR_PARSE,
                             "%s: stored %s is %zu bytes long or holds a NUL byte (at most %zu "
                             "bytes are allowed); the file was not written by acc: rebuild it "
                             "with acc-compile --db",
                             db->path, field, n, cap - 1);
    memcpy(dst, s, n + 1);
    return ACC_OK;
}

acc_status_t db_check_field(const acc_db_t *db, const char *s, size_t cap, int nonempty,
                            const char *field)
{
    if (!s || (nonempty && !s[0]))
        return acc_error_set(ACC_ERR_INVALID, "%s: %s is %s; give a value", db->path, field,
                             s ? "empty" : "missing");
    if (strlen(s) >= cap)
        return acc_error_set(ACC_ERR_RANGE,
                             "%s: %s \"%.40s...\" is %zu bytes long; at most %zu "
                             "are stored",
                             db->path, field, s, strlen(s), cap - 1);
    return ACC_OK;
}

int db_is_sha256_hex(const char *s)
{
    size_t i;
    if (!s)
        return 0;
    for (i = 0; i < ACC_SHA256_HEX_LEN; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return s[ACC_SHA256_HEX_LEN] == '\0';
}

acc_status_t db_check_hash(const acc_db_t *db, const char *s, const char *field)
{
    if (db_is_sha256_hex(s))
        return ACC_OK;
    return acc_error_set(ACC_ERR_INVALID,
                         "%s: %s \"%.70s\" is not a SHA-256 in hex (64 lowercase hex digits)",
                         db->path, field, s ? s : "(null)");
}

const char *db_short(const char *hash, char buf[16])
{
    snprintf(buf, 16, "%.12s", hash ? hash : "");
    return buf;
}

int64_t db_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

sqlite3_int64 db_u64_to_sql(uint64_t v)
{
    sqlite3_int64 r;
    memcpy(&r, &v, sizeof(r));
    return r;
}

uint64_t db_u64_from_sql(sqlite3_int64 v)
{
    uint64_t r;
    memcpy(&r, &v, sizeof(r));
    return r;
}

acc_status_t db_check_topology_stored(acc_db_t *db, const char *fingerprint, const char *what)
{
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    if ((s = db_prepare(db, "SELECT count(*) FROM topologies WHERE fingerprint = ?1", &st)) !=
        ACC_OK)
        return s;
    db_bind_text(st, 1, fingerprint);
    if ((r = db_step_row(db, st, "looking up the topology")) == 1 && !sqlite3_column_int(st, 0))
        s = acc_error_set(ACC_ERR_NOT_FOUND,
                          "%s: %s: its topology %s is not stored; store the topology first",
                          db->path, what, fingerprint);
    sqlite3_finalize(st);
    return r < 0 ? (acc_status_t)r : s;
}
