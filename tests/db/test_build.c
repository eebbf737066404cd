/* The image build through the API (acc_db_build): the stored tables and plans are the ones
 * acc_select_build gives and verify again on the way out; a second build stores nothing new;
 * with sm_90 (when acc has NVRTC) every plan a table names gets its CUBINs, the bytes the kernel
 * cache hands out; a table of another topology is refused, naming both fingerprints; bad
 * options are refused before anything is stored.  Small machines and one collective keep it
 * quick; each case has its own file (ctest -j runs them together). */
#include "acc_kernels.h"
#include "db_test_util.h"

#include <stdlib.h>

#define SMALL "gpus=4 nvlink=18"

static void need_nvrtc(void)
{
    if (!acc_nvrtc_available())
        ACC_SKIP("acc was built without NVRTC");
}

static void set_one_coll(acc_db_build_opts_t *o, acc_coll_t c)
{
    o->colls[0] = c;
    o->ncolls = 1;
}

/* The kernels of coll's table for sm_90, through the caller's cache. */
static void sm90_opts(acc_db_build_opts_t *o, acc_coll_t coll, acc_kcache_t *cache)
{
    acc_db_build_opts_init(o);
    set_one_coll(o, coll);
    snprintf(o->kernels.archs[0], sizeof(o->kernels.archs[0]), "sm_90");
    o->kernels.narchs = 1;
    o->kernels.cache = cache;
}

/* Every plan of the sweep is stored and comes back verified and equal; the stored table is the
 * sweep's. */
static void check_stored_sweep(acc_db_t *db, const acc_select_result_t *r)
{
    acc_select_table_t *t = NULL;
    size_t i;

    CHECK_OK(acc_db_get_selection(db, r->table->topo_fingerprint, r->coll, &t));
    tu_check_same_table(t, r->table);
    acc_select_destroy(t);
    /* NCCL's choice at every size, what the tuner plugin serves, is stored beside it. */
    if (r->nccl) {
        acc_select_nccl_t *nccl = NULL;
        CHECK_OK(acc_db_get_nccl_choices(db, r->table->topo_fingerprint, r->coll, &nccl));
        tu_check_same_nccl(nccl, r->nccl);
        acc_select_nccl_destroy(nccl);
    }
    for (i = 0; i < r->nplans; i++) {
        acc_plan_t *back = NULL;
        char hash[ACC_SHA256_HEX_LEN + 1];
        CHECK_OK(acc_plan_hash(r->plans[i].plan, hash));
        if (r->plans[i].hash[0])
            CHECK_STR(r->plans[i].hash, hash);
        CHECK_OK(acc_db_get_plan(db, hash, &back)); /* verifies again */
        CHECK(acc_plan_equal(back, r->plans[i].plan));
        acc_plan_destroy(back);
    }
}

static acc_select_result_t *sweep(const acc_topo_t *topo, acc_coll_t coll)
{
    acc_select_builder_t *b = NULL;
    acc_select_result_t *r = NULL;
    CHECK_OK(acc_select_builder_create(topo, NULL, &b));
    CHECK_OK(acc_select_build(b, coll, &r));
    acc_select_builder_destroy(b);
    return r;
}

ACC_TEST(stores_what_the_sweep_selects_and_again_nothing_new)
{
    const char *path = tu_fresh("build_sweep.db");
    acc_topo_t *topo = tu_synth(SMALL);
    acc_db_t *db = tu_open(path, 0);
    acc_db_build_opts_t o;
    acc_db_build_report_t rep;
    acc_select_result_t *r = sweep(topo, ACC_COLL_ALLREDUCE);
    char fp[ACC_SHA256_HEX_LEN + 1], *first, *second;

    acc_db_build_opts_init(&o);
    set_one_coll(&o, ACC_COLL_ALLREDUCE);
    CHECK_OK(acc_db_build(db, topo, &o, &rep));
    CHECK_OK(acc_topo_fingerprint(topo, fp));
    CHECK_STR(rep.fingerprint, fp);
    CHECK_INT(rep.ntables, 1);
    CHECK_INT(rep.tables[0].coll, ACC_COLL_ALLREDUCE);
    CHECK_INT(rep.tables[0].ranges, r->table->n);
    CHECK_INT(rep.tables[0].plans, r->nplans);
    CHECK_INT(rep.plans, r->nplans);
    /* No architecture and no directory: no kernels. */
    CHECK_INT(rep.kernels.modules + rep.cubins, 0);
    CHECK_STR(rep.compiler, "");
    check_stored_sweep(db, r);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM plans"), r->nplans);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM selections"), 1);
    CHECK(r->nccl != NULL);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM nccl_choices"), r->nccl->n);
    acc_db_close(db);

    /* Again: the same report, and not one byte of data changes. */
    first = tu_dump(path);
    db = tu_open(path, 0);
    CHECK_OK(acc_db_build(db, topo, &o, NULL));
    acc_db_close(db);
    second = tu_dump(path);
    CHECK_STR(second, first);
    acc_mem_free(first);
    acc_mem_free(second);
    acc_select_result_destroy(r);
    acc_topo_destroy(topo);
    tu_remove(path);
}

