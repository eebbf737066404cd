/*
 * Faults: a rank killed with SIGKILL in the middle of a collective makes every other rank's
 * call fail within a second (long before ACC_TIMEOUT_MS), naming the rank that died and the
 * step it waited for, and never hang; acc_comm_abort ends a call in flight on another thread, and
 * is safe while calls start on others; a communicator closed by abort or destroy refuses calls; a
 * set-up that times out breaks the communicator, which says so.
 */
#include "comm_util.h"
#include "ranks.h"

#include <pthread.h>

#define TIMEOUT_MS 2000
/* Far longer than a dead peer may take to be named. */
#define KILL_TIMEOUT_MS "10000"

static int survive_a_kill(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c;
    uint64_t count = (8u << 20) / 4;
    float *buf = malloc(count * sizeof(float));
    acc_status_t st = ACC_OK, err;
    double t0 = 0;
    int calls = 0;
    (void)arg;
    CHECK(buf);
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    for (uint64_t i = 0; i < count; i++)
        buf[i] = 1.0f;
    /* Rank 1 is killed by the parent during this loop, once it has finished a call (so that
     * the plan's set-up is behind every rank: slow builds, such as ThreadSanitizer's, take
     * long over it); the others must see it fail. */
    while (st == ACC_OK) {
        t0 = acc_now_s();
        st = acc_allreduce(buf, buf, count, ACC_DT_F32, ACC_RED_MAX, c, NULL);
        calls++;
        if (rank == 1 && calls == 2) {
            FILE *f = fopen(acc_test_tmp("rank1_calls"), "w");
            CHECK(f);
            fclose(f);
        }
        CHECK_MSG(calls < 100000, "rank %d: no call failed", rank);
    }
    printf("rank %d: call %d failed after %.0f ms: %s\n", rank, calls, (acc_now_s() - t0) * 1e3,
           acc_error_message());
    CHECK_INT(st, ACC_ERR_TIMEOUT);
    /* Every rank names the one that died, not its own upstream neighbour in the ring, and the
     * step it waited for. */
    CHECK_MSG_HAS("rank 1 has exited");
    CHECK_MSG_HAS("waited for");
    /* Within a second of the death, which the parent wrote down (the monotonic clock is the
     * machine's) just before it killed rank 1. */
    {
        double killed_at = 0;
        FILE *f = fopen(acc_test_tmp("rank1_killed_at"), "r");
        CHECK(f && fscanf(f, "%lf", &killed_at) == 1);
        fclose(f);
        CHECK_FAST(acc_now_s() - killed_at < 1.0, "rank %d: failed %.2f s after rank 1 was killed",
                   rank, acc_now_s() - killed_at);
    }
    CHECK_OK(acc_comm_get_async_error(c, &err));
    CHECK_INT(err, ACC_ERR_TIMEOUT);
    /* A broken communicator refuses new calls at once. */
    t0 = acc_now_s();
    CHECK_ERR(acc_allreduce(buf, buf, 16, ACC_DT_F32, ACC_RED_SUM, c, NULL), ACC_ERR_TIMEOUT);
    CHECK_MSG_HAS("broken");
    CHECK_FAST(acc_now_s() - t0 < 0.5, "a broken communicator took %.1f s to refuse a call",
               acc_now_s() - t0);
    CHECK_OK(acc_comm_abort(c));
    free(buf);
    /* Stay alive while the other survivors look for the rank that died: a survivor that has
     * exited is gone too. */
    usleep(1500000);
    return 0;
}

ACC_TEST(sigkill_of_a_rank_fails_the_others_within_a_second)
{
    ranks_t rs;
    int bad;
    comm_env("gpus=4", KILL_TIMEOUT_MS);
    unlink(acc_test_tmp("rank1_calls"));
    unlink(acc_test_tmp("rank1_killed_at"));
    ranks_start(&rs, 4, survive_a_kill, NULL);
    for (int i = 0; i < 6000 && access(acc_test_tmp("rank1_calls"), F_OK) != 0; i++)
        usleep(10000);
    usleep(100000);
    {
        FILE *f = fopen(acc_test_tmp("rank1_killed_at"), "w");
        CHECK(f);
        fprintf(f, "%.9f\n", acc_now_s());
        fclose(f);
    }
    kill(rs.pid[1], SIGKILL);
    bad = ranks_wait(&rs, 60);
    CHECK_INT(rs.status[1], 128 + SIGKILL);
    CHECK_INT(rs.status[0], 0);
    CHECK_INT(rs.status[2], 0);
    CHECK_INT(rs.status[3], 0);
    CHECK_INT(bad, 1);
}

typedef struct {
    acc_comm_t *c;
    double delay_s;
} aborter_t;

static void *abort_later(void *arg)
{
    aborter_t *a = arg;
    usleep((useconds_t)(a->delay_s * 1e6));
    acc_comm_abort(a->c);
    return NULL;
}

static int abort_in_flight(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c;
    float x[64] = {0};
    (void)arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    if (rank == 0) {
        /* Rank 1 never joins this call; another thread aborts it. */
        aborter_t a = {c, 0.3};
        pthread_t t;
        double t0 = acc_now_s();
        CHECK(pthread_create(&t, NULL, abort_later, &a) == 0);
        CHECK_ERR(acc_allreduce(x, x, 64, ACC_DT_F32, ACC_RED_SUM, c, NULL), ACC_ERR_ABORTED);
        pthread_join(t, NULL);
        CHECK_FAST(acc_now_s() - t0 < 2.0, "abort took %.1f s", acc_now_s() - t0);
    } else {
        usleep(1500000);
        CHECK_OK(acc_comm_abort(c));
    }
    return 0;
}

