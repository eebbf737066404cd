/* Many processes at once: 16 add tuning runs while 16 load selection tables, for a few seconds.
 * Afterwards every run a writer reported is in the file exactly once, and no process saw an
 * error or a table that differs from the one stored. */
#include "db_test_util.h"

#include <sys/wait.h>
#include <time.h>

#define WRITERS 16
#define READERS 16
#define SECONDS 3.0

typedef struct {
    int role; /* 0 writer, 1 reader */
    int index;
    long done; /* runs added, or tables loaded and compared */
} report_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* created_us makes each run unique and lets the parent name every run it expects. */
static int64_t run_time(int writer, long seq)
{
    return 1700000000000000ll + (int64_t)writer * 1000000 + seq;
}

static int writer(const char *path, const char *fp, int w, double until, report_t *rep)
{
    acc_db_t *db = NULL;
    acc_db_tuning_run_t r;

    if (acc_db_open(path, 0, &db) != ACC_OK) {
        fprintf(stderr, "writer %d: open: %s\n", w, acc_error_message());
        return 1;
    }
    memset(&r, 0, sizeof(r));
    snprintf(r.model, sizeof(r.model), "gpt3-1.3b");
    snprintf(r.topo_fingerprint, sizeof(r.topo_fingerprint), "%s", fp);
    snprintf(r.network, sizeof(r.network), "ib-ndr");
    snprintf(r.method, sizeof(r.method), "model");
    snprintf(r.strategy, sizeof(r.strategy), "grid");
    while (now_s() < until) {
        snprintf(r.params, sizeof(r.params), "writer=%d seq=%ld", w, rep->done);
        r.score = (double)(rep->done % 97) + w / 100.0;
        r.seconds = 0.001;
        r.created_us = run_time(w, rep->done);
        if (acc_db_add_tuning_run(db, &r, NULL) != ACC_OK) {
            fprintf(stderr, "writer %d: run %ld: %s\n", w, rep->done, acc_error_message());
            acc_db_close(db);
            return 1;
        }
        rep->done++;
    }
    acc_db_close(db);
    return 0;
}

static int same_table(const acc_select_table_t *a, const acc_select_table_t *b)
{
    size_t i;
    if (a->n != b->n)
        return 0;
    for (i = 0; i < a->n; i++) {
        const acc_select_entry_t *x = &a->entries[i], *y = &b->entries[i];
        if (x->min_bytes != y->min_bytes || x->max_bytes != y->max_bytes ||
            x->use_nccl != y->use_nccl || strcmp(x->algo, y->algo) != 0 ||
            strcmp(x->params, y->params) != 0 || strcmp(x->plan_hash, y->plan_hash) != 0 ||
            x->predicted_us != y->predicted_us || x->measured_us != y->measured_us ||
            x->source != y->source)
            return 0;
    }
    return 1;
}

static int reader(const char *path, const char *fp, char hash[3][ACC_SHA256_HEX_LEN + 1], int i,
                  double until, report_t *rep)
{
    acc_select_table_t *want[3];
    acc_db_t *db = NULL;
    int c, bad = 0;

    for (c = 0; c < 3; c++)
        want[c] = tu_table((acc_coll_t)c, fp, hash[c], 20, c);
    while (now_s() < until && !bad) {
        /* Open per round, as every rank of a starting job does. */
        if (acc_db_open(path, ACC_DB_READONLY, &db) != ACC_OK) {
            fprintf(stderr, "reader %d: open: %s\n", i, acc_error_message());
            bad = 1;
            break;
        }
        for (c = 0; c < 3 && !bad; c++) {
            acc_select_table_t *t = NULL;
            if (acc_db_get_selection(db, fp, (acc_coll_t)c, &t) != ACC_OK) {
                fprintf(stderr, "reader %d: %s\n", i, acc_error_message());
                bad = 1;
            } else if (!same_table(t, want[c])) {
                fprintf(stderr, "reader %d: the %s table read back differs\n", i,
                        acc_coll_name((acc_coll_t)c));
                bad = 1;
            }
            acc_select_destroy(t);
        }
        acc_db_close(db);
        rep->done++;
    }
    for (c = 0; c < 3; c++)
        acc_select_destroy(want[c]);
    return bad;
}