/* Without options: every collective that has a table, in order. */
ACC_TEST(defaults_build_every_collective_with_a_table)
{
    const char *path = tu_fresh("build_defaults.db");
    acc_topo_t *topo = tu_synth(SMALL);
    acc_db_t *db = tu_open(path, 0);
    acc_db_build_report_t rep;
    size_t n, i;
    const acc_coll_t *colls = acc_select_colls(&n);

    CHECK_OK(acc_db_build(db, topo, NULL, &rep));
    CHECK_INT(rep.ntables, n);
    for (i = 0; i < n; i++) {
        acc_select_table_t *t = NULL;
        CHECK_INT(rep.tables[i].coll, colls[i]);
        CHECK_OK(acc_db_get_selection(db, rep.fingerprint, colls[i], &t));
        CHECK_INT(t->n, rep.tables[i].ranges);
        acc_select_destroy(t);
    }
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM selections"), n);
    acc_db_close(db);
    acc_topo_destroy(topo);
    tu_remove(path);
}

/* The kernel of a stored plan as the runtime looks it up (by the source it generates now from
 * the verified plan) is the module the kernel cache hands out, without compiling anything. */
static void check_kernel(acc_db_t *db, acc_kcache_t *cache, const char *compiler, const char *hash,
                         acc_dtype_t dt, acc_redop_t op)
{
    acc_plan_t *plan = NULL;
    acc_kernel_t *k = NULL;
    acc_kcache_stats_t before, after;
    const void *module = NULL;
    size_t module_size = 0, len = 0;
    acc_db_kernel_t row;
    char src_hash[ACC_SHA256_HEX_LEN + 1];
    const char *src;

    CHECK_OK(acc_db_get_plan(db, hash, &plan));
    CHECK_OK(acc_kernel_generate(plan, dt, op, &k));
    src = acc_kernel_source(k, &len);
    CHECK_OK(acc_sha256_hex(src, len, src_hash));
    CHECK_OK(acc_db_get_kernel(db, hash, "sm_90", dt, op, compiler, src_hash, &row));
    CHECK(row.cubin_size > 1024 && memcmp(row.cubin, "\177ELF", 4) == 0);
    acc_kcache_stats(cache, &before);
    CHECK_OK(acc_kcache_kernel(cache, k, "sm_90", &module, &module_size));
    acc_kcache_stats(cache, &after);
    CHECK_INT(after.compiles, before.compiles);
    CHECK_INT(module_size, row.cubin_size);
    CHECK(memcmp(module, row.cubin, module_size) == 0);
    acc_db_kernel_clear(&row);
    acc_kernel_destroy(k);
    acc_plan_destroy(plan);
}

/* sm_90 kernels of the default types (fp32, fp16, bf16; sum): a row per named plan and type,
 * each the cache's bytes; building again with the same cache compiles nothing. */
