/* Where a model's profile is found: a file, a job's recording in the database for the GPU in
 * question (which wins over the shipped profile of that name there, and only there), the
 * shipped set; what each says about its origin; and the messages when a name is neither. */
#include "acc_test.h"
#include "acc_tune.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static acc_db_t *fresh_db(const char *name)
{
    static const char *const companions[] = {"", "-wal", "-shm"};
    char path[4096], file[4200];
    acc_db_t *db = NULL;
    size_t i;

    snprintf(path, sizeof(path), "%s.db", acc_test_tmp(name));
    for (i = 0; i < sizeof(companions) / sizeof(companions[0]); i++) {
        snprintf(file, sizeof(file), "%s%s", path, companions[i]);
        unlink(file);
    }
    CHECK_OK(acc_db_open(path, 0, &db));
    return db;
}

/* A recording of `name`: n fp32 gradients of 1000 elements, `ms` of compute on sm `sm`. */
static void record(acc_db_t *db, const char *name, int sm, int n, double ms, int64_t when)
{
    acc_profile_t *p = NULL;
    acc_profile_compute_t c;
    acc_db_recorded_t rec;
    char gpu[16];

    CHECK_OK(acc_profile_create(name, &p));
    for (int i = 0; i < n; i++) {
        char t[16];
        snprintf(t, sizeof(t), "grad%d", i);
        CHECK_OK(acc_profile_add_tensor(p, t, 1000, ACC_DT_F32, (double)(i + 1) / n));
    }
    memset(&c, 0, sizeof(c));
    snprintf(gpu, sizeof(gpu), "sm_%d", sm);
    c.gpu = gpu;
    c.precision = "fp32";
    c.batch = 16;
    c.accumulation = 1;
    c.iteration_ms = ms;
    c.source = "recorded by the test";
    CHECK_OK(acc_profile_add_compute(p, &c));
    memset(&rec, 0, sizeof(rec));
    rec.sm = sm;
    snprintf(rec.device, sizeof(rec.device), "CPU (host backend)");
    snprintf(rec.host, sizeof(rec.host), "testhost");
    snprintf(rec.backend, sizeof(rec.backend), "host");
    rec.ranks = 4;
    rec.batch = 16;
    rec.iterations = 5;
    rec.recorded_us = when;
    CHECK_OK(acc_profile_put_recorded(db, p, &rec));
    acc_profile_destroy(p);
}

