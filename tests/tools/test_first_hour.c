/* The mistakes of a first hour with acc (issue 29), made as a new user makes them: each gets a
 * message that names the fix and what to do next, and the documented exit status (0 success,
 * 1 unusable input, 2 bad command line or setting, 3 output not written); nothing says it
 * succeeded when it did not. */
#include "tool_run.h"

#include <sys/stat.h>

ACC_TEST(acc_info_names_every_bad_setting)
{
    const char *line = "ACC_TIMEOUT_MS=abc ACC_LOG_LEVEL=verbose acc-info --settings";

    /* The table still shows the values, marked; the error names both variables and exits 2,
     * as acc-compile does for the same settings. */
    CHECK_INT(tr_run(line, NULL, 0), 2);
    TR_HAS(tr_out, "now 'abc'  <- INVALID", line);
    TR_HAS(tr_err, "ACC_TIMEOUT_MS='abc' is not an integer", line);
    TR_HAS(tr_err, "ACC_LOG_LEVEL='verbose' is not a log level", line);
    TR_HAS(tr_err, "correct them or unset them", line);
    line = "ACC_LOG_LEVEL=verbose acc-info --platforms";
    CHECK_INT(tr_run(line, NULL, 0), 2);
    TR_HAS(tr_out, "dgx-h100", line);
    TR_HAS(tr_err, "ACC_LOG_LEVEL='verbose' is not a log level", line);
    line = "ACC_LOG_LEVEL=verbose acc-compile --topo gpus=2";
    CHECK_INT(tr_run(line, NULL, 0), 2);
    TR_HAS(tr_err, "ACC_LOG_LEVEL='verbose' is not a log level", line);
}

ACC_TEST(an_option_given_twice_is_refused)
{
    const char *lines[] = {
        "acc-compile --topo dgx-h100 --topo dgx-a100",
        "acc-bench --topo gpus=2 --topo gpus=4 --backend host -b 1K -e 1K",
        "acc-tune --model resnet50 --topo dgx-h100 --topo dgx-a100",
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        CHECK_INT(tr_run(lines[i], NULL, 0), 2);
        TR_HAS(tr_err, "--topo given twice", lines[i]);
    }
}

/* A job run from the build tree reads the database the README's set-up makes there (build/acc.db,
 * scripts/setup.sh), without ACC_DB: it is in the search, named when it is missing. */
ACC_TEST(a_job_from_the_build_tree_finds_build_acc_db)
{
    char line[8192], db[4096], tools[4096];
    const char *build = acc_build_tree_dir();
    struct stat sb;

    CHECK_MSG(build != NULL, "the tests run from the build tree, but acc does not know it");
    CHECK(realpath(ACC_TOOLS_DIR "/..", tools) != NULL);
    CHECK_STR(build, tools);
    snprintf(db, sizeof(db), "%s/acc.db", build);
    snprintf(line, sizeof(line),
             "env -u ACC_DB ACC_LOG_LEVEL=warn acc-bench --runtime host --nranks 2 --topo gpus=2 "
             "-b 1K -e 1K -n 1 -w 0");
    CHECK_INT(tr_run(line, NULL, 0), 0);
    if (stat(db, &sb) != 0) {
        TR_HAS(tr_err, "no database: ACC_DB is not set and neither /etc/acc/acc.db", line);
        TR_HAS(tr_err, db, line);
        TR_HAS(tr_err, "then set ACC_DB=FILE", line);
    } else {
        /* The set-up's database is there (it holds dgx-h100, not two GPUs): the job read it. */
        CHECK_MSG(strstr(tr_err, "no database") == NULL, "%s ignores %s:\n%s", line, db, tr_err);
    }
}

/* A job on a machine without a GPU and without a database: the advice is ACC_TOPO (not a
 * command-line flag), and the missing database is said in the same line. */
