/*
 * A communicator loads its tables by itself: built by the image build (acc_db_build) for the
 * test's topology, every size range runs the table's plan (the statistics say so), results
 * right; with the database missing, damaged, of another machine or of a newer schema, every
 * call completes through the fallback and exactly one warning line appears among all ranks; a
 * plan altered in the database is refused at its range's first call, that range alone.
 */
#include "acc_db.h"
#include "comm_util.h"
#include "ranks.h"

#include <fcntl.h>
#include <sqlite3.h>

#define TOPO   "gpus=4 nvlink=18"
#define NRANKS 4

/* Each rank's stderr goes to a file of its own and of the case (ctest runs cases side by
 * side), so that the parent can count the warnings. */
static const char *log_case = "load";

static void log_to_file(int rank)
{
    char name[96];
    snprintf(name, sizeof(name), "%s_rank%d.log", log_case, rank);
    CHECK(freopen(acc_test_tmp(name), "w", stderr) != NULL);
    setvbuf(stderr, NULL, _IONBF, 0);
}

static int count_warnings(const char *fragment)
{
    int n = 0;
    for (int r = 0; r < NRANKS; r++) {
        char name[96], line[2048];
        FILE *f;
        snprintf(name, sizeof(name), "%s_rank%d.log", log_case, r);
        if (!(f = fopen(acc_test_tmp(name), "r")))
            continue;
        while (fgets(line, sizeof(line), f))
            if (strstr(line, "acc WARN") && (!fragment || strstr(line, fragment))) {
                fputs(line, stdout);
                n++;
            }
        fclose(f);
    }
    return n;
}

/* The sizes acc-bench's -b 1K -e 16M -f 4 sweeps, and their bytes for allreduce (fp32). */
static const uint64_t sizes[] = {1u << 10, 1u << 12, 1u << 14, 1u << 16,
                                 1u << 18, 1u << 20, 1u << 22, 1u << 24};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

typedef struct {
    const char *expect; /* "tables" or "fallback" */
    const char *topo;   /* the machine the database describes */
} expect_t;

/* Every size once, right; then the statistics must show, per size, what the table says. */
static int sweep_and_check(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    const expect_t *x = arg;
    const char *expect = x->expect;
    acc_comm_t *c;
    acc_comm_stat_t *rows;
    size_t nrows;

    log_to_file(rank);
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    CHECK_INT(acc_comm_fallback_reason(c)[0] == '\0', strcmp(expect, "tables") == 0);
    for (size_t i = 0; i < NSIZES; i++) {
        call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM,    sizes[i] / 4,
                    (int)(i & 1),       0,          (uint32_t)i + 3};
        call_t g = {ACC_COLL_ALLGATHER, ACC_DT_F32, ACC_RED_SUM, sizes[i] / 4 / NRANKS, 0, 0,
                    (uint32_t)i + 30};
        call_ok(c, &k);
        call_ok(c, &g);
    }
    CHECK_OK(acc_comm_stats(c, &rows, &nrows));
    for (size_t i = 0; i < nrows; i++) {
        printf("rank %d: %-14s [%llu, %llu] %llu calls: %s\n", rank, acc_coll_name(rows[i].coll),
               (unsigned long long)rows[i].min_bytes, (unsigned long long)rows[i].max_bytes,
               (unsigned long long)rows[i].calls, rows[i].ran);
        if (!strcmp(expect, "fallback"))
            CHECK_MSG(rows[i].fallback, "row %zu ran %s without tables", i, rows[i].ran);
    }
    if (!strcmp(expect, "tables")) {
        /* The table itself, read independently: each size's entry must be a row that ran. */
        acc_db_t *db;
        acc_topo_t *topo;
        char fp[ACC_SHA256_HEX_LEN + 1];
        acc_select_table_t *t;
        int acc_rows = 0;
        CHECK_OK(acc_topo_load(x->topo, &topo));
        CHECK_OK(acc_topo_fingerprint(topo, fp));
        CHECK_OK(acc_db_open(getenv("ACC_DB"), ACC_DB_READONLY, &db));
        CHECK_OK(acc_db_get_selection(db, fp, ACC_COLL_ALLREDUCE, &t));
        for (size_t s = 0; s < NSIZES; s++) {
            const acc_select_entry_t *e = acc_select_lookup(t, sizes[s]);
            int found = 0;
            CHECK(e != NULL);
            for (size_t i = 0; i < nrows; i++)
                if (rows[i].coll == ACC_COLL_ALLREDUCE && !rows[i].fallback &&
                    rows[i].min_bytes == e->min_bytes && rows[i].calls > 0)
                    found = 1;
            CHECK_MSG(found == !e->use_nccl, "%llu bytes: the table says %s %s; no row ran it",
                      (unsigned long long)sizes[s], e->use_nccl ? "NCCL" : e->algo, e->params);
            acc_rows += !e->use_nccl;
        }
        CHECK_MSG(acc_rows > 0, "the table gives acc no size of the sweep");
        acc_select_destroy(t);
        acc_db_close(db);
        acc_topo_destroy(topo);
    }
    acc_mem_free(rows);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

