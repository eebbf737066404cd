/*
 * bench_runtime: what the runtime costs on the host backend, against baselines measured in the
 * same run.
 *
 * 1. Dispatch: the time acc_allreduce adds to running the plan - argument checks, the table
 *    look-up, the statistics - on a one-rank communicator, with the tables of a database built
 *    for it and without any (the fallback's path).  The executor's own time (shown
 *    too) varies by microseconds from call to call with thread wake-ups, far more than the
 *    dispatch costs, so the dispatch is timed with the backend's run replaced by one that
 *    returns at once, beside calling that run directly; the difference is the dispatch.  The
 *    target is under 1 us.
 * 2. Bandwidth: busbw of allreduce on 4 rank processes at 1 KiB, 1 MiB and 64 MiB, against a
 *    plain memcpy of the same bytes on one core (what a single copy of the message costs here).
 *
 * usage: bench_runtime [NRANKS]   (default 4)
 */
#include "acc_runtime.h"
#include "bench_util.h"
#include "rt_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define DISPATCH_CALLS 200000

static int fail(const char *what)
{
    fprintf(stderr, "bench_runtime: %s: %s\n", what, acc_error_message());
    return 1;
}

static acc_status_t run_nothing(acc_comm_t *c, void *state, const acc_plan_t *plan,
                                const rt_call_t *call, int *broken)
{
    (void)c, (void)state, (void)plan, (void)call, (void)broken;
    return ACC_OK;
}

static double ns_per_call(acc_comm_t *c, const acc_plan_t *plan, const rt_call_t *k, int api)
{
    float x[4] = {1, 2, 3, 4}, y[4];
    int broken = 0;
    double t0 = acc_now_s();
    for (int i = 0; i < DISPATCH_CALLS; i++) {
        if (api)
            acc_allreduce(x, y, 4, ACC_DT_F32, ACC_RED_SUM, c, NULL);
        else
            c->be->run(c, c->be_state, plan, k, &broken);
    }
    return (acc_now_s() - t0) * 1e9 / DISPATCH_CALLS;
}

/* Nanoseconds per call on a one-rank communicator: the executor, and the dispatch around a
 * run that does nothing.  db NULL: no tables (every call takes the fallback). */
static int dispatch(const char *label, const char *db)
{
    acc_unique_id_t id;
    acc_comm_opts_t o;
    acc_comm_t *c;
    float x[4] = {1, 2, 3, 4}, y[4];
    rt_call_t k = {.coll = ACC_COLL_ALLREDUCE,
                   .send = x,
                   .recv = y,
                   .count = 4,
                   .dt = ACC_DT_F32,
                   .op = ACC_RED_SUM,
                   .nbytes = 16};
    rt_fallback_t *fb;
    const acc_plan_t *plan;
    const acc_select_entry_t *e = NULL;
    rt_backend_t nothing;
    const rt_backend_t *real;
    double exec_ns, api_ns, direct_ns;

    acc_comm_opts_init(&o);
    o.backend = ACC_BACKEND_HOST;
    o.topo = "gpus=1";
    o.db = db ? db : "/nonexistent/acc.db";
    if (acc_get_unique_id(&id) != ACC_OK || acc_comm_init_rank(&c, 1, &id, 0, &o) != ACC_OK)
        return fail("one-rank communicator");
    if (c->use_tables && c->tables[ACC_COLL_ALLREDUCE].table)
        e = acc_select_lookup(c->tables[ACC_COLL_ALLREDUCE].table, 16);
    if (e && !e->use_nccl)
        plan =
            c->tables[ACC_COLL_ALLREDUCE].plans[e - c->tables[ACC_COLL_ALLREDUCE].table->entries];
    else if (!(plan = comm_fallback_plan(c, ACC_COLL_ALLREDUCE, 0, &fb)))
        return fail("the plan");
    for (int i = 0; i < 1000; i++) /* the instance is made, the caches warm */
        acc_allreduce(x, y, 4, ACC_DT_F32, ACC_RED_SUM, c, NULL);
    exec_ns = ns_per_call(c, plan, &k, 0);
    real = c->be;
    nothing = *real;
    nothing.run = run_nothing;
    c->be = &nothing;
    direct_ns = ns_per_call(c, plan, &k, 0);
    api_ns = ns_per_call(c, plan, &k, 1);
    c->be = real;
    printf("dispatch, %s (1 rank, %d calls of 16 bytes, the %s plan):\n", label, DISPATCH_CALLS,
           plan->algo);
    printf("  the executor running the plan    %8.1f ns/call\n", exec_ns);
    printf("  a run that does nothing          %8.1f ns/call\n", direct_ns);
    printf("  acc_allreduce around it          %8.1f ns/call\n", api_ns);
    printf("  dispatch                         %8.1f ns/call (target < 1000 ns: %s)\n",
           api_ns - direct_ns, api_ns - direct_ns < 1000 ? "met" : "missed");
    acc_comm_destroy(c);
    return 0;
}

