/*
 * The drop-in NCCL (libacc-nccl.so) in front of the tests' stand-in NCCL (NCCL's API over the
 * host backend, recording every call it receives), the way a job reaches it: NCCL's API only.
 * Four ranks on "gpus=4 nvlink=18" with the image build's database: each size goes where the
 * table says (calls of acc's ranges never reach NCCL, the others do), results right; a group
 * runs through acc only when all of it is acc's; a straggler that breaks acc's communicator
 * sends that call and every later one to NCCL with one log line per rank, results still right;
 * and every function of nccl.h is exported, and nothing else, each reaching NCCL.
 */
#include "acc_db.h"
#include "dropin/dropin_api.h"
#include "nccl_abi.h"
#include "nm_util.h"
#include "ranks.h"

#include <dlfcn.h>
#include <stdlib.h>

#define TOPO   "gpus=4 nvlink=18"
#define NRANKS 4

/* ---- the drop-in as a job sees it ------------------------------------------------------- */

typedef struct {
#define API_FIELD(ret, name, params, args) ret(*name) params;
    DROPIN_API(API_FIELD)
#undef API_FIELD
} api_t;

static api_t api;
static void *lib;

/* Every name of nccl.h resolves in the drop-in, ncclName and pnccl<Name> to one function. */
static void load_api(void)
{
    lib = dlopen(ACC_NCCL_DROPIN, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(lib != NULL, "%s", dlerror());
#define API_LOAD(ret, name, params, args)                                                          \
    *(void **)&api.name = dlsym(lib, "nccl" #name);                                                \
    CHECK_MSG(api.name != NULL, "nccl" #name " is not exported");                                  \
    CHECK_MSG(dlsym(lib, "pnccl" #name) == *(void **)&api.name, "pnccl" #name " differs");
    DROPIN_API(API_LOAD)
#undef API_LOAD
}

static const char *case_name = "dropin";

/* The drop-in finds the stand-in as its NCCL; acc finds the machine and the database. */
static void env(const char *name, const char *db)
{
    case_name = name;
    setenv("ACC_NCCL_LIBRARY", ACC_STAND_IN_NCCL, 1);
    setenv("ACC_TOPO", TOPO, 1);
    setenv("ACC_DB", db, 1);
    setenv("ACC_LOG_LEVEL", "warn", 1);
}

/* The image build's database of TOPO, one per case (ctest runs cases side by side). */
static const char *db_path(const char *name)
{
    static char path[512];
    char file[96];
    acc_db_t *db = NULL;
    acc_topo_t *topo = NULL;
    snprintf(file, sizeof(file), "dropin_%s.db", name);
    snprintf(path, sizeof(path), "%s", acc_test_tmp_fresh(file));
    CHECK_OK(acc_topo_load(TOPO, &topo));
    CHECK_OK(acc_db_open(path, 0, &db));
    CHECK_OK(acc_db_build(db, topo, NULL, NULL));
    acc_db_close(db);
    acc_topo_destroy(topo);
    return path;
}

/* Each rank's stand-in record and stderr in files of their own and of the case. */
static const char *rank_file(int rank, const char *what)
{
    static char name[128];
    snprintf(name, sizeof(name), "%s_rank%d.%s", case_name, rank, what);
    return acc_test_tmp(name);
}

static void rank_logs(int rank)
{
    unlink(rank_file(rank, "nccl"));
    setenv("FAKE_NCCL_LOG", rank_file(rank, "nccl"), 1);
    CHECK(freopen(rank_file(rank, "log"), "w", stderr) != NULL);
    setvbuf(stderr, NULL, _IONBF, 0);
}

/* Lines of a rank's file that contain fragment. */
static int lines(int rank, const char *what, const char *fragment)
{
    char line[1024];
    FILE *f = fopen(rank_file(rank, what), "r");
    int n = 0;
    while (f && fgets(line, sizeof(line), f))
        n += strstr(line, fragment) != NULL;
    if (f)
        fclose(f);
    return n;
}

/* How many times NCCL received coll with this count. */
static int nccl_calls(int rank, acc_coll_t coll, uint64_t count)
{
    char want[96];
    snprintf(want, sizeof(want), "%s count=%llu ",
             coll == ACC_COLL_ALLREDUCE ? "ncclAllReduce" : "ncclAllGather",
             (unsigned long long)count);
    return lines(rank, "nccl", want);
}

/* Does the image build's table give this call to NCCL?  Read from the database, as a user
 * would check it: a size no range holds is NCCL's too. */
static int table_says_nccl(acc_coll_t coll, uint64_t nbytes)
{
    acc_topo_t *topo = NULL;
    acc_db_t *db = NULL;
    acc_select_table_t *t = NULL;
    const acc_select_entry_t *e;
    char fp[ACC_SHA256_HEX_LEN + 1];
    int nccl;
    CHECK_OK(acc_topo_load(TOPO, &topo));
    CHECK_OK(acc_topo_fingerprint(topo, fp));
    CHECK_OK(acc_db_open(getenv("ACC_DB"), ACC_DB_READONLY, &db));
    CHECK_OK(acc_db_get_selection(db, fp, coll, &t));
    e = acc_select_lookup(t, nbytes);
    nccl = !e || e->use_nccl;
    acc_select_destroy(t);
    acc_db_close(db);
    acc_topo_destroy(topo);
    return nccl;
}

/* ---- one call, checked as a user would ------------------------------------------------- */

typedef struct {
    acc_coll_t coll; /* allreduce or allgather, fp32, sum */
    uint64_t count;  /* as the API counts it */
    int inplace;
    uint32_t seed;
    float *in, *out;
} call_t;

static void prepare(call_t *k, int rank)
{
    uint64_t out_elems = k->count * (k->coll == ACC_COLL_ALLGATHER ? NRANKS : 1);
    k->out = malloc(out_elems * sizeof(float) + 1);
    CHECK(k->out != NULL);
    memset(k->out, 0xa5, out_elems * sizeof(float));
    if (k->inplace)
        k->in = k->coll == ACC_COLL_ALLGATHER ? k->out + (uint64_t)rank * k->count : k->out;
    else
        CHECK((k->in = malloc(k->count * sizeof(float) + 1)) != NULL);
    acc_host_fill_rank(k->coll, NRANKS, rank, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_EXACT, k->seed,
                       k->count, k->in);
}

static ncclResult_t issue(const call_t *k, ncclComm_t c)
{
    if (k->coll == ACC_COLL_ALLREDUCE)
        return api.AllReduce(k->in, k->out, k->count, ncclFloat32, ncclSum, c, NULL);
    return api.AllGather(k->in, k->out, k->count, ncclFloat32, c, NULL);
}

static void finish(call_t *k, int rank)
{
    uint64_t wrong = acc_host_check_rank(k->coll, NRANKS, 0, rank, ACC_DT_F32, ACC_RED_SUM,
                                         ACC_FILL_EXACT, k->seed, k->count, k->out, NULL);
    CHECK_MSG(wrong == 0, "rank %d: %s of %llu elements: %llu wrong", rank, acc_coll_name(k->coll),
              (unsigned long long)k->count, (unsigned long long)wrong);
    if (!k->inplace)
        free(k->in);
    free(k->out);
}

static void call_ok(call_t k, ncclComm_t c, int rank)
{
    prepare(&k, rank);
    CHECK_INT(issue(&k, c), ncclSuccess);
    finish(&k, rank);
}

/* Rank 0 makes NCCL's unique id and hands it to the others through a pipe made before the
 * fork, and the parent starts no thread (ranks_run_own_id): a lock a parent's thread holds at
 * a fork -- the sanitizers' allocator's among them -- stays held for ever in the child. */
static int id_pipe[2];

static ncclComm_t init(int rank)
{
    ncclComm_t c = NULL;
    ncclUniqueId id;
    rank_logs(rank);
    if (rank == 0) {
        CHECK_INT(api.GetUniqueId(&id), ncclSuccess);
        for (int r = 1; r < NRANKS; r++)
            CHECK(write(id_pipe[1], &id, sizeof(id)) == (ssize_t)sizeof(id));
    } else {
        CHECK(read(id_pipe[0], &id, sizeof(id)) == (ssize_t)sizeof(id));
    }
    CHECK_INT(api.CommInitRank(&c, NRANKS, id, rank), ncclSuccess);
    return c;
}

static void run_ranks(int (*fn)(int, int, const acc_unique_id_t *, void *))
{
    CHECK(pipe(id_pipe) == 0);
    ranks_run_own_id(NRANKS, fn, NULL, 180);
    close(id_pipe[0]);
    close(id_pipe[1]);
}

/* ---- routing by size ----------------------------------------------------------------------- */

/* Allreduce below the table (no range: NCCL's), in acc's ranges, in place too; allgather in an
 * acc range and in NCCL's range above 64 MiB (the whole output: 4 ranks x 16 MiB). */
static const call_t routed[] = {
    {ACC_COLL_ALLREDUCE, 64, 0, 1, NULL, NULL},
    {ACC_COLL_ALLREDUCE, 1024, 0, 2, NULL, NULL},
    {ACC_COLL_ALLREDUCE, 1025, 1, 3, NULL, NULL},
    {ACC_COLL_ALLREDUCE, 512u << 10, 0, 4, NULL, NULL},
    {ACC_COLL_ALLGATHER, 256, 0, 5, NULL, NULL},
    {ACC_COLL_ALLGATHER, 4u << 20, 1, 6, NULL, NULL},
};
#define NROUTED (sizeof(routed) / sizeof(routed[0]))

static uint64_t nbytes(const call_t *k)
{
    return k->count * sizeof(float) * (k->coll == ACC_COLL_ALLGATHER ? NRANKS : 1);
}

static int route_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    ncclComm_t c = init(rank);
    int to_nccl = 0;
    (void)nranks;
    (void)unused;
    (void)arg;
    for (size_t i = 0; i < NROUTED; i++)
        call_ok(routed[i], c, rank);
    for (size_t i = 0; i < NROUTED; i++) {
        int nccl = table_says_nccl(routed[i].coll, nbytes(&routed[i]));
        CHECK_MSG(nccl_calls(rank, routed[i].coll, routed[i].count) == nccl,
                  "rank %d: %s of %llu bytes: the table says %s, NCCL got %d calls", rank,
                  acc_coll_name(routed[i].coll), (unsigned long long)nbytes(&routed[i]),
                  nccl ? "NCCL" : "acc", nccl_calls(rank, routed[i].coll, routed[i].count));
        to_nccl += nccl;
    }
    CHECK_MSG(to_nccl > 0 && to_nccl < (int)NROUTED, "the case must route both ways (%d of %zu)",
              to_nccl, NROUTED);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    CHECK_INT(lines(rank, "log", "acc WARN"), 0);
    return 0;
}

ACC_TEST(routes_each_size_where_the_table_says)
{
    env("route", db_path("route"));
    load_api();
    run_ranks(route_rank);
}

/* ---- groups -------------------------------------------------------------------------------- */

static int group_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    ncclComm_t c = init(rank);
    call_t a = {ACC_COLL_ALLREDUCE, 2048, 0, 11, NULL, NULL};       /* acc's */
    call_t b = {ACC_COLL_ALLREDUCE, 256u << 10, 1, 12, NULL, NULL}; /* acc's */
    call_t m = {ACC_COLL_ALLREDUCE, 4096, 0, 13, NULL, NULL};       /* acc's... */
    call_t g = {ACC_COLL_ALLGATHER, 4u << 20, 0, 14, NULL, NULL};   /* ...with NCCL's */
    call_t n = {ACC_COLL_ALLREDUCE, 8192, 1, 15, NULL, NULL};       /* nested */
    (void)nranks;
    (void)unused;
    (void)arg;
    CHECK(!table_says_nccl(ACC_COLL_ALLREDUCE, 2048 * 4) && !table_says_nccl(m.coll, 4096 * 4));
    CHECK(table_says_nccl(ACC_COLL_ALLGATHER, (4u << 20) * 4 * NRANKS));

    /* All of it acc's: acc runs it, NCCL sees the group but none of its calls. */
    prepare(&a, rank);
    prepare(&b, rank);
    CHECK_INT(api.GroupStart(), ncclSuccess);
    CHECK_INT(issue(&a, c), ncclSuccess);
    CHECK_INT(issue(&b, c), ncclSuccess);
    CHECK_INT(api.GroupEnd(), ncclSuccess);
    finish(&a, rank);
    finish(&b, rank);
    CHECK_INT(nccl_calls(rank, a.coll, a.count) + nccl_calls(rank, b.coll, b.count), 0);
    CHECK_INT(lines(rank, "nccl", "ncclGroupStart"), 1);

    /* One call of it NCCL's: the whole group goes to NCCL. */
    prepare(&m, rank);
    prepare(&g, rank);
    CHECK_INT(api.GroupStart(), ncclSuccess);
    CHECK_INT(issue(&m, c), ncclSuccess);
    CHECK_INT(issue(&g, c), ncclSuccess);
    CHECK_INT(api.GroupEnd(), ncclSuccess);
    finish(&m, rank);
    finish(&g, rank);
    CHECK_INT(nccl_calls(rank, m.coll, m.count), 1);
    CHECK_INT(nccl_calls(rank, g.coll, g.count), 1);

    /* Nested groups run at the outermost end. */
    prepare(&n, rank);
    CHECK_INT(api.GroupStart(), ncclSuccess);
    CHECK_INT(api.GroupStart(), ncclSuccess);
    CHECK_INT(issue(&n, c), ncclSuccess);
    CHECK_INT(api.GroupEnd(), ncclSuccess);
    CHECK_INT(api.GroupEnd(), ncclSuccess);
    finish(&n, rank);
    CHECK_INT(nccl_calls(rank, n.coll, n.count), 0);
    CHECK_INT(lines(rank, "nccl", "ncclGroupEnd"), 4);

    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    return 0;
}

ACC_TEST(groups_go_whole_to_acc_or_to_nccl)
{
    env("group", db_path("group"));
    load_api();
    run_ranks(group_rank);
}

/* ---- acc failing at a call ------------------------------------------------------------------ */

/* The size of an allreduce the table gives twoshot: a straggler beyond acc's timeout breaks it
 * on every rank, the late one included (its peers stop before they send their halves). */
static uint64_t twoshot_count(void)
{
    for (uint64_t count = 256; count <= (16u << 20); count <<= 1) {
        acc_topo_t *topo = NULL;
        acc_db_t *db = NULL;
        acc_select_table_t *t = NULL;
        const acc_select_entry_t *e;
        char fp[ACC_SHA256_HEX_LEN + 1];
        int found;
        CHECK_OK(acc_topo_load(TOPO, &topo));
        CHECK_OK(acc_topo_fingerprint(topo, fp));
        CHECK_OK(acc_db_open(getenv("ACC_DB"), ACC_DB_READONLY, &db));
        CHECK_OK(acc_db_get_selection(db, fp, ACC_COLL_ALLREDUCE, &t));
        found =
            (e = acc_select_lookup(t, count * 4)) && !e->use_nccl && !strcmp(e->algo, "twoshot");
        acc_select_destroy(t);
        acc_db_close(db);
        acc_topo_destroy(topo);
        if (found)
            return count;
    }
    CHECK_MSG(0, "the table has no twoshot allreduce range");
    return 0;
}

static int straggler_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    ncclComm_t c = init(rank);
    uint64_t count = twoshot_count();
    call_t first = {ACC_COLL_ALLREDUCE, count, 0, 21, NULL, NULL};
    call_t broken = {ACC_COLL_ALLREDUCE, count, 0, 22, NULL, NULL};
    call_t later = {ACC_COLL_ALLREDUCE, count, 1, 23, NULL, NULL};
    ncclResult_t async = ncclInternalError;
    (void)nranks;
    (void)unused;
    (void)arg;

    call_ok(first, c, rank); /* acc's, and every rank is past it */
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, count), 0);
    if (rank == 1)
        sleep(5); /* far beyond ACC_TIMEOUT_MS: the others give up inside acc */
    call_ok(broken, c, rank);
    call_ok(later, c, rank);
    /* Both reached NCCL; acc's failure did not surface as NCCL's. */
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, count), 2);
    CHECK_INT(api.CommGetAsyncError(c, &async), ncclSuccess);
    CHECK_INT(async, ncclSuccess);
    /* One line per rank's communicator, naming the call, acc's failure and what happens. */
    CHECK_INT(lines(rank, "log", "acc "), 1);
    CHECK_INT(lines(rank, "log", "acc WARN runtime: acc drop-in NCCL: rank "), 1);
    CHECK_INT(lines(rank, "log", "ncclAllReduce failed in acc (ACC_ERR_TIMEOUT: "), 1);
    CHECK_INT(lines(rank, "log", "NCCL runs it and every later call of this communicator"), 1);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    return 0;
}

