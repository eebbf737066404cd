/*
 * The drop-in NCCL (libacc-nccl.so) in front of the tests' stand-in NCCL (NCCL's API over the
 * host backend, recording every call it receives), the way a job reaches it: NCCL's API only.
 * Ranks on "gpus=4 nvlink=18" (8 for the split groups) with the image build's database: each
 * size goes where the table says (calls of acc's ranges never reach NCCL, the others do),
 * results right; groups are decided per communicator, alike on every rank, whatever else a
 * rank's group holds; a straggler that breaks acc's communicator sends that call and every
 * later one to NCCL with one log line per rank, results still right - in place too, where acc
 * had already written part of the output when it gave up.  Ranks whose settings or databases
 * differ vote at their first call acc could run, and every rank leaves the communicator to
 * NCCL, promptly, instead of waiting in each other's collectives.
 */
#include "dropin_util.h"

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
    return k->count * sizeof(float) * (k->coll == ACC_COLL_ALLGATHER ? DROPIN_NRANKS : 1);
}

static int route_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    ncclComm_t c = init(rank);
    float x[2048], y[2048];
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
    /* The per-call configuration of 2.32: without one, the plain call (acc's at this size);
     * with one, NCCL's, whatever the size. */
    for (int i = 0; i < 2048; i++)
        x[i] = (float)(rank + i % 3);
    CHECK_INT(api.AllReduceConfig(x, y, 2048, ncclFloat32, ncclSum, c, NULL, NULL), ncclSuccess);
    CHECK(y[7] == (float)(0 + 1 + 2 + 3 + 4 * (7 % 3)));
    CHECK_INT(lines(rank, "nccl", "ncclAllReduceConfig"), 0);
    CHECK_INT(
        api.AllReduceConfig(x, y, 2048, ncclFloat32, ncclSum, c, NULL, (const ncclCollConfig_t *)x),
        ncclInvalidUsage); /* the stand-in has no per-call configuration */
    CHECK_INT(lines(rank, "nccl", "ncclAllReduceConfig"), 1);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    CHECK_INT(lines(rank, "log", "acc WARN"), 0);
    return 0;
}

ACC_TEST(routes_each_size_where_the_table_says)
{
    run_case("route", route_rank);
}

/* The same ranks as two nodes, in host memory: acc's host backend runs the plans that cross
 * the nodes, so a size the table gives acc never reaches NCCL - what a GPU job gets instead is
 * test_nccl_stub_cuda's (dropin_util.h). */
ACC_TEST(in_host_memory_a_two_node_tables_acc_ranges_stay_accs)
{
    run_two_nodes_case("two_nodes", env, 0);
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
    CHECK(table_says_nccl(ACC_COLL_ALLGATHER, (4u << 20) * 4 * DROPIN_NRANKS));

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

    /* One call of the communicator NCCL's: all of its calls in the group go to NCCL. */
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
    CHECK_INT(lines(rank, "log", "acc WARN"), 0);
    return 0;
}

ACC_TEST(groups_go_whole_to_acc_or_to_nccl_per_communicator)
{
    run_case("group", group_rank);
}

/* 8 ranks on c, ranks 0-1 also on c2 (2 ranks: no table, NCCL's).  Ranks 0-1 group
 * [allreduce(c), allreduce(c2)], ranks 2-7 group [allreduce(c)]: c's allreduce must run the
 * same way on all eight.  (Decided per group, ranks 0-1 sent it to NCCL and the others to acc:
 * all stalled for ACC_TIMEOUT_MS, and the in-place variant then returned 10 for 8 with
 * success.)  Out of place and in place; exact results, no failure in acc, nothing of c's call
 * at NCCL. */
#define SPLIT_RANKS 8

static int split_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    ncclComm_t c, c2 = NULL;
    const uint64_t *count = arg;
    float small[64];
    (void)unused;
    rank_logs(rank);
    c = init_comm(0, rank, nranks);
    if (rank < 2)
        c2 = init_comm(1, rank, 2);
    for (int inplace = 0; inplace < 2; inplace++) {
        call_t k = {ACC_COLL_ALLREDUCE, *count, inplace, (uint32_t)(31 + inplace), NULL, NULL};
        prepare_n(&k, rank, nranks);
        for (int i = 0; i < 64; i++)
            small[i] = 1.0f;
        CHECK_INT(api.GroupStart(), ncclSuccess);
        CHECK_INT(api.AllReduce(k.in, k.out, k.count, ncclFloat32, ncclSum, c, NULL), ncclSuccess);
        if (c2)
            CHECK_INT(api.AllReduce(small, small, 64, ncclFloat32, ncclSum, c2, NULL), ncclSuccess);
        CHECK_INT(api.GroupEnd(), ncclSuccess);
        finish_n(&k, rank, nranks);
        for (int i = 0; c2 && i < 64; i++)
            CHECK(small[i] == 2.0f);
    }
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, *count), 0);
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, 64), rank < 2 ? 2 : 0);
    CHECK_INT(lines(rank, "log", "acc WARN"), 0);
    CHECK_INT(lines(rank, "log", "acc ERROR"), 0);
    if (c2)
        CHECK_INT(api.CommDestroy(c2), ncclSuccess);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    return 0;
}

