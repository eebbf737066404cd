/*
 * Setting a communicator up: it completes on every rank or fails on every rank, whatever the
 * timeout and however late a rank comes; a rank that never comes is named, within the timeout,
 * on every rank that did, and the rendezvous (a thread's, or rank 0's) gives its port back
 * then; a reused id fails
 * every rank at once (also when the ranks were forked after the id was made, and inherited
 * its socket); an id from HOST:PORT serves one communicator after another.
 */
#include "comm_util.h"
#include "ranks.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* Does anything listen at the rendezvous the message names ("... rendezvous at A.B.C.D:P")?
 * Asked for up to a second: the rendezvous closes its port as it gives up. */
static int rendezvous_listens(const char *msg)
{
    const char *at = strstr(msg, "rendezvous at ");
    unsigned a, b, c, d, port;
    struct sockaddr_in sa;
    int refused = 0;
    CHECK(at && sscanf(at, "rendezvous at %u.%u.%u.%u:%u", &a, &b, &c, &d, &port) == 5);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(a << 24 | b << 16 | c << 8 | d);
    for (int i = 0; i < 100 && !refused; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(fd >= 0);
        refused = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno == ECONNREFUSED;
        close(fd);
        if (!refused)
            usleep(10000);
    }
    return !refused;
}

/* ---- all or nothing ---------------------------------------------------------------------- */

#define TRIALS 16

typedef struct {
    acc_unique_id_t ids[TRIALS];
    char db[512];
    double start; /* trial i starts at start + i * TRIAL_SECONDS on both ranks (acc_now_s) */
} trials_t;

/* Rank 0's timeout, and the time a trial has: a failed trial must not leave one rank behind. */
#define RANK0_WAIT_MS 500
#define TRIAL_SECONDS 1.2

/* Per trial: how long rank 1 waits for a peer, and how late rank 0 comes. */
static const int trial_timeout_ms[TRIALS] = {1, 2, 5, 10, 20, 50, 100, 400,
                                             1, 2, 5, 10, 20, 50, 100, 400};
static const int trial_late_ms[TRIALS] = {0, 0, 0, 0, 0, 0, 0, 0, 30, 30, 30, 30, 30, 30, 30, 30};

/* Rank 0 loads a database (every plan it names is verified), rank 1 has none; rank 1 waits for
 * a peer from 1 to 400 ms, and rank 0 comes at once or 30 ms late: the trials end in every
 * step of the bootstrap, or succeed.  (Once every rank has arrived, set-up waits at least a
 * minute for a live peer, so the loading itself does not time out; on main it did, and one
 * rank returned a communicator while the other failed.)  Each trial's outcome goes to a file
 * per rank for the parent to compare. */
static int setup_trials(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    trials_t *t = arg;
    char name[64];
    FILE *out;
    (void)unused;

    snprintf(name, sizeof(name), "outcomes_rank%d", rank);
    CHECK((out = fopen(acc_test_tmp(name), "w")) != NULL);
    setenv("ACC_DB", rank == 0 ? t->db : "/nonexistent/acc.db", 1);
    for (int i = 0; i < TRIALS; i++) {
        acc_comm_opts_t o;
        acc_comm_t *c = NULL;
        acc_status_t st;
        double at = t->start + i * TRIAL_SECONDS + (rank == 0 ? trial_late_ms[i] / 1e3 : 0);
        acc_comm_opts_init(&o);
        o.timeout_ms = rank == 0 ? RANK0_WAIT_MS : trial_timeout_ms[i];
        if (at > acc_now_s())
            usleep((useconds_t)((at - acc_now_s()) * 1e6));
        st = acc_comm_init_rank(&c, nranks, &t->ids[i], rank, &o);
        fprintf(out, "%d\n", st == ACC_OK);
        printf("rank %d, trial %d (rank 1 waits %d ms, rank 0 %d ms late): %s %s\n", rank, i,
               trial_timeout_ms[i], trial_late_ms[i], acc_status_name(st),
               st == ACC_OK ? "" : acc_error_message());
        /* Abort: the two ranks' outcomes are compared, not a destroy's barrier. */
        acc_comm_abort(c);
    }
    fclose(out);
    return 0;
}

ACC_TEST(setup_completes_on_every_rank_or_fails_on_every_rank)
{
    trials_t t;
    int outcome[2][TRIALS], ok = 0;

    snprintf(t.db, sizeof(t.db), "%s", acc_test_tmp("setup.db"));
    build_db(t.db, "gpus=2 nvlink=18");
    setenv("ACC_TOPO", "gpus=2 nvlink=18", 1);
    setenv("ACC_LOG_LEVEL", "error", 1);
    unsetenv("ACC_TIMEOUT_MS");
    for (int i = 0; i < TRIALS; i++)
        CHECK_OK(acc_unique_id_local(&t.ids[i]));
    t.start = acc_now_s() + 0.5;
    ranks_run_own_id(2, setup_trials, &t, 240);
    for (int r = 0; r < 2; r++) {
        char name[64];
        FILE *f;
        snprintf(name, sizeof(name), "outcomes_rank%d", r);
        CHECK((f = fopen(acc_test_tmp(name), "r")) != NULL);
        for (int i = 0; i < TRIALS; i++)
            CHECK(fscanf(f, "%d", &outcome[r][i]) == 1);
        fclose(f);
    }
    for (int i = 0; i < TRIALS; i++) {
        CHECK_MSG(outcome[0][i] == outcome[1][i],
                  "trial %d (rank 1 waits %d ms, rank 0 %d ms late): rank 0 %s, rank 1 %s", i,
                  trial_timeout_ms[i], trial_late_ms[i], outcome[0][i] ? "succeeded" : "failed",
                  outcome[1][i] ? "succeeded" : "failed");
        ok += outcome[0][i];
    }
    printf("%d of %d set-ups succeeded on both ranks, the others failed on both\n", ok, TRIALS);
}

