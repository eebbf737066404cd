/*
 * Broadcast and reduce at every root, in every size range the tables give acc (on main, rank 0
 * died with SIGSEGV for roots other than the plan's, and the others with connection resets):
 * the table's plan runs where its root is the call's, the fallback everywhere else, and every
 * result is right, in place and not.
 */
#include "acc_db.h"
#include "comm_util.h"
#include "ranks.h"

#define TOPO   "gpus=4 nvlink=18"
#define NRANKS 4
/* Ranges that start above this are not run: four ranks' buffers of 128 MiB and more do not
 * belong in a test (the dispatch that failed is the same at every size), nor, under the
 * sanitizers' slowdown, of more than 4 MiB. */
#define MAX_TEST_BYTES (ACC_TEST_SANITIZED ? 4ull << 20 : 64ull << 20)

typedef struct {
    char db[512];
    uint64_t sizes[2][64]; /* per collective (broadcast, reduce): one size per acc range */
    size_t nsizes[2];
} roots_t;

static int every_root(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    const roots_t *t = arg;
    static const acc_coll_t colls[2] = {ACC_COLL_BROADCAST, ACC_COLL_REDUCE};
    acc_comm_t *c;
    acc_comm_stat_t *rows;
    size_t nrows;
    uint64_t acc_calls = 0, fallback_calls = 0;

    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    CHECK_STR(acc_comm_fallback_reason(c), "");
    for (int i = 0; i < 2; i++)
        for (size_t s = 0; s < t->nsizes[i]; s++)
            for (int root = 0; root < nranks; root++) {
                call_t k = {colls[i],
                            ACC_DT_F32,
                            ACC_RED_SUM,
                            t->sizes[i][s] / 4,
                            (int)((s + (size_t)root) & 1),
                            root,
                            (uint32_t)(s * 7 + (size_t)root)};
                call_ok(c, &k);
            }
    CHECK_OK(acc_comm_stats(c, &rows, &nrows));
    for (size_t i = 0; i < nrows; i++) {
        if (rank == 0)
            printf("%-10s [%llu, %llu] %llu calls: %s\n", acc_coll_name(rows[i].coll),
                   (unsigned long long)rows[i].min_bytes, (unsigned long long)rows[i].max_bytes,
                   (unsigned long long)rows[i].calls, rows[i].ran);
        *(rows[i].fallback ? &fallback_calls : &acc_calls) += rows[i].calls;
    }
    acc_mem_free(rows);
    /* Both served calls: acc's plans where the call's root is theirs, the fallback elsewhere. */
    CHECK(acc_calls > 0 && fallback_calls > 0);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(broadcast_and_reduce_at_every_root_in_every_acc_range)
{
    static const acc_coll_t colls[2] = {ACC_COLL_BROADCAST, ACC_COLL_REDUCE};
    roots_t t;
    acc_topo_t *topo = NULL;
    acc_db_t *db = NULL;
    char fp[ACC_SHA256_HEX_LEN + 1];

    memset(&t, 0, sizeof(t));
    snprintf(t.db, sizeof(t.db), "%s", acc_test_tmp("roots.db"));
    build_db(t.db, TOPO);
    CHECK_OK(acc_topo_load(TOPO, &topo));
    CHECK_OK(acc_topo_fingerprint(topo, fp));
    CHECK_OK(acc_db_open(t.db, ACC_DB_READONLY, &db));
    for (int i = 0; i < 2; i++) {
        acc_select_table_t *table = NULL;
        CHECK_OK(acc_db_get_selection(db, fp, colls[i], &table));
        for (size_t e = 0; e < table->n && t.nsizes[i] < 64; e++) {
            const acc_select_entry_t *x = &table->entries[e];
            uint64_t bytes = x->min_bytes < 4 ? 4 : x->min_bytes;
            if (x->use_nccl)
                continue;
            if (bytes > MAX_TEST_BYTES) {
                printf("%s: acc's %s from %llu bytes: not run (too large for a test)\n",
                       acc_coll_name(colls[i]), x->algo, (unsigned long long)x->min_bytes);
                continue;
            }
            t.sizes[i][t.nsizes[i]++] = bytes / 4 * 4;
            printf("%s: acc's %s from %llu bytes\n", acc_coll_name(colls[i]), x->algo,
                   (unsigned long long)x->min_bytes);
        }
        CHECK_MSG(t.nsizes[i] > 0, "the %s table gives acc no range", acc_coll_name(colls[i]));
        acc_select_destroy(table);
    }
    acc_db_close(db);
    acc_topo_destroy(topo);
    comm_env(TOPO, "60000");
    setenv("ACC_DB", t.db, 1);
    ranks_run(NRANKS, every_root, &t, 280);
}
