/* Kernels in the database: one CUBIN per (plan, architecture, data type, reduction, compiler),
 * handed out only for the source it was built from; collectives that do not reduce have one
 * per type; absent and stale kernels say what to run; bad keys are refused. */
#include "db_test_util.h"

#define NVRTC "nvrtc 12.4"

/* A kernel record for plan_hash whose CUBIN bytes depend on (dtype, redop), so that a get of
 * the wrong key cannot pass for the right one.  The bytes live in buf. */
static acc_db_kernel_t make_kernel(const char *plan_hash, const char *arch, acc_dtype_t dt,
                                   acc_redop_t op, uint8_t buf[512])
{
    acc_db_kernel_t k;
    char src[64];
    size_t i;

    memset(&k, 0, sizeof(k));
    snprintf(k.plan_hash, sizeof(k.plan_hash), "%s", plan_hash);
    snprintf(k.arch, sizeof(k.arch), "%s", arch);
    k.dtype = dt;
    k.redop = op;
    snprintf(k.compiler_version, sizeof(k.compiler_version), NVRTC);
    snprintf(src, sizeof(src), "__global__ void acc_kernel() {} // %s %s", acc_dtype_name(dt),
             acc_redop_name(op));
    CHECK_OK(acc_sha256_hex(src, strlen(src), k.source_hash));
    buf[0] = 0x7f;
    buf[1] = 'E';
    buf[2] = 'L';
    buf[3] = 'F';
    for (i = 4; i < 512; i++) /* NUL bytes included: a blob, not text */
        buf[i] = (uint8_t)(i * 7 + (size_t)dt * 31 + (size_t)op * 57);
    k.cubin = buf;
    k.cubin_size = 512;
    k.log = "ptxas info: 0 bytes stack frame";
    return k;
}

static void check_get(acc_db_t *db, const acc_db_kernel_t *want)
{
    acc_db_kernel_t back;
    CHECK_OK(acc_db_get_kernel(db, want->plan_hash, want->arch, want->dtype, want->redop,
                               want->compiler_version, want->source_hash, &back));
    CHECK_INT(back.cubin_size, want->cubin_size);
    CHECK(memcmp(back.cubin, want->cubin, want->cubin_size) == 0);
    CHECK_STR(back.log, want->log);
    CHECK_STR(back.source_hash, want->source_hash);
    CHECK_STR(back.plan_hash, want->plan_hash);
    CHECK_STR(back.arch, want->arch);
    CHECK_INT(back.dtype, want->dtype);
    CHECK_INT(back.redop, want->redop);
    acc_db_kernel_clear(&back);
    CHECK(back.cubin == NULL && back.log == NULL);
}

ACC_TEST(round_trip_per_type_and_reduction)
{
    const char *path = tu_fresh("kernel_round_trip.db");
    acc_db_t *db = tu_open(path, 0);
    acc_plan_t *plan = fx_ring_allreduce(4, 1);
    char hash[ACC_SHA256_HEX_LEN + 1];
    uint8_t bufs[ACC_DT_COUNT * 2][512];
    acc_db_kernel_t k[ACC_DT_COUNT * 2];
    uint64_t n = 0;
    int i;

    CHECK_OK(acc_db_put_plan(db, plan, hash));
    /* Every type, with sum and with max. */
    for (i = 0; i < ACC_DT_COUNT * 2; i++) {
        k[i] = make_kernel(hash, "sm_90", (acc_dtype_t)(i / 2), i % 2 ? ACC_RED_MAX : ACC_RED_SUM,
                           bufs[i]);
        CHECK_OK(acc_db_put_kernel(db, &k[i]));
    }
    for (i = 0; i < ACC_DT_COUNT * 2; i++)
        check_get(db, &k[i]);
    CHECK_OK(acc_db_count_kernels(db, hash, NULL, &n));
    CHECK_INT(n, ACC_DT_COUNT * 2);
    /* The rows carry the names acc prints, so that the file reads without acc. */
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM kernels WHERE dtype = 'bfloat16' AND "
                               "redop = 'max'"),
              1);
    CHECK_INT(tu_sql_int(path, "SELECT count(DISTINCT dtype) FROM kernels"), ACC_DT_COUNT);
    acc_plan_destroy(plan);
    acc_db_close(db);
}