ACC_TEST(shipped_and_file)
{
    acc_profile_t *p = NULL;
    acc_profile_origin_t o;
    char text[2048];
    const char *file = acc_test_src("tuner/models/vgg16.yaml");

    CHECK_OK(acc_profile_find("resnet50", 90, NULL, &p, &o));
    CHECK_INT(o.kind, ACC_PROFILE_SHIPPED);
    CHECK_STR(p->name, "resnet50");
    CHECK(strstr(o.path, "/resnet50.yaml") != NULL);
    acc_profile_origin_text(&o, text, sizeof(text));
    CHECK(strncmp(text, "shipped (", 9) == 0 && strstr(text, "resnet50.yaml)"));
    acc_profile_destroy(p);

    CHECK_OK(acc_profile_find(file, 90, NULL, &p, &o));
    CHECK_INT(o.kind, ACC_PROFILE_FILE);
    CHECK_STR(p->name, "vgg16");
    acc_profile_origin_text(&o, text, sizeof(text));
    CHECK(strncmp(text, "file ", 5) == 0 && strstr(text, "vgg16.yaml"));
    acc_profile_destroy(p);

    CHECK_ERR(acc_profile_find("resnet-51", 90, NULL, &p, &o), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("resnet-51");
    CHECK(p == NULL);
    CHECK_ERR(acc_profile_find("", 90, NULL, &p, &o), ACC_ERR_INVALID);
}

ACC_TEST(recorded_wins_for_its_gpu_only)
{
    acc_db_t *db = fresh_db("find_recorded");
    acc_profile_t *p = NULL;
    acc_profile_origin_t o;
    acc_tune_target_t *t = NULL;
    char text[2048];

    /* A job recorded "resnet50" on an H100 (sm_90): 3 gradients, unlike the shipped 161. */
    record(db, "resnet50", 90, 3, 50, 1748779200000000); /* 2025-06-01 12:00:00 UTC */
    CHECK_OK(acc_profile_find("resnet50", 90, db, &p, &o));
    CHECK_INT(o.kind, ACC_PROFILE_RECORDED);
    CHECK_INT(p->ntensors, 3);
    acc_profile_origin_text(&o, text, sizeof(text));
    CHECK_STR(text, "recorded on testhost/CPU (host backend) at 2025-06-01 12:00:00 UTC (host "
                    "backend, 4 ranks, batch 16, median of 5 iterations)");
    acc_profile_destroy(p);
    /* On an A100 (sm_80), and for no GPU in particular, the shipped one. */
    CHECK_OK(acc_profile_find("resnet50", 80, db, &p, &o));
    CHECK_INT(o.kind, ACC_PROFILE_SHIPPED);
    CHECK_INT(p->ntensors, 161);
    acc_profile_destroy(p);
    CHECK_OK(acc_profile_find("resnet50", 0, db, &p, &o));
    CHECK_INT(o.kind, ACC_PROFILE_SHIPPED);
    acc_profile_destroy(p);

    /* The tuner's target follows the topology's GPU, and keeps where its profile came from. */
    CHECK_OK(acc_tune_target_load("resnet50", "gpus=4", NULL, NULL, db, &t));
    CHECK_INT(t->origin.kind, ACC_PROFILE_RECORDED);
    CHECK_INT(t->profile->ntensors, 3);
    CHECK(t->compute->iteration_ms == 50);
    CHECK_OK(acc_tune_store_prepare(db, t));
    acc_tune_target_destroy(t);
    CHECK_OK(acc_tune_target_load("resnet50", "dgx-a100", NULL, NULL, db, &t));
    CHECK_INT(t->origin.kind, ACC_PROFILE_SHIPPED);
    acc_tune_target_destroy(t);
    {
        acc_db_profile_t *all = NULL;
        size_t n = 0;
        CHECK_OK(acc_db_list_profiles(db, &all, &n));
        CHECK_INT(n, 1);
        CHECK(strncmp(all[0].origin, "recorded on testhost/CPU (host backend) at 2025-06-01", 52) ==
              0);
        acc_mem_free(all);
    }
    acc_db_close(db);
}

ACC_TEST(recorded_model_nobody_shipped)
{
    acc_db_t *db = fresh_db("find_unshipped");
    acc_profile_t *p = NULL;
    acc_profile_origin_t o;
    acc_tune_target_t *t = NULL;

    record(db, "my-model", 86, 4, 20, 1000);
    record(db, "my-model", 90, 5, 30, 2000);
    CHECK_OK(acc_profile_find("my-model", 90, db, &p, &o));
    CHECK_INT(p->ntensors, 5);
    acc_profile_destroy(p);
    /* For a generation it was not recorded on: the newest recording, whose compute entries
     * then tell the tuner what it has. */
    CHECK_OK(acc_profile_find("my-model", 80, db, &p, &o));
    CHECK_INT(o.kind, ACC_PROFILE_RECORDED);
    CHECK_INT(o.recorded.sm, 90);
    acc_profile_destroy(p);
    CHECK_ERR(acc_tune_target_load("my-model", "dgx-a100", NULL, NULL, db, &t), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("no compute time for sm_80");
    CHECK_MSG_HAS("sm_90 fp32");
    /* Without the database it is nowhere. */
    CHECK_ERR(acc_tune_target_load("my-model", "gpus=4", NULL, NULL, NULL, &t), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("no model profile 'my-model'");

    /* A name that is neither says where it looked and what is there. */
    CHECK_ERR(acc_profile_find("your-model", 90, db, &p, &o), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("resnet50");                           /* the shipped ones */
    CHECK_MSG_HAS("my-model (sm_86), my-model (sm_90)"); /* the recorded ones */
    CHECK_MSG_HAS("ACC_RECORD=1");
    /* Of two mistakes, the model's is reported. */
    CHECK_ERR(acc_tune_target_load("your-model", "no-such-platform", NULL, NULL, db, &t),
              ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("your-model");
    CHECK_ERR(acc_tune_target_load("my-model", "no-such-platform", NULL, NULL, db, &t),
              ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("no-such-platform");
    CHECK(t == NULL);
    acc_db_close(db);
}

ACC_TEST(recording_that_is_no_profile)
{
    acc_db_t *db = fresh_db("find_broken");
    acc_db_recorded_t rec;
    acc_profile_t *p = NULL;

    /* Well-formed YAML (the database checks that much) that is not a profile: the message
     * names the recording and the line. */
    memset(&rec, 0, sizeof(rec));
    snprintf(rec.name, sizeof(rec.name), "odd");
    rec.sm = 90;
    rec.ranks = 1;
    rec.iterations = 1;
    CHECK_OK(acc_db_put_recorded(db, &rec, "version: 1\nname: odd\nparameters: 1\n"));
    CHECK_ERR(acc_profile_find("odd", 90, db, &p, NULL), ACC_ERR_PARSE);
    CHECK_MSG_HAS("recorded profile odd (sm_90)");
    CHECK_MSG_HAS("tensors");
    CHECK(p == NULL);
    acc_db_close(db);
}
