/*
 * bench_rank_plan: what one rank pays today, alone in a process, to take its part of a plan of
 * many ranks from the database at its range's first call - the baseline of acc issue 26's
 * item 4 (a rank reading only its own program: < 10 ms and < 16 MiB for one rank of a
 * 65,536-rank plan).  For each rank count it stores the ring allreduce of a synthetic machine
 * of that many ranks (8 per node) in a database, then, in a fresh process whose peak memory is
 * its own, times:
 *   - the floor: the plan's stored text read with one SELECT (the bytes any reader of the
 *     whole plan pays);
 *   - acc_db_get_plan: the whole plan parsed, its hash recomputed and verified, which
 *     comm_table_plan does on every rank at a range's first call;
 *   - acc_plan_final_reductions: the per-operation flags a rank's host instance takes from
 *     the whole plan (every rank's programs).
 * in CPU time, and the process's peak resident memory after them.  Each grows with the whole
 * plan, which holds every rank's program (for a ring, N programs of O(N) steps each), on every
 * rank (docs/scale.md).
 *
 * usage: bench_rank_plan [RANKS ...]   (default: 64 128 256 512; multiples of 8)
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

/* Run this program again as the reader, so that its peak memory is the reader's alone. */
static int measure(const char *self, const char *path, const char *hash, char *line, size_t cap)
{
    int fds[2], status = 0;
    ssize_t got = 0, k;
    pid_t pid;

    if (pipe(fds) != 0 || (pid = fork()) < 0)
        return 1;
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl(self, self, "--read", path, hash, (char *)NULL);
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

int main(int argc, char **argv)
{
    static const int defaults[] = {64, 128, 256, 512};
    char path[64], hash[ACC_SHA256_HEX_LEN + 1], line[256];
    int n = argc > 1 ? argc - 1 : 4;

    if (argc == 4 && strcmp(argv[1], "--read") == 0)
        return read_rank(argv[2], argv[3]);
    snprintf(path, sizeof(path), "bench_rank_plan_%d.db", (int)getpid());
    printf("one rank's first call of the ring allreduce of N ranks (8 per node), in a process of "
           "its own (CPU ms):\n");
    printf("%7s %10s %10s %11s %12s %12s %10s %9s\n", "ranks", "ops", "yaml_MiB", "select_ms",
           "get_plan_ms", "finals_ms", "peak_MiB", "x_select");
    for (int i = 0; i < n; i++) {
        int nranks = argc > 1 ? atoi(argv[i + 1]) : defaults[i];
        uint64_t ops = 0;
        size_t text;
        double floor_s, get_s, final_s, peak;
        if (nranks < 8 || nranks % 8) {
            fprintf(stderr, "bench_rank_plan: %d ranks: give a multiple of 8\n", nranks);
            return 2;
        }
        if (store_plan(path, nranks, hash, &ops) != 0)
            return 1;
        if (measure(argv[0], path, hash, line, sizeof(line)) != 0 ||
            sscanf(line, "%zu %lf %lf %lf %lf", &text, &floor_s, &get_s, &final_s, &peak) != 5) {
            fprintf(stderr, "bench_rank_plan: the reader of %d ranks failed\n", nranks);
            unlink(path);
            return 1;
        }
        printf("%7d %10llu %10.1f %11.2f %12.1f %12.1f %10.1f %9.0f\n", nranks,
               (unsigned long long)ops, text / 1048576.0, floor_s * 1e3, get_s * 1e3, final_s * 1e3,
               peak, floor_s > 0 ? get_s / floor_s : 0);
        fflush(stdout);
    }
    unlink(path);
    return 0;
}
