/* Profiles jobs recorded of themselves: stored with where, when and how they were recorded, one
 * per name and GPU generation (recording again replaces it), listed and read back; bad records
 * and texts are refused naming the field; and stored profiles say where they came from. */
#include "db_test_util.h"

static acc_db_recorded_t sample(const char *name, int sm, int64_t when)
{
    acc_db_recorded_t r;
    memset(&r, 0, sizeof(r));
    snprintf(r.name, sizeof(r.name), "%s", name);
    r.sm = sm;
    snprintf(r.device, sizeof(r.device), "NVIDIA H100 80GB HBM3");
    snprintf(r.host, sizeof(r.host), "node17");
    snprintf(r.backend, sizeof(r.backend), "cuda");
    r.ranks = 8;
    r.batch = 32;
    r.iterations = 5;
    r.recorded_us = when;
    r.param_count = 1000;
    return r;
}

ACC_TEST(recorded_round_trip_and_replace)
{
    const char *path = tu_fresh("recorded.db");
    acc_db_t *db = tu_open(path, 0);
    acc_db_recorded_t r = sample("my-model", 90, 1700000000000000), back, *all = NULL;
    char *yaml = NULL;
    size_t n = 0;

    CHECK_OK(acc_db_put_recorded(db, &r, "name: my-model\nv: 1\n"));
    CHECK_OK(acc_db_get_recorded(db, "my-model", 90, &back, &yaml));
    CHECK_STR(yaml, "name: my-model\nv: 1\n");
    acc_mem_free(yaml);
    CHECK_STR(back.name, "my-model");
    CHECK_STR(back.device, "NVIDIA H100 80GB HBM3");
    CHECK_STR(back.host, "node17");
    CHECK_STR(back.backend, "cuda");
    CHECK_INT(back.sm, 90);
    CHECK_INT(back.ranks, 8);
    CHECK_INT(back.batch, 32);
    CHECK_INT(back.iterations, 5);
    CHECK(back.recorded_us == 1700000000000000);
    CHECK(back.param_count == 1000);
    CHECK_STR(back.acc_version, ACC_VERSION_STRING);

    /* Another generation is another recording; the same one again replaces it. */
    r = sample("my-model", 80, 0);
    CHECK_OK(acc_db_put_recorded(db, &r, "name: my-model\nv: 2\n"));
    r = sample("my-model", 90, 1700000000000001);
    r.batch = 0;
    CHECK_OK(acc_db_put_recorded(db, &r, "name: my-model\nv: 3\n"));
    CHECK_OK(acc_db_get_recorded(db, "my-model", 90, &back, &yaml));
    CHECK_STR(yaml, "name: my-model\nv: 3\n");
    CHECK_INT(back.batch, 0);
    acc_mem_free(yaml);
    /* Without the text. */
    CHECK_OK(acc_db_get_recorded(db, "my-model", 80, &back, NULL));
    CHECK(back.recorded_us > 1700000000000001); /* 0 meant now */
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM recorded_profiles"), 2);

    r = sample("other", 70, 5);
    CHECK_OK(acc_db_put_recorded(db, &r, "name: other\n"));
    CHECK_OK(acc_db_list_recorded(db, NULL, &all, &n));
    CHECK_INT(n, 3);
    CHECK_STR(all[0].name, "my-model");
    CHECK_INT(all[0].sm, 80);
    CHECK_INT(all[1].sm, 90);
    CHECK_STR(all[2].name, "other");
    acc_mem_free(all);
    CHECK_OK(acc_db_list_recorded(db, "other", &all, &n));
    CHECK_INT(n, 1);
    acc_mem_free(all);
    CHECK_OK(acc_db_list_recorded(db, "nobody", &all, &n));
    CHECK_INT(n, 0);
    CHECK(all == NULL);

    CHECK_ERR(acc_db_get_recorded(db, "my-model", 70, &back, &yaml), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("my-model");
    CHECK_MSG_HAS("sm_70");
    CHECK_MSG_HAS("ACC_RECORD=1");
    CHECK(yaml == NULL);
    acc_db_close(db);
}

ACC_TEST(recorded_bad_input_refused)
{
    const char *path = tu_fresh("recorded_bad.db");
    acc_db_t *db = tu_open(path, 0);
    acc_db_recorded_t r = sample("m", 90, 0);

    CHECK_ERR(acc_db_put_recorded(db, &r, "tensors: [1, 2\n"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("recorded profile m");
    CHECK_ERR(acc_db_put_recorded(db, &r, NULL), ACC_ERR_INVALID);
    r.ranks = 0;
    CHECK_ERR(acc_db_put_recorded(db, &r, "a: 1\n"), ACC_ERR_INVALID);
    CHECK_MSG_HAS("ranks 0");
    r = sample("m", 90, 0);
    r.batch = -1;
    CHECK_ERR(acc_db_put_recorded(db, &r, "a: 1\n"), ACC_ERR_INVALID);
    r = sample("", 90, 0);
    CHECK_ERR(acc_db_put_recorded(db, &r, "a: 1\n"), ACC_ERR_INVALID);
    CHECK_MSG_HAS("recorded profile name");
    CHECK_ERR(acc_db_get_recorded(db, "", 90, &r, NULL), ACC_ERR_INVALID);
    /* Nothing was stored. */
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM recorded_profiles"), 0);
    acc_db_close(db);

    /* Readers see the recordings; a file opened read-only cannot take one. */
    db = tu_open(path, ACC_DB_READONLY);
    r = sample("m", 90, 0);
    CHECK(acc_db_put_recorded(db, &r, "a: 1\n") != ACC_OK);
    acc_db_close(db);
}

ACC_TEST(profiles_say_where_they_came_from)
{
    const char *path = tu_fresh("profile_origin.db");
    acc_db_t *db = tu_open(path, 0);
    acc_db_profile_t *all = NULL;
    char origin[ACC_DB_TEXT_MAX + 10];
    size_t n = 0;

    CHECK_OK(acc_db_put_profile(db, "b-model", "a: 1\n", 10, "shipped (models/b-model.yaml)"));
    CHECK_OK(acc_db_put_profile(db, "a-model", "a: 1\n", 20, NULL));
    CHECK_OK(acc_db_list_profiles(db, &all, &n));
    CHECK_INT(n, 2);
    CHECK_STR(all[0].name, "a-model");
    CHECK_STR(all[0].origin, "");
    CHECK(all[0].param_count == 20);
    CHECK_STR(all[1].origin, "shipped (models/b-model.yaml)");
    acc_mem_free(all);
    /* Storing it again from elsewhere says so. */
    CHECK_OK(acc_db_put_profile(db, "b-model", "a: 1\n", 10, "file b.yaml"));
    CHECK_OK(acc_db_list_profiles(db, &all, &n));
    CHECK_STR(all[1].origin, "file b.yaml");
    acc_mem_free(all);
    memset(origin, 'x', sizeof(origin) - 1);
    origin[sizeof(origin) - 1] = '\0';
    CHECK_ERR(acc_db_put_profile(db, "c-model", "a: 1\n", 1, origin), ACC_ERR_RANGE);
    CHECK_MSG_HAS("origin");
    acc_db_close(db);
}
