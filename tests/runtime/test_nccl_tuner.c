/*
 * The NCCL tuner plugin (libnccl-tuner-acc.so) called the way NCCL 2.28 to 2.32 and NCCL's newer
 * source call it, through NCCL's own plugin structs (tuner_v4.h, _v5.h, _v6.h of NCCL 2.30.7 and
 * tuner_v7.h of NCCL's source, in tests/data/nccl/): dlopen, the v7 symbol (NCCL's source after
 * 2.30.7 looks for it first), v6 (2.30 to 2.32), v5 or v4, init per communicator
 * with NCCL's logger, then getCollInfo with the cost table NCCL builds -- a flat float[7][3]
 * cast to float**, -1 for what NCCL will not run, its own times elsewhere.  For a DGX-H100
 * communicator (8 ranks, 1 node) the entry NCCL then takes (the argmin) must be the one the image
 * build's table names, at 8 KiB, 1 MiB and 256 MiB; -1 entries stay -1; without a database, or for
 * a shape without a table, nothing changes and NCCL's log gets one line.
 */
#include "acc_db.h"
#include "acc_test.h"
#include "nccl_abi.h"
#include "nm_util.h"

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>

/* What NCCL's tuner headers take from the rest of NCCL: the logger and the functions as
 * src/include/nccl_common.h defines them, the ignored entry as src/include/plugin/nccl_tuner.h
 * does (both C++ headers, so not copied). */
typedef enum {
    NCCL_LOG_NONE = 0,
    NCCL_LOG_VERSION = 1,
    NCCL_LOG_WARN = 2,
    NCCL_LOG_INFO = 3,
    NCCL_LOG_ABORT = 4,
    NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;
typedef enum { NCCL_INIT = 0x1, NCCL_TUNING = 0x40 } ncclDebugLogSubSys;
typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char *file,
                                  int line, const char *fmt, ...);
typedef enum {
    ncclFuncBroadcast = 0,
    ncclFuncReduce = 1,
    ncclFuncAllGather = 2,
    ncclFuncReduceScatter = 3,
    ncclFuncAllReduce = 4,
    ncclFuncSendRecv = 5,
    ncclFuncSend = 6,
    ncclFuncRecv = 7,
    ncclNumFuncs = 8
} ncclFunc_t;
#define NCCL_ALGO_PROTO_IGNORE -1.0

/* NCCL's own plugin structs (v7 includes v6, which includes v5). */
#include "tuner_v4.h"
#include "tuner_v7.h"

#define NA NCCL_NUM_ALGORITHMS_V5
#define NP NCCL_NUM_PROTOCOLS_V5

/* ---- NCCL's side: the logger and the cost table ---------------------------------------- */

static char log_lines[16][1024];
static ncclDebugLogLevel log_levels[16];
static int nlog;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    va_list ap;
    (void)file;
    (void)line;
    CHECK(flags & NCCL_TUNING);
    CHECK(nlog < 16);
    va_start(ap, fmt);
    vsnprintf(log_lines[nlog], sizeof(log_lines[0]), fmt, ap);
    va_end(ap);
    log_levels[nlog++] = level;
    printf("NCCL log: %s\n", log_lines[nlog - 1]);
}

/* The machine of the case and NCCL's model of it (acc's replica of NCCL 2.28's tuning model):
 * what NCCL's cost table holds, and what NCCL itself would choose. */
static acc_topo_t *machine;
static acc_nccl_model_t *model;

static void use_machine(acc_topo_t *topo)
{
    machine = topo;
    CHECK_OK(acc_nccl_model_create(topo, NULL, &model));
}

static void done_machine(void)
{
    acc_nccl_model_destroy(model);
    acc_topo_destroy(machine);
    model = NULL;
    machine = NULL;
}

/* What NCCL's cost table holds for a collective of nbytes before the plugin sees it: -1
 * everywhere, then a time for each pair NCCL can run there.  The times favour Tree/Simple (or
 * Ring/Simple where there is no tree), so that NCCL's own argmin differs from the plugin's
 * choice unless the plugin acts. */
