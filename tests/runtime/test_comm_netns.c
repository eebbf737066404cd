/*
 * Communicators across machines: two ranks in two network namespaces joined by a veth pair,
 * whose host name resolves to 127.0.0.1 as in many containers.  The job's own rendezvous is at
 * an address the launcher names (MASTER_ADDR:PORT); every rendezvous acc opens later - a
 * duplicate, the fusion engine's control and stream communicators - must be reachable where
 * the peers already reached rank 0, not at the host name's loopback.  The ranks are on two
 * nodes of the topology, so the host backend's data crosses the veth pair too (TCP).
 */
#include "acc_fusion.h"
#include "comm_util.h"
#include "fusion_util.h"
#include "netns_util.h"
#include "ranks.h"

#define PORT "29500"

static int across(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    netns_pair_t *p = arg;
    char where[64];
    acc_unique_id_t id;
    acc_comm_t *c, *d;
    acc_fusion_t *f;
    enum { N = 3000 };
    float *g = calloc(N, sizeof(float)), *h = calloc(7, sizeof(float));
    (void)unused;

    CHECK(g && h);
    netns_pair_enter(p, rank);
    CHECK_MSG(netns_hostname_is_loopback(), "rank %d: the host name does not resolve to 127.x",
              rank);
    snprintf(where, sizeof(where), "%s:%s", p->addr[0], PORT);
    CHECK_OK(acc_unique_id_from_string(where, &id));
    CHECK_OK(acc_comm_init_rank(&c, nranks, &id, rank, NULL));

    /* A duplicate: its rendezvous is rank 0's, made after the job's. */
    CHECK_OK(acc_comm_dup(c, &d));
    for (int s = 0; s < 2; s++) {
        call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 100000, s, 0, 7u + (uint32_t)s};
        call_ok(d, &k);
        k.coll = ACC_COLL_BROADCAST;
        k.root = 1;
        call_ok(c, &k);
    }
    CHECK_OK(acc_comm_destroy(d));

    /* The fusion engine: a host-backend control communicator and two stream communicators,
     * each a duplicate. */
    {
        acc_fusion_opts_t o;
        acc_tune_config_t cfg;
        acc_fusion_opts_init(&o);
        acc_tune_config_acc(&cfg, 4096, 2, ACC_TUNE_ALGO_AUTO);
        o.config = &cfg;
        CHECK_OK(acc_fusion_create(c, &o, &f));
        CHECK_OK(acc_fusion_register(f, g, N, ACC_DT_F32, NULL));
        CHECK_OK(acc_fusion_register(f, h, 7, ACC_DT_F32, NULL));
        for (int it = 0; it < 3; it++) {
            for (int e = 0; e < N; e++)
                g[e] = (float)(rank + 1) * (float)(e % 8);
            for (int e = 0; e < 7; e++)
                h[e] = (float)(rank * 4);
            CHECK_OK(acc_fusion_ready(f, 1));
            CHECK_OK(acc_fusion_ready(f, 0));
            CHECK_OK(acc_fusion_wait(f));
            for (int e = 0; e < N; e++)
                CHECK_MSG(g[e] == 1.5f * (float)(e % 8), "iteration %d: element %d is %g", it, e,
                          g[e]);
            for (int e = 0; e < 7; e++)
                CHECK(h[e] == 2.0f);
        }
        CHECK_OK(acc_fusion_destroy(f));
    }
    CHECK_OK(acc_comm_destroy(c));
    free(g);
    free(h);
    return 0;
}

ACC_TEST(rendezvous_after_the_first_reach_the_peers_across_namespaces)
{
    netns_pair_t p;
    netns_skip_unless_possible();
    netns_pair_init(&p);
    /* Two nodes of one GPU each: the ranks' data crosses the link too. */
    setenv("ACC_TOPO", "nodes=2 gpus=1 nic=1x100", 1);
    setenv("ACC_DB", "/nonexistent/acc.db", 1);
    setenv("ACC_LOG_LEVEL", "error", 1);
    setenv("ACC_TIMEOUT_MS", "10000", 1);
    fusion_env_clear();
    ranks_run_own_id(2, across, &p, 120);
}

/* ---- the first rendezvous: acc_get_unique_id where the host name is the loopback ------------ */

typedef struct {
    netns_pair_t p;
    int id_pipe[2]; /* rank 0 -> rank 1: the id */
    const char *ifname; /* ACC_SOCKET_IFNAME for rank 0: NULL, "veth" (its own), or a bad one */
} first_t;

static int first_rendezvous(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    first_t *t = arg;
    acc_unique_id_t id;
    acc_comm_t *c;
    call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 50000, 0, 0, 11};
    (void)unused;

    netns_pair_enter(&t->p, rank);
    CHECK(netns_hostname_is_loopback());
    if (rank == 0) {
        if (t->ifname && strcmp(t->ifname, "veth") == 0)
            setenv("ACC_SOCKET_IFNAME", t->p.veth[0], 1);
        else if (t->ifname) {
            /* A name no interface has: an error naming the setting and the interfaces. */
            setenv("ACC_SOCKET_IFNAME", t->ifname, 1);
            CHECK_ERR(acc_get_unique_id(&id), ACC_ERR_INVALID);
            CHECK_MSG_HAS("ACC_SOCKET_IFNAME='nosuch0'");
            CHECK_MSG_HAS(t->p.veth[0]);
            setenv("ACC_SOCKET_IFNAME", t->p.veth[0], 1);
        }
        /* The host name's address is 127.0.0.1 here: the id must name the veth's instead. */
        CHECK_OK(acc_get_unique_id(&id));
        CHECK(write(t->id_pipe[1], &id, sizeof(id)) == (ssize_t)sizeof(id));
    } else {
        CHECK(read(t->id_pipe[0], &id, sizeof(id)) == (ssize_t)sizeof(id));
    }
    CHECK_OK(acc_comm_init_rank(&c, nranks, &id, rank, NULL));
    call_ok(c, &k);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

static void first_run(const char *ifname)
{
    first_t t;
    netns_skip_unless_possible();
    netns_pair_init(&t.p);
    CHECK(pipe(t.id_pipe) == 0);
    t.ifname = ifname;
    setenv("ACC_TOPO", "nodes=2 gpus=1 nic=1x100", 1);
    setenv("ACC_DB", "/nonexistent/acc.db", 1);
    setenv("ACC_LOG_LEVEL", "error", 1);
    setenv("ACC_TIMEOUT_MS", "10000", 1);
    unsetenv("ACC_SOCKET_IFNAME");
    fusion_env_clear();
    ranks_run_own_id(2, first_rendezvous, &t, 120);
}

ACC_TEST(a_new_id_is_reachable_where_the_host_name_is_the_loopback)
{
    first_run(NULL);
}

ACC_TEST(acc_socket_ifname_names_the_interface_and_a_wrong_one_is_an_error)
{
    first_run("nosuch0");
}