ACC_TEST(sm90_kernels_are_the_caches_and_built_once)
{
    const char *path = tu_fresh("build_sm90.db");
    acc_topo_t *topo = tu_synth(SMALL);
    acc_db_t *db;
    acc_kcache_t *cache = NULL;
    acc_db_build_opts_t o;
    acc_db_build_report_t rep;
    char hashes[16][ACC_SHA256_HEX_LEN + 1], want[32], *first, *second;
    uint64_t count = 0;
    size_t n, i;
    int major = 0, minor = 0;

    need_nvrtc();
    CHECK_OK(acc_kcache_create("", &cache));
    db = tu_open(path, 0);
    sm90_opts(&o, ACC_COLL_ALLREDUCE, cache);
    CHECK_OK(acc_db_build(db, topo, &o, &rep));
    n = tu_named_plans(db, rep.fingerprint, ACC_COLL_ALLREDUCE, hashes, 16);
    CHECK_OK(acc_nvrtc_version(&major, &minor));
    snprintf(want, sizeof(want), "nvrtc %d.%d", major, minor);
    CHECK_STR(rep.compiler, want);
    CHECK_INT(rep.kernels.plans, n);
    CHECK_INT(rep.kernels.modules, n * 3);
    CHECK_INT(rep.cubins, n * 3);
    CHECK_INT(rep.kernels.built, n * 3);
    CHECK_INT(rep.cached, 0);
    CHECK(rep.kernels.compiles >= n * 3);
    CHECK_OK(acc_db_count_kernels(db, NULL, "sm_90", &count));
    CHECK_INT(count, n * 3);
    for (i = 0; i < n; i++) {
        CHECK_OK(acc_db_count_kernels(db, hashes[i], NULL, &count));
        CHECK_INT(count, 3);
    }
    check_kernel(db, cache, rep.compiler, hashes[0], ACC_DT_F16, ACC_RED_SUM);
    check_kernel(db, cache, rep.compiler, hashes[n - 1], ACC_DT_BF16, ACC_RED_SUM);
    acc_db_close(db);

    first = tu_dump(path);
    db = tu_open(path, 0);
    CHECK_OK(acc_db_build(db, topo, &o, &rep));
    acc_db_close(db);
    second = tu_dump(path);
    CHECK_STR(second, first);
    CHECK_INT(rep.kernels.built, 0);
    CHECK_INT(rep.kernels.compiles, 0);
    CHECK_INT(rep.cached, n * 3);
    acc_mem_free(first);
    acc_mem_free(second);
    acc_kcache_destroy(cache);
    acc_topo_destroy(topo);
    tu_remove(path);
}

/* Two nodes: the table gives acc's plans to the host backend, and the cuda backend leaves every
 * multi-node plan to NCCL, so no CUBIN is built or stored for them, however many nodes. */
ACC_TEST(a_multi_node_table_stores_no_cubins)
{
    const char *path = tu_fresh("build_nodes.db");
    acc_topo_t *topo = tu_synth("nodes=2 gpus=4 nvlink=18 nic=4x400");
    acc_db_t *db;
    acc_kcache_t *cache = NULL;
    acc_db_build_opts_t o;
    acc_db_build_report_t rep;
    char hashes[16][ACC_SHA256_HEX_LEN + 1];
    uint64_t count = 1;

    need_nvrtc();
    CHECK_OK(acc_kcache_create("", &cache));
    db = tu_open(path, 0);
    sm90_opts(&o, ACC_COLL_ALLREDUCE, cache);
    CHECK_OK(acc_db_build(db, topo, &o, &rep));
    CHECK(tu_named_plans(db, rep.fingerprint, ACC_COLL_ALLREDUCE, hashes, 16) > 0);
    CHECK_INT(rep.kernels.plans, 0);
    CHECK_INT(rep.cubins, 0);
    CHECK_OK(acc_db_count_kernels(db, NULL, NULL, &count));
    CHECK_INT(count, 0);
    acc_db_close(db);
    acc_kcache_destroy(cache);
    acc_topo_destroy(topo);
    tu_remove(path);
}

/* A collective that only moves data: one module per type whatever the reductions, stored under
 * "none"; fp16 and bf16 share their source, so each plan is compiled once and both rows hold
 * the same CUBIN. */
ACC_TEST(types_and_ops_of_a_data_moving_collective)
{
    const char *path = tu_fresh("build_ops.db");
    acc_topo_t *topo = tu_synth(SMALL);
    acc_db_t *db;
    acc_kcache_t *cache = NULL;
    acc_db_build_opts_t o;
    acc_db_build_report_t rep;
    char hashes[16][ACC_SHA256_HEX_LEN + 1];
    size_t n;

    need_nvrtc();
    CHECK_OK(acc_kcache_create("", &cache));
    db = tu_open(path, 0);
    sm90_opts(&o, ACC_COLL_ALLGATHER, cache);
    o.kernels.types[0] = ACC_DT_F16;
    o.kernels.types[1] = ACC_DT_BF16;
    o.kernels.ntypes = 2;
    o.kernels.ops[0] = ACC_RED_SUM;
    o.kernels.ops[1] = ACC_RED_MAX;
    o.kernels.nops = 2;
    CHECK_OK(acc_db_build(db, topo, &o, &rep));
    n = tu_named_plans(db, rep.fingerprint, ACC_COLL_ALLGATHER, hashes, 16);
    CHECK_INT(rep.kernels.modules, n * 2);
    CHECK_INT(rep.kernels.sources, n);
    CHECK_INT(rep.kernels.built, n);
    CHECK_INT(rep.cubins, n * 2);
    CHECK_INT(rep.cached, n);
    check_kernel(db, cache, rep.compiler, hashes[0], ACC_DT_BF16, ACC_RED_MAX);
    acc_db_close(db);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM kernels WHERE redop = 'none'"), n * 2);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM kernels WHERE dtype = 'half'"), n);
    CHECK_INT(tu_sql_int(path, "SELECT count(DISTINCT cubin) FROM kernels"), n);
    acc_kcache_destroy(cache);
    acc_topo_destroy(topo);
    tu_remove(path);
}

