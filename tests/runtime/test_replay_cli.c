/*
 * acc-bench --model as a user runs it: a model replayed on four host-backend ranks under every
 * policy, then online tuning leaves a measured optimum that acc-tune show lists beside the
 * simulated one.  The model is a small profile written for the test, so that it runs in
 * seconds; the shipped ones replay the same way, only longer.
 */
#include "acc_test.h"
#include "cli_util.h"
#include "toy_model.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char out[1 << 20];

/* Run a command line; its standard output in out, its exit status. */
static int run(const char *cmd)
{
    return cli_run(cmd, out, sizeof(out));
}

/* 64 gradients of 64 KiB over a 10 ms backward pass, 30 ms of compute in all, as a file. */
static const char *toy_profile(void)
{
    return toy_model_file(acc_test_tmp("replay-toy.yaml"), "replay-toy", 64, 16384, 30, 20);
}

ACC_TEST(every_policy_then_a_measured_optimum)
{
    const char *model = toy_profile(), *db = acc_test_tmp("replay.db");
    char cmd[8192], wal[4096];

    unlink(db);
    snprintf(wal, sizeof(wal), "%s-wal", db);
    unlink(wal);
    setenv("ACC_LOG_LEVEL", "error", 1);
    setenv("ACC_TUNE_BUDGET", "24", 1);
    /* acc-tune's optimum of this key, simulated on the topology's H100s. */
    snprintf(cmd, sizeof(cmd), "%s --model '%s' --topo gpus=4 --nccl-only --quiet --db '%s'",
             ACC_TUNE_EXE, model, db);
    CHECK_INT(run(cmd), 0);
    snprintf(cmd, sizeof(cmd),
             "%s --model '%s' --runtime host --nranks 4 --topo gpus=4 --iters 40 --db '%s'",
             ACC_BENCH_EXE, model, db);
    CHECK_INT(run(cmd), 0);
    printf("%s", out);
    CHECK(strstr(out, "# acc-bench --model replay-toy --runtime host: 4 ranks"));
    CHECK(strstr(out, "\n  ddp ") && strstr(out, "(DDP defaults)"));
    CHECK(strstr(out, "\n  horovod ") && strstr(out, "(Horovod defaults)"));
    CHECK(strstr(out, "\n  acc ") && strstr(out, "(acc simulated optimum)"));
    CHECK(strstr(out, "\n  negotiate ") && strstr(out, "(Horovod's defaults, no coordinator)"));
    CHECK(strstr(out, "\n  online ") && strstr(out, "from the simulated optimum, tuned in"));
    CHECK(strstr(out, "# copies on this machine (for the prediction): "));
    /* acc-tune show: the measured optimum beside the simulated one, and the measured runs. */
    snprintf(cmd, sizeof(cmd), "%s show --db '%s'", ACC_TUNE_EXE, db);
    CHECK_INT(run(cmd), 0);
    printf("%s", out);
    CHECK(strstr(out, "optima (1)") && strstr(out, "measured (online tuning)"));
    CHECK(strstr(out, "\n    itersim ") && strstr(out, "\n    measured "));
    CHECK(strstr(out, " measured "));
    /* An unknown policy is a usage error. */
    snprintf(cmd, sizeof(cmd), "%s --model '%s' --runtime host --nranks 4 --policy fastest",
             ACC_BENCH_EXE, model);
    CHECK_INT(run(cmd), 2);
    CHECK(strstr(out, "--policy takes a list of ddp, horovod, acc, negotiate, online and record"));
}

/* A faster network emulated on a slower one: gradients and fusion sizes scaled, ranks marking
 * gradients in orders of their own; online tuning keeps its measurements apart. */
ACC_TEST(scaled_gradients_and_orders_of_their_own)
{
    const char *model = toy_profile(), *db = acc_test_tmp("scaled.db");
    char cmd[8192], scaled[4200];

    unlink(db);
    snprintf(scaled, sizeof(scaled), "%s.scaled.db", db);
    unlink(scaled);
    setenv("ACC_LOG_LEVEL", "error", 1);
    setenv("ACC_TUNE_BUDGET", "12", 1);
    snprintf(cmd, sizeof(cmd), "%s --model '%s' --topo gpus=4 --nccl-only --quiet --db '%s'",
             ACC_TUNE_EXE, model, db);
    CHECK_INT(run(cmd), 0);
    snprintf(cmd, sizeof(cmd),
             "%s --model '%s' --runtime host --nranks 4 --topo gpus=4 --iters 16 --db '%s' "
             "--grad-scale 1/4 --jitter 8 --policy ddp,negotiate,acc,online",
             ACC_BENCH_EXE, model, db);
    CHECK_INT(run(cmd), 0);
    printf("%s", out);
    /* 64 gradients of 64 KiB: 4.2 MB, a quarter of it */
    CHECK(strstr(out, "# gradients and fusion sizes x 0.25 (1.0 MB of gradients per "
                      "iteration); ranks mark runs of 8 gradients in orders of their own"));
    CHECK(strstr(out, "policy=ddp fusion=6400K first=256K")); /* DDP's 25M and 1M / 4 */
    CHECK(strstr(out, "policy=negotiate fusion=32M"));
    CHECK(strstr(out, "\n  online ") && access(scaled, F_OK) == 0);
    snprintf(cmd, sizeof(cmd), "%s --model '%s' --runtime host --nranks 4 --grad-scale 2",
             ACC_BENCH_EXE, model);
    CHECK_INT(run(cmd), 2);
    CHECK(strstr(out, "--grad-scale takes a fraction in (0, 1]"));
}