ACC_TEST(same_plan_two_types_two_rows)
{
    const char *path = tu_fresh("kernel_two_types.db");
    acc_db_t *db = tu_open(path, 0);
    acc_plan_t *plan = fx_ring_allreduce(8, 2);
    char hash[ACC_SHA256_HEX_LEN + 1];
    uint8_t b32[512], b16[512], b80[512];
    acc_db_kernel_t f32, f16, f16_80;
    char *before, *after;
    uint64_t n = 0;

    CHECK_OK(acc_db_put_plan(db, plan, hash));
    f32 = make_kernel(hash, "sm_90", ACC_DT_F32, ACC_RED_SUM, b32);
    f16 = make_kernel(hash, "sm_90", ACC_DT_F16, ACC_RED_SUM, b16);
    f16_80 = make_kernel(hash, "sm_80", ACC_DT_F16, ACC_RED_SUM, b80);
    CHECK_OK(acc_db_put_kernel(db, &f32));
    CHECK_OK(acc_db_put_kernel(db, &f16));
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM kernels"), 2);
    check_get(db, &f32);
    check_get(db, &f16);
    CHECK_OK(acc_db_put_kernel(db, &f16_80));
    CHECK_OK(acc_db_count_kernels(db, NULL, "sm_90", &n));
    CHECK_INT(n, 2);
    CHECK_OK(acc_db_count_kernels(db, NULL, "sm_80", &n));
    CHECK_INT(n, 1);
    CHECK_OK(acc_db_count_kernels(db, NULL, NULL, &n));
    CHECK_INT(n, 3);
    CHECK_OK(acc_db_count_kernels(db, NULL, "sm_70", &n));
    CHECK_INT(n, 0);

    /* Storing the same kernels again leaves the file as it was. */
    acc_db_close(db);
    before = tu_dump(path);
    db = tu_open(path, 0);
    CHECK_OK(acc_db_put_kernel(db, &f16));
    CHECK_OK(acc_db_put_kernel(db, &f32));
    acc_db_close(db);
    after = tu_dump(path);
    CHECK_STR(after, before);
    acc_mem_free(before);
    acc_mem_free(after);

    /* A rebuild from new source replaces the row of its key only. */
    db = tu_open(path, 0);
    CHECK_OK(acc_sha256_hex("new codegen", 11, f16.source_hash));
    b16[100] ^= 0xff;
    CHECK_OK(acc_db_put_kernel(db, &f16));
    check_get(db, &f16);
    check_get(db, &f32);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM kernels"), 3);
    acc_plan_destroy(plan);
    acc_db_close(db);
}

