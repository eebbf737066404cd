/*
 * bench_db: what a training process pays at start-up to use the acc database.  It builds a file
 * holding 10 topologies (synthetic machines of 2 to 64 GPUs), each with ring plans and selection
 * tables of 20 ranges for allreduce, allgather and reduce_scatter, then measures
 *   - open + load one topology's allreduce table into memory, as the runtime does (read-only
 *     open with every check, the content hash verified), beside a bare sqlite3_open_v2 and one
 *     SELECT of the same rows (the floor any SQLite reader pays);
 *   - a size look-up in the loaded table (acc_select_lookup, binary search), beside a linear
 *     scan of the same entries.
 * Targets (issue 5): open + load < 50 ms, look-up < 1 us.
 *
 * usage: bench_db [FILE]   (default: bench_db.db in the current directory; it is replaced)
 */
#include "acc_compiler.h"
#include "acc_db.h"
#include "acc_select.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TOPOLOGIES 10
#define RANGES     20
#define OPEN_REPS  200
#define LOOKUPS    (1 << 20)

static const char *const machines[TOPOLOGIES] = {
    "nodes=1 gpus=2 pcie=4",
    "nodes=1 gpus=4 pcie=4",
    "nodes=1 gpus=8 pcie=4",
    "nodes=1 gpus=4 arch=a100 nvlink=12",
    "nodes=1 gpus=8 arch=a100 nvlink=12",
    "nodes=1 gpus=8 nvlink=18",
    "nodes=2 gpus=8 nvlink=18 nic=8x400",
    "nodes=4 gpus=4 arch=a100 nvlink=12 nic=4x200",
    "nodes=4 gpus=8 nvlink=18 nic=8x400",
    "nodes=8 gpus=8 nvlink=18 nic=8x400",
};

static const acc_coll_t colls[3] = {ACC_COLL_ALLREDUCE, ACC_COLL_ALLGATHER,
                                    ACC_COLL_REDUCE_SCATTER};

static int fail(const char *what)
{
    fprintf(stderr, "bench_db: %s: %s\n", what, acc_error_message());
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A table of RANGES ranges doubling from 4 KiB: acc's ring below 256 KiB and every third range
 * above, NCCL's choices in between, as a cost-model selection typically comes out. */
static int store_machine(acc_db_t *db, const char *desc, char fp[ACC_SHA256_HEX_LEN + 1])
{
    acc_topo_t *topo = NULL;
    int c, i;

    if (acc_topo_load_synthetic(desc, &topo) != ACC_OK ||
        acc_db_put_topology(db, topo, fp) != ACC_OK)
        return fail(desc);
    for (c = 0; c < 3; c++) {
        const acc_algo_t *algo = acc_algo_find(colls[c], "ring");
        acc_algo_args_t args;
        acc_plan_t *plan = NULL;
        acc_select_table_t *t = NULL;
        char hash[ACC_SHA256_HEX_LEN + 1];
        uint64_t lo = 0;

        memset(&args, 0, sizeof(args));
        if (!algo || acc_algo_generate(algo, topo, &args, &plan) != ACC_OK ||
            acc_db_put_plan(db, plan, hash) != ACC_OK ||
            acc_select_create(colls[c], fp, &t) != ACC_OK)
            return fail(desc);
        for (i = 0; i < RANGES; i++) {
            acc_select_entry_t e;
            memset(&e, 0, sizeof(e));
            e.min_bytes = lo;
            e.max_bytes = i == RANGES - 1 ? UINT64_MAX : (4096ull << i) - 1;
            e.use_nccl = i >= 6 && i % 3 != 0;
            snprintf(e.algo, sizeof(e.algo), "%s", e.use_nccl ? "Ring" : "ring");
            snprintf(e.params, sizeof(e.params), "%s",
                     e.use_nccl ? "proto=Simple channels=16" : plan->params);
            if (!e.use_nccl)
                memcpy(e.plan_hash, hash, sizeof(hash));
            e.predicted_us = 5.0 + (double)(4096ull << i) / 40e3;
            e.measured_us = -1;
            e.backends = e.use_nccl ? ACC_BACKENDS_CUDA
                                    : acc_plan_backends(plan, acc_topo_gpus_per_node(topo));
            if (acc_select_add(t, &e) != ACC_OK)
                return fail("building a table");
            lo = e.max_bytes + 1;
        }
        if (acc_db_put_selection(db, t) != ACC_OK)
            return fail(desc);
        acc_select_destroy(t);
        acc_plan_destroy(plan);
    }
    acc_topo_destroy(topo);
    return 0;
}

/* The floor: open with SQLite alone and read the same rows, no checks, no objects. */
static int bare_load(const char *path, const char *fp, int *rows)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    int rc;

    *rows = 0;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(h,
                           "SELECT e.min_bytes, e.max_bytes, e.use_nccl, e.algo, e.params, "
                           "e.plan_hash, e.predicted_us, e.measured_us, e.source FROM selections "
                           "s JOIN selection_entries e ON e.selection_id = s.id WHERE "
                           "s.topo_fingerprint = ?1 AND s.coll = 'allreduce' ORDER BY "
                           "e.min_bytes",
                           -1, &st, NULL) != SQLITE_OK) {
        sqlite3_close(h);
        return 1;
    }
    sqlite3_bind_text(st, 1, fp, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        (*rows)++;
    sqlite3_finalize(st);
    sqlite3_close(h);
    return rc != SQLITE_DONE;
}

