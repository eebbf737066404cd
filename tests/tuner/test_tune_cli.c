/* acc-tune as a user runs it: tune, show, export and plot against one database file, warm
 * starts across runs, a network given by its parameters, and the exit codes of bad command
 * lines, bad input and unwritable output. */
#include "acc_test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The acc-tune of this build (tests/CMakeLists.txt passes its path and builds it first). */
static const char *exe(void)
{
    struct stat st;
    CHECK_MSG(stat(ACC_TUNE_EXE, &st) == 0, "%s is missing: build the acc-tune target",
              ACC_TUNE_EXE);
    return ACC_TUNE_EXE;
}

static char out[1 << 20], err[1 << 16];

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

/* Run acc-tune with `args`; standard output and error in out and err; the exit status. */
static int run(const char *args)
{
    char cmd[8192];
    const char *o = acc_test_tmp("cli.out"), *e = acc_test_tmp("cli.err");
    int rc;
    snprintf(cmd, sizeof(cmd), "%s %s > '%s' 2> '%s'", exe(), args, o, e);
    rc = system(cmd);
    slurp(o, out, sizeof(out));
    slurp(e, err, sizeof(err));
    CHECK_MSG(rc != -1 && WIFEXITED(rc), "could not run %s", cmd);
    return WEXITSTATUS(rc);
}

static size_t lines_with(const char *text, const char *needle)
{
    size_t n = 0;
    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[4096];
        snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) - 1 ? len : sizeof(buf) - 1),
                 line);
        n += strstr(buf, needle) != NULL;
        line += len + (end != NULL);
    }
    return n;
}

static const char *fresh_db(const char *name)
{
    static char args[4096];
    const char *db = acc_test_tmp(name);
    char wal[4096];
    unlink(db);
    snprintf(wal, sizeof(wal), "%s-wal", db);
    unlink(wal);
    snprintf(wal, sizeof(wal), "%s-shm", db);
    unlink(wal);
    snprintf(args, sizeof(args), "--db '%s'", db);
    return args;
}

ACC_TEST(tune_show_export_plot)
{
    char args[8192], db[4096];
    const char *svg = acc_test_tmp("cli.svg");
    unsigned long evals = 0;
    const char *p;

    snprintf(db, sizeof(db), "%s", fresh_db("cli1.db"));
    snprintf(args, sizeof(args), "--model resnet50 --topo dgx-h100 --strategy bayes --seed 3 %s",
             db);
    CHECK_INT(run(args), 0);
    CHECK(strstr(out, "resnet50 on dgx-h100 (8 GPUs, H100 SXM5 80GB, fp16, batch 1280)"));
    CHECK(strstr(out, "optimum (bayes)") && strstr(out, "DDP defaults") &&
          strstr(out, "Horovod defaults") && strstr(out, "no fusion"));
    CHECK((p = strstr(out, "bayes search: ")) && sscanf(p, "bayes search: %lu", &evals) == 1);
    CHECK(evals >= 10 && evals <= 78);
    /* Not a terminal: plain progress lines, no carriage returns. */
    CHECK(strstr(err, "acc-tune: bayes: done after") && !strchr(err, '\r'));

    /* Every evaluation is a tuning run, beside the three baselines. */
    snprintf(args, sizeof(args), "show --csv %s", db);
    CHECK_INT(run(args), 0);
    CHECK_INT(lines_with(out, ",resnet50,dgx-h100,"), evals + 3);
    CHECK_INT(lines_with(out, ",baseline,itersim,"), 3);
    snprintf(args, sizeof(args), "show %s", db);
    CHECK_INT(run(args), 0);
    CHECK(strstr(out, "optima (1)") && strstr(out, "resnet50"));

    snprintf(args, sizeof(args), "export --format env --model resnet50 --topo dgx-h100 %s", db);
    CHECK_INT(run(args), 0);
    CHECK(strstr(out, "\nACC_FUSION_BYTES=") && strstr(out, "\nACC_STREAMS="));
    snprintf(args, sizeof(args), "export --format horovod --model resnet50 --topo dgx-h100 %s", db);
    CHECK_INT(run(args), 0);
    CHECK(strstr(out, "\nHOROVOD_FUSION_THRESHOLD=") && strstr(out, "\nHOROVOD_NUM_NCCL_STREAMS="));
    snprintf(args, sizeof(args), "export --format ddp --model resnet50 --topo dgx-h100 %s", db);
    CHECK_INT(run(args), 0);
    CHECK(strstr(out, "DistributedDataParallel(model, bucket_cap_mb="));

    unlink(svg);
    snprintf(args, sizeof(args), "plot '%s' --model resnet50 --topo dgx-h100 %s", svg, db);
    CHECK_INT(run(args), 0);
    slurp(svg, out, sizeof(out));
    CHECK(strncmp(out, "<?xml ", 6) == 0 && strstr(out, "<svg ") &&
          strstr(out, "optimum (black frame)") && strstr(out, "DDP defaults: "));

    /* A second run starts from the stored optimum: its first evaluation is a warm one. */
    snprintf(args, sizeof(args),
             "--model resnet50 --topo dgx-h100 --strategy halving --quiet --csv %s", db);
    CHECK_INT(run(args), 0);
    CHECK(strncmp(out, "label,policy,", 13) == 0);
    CHECK(lines_with(out, "warm,acc,") >= 1);
    CHECK_STR(err, "");
}

