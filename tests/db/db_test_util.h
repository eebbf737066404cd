/*
 * db_test_util.h - what the db tests share: scratch database paths, topologies, plans and
 * selection tables to store, and a dump of every row of a file for whole-file comparisons.
 * Header-only: each test program gets its own static copy.
 */
#ifndef DB_TEST_UTIL_H
#define DB_TEST_UTIL_H

#include "../compiler/plan_fixtures.h"
#include "acc_db.h"
#include "acc_test.h"
#include "db_internal.h"

#include <dirent.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Remove a database and its companion files. */
static inline void tu_remove(const char *path)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[4400];
    size_t i;
    for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", path, suffix[i]);
        unlink(p);
    }
}

/* Run fn(arg) in a child process as an ordinary user (nobody, 65534) when the tests run as root
 * (root may write anywhere), so that permissions mean what they say; returns the child's exit
 * status, 77 when it could not switch users.  The child ends with _exit, so fn may exec. */
static inline int tu_as_user(int (*fn)(const char *), const char *arg)
{
    int status;
    pid_t pid;
    fflush(NULL);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
            _exit(77);
        _exit(fn(arg));
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status), "the child ended with status 0x%x", status);
    return WEXITSTATUS(status);
}

/* The files in directory dir other than . and .., space-separated and sorted (a database and
 * its companions), in a static buffer. */
static inline const char *tu_dir_files(const char *dir)
{
    static char out[1024];
    struct dirent **list = NULL;
    int n = scandir(dir, &list, NULL, alphasort);
    out[0] = '\0';
    CHECK_MSG(n >= 0, "cannot list %s", dir);
    for (int i = 0; i < n; i++) {
        if (strcmp(list[i]->d_name, ".") != 0 && strcmp(list[i]->d_name, "..") != 0)
            snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", out[0] ? " " : "",
                     list[i]->d_name);
        free(list[i]);
    }
    free(list);
    return out;
}

/* A scratch path that holds no file (static storage, one per call slot as acc_test_tmp). */
static inline const char *tu_fresh(const char *name)
{
    const char *p = acc_test_tmp(name);
    tu_remove(p);
    return p;
}

static inline acc_db_t *tu_open(const char *path, unsigned flags)
{
    acc_db_t *db = NULL;
    CHECK_OK(acc_db_open(path, flags, &db));
    CHECK(db != NULL);
    return db;
}

static inline acc_topo_t *tu_synth(const char *desc)
{
    acc_topo_t *t = NULL;
    CHECK_OK(acc_topo_load_synthetic(desc, &t));
    return t;
}

/* Store a synthetic topology; its fingerprint in fp. */
static inline void tu_put_synth(acc_db_t *db, const char *desc, char fp[ACC_SHA256_HEX_LEN + 1])
{
    acc_topo_t *t = tu_synth(desc);
    CHECK_OK(acc_db_put_topology(db, t, fp));
    acc_topo_destroy(t);
}

static inline acc_select_entry_t tu_entry(uint64_t lo, uint64_t hi, const char *algo,
                                          const char *params, const char *plan_hash)
{
    acc_select_entry_t e;
    memset(&e, 0, sizeof(e));
    e.min_bytes = lo;
    e.max_bytes = hi;
    e.use_nccl = plan_hash == NULL;
    snprintf(e.algo, sizeof(e.algo), "%s", algo);
    snprintf(e.params, sizeof(e.params), "%s", params);
    snprintf(e.plan_hash, sizeof(e.plan_hash), "%.*s", (int)sizeof(e.plan_hash) - 1,
             plan_hash ? plan_hash : "");
    e.predicted_us = 10.0 + (double)(lo % 977) / 8.0;
    e.measured_us = -1.0;
    e.source = ACC_SELECT_MODEL;
    /* As a one-node table has them: NCCL's ranges run on GPUs, acc's plans on either backend. */
    e.backends = plan_hash ? ACC_BACKENDS_ALL : ACC_BACKENDS_CUDA;
    return e;
}