/* A source directory without an architecture: the sources of the named plans are written, and
 * nothing is compiled or stored as a kernel (no NVRTC needed). */
ACC_TEST(sources_without_an_architecture)
{
    const char *path = tu_fresh("build_src.db");
    const char *dir = acc_test_tmp_fresh("build_src_cuda");
    acc_topo_t *topo = tu_synth(SMALL);
    acc_db_t *db;
    acc_db_build_opts_t o;
    acc_db_build_report_t rep;
    char hashes[16][ACC_SHA256_HEX_LEN + 1], file[1200];
    acc_plan_t *plan = NULL;
    acc_kernel_t *k = NULL;
    size_t n;

    db = tu_open(path, 0);
    acc_db_build_opts_init(&o);
    set_one_coll(&o, ACC_COLL_REDUCE_SCATTER);
    o.kernels.ntypes = 1; /* fp32 */
    o.kernels.source_dir = dir;
    CHECK_OK(acc_db_build(db, topo, &o, &rep));
    n = tu_named_plans(db, rep.fingerprint, ACC_COLL_REDUCE_SCATTER, hashes, 16);
    CHECK_INT(rep.kernels.plans, n);
    CHECK_INT(rep.kernels.modules, n);
    CHECK_INT(rep.cubins, 0);
    CHECK_OK(acc_db_get_plan(db, hashes[0], &plan));
    CHECK_OK(acc_kernel_generate(plan, ACC_DT_F32, ACC_RED_SUM, &k));
    snprintf(file, sizeof(file), "%s/%s.cu", dir, acc_kernel_name(k));
    CHECK_MSG(access(file, R_OK) == 0, "%s was not written", file);
    acc_kernel_destroy(k);
    acc_plan_destroy(plan);
    acc_db_close(db);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM kernels"), 0);
    acc_test_tmp_fresh("build_src_cuda");
    acc_topo_destroy(topo);
    tu_remove(path);
}

/* A sweep of one machine is not filed under another's fingerprint: refused, naming both, and
 * nothing is stored. */
ACC_TEST(a_table_of_another_topology_is_refused)
{
    const char *path = tu_fresh("build_mismatch.db");
    acc_topo_t *other = tu_synth("gpus=2 nvlink=18");
    acc_db_t *db = tu_open(path, 0);
    acc_select_result_t *r = sweep(other, ACC_COLL_ALLGATHER);
    char fp[ACC_SHA256_HEX_LEN + 1], *before, *after;

    tu_put_synth(db, SMALL, fp);
    acc_db_close(db);
    before = tu_dump(path);
    db = tu_open(path, 0);
    CHECK_ERR(acc_db_put_sweep(db, fp, r), ACC_ERR_INVALID);
    CHECK_MSG_HAS(fp);
    CHECK_MSG_HAS(r->table->topo_fingerprint);
    CHECK_MSG_HAS("allgather");
    acc_db_close(db);
    after = tu_dump(path);
    CHECK_STR(after, before);
    /* The table's own topology is accepted. */
    db = tu_open(path, 0);
    CHECK_OK(acc_db_put_topology(db, other, fp));
    CHECK_OK(acc_db_put_sweep(db, fp, r));
    check_stored_sweep(db, r);
    acc_db_close(db);
    acc_mem_free(before);
    acc_mem_free(after);
    acc_select_result_destroy(r);
    acc_topo_destroy(other);
    tu_remove(path);
}