ACC_TEST(the_fallback_advice_names_acc_topo_and_the_database)
{
    const char *line = "env -u ACC_TOPO ACC_DB=/nonexistent/acc.db ACC_LOG_LEVEL=warn acc-bench "
                       "--runtime host --nranks 2 -b 1K -e 1K -n 1 -w 0";
    struct stat sb;

    if (stat("/dev/nvidiactl", &sb) == 0)
        ACC_SKIP("this machine has an NVIDIA driver: ACC_TOPO=auto may well find its GPUs");
    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_err, "ACC_TOPO=SRC", line);
    TR_HAS(tr_err, "/nonexistent/acc.db", line);
}

/* A mistyped platform is a command-line mistake (2) that gets the name meant. */
ACC_TEST(a_mistyped_platform_gets_did_you_mean_and_exit_2)
{
    const char *lines[] = {"acc-compile --topo dgx-h10", "acc-compile --topo DGX-H100",
                           "acc-compile --topo p5.48xl-topo.xml --nvlink-from dgx-h1000"};
    for (size_t i = 0; i < 2; i++) {
        CHECK_INT(tr_run(lines[i], NULL, 0), 2);
        TR_HAS(tr_err, "did you mean dgx-h100?", lines[i]);
    }
    /* A file that is not there is named as such, also exit 2: the command line names nothing. */
    CHECK_INT(tr_run(lines[2], NULL, 0), 2);
    TR_HAS(tr_err, "'p5.48xl-topo.xml' is no file", lines[2]);
}

/* --list-platforms says what each platform is. */
ACC_TEST(list_platforms_says_gpus_nodes_and_nics)
{
    const char *line = "acc-compile --list-platforms";
    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_out,
           "dgx-h100                 1 node x 8 H100 SXM5 80GB, NVLink 18 to NVSwitch, "
           "8 NICs x 400 Gb/s\n",
           line);
    TR_HAS(tr_out, "pcie-8gpu                1 node x 8 L40S, no NVLink", line);
}

/* A plan that cannot be written: the error, what to do, and no line saying it verified. */
ACC_TEST(emit_plan_that_fails_says_so_first)
{
    char line[8192];
    const char *base = "acc-compile --topo dgx-h100 --coll allreduce --algo ring";

    snprintf(line, sizeof(line), "%s --emit-plan /proc/acc-no-such/x.yaml", base);
    CHECK_INT(tr_run(line, NULL, 0), 3);
    CHECK_MSG(strstr(tr_out, "verified") == NULL, "%s says verified:\n%s", line, tr_out);
    TR_HAS(tr_err, "nothing was written: give a path in a directory you can write", line);
    /* Written: the line says where, and which lane count it took. */
    tr_fill(line, sizeof(line),
            "acc-compile --topo dgx-h100 --coll allreduce --algo ring "
            "--emit-plan '{f}'",
            "f", acc_test_tmp("ring.yaml"));
    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_out, "2 lanes (the generator's default; --lanes N for others", line);
    TR_HAS(tr_out, "plan written to ", line);
}

/* --print-selection's tables name the topology; acc-tune export's error names the network (none
 * on one node) and the command that stores an optimum. */
ACC_TEST(tables_and_optima_are_named)
{
    char line[8192], db[4096];

    snprintf(db, sizeof(db), "%s", acc_test_tmp("acc.db"));
    tr_fill(line, sizeof(line),
            "acc-compile --topo 'gpus=2 nvlink=18' --db '{db}' --coll allreduce", "db", db);
    CHECK_INT(tr_run(line, NULL, 0), 0);
    tr_fill(line, sizeof(line),
            "acc-compile --topo 'gpus=2 nvlink=18' --db '{db}' --print-selection --coll allreduce",
            "db", db);
    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_out, "allreduce on synthetic-1x2-h100 (fingerprint ", line);
    tr_fill(line, sizeof(line),
            "acc-tune export --format env --model resnet50 --topo gpus=2 "
            "--db '{db}'",
            "db", db);
    CHECK_INT(tr_run(line, NULL, 0), 1);
    TR_HAS(tr_err, "no network (one node)", line);
    CHECK_MSG(strstr(tr_err, "network ''") == NULL, "%s:\n%s", line, tr_err);
    TR_HAS(tr_err, "store one with acc-tune --model resnet50 --topo 'gpus=2'", line);
}

/* A synthetic machine of an NVLink part without nvlink=: PCIe plans, said under "Assumed" with
 * the key that adds the fabric; and "Assumed" cites what a user can read, not a source file. */