/* A database of the one-GPU machine's tables, for the dispatch through a table. */
static int one_gpu_db(char *path, size_t n)
{
    acc_topo_t *t = NULL;
    acc_db_t *db = NULL;
    int fd;
    snprintf(path, n, "/tmp/bench_runtime_XXXXXX");
    if ((fd = mkstemp(path)) < 0)
        return fail("a temporary database");
    close(fd);
    unlink(path);
    if (acc_topo_load("gpus=1", &t) != ACC_OK || acc_db_open(path, 0, &db) != ACC_OK ||
        acc_db_build(db, t, NULL, NULL) != ACC_OK)
        return fail("building the one-GPU tables");
    acc_db_close(db);
    acc_topo_destroy(t);
    return 0;
}

/* One rank of the bandwidth part: time `iters` allreduces of each size, report rank 0's. */
static int bw_rank(const acc_unique_id_t *id, int rank, int nranks, const uint64_t *sizes,
                   size_t nsizes, double *us_out)
{
    acc_comm_t *c;
    uint64_t max = sizes[nsizes - 1];
    float *a = malloc(max), *b = malloc(max);
    if (!a || !b || acc_comm_init_rank(&c, nranks, id, rank, NULL) != ACC_OK)
        return 1;
    memset(a, 0, max);
    for (size_t s = 0; s < nsizes; s++) {
        int iters = sizes[s] >= (16u << 20) ? 5 : sizes[s] >= (1u << 20) ? 20 : 200;
        double t0, us, slowest;
        acc_allreduce(a, b, sizes[s] / 4, ACC_DT_F32, ACC_RED_SUM, c, NULL); /* warm-up */
        t0 = acc_now_s();
        for (int i = 0; i < iters; i++)
            if (acc_allreduce(a, b, sizes[s] / 4, ACC_DT_F32, ACC_RED_SUM, c, NULL) != ACC_OK)
                return 1;
        us = (acc_now_s() - t0) * 1e6 / iters;
        acc_allreduce(&us, &slowest, 1, ACC_DT_F64, ACC_RED_MAX, c, NULL);
        us_out[s] = slowest;
    }
    acc_comm_destroy(c);
    free(a);
    free(b);
    return 0;
}

static double memcpy_gbs(uint64_t bytes)
{
    unsigned char *a = malloc(bytes), *b = malloc(bytes);
    int iters = bytes >= (16u << 20) ? 10 : bytes >= (1u << 20) ? 200 : 100000;
    double t0, s;
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    memcpy(b, a, bytes);
    t0 = acc_now_s();
    for (int i = 0; i < iters; i++) {
        memcpy(b, a, bytes);
        __asm__ __volatile__("" : : "r"(b) : "memory");
    }
    s = (acc_now_s() - t0) / iters;
    free(a);
    free(b);
    return (double)bytes / s / 1e9;
}

/* Memory the rank processes write their figures into. */
static void *mmap_shared(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int bandwidth(int nranks)
{
    static const uint64_t sizes[] = {1u << 10, 1u << 20, 64u << 20};
    const size_t n = sizeof(sizes) / sizeof(sizes[0]);
    double *us = mmap_shared(n * sizeof(double));
    acc_unique_id_t id;
    pid_t pids[64];
    int bad = 0;

    if (!us || acc_unique_id_local(&id) != ACC_OK)
        return fail("bandwidth set-up");
    fflush(stdout);
    for (int r = 0; r < nranks; r++)
        if ((pids[r] = fork()) == 0) {
            double mine[3];
            int rc = bw_rank(&id, r, nranks, sizes, n, mine);
            if (r == 0)
                memcpy(us, mine, sizeof(mine));
            _exit(rc);
        }
    for (int r = 0; r < nranks; r++) {
        int st;
        waitpid(pids[r], &st, 0);
        bad += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    if (bad)
        return fail("a rank failed");
    printf("\nallreduce on %d rank processes (host backend, %s) vs memcpy of the same bytes:\n",
           nranks, "ring fallback unless ACC_DB has tables");
    printf("  %10s  %10s  %10s  %12s  %8s\n", "bytes", "time (us)", "busbw GB/s", "memcpy GB/s",
           "ratio");
    for (size_t s = 0; s < n; s++) {
        double busbw = (double)sizes[s] / us[s] / 1e3 * 2.0 * (nranks - 1) / nranks;
        double mc = memcpy_gbs(sizes[s]);
        printf("  %10llu  %10.1f  %10.3f  %12.3f  %8.3f\n", (unsigned long long)sizes[s], us[s],
               busbw, mc, busbw / mc);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int nranks = argc > 1 ? atoi(argv[1]) : 4;
    if (nranks < 2 || nranks > 64) {
        fprintf(stderr, "usage: bench_runtime [NRANKS from 2 to 64]\n");
        return 2;
    }
    char db[64];
    int rc = one_gpu_db(db, sizeof(db));
    rc = rc || dispatch("through the table's range", db) || dispatch("without tables", NULL) ||
         bandwidth(nranks);
    unlink(db);
    return rc;
}
