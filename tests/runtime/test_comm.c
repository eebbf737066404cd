/*
 * Communicators on the host backend, one process per rank: every collective, data type and
 * reduction at sizes 0, 1, odd and large, in place and out of place, against the reference;
 * calls back to back; groups; bad arguments.  Without a database every call takes the ring
 * fallback, which runs through the same backend as acc's plans.
 */
#include "comm_util.h"
#include "ranks.h"
#include "rt_internal.h"

#include <pthread.h>

static const acc_coll_t colls[] = {ACC_COLL_ALLREDUCE, ACC_COLL_ALLGATHER, ACC_COLL_REDUCE_SCATTER,
                                   ACC_COLL_BROADCAST, ACC_COLL_REDUCE};
static const uint64_t counts[] = {0, 1, 7, 1000, 12289};

static void quiet_env(void)
{
    /* No database: the fallback serves every call; the one warning line is expected. */
    setenv("ACC_DB", "/nonexistent/acc.db", 1);
    setenv("ACC_TOPO", "gpus=2", 1);
    setenv("ACC_LOG_LEVEL", "error", 1);
    setenv("ACC_TIMEOUT_MS", "60000", 1);
}

static int every_collective(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c;
    uint32_t seed = 1;
    (void)arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    CHECK_INT(acc_comm_rank(c), rank);
    CHECK_INT(acc_comm_size(c), nranks);
    for (size_t ci = 0; ci < sizeof(colls) / sizeof(colls[0]); ci++)
        for (int dt = 0; dt < ACC_DT_COUNT; dt++)
            for (int op = 0; op < ACC_RED_COUNT; op++) {
                if (!acc_coll_reduces(colls[ci]) && op > 0)
                    break;
                for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
                    for (int inplace = 0; inplace < 2; inplace++) {
                        call_t k = {colls[ci], (acc_dtype_t)dt, (acc_redop_t)op,
                                    counts[i], inplace,         (int)(seed % (uint32_t)nranks),
                                    seed};
                        seed++;
                        call_ok(c, &k);
                    }
            }
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(every_collective_2_ranks)
{
    quiet_env();
    ranks_run(2, every_collective, NULL, 240);
}

ACC_TEST(every_collective_4_ranks)
{
    quiet_env();
    ranks_run(4, every_collective, NULL, 240);
}

ACC_TEST(every_collective_8_ranks)
{
    quiet_env();
    ranks_run(8, every_collective, NULL, 280);
}

/* Two emulated nodes: the ring fallback crosses between them over TCP. */
ACC_TEST(every_collective_2_nodes_of_2_ranks)
{
    quiet_env();
    setenv("ACC_TOPO", "nodes=2 gpus=2", 1);
    ranks_run(4, every_collective, NULL, 240);
}

/* 64 MiB of fp32 per buffer, the size the issue names (16 MiB under the sanitizers, whose
 * slowdown would make the case minutes long). */
static int large(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c;
    uint64_t count = (ACC_TEST_SANITIZED ? 16u << 20 : 64u << 20) / 4;
    (void)arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    for (int inplace = 0; inplace < 2; inplace++) {
        call_t ar = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, count, inplace, 0, 7};
        call_t ag = {
            ACC_COLL_ALLGATHER, ACC_DT_F32, ACC_RED_SUM, count / (uint64_t)nranks, inplace, 0, 8};
        call_t rs = {ACC_COLL_REDUCE_SCATTER,
                     ACC_DT_F32,
                     ACC_RED_SUM,
                     count / (uint64_t)nranks,
                     inplace,
                     0,
                     9};
        call_ok(c, &ar);
        call_ok(c, &ag);
        call_ok(c, &rs);
    }
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(sizes_up_to_64_mib_4_ranks)
{
    quiet_env();
    ranks_run(4, large, NULL, 280);
}

static int thousand(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c;
    float buf[257];
    (void)arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    for (int i = 0; i < 1000; i++) {
        for (int e = 0; e < 257; e++)
            buf[e] = (float)(rank + i + e);
        CHECK_OK(acc_allreduce(buf, buf, 257, ACC_DT_F32, ACC_RED_SUM, c, NULL));
        for (int e = 0; e < 257; e++)
            CHECK_MSG(buf[e] == (float)(nranks * (i + e) + nranks * (nranks - 1) / 2),
                      "call %d element %d: %g", i, e, (double)buf[e]);
    }
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(thousand_calls_back_to_back_4_ranks)
{
    quiet_env();
    ranks_run(4, thousand, NULL, 240);
}

/* A group runs its calls at its end, in order. */
static int grouped(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c;
    int32_t a[100], b[100], all[400];
    (void)arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    for (int e = 0; e < 100; e++) {
        a[e] = rank + e;
        b[e] = 0;
    }
    CHECK_OK(acc_group_start());
    CHECK_OK(acc_allreduce(a, b, 100, ACC_DT_I32, ACC_RED_MAX, c, NULL));
    CHECK_OK(acc_allgather(a, all, 100, ACC_DT_I32, c, NULL));
    CHECK_INT(b[5], 0); /* queued, not run */
    CHECK_OK(acc_group_end());
    for (int e = 0; e < 100; e++) {
        CHECK_INT(b[e], nranks - 1 + e);
        for (int r = 0; r < nranks; r++)
            CHECK_INT(all[r * 100 + e], r + e);
    }
    CHECK_ERR(acc_group_end(), ACC_ERR_INVALID);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(groups_run_at_their_end)
{
    quiet_env();
    ranks_run(4, grouped, NULL, 120);
}

/* Bad arguments are refused before anything is touched, and the communicator still works. */
static int bad_args(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c;
    float x[4] = {1, 2, 3, 4}, y[4];
    (void)arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    CHECK_ERR(acc_allreduce(NULL, y, 4, ACC_DT_F32, ACC_RED_SUM, c, NULL), ACC_ERR_INVALID);
    CHECK_MSG_HAS("sendbuf is NULL");
    CHECK_ERR(acc_allreduce(x, y, 4, (acc_dtype_t)42, ACC_RED_SUM, c, NULL), ACC_ERR_INVALID);
    CHECK_MSG_HAS("unknown data type");
    CHECK_ERR(acc_allreduce(x, y, 4, ACC_DT_F32, (acc_redop_t)-1, c, NULL), ACC_ERR_INVALID);
    CHECK_MSG_HAS("unknown reduction");
    CHECK_ERR(acc_broadcast(x, y, 4, ACC_DT_F32, nranks, c, NULL), ACC_ERR_INVALID);
    CHECK_MSG_HAS("root");
    CHECK_ERR(acc_allgather(x, y, SIZE_MAX / 2, ACC_DT_F32, c, NULL), ACC_ERR_INVALID);
    CHECK_MSG_HAS("overflow");
    CHECK_ERR(acc_allreduce(x, y, 4, ACC_DT_F32, ACC_RED_SUM, NULL, NULL), ACC_ERR_INVALID);
    CHECK(x[0] == 1 && x[3] == 4);
    CHECK_OK(acc_allreduce(x, y, 4, ACC_DT_F32, ACC_RED_SUM, c, NULL));
    CHECK(y[3] == 4.0f * (float)nranks);
    CHECK_OK(acc_allreduce(x, NULL, 0, ACC_DT_F32, ACC_RED_SUM, c, NULL)); /* nothing to do */
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

/* A duplicate is a communicator of its own: the two run collectives at the same time, each on
 * its own thread, and it keeps the parent's options (here, the topology). */
typedef struct {
    acc_comm_t *c;
    uint32_t seed;
} dup_call_t;

static void *dup_calls(void *arg)
{
    dup_call_t *d = arg;
    for (int i = 0; i < 20; i++) {
        call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 4097, i & 1, 0, d->seed + i};
        call_ok(d->c, &k);
    }
    return NULL;
}

static int dup_beside_parent(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_opts_t o;
    acc_comm_t *c = NULL, *d = NULL;
    pthread_t th;
    dup_call_t a, b;
    (void)arg;

    acc_comm_opts_init(&o);
    o.topo = "gpus=4 arch=a100";
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, &o));
    CHECK_OK(acc_comm_dup(c, &d));
    CHECK_INT(acc_comm_rank(d), rank);
    CHECK_INT(acc_comm_size(d), nranks);
    CHECK_STR(d->fingerprint, c->fingerprint);
    a = (dup_call_t){c, 1};
    b = (dup_call_t){d, 1000};
    CHECK(pthread_create(&th, NULL, dup_calls, &b) == 0);
    dup_calls(&a);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK_OK(acc_comm_destroy(d));
    CHECK_OK(acc_comm_destroy(c));
    CHECK_ERR(acc_comm_dup(NULL, &d), ACC_ERR_INVALID);
    return 0;
}

ACC_TEST(dup_runs_beside_its_parent)
{
    quiet_env();
    ranks_run(4, dup_beside_parent, NULL, 120);
}

ACC_TEST(bad_arguments_touch_nothing)
{
    quiet_env();
    ranks_run(2, bad_args, NULL, 120);
}

ACC_TEST(init_refuses_bad_ranks)
{
    acc_comm_t *c = (acc_comm_t *)1;
    acc_unique_id_t id;
    memset(&id, 0, sizeof(id));
    CHECK_ERR(acc_comm_init_rank(&c, 4, &id, 4, NULL), ACC_ERR_INVALID);
    CHECK(c == NULL);
    CHECK_ERR(acc_comm_init_rank(&c, 4, &id, 0, NULL), ACC_ERR_INVALID); /* not an id */
    CHECK_MSG_HAS("unique id");
    CHECK_ERR(acc_unique_id_from_string("localhost", &id), ACC_ERR_INVALID);
    CHECK_ERR(acc_unique_id_from_string("localhost:99999", &id), ACC_ERR_INVALID);
    CHECK_OK(acc_comm_destroy(NULL));
    CHECK_OK(acc_comm_abort(NULL));
}
