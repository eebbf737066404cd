/*
 * bench_runtime: what the runtime costs on the host backend, against baselines measured in the
 * same run.
 *
 * 1. Dispatch: the time acc_allreduce adds to running the plan - argument checks, the table
 *    look-up, the statistics - on a one-rank communicator, with the tables of a database built
 *    for it and without any (the fallback's path).  The executor's own time (shown
 *    too) varies by microseconds from call to call with thread wake-ups, far more than the
 *    dispatch costs, so the dispatch is timed with the backend's run replaced by one that
 *    returns at once, beside calling that run directly; the difference is the dispatch, the
 *    best of several rounds (a round the machine gave to others only took longer).  The target
 *    is under 30 ns: a gate of one atomic operation inline, the collective's last route (the
 *    table's answer and the fallback's plan for the last size and root, looked up again only
 *    when they change) and the statistics.  On a loaded machine the rounds' times scatter
 *    widely: `valgrind --tool=callgrind --toggle-collect=acc_allreduce` counts the instructions
 *    per call, which do not (214 on 2026-12-02, from 393).
 * 2. Bandwidth: busbw of allreduce on 4 rank processes at 1 KiB, 1 MiB and 64 MiB, against a
 *    plain memcpy of the same bytes on one core (what a single copy of the message costs here).
 * 3. The drop-in NCCL's pass-through: ns per call of NCCL functions called through
 *    libacc-nccl.so beside the same functions called in the NCCL it forwards to - the ones NCCL
 *    itself calls (ncclGetErrorString, ncclGetVersion-like forwards) and, where the NCCL can make
 *    a one-rank communicator without a GPU (the tests' stand-in), the job's
 *    ncclCommGetAsyncError, which looks up acc's record of the communicator.
 *
 * usage: bench_runtime [NRANKS [NCCL_LIBRARY]]   (defaults 4 and ACC_NCCL_LIBRARY, else
 *        libnccl.so.2 from the library path)
 */
#include "acc_runtime.h"
#include "bench_util.h"
#include "rt_internal.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define DISPATCH_CALLS  100000
#define DISPATCH_ROUNDS 7

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

/* The best of DISPATCH_ROUNDS rounds: time the machine gives other processes only adds to a
 * round, so the fastest is the one that measured the code. */
