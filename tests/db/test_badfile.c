/* Files acc must not trust or must not damage: missing, empty, random bytes, truncated, another
 * program's database, a newer schema, a read-only place, a full disk, a writer killed half way,
 * and rows altered behind acc's back.  Each gives a clear error naming the file and never loses
 * what the file held. */
#include "db_test_util.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* A database holding a topology, a plan and its allreduce selection; fp and hash receive keys. */
static void make_db(const char *path, char fp[ACC_SHA256_HEX_LEN + 1],
                    char hash[ACC_SHA256_HEX_LEN + 1])
{
    acc_db_t *db = tu_open(path, 0);
    acc_plan_t *plan = fx_ring_allreduce(8, 2);
    acc_select_table_t *t;

    tu_put_synth(db, "nodes=1 gpus=8 nvlink=18", fp);
    CHECK_OK(acc_db_put_plan(db, plan, hash));
    t = tu_table(ACC_COLL_ALLREDUCE, fp, hash, 20, 0);
    CHECK_OK(acc_db_put_selection(db, t));
    acc_select_destroy(t);
    acc_plan_destroy(plan);
    acc_db_close(db);
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f;
    tu_remove(path);
    f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(data, 1, len, f) == len);
    CHECK(fclose(f) == 0);
}

/* Opening must fail with st, name the file, and leave its bytes as they were. */
static void check_refused(const char *path, unsigned flags, acc_status_t st, const char *fragment)
{
    size_t before_len, after_len;
    char *before = tu_bytes(path, &before_len), *after;
    acc_db_t *db = NULL;

    CHECK_ERR(acc_db_open(path, flags, &db), st);
    CHECK(db == NULL);
    CHECK_MSG_HAS(path);
    if (fragment)
        CHECK_MSG_HAS(fragment);
    after = tu_bytes(path, &after_len);
    CHECK_INT(after_len, before_len);
    CHECK(memcmp(before, after, before_len) == 0);
    acc_mem_free(before);
    acc_mem_free(after);
}

