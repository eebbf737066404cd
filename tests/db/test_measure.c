/*
 * Measured times in the database: stored beside the model's predictions and read back per
 * topology and data type, replaced when measured again, refused when they name a plan or
 * topology the file does not hold, a plan of another collective or rank count, or no time; and
 * an image build hands them to the table builder, whose table then names the measured plan
 * where it is faster and says the time was measured.
 */
#include "db_test_util.h"

#define SMALL "gpus=4 nvlink=18"

typedef struct {
    acc_db_t *db;
    acc_topo_t *topo;
    char fp[ACC_SHA256_HEX_LEN + 1];
    acc_db_build_opts_t opts;
} fixture_t;

/* An allreduce image of a small machine, up to 1 MiB. */
static void setup(fixture_t *f, const char *name)
{
    f->db = tu_open(tu_fresh(name), 0);
    f->topo = tu_synth(SMALL);
    acc_db_build_opts_init(&f->opts);
    f->opts.colls[0] = ACC_COLL_ALLREDUCE;
    f->opts.ncolls = 1;
    f->opts.select.max_bytes = 1u << 20;
    CHECK_OK(acc_db_build(f->db, f->topo, &f->opts, NULL));
    CHECK_OK(acc_topo_fingerprint(f->topo, f->fp));
}

static void teardown(fixture_t *f)
{
    acc_db_close(f->db);
    acc_topo_destroy(f->topo);
}

static acc_db_measurement_t measurement(const fixture_t *f, const char *plan_hash, uint64_t nbytes,
                                        double us)
{
    acc_db_measurement_t m;
    memset(&m, 0, sizeof(m));
    snprintf(m.topo_fingerprint, sizeof(m.topo_fingerprint), "%s", f->fp);
    snprintf(m.plan_hash, sizeof(m.plan_hash), "%s", plan_hash);
    snprintf(m.source, sizeof(m.source), "bench_kernels test");
    m.coll = ACC_COLL_ALLREDUCE;
    m.dtype = ACC_DT_F32;
    m.nbytes = nbytes;
    m.us = us;
    return m;
}

/* The stored table's entry at nbytes. */
static acc_select_entry_t entry_at(const fixture_t *f, uint64_t nbytes)
{
    acc_select_table_t *t = NULL;
    acc_select_entry_t e;
    CHECK_OK(acc_db_get_selection(f->db, f->fp, ACC_COLL_ALLREDUCE, &t));
    CHECK(acc_select_lookup(t, nbytes) != NULL);
    e = *acc_select_lookup(t, nbytes);
    acc_select_destroy(t);
    return e;
}

ACC_TEST(stored_and_read_back)
{
    fixture_t f;
    acc_db_measurement_t m;
    acc_select_measured_t *got = NULL;
    size_t n = 0;
    acc_select_entry_t e;

    setup(&f, "measure_roundtrip.db");
    e = entry_at(&f, 4096);
    CHECK(!e.use_nccl && e.plan_hash[0]);
    m = measurement(&f, e.plan_hash, 4096, 7.5);
    CHECK_OK(acc_db_put_measurement(f.db, &m));
    CHECK_OK(acc_db_get_measurements(f.db, f.fp, ACC_DT_F32, &got, &n));
    CHECK_INT(n, 1);
    CHECK_INT(got[0].coll, ACC_COLL_ALLREDUCE);
    CHECK_STR(got[0].plan_hash, e.plan_hash);
    CHECK_INT(got[0].nbytes, 4096);
    CHECK_NEAR(got[0].us, 7.5, 0);
    acc_mem_free(got);
    /* Measured again: replaced, not added. */
    m.us = 6.25;
    CHECK_OK(acc_db_put_measurement(f.db, &m));
    CHECK_OK(acc_db_get_measurements(f.db, f.fp, ACC_DT_F32, &got, &n));
    CHECK_INT(n, 1);
    CHECK_NEAR(got[0].us, 6.25, 0);
    acc_mem_free(got);
    /* Another data type has none. */
    CHECK_OK(acc_db_get_measurements(f.db, f.fp, ACC_DT_F16, &got, &n));
    CHECK(n == 0 && got == NULL);
    teardown(&f);
}

ACC_TEST(what_cannot_be_used_is_refused)
{
    fixture_t f;
    acc_db_measurement_t m;
    acc_select_entry_t e;
    char other[ACC_SHA256_HEX_LEN + 1];

    setup(&f, "measure_refused.db");
    e = entry_at(&f, 4096);
    m = measurement(&f, e.plan_hash, 4096, 0);
    CHECK_ERR(acc_db_put_measurement(f.db, &m), ACC_ERR_INVALID);
    CHECK_MSG_HAS("above 0");
    m = measurement(&f, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 4096,
                    1);
    CHECK_ERR(acc_db_put_measurement(f.db, &m), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("store them first");
    m = measurement(&f, e.plan_hash, 4096, 1);
    m.coll = ACC_COLL_ALLGATHER;
    CHECK_ERR(acc_db_put_measurement(f.db, &m), ACC_ERR_INVALID);
    CHECK_MSG_HAS("allreduce plan of 4 ranks");
    /* A topology of another rank count. */
    tu_put_synth(f.db, "gpus=8 nvlink=18", other);
    m = measurement(&f, e.plan_hash, 4096, 1);
    snprintf(m.topo_fingerprint, sizeof(m.topo_fingerprint), "%s", other);
    CHECK_ERR(acc_db_put_measurement(f.db, &m), ACC_ERR_INVALID);
    CHECK_INT(tu_sql_int(acc_db_path(f.db), "SELECT count(*) FROM measurements"), 0);
    teardown(&f);
}

/* The plan the table names at 1 MiB, measured far faster at 4 KiB than the model's choice
 * there: built again, the table names it at 4 KiB and records the measurement. */
ACC_TEST(an_image_build_prefers_them)
{
    fixture_t f;
    acc_db_measurement_t m;
    acc_db_build_report_t rep;
    acc_select_entry_t small, large, after;

    setup(&f, "measure_build.db");
    small = entry_at(&f, 4096);
    large = entry_at(&f, 1u << 20);
    CHECK(!small.use_nccl && !large.use_nccl);
    CHECK(strcmp(small.plan_hash, large.plan_hash) != 0);
    CHECK_INT(small.source, ACC_SELECT_MODEL);
    m = measurement(&f, large.plan_hash, 4096, small.predicted_us / 100);
    CHECK_OK(acc_db_put_measurement(f.db, &m));
    CHECK_OK(acc_db_build(f.db, f.topo, &f.opts, &rep));
    CHECK_INT(rep.measured, 1);
    after = entry_at(&f, 4096);
    CHECK_STR(after.plan_hash, large.plan_hash);
    CHECK_INT(after.source, ACC_SELECT_MEASURED);
    CHECK_NEAR(after.measured_us, m.us, 0);
    CHECK(after.predicted_us > after.measured_us);
    teardown(&f);
}