static void env_topo(const char *db, const char *topo)
{
    const char *base = strrchr(db, '/');
    log_case = base ? base + 1 : db;
    setenv("ACC_TOPO", topo, 1);
    setenv("ACC_DB", db, 1);
    setenv("ACC_LOG_LEVEL", "warn", 1);
    setenv("ACC_TIMEOUT_MS", "60000", 1);
}

static void env(const char *db)
{
    env_topo(db, TOPO);
}

static expect_t tables = {"tables", TOPO}, fallback = {"fallback", TOPO};

ACC_TEST(tables_of_the_database_run)
{
    const char *path = acc_test_tmp("load_good.db");
    build_db(path, TOPO);
    env(path);
    ranks_run(NRANKS, sweep_and_check, &tables, 280);
    CHECK_INT(count_warnings(NULL), 0);
}

ACC_TEST(missing_database_falls_back_with_one_warning)
{
    env(acc_test_tmp("load_missing.db"));
    unlink(getenv("ACC_DB"));
    ranks_run(NRANKS, sweep_and_check, &fallback, 280);
    CHECK_INT(count_warnings("ring fallback"), 1);
    CHECK_INT(count_warnings(NULL), 1);
}

ACC_TEST(corrupt_database_falls_back_with_one_warning)
{
    const char *path = acc_test_tmp("load_corrupt.db");
    FILE *f = fopen(path, "wb");
    CHECK(f);
    for (int i = 0; i < 8192; i++)
        fputc((i * 7919) & 0xff, f);
    fclose(f);
    env(path);
    ranks_run(NRANKS, sweep_and_check, &fallback, 280);
    CHECK_INT(count_warnings(NULL), 1);
    CHECK_INT(count_warnings(path), 1);
}

ACC_TEST(database_of_another_machine_falls_back_with_one_warning)
{
    const char *path = acc_test_tmp("load_other.db");
    build_db(path, "gpus=4");
    env(path);
    ranks_run(NRANKS, sweep_and_check, &fallback, 280);
    CHECK_INT(count_warnings("no tables for this machine"), 1);
    CHECK_INT(count_warnings(NULL), 1);
}