ACC_TEST(split_groups_route_a_communicator_alike_on_every_rank)
{
    uint64_t count;
    case_topo = "gpus=8 nvlink=18";
    env("split", db_path("split"));
    /* Long enough that a stall would fail the case's deadline rather than resolve itself. */
    setenv("ACC_TIMEOUT_MS", "100000", 1);
    count = count_of(ACC_COLL_ALLREDUCE, NULL, SPLIT_RANKS);
    CHECK_MSG(count > 0, "the 8-GPU table gives acc no allreduce size");
    load_api();
    run_ranks_n(SPLIT_RANKS, split_rank, &count);
}

/* ---- acc failing at a call ------------------------------------------------------------------ */

/* A straggler beyond acc's timeout breaks an allreduce of algo on every rank, the late one
 * included: twoshot (its peers stop before they send their halves), and recursive halving and
 * doubling, whose first exchanges - between ranks 2 and 3 - reduce into their outputs before
 * the others give up waiting for rank 1. */
typedef struct {
    const char *algo;
    int inplace;
} straggler_t;

static int straggler_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    const straggler_t *how = arg;
    ncclComm_t c = init(rank);
    uint64_t count = count_of(ACC_COLL_ALLREDUCE, how->algo, DROPIN_NRANKS);
    int inplace = how->inplace;
    call_t first = {ACC_COLL_ALLREDUCE, count, 0, 21, NULL, NULL};
    call_t broken = {ACC_COLL_ALLREDUCE, count, inplace, 22, NULL, NULL};
    call_t later = {ACC_COLL_ALLREDUCE, count, 1, 23, NULL, NULL};
    ncclResult_t async = ncclInternalError;
    (void)nranks;
    (void)unused;

    CHECK_MSG(count != 0, "the table has no %s allreduce range", how->algo);
    call_ok(first, c, rank); /* acc's, and every rank is past it */
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, count), 0);
    if (rank == 1)
        sleep(7); /* far beyond ACC_TIMEOUT_MS: the others give up inside acc */
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
    straggler_t how = {"twoshot", 0};
    env("straggler", db_path("straggler"));
    setenv("ACC_TIMEOUT_MS", "2000", 1); /* the loaded machines of CI too */
    load_api();
    run_ranks_n(DROPIN_NRANKS, straggler_rank, &how);
}

/* The same failure in place: acc has reduced part of the buffer when it gives up (ranks 2 and 3
 * hold 2+3's partial sums), and NCCL must reduce the job's input, not that - the result is
 * exact on every element.  (This is how an in-place all-reduce once returned 10 for 8 with
 * success.) */
ACC_TEST(an_in_place_call_acc_gave_up_on_gets_nccls_exact_result)
{
    straggler_t how = {"rhd", 1};
    env("straggler_inplace", db_path("straggler_inplace"));
    setenv("ACC_TIMEOUT_MS", "2000", 1); /* the loaded machines of CI too */
    load_api();
    run_ranks_n(DROPIN_NRANKS, straggler_rank, &how);
}

/* ---- ranks that disagree ------------------------------------------------------------------- */

/* Rank 2 runs with ACC_DISABLE=1 ("disable") or reads the database of another machine of four
 * ranks ("otherdb"), the others the image build's: the ranks vote at the communicator's first
 * call acc could run (one all-reduce of four int32 minima), find that their tables differ, and
 * every call goes to NCCL - exact, with no join and nothing waiting; rank 0 says why, once. */
static char other_db[512];

static int disagree_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    const char *how = arg;
    call_t k = {ACC_COLL_ALLREDUCE, 2048, 0, 41, NULL, NULL}; /* acc's, by the case's table */
    ncclComm_t c;
    double t0;
    (void)nranks;
    (void)unused;
    CHECK(!table_says_nccl(k.coll, k.count * 4));
    if (rank == 2 && !strcmp(how, "disable"))
        setenv("ACC_DISABLE", "1", 1);
    else if (rank == 2)
        setenv("ACC_DB", other_db, 1);
    c = init(rank);
    t0 = acc_now_s();
    for (int i = 0; i < 3; i++)
        call_ok(k, c, rank);
    CHECK_FAST(since(t0) < 5.0, "rank %d: three calls took %.1f s", rank, since(t0));
    CHECK_INT(joins(rank), 0);
    CHECK_INT(nccl_calls(rank, k.coll, k.count), 3);
    CHECK_INT(lines(rank, "nccl", "ncclAllReduce count=4 type=2 op=3"), 1);
    CHECK_INT(lines(rank, "log", "the ranks' tables differ"), rank == 0 ? 1 : 0);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    return 0;
}

ACC_TEST(ranks_with_acc_disabled_on_one_leave_the_communicator_to_nccl_together)
{
    run_ranks_n_case("disable", disagree_rank, "disable");
}

ACC_TEST(ranks_reading_another_database_leave_the_communicator_to_nccl_together)
{
    case_topo = "gpus=4";
    snprintf(other_db, sizeof(other_db), "%s", db_path("otherdb_pcie"));
    case_topo = DROPIN_TOPO;
    run_ranks_n_case("otherdb", disagree_rank, "otherdb");
}
