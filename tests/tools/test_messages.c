/* Messages that misled, read as a user reads them: the NVLink warning when --nvlink-from was
 * passed, a directory as the database, --db into a missing directory, the report's figures
 * between identical runs, and acc-bench's online row when tuning took every iteration. */
#include "tool_run.h"

#include <sys/stat.h>

ACC_TEST(nvlink_warning_only_without_nvlink_from)
{
    char line[8192];
    const char *file = ACC_TEST_DATA_DIR "/topologies/nccl-xml/aws-ofi-nccl-p5.48xl-topo.xml";

    /* aws-ofi-nccl's p5 file lists no NVLink: without --nvlink-from acc says what to do ... */
    snprintf(line, sizeof(line), "acc-compile --topo '%s' --print-topo", file);
    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_err, "lists no NVLink", line);
    TR_HAS(tr_err, "pass --nvlink-from PLATFORM", line);
    /* ... and with it, nothing of the kind: the NVLinks are there, and said to be assumed. */
    snprintf(line, sizeof(line), "acc-compile --topo '%s' --nvlink-from dgx-h100 --print-topo",
             file);
    CHECK_INT(tr_run(line, NULL, 0), 0);
    CHECK_MSG(strstr(tr_err, "--nvlink-from") == NULL &&
                  strstr(tr_out, "pass --nvlink-from") == NULL,
              "%s still says to pass --nvlink-from:\n%s%s", line, tr_err, tr_out);
    TR_HAS(tr_out, "NVLinks taken from the shipped platform dgx-h100", line);
}

ACC_TEST(a_directory_as_the_database_says_so)
{
    char dir[4096], line[8192];

    snprintf(dir, sizeof(dir), "%s", acc_test_tmp("dbdir"));
    mkdir(dir, 0755);
    /* As the runtime's database (ACC_DB): the fallback's reason. */
    tr_fill(line, sizeof(line),
            "ACC_DB='{dir}' acc-bench --runtime host --nranks 2 --topo gpus=2 -b 1K -e 1K -n 1",
            "dir", dir);
    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_out, "is a directory, not a database file; name the file in it", line);
    CHECK_MSG(strstr(tr_out, "disk I/O error") == NULL && strstr(tr_err, "disk I/O error") == NULL,
              "%s:\n%s%s", line, tr_out, tr_err);
    /* As acc-info's. */
    tr_fill(line, sizeof(line), "acc-info --db '{dir}'", "dir", dir);
    CHECK_INT(tr_run(line, NULL, 0), 1);
    TR_HAS(tr_err, "is a directory, not a database file", line);
    /* As acc-compile's output: nothing was written. */
    tr_fill(line, sizeof(line), "acc-compile --topo gpus=2 --db '{dir}'", "dir", dir);
    CHECK_INT(tr_run(line, NULL, 0), 3);
    TR_HAS(tr_err, "is a directory, not a database file", line);
}

ACC_TEST(db_into_a_missing_directory_exits_3)
{
    char line[8192];

    tr_fill(line, sizeof(line), "acc-compile --topo gpus=2 --db '{dir}/no-such-dir/acc.db'", "dir",
            acc_test_tmp("x"));
    CHECK_INT(tr_run(line, NULL, 0), 3);
    TR_HAS(tr_err, "cannot create the database: directory", line);
    TR_HAS(tr_err, "no-such-dir does not exist; create it or choose another path", line);
}

ACC_TEST(identical_reports_are_identical)
{
    /* The sweep's threads finish in varying orders, so how many simulations pruning spared
     * varies; the report says only what does not. */
    const char *line =
        "acc-compile --topo 'nodes=2 gpus=4 nvlink=18 nic=4x400' --report --coll allreduce";
    static char first[TR_CAP];

    CHECK_INT(tr_run(line, NULL, 0), 0);
    snprintf(first, sizeof(first), "%s", tr_out);
    TR_HAS(first, "variants verified)", line);
    CHECK(strstr(first, "simulations") == NULL);
    for (int i = 0; i < 2; i++) {
        CHECK_INT(tr_run(line, NULL, 0), 0);
        CHECK_STR(tr_out, first);
    }
}

ACC_TEST(online_row_measures_after_tuning_ends)
{
    /* A small model, so that the iterations are quick: three gradients, 5 ms of compute. */
    static const char profile[] =
        "version: 1\nname: toy-online\nparameters: 3000\ncompute:\n"
        "  - gpu: sm_90\n    precision: fp16\n    batch: 1\n    iteration_ms: 5\n"
        "    source: \"written for tests/tools/test_messages.c\"\n"
        "tensors:\n"
        "  - {name: a, elems: 1000, dtype: float, ready: 0.3}\n"
        "  - {name: b, elems: 1000, dtype: float, ready: 0.6}\n"
        "  - {name: c, elems: 1000, dtype: float, ready: 1}\n";
    char path[4096], db[4096], cmd[8192], line[8192];

    snprintf(path, sizeof(path), "%s", acc_test_tmp("toy-online.yaml"));
    snprintf(db, sizeof(db), "%s", acc_test_tmp("online.db"));
    CHECK_OK(acc_write_file(path, profile, sizeof(profile) - 1));
    tr_fill(cmd, sizeof(cmd),
            "ACC_LOG_LEVEL=error acc-bench --model '{profile}' --runtime host --nranks 2 "
            "--topo 'gpus=2 nvlink=18' --policy online --iters 10 --db '{db}'",
            "profile", path);
    tr_fill(line, sizeof(line), cmd, "db", db);
    CHECK_MSG(tr_run(line, NULL, 0) == 0, "%s: %s", line, tr_err);
    printf("%s", tr_out);
    /* With the default budget the search takes more than --iters iterations: the replay runs
     * until it ends, then --iters more, and the row measures those, saying how long tuning took
     * (it once printed "0 iterations, measured -" without a word). */
    TR_HAS(tr_out, "  online      10 ", line);
    TR_HAS(tr_out, "(online from the default, tuned in ", line);
    CHECK_MSG(strstr(tr_out, "nothing measured") == NULL, "%s", line);
}