/* A table of n ranges doubling from 0 bytes, every third one left to NCCL, the last one open
 * ended; acc ranges use plan_hash.  variant changes the predicted times. */
static inline acc_select_table_t *tu_table(acc_coll_t coll, const char *fp, const char *plan_hash,
                                           int n, int variant)
{
    acc_select_table_t *t = NULL;
    uint64_t lo = 0;
    int i;
    CHECK_OK(acc_select_create(coll, fp, &t));
    for (i = 0; i < n; i++) {
        uint64_t hi = i == n - 1 ? UINT64_MAX : (1024ull << i) - 1;
        acc_select_entry_t e = i % 3 == 2
                                   ? tu_entry(lo, hi, "Ring", "proto=LL128 channels=24", NULL)
                                   : tu_entry(lo, hi, "ring", "lanes=2", plan_hash);
        e.predicted_us += variant;
        if (i == 1) {
            e.measured_us = 12.5 + variant;
            e.source = ACC_SELECT_MEASURED;
        }
        CHECK_OK(acc_select_add(t, &e));
        lo = hi + 1;
    }
    return t;
}

static inline void tu_check_same_table(const acc_select_table_t *a, const acc_select_table_t *b)
{
    size_t i;
    CHECK_INT(a->coll, b->coll);
    CHECK_STR(a->topo_fingerprint, b->topo_fingerprint);
    CHECK_INT(a->n, b->n);
    for (i = 0; i < a->n; i++) {
        const acc_select_entry_t *x = &a->entries[i], *y = &b->entries[i];
        CHECK(x->min_bytes == y->min_bytes);
        CHECK(x->max_bytes == y->max_bytes);
        CHECK_INT(x->use_nccl, y->use_nccl);
        CHECK_STR(x->algo, y->algo);
        CHECK_STR(x->params, y->params);
        CHECK_STR(x->plan_hash, y->plan_hash);
        CHECK(x->predicted_us == y->predicted_us);
        CHECK(x->measured_us == y->measured_us);
        CHECK_INT(x->source, y->source);
        CHECK_INT(x->backends, y->backends);
    }
}

/* NCCL's choices in n ranges doubling from 0 bytes, the last one open ended: algorithms,
 * protocols and channels vary from range to range (channels 0 every fourth: NCCL's own count),
 * and one range is measured.  variant changes the predicted times. */
static inline acc_select_nccl_t *tu_nccl(acc_coll_t coll, const char *fp, int n, int variant)
{
    acc_select_nccl_t *t = NULL;
    uint64_t lo = 0;
    CHECK_OK(acc_select_nccl_create(coll, fp, &t));
    for (int i = 0; i < n; i++) {
        acc_select_nccl_entry_t e = {lo,
                                     i == n - 1 ? UINT64_MAX : (1024ull << i) - 1,
                                     (acc_nccl_algo_t)(i % ACC_NCCL_ALGO_COUNT),
                                     (acc_nccl_proto_t)(i % ACC_NCCL_PROTO_COUNT),
                                     i % 4 == 3 ? 0 : 1 + i,
                                     5.0 + i + variant,
                                     i == 2 ? 7.25 : -1.0,
                                     i == 2 ? ACC_SELECT_MEASURED : ACC_SELECT_MODEL};
        CHECK_OK(acc_select_nccl_append(t, &e));
        lo = e.max_bytes + 1;
    }
    CHECK_INT(t->n, n);
    return t;
}

static inline void tu_check_same_nccl(const acc_select_nccl_t *a, const acc_select_nccl_t *b)
{
    CHECK_INT(a->coll, b->coll);
    CHECK_STR(a->topo_fingerprint, b->topo_fingerprint);
    CHECK_INT(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const acc_select_nccl_entry_t *x = &a->entries[i], *y = &b->entries[i];
        CHECK(x->min_bytes == y->min_bytes && x->max_bytes == y->max_bytes);
        CHECK_INT(x->algo, y->algo);
        CHECK_INT(x->proto, y->proto);
        CHECK_INT(x->channels, y->channels);
        CHECK(x->predicted_us == y->predicted_us && x->measured_us == y->measured_us);
        CHECK_INT(x->source, y->source);
    }
}

