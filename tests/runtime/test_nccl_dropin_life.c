/*
 * The drop-in NCCL over a communicator's life, in front of the stand-in NCCL (NCCL's API over
 * the host backend): acc joins at the first call its tables give it and never before (a join
 * is one broadcast of acc's id through NCCL, which the stand-in records); a rank that fails at
 * the join sends every rank to NCCL within ACC_TIMEOUT_MS; ncclCommAbort returns at once
 * whatever hangs, in NCCL or in acc; revoke, a shrink that aborts and suspend switch acc off;
 * and NCCL's own calls of its API pass through the drop-in untouched.
 */
#include "dropin_util.h"

#include <pthread.h>

/* ---- joining ------------------------------------------------------------------------------- */

static int join_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    ncclComm_t c = init(rank), pairs;
    call_t small = {ACC_COLL_ALLREDUCE, 64, 0, 41, NULL, NULL}; /* below the table: NCCL's */
    call_t big = {ACC_COLL_ALLREDUCE, 4096, 1, 42, NULL, NULL}; /* acc's */
    (void)nranks;
    (void)unused;
    (void)arg;
    CHECK(table_says_nccl(ACC_COLL_ALLREDUCE, 64 * 4) &&
          !table_says_nccl(ACC_COLL_ALLREDUCE, 4096 * 4));
    CHECK_INT(joins(rank), 0); /* made: nothing of acc's yet */
    call_ok(small, c, rank);
    CHECK_INT(joins(rank), 0);
    /* A communicator whose calls are all NCCL's never pays. */
    pairs = init_comm(1, rank, DROPIN_NRANKS);
    for (int i = 0; i < 3; i++)
        call_ok(small, pairs, rank);
    CHECK_INT(api.CommDestroy(pairs), ncclSuccess);
    CHECK_INT(joins(rank), 0);
    /* The first call the table gives acc joins, once; acc runs it and the next ones. */
    call_ok(big, c, rank);
    call_ok(big, c, rank);
    CHECK_INT(joins(rank), 1);
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, big.count), 0);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    CHECK_INT(lines(rank, "log", "acc WARN"), 0);
    return 0;
}

ACC_TEST(joins_at_the_first_call_the_table_gives_acc_and_never_before)
{
    run_case("join", join_rank);
}

/* Rank 2 cannot make acc's communicator (ACC_BACKEND=cuda there, and no GPU driver on this
 * machine; an invalid value would only turn acc's tables off, on every rank alike): it takes part
 * in the broadcast of acc's id and fails in set-up, which every rank then fails with it.  Every
 * rank runs the call through NCCL, exactly, and says why. */
static int join_fail_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    ncclComm_t c;
    call_t big = {ACC_COLL_ALLREDUCE, 4096, 0, 43, NULL, NULL};
    (void)nranks;
    (void)unused;
    (void)arg;
    if (rank == 2)
        setenv("ACC_BACKEND", "cuda", 1);
    c = init(rank);
    call_ok(big, c, rank);
    call_ok(big, c, rank);
    CHECK_INT(joins(rank), 1);
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, big.count), 2);
    CHECK_INT(lines(rank, "log",
                    "acc could not join a communicator of 4 ranks, so NCCL runs all "
                    "its calls"),
              1);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    return 0;
}

ACC_TEST(a_rank_failing_at_the_join_sends_every_rank_to_nccl)
{
    setenv("ACC_TIMEOUT_MS", "2000", 1);
    run_case("join_fail", join_fail_rank);
}

/* ---- abort -------------------------------------------------------------------------------- */

/* How long an abort may take: at once, and under the sanitizers (which slow everything and
 * whose timing is not asserted) anything short of the hang it must not be. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ABORT_SECONDS 30.0
#else
#define ABORT_SECONDS 1.0
#endif

typedef struct {
    ncclComm_t comm;
    size_t count;
    float *buf;
    ncclResult_t rc;
} hung_t;

static void *hung_call(void *arg)
{
    hung_t *h = arg;
    h->rc = api.AllReduce(h->buf, h->buf, h->count, ncclFloat32, ncclSum, h->comm, NULL);
    return NULL;
}

/* A call that does not complete on a thread of its own; abort from this one after it has
 * started (in NCCL: once the stand-in says it hangs; in acc: after a while); the abort returns
 * at once and so does the call, with an error. */