static void nccl_table(acc_coll_t coll, uint64_t nbytes, float t[NA][NP])
{
    for (int a = 0; a < NA; a++)
        for (int p = 0; p < NP; p++) {
            double us;
            int ok = acc_nccl_model_time(model, coll, nbytes, (acc_nccl_algo_t)a,
                                         (acc_nccl_proto_t)p, &us) == ACC_OK;
            t[a][p] = ok ? 10.0f + (float)(3 * a + p) : NCCL_ALGO_PROTO_IGNORE;
        }
    if (t[ACC_NCCL_ALGO_TREE][ACC_NCCL_PROTO_SIMPLE] >= 0)
        t[ACC_NCCL_ALGO_TREE][ACC_NCCL_PROTO_SIMPLE] = 1.0f;
    else
        t[ACC_NCCL_ALGO_RING][ACC_NCCL_PROTO_SIMPLE] = 1.0f;
}

/* NCCL's own choice: the NCCL column of the selection, which the image build stores. */
static acc_nccl_choice_t model_choice(acc_coll_t coll, uint64_t nbytes)
{
    acc_nccl_choice_t c;
    CHECK_OK(acc_nccl_model_select(model, coll, nbytes, &c));
    return c;
}

/* The pair NCCL runs: the first smallest entry that is not -1, in NCCL's loop order. */
static void argmin(float t[NA][NP], int *algo, int *proto)
{
    float best = -1;
    *algo = *proto = -1;
    for (int a = 0; a < NA; a++)
        for (int p = 0; p < NP; p++)
            if (t[a][p] >= 0 && (best < 0 || t[a][p] < best)) {
                best = t[a][p];
                *algo = a;
                *proto = p;
            }
}

/* What NCCL runs without the plugin. */
static void own_choice(acc_coll_t coll, uint64_t nbytes, int *algo, int *proto)
{
    float t[NA][NP];
    nccl_table(coll, nbytes, t);
    argmin(t, algo, proto);
}

/* ---- the plugin ------------------------------------------------------------------------ */

