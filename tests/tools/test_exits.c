/* Exit status 3 means "output not written", for every program and every output, standard
 * output included: each program's outputs sent to /dev/full exit 3 with a message naming what
 * was lost, a device named as an output file is written in place and stays a device, and a
 * disk that fills up half way leaves the previous file whole under its name, with no partial
 * file beside it. */
#include "tool_run.h"

#include <sys/stat.h>

/* A database with a topology and an optimum, for the programs that read one. */
static const char *tuned_db(void)
{
    static char path[4096];
    char line[8192];

    snprintf(path, sizeof(path), "%s", acc_test_tmp("tuned.db"));
    if (access(path, F_OK) == 0)
        return path;
    tr_fill(line, sizeof(line), "acc-compile --topo 'gpus=4 nvlink=18' --db '{db}'", "db", path);
    CHECK_MSG(tr_run(line, NULL, 0) == 0, "%s: %s", line, tr_err);
    tr_fill(line, sizeof(line),
            "acc-tune --model resnet50 --topo 'gpus=4 nvlink=18' --strategy bayes --budget 4 "
            "--nccl-only --quiet --db '{db}'",
            "db", path);
    CHECK_MSG(tr_run(line, NULL, 0) == 0, "%s: %s", line, tr_err);
    return path;
}

ACC_TEST(standard_output_to_a_full_device_exits_3)
{
    static const char *const lines[] = {
        "acc-compile --topo dgx-h100",
        "acc-compile --topo dgx-h100 --print-topo --json",
        "acc-compile --topo 'gpus=4 nvlink=18' --report --coll allreduce",
        "acc-compile --topo 'gpus=4 nvlink=18' --report --coll allreduce --json",
        "acc-compile --topo 'gpus=4 nvlink=18' --list-algos",
        "acc-compile --list-platforms",
        "acc-compile --topo 'gpus=4 nvlink=18' --export-topo yaml",
        "acc-compile --topo 'gpus=4 nvlink=18' --export-topo nccl-xml -o -",
        "acc-compile --topo 'gpus=4 nvlink=18' --coll allreduce --algo ring --emit-plan -",
        "acc-compile --topo 'gpus=4 nvlink=18' --db '{db}' --print-selection",
        "acc-compile --help",
        "acc-info",
        "acc-info --settings",
        "acc-info --platforms",
        "acc-info --db '{db}'",
        "acc-info --help",
        "acc-tune show --db '{db}'",
        "acc-tune show --db '{db}' --csv",
        "acc-tune export --format env --db '{db}' --model resnet50 --topo 'gpus=4 nvlink=18'",
        "acc-tune export --format ddp --db '{db}' --model resnet50 --topo 'gpus=4 nvlink=18'",
        "acc-tune --model resnet50 --topo 'gpus=4 nvlink=18' --strategy bayes --budget 3 "
        "--nccl-only --quiet --db '{db}'",
        "acc-tune --help",
        "acc-bench --backend host --topo 'gpus=4' --coll allreduce --algo ring -b 1K -e 4K -f 2 "
        "-n 2",
        "acc-bench --help",
    };
    const char *db = tuned_db();
    char line[8192];

    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        tr_fill(line, sizeof(line), lines[i], "db", db);
        /* The same command succeeds when its output has somewhere to go ... */
        CHECK_MSG(tr_run(line, NULL, 0) == 0, "%s: %s", line, tr_err);
        CHECK_MSG(tr_out[0] != '\0', "%s printed nothing", line);
        /* ... and says it lost it when it has not. */
        CHECK_MSG(tr_run(line, "/dev/full", 0) == 3, "%s > /dev/full: status not 3; stderr: %s",
                  line, tr_err);
        TR_HAS(tr_err, "standard output", line);
        printf("%s > /dev/full: %s", line, tr_err);
    }
}

ACC_TEST(a_device_named_as_the_output_file_is_written_in_place)
{
    static const char *const lines[] = {
        "acc-compile --topo 'gpus=4 nvlink=18' --coll allreduce --algo ring --emit-plan {out}",
        "acc-compile --topo 'gpus=4 nvlink=18' --export-topo yaml -o {out}",
        "acc-compile --topo 'gpus=4 nvlink=18' --coll allreduce --algo ring --export-msccl {out}",
        "acc-compile --topo 'gpus=4 nvlink=18' --report --coll allreduce --plot {out}",
        "acc-tune plot {out} --db '{db}' --model resnet50 --topo 'gpus=4 nvlink=18'",
    };
    const char *db = tuned_db();
    char cmd[8192], line[8192];
    struct stat sb;

    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        /* /dev/null takes it all; /dev/full nothing, and both stay devices (renaming a
         * temporary file over them would replace them, as root may). */
        tr_fill(cmd, sizeof(cmd), lines[i], "db", db);
        tr_fill(line, sizeof(line), cmd, "out", "/dev/null");
        CHECK_MSG(tr_run(line, NULL, 0) == 0, "%s: %s", line, tr_err);
        tr_fill(line, sizeof(line), cmd, "out", "/dev/full");
        CHECK_MSG(tr_run(line, NULL, 0) == 3, "%s: status not 3; stderr: %s", line, tr_err);
        TR_HAS(tr_err, "/dev/full", line);
        TR_HAS(tr_err, "No space left on device", line);
        CHECK(stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode));
        CHECK(stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode));
    }
}

ACC_TEST(a_full_disk_keeps_the_previous_file_whole)
{
    static const char *const lines[] = {
        "acc-compile --topo dgx-h100 --coll allreduce --algo ring --lanes 8 --emit-plan '{out}'",
        "acc-compile --topo dgx-h100 --export-topo nccl-xml -o '{out}'",
        "acc-compile --topo dgx-h100 --coll allreduce --algo ring --export-msccl '{out}'",
        "acc-compile --topo 'gpus=4 nvlink=18' --report --coll allreduce --plot '{out}'",
        "acc-tune plot '{out}' --db '{db}' --model resnet50 --topo 'gpus=4 nvlink=18'",
    };
    const char *db = tuned_db();
    char dir[4096], path[4200], cmd[8192], line[8192], content[64];

    snprintf(dir, sizeof(dir), "%s", acc_test_tmp("out"));
    mkdir(dir, 0755);
    snprintf(path, sizeof(path), "%s/result", dir);
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        FILE *f = fopen(path, "w");
        CHECK(f && fputs("the previous result\n", f) >= 0 && fclose(f) == 0);
        tr_fill(cmd, sizeof(cmd), lines[i], "db", db);
        tr_fill(line, sizeof(line), cmd, "out", path);
        /* 2 KiB fit, the whole output does not: the write fails half way. */
        CHECK_MSG(tr_run(line, "/dev/null", 2048) == 3, "%s: status not 3; stderr: %s", line,
                  tr_err);
        TR_HAS(tr_err, path, line);
        TR_HAS(tr_err, "File too large", line);
        tr_slurp(path, content, sizeof(content));
        CHECK_STR(content, "the previous result\n");
        /* No partial file left beside it either. */
        tr_fill(line, sizeof(line), "ls -A '{dir}'", "dir", dir);
        CHECK_INT(tr_run(line, NULL, 0), 0);
        CHECK_STR(tr_out, "result\n");
        /* With room, the same command replaces it. */
        tr_fill(line, sizeof(line), cmd, "out", path);
        CHECK_MSG(tr_run(line, NULL, 0) == 0, "%s: %s", line, tr_err);
        tr_slurp(path, content, sizeof(content));
        CHECK(strcmp(content, "the previous result\n") != 0);
    }
}
