/*
 * The loop as a user runs it, with the commands the README shows: a job (acc-bench --model, four
 * host-backend ranks) records a model nobody shipped (ACC_RECORD=1); acc-tune tunes the
 * recording, shows where it came from and exports its optimum; acc-tune profile export writes
 * it as a profile file that --model reads back equal; the next job starts from the optimum.
 * Also what recording costs a replay (acc-bench --policy record) and profile export's errors.
 */
#include "acc_test.h"
#include "cli_util.h"
#include "acc_tune.h"
#include "fusion_util.h"
#include "toy_model.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char out[1 << 20];

/* Run a command line; its standard output and error in out (and the log), its exit status. */
static int run(const char *cmd)
{
    int rc = cli_run(cmd, out, sizeof(out));
    printf("$ %s\n%s", cmd, out);
    return rc;
}

/* Every field of two profiles, compute entries and tensors included. */
static void check_equal(const acc_profile_t *a, const acc_profile_t *b)
{
    size_t i;
    CHECK_STR(a->name, b->name);
    CHECK_STR(a->description, b->description);
    CHECK_STR(a->sample, b->sample);
    CHECK_INT(a->nsources, b->nsources);
    CHECK(a->params == b->params && a->forward_flops == b->forward_flops);
    CHECK_INT(a->ntensors, b->ntensors);
    for (i = 0; i < a->ntensors; i++) {
        CHECK_STR(a->tensors[i].name, b->tensors[i].name);
        CHECK(a->tensors[i].elems == b->tensors[i].elems);
        CHECK_INT(a->tensors[i].dtype, b->tensors[i].dtype);
        CHECK(a->tensors[i].ready == b->tensors[i].ready);
    }
    CHECK_INT(a->ncompute, b->ncompute);
    for (i = 0; i < a->ncompute; i++) {
        const acc_profile_compute_t *x = &a->compute[i], *y = &b->compute[i];
        CHECK_STR(x->gpu, y->gpu);
        CHECK_INT(x->sm, y->sm);
        CHECK_STR(x->precision, y->precision);
        CHECK(x->batch == y->batch && x->accumulation == y->accumulation);
        CHECK(x->iteration_ms == y->iteration_ms && x->forward_ms == y->forward_ms);
        CHECK_STR(x->source, y->source);
    }
}

/* The text of the recording of name for sm_90 in the database at path. */
static char *recorded_text(const char *path, const char *name)
{
    acc_db_t *db = NULL;
    acc_db_recorded_t rec;
    char *yaml = NULL;
    CHECK_OK(acc_db_open(path, ACC_DB_READONLY, &db));
    CHECK_OK(acc_db_get_recorded(db, name, 90, &rec, &yaml));
    acc_db_close(db);
    return yaml;
}

/* The value after `key=` in out. */
static unsigned long long value_of(const char *key)
{
    const char *p = strstr(out, key);
    CHECK_MSG(p, "no %s in the output", key);
    return strtoull(p + strlen(key), NULL, 10);
}

