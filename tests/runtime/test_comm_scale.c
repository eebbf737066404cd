/*
 * A communicator's set-up and its first collective's join at scale: what each rank sends and
 * receives over the bootstrap (the rendezvous, the star through rank 0, the fetches of peers'
 * addresses), counted by the bootstrap itself (boot_traffic).  Every rank but 0 must do O(1)
 * messages and bytes whatever the rank count, rank 0 O(N): the same communicator is made at 64
 * and at 256 ranks (host-backend ranks as threads of this process, 8 per node of the topology,
 * so that the nodes talk over TCP), and the counts must not grow faster than that.  An
 * allgather anywhere in these steps sends every rank N records, and fails it.  The arithmetic
 * for 65,536 ranks is in docs/scale.md.
 */
#include "comm_util.h"
#include "rt_internal.h"

#include <pthread.h>

#define MAX_RANKS 256

typedef struct {
    acc_unique_id_t id;
    int nranks;
    int call; /* make the first call too */
    char topo[128];
    boot_traffic_t setup[MAX_RANKS], join[MAX_RANKS]; /* the join: the first call's part */
    int failed[MAX_RANKS];
    double start, made[MAX_RANKS], called[MAX_RANKS]; /* acc_now_s() */
} scale_t;

typedef struct {
    scale_t *s;
    int rank;
} rank_arg_t;

static void *rank_main(void *arg)
{
    const rank_arg_t *a = arg;
    scale_t *s = a->s;
    acc_comm_opts_t o;
    acc_comm_t *c = NULL;
    boot_traffic_t after;
    float x[64];

    acc_comm_opts_init(&o);
    o.backend = ACC_BACKEND_HOST;
    o.topo = s->topo;
    if (acc_comm_init_rank(&c, s->nranks, &s->id, a->rank, &o) != ACC_OK) {
        printf("rank %d: %s\n", a->rank, acc_error_message());
        s->failed[a->rank] = 1;
        return NULL;
    }
    s->made[a->rank] = acc_now_s();
    boot_traffic(c->boot, &s->setup[a->rank]);
    if (!s->call)
        goto out;
    for (int i = 0; i < 64; i++)
        x[i] = (float)(a->rank + i);
    if (acc_allreduce(x, x, 64, ACC_DT_F32, ACC_RED_SUM, c, NULL) != ACC_OK) {
        printf("rank %d: %s\n", a->rank, acc_error_message());
        s->failed[a->rank] = 1;
    }
    /* Sum over r of (r + i): the ring's answer, exact in floats at these sizes. */
    for (int i = 0; i < 64 && !s->failed[a->rank]; i++)
        if (x[i] != (float)s->nranks * (float)(s->nranks - 1) / 2 + (float)s->nranks * (float)i)
            s->failed[a->rank] = 1;
    s->called[a->rank] = acc_now_s();
    boot_traffic(c->boot, &after);
    s->join[a->rank] = (boot_traffic_t){after.msgs_sent - s->setup[a->rank].msgs_sent,
                                        after.bytes_sent - s->setup[a->rank].bytes_sent,
                                        after.msgs_recv - s->setup[a->rank].msgs_recv,
                                        after.bytes_recv - s->setup[a->rank].bytes_recv};
out:
    if (acc_comm_destroy(c) != ACC_OK)
        s->failed[a->rank] = 1;
    return NULL;
}

/* The most any rank but 0 did, and what rank 0 did, in one of the two phases. */
typedef struct {
    uint64_t other_msgs, other_bytes, root_msgs, root_bytes;
} phase_t;

static phase_t phase(const boot_traffic_t *t, int nranks)
{
    phase_t p = {0, 0, t[0].msgs_sent + t[0].msgs_recv, t[0].bytes_sent + t[0].bytes_recv};
    for (int r = 1; r < nranks; r++) {
        uint64_t m = t[r].msgs_sent + t[r].msgs_recv, b = t[r].bytes_sent + t[r].bytes_recv;
        p.other_msgs = m > p.other_msgs ? m : p.other_msgs;
        p.other_bytes = b > p.other_bytes ? b : p.other_bytes;
    }
    return p;
}