ACC_TEST(network_by_parameters)
{
    char args[8192], db[4096];

    snprintf(db, sizeof(db), "%s", fresh_db("cli2.db"));
    snprintf(args, sizeof(args),
             "--model bert-large --topo dgx-h100-2node --network 'nic=100 fabric=roce' "
             "--nccl-only --strategy halving --quiet %s",
             db);
    CHECK_INT(run(args), 0);
    CHECK(strstr(out, "network roce"));
    snprintf(args, sizeof(args),
             "--model bert-large --topo dgx-h100-2node --nccl-only --strategy halving --quiet %s",
             db);
    CHECK_INT(run(args), 0);
    CHECK(strstr(out, "network ib-ndr"));
    /* The topology's own network given as parameters is the same key (the same fingerprint). */
    snprintf(args, sizeof(args),
             "--model bert-large --topo dgx-h100-2node --network fabric=ib-ndr,latency=2.7 "
             "--nccl-only --strategy halving --quiet %s",
             db);
    CHECK_INT(run(args), 0);
    /* Two keys, two optima: a 100 Gb/s RoCE network is another topology. */
    snprintf(args, sizeof(args), "show %s", db);
    CHECK_INT(run(args), 0);
    CHECK(strstr(out, "optima (2)") && strstr(out, " roce ") && strstr(out, " ib-ndr "));
    /* A stored network's name that is not there. */
    snprintf(args, sizeof(args),
             "--model bert-large --topo dgx-h100-2node --network slow-net --nccl-only %s", db);
    CHECK_INT(run(args), 1);
    CHECK(strstr(err, "network 'slow-net' is not in the database"));
    snprintf(args, sizeof(args),
             "--model bert-large --topo dgx-h100-2node --network 'nic=-4' --nccl-only %s", db);
    CHECK_INT(run(args), 1);
    CHECK(strstr(err, "nic=-4"));
}

ACC_TEST(assumed_compute_time_is_listed)
{
    char args[8192];

    /* No time is published for ViT-B/16 on an H100: acc-tune tunes with the derived one and
     * says so, in the title and on a line of its own. */
    snprintf(args, sizeof(args),
             "--model vit-b16 --topo dgx-h100 --nccl-only --strategy bayes --budget 3 --quiet %s",
             fresh_db("assumed.db"));
    CHECK_MSG(run(args) == 0, "%s", err);
    CHECK_MSG(strstr(out, "(8 GPUs, H100 SXM5 80GB, fp16, batch 192, compute time assumed)"), "%s",
              out);
    CHECK_MSG(strstr(out, "\nAssumed: vit-b16's compute time on H100 SXM5 80GB (") &&
                  strstr(out, "is derived, not published"),
              "%s", out);
    /* A published one is not listed. */
    snprintf(args, sizeof(args),
             "--model resnet50 --topo dgx-h100 --nccl-only --strategy bayes --budget 3 --quiet %s",
             fresh_db("published.db"));
    CHECK_MSG(run(args) == 0, "%s", err);
    CHECK(strstr(out, "Assumed") == NULL && strstr(out, "compute time assumed") == NULL);
}

ACC_TEST(exit_codes)
{
    char args[8192], db[4096];

    CHECK_INT(run("--help"), 0);
    CHECK(strstr(out, "usage: acc-tune --model M --topo T"));
    CHECK_INT(run("--model resnet50 --topo dgx-h100"), 2);
    CHECK(strstr(err, "--db FILE is required"));
    snprintf(db, sizeof(db), "%s", fresh_db("cli3.db"));
    snprintf(args, sizeof(args), "--model resnet50 --topo dgx-h100 --strategy random %s", db);
    CHECK_INT(run(args), 2);
    CHECK(strstr(err, "--strategy takes grid, bayes or halving, not random"));
    snprintf(args, sizeof(args), "--model resnet50 --topo dgx-h100 --budget 0 %s", db);
    CHECK_INT(run(args), 2);
    snprintf(args, sizeof(args), "--model resnet50 --topo dgx-h100 --fusion-min 3M %s", db);
    CHECK_INT(run(args), 2);
    snprintf(args, sizeof(args), "export --format yaml --model resnet50 --topo dgx-h100 %s", db);
    CHECK_INT(run(args), 2);
    snprintf(args, sizeof(args), "plot --model resnet50 --topo dgx-h100 %s", db);
    CHECK_INT(run(args), 2);
    CHECK(strstr(err, "plot needs the SVG file"));
    /* Input: an unknown model, a profile without this GPU, no optimum yet, a foreign file. */
    snprintf(args, sizeof(args), "--model resnet-51 --topo dgx-h100 %s", db);
    CHECK_INT(run(args), 1);
    CHECK(strstr(err, "resnet-51"));
    snprintf(args, sizeof(args), "--model vgg16 --topo dgx-h100 --precision fp32 %s", db);
    CHECK_INT(run(args), 1);
    CHECK(strstr(err, "no compute time for sm_90 in fp32"));
    snprintf(args, sizeof(args), "export --format env --model resnet50 --topo dgx-h100 %s", db);
    CHECK_INT(run(args), 1);
    CHECK(strstr(err, "no optimum for resnet50"));
    snprintf(args, sizeof(args), "show --db '%s'", acc_test_src("tuner/models/resnet50.yaml"));
    CHECK_INT(run(args), 1);
    /* Output: a plot where no file can be written. */
    snprintf(args, sizeof(args),
             "--model resnet50 --topo 'nodes=1 gpus=1' --strategy halving --quiet %s", db);
    CHECK_INT(run(args), 0);
    snprintf(args, sizeof(args),
             "plot /nonexistent-dir/x.svg --model resnet50 --topo 'nodes=1 gpus=1' %s", db);
    CHECK_INT(run(args), 3);
    CHECK(strstr(err, "/nonexistent-dir/x.svg"));
}
