/* Requests too large for the machine: refused up front with a message saying what to do when
 * their estimate exceeds the memory the program may use (or, for a sweep above 4,096 ranks,
 * the generators it cannot build left out by name), stopped within the budget when the
 * estimate passes but the run outgrows it; acc-bench's rank count capped; its rank processes
 * stopped with it on SIGTERM and SIGINT. */
#include "tool_run.h"

#include <errno.h>
#include <sys/prctl.h>
#include <time.h>

/* Above 4,096 ranks the sweep works by class: the report comes, its class plans priced on a
 * node's quotient, and the generators whose explicit form is too large are named with why,
 * not the whole sweep refused.  A flat ring's explicit plan of 65,536 ranks is still refused
 * up front. */
ACC_TEST(report_by_class_above_4096_ranks)
{
    const char *line =
        "acc-compile --topo 'nodes=520 gpus=8 nvlink=18 nic=8x400' --report --coll allreduce";

    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_out, "4160 ranks (520 nodes x 8 GPUs)", line);
    TR_HAS(tr_out, "left out at 4160 ranks (plans by class above 4096):", line);
    TR_HAS(tr_out,
           "  allreduce rhd: its proof rank by rank would track 4160 ranks x (4096 + 4096 "
           "+ 0) chunks",
           line);
    TR_HAS(tr_out, "Selection table for allreduce", line);
    /* the class plans were swept: acc's best at 4G is the default hierarchical plan with a
     * ring between nodes, proven on one node */
    TR_HAS(tr_out, "4G  hier lanes=2 chunks=1 inner=direct outer=ring", line);

    /* Its database keeps the tables' plans in class form alone, which --print-selection
     * reads for the rule that keeps GPUs on NCCL. */
    {
        char cmd[1024];
        tr_fill(cmd, sizeof(cmd),
                "acc-compile --topo 'nodes=520 gpus=8 nvlink=18 nic=8x400' --coll allreduce "
                "--db '{db}'",
                "db", acc_test_tmp("by_class.db"));
        CHECK_INT(tr_run(cmd, NULL, 0), 0);
        TR_HAS(tr_out, "allreduce", cmd);
        tr_fill(cmd, sizeof(cmd),
                "acc-compile --topo 'nodes=520 gpus=8 nvlink=18 nic=8x400' --db '{db}' "
                "--print-selection",
                "db", acc_test_tmp("by_class.db"));
        CHECK_INT(tr_run(cmd, NULL, 0), 0);
        TR_HAS(tr_out, "the cuda backend runs acc's plans on up to 64 ranks; NCCL serves 4160",
               cmd);
    }

    line = "acc-compile --topo 'nodes=1024 gpus=64 nic=8x400' --coll allgather --algo ring "
           "--emit-plan -";
    CHECK_INT(tr_run(line, NULL, 0), 1);
    TR_HAS(tr_err, "the plan of allgather on 65536 ranks", line);
    TR_HAS(tr_err, "build tables for fewer ranks", line);
}

ACC_TEST(a_run_that_outgrows_its_budget_stops_within_it)
{
    /* 1024 ranks: the estimate (224 MiB for the ring) passes 300 MiB, the sweep (about 600 MiB)
     * does not. */
    const char *line = "ACC_MEMORY_BUDGET=300M acc-compile --topo 'nodes=16 gpus=64 nic=8x400' "
                       "--report --coll allreduce";
    CHECK_INT(tr_run(line, NULL, 0), 1);
    printf("%s\n", tr_err);
    TR_HAS(tr_err, "out of memory", line);
    TR_HAS(tr_err, "this run needed more memory than the 300 MiB it may use (ACC_MEMORY_BUDGET)",
           line);
    /* A budget that is no size is a bad setting. */
    line = "ACC_MEMORY_BUDGET=lots acc-info";
    CHECK_INT(tr_run(line, NULL, 0), 2);
    TR_HAS(tr_err, "ACC_MEMORY_BUDGET='lots' is not a size", line);
}