static const acc_select_entry_t *linear_lookup(const acc_select_table_t *t, uint64_t n)
{
    size_t i;
    for (i = 0; i < t->n; i++)
        if (t->entries[i].min_bytes <= n && n <= t->entries[i].max_bytes)
            return &t->entries[i];
    return NULL;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "bench_db.db";
    char fps[TOPOLOGIES][ACC_SHA256_HEX_LEN + 1], wal[4200], shm[4200];
    double acc_t[OPEN_REPS], bare_t[OPEN_REPS], t0, build_ms, bs_ns, lin_ns;
    uint64_t *sizes, x = 0x9e3779b97f4a7c15ull;
    acc_select_table_t *table = NULL;
    uintptr_t sink = 0;
    acc_db_t *db = NULL;
    int i, rows = 0;
    const char *probe;

    snprintf(wal, sizeof(wal), "%s-wal", path);
    snprintf(shm, sizeof(shm), "%s-shm", path);
    unlink(path);
    unlink(wal);
    unlink(shm);
    t0 = (acc_now_s() * 1e6);
    if (acc_db_open(path, 0, &db) != ACC_OK)
        return fail(path);
    for (i = 0; i < TOPOLOGIES; i++)
        if (store_machine(db, machines[i], fps[i]) != 0)
            return 1;
    acc_db_close(db);
    build_ms = ((acc_now_s() * 1e6) - t0) / 1e3;
    printf("bench_db: %s: %d topologies x 3 collectives x %d ranges, with ring plans, built in "
           "%.0f ms\n",
           path, TOPOLOGIES, RANGES, build_ms);

    /* The 64-GPU machine's table, the last stored; every repetition is a fresh open. */
    probe = fps[TOPOLOGIES - 1];
    for (i = 0; i < OPEN_REPS; i++) {
        t0 = (acc_now_s() * 1e6);
        if (acc_db_open_runtime(path, &db) != ACC_OK ||
            acc_db_get_selection(db, probe, ACC_COLL_ALLREDUCE, &table) != ACC_OK)
            return fail("open + load");
        acc_db_close(db);
        acc_t[i] = (acc_now_s() * 1e6) - t0;
        if (i + 1 < OPEN_REPS)
            acc_select_destroy(table);
        t0 = (acc_now_s() * 1e6);
        if (bare_load(path, probe, &rows) != 0 || rows != RANGES) {
            fprintf(stderr, "bench_db: bare SQLite read %d rows\n", rows);
            return 1;
        }
        bare_t[i] = (acc_now_s() * 1e6) - t0;
    }
    qsort(acc_t, OPEN_REPS, sizeof(double), cmp_double);
    qsort(bare_t, OPEN_REPS, sizeof(double), cmp_double);
    printf("open + load one table (%zu ranges), median of %d: acc %.3f ms (min %.3f), bare "
           "SQLite %.3f ms (min %.3f): %.1fx the floor; target < 50 ms: %s\n",
           table->n, OPEN_REPS, acc_t[OPEN_REPS / 2] / 1e3, acc_t[0] / 1e3,
           bare_t[OPEN_REPS / 2] / 1e3, bare_t[0] / 1e3,
           acc_t[OPEN_REPS / 2] / bare_t[OPEN_REPS / 2],
           acc_t[OPEN_REPS / 2] < 50e3 ? "met" : "MISSED");

    /* Sizes spread log-uniformly from 1 byte to 1 TiB, drawn before timing. */
    sizes = malloc(sizeof(*sizes) * LOOKUPS);
    if (!sizes)
        return 1;
    for (i = 0; i < LOOKUPS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sizes[i] = (x >> 24) >> (x % 40);
    }
    t0 = (acc_now_s() * 1e6);
    for (i = 0; i < LOOKUPS; i++)
        sink += (uintptr_t)acc_select_lookup(table, sizes[i]);
    bs_ns = ((acc_now_s() * 1e6) - t0) * 1e3 / LOOKUPS;
    t0 = (acc_now_s() * 1e6);
    for (i = 0; i < LOOKUPS; i++)
        sink -= (uintptr_t)linear_lookup(table, sizes[i]);
    lin_ns = ((acc_now_s() * 1e6) - t0) * 1e3 / LOOKUPS;
    /* Both searches found the same entries, or the sums would differ. */
    printf("size look-up in the loaded table, %d sizes: acc_select_lookup %.1f ns, linear scan "
           "%.1f ns: %.2fx; target < 1 us: %s%s\n",
           LOOKUPS, bs_ns, lin_ns, bs_ns / lin_ns, bs_ns < 1000 ? "met" : "MISSED",
           sink == 0 ? "" : " (the two searches disagree!)");
    free(sizes);
    acc_select_destroy(table);
    return sink == 0 ? 0 : 1;
}
