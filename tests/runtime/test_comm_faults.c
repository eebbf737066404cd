/*
 * Faults: a rank killed with SIGKILL in the middle of a collective makes every other rank's
 * call fail within ACC_TIMEOUT_MS, naming a rank and the step it waited for, and never hang;
 * acc_comm_abort ends a call in flight on another thread.
 */
#include "comm_util.h"
#include "ranks.h"

#include <pthread.h>

#define TIMEOUT_MS 2000

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
    /* Rank 1 is killed by the parent during this loop; the others must see it fail. */
    while (st == ACC_OK) {
        t0 = acc_now_s();
        st = acc_allreduce(buf, buf, count, ACC_DT_F32, ACC_RED_MAX, c, NULL);
        calls++;
        CHECK_MSG(calls < 100000, "rank %d: no call failed", rank);
    }
    printf("rank %d: call %d failed after %.0f ms: %s\n", rank, calls, (acc_now_s() - t0) * 1e3,
           acc_error_message());
    CHECK_INT(st, ACC_ERR_TIMEOUT);
    CHECK_MSG_HAS("rank ");
    CHECK_MSG_HAS("ACC_TIMEOUT_MS");
    /* Within the timeout, plus what the call had done before the peer died. */
    CHECK_MSG(acc_now_s() - t0 < TIMEOUT_MS / 1e3 + 3.0, "took %.1f s", acc_now_s() - t0);
    CHECK_OK(acc_comm_get_async_error(c, &err));
    CHECK_INT(err, ACC_ERR_TIMEOUT);
    /* A broken communicator refuses new calls at once. */
    t0 = acc_now_s();
    CHECK_ERR(acc_allreduce(buf, buf, 16, ACC_DT_F32, ACC_RED_SUM, c, NULL), ACC_ERR_TIMEOUT);
    CHECK_MSG_HAS("broken");
    CHECK(acc_now_s() - t0 < 0.5);
    CHECK_OK(acc_comm_abort(c));
    free(buf);
    return 0;
}

ACC_TEST(sigkill_of_a_rank_fails_the_others_within_the_timeout)
{
    ranks_t rs;
    int bad;
    setenv("ACC_TOPO", "gpus=4", 1);
    setenv("ACC_DB", "/nonexistent/acc.db", 1);
    setenv("ACC_LOG_LEVEL", "error", 1);
    setenv("ACC_TIMEOUT_MS", "2000", 1);
    ranks_start(&rs, 4, survive_a_kill, NULL);
    usleep(800000);
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
        CHECK_MSG(acc_now_s() - t0 < 2.0, "abort took %.1f s", acc_now_s() - t0);
    } else {
        usleep(1500000);
        CHECK_OK(acc_comm_abort(c));
    }
    return 0;
}

ACC_TEST(abort_ends_a_call_in_flight)
{
    setenv("ACC_TOPO", "gpus=2", 1);
    setenv("ACC_DB", "/nonexistent/acc.db", 1);
    setenv("ACC_LOG_LEVEL", "error", 1);
    setenv("ACC_TIMEOUT_MS", "30000", 1);
    ranks_run(2, abort_in_flight, NULL, 60);
}