ACC_TEST(acc_bench_caps_its_ranks_and_estimates_its_memory)
{
    const char *line = "acc-bench --runtime host --nranks 100000 --topo gpus=4";
    CHECK_INT(tr_run(line, NULL, 0), 2);
    TR_HAS(tr_err, "--nranks 100000", line);
    TR_HAS(tr_err, "at most 1024", line);

    line = "acc-bench --runtime host --nranks 8 --topo gpus=8 -b 1M -e 8G";
    CHECK_INT(tr_run(line, NULL, 0), 1);
    TR_HAS(tr_err, "8 rank processes with buffers of up to 8589934592 bytes needs about 256 GiB",
           line);
    TR_HAS(tr_err, "use fewer ranks (--nranks) or a smaller -e", line);

    line = "acc-bench --backend host --topo gpus=8 --coll allreduce --algo ring -e 16G";
    CHECK_INT(tr_run(line, NULL, 0), 1);
    TR_HAS(tr_err, "sweep of 8 ranks up to 17179869184 bytes per buffer needs about 512 GiB", line);

    line = "acc-bench --runtime host --nranks 4 --topo gpus=4 --model gpt2-xl --iters 2";
    CHECK_INT(tr_run(line, NULL, 0), 1);
    TR_HAS(tr_err, "acc-bench --model gpt2-xl on 4 rank processes", line);
}

/* The process ids of pid's children (from /proc), at most cap; how many. */
static int children(pid_t pid, pid_t *out, int cap)
{
    char path[64], text[4096];
    int n = 0;
    char *p = text;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
    tr_slurp(path, text, sizeof(text));
    while (n < cap && *p) {
        long v = strtol(p, &p, 10);
        if (v > 0)
            out[n++] = (pid_t)v;
        while (*p == ' ')
            p++;
    }
    return n;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Start acc-bench on four rank processes with a long sweep, send it sig once its ranks run,
 * and check that it ends by that signal and that every rank ends with it.  The deadlines only
 * turn a hang into a failure. */
static void stop_with(int sig)
{
    char exe[4096];
    pid_t bench, ranks[16];
    double t0;
    int n = 0, status;

    /* Ranks whose parent ends are handed to this process, so that they can be waited for. */
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    snprintf(exe, sizeof(exe), "%s/acc-bench", ACC_BENCH_DIR);
    fflush(NULL);
    bench = fork();
    CHECK(bench >= 0);
    if (bench == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(126);
        setenv("ACC_LOG_LEVEL", "error", 1);
        execl(exe, exe, "--runtime", "host", "--nranks", "4", "--topo", "gpus=4", "-b", "1M", "-e",
              "1M", "-n", "1000000", "-c", "0", (char *)NULL);
        _exit(127);
    }
    for (t0 = now(); n < 4 && now() - t0 < 120; usleep(20000))
        n = children(bench, ranks, 16);
    CHECK_INT(n, 4);
    usleep(200000); /* into their collectives */
    CHECK(kill(bench, sig) == 0);
    t0 = now();
    while (waitpid(bench, &status, WNOHANG) == 0) {
        CHECK_MSG(now() - t0 < 60, "acc-bench still runs a minute after signal %d", sig);
        usleep(20000);
    }
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == sig, "acc-bench ended with status 0x%x",
              status);
    /* Every rank ended too (they are this process's children now, if they outlived it). */
    for (int r = 0; r < n; r++) {
        while (kill(ranks[r], 0) == 0) {
            waitpid(ranks[r], NULL, WNOHANG);
            CHECK_MSG(now() - t0 < 60, "rank process %d still runs after acc-bench ended",
                      (int)ranks[r]);
            usleep(20000);
        }
        CHECK(errno == ESRCH);
    }
}

ACC_TEST(acc_bench_ranks_stop_on_sigterm)
{
    stop_with(SIGTERM);
}

ACC_TEST(acc_bench_ranks_stop_on_sigint)
{
    stop_with(SIGINT);
}