ACC_TEST(an_acc_failure_sends_the_call_and_later_ones_to_nccl)
{
    env("straggler", db_path("straggler"));
    setenv("ACC_TIMEOUT_MS", "1000", 1);
    load_api();
    run_ranks(straggler_rank);
}

/* ---- the whole API -------------------------------------------------------------------------- */

/* Every function nccl.h declares: a line that starts with its return type, then its name. */
static size_t declared(char names[][NM_NAME_MAX], size_t cap)
{
    static const char *const types[] = {"ncclResult_t ", "const char* ", "void "};
    char line[512];
    FILE *f = fopen(acc_test_data("nccl/nccl.h"), "r");
    size_t n = 0;
    CHECK(f != NULL);
    while (fgets(line, sizeof(line), f))
        for (size_t t = 0; t < 3; t++) {
            const char *id = line + strlen(types[t]);
            size_t len;
            if (strncmp(line, types[t], strlen(types[t])) != 0)
                continue;
            id += strspn(id, " ");
            len = strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
            if (id[len] == '(' && len < NM_NAME_MAX && n < cap &&
                (!strncmp(id, "nccl", 4) || !strncmp(id, "pnccl", 5)))
                snprintf(names[n++], NM_NAME_MAX, "%.*s", (int)len, id);
        }
    fclose(f);
    return n;
}