ACC_TEST(record_tune_export_reimport_next_job)
{
    /* Copies: acc_test_tmp's paths live in a few rotating slots. */
    char db[1024], db2[1024], exported[1024], model[1024];
    char cmd[8192], *text, *file_text = NULL, *yaml2 = NULL;
    acc_profile_t *from_db = NULL, *from_file = NULL;
    unsigned long long fusion;
    size_t len;
    acc_db_t *h = NULL;

    snprintf(db, sizeof(db), "%s", fusion_fresh_db("loop.db"));
    snprintf(db2, sizeof(db2), "%s", fusion_fresh_db("loop2.db"));
    snprintf(exported, sizeof(exported), "%s", acc_test_tmp("lab-net.yaml"));
    snprintf(model, sizeof(model), "%s",
             toy_model_file(acc_test_tmp("lab-net-src.yaml"), "lab-net", 24, 16384, 40, 15));
    setenv("ACC_LOG_LEVEL", "error", 1);
    unsetenv("ACC_DB");
    unsetenv("ACC_MODEL");
    unsetenv("ACC_RECORD");
    /* 1. A job records itself: the model is named by its profile file, which nobody shipped. */
    snprintf(cmd, sizeof(cmd),
             "ACC_RECORD=1 %s --model '%s' --runtime host --nranks 4 --topo gpus=4 --policy ddp "
             "--iters 8 --db '%s'",
             ACC_BENCH_EXE, model, db);
    CHECK_INT(run(cmd), 0);
    /* 2. acc-tune finds the recording by the model's name and tunes it. */
    snprintf(cmd, sizeof(cmd), "%s --model lab-net --topo gpus=4 --nccl-only --quiet --db '%s'",
             ACC_TUNE_EXE, db);
    CHECK_INT(run(cmd), 0);
    CHECK(strstr(out, "lab-net on synthetic-1x4-h100 (4 GPUs, sm_90, fp16, batch 1)"));
    /* 3. show says where it came from. */
    snprintf(cmd, sizeof(cmd), "%s show --db '%s'", ACC_TUNE_EXE, db);
    CHECK_INT(run(cmd), 0);
    CHECK(strstr(out, "profiles (1)\n"));
    CHECK(strstr(out, "\nlab-net ") && strstr(out, "  recorded on "));
    CHECK(strstr(out, "/CPU (host backend) at "));
    CHECK(strstr(out, "(host backend, 4 ranks, batch 1, median of 5 iterations)"));
    CHECK(strstr(out, "recorded by jobs (1)\n"));
    CHECK(strstr(out, "\nlab-net          sm_90 "));
    /* 4. Its optimum exports as a shipped model's does. */
    snprintf(cmd, sizeof(cmd), "%s export --format env --model lab-net --topo gpus=4 --db '%s'",
             ACC_TUNE_EXE, db);
    CHECK_INT(run(cmd), 0);
    fusion = value_of("\nACC_FUSION_BYTES=");
    CHECK(fusion > 0);
    /* 5. The recording as a profile file, in the shipped profiles' format. */
    snprintf(cmd, sizeof(cmd), "%s profile export lab-net -o '%s' --db '%s'", ACC_TUNE_EXE,
             exported, db);
    CHECK_INT(run(cmd), 0);
    CHECK(strstr(out, "wrote profile lab-net (24 tensors; recorded on "));
    CHECK_OK(acc_read_file(exported, &file_text, &len));
    CHECK(strncmp(file_text, "# acc model profile;", 20) == 0);
    text = recorded_text(db, "lab-net");
    CHECK_STR(file_text, text); /* the stored text is the dump, written as it is */
    CHECK_OK(acc_profile_load_yaml(text, strlen(text), "db", &from_db));
    CHECK_OK(acc_profile_load_file(exported, &from_file));
    check_equal(from_file, from_db);
    CHECK(from_file->tensors[0].elems == 16384 && from_file->ncompute == 1);
    /* 6. --model FILE reads it back: the profile acc-tune stores for its runs is the same. */
    snprintf(cmd, sizeof(cmd), "%s --model '%s' --topo gpus=4 --nccl-only --quiet --db '%s'",
             ACC_TUNE_EXE, exported, db2);
    CHECK_INT(run(cmd), 0);
    CHECK_OK(acc_db_open(db2, ACC_DB_READONLY, &h));
    CHECK_OK(acc_db_get_profile(h, "lab-net", &yaml2, NULL));
    acc_db_close(h);
    CHECK_STR(yaml2, file_text);
    snprintf(cmd, sizeof(cmd), "%s show --db '%s'", ACC_TUNE_EXE, db2);
    CHECK_INT(run(cmd), 0);
    CHECK(strstr(out, "  file ") && strstr(out, "lab-net.yaml\n"));
    /* 7. The next job of the model starts from the optimum acc-tune stored. */
    snprintf(cmd, sizeof(cmd),
             "%s --model lab-net --runtime host --nranks 4 --topo gpus=4 --policy acc --iters 3 "
             "--db '%s'",
             ACC_BENCH_EXE, db);
    CHECK_INT(run(cmd), 0);
    CHECK(strstr(out, "(acc simulated optimum)"));
    acc_profile_destroy(from_db);
    acc_profile_destroy(from_file);
    acc_mem_free(text);
    acc_mem_free(file_text);
    acc_mem_free(yaml2);
}