/* The distinct plans the acc ranges of a stored table name (at least one), at most cap. */
static inline size_t tu_named_plans(acc_db_t *db, const char *fp, acc_coll_t coll,
                                    char hashes[][ACC_SHA256_HEX_LEN + 1], size_t cap)
{
    acc_select_table_t *t = NULL;
    size_t i, j, n = 0;

    CHECK_OK(acc_db_get_selection(db, fp, coll, &t));
    for (i = 0; i < t->n; i++) {
        if (t->entries[i].use_nccl)
            continue;
        for (j = 0; j < n && strcmp(hashes[j], t->entries[i].plan_hash) != 0; j++)
            ;
        if (j == n && n < cap)
            snprintf(hashes[n++], ACC_SHA256_HEX_LEN + 1, "%s", t->entries[i].plan_hash);
    }
    acc_select_destroy(t);
    CHECK(n >= 1);
    return n;
}

/* Run SQL on a file with SQLite directly (what a foreign program or an attacker would do). */
static inline void tu_sql(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    char *err = NULL;
    CHECK_MSG(sqlite3_open(path, &h) == SQLITE_OK, "sqlite3_open %s", path);
    sqlite3_busy_timeout(h, 5000);
    CHECK_MSG(sqlite3_exec(h, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql, err ? err : "?");
    sqlite3_free(err);
    sqlite3_close(h);
}

static inline int64_t tu_sql_int(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    CHECK(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_MSG(sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
              sqlite3_errmsg(h));
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

/* Every table's rows (ordered by all columns), the schema and the header pragmas as text:
 * two files with the same dump hold the same data.  Taken by the caller (acc_mem_free). */
static inline char *tu_dump(const char *path)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *tables = NULL;
    acc_buf_t b;

    acc_buf_init(&b);
    CHECK(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(h,
                             "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL "
                             "ORDER BY name",
                             -1, &tables, NULL) == SQLITE_OK);
    while (sqlite3_step(tables) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(tables, 0);
        sqlite3_stmt *cols = NULL, *rows = NULL;
        acc_buf_t q;
        int n = 0;
        acc_buf_printf(&b, "%s\n", (const char *)sqlite3_column_text(tables, 1));
        if (strstr((const char *)sqlite3_column_text(tables, 1), "CREATE INDEX"))
            continue;
        acc_buf_init(&q);
        acc_buf_puts(&q, "SELECT ");
        CHECK(sqlite3_prepare_v2(h, "SELECT name FROM pragma_table_info(?1) ORDER BY cid", -1,
                                 &cols, NULL) == SQLITE_OK);
        sqlite3_bind_text(cols, 1, name, -1, SQLITE_STATIC);
        while (sqlite3_step(cols) == SQLITE_ROW)
            acc_buf_printf(&q, "%squote(\"%s\")", n++ ? " || '|' || " : "",
                           (const char *)sqlite3_column_text(cols, 0));
        sqlite3_finalize(cols);
        acc_buf_printf(&q, " FROM \"%s\" ORDER BY 1", name);
        CHECK_MSG(sqlite3_prepare_v2(h, q.data, -1, &rows, NULL) == SQLITE_OK, "%s: %s", q.data,
                  sqlite3_errmsg(h));
        while (sqlite3_step(rows) == SQLITE_ROW)
            acc_buf_printf(&b, "  %s\n", (const char *)sqlite3_column_text(rows, 0));
        sqlite3_finalize(rows);
        acc_buf_free(&q);
    }
    sqlite3_finalize(tables);
    sqlite3_close(h);
    CHECK_OK(acc_buf_status(&b));
    return acc_buf_take(&b);
}

/* The bytes of a file (taken), to show that a refused file was left exactly as it was. */
static inline char *tu_bytes(const char *path, size_t *len)
{
    char *data = NULL;
    CHECK_OK(acc_read_file(path, &data, len));
    return data;
}

#endif