ACC_TEST(missing_and_empty_files)
{
    const char *path = tu_fresh("bad_missing.db");
    acc_db_t *db = NULL;

    CHECK_ERR(acc_db_open(path, ACC_DB_READONLY, &db), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS(path);
    CHECK_MSG_HAS("acc-compile");
    CHECK(access(path, F_OK) != 0); /* a reader creates nothing */
    CHECK_ERR(acc_db_open("/nonexistent-dir/acc.db", 0, &db), ACC_ERR_IO);
    CHECK_MSG_HAS("/nonexistent-dir does not exist");
    CHECK_ERR(acc_db_open("", 0, &db), ACC_ERR_INVALID);

    /* An empty file holds nothing to lose: readers say so, writers make it a database. */
    write_bytes(path, "", 0);
    CHECK_ERR(acc_db_open(path, ACC_DB_READONLY, &db), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("is empty");
    db = tu_open(path, 0);
    acc_db_close(db);
    CHECK_INT(tu_sql_int(path, "PRAGMA application_id"), ACC_DB_APPLICATION_ID);
}

ACC_TEST(random_bytes_are_refused)
{
    const char *path = tu_fresh("bad_random.db");
    char *junk = acc_mem_alloc(65536);
    unsigned seed = 12345;
    acc_db_t *db = NULL;
    size_t i;

    for (i = 0; i < 65536; i++)
        junk[i] = (char)(rand_r(&seed) >> 3);
    write_bytes(path, junk, 65536);
    check_refused(path, 0, ACC_ERR_SQLITE, "not a database");
    check_refused(path, ACC_DB_READONLY, ACC_ERR_SQLITE, "rebuild it");
    CHECK_INT(acc_db_open_runtime(path, &db), ACC_DB_NO_DATA);
    CHECK(db == NULL);
    /* Text that merely starts like an SQLite header is no better. */
    memcpy(junk, "SQLite format 3", 16);
    write_bytes(path, junk, 65536);
    check_refused(path, 0, ACC_ERR_SQLITE, NULL);
    acc_mem_free(junk);
}

ACC_TEST(truncated_files_are_refused)
{
    const char *good = tu_fresh("bad_trunc_src.db");
    const char *path = tu_fresh("bad_trunc.db");
    char fp[ACC_SHA256_HEX_LEN + 1], hash[ACC_SHA256_HEX_LEN + 1];
    size_t len, cuts[6], i;
    char *bytes;

    make_db(good, fp, hash);
    bytes = tu_bytes(good, &len);
    CHECK(len >= 8 * 4096);
    cuts[0] = 50;         /* inside the header */
    cuts[1] = 100;        /* header only */
    cuts[2] = 4096;       /* the first page */
    cuts[3] = len / 2;    /* an interrupted copy */
    cuts[4] = len - 4096; /* one page short */
    cuts[5] = len - 1000; /* a partial last page */
    for (i = 0; i < 6; i++) {
        acc_db_t *db = NULL;
        write_bytes(path, bytes, cuts[i]);
        check_refused(path, 0, ACC_ERR_SQLITE, "rebuild it");
        /* Readers without the full check must not trust it either: opening or loading fails. */
        if (acc_db_open(path, ACC_DB_READONLY, &db) == ACC_OK) {
            acc_select_table_t *t = NULL;
            acc_status_t st = acc_db_get_selection(db, fp, ACC_COLL_ALLREDUCE, &t);
            CHECK_MSG(st != ACC_OK, "cut at %zu: the selection loaded from a truncated file",
                      cuts[i]);
            CHECK_MSG_HAS(path);
            acc_db_close(db);
        } else {
            CHECK_MSG_HAS(path);
        }
        CHECK_INT(acc_db_open_runtime(path, &db) == ACC_OK || db == NULL, 1);
        acc_db_close(db);
    }
    acc_mem_free(bytes);
}

ACC_TEST(another_programs_database_is_left_alone)
{
    const char *path = tu_fresh("bad_foreign.db");
    acc_db_t *db = NULL;

    tu_sql(path, "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT);"
                 "CREATE TABLE orders (id INTEGER, total REAL);"
                 "INSERT INTO users VALUES (1, 'a@example.com');");
    check_refused(path, 0, ACC_ERR_UNSUPPORTED, "another program");
    CHECK_MSG_HAS("orders, users");
    check_refused(path, ACC_DB_READONLY, ACC_ERR_UNSUPPORTED, "choose another file");
    CHECK_INT(acc_db_open_runtime(path, &db), ACC_DB_NO_DATA);
    /* Its journal mode was not switched and its rows are there. */
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM users"), 1);
    CHECK(access(acc_test_tmp("bad_foreign.db-wal"), F_OK) != 0);

    /* Marked by its program but without tables yet: still not acc's. */
    tu_remove(path);
    tu_sql(path, "PRAGMA application_id = 1196446541; PRAGMA user_version = 7;");
    check_refused(path, 0, ACC_ERR_UNSUPPORTED, "0x4750534d");
}

ACC_TEST(newer_schema_is_refused)
{
    const char *path = tu_fresh("bad_newer.db");
    char fp[ACC_SHA256_HEX_LEN + 1], hash[ACC_SHA256_HEX_LEN + 1], sql[64], newer[32];
    acc_db_t *db = NULL;
    acc_select_table_t *t = NULL;

    make_db(path, fp, hash);
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", ACC_DB_SCHEMA_VERSION + 1);
    tu_sql(path, sql);
    check_refused(path, 0, ACC_ERR_UNSUPPORTED, "newer acc");
    snprintf(newer, sizeof(newer), "schema version %d", ACC_DB_SCHEMA_VERSION + 1);
    check_refused(path, ACC_DB_READONLY, ACC_ERR_UNSUPPORTED, newer);
    CHECK_INT(acc_db_open_runtime(path, &db), ACC_DB_NO_DATA);
    /* Nothing was lost: with the version put back, the data is all there. */
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", ACC_DB_SCHEMA_VERSION);
    tu_sql(path, sql);
    db = tu_open(path, ACC_DB_READONLY);
    CHECK_OK(acc_db_get_selection(db, fp, ACC_COLL_ALLREDUCE, &t));
    CHECK_INT(t->n, 20);
    acc_select_destroy(t);
    acc_db_close(db);
}

/* Run fn in a child process as an ordinary user when the tests run as root (root may write
 * anywhere), so that permissions mean what they say.  Returns the child's exit status. */
static int as_user(int (*fn)(const char *), const char *arg)
{
    int status;
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(77);
        _exit(fn(arg));
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int readonly_dir_child(const char *path)
{
    acc_db_t *db = NULL;
    acc_select_table_t *t = NULL;
    char fp[ACC_SHA256_HEX_LEN + 1];

    if (acc_db_open(path, 0, &db) != ACC_ERR_IO || !strstr(acc_error_message(), "not writable") ||
        !strstr(acc_error_message(), path)) {
        fprintf(stderr, "writer: %s\n", acc_error_message());
        return 1;
    }
    /* Readers still get the data: nobody can be writing a file in a read-only place. */
    if (acc_db_open_runtime(path, &db) != ACC_OK) {
        fprintf(stderr, "runtime: %s\n", acc_error_message());
        return 2;
    }
    {
        acc_db_topo_info_t *info = NULL;
        size_t n = 0;
        if (acc_db_list_topologies(db, &info, &n) != ACC_OK || n != 1)
            return 4;
        memcpy(fp, info[0].fingerprint, sizeof(fp));
        acc_mem_free(info);
    }
    if (acc_db_get_selection(db, fp, ACC_COLL_ALLREDUCE, &t) != ACC_OK || t->n != 20) {
        fprintf(stderr, "selection: %s\n", acc_error_message());
        return 5;
    }
    acc_select_destroy(t);
    acc_db_close(db);
    return 0;
}

static int readonly_file_child(const char *path)
{
    acc_db_t *db = NULL;
    if (acc_db_open(path, 0, &db) != ACC_ERR_IO || !strstr(acc_error_message(), "read-only")) {
        fprintf(stderr, "writer: %s\n", acc_error_message());
        return 1;
    }
    if (acc_db_open(path, ACC_DB_READONLY, &db) != ACC_OK) {
        fprintf(stderr, "reader: %s\n", acc_error_message());
        return 2;
    }
    acc_db_close(db);
    return 0;
}

ACC_TEST(read_only_places)
{
    char dir[4200], path[4300], fp[ACC_SHA256_HEX_LEN + 1], hash[ACC_SHA256_HEX_LEN + 1];
    char *before, *after;
    int rc;

    /* A directory the user cannot write, holding a finished database. */
    snprintf(dir, sizeof(dir), "%s", acc_test_tmp("bad_rodir"));
    mkdir(dir, 0755);
    CHECK(chmod(dir, 0755) == 0);
    snprintf(path, sizeof(path), "%s/acc.db", dir);
    tu_remove(path);
    make_db(path, fp, hash);
    CHECK(chmod(path, 0644) == 0);
    if (geteuid() != 0)
        CHECK(chmod(dir, 0555) == 0);
    before = tu_dump(path);
    rc = as_user(readonly_dir_child, path);
    if (rc == 77)
        ACC_SKIP("cannot switch to an unprivileged user");
    CHECK_INT(rc, 0);
    chmod(dir, 0755);
    after = tu_dump(path);
    CHECK_STR(after, before);
    acc_mem_free(before);
    acc_mem_free(after);

    /* A read-only file in a writable directory. */
    CHECK(chmod(dir, 0777) == 0);
    CHECK(chmod(path, 0444) == 0);
    CHECK_INT(as_user(readonly_file_child, path), 0);
    CHECK(chmod(path, 0644) == 0);
    CHECK(chmod(dir, 0755) == 0);
}

static int full_disk_child(const char *path)
{
    acc_db_t *db = NULL;
    struct rlimit lim;
    char *big = acc_mem_alloc(1 << 20);
    acc_status_t st;

    /* The WAL must grow past the limit: 64 KiB, while the profile is 1 MiB. */
    signal(SIGXFSZ, SIG_IGN);
    lim.rlim_cur = lim.rlim_max = 64 * 1024;
    if (!big || setrlimit(RLIMIT_FSIZE, &lim) != 0)
        return 10;
    if (acc_db_open(path, 0, &db) != ACC_OK) {
        fprintf(stderr, "open: %s\n", acc_error_message());
        return 11;
    }
    memset(big, 'x', 1 << 20);
    memcpy(big, "blob: ", 6);
    big[(1 << 20) - 1] = '\0';
    st = acc_db_put_profile(db, "huge", big, 1, NULL);
    fprintf(stderr, "full disk: %s\n", acc_error_message());
    acc_db_close(db);
    acc_mem_free(big);
    if (st != ACC_ERR_IO)
        return 12;
    if (!strstr(acc_error_message(), path) || !strstr(acc_error_message(), "file size limit"))
        return 13;
    return 0;
}

static int full_disk_new_file_child(const char *path)
{
    acc_db_t *db = NULL;
    struct rlimit lim;

    signal(SIGXFSZ, SIG_IGN);
    lim.rlim_cur = lim.rlim_max = 512;
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
        return 10;
    if (acc_db_open(path, 0, &db) == ACC_OK) {
        acc_db_close(db);
        return 11;
    }
    fprintf(stderr, "new file on a full disk: %s\n", acc_error_message());
    return strstr(acc_error_message(), path) ? 0 : 12;
}

ACC_TEST(full_disk_keeps_previous_data)
{
    const char *path = tu_fresh("bad_full.db");
    const char *fresh = tu_fresh("bad_full_new.db");
    char fp[ACC_SHA256_HEX_LEN + 1], hash[ACC_SHA256_HEX_LEN + 1];
    char *before, *after;
    acc_db_t *db;
    acc_select_table_t *t = NULL;
    int status;
    pid_t pid;

    make_db(path, fp, hash);
    before = tu_dump(path);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(full_disk_child(path));
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    db = tu_open(path, ACC_DB_CHECK);
    CHECK_OK(acc_db_get_selection(db, fp, ACC_COLL_ALLREDUCE, &t));
    acc_select_destroy(t);
    acc_db_close(db);
    after = tu_dump(path);
    CHECK_STR(after, before);
    acc_mem_free(before);
    acc_mem_free(after);

    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(full_disk_new_file_child(fresh));
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}

static void die_before_commit(const char *what)
{
    (void)what;
    raise(SIGKILL);
}

ACC_TEST(writer_killed_before_commit_changes_nothing)
{
    const char *path = tu_fresh("bad_killed.db");
    char fp[ACC_SHA256_HEX_LEN + 1], hash[ACC_SHA256_HEX_LEN + 1];
    char *before, *after;
    int status;
    pid_t pid;

    make_db(path, fp, hash);
    before = tu_dump(path);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        acc_db_t *db = NULL;
        acc_select_table_t *t;
        if (acc_db_open(path, 0, &db) != ACC_OK)
            _exit(1);
        /* A replacement table, killed just before its COMMIT. */
        db_before_commit_hook = die_before_commit;
        t = tu_table(ACC_COLL_ALLREDUCE, fp, hash, 5, 9);
        acc_db_put_selection(db, t);
        _exit(2);
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    /* The killed writer left its -wal behind; the next open recovers the committed state. */
    acc_db_close(tu_open(path, ACC_DB_CHECK));
    after = tu_dump(path);
    CHECK_STR(after, before);
    acc_mem_free(after);

    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        acc_db_t *db = NULL;
        if (acc_db_open(path, 0, &db) != ACC_OK)
            _exit(1);
        db_before_commit_hook = die_before_commit; /* and a new topology */
        tu_put_synth(db, "nodes=2 gpus=8 nvlink=18 nic=8x400", fp);
        _exit(2);
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));
    after = tu_dump(path);
    CHECK_STR(after, before);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM topologies"), 1);
    acc_mem_free(before);
    acc_mem_free(after);
}

ACC_TEST(runtime_open_warns_once_and_carries_on)
{
    const char *junk = tu_fresh("bad_runtime.db");
    const char *good = tu_fresh("bad_runtime_good.db");
    char fp[ACC_SHA256_HEX_LEN + 1], hash[ACC_SHA256_HEX_LEN + 1], line[1024];
    FILE *log = tmpfile();
    acc_db_t *db = (acc_db_t *)1;
    int lines = 0;

    write_bytes(junk, "not a database, just text\n", 26);
    acc_log_set_stream(log);
    CHECK_INT(acc_db_open_runtime(junk, &db), ACC_DB_NO_DATA);
    CHECK(db == NULL);
    CHECK_MSG_HAS(junk);
    CHECK_INT(acc_db_open_runtime(acc_test_tmp("bad_runtime_missing.db"), &db), ACC_DB_NO_DATA);
    CHECK_MSG_HAS("no such database");
    CHECK_INT(acc_db_open_runtime(NULL, &db), ACC_DB_NO_DATA);
    CHECK_INT(acc_db_open_runtime("", &db), ACC_DB_NO_DATA);
    make_db(good, fp, hash);
    CHECK_OK(acc_db_open_runtime(good, &db));
    CHECK(db != NULL);
    acc_db_close(db);
    acc_log_set_stream(NULL);
    rewind(log);
    while (fgets(line, sizeof(line), log)) {
        printf("%s", line);
        CHECK(strstr(line, "acc WARN db: no usable data: ") == line);
        CHECK(strstr(line, junk) != NULL);
        lines++;
    }
    CHECK_INT(lines, 1);
    fclose(log);
}

ACC_TEST(altered_rows_are_not_trusted)
{
    const char *path = tu_fresh("bad_altered.db");
    char fp[ACC_SHA256_HEX_LEN + 1], hash[ACC_SHA256_HEX_LEN + 1], bad[ACC_SHA256_HEX_LEN + 1];
    acc_db_t *db;
    acc_plan_t *plan = NULL, *broken;
    acc_topo_t *topo = NULL;
    acc_select_table_t *t = NULL;
    acc_buf_t yaml;
    char sql[512];
    sqlite3 *h;
    sqlite3_stmt *st;

    make_db(path, fp, hash);

    /* A plan text edited in place no longer matches its hash. */
    tu_sql(path, "UPDATE plans SET yaml = replace(yaml, 'peer: 1', 'peer: 2')");
    db = tu_open(path, ACC_DB_READONLY);
    CHECK_ERR(acc_db_get_plan(db, hash, &plan), ACC_ERR_PARSE);
    CHECK_MSG_HAS("altered");
    CHECK(plan == NULL);
    acc_db_close(db);

    /* A wrong plan filed under its own correct hash is caught by verification. */
    broken = fx_ring_allreduce(4, 1);
    broken->progs[0].nops--; /* rank 0 never sends its last message */
    acc_buf_init(&yaml);
    CHECK_OK(acc_plan_dump_yaml(broken, &yaml));
    CHECK_OK(acc_sha256_hex(yaml.data, yaml.len, bad));
    CHECK(sqlite3_open(path, &h) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(h, "INSERT INTO plans VALUES (?1, 'allreduce', 'ring', '', 4, ?2)", -1,
                             &st, NULL) == SQLITE_OK);
    sqlite3_bind_text(st, 1, bad, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, yaml.data, -1, SQLITE_STATIC);
    CHECK(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(h);
    acc_buf_free(&yaml);
    acc_plan_destroy(broken);
    db = tu_open(path, ACC_DB_READONLY);
    CHECK_ERR(acc_db_get_plan(db, bad, &plan), ACC_ERR_VERIFY);
    CHECK_MSG_HAS("fails verification and is not used");
    CHECK_MSG_HAS(path);
    CHECK(plan == NULL);

    /* A topology edited in place no longer gives its fingerprint. */
    acc_db_close(db);
    tu_sql(path, "UPDATE topologies SET yaml = replace(yaml, 'count: 18', 'count: 12')");
    db = tu_open(path, ACC_DB_READONLY);
    CHECK_ERR(acc_db_get_topology(db, fp, &topo), ACC_ERR_PARSE);
    CHECK_MSG_HAS("fingerprint");
    CHECK(topo == NULL);
    acc_db_close(db);

    /* A selection entry edited without acc no longer matches the table's content hash. */
    snprintf(sql, sizeof(sql), "UPDATE selection_entries SET algo = 'tree' WHERE min_bytes = 1024");
    tu_sql(path, sql);
    db = tu_open(path, ACC_DB_READONLY);
    CHECK_ERR(acc_db_get_selection(db, fp, ACC_COLL_ALLREDUCE, &t), ACC_ERR_PARSE);
    CHECK_MSG_HAS("content hash");
    CHECK(t == NULL);
    acc_db_close(db);

    /* Overlapping ranges cannot be loaded at all. */
    tu_sql(path, "UPDATE selection_entries SET algo = 'ring', max_bytes = 5000 "
                 "WHERE min_bytes = 1024");
    db = tu_open(path, ACC_DB_READONLY);
    CHECK_ERR(acc_db_get_selection(db, fp, ACC_COLL_ALLREDUCE, &t), ACC_ERR_INVALID);
    CHECK_MSG_HAS("overlaps");
    CHECK(t == NULL);
    acc_db_close(db);
}