static double ns_per_call(acc_comm_t *c, const acc_plan_t *plan, const rt_call_t *k, int api)
{
    float x[4] = {1, 2, 3, 4}, y[4];
    int broken = 0;
    double best = 1e30;
    for (int round = 0; round < DISPATCH_ROUNDS; round++) {
        double t0 = acc_now_s(), ns;
        for (int i = 0; i < DISPATCH_CALLS; i++) {
            if (api)
                acc_allreduce(x, y, 4, ACC_DT_F32, ACC_RED_SUM, c, NULL);
            else
                c->be->run(c, c->be_state, plan, k, &broken);
        }
        ns = (acc_now_s() - t0) * 1e9 / DISPATCH_CALLS;
        best = ns < best ? ns : best;
    }
    return best;
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
    const acc_plan_t *plan = NULL;
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
        plan = comm_table_plan(c, ACC_COLL_ALLREDUCE,
                               (size_t)(e - c->tables[ACC_COLL_ALLREDUCE].table->entries));
    if (!plan && !(plan = comm_fallback_plan(c, ACC_COLL_ALLREDUCE, 0, &fb)))
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
    printf("dispatch, %s (1 rank, best of %d rounds of %d calls of 16 bytes, the %s plan):\n",
           label, DISPATCH_ROUNDS, DISPATCH_CALLS, plan->algo);
    printf("  the executor running the plan    %8.1f ns/call\n", exec_ns);
    printf("  a run that does nothing          %8.1f ns/call\n", direct_ns);
    printf("  acc_allreduce around it          %8.1f ns/call\n", api_ns);
    printf("  dispatch                         %8.1f ns/call (target < 30 ns: %s)\n",
           api_ns - direct_ns, api_ns - direct_ns < 30 ? "met" : "missed");
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

/* ---- the drop-in's pass-through ---------------------------------------------------------- */

#define PASS_CALLS 2000000

typedef int (*version_fn)(int *);
typedef const char *(*error_string_fn)(int);
typedef int (*async_fn)(void *, int *);

static double version_ns(version_fn f)
{
    int v = 0;
    double t0 = acc_now_s();
    for (int i = 0; i < PASS_CALLS; i++) {
        f(&v);
        __asm__ __volatile__("" : : "r"(v) : "memory");
    }
    return (acc_now_s() - t0) * 1e9 / PASS_CALLS;
}

static double error_string_ns(error_string_fn f)
{
    double t0 = acc_now_s();
    for (int i = 0; i < PASS_CALLS; i++) {
        const char *s = f(3);
        __asm__ __volatile__("" : : "r"(s) : "memory");
    }
    return (acc_now_s() - t0) * 1e9 / PASS_CALLS;
}

static double async_ns(async_fn f, void *comm)
{
    int e = 0;
    double t0 = acc_now_s();
    for (int i = 0; i < PASS_CALLS / 10; i++) {
        f(comm, &e);
        __asm__ __volatile__("" : : "r"(e) : "memory");
    }
    return (acc_now_s() - t0) * 1e9 / (PASS_CALLS / 10);
}

/* The fastest of several alternating runs of each side: the machine's other work only ever
 * adds time. */
#define PASS_RUNS 7

static void pass_row(const char *what, double (*time)(void *, void *), void *direct, void *through,
                     void *arg)
{
    double d = 1e30, t = 1e30;
    for (int i = 0; i < PASS_RUNS; i++) {
        double a = time(direct, arg), b = time(through, arg);
        d = a < d ? a : d;
        t = b < t ? b : t;
    }
    printf("  %-34s %8.1f %10.1f %+10.1f\n", what, d, t, t - d);
}

static double time_version(void *f, void *arg)
{
    (void)arg;
    return version_ns((version_fn)f);
}

static double time_error_string(void *f, void *arg)
{
    (void)arg;
    return error_string_ns((error_string_fn)f);
}

static double time_async(void *f, void *comm)
{
    return async_ns((async_fn)f, comm);
}

/* A communicator of one rank, when this NCCL makes one without a GPU. */
static void *one_rank_comm(void *lib)
{
    int (*get_id)(void *) = (int (*)(void *))dlsym(lib, "ncclGetUniqueId");
    int (*init)(void **, int, acc_unique_id_t, int) =
        (int (*)(void **, int, acc_unique_id_t, int))dlsym(lib, "ncclCommInitRank");
    acc_unique_id_t id;
    void *comm = NULL;
    if (!get_id || !init || get_id(&id) != 0 || init(&comm, 1, id, 0) != 0)
        return NULL;
    return comm;
}

static int passthrough(const char *nccl)
{
    void *real, *dropin;
    void *comm;

    /* As under LD_PRELOAD: the drop-in in the global scope before NCCL, so that NCCL's calls of
     * its own API reach it; it forwards to the very NCCL measured directly. */
    setenv("ACC_NCCL_LIBRARY", nccl, 1);
    setenv("ACC_DB", "/nonexistent/acc.db", 1);
    if (!(dropin = dlopen(ACC_NCCL_DROPIN, RTLD_NOW | RTLD_GLOBAL))) {
        fprintf(stderr, "bench_runtime: %s\n", dlerror());
        return 1;
    }
    if (!(real = dlopen(nccl, RTLD_NOW | RTLD_LOCAL))) {
        printf("\ndrop-in pass-through: no NCCL to measure against (%s)\n", dlerror());
        return 0;
    }
    printf("\ndrop-in pass-through (%d calls each; %s):\n", PASS_CALLS, nccl);
    printf("  %-34s %8s %10s %10s\n", "ns/call", "NCCL", "drop-in", "added");
    pass_row("ncclGetVersion", time_version, dlsym(real, "pncclGetVersion"),
             dlsym(dropin, "ncclGetVersion"), NULL);
    pass_row("ncclGetErrorString (NCCL calls it)", time_error_string,
             dlsym(real, "pncclGetErrorString"), dlsym(dropin, "ncclGetErrorString"), NULL);
    /* Made through the drop-in, so that it knows the communicator (acc has not joined). */
    if ((comm = one_rank_comm(dropin))) {
        void *d = dlsym(dropin, "ncclCommGetAsyncError");
        void *r = dlsym(real, "pncclCommGetAsyncError");
        void *internal = dlsym(real, "stand_in_internal_async_error");
        /* The stand-in's own call of ncclCommGetAsyncError, which reaches the drop-in as NCCL's
         * does in every enqueue, beside the function it ends in. */
        if (internal)
            pass_row("ncclCommGetAsyncError (NCCL's own)", time_async, r, internal, comm);
        pass_row("ncclCommGetAsyncError (the job's)", time_async, r, d, comm);
        ((int (*)(void *))dlsym(dropin, "ncclCommDestroy"))(comm);
    } else {
        printf("  (this NCCL makes no communicator here: ncclCommGetAsyncError not measured)\n");
    }
    return 0;
}

int main(int argc, char **argv)
{
    int nranks = argc > 1 ? atoi(argv[1]) : 4;
    const char *nccl = argc > 2 ? argv[2]
                       : acc_setting_str(ACC_SETTING_NCCL_LIBRARY)[0]
                           ? acc_setting_str(ACC_SETTING_NCCL_LIBRARY)
                           : "libnccl.so.2";
    if (nranks < 2 || nranks > 64) {
        fprintf(stderr, "usage: bench_runtime [NRANKS from 2 to 64 [NCCL_LIBRARY]]\n");
        return 2;
    }
    char db[64];
    int rc = one_gpu_db(db, sizeof(db));
    rc = rc || dispatch("through the table's range", db) || dispatch("without tables", NULL) ||
         bandwidth(nranks) || passthrough(nccl);
    unlink(db);
    return rc;
}
