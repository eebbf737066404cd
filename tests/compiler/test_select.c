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
