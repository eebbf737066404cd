/* Opening a database: recognising acc files and refusing everything else before anything is
 * written, WAL mode and connection settings, upgrades of older schemas, the runtime's
 * "no usable data" open, reading files in places nobody may write, and the journal mode a
 * writer leaves behind. */
#include "db_internal.h"

#include <errno.h>
#include <libgen.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the file header and catalogue say, read before acc decides to touch the file. */
typedef struct {
    int64_t app_id;
    int64_t version;
    int64_t ntables;
    char tables[160]; /* the first few table names, for the "another program" message */
} header_t;

static acc_status_t read_header(acc_db_t *db, void *ctx)
{
    header_t *h = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    memset(h, 0, sizeof(*h));
    if ((s = db_query_int(db, "PRAGMA application_id", &h->app_id)) != ACC_OK ||
        (s = db_query_int(db, "PRAGMA user_version", &h->version)) != ACC_OK)
        return s;
    if ((s = db_prepare(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
                        &st)) != ACC_OK)
        return s;
    while ((r = db_step_row(db, st, "listing the tables")) == 1) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        size_t used = strlen(h->tables);
        if (h->ntables++ < 6)
            snprintf(h->tables + used, sizeof(h->tables) - used, "%s%s", used ? ", " : "",
                     name ? name : "?");
    }
    sqlite3_finalize(st);
    return r < 0 ? (acc_status_t)r : ACC_OK;
}

/* PRAGMA quick_check: every page reachable and well formed, in time linear in the file. */
static acc_status_t quick_check(acc_db_t *db, void *ctx)
{
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    (void)ctx;
    if ((s = db_prepare(db, "PRAGMA quick_check(1)", &st)) != ACC_OK)
        return s;
    r = db_step_row(db, st, "checking the file");
    if (r == 1) {
        const char *res = (const char *)sqlite3_column_text(st, 0);
        if (!res || strcmp(res, "ok") != 0)
            s = acc_error_set(ACC_ERR_SQLITE,
                              "%s: the file is damaged (SQLite's check says: %s); move it away "
                              "and rebuild it with acc-compile --db",
                              db->path, res ? res : "nothing");
    } else if (r < 0) {
        s = (acc_status_t)r;
    }
    sqlite3_finalize(st);
    return s;
}

/* A database file is a whole number of pages.  SQLite notices a file shorter than its header
 * says, but not one cut inside its last page (it reads the missing bytes as zeros), which is
 * what an interrupted copy often leaves. */
static acc_status_t check_size(acc_db_t *db, void *ctx)
{
    int64_t page_size = 0;
    struct stat sb;
    acc_status_t s;

    (void)ctx;
    if ((s = db_query_int(db, "PRAGMA page_size", &page_size)) != ACC_OK)
        return s;
    if (stat(db->path, &sb) != 0)
        return acc_error_set(ACC_ERR_IO, "%s: %s", db->path, strerror(errno));
    if (page_size > 0 && sb.st_size % page_size != 0)
        return acc_error_set(ACC_ERR_SQLITE,
                             "%s is truncated: %lld bytes is not a whole number of %lld-byte "
                             "pages (an interrupted copy?); copy it again, or move it away and "
                             "rebuild it with acc-compile --db",
                             db->path, (long long)sb.st_size, (long long)page_size);
    return ACC_OK;
}

/* Decide from the header whether acc may use the file.  *fresh is set for an empty file (no
 * tables, no marks) that a writer initialises. */
static acc_status_t classify(const acc_db_t *db, const header_t *h, int *fresh)
{
    *fresh = 0;
    if (h->app_id == 0 && h->version == 0 && h->ntables == 0) {
        *fresh = 1;
        return ACC_OK;
    }
    if (h->app_id != ACC_DB_APPLICATION_ID)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "%s is an SQLite database of another program (application_id "
                             "0x%08llx, not acc's 0x%08x; %lld tables: %s%s); acc leaves it "
                             "alone: choose another file for the acc database",
                             db->path, (unsigned long long)(uint32_t)h->app_id,
                             ACC_DB_APPLICATION_ID, (long long)h->ntables, h->tables,
                             h->ntables > 6 ? ", ..." : "");
    if (h->version > ACC_DB_SCHEMA_VERSION)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "%s was written by a newer acc (schema version %lld; this acc knows "
                             "versions up to %d): use that acc version, or another file",
                             db->path, (long long)h->version, ACC_DB_SCHEMA_VERSION);
    if (h->version < 1)
        return acc_error_set(ACC_ERR_SQLITE,
                             "%s carries acc's application_id but no schema version; it is "
                             "damaged: move it away and rebuild it with acc-compile --db",
                             db->path);
    return ACC_OK;
}

typedef struct {
    int from;
} upgrade_t;