ACC_TEST(data_movement_has_one_kernel_per_type)
{
    const char *path = tu_fresh("kernel_allgather.db");
    acc_db_t *db = tu_open(path, 0);
    acc_plan_t *plan = fx_ring_allgather(8, 1);
    char hash[ACC_SHA256_HEX_LEN + 1];
    uint8_t buf[512], buf2[512];
    acc_db_kernel_t k, again;
    acc_redop_t op;

    CHECK(!acc_coll_reduces(plan->coll));
    CHECK_OK(acc_db_put_plan(db, plan, hash));
    k = make_kernel(hash, "sm_90", ACC_DT_BF16, ACC_RED_MAX, buf);
    CHECK_OK(acc_db_put_kernel(db, &k));
    /* Any reduction finds it: the module does not depend on one. */
    for (op = ACC_RED_SUM; op < ACC_RED_COUNT; op++) {
        k.redop = op;
        check_get(db, &k);
    }
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM kernels WHERE redop = 'none'"), 1);
    /* Stored under another reduction, it is the same row. */
    again = make_kernel(hash, "sm_90", ACC_DT_BF16, ACC_RED_SUM, buf2);
    CHECK_OK(acc_db_put_kernel(db, &again));
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM kernels"), 1);
    /* A type without a row is absent, and the message says what builds it (no --ops: the
     * reduction does not matter here). */
    CHECK_ERR(
        acc_db_get_kernel(db, hash, "sm_90", ACC_DT_F16, ACC_RED_SUM, NVRTC, k.source_hash, &again),
        ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS(path);
    CHECK_MSG_HAS("--arch sm_90 --types half");
    CHECK(strstr(acc_error_message(), "--ops") == NULL);
    acc_plan_destroy(plan);
    acc_db_close(db);
}

ACC_TEST(stale_and_absent_kernels_say_what_to_run)
{
    const char *path = tu_fresh("kernel_absent.db");
    acc_db_t *db = tu_open(path, 0);
    acc_plan_t *plan = fx_ring_allreduce(4, 1);
    char hash[ACC_SHA256_HEX_LEN + 1], other[ACC_SHA256_HEX_LEN + 1];
    uint8_t buf[512];
    acc_db_kernel_t k, back;

    CHECK_OK(acc_db_put_plan(db, plan, hash));
    k = make_kernel(hash, "sm_90a", ACC_DT_F32, ACC_RED_SUM, buf);
    CHECK_OK(acc_db_put_kernel(db, &k));

    /* Built from other source than the caller generates now: stale, not returned. */
    CHECK_OK(acc_sha256_hex("changed", 7, other));
    CHECK_ERR(acc_db_get_kernel(db, hash, "sm_90a", ACC_DT_F32, ACC_RED_SUM, NVRTC, other, &back),
              ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("stale");
    CHECK_MSG_HAS("--arch sm_90a");
    CHECK(back.cubin == NULL);
    /* Another type, reduction, architecture or compiler is absent. */
    CHECK_ERR(acc_db_get_kernel(db, hash, "sm_90a", ACC_DT_BF16, ACC_RED_SUM, NVRTC, k.source_hash,
                                &back),
              ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS(path);
    CHECK_MSG_HAS("for bfloat16 sum");
    CHECK_MSG_HAS("acc-compile --topo SRC --db");
    CHECK_MSG_HAS("--arch sm_90a --types bfloat16 --ops sum");
    CHECK_ERR(
        acc_db_get_kernel(db, hash, "sm_90a", ACC_DT_F32, ACC_RED_MIN, NVRTC, k.source_hash, &back),
        ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("--types float --ops min");
    CHECK_ERR(
        acc_db_get_kernel(db, hash, "sm_80", ACC_DT_F32, ACC_RED_SUM, NVRTC, k.source_hash, &back),
        ACC_ERR_NOT_FOUND);
    CHECK_ERR(acc_db_get_kernel(db, hash, "sm_90a", ACC_DT_F32, ACC_RED_SUM, "nvrtc 13.0",
                                k.source_hash, &back),
              ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("nvrtc 13.0");
    /* A plan that is not stored has no kernels either. */
    memset(other, 'c', ACC_SHA256_HEX_LEN);
    CHECK_ERR(acc_db_get_kernel(db, other, "sm_90a", ACC_DT_F32, ACC_RED_SUM, NVRTC, k.source_hash,
                                &back),
              ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("is not stored");
    acc_plan_destroy(plan);
    acc_db_close(db);
}

ACC_TEST(bad_keys_are_refused)
{
    const char *path = tu_fresh("kernel_bad.db");
    acc_db_t *db = tu_open(path, 0);
    acc_plan_t *plan = fx_ring_allreduce(4, 1);
    char hash[ACC_SHA256_HEX_LEN + 1];
    uint8_t buf[512];
    acc_db_kernel_t k, back;
    uint64_t n = 7;

    CHECK_OK(acc_db_put_plan(db, plan, hash));
    k = make_kernel(hash, "sm_90", ACC_DT_F32, ACC_RED_SUM, buf);
    k.dtype = (acc_dtype_t)ACC_DT_COUNT;
    CHECK_ERR(acc_db_put_kernel(db, &k), ACC_ERR_INVALID);
    CHECK_MSG_HAS(path);
    CHECK_MSG_HAS("data type 5 is not one of float, half");
    k.dtype = (acc_dtype_t)-1;
    CHECK_ERR(acc_db_put_kernel(db, &k), ACC_ERR_INVALID);
    CHECK_MSG_HAS("data type -1");
    k.dtype = ACC_DT_F32;
    k.redop = (acc_redop_t)9;
    CHECK_ERR(acc_db_put_kernel(db, &k), ACC_ERR_INVALID);
    CHECK_MSG_HAS("reduction 9 is not one of sum, prod");
    CHECK_ERR(acc_db_get_kernel(db, hash, "sm_90", ACC_DT_F32, (acc_redop_t)9, NVRTC, k.source_hash,
                                &back),
              ACC_ERR_INVALID);
    CHECK_MSG_HAS("reduction 9");
    CHECK_ERR(acc_db_get_kernel(db, hash, "sm_90", (acc_dtype_t)77, ACC_RED_SUM, NVRTC,
                                k.source_hash, &back),
              ACC_ERR_INVALID);
    CHECK_MSG_HAS("data type 77");
    k.redop = ACC_RED_SUM;
    CHECK_ERR(
        acc_db_get_kernel(db, hash, "hopper", ACC_DT_F32, ACC_RED_SUM, NVRTC, k.source_hash, &back),
        ACC_ERR_INVALID);
    CHECK_MSG_HAS("\"hopper\" is not of the form sm_90");
    CHECK_ERR(acc_db_count_kernels(db, "xyz", NULL, &n), ACC_ERR_INVALID);
    CHECK_INT(n, 0);
    k.cubin_size = 0;
    CHECK_ERR(acc_db_put_kernel(db, &k), ACC_ERR_INVALID);
    CHECK_MSG_HAS("has no CUBIN");
    k.cubin_size = 512;
    /* The plan must be stored first. */
    memset(k.plan_hash, 'c', ACC_SHA256_HEX_LEN);
    CHECK_ERR(acc_db_put_kernel(db, &k), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("store the plan first");
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM kernels"), 0);
    acc_plan_destroy(plan);
    acc_db_close(db);
}

ACC_TEST(summary_counts_kernels_per_arch)
{
    const char *path = tu_fresh("kernel_summary.db");
    acc_db_t *db = tu_open(path, 0);
    acc_plan_t *plan = fx_ring_allreduce(4, 1);
    char hash[ACC_SHA256_HEX_LEN + 1];
    static const char *const archs[] = {"sm_90", "sm_80", "sm_90", "sm_100a", "sm_90"};
    uint8_t buf[512];
    acc_buf_t b;
    int i;

    CHECK_OK(acc_db_put_plan(db, plan, hash));
    acc_buf_init(&b);
    CHECK_OK(acc_db_summary(db, &b));
    CHECK_MSG(strstr(b.data, "plans: 1, kernels: 0\n") != NULL, "%s", b.data);
    for (i = 0; i < 5; i++) {
        acc_db_kernel_t k = make_kernel(hash, archs[i], (acc_dtype_t)i, ACC_RED_SUM, buf);
        CHECK_OK(acc_db_put_kernel(db, &k));
    }
    acc_buf_free(&b);
    acc_buf_init(&b);
    CHECK_OK(acc_db_summary(db, &b));
    CHECK_MSG(strstr(b.data, "plans: 1, kernels: 5 (sm_80 1, sm_90 3, sm_100a 1)\n") != NULL, "%s",
              b.data);
    acc_buf_free(&b);
    acc_plan_destroy(plan);
    acc_db_close(db);
}