ACC_TEST(writers_and_readers_at_once)
{
    const char *path = tu_fresh("concurrency.db");
    char fp[ACC_SHA256_HEX_LEN + 1], hash[3][ACC_SHA256_HEX_LEN + 1];
    acc_db_t *db = tu_open(path, 0);
    acc_plan_t *plans[3] = {fx_ring_allreduce(8, 2), fx_ring_allgather(8, 1),
                            fx_ring_reduce_scatter(8)};
    acc_db_tuning_run_t *runs = NULL;
    long written[WRITERS] = {0}, total = 0, loads = 0;
    pid_t pids[WRITERS + READERS];
    unsigned char *seen[WRITERS];
    int fds[2], i, c, failed = 0;
    double until;
    size_t n, k;
    report_t rep;

    tu_put_synth(db, "nodes=1 gpus=8 nvlink=18", fp);
    for (c = 0; c < 3; c++) {
        acc_select_table_t *t;
        CHECK_OK(acc_db_put_plan(db, plans[c], hash[c]));
        t = tu_table((acc_coll_t)c, fp, hash[c], 20, c);
        CHECK_OK(acc_db_put_selection(db, t));
        acc_select_destroy(t);
        acc_plan_destroy(plans[c]);
    }
    CHECK_OK(acc_db_put_profile(db, "gpt3-1.3b", "layers: 24\n", 1300000000ull, NULL));
    acc_db_close(db);

    CHECK(pipe(fds) == 0);
    until = now_s() + SECONDS;
    for (i = 0; i < WRITERS + READERS; i++) {
        pids[i] = fork();
        CHECK(pids[i] >= 0);
        if (pids[i] == 0) {
            int rc;
            close(fds[0]);
            memset(&rep, 0, sizeof(rep));
            rep.role = i >= WRITERS;
            rep.index = rep.role ? i - WRITERS : i;
            rc = rep.role ? reader(path, fp, hash, rep.index, until, &rep)
                          : writer(path, fp, rep.index, until, &rep);
            /* One report per child; a pipe write this small is atomic. */
            if (write(fds[1], &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
                rc = 2;
            _exit(rc);
        }
    }
    close(fds[1]);
    while (read(fds[0], &rep, sizeof(rep)) == (ssize_t)sizeof(rep)) {
        if (rep.role == 0 && rep.index >= 0 && rep.index < WRITERS)
            written[rep.index] = rep.done;
        else
            loads += rep.done;
    }
    close(fds[0]);
    for (i = 0; i < WRITERS + READERS; i++) {
        int status;
        CHECK(waitpid(pids[i], &status, 0) == pids[i]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed++;
    }
    CHECK_INT(failed, 0);
    for (i = 0; i < WRITERS; i++) {
        CHECK_MSG(written[i] > 0, "writer %d added no run", i);
        total += written[i];
    }
    CHECK(loads >= READERS);
    printf("%ld tuning runs added by %d writers, %ld rounds of 3 tables loaded by %d readers, "
           "in %.0f s\n",
           total, WRITERS, loads, READERS, SECONDS);

    /* Every reported run is present, exactly once, with what its writer stored. */
    db = tu_open(path, ACC_DB_CHECK);
    CHECK_OK(acc_db_list_tuning_runs(db, "gpt3-1.3b", fp, "ib-ndr", &runs, &n));
    CHECK_INT(n, total);
    for (i = 0; i < WRITERS; i++) {
        seen[i] = acc_mem_calloc((size_t)written[i] + 1, 1);
        CHECK(seen[i] != NULL);
    }
    for (k = 0; k < n; k++) {
        int w;
        long seq;
        CHECK(sscanf(runs[k].params, "writer=%d seq=%ld", &w, &seq) == 2);
        CHECK(w >= 0 && w < WRITERS && seq >= 0 && seq < written[w]);
        CHECK_INT(runs[k].created_us, run_time(w, seq));
        CHECK(!seen[w][seq]);
        seen[w][seq] = 1;
    }
    for (i = 0; i < WRITERS; i++)
        acc_mem_free(seen[i]);
    acc_mem_free(runs);
    acc_db_close(db);
}
