/*
 * Never failing, at random: four host ranks with the image build's tables of a four-GPU
 * NVLink machine (acc's plans for many ranges, the fallback for the rest) run long random
 * sequences of valid calls - every collective, type and reduction, sizes from 0 to 16 MiB
 * across the tables' ranges, every root, in and out of place, groups, and duplicates of the
 * communicator calling on threads of their own at the same time - and every result is
 * checked.  Then random misuse - counts, types or roots that differ between the ranks, calls
 * after an abort (one rank's, while the others call), calls on destroyed communicators - where
 * every rank must get an error within the timeout (from the misused call or, for a rank that
 * only sends in it, a later one that waits for the others) and every process survives.
 *
 * Every rank draws the same sequence from one seed: a new one each run, printed first
 * ("seed N"); COMM_RANDOM_SEED=N runs that sequence again.
 */
#include "comm_util.h"
#include "ranks.h"

#include <pthread.h>
#include <sys/random.h>

#define TOPO   "gpus=4 nvlink=18"
#define NRANKS 4
/* Steps of the main sequence and of each thread's (fewer under the sanitizers' slowdown). */
#define MAIN_STEPS   (ACC_TEST_SANITIZED ? 80 : 200)
#define THREAD_STEPS (ACC_TEST_SANITIZED ? 25 : 60)

typedef struct {
    uint64_t state;
} rng_t;

