/*
 * bench_rank_plan: what one rank pays, alone in a process, to take its part of a stored plan of
 * many ranks at its range's first call (acc issue 26, item 4: < 10 ms and < 16 MiB for one
 * rank of a 65,536-rank plan).  Each reader runs in a fresh process whose peak memory is its
 * own, and is timed in CPU time (the machines this runs on are shared).
 *
 * Up to 1,024 ranks, the ring allreduce of a synthetic machine of that many ranks (8 per node)
 * is stored as the image build stores plans (acc_db_put_plan: its YAML and its class form, one
 * class per rank), and three readers are timed side by side:
 *   - the floor: the plan's stored text read with one SELECT (what any reader of the whole plan
 *     pays);
 *   - the whole plan from its YAML, as every rank read it before views: acc_db_get_plan
 *     (every rank's program parsed, the hash recomputed, the plan verified) and
 *     acc_plan_final_reductions;
 *   - a rank's view, as the host backend reads it: acc_db_get_rank_plan (the head and the
 *     rank's own programs, nothing else).
 * From 2,048 ranks, where no explicit plan is made, the class forms the generators build
 * (ring allreduce; hier allreduce with rings inside and between nodes; the double binary tree
 * allreduce and the tree broadcast, a class per head) are stored alone (acc_db_put_cplan) and
 * a rank's view is timed; the stored bytes are printed beside.
 *
 * usage: bench_rank_plan [RANKS ...]   (default: 64 128 256 512 8192 65536; multiples of 8)
 */
#include "acc_compiler.h"
#include "acc_db.h"
#include "bench_util.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what)
{
    fprintf(stderr, "bench_rank_plan: %s: %s\n", what, acc_error_message());
    return 1;
}

/* The database at path holding the ring allreduce of nranks ranks; its hash in hash. */
static int store_plan(const char *path, int nranks, char hash[ACC_SHA256_HEX_LEN + 1],
                      uint64_t *ops)
{
    char spec[96];
    acc_topo_t *topo = NULL;
    acc_plan_t *plan = NULL;
    acc_algo_args_t args;
    acc_db_t *db = NULL;
    int rc = 1;

    snprintf(spec, sizeof(spec), "nodes=%d gpus=8 nvlink=18 nic=8x400", nranks / 8);
    memset(&args, 0, sizeof(args));
    unlink(path);
    if (acc_topo_load(spec, &topo) != ACC_OK ||
        acc_algo_generate(acc_algo_find(ACC_COLL_ALLREDUCE, "ring"), topo, &args, &plan) !=
            ACC_OK ||
        acc_db_open(path, 0, &db) != ACC_OK || acc_db_put_plan(db, plan, hash) != ACC_OK) {
        fail(spec);
        goto out;
    }
    *ops = 0;
    for (int r = 0; r < plan->nranks; r++)
        for (int l = 0; l < plan->nlanes; l++)
            *ops += acc_plan_prog(plan, r, l)->nops;
    rc = 0;
out:
    acc_db_close(db);
    acc_plan_destroy(plan);
    acc_topo_destroy(topo);
    return rc;
}

/* The database at path holding the class form of coll's algo (hier: rings inside and between
 * nodes) on nranks ranks, alone; its hash in hash, its operations and stored bytes. */
static int store_class(const char *path, int nranks, acc_coll_t coll, const char *algo,
                       char hash[ACC_SHA256_HEX_LEN + 1], uint64_t *ops, uint64_t *bytes)
{
    char spec[96];
    acc_topo_t *topo = NULL;
    acc_cplan_t *cp = NULL;
    acc_algo_args_t args;
    acc_cplan_bin_t bin;
    acc_db_t *db = NULL;
    int rc = 1;

    snprintf(spec, sizeof(spec), "nodes=%d gpus=8 nvlink=18 nic=8x400", nranks / 8);
    memset(&args, 0, sizeof(args));
    memset(&bin, 0, sizeof(bin));
    if (strcmp(algo, "hier") == 0)
        args.inner = args.outer = "ring";
    unlink(path);
    if (acc_topo_load(spec, &topo) != ACC_OK ||
        acc_algo_generate_class(acc_algo_find(coll, algo), topo, &args, &cp, NULL) != ACC_OK ||
        acc_cplan_encode(cp, NULL, &bin) != ACC_OK || acc_db_open(path, 0, &db) != ACC_OK ||
        acc_db_put_cplan(db, cp, NULL, hash) != ACC_OK) {
        fail(spec);
        goto out;
    }
    *ops = acc_cplan_op_count(cp);
    *bytes = bin.head.len;
    for (uint32_t i = 0; i < bin.nprogs; i++)
        *bytes += bin.progs[i].len;
    rc = 0;
out:
    acc_cplan_bin_free(&bin);
    acc_db_close(db);
    acc_cplan_destroy(cp);
    acc_topo_destroy(topo);
    return rc;
}

