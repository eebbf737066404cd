/*
 * dropin_util.h - what the drop-in NCCL's tests share: the drop-in as a job sees it (NCCL's API
 * by dlopen/dlsym, nothing else), the stand-in NCCL it finds, the image build's database, each
 * rank's files (the stand-in's record of the calls it received, the rank's stderr), and one
 * collective checked as a user would check it.  Header-only, for tests/runtime.
 */
#ifndef DROPIN_UTIL_H
#define DROPIN_UTIL_H

#include "acc_db.h"
#include "dropin/dropin_api.h"
#include "nccl_abi.h"
#include "ranks.h"

#include <dlfcn.h>
#include <stdlib.h>

#define DROPIN_TOPO   "gpus=4 nvlink=18"
#define DROPIN_NRANKS 4
/* The same ranks as two nodes of two GPUs: acc's plans there cross the nodes. */
#define DROPIN_TWO_NODES "nodes=2 gpus=2 nvlink=18 nic=2x400"

typedef struct {
#define API_FIELD(since, ret, name, params, args) ret(*name) params;
    DROPIN_API(API_FIELD)
#undef API_FIELD
} api_t;

static api_t api;
static void *dropin_lib;

/* Every name of NCCL's API resolves in the drop-in, ncclName and pnccl<Name> to one function. */
static inline void load_api(void)
{
    dropin_lib = dlopen(ACC_NCCL_DROPIN, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(dropin_lib != NULL, "%s", dlerror());
#define API_LOAD(since, ret, name, params, args)                                                   \
    *(void **)&api.name = dlsym(dropin_lib, "nccl" #name);                                         \
    CHECK_MSG(api.name != NULL, "nccl" #name " is not exported");                                  \
    CHECK_MSG(dlsym(dropin_lib, "pnccl" #name) == *(void **)&api.name, "pnccl" #name " differs");
    DROPIN_API(API_LOAD)
#undef API_LOAD
}

static const char *case_name = "dropin";
static const char *case_topo = DROPIN_TOPO;

/* The drop-in finds the stand-in as its NCCL; acc finds the machine and the database. */
static inline void env(const char *name, const char *db)
{
    case_name = name;
    setenv("ACC_NCCL_LIBRARY", ACC_STAND_IN_NCCL, 1);
    setenv("ACC_TOPO", case_topo, 1);
    setenv("ACC_DB", db, 1);
    setenv("ACC_LOG_LEVEL", "warn", 1);
}

/* The image build's database of the case's topology, one per case (ctest runs cases side by
 * side). */
static inline const char *db_path(const char *name)
{
    static char path[512];
    char file[96];
    acc_db_t *db = NULL;
    acc_topo_t *topo = NULL;
    snprintf(file, sizeof(file), "dropin_%s.db", name);
    snprintf(path, sizeof(path), "%s", acc_test_tmp_fresh(file));
    CHECK_OK(acc_topo_load(case_topo, &topo));
    CHECK_OK(acc_db_open(path, 0, &db));
    CHECK_OK(acc_db_build(db, topo, NULL, NULL));
    acc_db_close(db);
    acc_topo_destroy(topo);
    return path;
}

/* Each rank's stand-in record and stderr in files of their own and of the case. */
static inline const char *rank_file(int rank, const char *what)
{
    static char name[128];
    snprintf(name, sizeof(name), "%s_rank%d.%s", case_name, rank, what);
    return acc_test_tmp(name);
}

static inline void rank_logs(int rank)
{
    unlink(rank_file(rank, "nccl"));
    setenv("FAKE_NCCL_LOG", rank_file(rank, "nccl"), 1);
    CHECK(freopen(rank_file(rank, "log"), "w", stderr) != NULL);
    setvbuf(stderr, NULL, _IONBF, 0);
}

/* Lines of a rank's file that contain fragment. */
static inline int lines(int rank, const char *what, const char *fragment)
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
static inline int nccl_calls(int rank, acc_coll_t coll, uint64_t count)
{
    static const char *const names[] = {"ncclAllReduce", "ncclAllGather", "ncclReduceScatter",
                                        "ncclBroadcast", "ncclReduce"};
    char want[96];
    snprintf(want, sizeof(want), "%s count=%llu ", names[coll], (unsigned long long)count);
    return lines(rank, "nccl", want);
}

/* acc's unique id broadcast through NCCL: the join of a communicator. */
static inline int joins(int rank)
{
    char want[64];
    snprintf(want, sizeof(want), "ncclBroadcast count=%zu type=0 ",
             sizeof(acc_unique_id_t) + sizeof(uint64_t));
    return lines(rank, "nccl", want);
}

/* The range of the image build's table that holds nbytes of coll; NULL means NCCL's (no range,
 * or a range the table gives NCCL).  Read from the database, as a user would check it. */
static inline int table_says_nccl_named(acc_coll_t coll, uint64_t nbytes, char *algo, size_t cap)
{
    acc_topo_t *topo = NULL;
    acc_db_t *db = NULL;
    acc_select_table_t *t = NULL;
    const acc_select_entry_t *e;
    char fp[ACC_SHA256_HEX_LEN + 1];
    int nccl;
    CHECK_OK(acc_topo_load(case_topo, &topo));
    CHECK_OK(acc_topo_fingerprint(topo, fp));
    CHECK_OK(acc_db_open(getenv("ACC_DB"), ACC_DB_READONLY, &db));
    if (acc_db_get_selection(db, fp, coll, &t) != ACC_OK)
        t = NULL;
    e = t ? acc_select_lookup(t, nbytes) : NULL;
    nccl = !e || e->use_nccl;
    if (algo)
        snprintf(algo, cap, "%s", e && !nccl ? e->algo : "");
    acc_select_destroy(t);
    acc_db_close(db);
    acc_topo_destroy(topo);
    return nccl;
}

static inline int table_says_nccl(acc_coll_t coll, uint64_t nbytes)
{
    return table_says_nccl_named(coll, nbytes, NULL, 0);
}

/* ---- one call, checked as a user would ------------------------------------------------- */

typedef struct {
    acc_coll_t coll; /* allreduce or allgather, fp32, sum */
    uint64_t count;  /* as the API counts it */
    int inplace;
    uint32_t seed;
    float *in, *out;
} call_t;

static inline void prepare_n(call_t *k, int rank, int nranks)
{
    uint64_t out_elems = k->count * (k->coll == ACC_COLL_ALLGATHER ? (uint64_t)nranks : 1);
    k->out = malloc(out_elems * sizeof(float) + 1);
    CHECK(k->out != NULL);
    memset(k->out, 0xa5, out_elems * sizeof(float));
    if (k->inplace)
        k->in = k->coll == ACC_COLL_ALLGATHER ? k->out + (uint64_t)rank * k->count : k->out;
    else
        CHECK((k->in = malloc(k->count * sizeof(float) + 1)) != NULL);
    acc_host_fill_rank(k->coll, nranks, rank, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_EXACT, k->seed,
                       k->count, k->in);
}

static inline ncclResult_t issue(const call_t *k, ncclComm_t c)
{
    if (k->coll == ACC_COLL_ALLREDUCE)
        return api.AllReduce(k->in, k->out, k->count, ncclFloat32, ncclSum, c, NULL);
    return api.AllGather(k->in, k->out, k->count, ncclFloat32, c, NULL);
}

static inline void finish_n(call_t *k, int rank, int nranks)
{
    uint64_t wrong = acc_host_check_rank(k->coll, nranks, 0, rank, ACC_DT_F32, ACC_RED_SUM,
                                         ACC_FILL_EXACT, k->seed, k->count, k->out, NULL);
    CHECK_MSG(wrong == 0, "rank %d: %s%s of %llu elements: %llu wrong", rank,
              k->inplace ? "in-place " : "", acc_coll_name(k->coll), (unsigned long long)k->count,
              (unsigned long long)wrong);
    if (!k->inplace)
        free(k->in);
    free(k->out);
}

static inline void prepare(call_t *k, int rank)
{
    prepare_n(k, rank, DROPIN_NRANKS);
}

static inline void finish(call_t *k, int rank)
{
    finish_n(k, rank, DROPIN_NRANKS);
}

static inline void call_ok(call_t k, ncclComm_t c, int rank)
{
    prepare(&k, rank);
    CHECK_INT(issue(&k, c), ncclSuccess);
    finish(&k, rank);
}

/* ---- communicators ---------------------------------------------------------------------- */

/* Rank 0 makes NCCL's unique id and hands it to the others through a pipe made before the
 * fork, and the parent starts no thread (ranks_run_own_id): a lock a parent's thread holds at
 * a fork -- the sanitizers' allocator's among them -- stays held for ever in the child.  One
 * pipe per communicator a case makes. */
static int id_pipe[4][2];

static inline ncclComm_t init_comm(int which, int rank, int nranks)
{
    ncclComm_t c = NULL;
    ncclUniqueId id;
    if (rank == 0) {
        CHECK_INT(api.GetUniqueId(&id), ncclSuccess);
        for (int r = 1; r < nranks; r++)
            CHECK(write(id_pipe[which][1], &id, sizeof(id)) == (ssize_t)sizeof(id));
    } else {
        CHECK(read(id_pipe[which][0], &id, sizeof(id)) == (ssize_t)sizeof(id));
    }
    CHECK_INT(api.CommInitRank(&c, nranks, id, rank), ncclSuccess);
    return c;
}

static inline ncclComm_t init(int rank)
{
    rank_logs(rank);
    return init_comm(0, rank, DROPIN_NRANKS);
}

static inline void run_ranks_n(int nranks, int (*fn)(int, int, const acc_unique_id_t *, void *),
                               void *arg)
{
    for (int i = 0; i < 4; i++)
        CHECK(pipe(id_pipe[i]) == 0);
    ranks_run_own_id(nranks, fn, arg, 240);
    for (int i = 0; i < 4; i++) {
        close(id_pipe[i][0]);
        close(id_pipe[i][1]);
    }
}

static inline void run_ranks(int (*fn)(int, int, const acc_unique_id_t *, void *))
{
    run_ranks_n(DROPIN_NRANKS, fn, NULL);
}

/* A case of DROPIN_NRANKS ranks on a database of its own (settings of the case's own set before
 * it: env() leaves every other variable as it is). */
static inline void run_case(const char *name, int (*fn)(int, int, const acc_unique_id_t *, void *))
{
    env(name, db_path(name));
    load_api();
    run_ranks(fn);
}

/* The same, with an argument for the ranks. */
static inline void run_ranks_n_case(const char *name,
                                    int (*fn)(int, int, const acc_unique_id_t *, void *), void *arg)
{
    env(name, db_path(name));
    load_api();
    run_ranks_n(DROPIN_NRANKS, fn, arg);
}

/* A size of coll on nranks (a power of two, count in fp32 elements) that the table gives algo
 * (any of acc's when NULL), or 0. */
static inline uint64_t count_of(acc_coll_t coll, const char *algo, int nranks)
{
    for (uint64_t count = 256; count <= (16u << 20); count <<= 1) {
        char got[64];
        uint64_t nbytes = count * 4 * (coll == ACC_COLL_ALLGATHER ? (uint64_t)nranks : 1);
        if (!table_says_nccl_named(coll, nbytes, got, sizeof(got)) && (!algo || !strcmp(got, algo)))
            return count;
    }
    return 0;
}

/* ---- a table of two nodes ----------------------------------------------------------------- */

/* The image build's table of DROPIN_TWO_NODES gives acc sizes whose plans cross the nodes: the
 * host backend runs them (TCP between the nodes), the cuda backend cannot (acc_plan_runs_on), so
 * on GPUs the table offers NCCL there.  Two calls of such a size, on GPUs or in host memory. */
typedef struct {
    uint64_t count; /* an allreduce the table gives acc's host backend */
    int on_gpu;
} two_nodes_t;

static inline int two_nodes_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    const two_nodes_t *w = (const two_nodes_t *)arg;
    ncclComm_t c = init(rank);
    call_t k = {ACC_COLL_ALLREDUCE, w->count, 0, 53, NULL, NULL};
    (void)nranks;
    (void)unused;
    call_ok(k, c, rank);
    call_ok(k, c, rank);
    /* On GPUs NCCL runs both and acc never joins; in host memory acc joins and runs both. */
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, w->count), w->on_gpu ? 2 : 0);
    CHECK_INT(joins(rank), !w->on_gpu);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    CHECK_INT(lines(rank, "log", "cannot run here"), 0);
    CHECK_INT(lines(rank, "log", "acc WARN"), 0);
    return 0;
}

/* The case: set_env (env, or a GPU's) with the case's database, then the ranks. */
static inline void run_two_nodes_case(const char *name, void (*set_env)(const char *, const char *),
                                      int on_gpu)
{
    two_nodes_t w = {0, on_gpu};
    case_topo = DROPIN_TWO_NODES;
    set_env(name, db_path(name));
    w.count = count_of(ACC_COLL_ALLREDUCE, NULL, DROPIN_NRANKS);
    CHECK_MSG(w.count != 0, "the two-node table gives acc no allreduce size: nothing to check");
    printf("allreduce of %llu floats: acc's range for the host backend\n",
           (unsigned long long)w.count);
    load_api();
    run_ranks_n(DROPIN_NRANKS, two_nodes_rank, &w);
}

/* Seconds since a moment of acc's clock. */
static inline double since(double t0)
{
    return acc_now_s() - t0;
}

#endif