/* splitmix64 */
static uint64_t rnd(rng_t *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t below(rng_t *r, uint32_t n)
{
    return (uint32_t)(rnd(r) % n);
}

typedef struct {
    uint64_t seed;
    char db[512];
    acc_unique_id_t episode_ids[8]; /* the misuse episodes' communicators (a short timeout) */
} random_t;

/* The collectives a communicator has. */
static const acc_coll_t api_colls[] = {ACC_COLL_ALLREDUCE, ACC_COLL_ALLGATHER,
                                       ACC_COLL_REDUCE_SCATTER, ACC_COLL_BROADCAST,
                                       ACC_COLL_REDUCE};

/* A valid call: its bytes log-uniform up to 4 MiB (now and then 16 MiB, or none). */
static call_t random_call(rng_t *r, int nranks)
{
    call_t k;
    int shift = (int)below(r, 23) + (below(r, 32) == 0 ? 2 : 0);
    uint64_t bytes = below(r, 20) == 0 ? 0 : (1ull << shift) + below(r, 1u << (shift / 2 + 1));
    memset(&k, 0, sizeof(k));
    k.coll = api_colls[below(r, sizeof(api_colls) / sizeof(api_colls[0]))];
    k.dt = (acc_dtype_t)below(r, ACC_DT_COUNT);
    k.op = acc_coll_reduces(k.coll) ? (acc_redop_t)below(r, ACC_RED_COUNT) : ACC_RED_SUM;
    k.count = bytes / acc_dtype_size(k.dt);
    if (k.coll == ACC_COLL_ALLGATHER || k.coll == ACC_COLL_REDUCE_SCATTER)
        k.count /= (uint64_t)nranks;
    k.inplace = (int)below(r, 2);
    k.root = (int)below(r, (uint32_t)nranks);
    k.seed = (uint32_t)rnd(r);
    return k;
}

static void expect_right(acc_comm_t *c, const call_t *k, acc_status_t st, uint64_t wrong,
                         uint64_t seed, const char *where, int step)
{
    CHECK_MSG(st == ACC_OK && wrong == 0,
              "seed %llu, %s step %d, rank %d: %s %s %s count %llu root %d%s: %s, %llu wrong "
              "elements (%s)",
              (unsigned long long)seed, where, step, acc_comm_rank(c), acc_coll_name(k->coll),
              acc_dtype_name(k->dt), acc_redop_name(k->op), (unsigned long long)k->count, k->root,
              k->inplace ? " in place" : "", acc_status_name(st), (unsigned long long)wrong,
              st == ACC_OK ? "" : acc_error_message());
}

/* n random steps on c: single calls, and now and then a group of two to four. */
static void random_steps(acc_comm_t *c, rng_t *r, int n, uint64_t seed, const char *where)
{
    for (int step = 0; step < n; step++) {
        prepared_t p[4];
        acc_status_t st;
        int g = below(r, 8) == 0 ? 2 + (int)below(r, 3) : 0;
        if (!g) {
            call_t k = random_call(r, acc_comm_size(c));
            uint64_t wrong = call_checked(c, &k, &st);
            expect_right(c, &k, st, wrong, seed, where, step);
            continue;
        }
        for (int i = 0; i < g; i++) {
            call_t k = random_call(r, acc_comm_size(c));
            call_prepare(c, &k, &p[i]);
        }
        CHECK_OK(acc_group_start());
        for (int i = 0; i < g; i++)
            CHECK_OK(call_issue(c, &p[i]));
        st = acc_group_end();
        for (int i = 0; i < g; i++) {
            call_t k = p[i].k;
            expect_right(c, &k, st, st == ACC_OK ? call_verify(c, &p[i]) : 0, seed, where, step);
        }
    }
}

typedef struct {
    acc_comm_t *c;
    uint64_t seed;
    int index;
} stream_t;

static void *stream_main(void *arg)
{
    stream_t *s = arg;
    rng_t r = {s->seed * 31 + (uint64_t)s->index + 1};
    char where[32];
    snprintf(where, sizeof(where), "thread %d", s->index);
    random_steps(s->c, &r, THREAD_STEPS, s->seed, where);
    return NULL;
}

static int valid_calls(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    const random_t *t = arg;
    rng_t r = {t->seed};
    acc_comm_t *c, *dup[2];
    stream_t s[3];
    pthread_t th[3];
    acc_comm_stat_t *rows;
    size_t nrows;
    uint64_t acc_calls = 0;

    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    CHECK_STR(acc_comm_fallback_reason(c), "");
    random_steps(c, &r, MAIN_STEPS, t->seed, "main");
    /* Three communicators of the same ranks at once, each on its own thread. */
    CHECK_OK(acc_comm_dup(c, &dup[0]));
    CHECK_OK(acc_comm_dup(c, &dup[1]));
    for (int i = 0; i < 3; i++) {
        s[i] = (stream_t){i ? dup[i - 1] : c, t->seed, i};
        CHECK(pthread_create(&th[i], NULL, stream_main, &s[i]) == 0);
    }
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    CHECK_OK(acc_comm_destroy(dup[1]));
    CHECK_OK(acc_comm_destroy(dup[0]));
    random_steps(c, &r, MAIN_STEPS / 4, t->seed, "main, after the threads");
    /* The tables' plans served a good part of it. */
    CHECK_OK(acc_comm_stats(c, &rows, &nrows));
    for (size_t i = 0; i < nrows; i++)
        if (!rows[i].fallback)
            acc_calls += rows[i].calls;
    acc_mem_free(rows);
    CHECK_MSG(acc_calls > 0, "seed %llu: no call ran acc's plans", (unsigned long long)t->seed);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

/* ---- misuse ------------------------------------------------------------------------------ */

/* Under the sanitizers' slowdown a little more time per call, and fewer episodes. */
#define MISUSE_TIMEOUT_MS (ACC_TEST_SANITIZED ? 6000 : 3000)
#define EPISODES          (ACC_TEST_SANITIZED ? 5 : 8) /* at most as many as random_t has ids */

enum { DIFFERENT_COUNT, DIFFERENT_TYPE, DIFFERENT_ROOT, AFTER_ABORT, AFTER_DESTROY, KINDS };

static const char *const kind_names[KINDS] = {"a different count", "a different type",
                                              "a different root", "calls after one rank's abort",
                                              "calls after destroy"};

/* The misused call (rank `odd` differs from the others), then the call the others made, then an
 * allreduce: every rank gets an error from one of the three, each within the timeout (and a
 * little).  A rank that only sends in a call - the root of a broadcast, the start of a chain -
 * cannot tell then that its messages are not read as they should be; a later call that waits
 * for the others finds out (the one the others made reads what they left; the allreduce waits
 * for every rank). */
static void differing_call(acc_comm_t *d, rng_t *r, int kind, int odd, uint64_t seed, int ep)
{
    int me = acc_comm_rank(d), first_error = -1;
    call_t k = random_call(r, acc_comm_size(d)), calls[3];
    acc_status_t st = ACC_OK;
    double t0 = acc_now_s();
    uint32_t more, other;

    if (k.count < 16)
        k.count = 16 + below(r, 1000);
    if (kind == DIFFERENT_ROOT && acc_coll_reduces(k.coll) && k.coll != ACC_COLL_REDUCE)
        k.coll = ACC_COLL_REDUCE;
    if (kind == DIFFERENT_ROOT && !acc_coll_reduces(k.coll))
        k.coll = ACC_COLL_BROADCAST;
    calls[1] = k;
    calls[1].seed++;
    calls[2] = (call_t){ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 1, 0, 0, 1};
    /* Every rank draws the same numbers; rank `odd` uses them. */
    more = 1 + below(r, 7);
    other = 1 + below(r, ACC_DT_COUNT - 1);
    if (me == odd && kind == DIFFERENT_COUNT)
        k.count += more;
    else if (me == odd && kind == DIFFERENT_TYPE)
        k.dt = (acc_dtype_t)((k.dt + other) % ACC_DT_COUNT);
    else if (me == odd)
        k.root = (k.root + 1) % acc_comm_size(d);
    calls[0] = k;
    for (int i = 0; i < 3 && first_error < 0; i++) {
        call_checked(d, &calls[i], &st);
        if (st != ACC_OK)
            first_error = i;
    }
    printf("seed %llu, episode %d (%s, rank %d): rank %d: %s %s count %llu root %d: %s at call "
           "%d\n",
           (unsigned long long)seed, ep, kind_names[kind], odd, me, acc_coll_name(k.coll),
           acc_dtype_name(k.dt), (unsigned long long)k.count, k.root, acc_status_name(st),
           first_error);
    CHECK_MSG(first_error >= 0, "seed %llu, episode %d (%s at rank %d): rank %d saw no error",
              (unsigned long long)seed, ep, kind_names[kind], odd, me);
    CHECK_FAST(acc_now_s() - t0 < 3 * MISUSE_TIMEOUT_MS / 1e3 + 5,
               "seed %llu, episode %d: the errors took %.1f s", (unsigned long long)seed, ep,
               acc_now_s() - t0);
}

/* Each episode on a communicator of its own with a short timeout; between episodes, which
 * leave the ranks up to two timeouts apart, a barrier on the long-lived one. */
static int misuse(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    const random_t *t = arg;
    rng_t r = {t->seed ^ 0x5bd1e995u};
    acc_comm_opts_t o;
    acc_comm_t *p;
    float x[8] = {0};

    acc_comm_opts_init(&o);
    o.timeout_ms = MISUSE_TIMEOUT_MS;
    CHECK_OK(acc_comm_init_rank(&p, nranks, id, rank, NULL));
    for (int ep = 0; ep < EPISODES; ep++) {
        int kind = (int)below(&r, KINDS), odd = (int)below(&r, (uint32_t)nranks);
        acc_comm_t *d;
        CHECK_OK(acc_allreduce(x, x, 8, ACC_DT_F32, ACC_RED_SUM, p, NULL));
        CHECK_OK(acc_comm_init_rank(&d, nranks, &t->episode_ids[ep], rank, &o));
        if (kind <= DIFFERENT_ROOT) {
            differing_call(d, &r, kind, odd, t->seed, ep);
            CHECK_OK(acc_comm_abort(d));
        } else if (kind == AFTER_ABORT) {
            call_t k = random_call(&r, nranks);
            acc_status_t st;
            double t0 = acc_now_s();
            if (rank == odd) {
                CHECK_OK(acc_comm_abort(d));
                CHECK_ERR(call_api(d, &k, x, x), ACC_ERR_ABORTED);
                CHECK_MSG_HAS("was aborted");
                CHECK_ERR(acc_comm_abort(d), ACC_ERR_INVALID);
            } else {
                /* The others call with the aborted rank gone from the call: an error within
                 * the timeout. */
                call_checked(d, &k, &st);
                if (k.count && !(k.coll == ACC_COLL_BROADCAST && k.root == rank))
                    CHECK_MSG(st != ACC_OK,
                              "seed %llu, episode %d: rank %d's call succeeded without rank %d",
                              (unsigned long long)t->seed, ep, rank, odd);
                CHECK_FAST(acc_now_s() - t0 < MISUSE_TIMEOUT_MS / 1e3 + 5, "took %.1f s",
                           acc_now_s() - t0);
                CHECK_OK(acc_comm_abort(d));
            }
        } else {
            CHECK_OK(acc_comm_destroy(d));
            CHECK_ERR(acc_allreduce(x, x, 8, ACC_DT_F32, ACC_RED_SUM, d, NULL), ACC_ERR_INVALID);
            CHECK_MSG_HAS("was destroyed");
            CHECK_ERR(acc_comm_destroy(d), ACC_ERR_INVALID);
            CHECK_ERR(acc_comm_abort(d), ACC_ERR_INVALID);
        }
    }
    /* The long-lived communicator saw none of it. */
    {
        call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 4096, 0, 0, 7};
        call_ok(p, &k);
    }
    CHECK_OK(acc_comm_destroy(p));
    return 0;
}

/* The run's seed: COMM_RANDOM_SEED, else a new one; printed either way. */
static uint64_t run_seed(void)
{
    const char *set = getenv("COMM_RANDOM_SEED");
    uint64_t seed;
    if (set && *set)
        seed = strtoull(set, NULL, 10);
    else
        CHECK(getrandom(&seed, sizeof(seed), 0) == (ssize_t)sizeof(seed));
    seed %= 1000000000000ull;
    printf("seed %llu (COMM_RANDOM_SEED=%llu runs this sequence again)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    fflush(stdout);
    return seed;
}

/* The run's seed, and the environment: the tables of TOPO, in the case's database. */
static void random_case(random_t *t)
{
    memset(t, 0, sizeof(*t));
    t->seed = run_seed();
    snprintf(t->db, sizeof(t->db), "%s", acc_test_tmp("tables.db"));
    build_db(t->db, TOPO);
    comm_env(TOPO, "60000");
    setenv("ACC_DB", t->db, 1);
}

ACC_TEST(random_valid_calls_are_right)
{
    random_t t;
    random_case(&t);
    ranks_run(NRANKS, valid_calls, &t, 280);
}

ACC_TEST(random_misuse_fails_every_rank_within_the_timeout)
{
    random_t t;
    random_case(&t);
    for (int ep = 0; ep < EPISODES; ep++)
        CHECK_OK(acc_unique_id_local(&t.episode_ids[ep]));
    ranks_run(NRANKS, misuse, &t, 280);
}