/* ---- a rank that never comes -------------------------------------------------------------- */

#define ABSENT_TIMEOUT_MS 1500

/* Rank 3 never comes: to the communicator (dup 0), or to a duplicate of one (dup 1), whose
 * rendezvous is a thread of rank 0's.  Every rank that came fails within the timeout (and a
 * little), naming rank 3; the rendezvous stops with them (the thread and its port gone), not an
 * hour later. */
static int absent(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    int dup = *(int *)arg;
    acc_comm_t *c = NULL, *d = NULL;
    double t0;
    acc_status_t st;

    if (dup)
        CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    if (rank == 3) {
        usleep(2 * ABSENT_TIMEOUT_MS * 1000 + 3000000);
        acc_comm_abort(c);
        return 0;
    }
    t0 = acc_now_s();
    st = dup ? acc_comm_dup(c, &d) : acc_comm_init_rank(&d, nranks, id, rank, NULL);
    printf("rank %d after %.2f s: %s\n", rank, acc_now_s() - t0, acc_error_message());
    CHECK_INT(st, ACC_ERR_TIMEOUT);
    CHECK_MSG_HAS("rank 3 of 4 never reached the bootstrap rendezvous");
    CHECK_FAST(acc_now_s() - t0 < ABSENT_TIMEOUT_MS / 1e3 + 3.0, "took %.1f s", acc_now_s() - t0);
    /* The rendezvous (rank 0's, or a thread of rank 0's for the duplicate) has given its port
     * back. */
    CHECK_MSG(!rendezvous_listens(acc_error_message()), "rank %d: the rendezvous still listens",
              rank);
    acc_comm_abort(c);
    return 0;
}

ACC_TEST(a_rank_that_never_comes_is_named_within_the_timeout)
{
    int dup = 0;
    comm_env("gpus=4", "1500");
    ranks_run(4, absent, &dup, 60);
}

ACC_TEST(a_rank_that_never_comes_to_a_dup_is_named_and_the_rendezvous_ends)
{
    int dup = 1;
    comm_env("gpus=4", "1500");
    ranks_run(4, absent, &dup, 60);
}

/* ---- reused ids -------------------------------------------------------------------------- */

static int reuse_thread_id(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c, *again = NULL;
    call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 1000, 0, 0, 5};
    double t0;
    (void)arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    call_ok(c, &k);
    t0 = acc_now_s();
    CHECK_ERR(acc_comm_init_rank(&again, nranks, id, rank, NULL), ACC_ERR_INVALID);
    printf("rank %d after %.2f s: %s\n", rank, acc_now_s() - t0, acc_error_message());
    CHECK_MSG_HAS("serves one communicator");
    /* At once: not the 20 s of ACC_TIMEOUT_MS. */
    CHECK_FAST(acc_now_s() - t0 < 3.0, "took %.1f s", acc_now_s() - t0);
    call_ok(c, &k); /* the first communicator is untouched */
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(a_reused_id_fails_every_rank_at_once)
{
    acc_unique_id_t id;
    ranks_t rs;
    comm_env("gpus=3", "20000");
    /* The ranks are forked after the id's rendezvous thread has started listening: they must
     * not keep its socket (which would accept the reused id's connections into a backlog
     * nobody serves, instead of refusing them). */
    /* A fork copies whatever lock the rendezvous thread holds at that instant (the sanitizers'
     * allocators and thread registries do not reset theirs in the child), and the child could
     * wait on it forever: so the ranks are forked once the thread has settled in poll, and
     * start together once all are forked, before it serves any of them. */
    int go[2];
    CHECK_OK(acc_get_unique_id(&id));
    ranks_wait_others_parked();
    CHECK(pipe(go) == 0);
    rs.nranks = 3;
    fflush(NULL);
    for (int r = 0; r < 3; r++) {
        CHECK((rs.pid[r] = fork()) >= 0);
        if (rs.pid[r] == 0) {
            char b;
            close(go[1]);
            if (read(go[0], &b, 1) != 0)
                _exit(2);
            _exit(reuse_thread_id(r, 3, &id, NULL));
        }
        rs.status[r] = -2;
    }
    close(go[0]);
    close(go[1]);
    CHECK_INT(ranks_wait(&rs, 120), 0);
}

static int reuse_string_id(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c, *d;
    call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 1000, 0, 0, 5};
    (void)arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    /* Rank 0 gave the port back after the rendezvous: the same HOST:PORT serves again. */
    CHECK_OK(acc_comm_init_rank(&d, nranks, id, rank, NULL));
    call_ok(c, &k);
    call_ok(d, &k);
    CHECK_OK(acc_comm_destroy(d));
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(an_id_from_host_port_serves_one_communicator_after_another)
{
    comm_env("gpus=3", "20000");
    ranks_run(3, reuse_string_id, NULL, 120);
}