/* Inside the write transaction: look again (another process may have initialised or upgraded
 * the file since the header was read) and run the missing steps. */
static acc_status_t upgrade(acc_db_t *db, void *ctx)
{
    upgrade_t *u = ctx;
    header_t h;
    acc_status_t s;
    int fresh;

    if ((s = read_header(db, &h)) != ACC_OK || (s = classify(db, &h, &fresh)) != ACC_OK)
        return s;
    u->from = fresh ? 0 : (int)h.version;
    if (u->from == ACC_DB_SCHEMA_VERSION)
        return ACC_OK;
    return db_schema_upgrade(db->sql, db->path, u->from, ACC_DB_SCHEMA_VERSION);
}

/* journal_mode cannot change inside a transaction and needs the file to itself for a moment,
 * so it gets its own retry loop. */
static acc_status_t set_wal(acc_db_t *db, void *ctx)
{
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    (void)ctx;
    if ((s = db_prepare(db, "PRAGMA journal_mode = WAL", &st)) != ACC_OK)
        return s;
    r = db_step_row(db, st, "switching to WAL mode");
    if (r == 1 && sqlite3_stricmp((const char *)sqlite3_column_text(st, 0), "wal") != 0)
        s = acc_error_set(ACC_ERR_IO,
                          "%s: SQLite refused WAL mode (journal mode stays '%s'); the file "
                          "system may not support shared memory: use a local disk",
                          db->path, (const char *)sqlite3_column_text(st, 0));
    else if (r < 0)
        s = (acc_status_t)r;
    sqlite3_finalize(st);
    return s;
}

static acc_status_t with_retry(acc_db_t *db, acc_status_t (*fn)(acc_db_t *, void *),
                               const char *what)
{
    /* A transaction-less call, retried like db_txn: pauses doubling from 1 ms to 128 ms, at
     * most ACC_DB_BUSY_MS in all. */
    int waited = 0, delay = 1;
    acc_status_t s;
    while ((s = fn(db, NULL)) == ACC_ERR_BUSY && waited < ACC_DB_BUSY_MS) {
        sqlite3_sleep(delay);
        waited += delay;
        delay = delay < 128 ? delay * 2 : delay;
    }
    if (s == ACC_ERR_BUSY)
        return acc_error_prefix(s, "%s: %s: gave up after %d s: ", db->path, what,
                                ACC_DB_BUSY_MS / 1000);
    return s;
}

static int file_exists(const char *path, off_t *size)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return 0;
    if (size)
        *size = sb.st_size;
    return 1;
}

