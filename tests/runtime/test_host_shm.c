/*
 * The host backend's shared memory, in a /dev/shm of the case's own: each case enters a
 * private mount namespace with a small tmpfs on /dev/shm (gone with the case's processes; the
 * case skips, saying so, where it cannot unshare), forks its ranks in it and looks at what is
 * there.
 *
 * A call too large for /dev/shm fails on every rank with an error naming /dev/shm and its size,
 * or is served by the fallback, never SIGBUS (main killed every rank with signal 7); ranks
 * killed while a plan's segments are set up, at first use or when a call outgrows them, leave
 * segments that the next communicator, or acc-info --cleanup, removes.
 */
#include "comm_util.h"
#include "ranks.h"

#include <dirent.h>
#include <sched.h>
#include <sys/mount.h>

/* Enter a mount namespace of this process's own with a tmpfs of `size` on /dev/shm. */
static void private_dev_shm(const char *size)
{
    char opts[64];
    snprintf(opts, sizeof(opts), "size=%s,mode=1777", size);
    if (unshare(CLONE_NEWNS) != 0)
        ACC_SKIP("cannot make a mount namespace here (unshare needs root or a user namespace); "
                 "the case did not run");
    CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
    CHECK(mount("tmpfs", "/dev/shm", "tmpfs", 0, opts) == 0);
}

/* The acc segments in /dev/shm. */
static int segments(void)
{
    struct dirent *d;
    int n = 0;
    DIR *dir = opendir("/dev/shm");
    CHECK(dir != NULL);
    while ((d = readdir(dir)) != NULL)
        if (strncmp(d->d_name, "acc-", 4) == 0) {
            printf("  /dev/shm/%s\n", d->d_name);
            n++;
        }
    closedir(dir);
    return n;
}

/* ---- too large a call -------------------------------------------------------------------- */

static const uint64_t big_sizes[] = {4u << 10, 64u << 10, 256u << 10,
                                     1u << 20, 4u << 20,  16u << 20};
#define NBIG (sizeof(big_sizes) / sizeof(big_sizes[0]))

/* Every size once: the result right, or an error naming /dev/shm; the outcome of each in a
 * file per rank.  Then a small call still works: the communicator is not broken. */
static int too_large(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c;
    acc_status_t st, err;
    char name[64];
    FILE *out;
    (void)arg;

    snprintf(name, sizeof(name), "outcome_rank%d", rank);
    CHECK((out = fopen(acc_test_tmp(name), "w")) != NULL);
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    for (size_t i = 0; i < NBIG; i++) {
        call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, big_sizes[i] / 4, 0, 0, 9};
        uint64_t wrong = call_checked(c, &k, &st);
        printf("rank %d, %llu bytes: %s %s\n", rank, (unsigned long long)big_sizes[i],
               acc_status_name(st), st == ACC_OK ? "" : acc_error_message());
        if (st != ACC_OK) {
            CHECK_INT(st, ACC_ERR_NOMEM);
            CHECK_MSG_HAS("/dev/shm (1.0 MiB");
        }
        CHECK_MSG(wrong == 0, "%llu bytes: %llu wrong elements", (unsigned long long)big_sizes[i],
                  (unsigned long long)wrong);
        fprintf(out, "%d\n", st == ACC_OK);
    }
    fclose(out);
    {
        call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 256, 1, 0, 4};
        call_ok(c, &k);
    }
    CHECK_OK(acc_comm_get_async_error(c, &err));
    CHECK_INT(err, ACC_OK);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

