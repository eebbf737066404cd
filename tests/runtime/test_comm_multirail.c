/*
 * The host backend across two links: two ranks in two network namespaces joined by two veth
 * pairs, each on a subnet of its own.  With ACC_SOCKET_IFNAME naming both interfaces, every
 * connection between the nodes opens a socket on each and stripes its messages across them:
 * the allreduce is right and both links carry a comparable share of the bytes (the kernel's
 * counters say so).  A name in the list that no interface has fails the communicator on every
 * rank, naming it; ranks that name different numbers of interfaces use the number they share;
 * a link that goes down in the middle of a call, or a peer that dies there, fails the call
 * instead of hanging it.  How fast two links are is measured in bench/ (multirail.md), never
 * here.
 */
#include "comm_util.h"
#include "netns_util.h"
#include "ranks.h"

#include <pthread.h>

#define PORT "29511"
/* Elements of each allreduce: 8 MiB, messages far above the striping's least size. */
#define COUNT (2u << 20)

typedef enum { BOTH, BAD_NAME, FEWER, LINK_DIES, PEER_DIES } mode_t_;

typedef struct {
    netns_pair_t p;
    mode_t_ mode;
} rails_t;

/* Bytes interface `name` has sent, from this namespace's /proc/self/net/dev (/sys/class/net
 * shows the namespace that mounted /sys, not this one). */
static unsigned long long tx_bytes(const char *name)
{
    FILE *f = fopen("/proc/self/net/dev", "r");
    char line[512];
    unsigned long long tx = 0;
    int found = 0;

    CHECK(f != NULL);
    while (fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':'), *n = line;
        unsigned long long v[9];
        if (!colon)
            continue;
        *colon = '\0';
        while (*n == ' ')
            n++;
        if (strcmp(n, name) == 0 &&
            sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) == 9) {
            tx = v[8]; /* receive: 8 counters, then the bytes sent */
            found = 1;
        }
    }
    fclose(f);
    CHECK_MSG(found, "no interface %s in /proc/self/net/dev", name);
    return tx;
}

/* What rank 1 does to itself 300 ms into the calls: take its second link down, or die. */
static void *strike(void *arg)
{
    rails_t *t = arg;
    usleep(300000);
    if (t->mode == PEER_DIES)
        _exit(0);
    CHECK(netns_sh("ip link set %s down", t->p.veth2[1]) == 0);
    return NULL;
}

/* Calls until one fails (30 s at most): it must, and within the timeout and a margin. */
static int calls_until_failure(acc_comm_t *c, rails_t *t, int rank)
{
    call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, COUNT, 0, 0, 3};
    pthread_t th;
    acc_status_t st = ACC_OK;
    double start = acc_now_s();

    if (rank == 1)
        CHECK(pthread_create(&th, NULL, strike, t) == 0);
    while (st == ACC_OK && acc_now_s() - start < 30) {
        (void)call_checked(c, &k, &st);
        k.seed++;
    }
    CHECK_MSG(st != ACC_OK, "rank %d: calls went on for 30 s after rank 1's %s", rank,
              t->mode == PEER_DIES ? "death" : "second link went down");
    CHECK_MSG(st == ACC_ERR_TIMEOUT, "rank %d: %s: %s", rank, acc_status_name(st),
              acc_error_message());
    /* The timeout is 3 s: a failure is due well before 30 s. */
    CHECK_MSG(acc_now_s() - start < 20, "rank %d: the failure took %.1f s", rank,
              acc_now_s() - start);
    if (t->mode == PEER_DIES)
        CHECK_MSG_HAS("rank 1");
    if (rank == 1)
        CHECK(pthread_join(th, NULL) == 0);
    return 0;
}