ACC_TEST(what_recording_costs_a_replay)
{
    char db[1024], model[1024], cmd[8192];

    snprintf(db, sizeof(db), "%s", fusion_fresh_db("cost.db"));
    snprintf(model, sizeof(model), "%s",
             toy_model_file(acc_test_tmp("cost-net.yaml"), "cost-net", 24, 16384, 30, 10));
    setenv("ACC_LOG_LEVEL", "error", 1);
    unsetenv("ACC_RECORD");
    snprintf(cmd, sizeof(cmd),
             "%s --model '%s' --runtime host --nranks 4 --topo gpus=4 --policy record --iters 9 "
             "--db '%s'",
             ACC_BENCH_EXE, model, db);
    CHECK_INT(run(cmd), 0);
    CHECK(strstr(out, "\n  record ") && strstr(out, " against ") &&
          strstr(out, "without (same run, 1 round; runs without differ by ") &&
          strstr(out, "; the engine's calls "));
    CHECK(strstr(out, "# the recording is stored as cost-net's for sm_90"));
    /* ... and it is there. */
    acc_mem_free(recorded_text(db, "cost-net"));
}

ACC_TEST(profile_export_errors)
{
    char db[1024], cmd[8192];
    acc_db_t *h = NULL;
    acc_profile_t *p = toy_model("two-gpus", 3, 100, 10, 2);
    acc_db_recorded_t rec;

    snprintf(db, sizeof(db), "%s", fusion_fresh_db("errors.db"));
    CHECK_OK(acc_db_open(db, 0, &h));
    memset(&rec, 0, sizeof(rec));
    rec.ranks = 1;
    rec.iterations = 1;
    rec.sm = 90;
    CHECK_OK(acc_profile_put_recorded(h, p, &rec));
    rec.sm = 80;
    CHECK_OK(acc_profile_put_recorded(h, p, &rec));
    acc_db_close(h);
    acc_profile_destroy(p);

    snprintf(cmd, sizeof(cmd), "%s profile export nobody --db '%s'", ACC_TUNE_EXE, db);
    CHECK_INT(run(cmd), 1);
    CHECK(strstr(out, "no model profile 'nobody'") && strstr(out, "two-gpus (sm_80)"));
    snprintf(cmd, sizeof(cmd), "%s profile export two-gpus --db '%s'", ACC_TUNE_EXE, db);
    CHECK_INT(run(cmd), 2);
    CHECK(strstr(out, "two-gpus was recorded for sm_80, sm_90: pass --topo T"));
    snprintf(cmd, sizeof(cmd), "%s profile export two-gpus --topo dgx-a100 --db '%s'", ACC_TUNE_EXE,
             db);
    CHECK_INT(run(cmd), 0);
    CHECK(strstr(out, "name: two-gpus\n"));
    snprintf(cmd, sizeof(cmd),
             "%s profile export two-gpus --topo gpus=4 -o /nonexistent/dir/x.yaml --db '%s'",
             ACC_TUNE_EXE, db);
    CHECK_INT(run(cmd), 3);
    CHECK(strstr(out, "/nonexistent/dir/x.yaml"));
    snprintf(cmd, sizeof(cmd), "%s profile list --db '%s'", ACC_TUNE_EXE, db);
    CHECK_INT(run(cmd), 2);
    snprintf(cmd, sizeof(cmd), "%s profile export two-gpus --format env --db '%s'", ACC_TUNE_EXE,
             db);
    CHECK_INT(run(cmd), 2);
}