static void too_large_case(int tables)
{
    int outcome[4][NBIG], failed = 0;
    private_dev_shm("1m");
    comm_env("gpus=4 nvlink=18", "20000");
    if (tables) {
        /* acc's plans where the tables give acc the size: they stage the caller's buffers in
         * shared memory, so they need more of it than the fallback's ring. */
        build_db(acc_test_tmp("shm.db"), "gpus=4 nvlink=18");
        setenv("ACC_DB", acc_test_tmp("shm.db"), 1);
    }
    ranks_run(4, too_large, NULL, 120);
    for (int r = 0; r < 4; r++) {
        char name[64];
        FILE *f;
        snprintf(name, sizeof(name), "outcome_rank%d", r);
        CHECK((f = fopen(acc_test_tmp(name), "r")) != NULL);
        for (size_t i = 0; i < NBIG; i++)
            CHECK(fscanf(f, "%d", &outcome[r][i]) == 1);
        fclose(f);
    }
    for (size_t i = 0; i < NBIG; i++) {
        for (int r = 1; r < 4; r++)
            CHECK_MSG(outcome[r][i] == outcome[0][i], "%llu bytes: rank 0 %s, rank %d %s",
                      (unsigned long long)big_sizes[i], outcome[0][i] ? "succeeded" : "failed", r,
                      outcome[r][i] ? "succeeded" : "failed");
        failed += !outcome[0][i];
    }
    /* 16 MiB cannot fit in 1 MiB, whatever serves it. */
    CHECK(!outcome[0][NBIG - 1]);
    printf("%d of %zu sizes failed on every rank, naming /dev/shm; the rest were right\n", failed,
           NBIG);
    CHECK_INT(segments(), 0);
}

ACC_TEST(a_call_too_large_for_dev_shm_fails_on_every_rank_naming_it)
{
    too_large_case(0);
}

ACC_TEST(acc_plans_too_large_for_dev_shm_fall_back_or_fail_on_every_rank)
{
    too_large_case(1);
}

/* ---- ranks killed while segments are set up ------------------------------------------------ */

/* Rank 1 comes late to the call that sets a plan up (its first, or one larger than all before
 * it), so rank 0 waits with its segment made and named, and both are killed there. */
static int late_to_set_up(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    int growth = *(int *)arg;
    acc_comm_t *c;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    if (growth) {
        call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 1024, 0, 0, 1};
        call_ok(c, &k);
    }
    if (rank == 1)
        usleep(60000000);
    {
        call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 1u << 18, 0, 0, 2};
        acc_status_t st;
        call_checked(c, &k, &st);
    }
    usleep(60000000);
    return 0;
}

/* Wait until /dev/shm holds an acc segment (rank 0's, made and waiting for rank 1). */
static void wait_for_a_segment(void)
{
    for (int i = 0; i < 2000; i++) {
        struct dirent *d;
        int found = 0;
        DIR *dir = opendir("/dev/shm");
        CHECK(dir != NULL);
        while ((d = readdir(dir)) != NULL)
            found |= strncmp(d->d_name, "acc-", 4) == 0;
        closedir(dir);
        if (found)
            return;
        usleep(10000);
    }
    CHECK_MSG(0, "no segment appeared in /dev/shm");
}

static void kill_all(ranks_t *rs)
{
    for (int r = 0; r < rs->nranks; r++)
        kill(rs->pid[r], SIGKILL);
    ranks_wait(rs, 30);
}

/* A later job of two ranks: its first host-backend communicator cleans up. */
static int later_job(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c;
    call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 4096, 0, 0, 3};
    (void)arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    call_ok(c, &k);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

static void killed_case(int growth, int with_cli)
{
    ranks_t rs;
    private_dev_shm("64m");
    comm_env("gpus=2", "60000");
    ranks_start(&rs, 2, late_to_set_up, &growth);
    wait_for_a_segment();
    kill_all(&rs);
    printf("left by the killed ranks:\n");
    CHECK(segments() > 0);
    if (with_cli) {
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "%s --cleanup", ACC_INFO_EXE);
        CHECK_INT(system(cmd), 0);
    } else {
        ranks_run(2, later_job, NULL, 60);
    }
    printf("after the clean-up:\n");
    CHECK_INT(segments(), 0);
}

ACC_TEST(ranks_killed_setting_a_plan_up_leave_nothing_after_acc_info_cleanup)
{
    killed_case(0, 1);
}

ACC_TEST(ranks_killed_growing_a_plan_leave_nothing_after_the_next_communicator)
{
    killed_case(1, 0);
}