ACC_TEST(synthetic_without_nvlink_is_listed_as_assumed)
{
    const char *line = "acc-compile --topo gpus=8 --print-topo";
    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_out, "no NVLink between the 8 H100 SXM5 80GB GPUs", line);
    TR_HAS(tr_out, "add nvlink=18 (schedules/TOPOLOGY.md", line);
    line = "acc-compile --topo 'gpus=8 nvlink=18' --print-topo";
    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_out, "Assumed\n  nothing", line);
    line = "acc-compile --topo aws-p4d --print-topo";
    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_out, "bandwidth by CPU type (schedules/TOPOLOGY.md, 'SMP bandwidth by CPU type')",
           line);
    CHECK_MSG(strstr(tr_out, ".c)") == NULL && strstr(tr_out, ".c,") == NULL,
              "%s cites a source file:\n%s", line, tr_out);
}

/* --report of every collective is short (each one's ranges) unless --full asks for every size;
 * --coll C still gives that collective's every size. */
ACC_TEST(report_without_coll_is_short_unless_full)
{
    static char all[TR_CAP];
    const char *line = "acc-compile --topo 'gpus=2 nvlink=18' --report";

    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_out, "allreduce on synthetic-1x2-h100: 2 ranks (1 node x 2 GPUs), float: ", line);
    TR_HAS(tr_out, "--full for every one)", line);
    CHECK_MSG(strstr(tr_out, "acc_us") == NULL, "%s prints every size:\n%s", line, tr_out);
    snprintf(all, sizeof(all), "%s", tr_out);
    line = "acc-compile --topo 'gpus=2 nvlink=18' --report --full";
    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_out, "acc_us", line);
    TR_HAS(tr_out, "Selection table for reduce_scatter", line);
    CHECK(strlen(tr_out) > 3 * strlen(all));
    line = "acc-compile --topo 'gpus=2 nvlink=18' --full";
    CHECK_INT(tr_run(line, NULL, 0), 2);
    TR_HAS(tr_err, "--full goes with --report", line);
}

/* acc-bench measures the -e size the steps would pass (nccl-tests stops below it). */
ACC_TEST(bench_sweep_reaches_its_end)
{
    const char *line = "acc-bench --backend host --topo gpus=2 --coll allreduce --algo ring "
                       "-b 8 -e 64K -f 4 -n 1 -w 0 -c 0";
    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_out, "\n       32768 ", line);
    TR_HAS(tr_out, "\n       65536 ", line);
    CHECK_MSG(strstr(tr_out, "\n      131072 ") == NULL, "%s passes -e:\n%s", line, tr_out);
}

/* acc-compile --db again from the same inputs: said, at once, and the file's bytes untouched;
 * other options rebuild. */
ACC_TEST(db_again_changes_no_byte)
{
    char line[8192], db[4096];

    snprintf(db, sizeof(db), "%s", acc_test_tmp("acc.db"));
    tr_fill(line, sizeof(line), "acc-compile --topo 'gpus=2 nvlink=18' --db '{db}'", "db", db);
    CHECK_INT(tr_run(line, NULL, 0), 0);
    tr_fill(line, sizeof(line), "cp '{db}' '{db}.first'", "db", db);
    CHECK_INT(system(line), 0);
    tr_fill(line, sizeof(line), "acc-compile --topo 'gpus=2 nvlink=18' --db '{db}'", "db", db);
    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_out,
           "unchanged, built from the same topology and options by this acc; nothing "
           "written",
           line);
    tr_fill(line, sizeof(line), "cmp '{db}' '{db}.first'", "db", db);
    CHECK_MSG(system(line) == 0, "the second --db changed the file's bytes");
    /* Another collective list is another build. */
    tr_fill(line, sizeof(line),
            "acc-compile --topo 'gpus=2 nvlink=18' --db '{db}' --coll allreduce", "db", db);
    CHECK_INT(tr_run(line, NULL, 0), 0);
    TR_HAS(tr_out, "allreduce ", line);
    CHECK(strstr(tr_out, "unchanged") == NULL);
}