ACC_TEST(abort_ends_a_call_in_flight)
{
    comm_env("gpus=2", "30000");
    ranks_run(2, abort_in_flight, NULL, 60);
}

/* ---- abort while calls start ------------------------------------------------------------- */

#define STRESS_ROUNDS  12
#define STRESS_THREADS 3

typedef struct {
    acc_comm_t *c;
    int rank, stop;
    unsigned calls, ok;
} hammer_t;

/* Calls, one after another, until told to stop: every one must return (an error once the
 * communicator is aborted), never crash. */
static void *hammer(void *arg)
{
    hammer_t *h = arg;
    float x[256];
    acc_status_t err;
    for (unsigned i = 0; !__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE); i++) {
        acc_status_t st;
        for (int e = 0; e < 256; e++)
            x[e] = 1.0f;
        switch (i % 4) {
        case 0:
            st = acc_allreduce(x, x, 1 + i % 256, ACC_DT_F32, ACC_RED_SUM, h->c, NULL);
            break;
        case 1:
            st = acc_broadcast(x, x, 64, ACC_DT_F32, 0, h->c, NULL);
            break;
        case 2:
            st = acc_comm_get_async_error(h->c, &err);
            break;
        default:
            st = acc_comm_rank(h->c) == h->rank ? ACC_OK : ACC_ERR_ABORTED;
            break;
        }
        __atomic_add_fetch(&h->calls, 1, __ATOMIC_RELAXED);
        if (st == ACC_OK)
            __atomic_add_fetch(&h->ok, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* Each round: a duplicate, three threads calling on it (several threads on one communicator
 * is misuse, but it must not crash either), and an abort from this thread after a random
 * delay, while calls keep starting.  After it, every call fails at once, naming the abort. */
static int abort_while_calls_start(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c;
    uint32_t seed = 0x9e3779b9u * (uint32_t)(rank + 1);
    (void)arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    for (int round = 0; round < STRESS_ROUNDS; round++) {
        hammer_t h[STRESS_THREADS];
        pthread_t t[STRESS_THREADS];
        acc_comm_t *d;
        float x[4] = {0};
        CHECK_OK(acc_comm_dup(c, &d));
        for (int i = 0; i < STRESS_THREADS; i++) {
            h[i] = (hammer_t){.c = d, .rank = rank};
            CHECK(pthread_create(&t[i], NULL, hammer, &h[i]) == 0);
        }
        seed = seed * 1664525u + 1013904223u;
        usleep(seed % 20000);
        CHECK_OK(acc_comm_abort(d));
        /* Calls keep starting on the aborted communicator for a while. */
        usleep(5000);
        for (int i = 0; i < STRESS_THREADS; i++) {
            __atomic_store_n(&h[i].stop, 1, __ATOMIC_RELEASE);
            pthread_join(t[i], NULL);
        }
        CHECK_ERR(acc_allreduce(x, x, 4, ACC_DT_F32, ACC_RED_SUM, d, NULL), ACC_ERR_ABORTED);
        CHECK_MSG_HAS("was aborted");
        CHECK_ERR(acc_comm_abort(d), ACC_ERR_INVALID);
        CHECK_ERR(acc_comm_destroy(d), ACC_ERR_INVALID);
        CHECK_INT(acc_comm_rank(d), -1);
        if (rank == 0 && round == 0)
            printf("round 0: %u calls, %u of them before the abort\n", h[0].calls, h[0].ok);
    }
    /* The parent communicator saw none of it. */
    {
        call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 4096, 1, 0, 3};
        call_ok(c, &k);
    }
    CHECK_OK(acc_comm_destroy(c));
    {
        float x[4] = {0};
        CHECK_ERR(acc_allreduce(x, x, 4, ACC_DT_F32, ACC_RED_SUM, c, NULL), ACC_ERR_INVALID);
        CHECK_MSG_HAS("was destroyed");
    }
    return 0;
}

ACC_TEST(abort_while_calls_start_on_other_threads)
{
    comm_env("gpus=2", "3000");
    ranks_run(2, abort_while_calls_start, NULL, 240);
}

/* ---- a set-up that times out ------------------------------------------------------------- */

/* Rank 1 comes to its first call long after rank 0, whose set-up of the plan's instance times
 * out: the ranks' bootstrap steps are apart from then on, so the communicator is broken, and
 * says so through acc_comm_get_async_error and at every later call. */
static int late_first_call(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c;
    float x[1024];
    acc_status_t err;
    (void)arg;
    for (int e = 0; e < 1024; e++)
        x[e] = 1.0f;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    if (rank == 1)
        usleep(2500000);
    CHECK(acc_allreduce(x, x, 1024, ACC_DT_F32, ACC_RED_SUM, c, NULL) != ACC_OK);
    printf("rank %d: %s\n", rank, acc_error_message());
    CHECK_OK(acc_comm_get_async_error(c, &err));
    CHECK_MSG(err != ACC_OK, "rank %d: the set-up failed, but acc_comm_get_async_error says OK",
              rank);
    CHECK(acc_allreduce(x, x, 1024, ACC_DT_F32, ACC_RED_SUM, c, NULL) != ACC_OK);
    CHECK_MSG_HAS("broken");
    CHECK_OK(acc_comm_abort(c));
    return 0;
}

ACC_TEST(a_plan_set_up_that_times_out_breaks_the_communicator)
{
    comm_env("gpus=2", "1000");
    ranks_run(2, late_first_call, NULL, 60);
}