static int listed(const char *name, char names[][NM_NAME_MAX], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return 1;
    return 0;
}

ACC_TEST(exports_nccl_h_and_nothing_else)
{
    static char want[256][NM_NAME_MAX], got[256][NM_NAME_MAX];
    size_t nwant = declared(want, 256), ngot = nm_exported(ACC_NCCL_DROPIN, got, 256);
    printf("nccl.h declares %zu functions; the drop-in exports %zu symbols\n", nwant, ngot);
    CHECK_INT(nwant, 82); /* 41 functions, each as ncclName and pnccl<Name> */
    for (size_t i = 0; i < nwant; i++)
        CHECK_MSG(listed(want[i], got, ngot), "%s is not exported", want[i]);
    for (size_t i = 0; i < ngot; i++)
        CHECK_MSG(listed(got[i], want, nwant), "%s is exported but not in nccl.h", got[i]);
}

/* Each function reaches NCCL: the stand-in records it (or, for ncclGetErrorString, answers with
 * its own text). */
ACC_TEST(every_function_reaches_nccl)
{
    ncclUniqueId id;
    ncclComm_t c = NULL, c2 = NULL, c3 = NULL, none = NULL;
    ncclResult_t async;
    ncclRedOp_t op;
    ncclWindow_t win = NULL;
    void *mem = NULL, *handle = NULL;
    float x[4] = {1, 2, 3, 4}, y[4];
    int v = 0, devs[1] = {0};
    static const char *const recorded[] = {"ncclGetVersion",
                                           "ncclGetUniqueId",
                                           "ncclCommInitRank ",
                                           "ncclCommInitRankConfig",
                                           "ncclCommInitRankScalable",
                                           "ncclCommInitAll",
                                           "ncclCommSplit",
                                           "ncclCommShrink",
                                           "ncclCommRevoke",
                                           "ncclMemAlloc",
                                           "ncclMemFree",
                                           "ncclCommCount",
                                           "ncclCommCuDevice",
                                           "ncclCommUserRank",
                                           "ncclCommRegister",
                                           "ncclCommDeregister",
                                           "ncclCommWindowRegister",
                                           "ncclCommWindowDeregister",
                                           "ncclRedOpCreatePreMulSum",
                                           "ncclRedOpDestroy",
                                           "ncclCommGetAsyncError",
                                           "ncclGetLastError",
                                           "ncclResetDebugInit",
                                           "ncclAllReduce",
                                           "ncclAllGather",
                                           "ncclReduceScatter",
                                           "ncclBroadcast",
                                           "ncclBcast",
                                           "ncclReduce",
                                           "ncclAlltoAll",
                                           "ncclGather",
                                           "ncclScatter",
                                           "ncclSend",
                                           "ncclRecv",
                                           "ncclGroupStart",
                                           "ncclGroupEnd",
                                           "ncclGroupSimulateEnd",
                                           "ncclCommFinalize",
                                           "ncclCommDestroy",
                                           "ncclCommAbort"};

    env("whole", "/nonexistent/acc.db");
    setenv("ACC_DISABLE", "1", 1);
    load_api();
    rank_logs(0);
    CHECK_INT(api.GetVersion(&v), ncclSuccess);
    CHECK_INT(v, 22809);
    CHECK_STR(api.GetErrorString(ncclInternalError), "stand-in NCCL error");
    CHECK_INT(api.GetUniqueId(&id), ncclSuccess);
    CHECK_INT(api.CommInitRank(&c, 1, id, 0), ncclSuccess);
    CHECK_INT(api.GetUniqueId(&id), ncclSuccess);
    CHECK_INT(api.CommInitRankConfig(&c2, 1, id, 0, NULL), ncclSuccess);
    CHECK_INT(api.GetUniqueId(&id), ncclSuccess);
    CHECK_INT(api.CommInitRankScalable(&c3, 1, 0, 1, &id, NULL), ncclSuccess);
    CHECK_INT(api.CommInitAll(&none, 1, devs), ncclInvalidUsage);
    CHECK_INT(api.CommSplit(c, 0, 0, &none, NULL), ncclInvalidUsage);
    CHECK_INT(api.CommShrink(c, devs, 0, &none, NULL, 0), ncclInvalidUsage);
    CHECK_INT(api.CommRevoke(c, 0), ncclInvalidUsage);
    CHECK_INT(api.MemAlloc(&mem, 64), ncclSuccess);
    CHECK_INT(api.MemFree(mem), ncclSuccess);
    CHECK_INT(api.CommCount(c, &v), ncclSuccess);
    CHECK_INT(v, 1);
    CHECK_INT(api.CommCuDevice(c, &v), ncclSuccess);
    CHECK_INT(api.CommUserRank(c, &v), ncclSuccess);
    CHECK_INT(api.CommRegister(c, x, sizeof(x), &handle), ncclSuccess);
    CHECK_INT(api.CommDeregister(c, handle), ncclSuccess);
    CHECK_INT(api.CommWindowRegister(c, x, sizeof(x), &win, 0), ncclInvalidUsage);
    CHECK_INT(api.CommWindowDeregister(c, win), ncclInvalidUsage);
    CHECK_INT(api.RedOpCreatePreMulSum(&op, x, ncclFloat32, ncclScalarHostImmediate, c),
              ncclInvalidUsage);
    CHECK_INT(api.RedOpDestroy(ncclNumOps, c), ncclInvalidUsage);
    CHECK_INT(api.CommGetAsyncError(c, &async), ncclSuccess);
    CHECK_STR(api.GetLastError(c), "");
    api.ResetDebugInit();
    CHECK_INT(api.AllReduce(x, y, 4, ncclFloat32, ncclSum, c, NULL), ncclSuccess);
    CHECK_INT(api.AllGather(x, y, 4, ncclFloat32, c, NULL), ncclSuccess);
    CHECK_INT(api.ReduceScatter(x, y, 4, ncclFloat32, ncclSum, c, NULL), ncclSuccess);
    CHECK_INT(api.Broadcast(x, y, 4, ncclFloat32, 0, c, NULL), ncclSuccess);
    CHECK_INT(api.Bcast(x, 4, ncclFloat32, 0, c, NULL), ncclSuccess);
    CHECK_INT(api.Reduce(x, y, 4, ncclFloat32, ncclMax, 0, c, NULL), ncclSuccess);
    CHECK(y[3] == 4.0f);
    CHECK_INT(api.AlltoAll(x, y, 4, ncclFloat32, c, NULL), ncclInvalidUsage);
    CHECK_INT(api.Gather(x, y, 4, ncclFloat32, 0, c, NULL), ncclInvalidUsage);
    CHECK_INT(api.Scatter(x, y, 4, ncclFloat32, 0, c, NULL), ncclInvalidUsage);
    CHECK_INT(api.Send(x, 4, ncclFloat32, 0, c, NULL), ncclInvalidUsage);
    CHECK_INT(api.Recv(y, 4, ncclFloat32, 0, c, NULL), ncclInvalidUsage);
    CHECK_INT(api.GroupStart(), ncclSuccess);
    CHECK_INT(api.GroupEnd(), ncclSuccess);
    CHECK_INT(api.GroupSimulateEnd(NULL), ncclInvalidUsage);
    CHECK_INT(api.CommFinalize(c), ncclSuccess);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    CHECK_INT(api.CommDestroy(c2), ncclSuccess);
    CHECK_INT(api.CommAbort(c3), ncclSuccess);
    for (size_t i = 0; i < sizeof(recorded) / sizeof(recorded[0]); i++)
        CHECK_MSG(lines(0, "nccl", recorded[i]) > 0, "%s did not reach NCCL", recorded[i]);
}