/* One statement on the database file, as someone altering it would. */
static void db_exec(const char *path, const char *sql)
{
    sqlite3 *h;
    CHECK(sqlite3_open(path, &h) == SQLITE_OK);
    CHECK(sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
}

ACC_TEST(newer_schema_falls_back_with_one_warning)
{
    const char *path = acc_test_tmp("load_newer.db");
    char sql[64];
    build_db(path, TOPO);
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", ACC_DB_SCHEMA_VERSION + 1);
    db_exec(path, sql);
    env(path);
    ranks_run(NRANKS, sweep_and_check, &fallback, 280);
    CHECK_INT(count_warnings("newer"), 1);
    CHECK_INT(count_warnings(NULL), 1);
}

/* ACC_DISABLE is a choice, not a problem: no warning, every call through the fallback. */
ACC_TEST(disable_sends_everything_to_the_fallback_quietly)
{
    const char *path = acc_test_tmp("load_disable.db");
    build_db(path, TOPO);
    env(path);
    setenv("ACC_DISABLE", "1", 1);
    ranks_run(NRANKS, sweep_and_check, &fallback, 280);
    unsetenv("ACC_DISABLE");
    CHECK_INT(count_warnings(NULL), 0);
}

/* Two nodes of two GPUs on this one machine: shared memory within a node, TCP between them,
 * the hierarchical and ring plans of the table across both. */
ACC_TEST(tables_of_a_two_node_machine_run_over_tcp)
{
    static expect_t two = {"tables", "nodes=2 gpus=2 nvlink=18 nic=2x400"};
    const char *path = acc_test_tmp("load_two_nodes.db");
    build_db(path, two.topo);
    env_topo(path, two.topo);
    ranks_run(NRANKS, sweep_and_check, &two, 280);
    CHECK_INT(count_warnings(NULL), 0);
}

/* A rank reads a plan at the first call of its range, never at set-up: a plan whose stored text
 * was altered after the image build is refused there, on every rank alike, with one warning
 * naming it, and the fallback serves that range only; every other range runs the table's plan,
 * and every result is right. */
static int one_range_refused(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    const uint64_t *altered_min = arg;
    acc_comm_t *c;
    acc_comm_stat_t *rows;
    size_t nrows;
    int acc_rows = 0, refused_calls = 0;

    log_to_file(rank);
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    CHECK_STR(acc_comm_fallback_reason(c), "");
    for (size_t i = 0; i < NSIZES; i++) {
        call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM,    sizes[i] / 4,
                    (int)(i & 1),       0,          (uint32_t)i + 3};
        call_ok(c, &k);
        call_ok(c, &k); /* the second call of a refused range does not ask again */
    }
    CHECK_OK(acc_comm_stats(c, &rows, &nrows));
    for (size_t i = 0; i < nrows; i++) {
        if (rows[i].coll != ACC_COLL_ALLREDUCE || !rows[i].calls)
            continue;
        if (rank == 0)
            printf("%-10s [%llu, %llu] %llu calls: %s\n", acc_coll_name(rows[i].coll),
                   (unsigned long long)rows[i].min_bytes, (unsigned long long)rows[i].max_bytes,
                   (unsigned long long)rows[i].calls, rows[i].ran);
        if (rows[i].fallback)
            refused_calls += rows[i].calls;
        else
            acc_rows++;
        CHECK_MSG(rows[i].fallback || rows[i].min_bytes != *altered_min,
                  "rank %d: the altered plan of [%llu, ...] ran", rank,
                  (unsigned long long)rows[i].min_bytes);
    }
    CHECK_MSG(acc_rows > 0, "rank %d: no range ran acc's plan", rank);
    CHECK_MSG(refused_calls >= 2, "rank %d: the fallback served %d calls", rank, refused_calls);
    acc_mem_free(rows);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

static int covers_a_size(const acc_select_entry_t *e)
{
    for (size_t s = 0; s < NSIZES; s++)
        if (sizes[s] >= e->min_bytes && sizes[s] <= e->max_bytes)
            return 1;
    return 0;
}

ACC_TEST(an_altered_plan_is_refused_at_its_first_call_on_every_rank)
{
    const char *path = acc_test_tmp("load_altered.db");
    acc_db_t *db;
    acc_topo_t *topo;
    acc_select_table_t *t;
    char fp[ACC_SHA256_HEX_LEN + 1], sql[512];
    uint64_t altered_min = 0;

    build_db(path, TOPO);
    CHECK_OK(acc_topo_load(TOPO, &topo));
    CHECK_OK(acc_topo_fingerprint(topo, fp));
    CHECK_OK(acc_db_open(path, ACC_DB_READONLY, &db));
    CHECK_OK(acc_db_get_selection(db, fp, ACC_COLL_ALLREDUCE, &t));
    for (size_t i = 0; i < t->n && !altered_min; i++)
        if (!t->entries[i].use_nccl && t->entries[i].min_bytes >= (1u << 16) &&
            covers_a_size(&t->entries[i])) {
            altered_min = t->entries[i].min_bytes;
            /* Its text, which a whole plan is read from, and its class programs, which a
             * rank's view is read from. */
            snprintf(sql, sizeof(sql),
                     "UPDATE plans SET yaml = yaml || '# altered' WHERE hash = '%s'; "
                     "UPDATE plan_programs SET program = program || x'00' WHERE hash = '%s'",
                     t->entries[i].plan_hash, t->entries[i].plan_hash);
        }
    acc_select_destroy(t);
    acc_db_close(db);
    acc_topo_destroy(topo);
    CHECK_MSG(altered_min, "the table gives acc no range of the sweep from 64 KiB");
    db_exec(path, sql);
    env(path);
    ranks_run(NRANKS, one_range_refused, &altered_min, 280);
    CHECK_INT(count_warnings("it was altered"), 1);
    CHECK_INT(count_warnings(NULL), 1);
}