static void abort_during(ncclComm_t c, size_t count, int rank, int in_nccl)
{
    hung_t h = {c, count, calloc(count, sizeof(float)), ncclSuccess};
    char hung[64];
    pthread_t t;
    double t0, took;
    CHECK(h.buf != NULL);
    snprintf(hung, sizeof(hung), "hung count=%zu", count);
    CHECK(pthread_create(&t, NULL, hung_call, &h) == 0);
    if (in_nccl)
        while (lines(rank, "nccl", hung) == 0)
            usleep(10000);
    else
        usleep(300000);
    t0 = acc_now_s();
    CHECK_INT(api.CommAbort(c), ncclSuccess);
    took = since(t0);
    printf("rank %d: ncclCommAbort returned after %.3f s\n", rank, took);
    CHECK_MSG(took < ABORT_SECONDS, "ncclCommAbort took %.3f s", took);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(h.rc != ncclSuccess);
    free(h.buf);
}

/* acc off: NCCL's collective hangs (a kernel waiting for a peer); one rank is enough. */
ACC_TEST(abort_returns_at_once_with_acc_off)
{
    ncclUniqueId id;
    ncclComm_t c = NULL;
    env("abort_off", "/nonexistent/acc.db");
    setenv("FAKE_NCCL_HANG_COUNT", "100", 1);
    load_api();
    rank_logs(0);
    CHECK_INT(api.GetUniqueId(&id), ncclSuccess);
    CHECK_INT(api.CommInitRank(&c, 1, id, 0), ncclSuccess);
    abort_during(c, 100, 0, 1);
    CHECK_INT(lines(0, "nccl", "hung call ended by abort"), 1);
}

/* acc on: after the join, rank 0's call of acc's hangs in acc (ranks 1-3 never make it), and on
 * the next communicator one of NCCL's hangs in NCCL; each abort returns at once. */
static int abort_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    ncclComm_t c = init(rank), c2;
    call_t big = {ACC_COLL_ALLREDUCE, 4096, 0, 44, NULL, NULL};
    (void)nranks;
    (void)unused;
    (void)arg;
    call_ok(big, c, rank); /* joined */
    CHECK_INT(joins(rank), 1);
    if (rank == 0)
        abort_during(c, 4096, rank, 0); /* acc's size: in acc, for peers that never come */
    else
        CHECK_INT(api.CommAbort(c), ncclSuccess);
    c2 = init_comm(1, rank, DROPIN_NRANKS);
    call_ok(big, c2, rank);
    CHECK_INT(joins(rank), 2);
    abort_during(c2, 100, rank, 1); /* NCCL's size, hung in NCCL on every rank */
    return 0;
}

ACC_TEST(abort_returns_at_once_with_acc_on)
{
    setenv("FAKE_NCCL_HANG_COUNT", "100", 1);
    run_case("abort_on", abort_rank);
}

/* ---- revoke, shrink, suspend ------------------------------------------------------------ */

static ncclComm_t joined(int which, int rank, const call_t *big)
{
    ncclComm_t c = init_comm(which, rank, DROPIN_NRANKS);
    call_ok(*big, c, rank);
    return c;
}