static void *plugin(void)
{
    void *h = dlopen(ACC_NCCL_TUNER_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(h != NULL, "%s", dlerror());
    return h;
}

static const ncclTuner_v5_t *v5(void)
{
    const ncclTuner_v5_t *t = dlsym(plugin(), "ncclTunerPlugin_v5");
    CHECK(t != NULL);
    CHECK_STR(t->name, "acc");
    return t;
}

static const ncclTuner_v6_t *v6(void)
{
    const ncclTuner_v6_t *t = dlsym(plugin(), "ncclTunerPlugin_v6");
    CHECK(t != NULL);
    CHECK_STR(t->name, "acc");
    return t;
}

/* A communicator's context, as NCCL's init makes it (the constants as NCCL fills them, and the
 * plugin must leave them: acc picks among NCCL's choices, it does not retune NCCL's model). */
static void *init5(const ncclTuner_v5_t *t, size_t nranks, size_t nnodes)
{
    ncclNvlDomainInfo_v5_t nvl = {1, (int)(nranks / nnodes), (int)(nranks / nnodes)};
    ncclTunerConstants_v5_t k, before;
    void *ctx = NULL;
    int lines = nlog;
    memset(&k, 0, sizeof(k));
    k.baseLatencies[1][2] = 8.4;
    k.perChMaxNVLSTreeBws[2][1] = 57.7;
    before = k;
    CHECK_INT(t->init(&ctx, 0x1234abcdull, nranks, nnodes, logger, &nvl, &k), ncclSuccess);
    CHECK(memcmp(&k, &before, sizeof(k)) == 0);
    CHECK_MSG(nlog == lines + 1, "init logged %d lines, not one", nlog - lines);
    return ctx;
}

/* The image build's database of topo for allreduce and (unless only_allreduce) allgather, up to
 * max_bytes (0: the default sweep), found through ACC_DB; ACC_TOPO names the machine the job
 * runs on. */
static void build_db(const char *name, acc_topo_t *topo, const char *job_topo, int only_allreduce,
                     uint64_t max_bytes)
{
    const char *path = acc_test_tmp_fresh(name);
    acc_db_build_opts_t o;
    acc_db_t *db = NULL;
    acc_db_build_opts_init(&o);
    o.colls[0] = ACC_COLL_ALLREDUCE;
    o.colls[1] = ACC_COLL_ALLGATHER;
    o.ncolls = only_allreduce ? 1 : 2;
    o.select.max_bytes = max_bytes;
    CHECK_OK(acc_db_open(path, 0, &db));
    CHECK_OK(acc_db_build(db, topo, &o, NULL));
    acc_db_close(db);
    setenv("ACC_DB", path, 1);
    setenv("ACC_TOPO", job_topo, 1);
}

static void build_h100_db(const char *name)
{
    acc_topo_t *topo = NULL;
    CHECK_OK(acc_topo_load("dgx-h100", &topo));
    use_machine(topo);
    build_db(name, topo, "dgx-h100", 0, 0);
}

/* One call as NCCL makes it; returns what NCCL then runs and the channels asked for, and
 * checks that nothing but the chosen entry changed. */
static int call(ncclResult_t (*get)(void *, ncclFunc_t, size_t, int, float **, int, int, int,
                                    int *),
                void *ctx, ncclFunc_t f, acc_coll_t coll, uint64_t nbytes, int *algo, int *proto)
{
    float t[NA][NP], before[NA][NP];
    int nchannels = 0;
    nccl_table(coll, nbytes, t);
    memcpy(before, t, sizeof(t));
    CHECK_INT(get(ctx, f, nbytes, 1, (float **)t, NA, NP, 0, &nchannels), ncclSuccess);
    argmin(t, algo, proto);
    for (int a = 0; a < NA; a++)
        for (int p = 0; p < NP; p++)
            if (a != *algo || p != *proto)
                CHECK_MSG(memcmp(&t[a][p], &before[a][p], sizeof(float)) == 0,
                          "entry %s/%s changed from %g to %g", acc_nccl_algo_name(a),
                          acc_nccl_proto_name(p), before[a][p], t[a][p]);
    return nchannels;
}

/* A call the plugin must leave to NCCL: its own choice, NCCL's channels. */
static void check_untouched(ncclResult_t (*get)(void *, ncclFunc_t, size_t, int, float **, int, int,
                                                int, int *),
                            void *ctx, ncclFunc_t f, acc_coll_t coll, uint64_t nbytes)
{
    int algo, proto, own_algo, own_proto;
    CHECK_INT(call(get, ctx, f, coll, nbytes, &algo, &proto), 0);
    own_choice(coll, nbytes, &own_algo, &own_proto);
    CHECK_INT(algo, own_algo);
    CHECK_INT(proto, own_proto);
}

/* The three sizes of the issue, on an 8-rank DGX-H100 communicator: what the table says wins,
 * and the channels are the table's. */
static void check_h100_sizes(ncclResult_t (*get)(void *, ncclFunc_t, size_t, int, float **, int,
                                                 int, int, int *),
                             void *ctx)
{
    static const uint64_t sizes[] = {8u << 10, 1u << 20, 256u << 20};
    for (size_t i = 0; i < 3; i++) {
        acc_nccl_choice_t want = model_choice(ACC_COLL_ALLREDUCE, sizes[i]);
        int algo, proto,
            ch = call(get, ctx, ncclFuncAllReduce, ACC_COLL_ALLREDUCE, sizes[i], &algo, &proto);
        printf("allreduce %llu bytes: NCCL runs %s/%s on %d channels\n",
               (unsigned long long)sizes[i], acc_nccl_algo_name(algo), acc_nccl_proto_name(proto),
               ch);
        CHECK_INT(algo, want.algo);
        CHECK_INT(proto, want.proto);
        CHECK_INT(ch, want.nchannels);
    }
}

ACC_TEST(v5_serves_the_tables_choice_at_8k_1m_256m)
{
    const ncclTuner_v5_t *t;
    void *ctx;
    int algo, proto;

    build_h100_db("tuner_v5.db");
    t = v5();
    ctx = init5(t, 8, 1);
    CHECK_INT(log_levels[0], NCCL_LOG_INFO);
    CHECK(strstr(log_lines[0], "acc tuner: 8 ranks on 1 node: NCCL's choices of dgx-h100") != NULL);
    CHECK(strstr(log_lines[0], "allgather") && strstr(log_lines[0], "allreduce"));
    check_h100_sizes(t->getCollInfo, ctx);
    /* What a user checks on a DGX-H100 (reference/02-nccl.md §2): LL on rings for small sizes,
     * NVLS for large ones. */
    call(t->getCollInfo, ctx, ncclFuncAllReduce, ACC_COLL_ALLREDUCE, 8u << 10, &algo, &proto);
    CHECK(algo == ACC_NCCL_ALGO_RING && proto == ACC_NCCL_PROTO_LL);
    call(t->getCollInfo, ctx, ncclFuncAllReduce, ACC_COLL_ALLREDUCE, 256u << 20, &algo, &proto);
    CHECK(algo == ACC_NCCL_ALGO_NVLS && proto == ACC_NCCL_PROTO_SIMPLE);
    /* Sizes outside the table's ranges and collectives without one: NCCL's own. */
    check_untouched(t->getCollInfo, ctx, ncclFuncAllReduce, ACC_COLL_ALLREDUCE, 100);
    check_untouched(t->getCollInfo, ctx, ncclFuncBroadcast, ACC_COLL_BROADCAST, 1u << 20);
    CHECK_INT(t->finalize(ctx), ncclSuccess);
    done_machine();
}

/* NCCL 2.30 to 2.32 take v6 first: the same choices, and NCCL's own chunk size (the database
 * holds none, so the entry NCCL asks is absent and NCCL keeps its own). */
ACC_TEST(v6_serves_the_same_choices_and_keeps_nccls_chunk_size)
{
    const ncclTuner_v6_t *t;
    ncclNvlDomainInfo_v6_t nvl = {1, 8, 8};
    ncclTunerConstants_v6_t k;
    void *ctx = NULL;

    build_h100_db("tuner_v6.db");
    t = v6();
    CHECK(t->getChunkSize == NULL);
    memset(&k, 0, sizeof(k));
    CHECK_INT(t->init(&ctx, 0x1234abcdull, 8, 1, logger, &nvl, &k), ncclSuccess);
    CHECK_INT(nlog, 1);
    CHECK(strstr(log_lines[0], "acc tuner: 8 ranks on 1 node: NCCL's choices of dgx-h100") != NULL);
    check_h100_sizes(t->getCollInfo, ctx);
    CHECK_INT(t->finalize(ctx), ncclSuccess);
    done_machine();
}

/* NCCL's source after 2.30.7 takes v7 first: the same choices, NCCL's chunk size, and the
 * constants - Rubin's row, which v7 adds, included - as NCCL filled them. */
ACC_TEST(v7_serves_the_same_choices_and_leaves_rubins_constants)
{
    const ncclTuner_v7_t *t;
    ncclNvlDomainInfo_v7_t nvl = {1, 8, 8};
    ncclTunerConstants_v7_t k, before;
    void *ctx = NULL;

    build_h100_db("tuner_v7.db");
    t = dlsym(plugin(), "ncclTunerPlugin_v7");
    CHECK(t != NULL);
    CHECK_STR(t->name, "acc");
    CHECK(t->getChunkSize == NULL);
    memset(&k, 0, sizeof(k));
    k.baseLatencies[1][2] = 8.4;
    k.llMaxBws[NCCL_NUM_COMPCAPS_V7 - 1][2] = 41.5;
    k.perChMaxNVLSTreeBws[NCCL_NUM_COMPCAPS_V7 - 1][1] = 57.7;
    before = k;
    CHECK_INT(t->init(&ctx, 0x1234abcdull, 8, 1, logger, &nvl, &k), ncclSuccess);
    CHECK(memcmp(&k, &before, sizeof(k)) == 0);
    CHECK_INT(nlog, 1);
    CHECK(strstr(log_lines[0], "acc tuner: 8 ranks on 1 node: NCCL's choices of dgx-h100") != NULL);
    check_h100_sizes(t->getCollInfo, ctx);
    check_untouched(t->getCollInfo, ctx, ncclFuncAllReduce, ACC_COLL_ALLREDUCE, 100);
    CHECK_INT(t->finalize(ctx), ncclSuccess);
    done_machine();
}

ACC_TEST(v4_serves_the_same_choices)
{
    const ncclTuner_v4_t *t;
    void *ctx = NULL;

    build_h100_db("tuner_v4.db");
    t = dlsym(plugin(), "ncclTunerPlugin_v4");
    CHECK(t != NULL);
    CHECK_STR(t->name, "acc");
    CHECK_INT(t->init(8, 1, logger, &ctx), ncclSuccess);
    CHECK_INT(nlog, 1);
    check_h100_sizes(t->getCollInfo, ctx);
    CHECK_INT(t->destroy(ctx), ncclSuccess);
    done_machine();
}

/* An entry NCCL will not run (NCCL_ALGO=^NVLS, say) is never revived: the plugin leaves the
 * whole table and the channels alone, and NCCL's own choice stands. */
ACC_TEST(ignored_entries_stay_ignored)
{
    const ncclTuner_v5_t *t;
    float table[NA][NP], before[NA][NP];
    void *ctx;
    int nchannels = 0;

    build_h100_db("tuner_ignore.db");
    t = v5();
    ctx = init5(t, 8, 1);
    nccl_table(ACC_COLL_ALLREDUCE, 256u << 20, table);
    table[ACC_NCCL_ALGO_NVLS][ACC_NCCL_PROTO_SIMPLE] = NCCL_ALGO_PROTO_IGNORE;
    memcpy(before, table, sizeof(table));
    CHECK_INT(t->getCollInfo(ctx, ncclFuncAllReduce, 256u << 20, 1, (float **)table, NA, NP, 0,
                             &nchannels),
              ncclSuccess);
    CHECK(memcmp(table, before, sizeof(table)) == 0);
    CHECK_INT(nchannels, 0);
    CHECK_INT(t->finalize(ctx), ncclSuccess);
    done_machine();
}

/* Allgather's nBytes is the whole output (ranks x count x size): the plugin must look that up,
 * not the per-rank part.  The case picks a per-rank size whose choice differs from the whole
 * buffer's, so that a lookup of the wrong one shows. */
ACC_TEST(allgather_is_looked_up_by_the_whole_buffer)
{
    const ncclTuner_v5_t *t;
    void *ctx;
    uint64_t part = 0;
    int algo, proto;

    build_h100_db("tuner_allgather.db");
    for (uint64_t s = 1024; s <= (64u << 20) && !part; s <<= 1) {
        acc_nccl_choice_t a = model_choice(ACC_COLL_ALLGATHER, s);
        acc_nccl_choice_t b = model_choice(ACC_COLL_ALLGATHER, 8 * s);
        if (a.algo != b.algo || a.proto != b.proto)
            part = s;
    }
    CHECK_MSG(part != 0, "no size where allgather's choice differs between part and whole");
    t = v5();
    ctx = init5(t, 8, 1);
    call(t->getCollInfo, ctx, ncclFuncAllGather, ACC_COLL_ALLGATHER, 8 * part, &algo, &proto);
    printf("allgather of %llu bytes per rank: NCCL runs %s/%s\n", (unsigned long long)part,
           acc_nccl_algo_name(algo), acc_nccl_proto_name(proto));
    CHECK_INT(algo, model_choice(ACC_COLL_ALLGATHER, 8 * part).algo);
    CHECK_INT(proto, model_choice(ACC_COLL_ALLGATHER, 8 * part).proto);
    CHECK_INT(t->finalize(ctx), ncclSuccess);
    done_machine();
}

/* Without a database: init succeeds (an error would fail NCCL's communicator), NCCL's log gets
 * one warning naming what is missing, and every call leaves NCCL's table alone. */
ACC_TEST(missing_database_changes_nothing)
{
    const ncclTuner_v5_t *t;
    float table[NA][NP], before[NA][NP];
    void *ctx;
    int nchannels = 0;

    build_h100_db("tuner_unused.db");
    setenv("ACC_DB", "/nonexistent/acc.db", 1);
    t = v5();
    ctx = init5(t, 8, 1);
    CHECK_INT(log_levels[0], NCCL_LOG_WARN);
    CHECK(strstr(log_lines[0], "every choice stays NCCL's") != NULL);
    CHECK(strstr(log_lines[0], "/nonexistent/acc.db") != NULL);
    nccl_table(ACC_COLL_ALLREDUCE, 1u << 20, table);
    memcpy(before, table, sizeof(table));
    CHECK_INT(
        t->getCollInfo(ctx, ncclFuncAllReduce, 1u << 20, 1, (float **)table, NA, NP, 0, &nchannels),
        ncclSuccess);
    CHECK(memcmp(table, before, sizeof(table)) == 0);
    CHECK_INT(nchannels, 0);
    CHECK_INT(t->finalize(ctx), ncclSuccess);
    /* A second communicator of the process: the same, one line again. */
    ctx = init5(t, 8, 1);
    CHECK_INT(nlog, 2);
    CHECK_INT(t->finalize(ctx), ncclSuccess);
    done_machine();
}

/* Each communicator has its own context: one over the whole node gets the table, one over half
 * of it (no table for that shape) changes nothing and says why, in one line. */
ACC_TEST(contexts_are_per_communicator)
{
    const ncclTuner_v5_t *t;
    void *whole, *half;
    int algo, proto;

    build_h100_db("tuner_two.db");
    t = v5();
    whole = init5(t, 8, 1);
    half = init5(t, 4, 1);
    CHECK_INT(log_levels[1], NCCL_LOG_INFO);
    CHECK(strstr(log_lines[1], "4 ranks on 1 node: every choice stays NCCL's") != NULL);
    CHECK(strstr(log_lines[1], "8 GPUs per node") != NULL);
    check_untouched(t->getCollInfo, half, ncclFuncAllReduce, ACC_COLL_ALLREDUCE, 8u << 10);
    call(t->getCollInfo, whole, ncclFuncAllReduce, ACC_COLL_ALLREDUCE, 8u << 10, &algo, &proto);
    CHECK_INT(algo, model_choice(ACC_COLL_ALLREDUCE, 8u << 10).algo);
    CHECK_INT(proto, model_choice(ACC_COLL_ALLREDUCE, 8u << 10).proto);
    CHECK_INT(t->finalize(half), ncclSuccess);
    CHECK_INT(t->finalize(whole), ncclSuccess);
    done_machine();
}

/* A job on two DGX-H100 nodes whose machine is described per node (what live discovery sees):
 * the plugin finds the two-node tables the image build made for that node type. */
ACC_TEST(two_nodes_find_the_tables_of_their_node_type)
{
    const ncclTuner_v5_t *t;
    acc_topo_t *node = NULL, *two = NULL;
    void *ctx;

    CHECK_OK(acc_topo_load("dgx-h100", &node));
    CHECK_OK(acc_topo_with_network(node, "nodes=2", &two));
    use_machine(two);
    /* One collective and sizes up to 256 MiB keep the two-node sweep short. */
    build_db("tuner_two_nodes.db", two, "dgx-h100", 1, 256u << 20);
    t = v5();
    ctx = init5(t, 16, 2);
    CHECK(strstr(log_lines[0], "16 ranks on 2 nodes: NCCL's choices of dgx-h100") != NULL);
    for (uint64_t s = 8u << 10; s <= (256u << 20); s <<= 5) {
        acc_nccl_choice_t want = model_choice(ACC_COLL_ALLREDUCE, s);
        int algo, proto,
            ch = call(t->getCollInfo, ctx, ncclFuncAllReduce, ACC_COLL_ALLREDUCE, s, &algo, &proto);
        printf("2 nodes, allreduce %llu bytes: NCCL runs %s/%s on %d channels\n",
               (unsigned long long)s, acc_nccl_algo_name(algo), acc_nccl_proto_name(proto), ch);
        CHECK_INT(algo, want.algo);
        CHECK_INT(proto, want.proto);
        CHECK_INT(ch, want.nchannels);
    }
    CHECK_INT(t->finalize(ctx), ncclSuccess);
    done_machine();
    acc_topo_destroy(node);
}

/* What NCCL looks for, and nothing else: acc inside the plugin stays its own. */
ACC_TEST(exports_the_plugin_symbols_only)
{
    char names[16][NM_NAME_MAX];
    size_t n = nm_exported(ACC_NCCL_TUNER_PLUGIN, names, 16);
    for (size_t i = 0; i < n; i++)
        printf("exported: %s\n", names[i]);
    CHECK_INT(n, 4);
    CHECK_STR(names[0], "ncclTunerPlugin_v4");
    CHECK_STR(names[1], "ncclTunerPlugin_v5");
    CHECK_STR(names[2], "ncclTunerPlugin_v6");
    CHECK_STR(names[3], "ncclTunerPlugin_v7");
}
