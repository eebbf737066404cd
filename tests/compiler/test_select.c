/* Selection tables: ordering, overlap refusal, merging and look-up. */
#include "acc_select.h"
#include "acc_test.h"

static acc_select_entry_t entry(uint64_t lo, uint64_t hi, int nccl, const char *algo)
{
    acc_select_entry_t e;
    memset(&e, 0, sizeof(e));
    e.min_bytes = lo;
    e.max_bytes = hi;
    e.use_nccl = nccl;
    snprintf(e.algo, sizeof(e.algo), "%s", algo);
    e.predicted_us = (double)lo;
    e.measured_us = -1;
    return e;
}

ACC_TEST(lookup_finds_ranges_and_gaps)
{
    acc_select_table_t *t;
    acc_select_entry_t e;
    CHECK_OK(acc_select_create(ACC_COLL_ALLREDUCE, "ab", &t));
    e = entry(1024, 65535, 0, "oneshot");
    CHECK_OK(acc_select_add(t, &e));
    e = entry(1u << 20, 1u << 30, 1, "Ring");
    CHECK_OK(acc_select_add(t, &e));
    e = entry(65536, (1u << 20) - 1, 0, "twoshot");
    CHECK_OK(acc_select_add(t, &e));
    CHECK_INT(t->n, 3);
    CHECK_STR(acc_select_lookup(t, 1024)->algo, "oneshot");
    CHECK_STR(acc_select_lookup(t, 65535)->algo, "oneshot");
    CHECK_STR(acc_select_lookup(t, 65536)->algo, "twoshot");
    CHECK_STR(acc_select_lookup(t, 1u << 30)->algo, "Ring");
    CHECK(acc_select_lookup(t, 1023) == NULL);
    CHECK(acc_select_lookup(t, (1ull << 30) + 1) == NULL);
    e = entry(60000, 70000, 0, "ring");
    CHECK_ERR(acc_select_add(t, &e), ACC_ERR_INVALID);
    CHECK_MSG_HAS("overlaps 1024..65535");
    e = entry(10, 5, 0, "ring");
    CHECK_ERR(acc_select_add(t, &e), ACC_ERR_INVALID);
    acc_select_destroy(t);
    acc_select_destroy(NULL);
}

ACC_TEST(merge_joins_touching_equal_choices_only)
{
    acc_select_table_t *t;
    acc_select_entry_t e;
    CHECK_OK(acc_select_create(ACC_COLL_ALLGATHER, "", &t));
    e = entry(0, 99, 0, "ring");
    CHECK_OK(acc_select_add(t, &e));
    e = entry(100, 199, 0, "ring");
    CHECK_OK(acc_select_add(t, &e));
    e = entry(300, 399, 0, "ring"); /* a gap: stays apart */
    CHECK_OK(acc_select_add(t, &e));
    e = entry(400, 499, 1, "ring"); /* NCCL's ring is another choice */
    CHECK_OK(acc_select_add(t, &e));
    acc_select_merge(t);
    CHECK_INT(t->n, 3);
    CHECK_INT(t->entries[0].max_bytes, 199);
    CHECK_NEAR(t->entries[0].predicted_us, 0, 0);
    CHECK_INT(t->entries[1].min_bytes, 300);
    acc_select_destroy(t);
}

static acc_select_nccl_entry_t nccl_entry(uint64_t lo, uint64_t hi, acc_nccl_algo_t a,
                                          acc_nccl_proto_t p, int channels)
{
    acc_select_nccl_entry_t e = {lo, hi, a, p, channels, (double)lo, -1, ACC_SELECT_MODEL};
    return e;
}

/* NCCL's choice per size: ranges in order, touching equal choices joined, gaps left as "no
 * advice", and anything out of order or outside NCCL's numbering refused. */
ACC_TEST(nccl_choices_append_in_order_and_look_up)
{
    acc_select_nccl_t *t;
    acc_select_nccl_entry_t e;
    CHECK_OK(acc_select_nccl_create(ACC_COLL_ALLGATHER, "ab", &t));
    e = nccl_entry(1024, 2047, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL, 1);
    CHECK_OK(acc_select_nccl_append(t, &e));
    e = nccl_entry(2048, 4095, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL, 1);
    CHECK_OK(acc_select_nccl_append(t, &e)); /* the same choice: joined */
    e = nccl_entry(4096, 8191, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_LL, 2);
    CHECK_OK(acc_select_nccl_append(t, &e)); /* other channels: a range of its own */
    e = nccl_entry(1u << 20, 1u << 30, ACC_NCCL_ALGO_NVLS, ACC_NCCL_PROTO_SIMPLE, 16);
    CHECK_OK(acc_select_nccl_append(t, &e));
    CHECK_INT(t->n, 3);
    CHECK_INT(t->entries[0].max_bytes, 4095);
    CHECK_NEAR(t->entries[0].predicted_us, 1024, 0);
    CHECK_INT(acc_select_nccl_lookup(t, 3000)->channels, 1);
    CHECK_INT(acc_select_nccl_lookup(t, 8191)->channels, 2);
    CHECK_INT(acc_select_nccl_lookup(t, 1u << 20)->algo, ACC_NCCL_ALGO_NVLS);
    CHECK(acc_select_nccl_lookup(t, 8192) == NULL);
    CHECK(acc_select_nccl_lookup(t, 1023) == NULL);
    CHECK(acc_select_nccl_lookup(t, (1ull << 30) + 1) == NULL);
    e = nccl_entry(1u << 29, 1ull << 31, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE, 0);
    CHECK_ERR(acc_select_nccl_append(t, &e), ACC_ERR_INVALID);
    CHECK_MSG_HAS("does not follow");
    e = nccl_entry(1ull << 31, 1ull << 32, ACC_NCCL_ALGO_COUNT, ACC_NCCL_PROTO_SIMPLE, 0);
    CHECK_ERR(acc_select_nccl_append(t, &e), ACC_ERR_INVALID);
    e = nccl_entry(1ull << 31, 1ull << 32, ACC_NCCL_ALGO_RING, ACC_NCCL_PROTO_SIMPLE, -1);
    CHECK_ERR(acc_select_nccl_append(t, &e), ACC_ERR_INVALID);
    CHECK_MSG_HAS("out of range");
    CHECK_INT(t->n, 3);
    acc_select_nccl_destroy(t);
    acc_select_nccl_destroy(NULL);
}
