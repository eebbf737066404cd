/*
 * ranks.h - run a test body as N processes, one rank each, as a launcher would: the parent
 * makes a unique id whose rendezvous rank 0 serves (acc_unique_id_local: no thread in the
 * parent while it forks), forks the ranks, and waits for all of them
 * with a deadline, killing the rest when it passes.  A rank's body returns 0 for success; a
 * failed CHECK inside it ends that process with status 1.  Header-only, for tests/runtime.
 */
#ifndef RANKS_H
#define RANKS_H

#include "acc_runtime.h"
#include "acc_test.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RANKS_MAX 16

typedef int (*rank_fn_t)(int rank, int nranks, const acc_unique_id_t *id, void *arg);

typedef struct {
    pid_t pid[RANKS_MAX];
    int status[RANKS_MAX]; /* exit status, 128 + signal, or -1 when it had to be killed */
    int nranks;
} ranks_t;

/* Fork the ranks; each runs fn and exits with its result.  The id's rendezvous is served by
 * rank 0 (acc_unique_id_local), so the parent runs no thread while it forks; with make_id 0
 * the ranks get a zeroed id, for ranks that make their own (an NCCL id from rank 0). */
static inline void ranks_start_id(ranks_t *rs, int nranks, rank_fn_t fn, void *arg, int make_id)
{
    acc_unique_id_t id;
    CHECK(nranks >= 1 && nranks <= RANKS_MAX);
    memset(&id, 0, sizeof(id));
    if (make_id)
        CHECK_OK(acc_unique_id_local(&id));
    rs->nranks = nranks;
    fflush(stdout);
    fflush(stderr);
    for (int r = 0; r < nranks; r++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            int rc = fn(r, nranks, &id, arg);
            fflush(stdout);
            fflush(stderr);
            _exit(rc);
        }
        rs->pid[r] = pid;
        rs->status[r] = -2;
    }
}

static inline void ranks_start(ranks_t *rs, int nranks, rank_fn_t fn, void *arg)
{
    ranks_start_id(rs, nranks, fn, arg, 1);
}

/* Is every thread of this process but the caller asleep, one of them at least in poll?  A test
 * that must fork while a thread of acc's runs (the rendezvous thread of acc_get_unique_id)
 * waits for this first: a fork copies the locks other threads hold at that instant, and a
 * thread still starting (the sanitizers' runtimes allocate and register it then) would leave
 * the child a lock nobody will release.  Parked in poll, acc's thread holds none; the other
 * sleeps allowed are those of the sanitizers' background threads (ThreadSanitizer's). */
static inline int ranks_others_parked_in_poll(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    long self = (long)syscall(SYS_gettid);
    int asleep = 1, in_poll = 0;
    CHECK(d != NULL);
    while (asleep && (e = readdir(d)) != NULL) {
        char path[64];
        long tid = strtol(e->d_name, NULL, 10), nr = -1;
        FILE *f;
        int polls;
        if (tid <= 0 || tid == self)
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", tid);
        if (!(f = fopen(path, "r")))
            continue; /* the thread has ended */
        if (fscanf(f, "%ld", &nr) != 1)
            nr = -1; /* "running": in no system call */
        fclose(f);
        polls = nr == SYS_ppoll
#ifdef SYS_poll
                || nr == SYS_poll
#endif
            ;
        in_poll |= polls;
        asleep = polls || nr == SYS_clock_nanosleep
#ifdef SYS_nanosleep
                 || nr == SYS_nanosleep
#endif
            ;
    }
    closedir(d);
    return asleep && in_poll;
}

/* Wait (up to 10 s, failing the case after) until the other threads are parked so, and still
 * are a moment later. */
static inline void ranks_wait_others_parked(void)
{
    for (int i = 0, settled = 0; settled < 3; i++) {
        CHECK_MSG(i < 2000,
                  "the threads of this process never settled (one in poll, the others asleep)");
        settled = ranks_others_parked_in_poll() ? settled + 1 : 0;
        usleep(5000);
    }
}

/* Wait up to secs for every rank; those still running are killed and get status -1.  Returns
 * how many ranks did not exit with 0. */
static inline int ranks_wait(ranks_t *rs, double secs)
{
    struct timespec t0, t;
    int left = rs->nranks, bad = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (left > 0) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid > 0) {
            for (int r = 0; r < rs->nranks; r++)
                if (rs->pid[r] == pid) {
                    rs->status[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                    left--;
                }
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 > secs)
            break;
        usleep(2000);
    }
    for (int r = 0; r < rs->nranks; r++) {
        if (rs->status[r] == -2) {
            kill(rs->pid[r], SIGKILL);
            waitpid(rs->pid[r], NULL, 0);
            rs->status[r] = -1;
        }
        if (rs->status[r] != 0) {
            fprintf(stderr, "rank %d: %s %d\n", r,
                    rs->status[r] < 0 ? "killed at the deadline, status" : "exit status",
                    rs->status[r]);
            bad++;
        }
    }
    return bad;
}

/* Is there a GPU?  A child asks: a process that has touched CUDA cannot fork ranks that use
 * it. */
static inline int ranks_gpu_present(void)
{
    pid_t pid;
    int st = 0;
    fflush(NULL);
    if ((pid = fork()) == 0)
        _exit(acc_cuda_init(0) == ACC_OK ? 0 : 1);
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Skip the case without a GPU. */
static inline void ranks_skip_without_gpu(void)
{
    if (!ranks_gpu_present())
        ACC_SKIP("no GPU");
}

/* Start, wait, and fail the case unless every rank succeeded. */
static inline void ranks_run(int nranks, rank_fn_t fn, void *arg, double secs)
{
    ranks_t rs;
    ranks_start(&rs, nranks, fn, arg);
    CHECK_MSG(ranks_wait(&rs, secs) == 0, "%d ranks: not every rank succeeded", nranks);
}

/* The same for ranks that make their own rendezvous (ranks_start_id with make_id 0). */
static inline void ranks_run_own_id(int nranks, rank_fn_t fn, void *arg, double secs)
{
    ranks_t rs;
    ranks_start_id(&rs, nranks, fn, arg, 0);
    CHECK_MSG(ranks_wait(&rs, secs) == 0, "%d ranks: not every rank succeeded", nranks);
}

#endif