static int is_directory(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static acc_status_t check_writable(const char *path)
{
    char *copy = acc_mem_strdup(path);
    const char *dir;
    acc_status_t s = ACC_OK;
    struct stat sb;

    if (!copy)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    dir = dirname(copy);
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        s = acc_error_set(ACC_ERR_IO,
                          "%s: cannot create the database: directory %s does not "
                          "exist; create it or choose another path",
                          path, dir);
    /* SQLite writes the -wal and -shm files beside the database, so the directory must be
     * writable even when the file is. */
    else if (access(dir, W_OK | X_OK) != 0)
        s = acc_error_set(ACC_ERR_IO,
                          "%s: cannot write the database: directory %s is not "
                          "writable (%s), and acc needs it for the file and its -wal and -shm "
                          "companions; copy the database to a writable place or open it "
                          "read-only",
                          path, dir, strerror(errno));
    else if (file_exists(path, NULL) && access(path, W_OK) != 0)
        s = acc_error_set(ACC_ERR_IO,
                          "%s: cannot write the database: the file is read-only "
                          "(%s); change its permissions, copy it, or open it read-only",
                          path, strerror(errno));
    acc_mem_free(copy);
    return s;
}

static acc_status_t open_connection(acc_db_t *db, const char *name, int flags)
{
    int rc = sqlite3_open_v2(name, &db->sql, flags | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        acc_status_t s = db_error(db, rc, "opening");
        sqlite3_close(db->sql);
        db->sql = NULL;
        return s;
    }
    sqlite3_extended_result_codes(db->sql, 1);
    /* Per attempt; db_txn retries on top of it up to ACC_DB_BUSY_MS. */
    sqlite3_busy_timeout(db->sql, 2000);
    return ACC_OK;
}

/* ---- reading where nobody may write ------------------------------------------------------ */

/* Does the file's header say WAL (bytes 18 and 19 of an SQLite header are 2 in WAL mode)? */
static int header_says_wal(const char *path)
{
    unsigned char hdr[20];
    FILE *f = fopen(path, "rb");
    int wal = 0;

    if (f) {
        wal = fread(hdr, 1, sizeof(hdr), f) == sizeof(hdr) && hdr[18] == 2 && hdr[19] == 2;
        fclose(f);
    }
    return wal;
}

static int companion_holds_data(const char *path, const char *suffix)
{
    char name[4200];
    off_t size = 0;
    snprintf(name, sizeof(name), "%s%s", path, suffix);
    return file_exists(name, &size) && size > 0;
}

static int dir_writable(const char *path)
{
    char *copy = acc_mem_strdup(path);
    int ok = copy && access(dirname(copy), W_OK | X_OK) == 0;
    acc_mem_free(copy);
    return ok;
}

/* A file in WAL mode (left by an older acc, or by a writer that could not switch it back) in
 * a directory or on a mount this process cannot write cannot be read normally: SQLite needs its
 * -shm file, which it cannot create there.  When no -wal file holds changes and no rollback
 * journal is hot, the file alone is the whole database and nobody can be writing it (nobody
 * could create the -wal file), so it is read as immutable: no locks, no -shm. */
static int may_read_immutable(const char *path)
{
    return header_says_wal(path) && !dir_writable(path) && !companion_holds_data(path, "-wal") &&
           !companion_holds_data(path, "-journal");
}

/* "file:PATH?immutable=1", with the characters a URI gives meaning to escaped. */
static char *immutable_uri(const char *path)
{
    acc_buf_t b;
    const char *p;

    acc_buf_init(&b);
    acc_buf_puts(&b, path[0] == '/' ? "file://" : "file:");
    for (p = path; *p; p++) {
        if (*p == '%' || *p == '?' || *p == '#')
            acc_buf_printf(&b, "%%%02X", (unsigned char)*p);
        else
            acc_buf_append(&b, p, 1);
    }
    acc_buf_puts(&b, "?immutable=1");
    if (acc_buf_status(&b) != ACC_OK) {
        acc_buf_free(&b);
        return NULL;
    }
    return acc_buf_take(&b);
}

static acc_status_t open_reader(acc_db_t *db, header_t *h)
{
    acc_status_t s = open_connection(db, db->path, SQLITE_OPEN_READONLY);
    char *uri;

    if (s == ACC_OK)
        s = db_txn(db, 0, "reading the header", read_header, h);
    if (s == ACC_OK || !may_read_immutable(db->path))
        return s;
    ACC_DEBUG(DB, "%s; reading the file as immutable (WAL mode where nobody can write)",
              acc_error_message());
    sqlite3_close(db->sql);
    db->sql = NULL;
    if (!(uri = immutable_uri(db->path)))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory opening %s", db->path);
    s = open_connection(db, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
    acc_mem_free(uri);
    if (s == ACC_OK)
        s = db_txn(db, 0, "reading the header", read_header, h);
    return s;
}

static acc_status_t open_checked(acc_db_t *db, unsigned flags)
{
    header_t h;
    upgrade_t u = {0};
    acc_status_t s;
    int fresh;

    if (db->readonly) {
        /* A finished database is in rollback-journal mode (acc_db_close), which a reader reads
         * without writing anything; a WAL-mode file is read without its -shm file where that
         * cannot be made (open_reader). */
        s = open_reader(db, &h);
    } else {
        if ((s = open_connection(db, db->path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) !=
            ACC_OK)
            return s;
        if (sqlite3_db_readonly(db->sql, "main") == 1)
            return acc_error_set(ACC_ERR_IO,
                                 "%s: SQLite could only open the file read-only; "
                                 "check its permissions, or open it read-only",
                                 db->path);
        s = db_txn(db, 0, "reading the header", read_header, &h);
    }
    if (s != ACC_OK || (s = classify(db, &h, &fresh)) != ACC_OK)
        return s;
    if (fresh && db->readonly)
        return acc_error_set(ACC_ERR_NOT_FOUND,
                             "%s is empty: it holds no acc data; build it "
                             "with acc-compile --topo T --db %s",
                             db->path, db->path);
    if (!fresh && (s = db_txn(db, 0, "checking the file size", check_size, NULL)) != ACC_OK)
        return s;
    if (!fresh && (!db->readonly || (flags & ACC_DB_CHECK)) &&
        (s = db_txn(db, 0, "checking the file", quick_check, NULL)) != ACC_OK)
        return s;
    if (db->readonly) {
        if (h.version < ACC_DB_SCHEMA_VERSION)
            return acc_error_set(ACC_ERR_UNSUPPORTED,
                                 "%s has schema version %lld, older than this acc's %d; open it "
                                 "once for writing (acc-compile --db %s) to upgrade it",
                                 db->path, (long long)h.version, ACC_DB_SCHEMA_VERSION, db->path);
        db->version = (int)h.version;
        return db_exec(db, "PRAGMA query_only = 1", "setting query_only");
    }
    if ((s = with_retry(db, set_wal, "switching to WAL mode")) != ACC_OK ||
        (s = db_exec(db, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON",
                     "setting up the connection")) != ACC_OK)
        return s;
    if (fresh || h.version < ACC_DB_SCHEMA_VERSION) {
        if ((s = db_txn(db, 1, "upgrading the schema", upgrade, &u)) != ACC_OK)
            return s;
        if (u.from == 0)
            ACC_INFO(DB, "%s: new acc database, schema version %d", db->path,
                     ACC_DB_SCHEMA_VERSION);
        else if (u.from < ACC_DB_SCHEMA_VERSION)
            ACC_INFO(DB, "%s: upgraded from schema version %d to %d", db->path, u.from,
                     ACC_DB_SCHEMA_VERSION);
    }
    db->version = ACC_DB_SCHEMA_VERSION;
    return ACC_OK;
}

acc_status_t acc_db_open(const char *path, unsigned flags, acc_db_t **out)
{
    acc_db_t *db = NULL;
    acc_status_t s;

    *out = NULL;
    if (!path || !path[0])
        return acc_error_set(ACC_ERR_INVALID, "no database path given; pass --db FILE");
    if (is_directory(path))
        return acc_error_set(ACC_ERR_IO,
                             "%s is a directory, not a database file; name the file in it (for "
                             "instance %s/acc.db)",
                             path, path);
    if (flags & ACC_DB_READONLY) {
        if (!file_exists(path, NULL))
            return acc_error_set(ACC_ERR_NOT_FOUND,
                                 "%s: no such database (%s); build one with acc-compile --topo T "
                                 "--db %s",
                                 path, strerror(errno), path);
    } else if ((s = check_writable(path)) != ACC_OK) {
        return s;
    }
    db = acc_mem_calloc(1, sizeof(*db));
    if (!db || !(db->path = acc_mem_strdup(path))) {
        acc_mem_free(db);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory opening %s", path);
    }
    db->readonly = (flags & ACC_DB_READONLY) != 0;
    db->seed = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)db ^ 0x9e3779b97f4a7c15ull;
    if ((s = open_checked(db, flags)) != ACC_OK) {
        acc_db_close(db);
        return s;
    }
    *out = db;
    return ACC_OK;
}

acc_status_t acc_db_open_runtime(const char *path, acc_db_t **out)
{
    /* One warning per process: a job whose ranks all open the same broken file should say so
     * once per process, not once per communicator. */
    static atomic_int warned;
    acc_status_t s;

    *out = NULL;
    if (!path || !path[0])
        s = acc_error_set(ACC_ERR_INVALID, "no acc database path was given");
    else
        s = acc_db_open(path, ACC_DB_READONLY, out);
    if (s == ACC_OK)
        return ACC_OK;
    acc_log(atomic_exchange(&warned, 1) ? ACC_LOG_DEBUG : ACC_LOG_WARN, ACC_SUBSYS_DB,
            "no usable data: %s; carrying on without acc data (plain NCCL behaviour)",
            acc_error_message());
    return ACC_DB_NO_DATA;
}

/* A writer that is the file's only connection puts it back into rollback-journal mode
 * (journal_mode DELETE), which merges the WAL into the file and removes the -wal and -shm files:
 * a finished database is one self-contained file that any user can read from a read-only
 * directory or mount, where a WAL-mode file needs a -shm file beside it.  The next writer
 * switches it to WAL again.  With other connections open the switch fails at once (no busy
 * wait) and the file stays in WAL mode for them; the last writer to close switches it. */
static void leave_rollback_mode(acc_db_t *db)
{
    sqlite3_stmt *st = NULL;
    int rc;

    sqlite3_busy_timeout(db->sql, 0);
    if (sqlite3_prepare_v2(db->sql, "PRAGMA journal_mode = DELETE", -1, &st, NULL) != SQLITE_OK)
        return;
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW || sqlite3_stricmp((const char *)sqlite3_column_text(st, 0), "delete"))
        ACC_DEBUG(DB, "%s: stays in WAL mode while other connections use it (%s)", db->path,
                  sqlite3_errmsg(db->sql));
    sqlite3_finalize(st);
}

void acc_db_close(acc_db_t *db)
{
    if (!db)
        return;
    if (db->sql && !db->readonly && db->version)
        leave_rollback_mode(db);
    if (db->sql && sqlite3_close(db->sql) != SQLITE_OK)
        ACC_WARN(DB, "%s: closing: %s", db->path, sqlite3_errmsg(db->sql));
    acc_mem_free(db->path);
    acc_mem_free(db);
}

const char *acc_db_path(const acc_db_t *db)
{
    return db->path;
}

int acc_db_schema_version(const acc_db_t *db)
{
    return db->version;
}