/* Installed under NCCL's own name ahead of NCCL, the drop-in would find itself: it must say so
 * and refuse, never call itself. */
ACC_TEST(finding_itself_as_nccl_is_refused)
{
    int v = 0;
    env("self", "/nonexistent/acc.db");
    setenv("ACC_NCCL_LIBRARY", ACC_NCCL_DROPIN, 1);
    load_api();
    rank_logs(0);
    CHECK_INT(api.GetVersion(&v), ncclSystemError);
    CHECK_INT(lines(0, "log", "is acc's drop-in NCCL, not NCCL; set ACC_NCCL_LIBRARY"), 1);
    CHECK_INT(api.GetVersion(&v), ncclSystemError);
    CHECK_INT(lines(0, "log", "nccl"), 2); /* the reason once, the call once */
}

/* ---- preloaded into a job ------------------------------------------------------------------- */

/* A job that loads NCCL itself (nccl_loop: libnccl.so.2 into the global scope, calls through
 * the dynamic linker) with the drop-in in LD_PRELOAD and no ACC_NCCL_LIBRARY: the drop-in
 * stands in front of the job's own NCCL and finds it by its name. */
static int preloaded_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    char r[16], n[16], asan[512];
    const char *argv[] = {NCCL_LOOP_EXE, r, n, arg, "3", "256", "4096", "2097152", NULL};
    const char *asan_was = getenv("ASAN_OPTIONS");
    (void)unused;
    /* In a sanitizer build the preloaded library comes before the sanitizer's runtime, which
     * AddressSanitizer refuses unless told that this is meant. */
    snprintf(asan, sizeof(asan), "%s%sverify_asan_link_order=0", asan_was ? asan_was : "",
             asan_was && asan_was[0] ? ":" : "");
    setenv("ASAN_OPTIONS", asan, 1);
    snprintf(r, sizeof(r), "%d", rank);
    snprintf(n, sizeof(n), "%d", nranks);
    unlink(rank_file(rank, "nccl"));
    setenv("FAKE_NCCL_LOG", rank_file(rank, "nccl"), 1);
    setenv("LD_PRELOAD", ACC_NCCL_DROPIN, 1);
    setenv("NCCL_LOOP_LIBRARY", ACC_STAND_IN_NCCL, 1);
    setenv("NCCL_LOOP_HOST", "1", 1);
    unsetenv("ACC_NCCL_LIBRARY");
    if (!freopen(rank_file(rank, "log"), "w", stdout) || dup2(fileno(stdout), 2) < 0)
        return 3;
    execv(NCCL_LOOP_EXE, (char *const *)argv);
    return 4;
}

ACC_TEST(preloaded_in_front_of_the_jobs_own_nccl)
{
    const char *idfile = acc_test_tmp("preload.id");
    env("preload", db_path("preload"));
    unlink(idfile);
    ranks_run(NRANKS, preloaded_rank, (void *)idfile, 180);
    /* 256 bytes: below the table, NCCL's; the other sizes acc's. */
    CHECK(table_says_nccl(ACC_COLL_ALLREDUCE, 256));
    CHECK(!table_says_nccl(ACC_COLL_ALLREDUCE, 4096));
    CHECK(!table_says_nccl(ACC_COLL_ALLREDUCE, 2097152));
    for (int rank = 0; rank < NRANKS; rank++) {
        CHECK_INT(lines(rank, "log", "ncclAllReduce from "), 1);
        CHECK_INT(lines(rank, "log", "libacc-nccl.so"), 1);
        CHECK_INT(lines(rank, "log", "ok"), 1);
        CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, 64), 3);
        CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, 1024), 0);
        CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, 524288), 0);
    }
}