static int off_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    call_t big = {ACC_COLL_ALLREDUCE, 4096, 0, 45, NULL, NULL};
    ncclComm_t c, shrunk = NULL;
    int calls;
    (void)nranks;
    (void)unused;
    (void)arg;
    rank_logs(rank);
    /* Revoke: acc stops, NCCL runs the next call of acc's size. */
    c = joined(0, rank, &big);
    calls = nccl_calls(rank, ACC_COLL_ALLREDUCE, big.count);
    CHECK_INT(api.CommRevoke(c, 0), ncclSuccess);
    call_ok(big, c, rank);
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, big.count), calls + 1);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    /* A shrink that keeps the parent's work: acc stays (the stand-in cannot shrink). */
    c = joined(1, rank, &big);
    calls = nccl_calls(rank, ACC_COLL_ALLREDUCE, big.count);
    CHECK_INT(api.CommShrink(c, NULL, 0, &shrunk, NULL, 0), ncclInvalidUsage);
    call_ok(big, c, rank);
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, big.count), calls);
    /* One that aborts it: acc's part stops with NCCL's. */
    CHECK_INT(api.CommShrink(c, NULL, 0, &shrunk, NULL, NCCL_SHRINK_ABORT), ncclInvalidUsage);
    call_ok(big, c, rank);
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, big.count), calls + 1);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    /* Suspend: acc gives its part back; NCCL runs every call from then on. */
    c = joined(2, rank, &big);
    calls = nccl_calls(rank, ACC_COLL_ALLREDUCE, big.count);
    CHECK_INT(api.CommSuspend(c, NCCL_SUSPEND_MEM), ncclSuccess);
    CHECK_INT(api.CommResume(c), ncclSuccess);
    call_ok(big, c, rank);
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, big.count), calls + 1);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    CHECK_INT(joins(rank), 3);
    CHECK_INT(lines(rank, "log", "acc WARN"), 0);
    return 0;
}

ACC_TEST(revoke_a_shrink_that_aborts_and_suspend_switch_acc_off)
{
    run_case("off", off_rank);
}

/* ---- NCCL's own calls -------------------------------------------------------------------- */

/* A broadcast NCCL makes itself (stand_in_internal_broadcast: NCCL's code calling its API)
 * reaches NCCL even at a size acc serves and on a communicator acc has joined, while the job's
 * own broadcast of that size is acc's; NCCL's ncclBcast, made of its own ncclBroadcast, reaches
 * NCCL once.  */
static int internal_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    ncclResult_t (*internal_broadcast)(void *, size_t, int, ncclComm_t);
    call_t big = {ACC_COLL_ALLREDUCE, 4096, 0, 46, NULL, NULL};
    ncclComm_t c = init(rank);
    void *nccl = dlopen(ACC_STAND_IN_NCCL, RTLD_NOW | RTLD_NOLOAD);
    float x[1024];
    (void)nranks;
    (void)unused;
    (void)arg;
    CHECK(nccl != NULL);
    *(void **)&internal_broadcast = dlsym(nccl, "stand_in_internal_broadcast");
    CHECK(internal_broadcast != NULL);
    CHECK(!table_says_nccl(ACC_COLL_BROADCAST, sizeof(x)));
    call_ok(big, c, rank); /* joined */
    for (int i = 0; i < 1024; i++)
        x[i] = rank == 0 ? (float)i : -1.0f;
    CHECK_INT(api.Broadcast(x, x, 1024, ncclFloat32, 0, c, NULL), ncclSuccess);
    CHECK(x[1023] == 1023.0f);
    CHECK_INT(nccl_calls(rank, ACC_COLL_BROADCAST, 1024), 0); /* the job's: acc's */
    for (int i = 0; i < 1024; i++)
        x[i] = rank == 0 ? (float)(2 * i) : -1.0f;
    CHECK_INT(internal_broadcast(x, 1024, ncclFloat32, c), ncclSuccess);
    CHECK(x[1023] == 2046.0f);
    CHECK_INT(nccl_calls(rank, ACC_COLL_BROADCAST, 1024), 1); /* NCCL's: NCCL's */
    CHECK_INT(api.Bcast(x, 16, ncclFloat32, 0, c, NULL), ncclSuccess);
    CHECK_INT(lines(rank, "nccl", "ncclBcast count=16 "), 1);
    CHECK_INT(nccl_calls(rank, ACC_COLL_BROADCAST, 16), 1);
    dlclose(nccl);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    return 0;
}

ACC_TEST(nccls_own_calls_pass_straight_through)
{
    run_case("internal", internal_rank);
}