static int rank_main(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    rails_t *t = arg;
    const char *link0 = t->p.veth[rank], *link1 = t->p.veth2[rank];
    char where[64], ifs[64];
    unsigned long long tx0, tx1, d0, d1, payload;
    acc_unique_id_t id;
    acc_comm_t *c;
    call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, COUNT, 0, 0, 5};
    (void)unused;

    netns_pair_enter(&t->p, rank);
    if (t->mode == FEWER && rank == 1)
        snprintf(ifs, sizeof(ifs), "%.15s", link0);
    else
        snprintf(ifs, sizeof(ifs), "%.15s,%.15s", link0,
                 t->mode == BAD_NAME && rank == 1 ? "nosuch9" : link1);
    setenv("ACC_SOCKET_IFNAME", ifs, 1);
    snprintf(where, sizeof(where), "%s:%s", t->p.addr[0], PORT);
    CHECK_OK(acc_unique_id_from_string(where, &id));
    if (t->mode == BAD_NAME) {
        /* Every rank fails, with the message of the rank that has no such interface. */
        CHECK_ERR(acc_comm_init_rank(&c, nranks, &id, rank, NULL), ACC_ERR_INVALID);
        CHECK_MSG_HAS("ACC_SOCKET_IFNAME=");
        CHECK_MSG_HAS("'nosuch9'");
        return 0;
    }
    CHECK_OK(acc_comm_init_rank(&c, nranks, &id, rank, NULL));
    if (t->mode == LINK_DIES || t->mode == PEER_DIES) {
        call_ok(c, &k);
        calls_until_failure(c, t, rank);
        acc_comm_destroy(c);
        return 0;
    }
    tx0 = tx_bytes(link0);
    tx1 = tx_bytes(link1);
    for (int i = 0; i < 3; i++) {
        call_ok(c, &k);
        k.seed++;
    }
    d0 = tx_bytes(link0) - tx0;
    d1 = tx_bytes(link1) - tx1;
    /* Two ranks' allreduce sends each rank's whole vector's worth at least (half reduced,
     * half gathered), three times. */
    payload = 3ull * COUNT * sizeof(float);
    CHECK_MSG(d0 + d1 >= payload, "rank %d sent %llu + %llu bytes, less than the %llu due", rank,
              d0, d1, payload);
    if (t->mode == BOTH)
        CHECK_MSG(d0 >= (d0 + d1) * 35 / 100 && d1 >= (d0 + d1) * 35 / 100,
                  "rank %d: %s carried %llu bytes and %s %llu: not a comparable share each", rank,
                  link0, d0, link1, d1);
    else
        CHECK_MSG(d1 < payload / 20,
                  "rank %d: %s carried %llu bytes while the ranks share one interface only", rank,
                  link1, d1);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

static void run(mode_t_ mode, const char *timeout_ms)
{
    rails_t t;
    netns_skip_unless_possible();
    netns_pair_init(&t.p);
    t.p.links = 2;
    t.mode = mode;
    /* Two nodes of one GPU each: the ranks' data crosses the links. */
    setenv("ACC_TOPO", "nodes=2 gpus=1 nic=1x100", 1);
    setenv("ACC_DB", "/nonexistent/acc.db", 1);
    setenv("ACC_LOG_LEVEL", "error", 1);
    setenv("ACC_TIMEOUT_MS", timeout_ms, 1);
    ranks_run_own_id(2, rank_main, &t, 120);
}

ACC_TEST(two_links_both_carry_a_share_of_a_correct_allreduce)
{
    run(BOTH, "20000");
}

ACC_TEST(a_name_no_interface_has_fails_every_rank_naming_it)
{
    run(BAD_NAME, "20000");
}

ACC_TEST(ranks_naming_fewer_interfaces_make_all_use_the_shared_count)
{
    run(FEWER, "20000");
}

ACC_TEST(a_link_that_goes_down_in_a_call_fails_the_call)
{
    run(LINK_DIES, "3000");
}

ACC_TEST(a_peer_that_dies_in_a_call_fails_the_call_naming_it)
{
    run(PEER_DIES, "3000");
}