/* A child's part for a rank's view: acc_db_get_rank_plan of rank, in CPU seconds, and the
 * peak. */
static int read_view(const char *path, const char *hash, int rank)
{
    acc_db_t *db = NULL;
    acc_plan_t *plan = NULL;
    double t0 = bench_cpu_s(), open_s, view_s;
    uint64_t ops = 0;

    /* The runtime opens the database when a communicator is made; the view is the first
     * call's. */
    if (acc_db_open(path, ACC_DB_READONLY, &db) != ACC_OK)
        return fail("acc_db_open");
    open_s = bench_cpu_s() - t0;
    t0 = bench_cpu_s();
    if (acc_db_get_rank_plan(db, hash, rank, &plan) != ACC_OK)
        return fail("acc_db_get_rank_plan");
    view_s = bench_cpu_s() - t0;
    for (int l = 0; l < plan->nlanes; l++)
        ops += acc_plan_prog(plan, rank, l)->nops;
    printf("%.6f %.1f %llu %u %.6f\n", view_s, bench_peak_mib(), (unsigned long long)ops,
           plan->view->nnear, open_s);
    acc_plan_destroy(plan);
    acc_db_close(db);
    return 0;
}

/* The child's part: the three steps, printed as one line of seconds and the peak. */
static int read_rank(const char *path, const char *hash)
{
    sqlite3 *raw = NULL;
    sqlite3_stmt *q = NULL;
    acc_db_t *db = NULL;
    acc_plan_t *plan = NULL;
    uint8_t *flags = NULL;
    size_t n = 0, text = 0;
    double t0, floor_s, get_s, final_s;

    /* CPU time: the machines this runs on are shared, and waiting for a core is not the
     * reader's cost. */
    t0 = bench_cpu_s();
    if (sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(raw, "SELECT yaml FROM plans WHERE hash = ?", -1, &q, NULL) !=
            SQLITE_OK ||
        sqlite3_bind_text(q, 1, hash, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_step(q) != SQLITE_ROW) {
        fprintf(stderr, "bench_rank_plan: the plan's row in %s: %s\n", path, sqlite3_errmsg(raw));
        return 1;
    }
    text = (size_t)sqlite3_column_bytes(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(raw);
    floor_s = bench_cpu_s() - t0;
    t0 = bench_cpu_s();
    if (acc_db_open(path, ACC_DB_READONLY, &db) != ACC_OK ||
        acc_db_get_plan(db, hash, &plan) != ACC_OK)
        return fail("acc_db_get_plan");
    get_s = bench_cpu_s() - t0;
    t0 = bench_cpu_s();
    if (acc_plan_final_reductions(plan, &flags, &n) != ACC_OK)
        return fail("acc_plan_final_reductions");
    final_s = bench_cpu_s() - t0;
    printf("%zu %.6f %.6f %.6f %.1f\n", text, floor_s, get_s, final_s, bench_peak_mib());
    acc_mem_free(flags);
    acc_plan_destroy(plan);
    acc_db_close(db);
    return 0;
}

/* Run this program again as the reader (mode, and the rank of a view or NULL), so that its
 * peak memory is the reader's alone. */
static int measure(const char *self, const char *mode, const char *path, const char *hash,
                   const char *rank, char *line, size_t cap)
{
    int fds[2], status = 0;
    ssize_t got = 0, k;
    pid_t pid;

    if (pipe(fds) != 0 || (pid = fork()) < 0)
        return 1;
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl(self, self, mode, path, hash, rank, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    while ((size_t)got < cap - 1 && (k = read(fds[0], line + got, cap - 1 - (size_t)got)) > 0)
        got += k;
    line[got] = '\0';
    close(fds[0]);
    waitpid(pid, &status, 0);
    return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* Up to 1,024 ranks: the floor, the whole plan and a rank's view, side by side. */
static int explicit_row(const char *self, const char *path, int nranks)
{
    char hash[ACC_SHA256_HEX_LEN + 1], line[256];
    uint64_t ops = 0, vops;
    size_t text;
    unsigned near;
    double floor_s, get_s, final_s, peak, view_s, view_peak, open_s;

    if (store_plan(path, nranks, hash, &ops) != 0)
        return 1;
    if (measure(self, "--read", path, hash, NULL, line, sizeof(line)) != 0 ||
        sscanf(line, "%zu %lf %lf %lf %lf", &text, &floor_s, &get_s, &final_s, &peak) != 5 ||
        measure(self, "--view", path, hash, NULL, line, sizeof(line)) != 0 ||
        sscanf(line, "%lf %lf %llu %u %lf", &view_s, &view_peak, (unsigned long long *)&vops, &near,
               &open_s) != 5) {
        fprintf(stderr, "bench_rank_plan: a reader of %d ranks failed\n", nranks);
        return 1;
    }
    printf("%7d %12llu %9.1f %10.2f %12.1f %10.1f %9.2f %9.1f %9.0fx\n", nranks,
           (unsigned long long)ops, text / 1048576.0, floor_s * 1e3, (get_s + final_s) * 1e3, peak,
           view_s * 1e3, view_peak, view_s > 0 ? (get_s + final_s) / view_s : 0);
    return 0;
}

/* From 2,048 ranks: the class forms alone, and a rank's view of each.  Rings and hier are one
 * program a lane (a position in the node); trees a class per head between nodes. */
static int class_row(const char *self, const char *path, int nranks)
{
    static const struct {
        acc_coll_t coll;
        const char *algo;
    } forms[] = {{ACC_COLL_ALLREDUCE, "ring"},
                 {ACC_COLL_ALLREDUCE, "hier"},
                 {ACC_COLL_ALLREDUCE, "tree"},
                 {ACC_COLL_BROADCAST, "tree"}};
    for (size_t a = 0; a < sizeof(forms) / sizeof(forms[0]); a++) {
        char hash[ACC_SHA256_HEX_LEN + 1], line[256], rank[16], name[32];
        uint64_t ops = 0, bytes = 0, vops;
        unsigned near;
        double view_s, peak, open_s;

        snprintf(name, sizeof(name), "%s %s", acc_coll_name(forms[a].coll), forms[a].algo);
        if (store_class(path, nranks, forms[a].coll, forms[a].algo, hash, &ops, &bytes) != 0)
            return 1;
        /* The rank in the middle of the machine, away from the grid's edges. */
        snprintf(rank, sizeof(rank), "%d", nranks / 2 + 5);
        if (measure(self, "--view", path, hash, rank, line, sizeof(line)) != 0 ||
            sscanf(line, "%lf %lf %llu %u %lf", &view_s, &peak, (unsigned long long *)&vops, &near,
                   &open_s) != 5) {
            fprintf(stderr, "bench_rank_plan: the view of %s on %d ranks failed\n", name, nranks);
            return 1;
        }
        printf("%7d %-14s %14llu %10llu %10llu %6u %9.2f %9.2f %9.1f\n", nranks, name,
               (unsigned long long)ops, (unsigned long long)bytes, (unsigned long long)vops, near,
               open_s * 1e3, view_s * 1e3, peak);
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const int defaults[] = {64, 128, 256, 512, 8192, 65536};
    char path[64];
    int n = argc > 1 ? argc - 1 : 6, header = 0;

    if (argc == 4 && strcmp(argv[1], "--read") == 0)
        return read_rank(argv[2], argv[3]);
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "--view") == 0)
        return read_view(argv[2], argv[3], argc == 5 ? atoi(argv[4]) : 3);
    snprintf(path, sizeof(path), "bench_rank_plan_%d.db", (int)getpid());
    printf("one rank's first use of the ring allreduce of N ranks (8 per node), stored as the "
           "image build stores plans, each reader in a process of its own (CPU ms, peak MiB):\n");
    printf("%7s %12s %9s %10s %12s %10s %9s %9s %10s\n", "ranks", "ops", "yaml_MiB", "select_ms",
           "whole_ms", "whole_MiB", "view_ms", "view_MiB", "whole/view");
    for (int i = 0; i < n; i++) {
        int nranks = argc > 1 ? atoi(argv[i + 1]) : defaults[i];
        if (nranks < 8 || nranks % 8) {
            fprintf(stderr, "bench_rank_plan: %d ranks: give a multiple of 8\n", nranks);
            return 2;
        }
        if (nranks > 1024 && !header++)
            printf(
                "\nclass forms alone (acc_db_put_cplan), one rank's view (acc_db_get_rank_plan), "
                "each in a process of its own:\n%7s %-14s %14s %10s %10s %6s %9s %9s %9s\n",
                "ranks", "algo", "ops (all)", "stored_B", "rank_ops", "near", "open_ms", "view_ms",
                "peak_MiB");
        if ((nranks <= 1024 ? explicit_row : class_row)(argv[0], path, nranks) != 0) {
            unlink(path);
            return 1;
        }
        fflush(stdout);
    }
    unlink(path);
    return 0;
}