/* Options are checked before anything is stored: the file stays empty. */
ACC_TEST(bad_options_store_nothing)
{
    const char *path = tu_fresh("build_bad.db");
    acc_topo_t *topo = tu_synth(SMALL);
    acc_db_t *db = tu_open(path, 0);
    acc_db_build_opts_t o;
    acc_db_build_report_t rep;

    acc_db_build_opts_init(&o);
    snprintf(o.kernels.archs[0], sizeof(o.kernels.archs[0]), "sm_12");
    o.kernels.narchs = 1;
    CHECK(acc_db_build(db, topo, &o, &rep) != ACC_OK);
    CHECK_MSG_HAS("architecture sm_12");
    CHECK_MSG_HAS(acc_nvrtc_available() ? "NVRTC cannot build for sm_12" : "without NVRTC");
    CHECK_STR(rep.fingerprint, "");

    acc_db_build_opts_init(&o);
    o.kernels.ntypes = 0;
    CHECK_ERR(acc_db_build(db, topo, &o, NULL), ACC_ERR_INVALID);
    CHECK_MSG_HAS("the list of data types is empty");

    acc_db_build_opts_init(&o);
    o.ncolls = 0;
    CHECK_ERR(acc_db_build(db, topo, &o, NULL), ACC_ERR_INVALID);
    CHECK_MSG_HAS("collectives");
    set_one_coll(&o, ACC_COLL_ALLTOALL);
    CHECK_ERR(acc_db_build(db, topo, &o, NULL), ACC_ERR_INVALID);
    CHECK_MSG_HAS("no selection table for alltoall");
    o.colls[0] = ACC_COLL_BROADCAST;
    o.colls[1] = ACC_COLL_BROADCAST;
    o.ncolls = 2;
    CHECK_ERR(acc_db_build_opts_check(&o), ACC_ERR_INVALID);
    CHECK_MSG_HAS("broadcast is listed twice");
    acc_db_close(db);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM topologies"), 0);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM plans"), 0);
    acc_topo_destroy(topo);
    tu_remove(path);
}

/* Whether a build is current: after a build, the same request is (in one read, also on a
 * read-only connection, which it leaves as it was); other options, a time measured on the
 * topology since, or sources to write are not. */
ACC_TEST(a_build_from_the_same_inputs_is_current)
{
    const char *path = tu_fresh("build_current.db");
    acc_topo_t *topo = tu_synth(SMALL);
    acc_db_t *db = tu_open(path, 0);
    acc_db_build_opts_t o, other;
    acc_db_measurement_t m;
    acc_select_table_t *t = NULL;
    char fp[ACC_SHA256_HEX_LEN + 1];
    int current = -1;

    acc_db_build_opts_init(&o);
    set_one_coll(&o, ACC_COLL_ALLREDUCE);
    CHECK_OK(acc_db_build_current(db, topo, &o, &current));
    CHECK_INT(current, 0); /* nothing built yet */
    CHECK_OK(acc_db_build(db, topo, &o, NULL));
    CHECK_OK(acc_db_build_current(db, topo, &o, &current));
    CHECK_INT(current, 1);
    acc_db_close(db);
    db = tu_open(path, ACC_DB_READONLY);
    CHECK_OK(acc_db_build_current(db, topo, &o, &current));
    CHECK_INT(current, 1);
    other = o;
    set_one_coll(&other, ACC_COLL_ALLGATHER);
    CHECK_OK(acc_db_build_current(db, topo, &other, &current));
    CHECK_INT(current, 0);
    other = o;
    other.kernels.source_dir = acc_test_tmp("cuda");
    CHECK_OK(acc_db_build_current(db, topo, &other, &current));
    CHECK_INT(current, 0);
    acc_db_close(db);
    /* A time measured since on this topology changes the tables a build would make. */
    db = tu_open(path, 0);
    CHECK_OK(acc_topo_fingerprint(topo, fp));
    CHECK_OK(acc_db_get_selection(db, fp, ACC_COLL_ALLREDUCE, &t));
    memset(&m, 0, sizeof(m));
    snprintf(m.topo_fingerprint, sizeof(m.topo_fingerprint), "%s", fp);
    m.coll = ACC_COLL_ALLREDUCE;
    m.dtype = ACC_DT_F32;
    for (size_t i = 0; i < t->n && !m.plan_hash[0]; i++)
        if (!t->entries[i].use_nccl)
            snprintf(m.plan_hash, sizeof(m.plan_hash), "%s", t->entries[i].plan_hash);
    CHECK(m.plan_hash[0]);
    m.nbytes = 1024;
    m.us = 1.5;
    snprintf(m.source, sizeof(m.source), "test");
    CHECK_OK(acc_db_put_measurement(db, &m));
    CHECK_OK(acc_db_build_current(db, topo, &o, &current));
    CHECK_INT(current, 0);
    acc_select_destroy(t);
    acc_db_close(db);
    acc_topo_destroy(topo);
    tu_remove(path);
}