/* Make a communicator of nranks threads (8 per node), and with call, call one allreduce. */
static void run(scale_t *s, int nranks, int call, phase_t *setup, phase_t *join)
{
    static pthread_t th[MAX_RANKS];
    static rank_arg_t args[MAX_RANKS];

    memset(s, 0, sizeof(*s));
    s->nranks = nranks;
    s->call = call;
    snprintf(s->topo, sizeof(s->topo), "nodes=%d gpus=8 nvlink=18 nic=8x400", nranks / 8);
    /* Rank 0 serves the rendezvous (the launchers' way), so its traffic is counted too. */
    CHECK_OK(acc_unique_id_local(&s->id));
    s->start = acc_now_s();
    for (int r = 0; r < nranks; r++) {
        args[r] = (rank_arg_t){s, r};
        CHECK(pthread_create(&th[r], NULL, rank_main, &args[r]) == 0);
    }
    for (int r = 0; r < nranks; r++)
        pthread_join(th[r], NULL);
    for (int r = 0; r < nranks; r++)
        CHECK_MSG(!s->failed[r], "%d ranks: rank %d failed", nranks, r);
    {
        double made = 0, called = 0;
        for (int r = 0; r < nranks; r++) {
            made = s->made[r] > made ? s->made[r] : made;
            called = s->called[r] > called ? s->called[r] : called;
        }
        printf("%d ranks: made in %.2f s", nranks, made - s->start);
        if (call)
            printf(", the first call done %.2f s later", called - made);
        printf("\n");
    }
    *setup = phase(s->setup, nranks);
    *join = phase(s->join, nranks);
    printf("%d ranks: set-up: rank 0 %llu messages %llu bytes, others at most %llu messages "
           "%llu bytes; first call's join: rank 0 %llu messages %llu bytes, others at most %llu "
           "messages %llu bytes\n",
           nranks, (unsigned long long)setup->root_msgs, (unsigned long long)setup->root_bytes,
           (unsigned long long)setup->other_msgs, (unsigned long long)setup->other_bytes,
           (unsigned long long)join->root_msgs, (unsigned long long)join->root_bytes,
           (unsigned long long)join->other_msgs, (unsigned long long)join->other_bytes);
}

/* Rank 0's count at n ranks is at most its count at m ranks scaled by (n - 1) / (m - 1): O(N),
 * with a little room for what does not scale (its own vote, its own tag). */
static void check_linear(uint64_t at_n, uint64_t at_m, int n, int m, const char *what)
{
    double bound = (double)at_m * (n - 1) / (m - 1) * 1.05 + 64;
    CHECK_MSG((double)at_n <= bound,
              "rank 0's %s grew from %llu at %d ranks to %llu at %d: more "
              "than O(N) (bound %.0f)",
              what, (unsigned long long)at_m, m, (unsigned long long)at_n, n, bound);
}

static void scale_env(void)
{
    setenv("ACC_DB", "/nonexistent/acc.db", 1); /* the ring fallback serves the call */
    setenv("ACC_LOG_LEVEL", "error", 1);
    setenv("ACC_TIMEOUT_MS", "120000", 1);
}

ACC_TEST(setup_sends_each_rank_o1_and_rank0_on_at_256_ranks)
{
    static scale_t s;
    phase_t at64, at256, none;

    scale_env();
    run(&s, 64, 0, &at64, &none);
    run(&s, MAX_RANKS, 0, &at256, &none);
    /* Every rank but 0: the same at 256 ranks as at 64, and small: a few dozen frames of a few
     * kilobytes (an allgather of the 1 KiB verdicts the set-up used to exchange sent each rank
     * 256 KiB per step at 256 ranks). */
    CHECK_MSG(at256.other_msgs <= at64.other_msgs && at256.other_bytes <= at64.other_bytes,
              "a rank's set-up grew with the rank count");
    CHECK(at256.other_msgs <= 32 && at256.other_bytes <= 4096);
    /* Rank 0: linear in the rank count. */
    check_linear(at256.root_msgs, at64.root_msgs, MAX_RANKS, 64, "set-up messages");
    check_linear(at256.root_bytes, at64.root_bytes, MAX_RANKS, 64, "set-up bytes");
}

/* The join counted at 256 ranks against 64: the ring fallback is made in class form and each
 * rank takes its own view of it (acc_cplan_view_of), so a rank's join does no O(N) work besides
 * a table of N entries, and its messages are as few as at 64. */
ACC_TEST(first_calls_join_sends_each_rank_o1_and_rank0_on)
{
    static scale_t s;
    phase_t setup, at64, at256;

    scale_env();
    run(&s, 64, 1, &setup, &at64);
    run(&s, MAX_RANKS, 1, &setup, &at256);
    CHECK_MSG(at256.other_msgs <= at64.other_msgs && at256.other_bytes <= at64.other_bytes,
              "a rank's join grew with the rank count");
    CHECK(at256.other_msgs <= 32 && at256.other_bytes <= 4096);
    check_linear(at256.root_msgs, at64.root_msgs, MAX_RANKS, 64, "join messages");
    check_linear(at256.root_bytes, at64.root_bytes, MAX_RANKS, 64, "join bytes");
}
