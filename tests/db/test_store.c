/* Round trips of every table (kernels: test_kernel.c), idempotent stores, and the summary
 * acc-info prints. */
#include "db_test_util.h"

#include <stdlib.h>

ACC_TEST(new_file_gets_acc_marks_and_wal)
{
    const char *path = tu_fresh("store_new.db");
    acc_db_t *db = tu_open(path, 0), *other;
    size_t len;
    char *bytes;

    CHECK_INT(acc_db_schema_version(db), ACC_DB_SCHEMA_VERSION);
    CHECK_STR(acc_db_path(db), path);
    /* While written, the file is in WAL mode (format bytes 18 and 19 of the header are 2). */
    bytes = tu_bytes(path, &len);
    CHECK(len >= 100);
    CHECK_INT(bytes[18], 2);
    CHECK_INT(bytes[19], 2);
    acc_mem_free(bytes);
    /* A writer that closes while another connection has the file open leaves WAL mode to it. */
    other = tu_open(path, ACC_DB_READONLY);
    acc_db_close(db);
    bytes = tu_bytes(path, &len);
    CHECK_INT(bytes[18], 2);
    acc_mem_free(bytes);
    acc_db_close(other);
    /* The last writer to close merges and removes the companions and leaves one self-contained
     * file in rollback-journal mode (1 and 1), which readers read without writing. */
    db = tu_open(path, 0);
    acc_db_close(db);
    CHECK(access(acc_test_tmp("store_new.db-wal"), F_OK) != 0);
    CHECK(access(acc_test_tmp("store_new.db-shm"), F_OK) != 0);
    CHECK_INT(tu_sql_int(path, "PRAGMA application_id"), ACC_DB_APPLICATION_ID);
    CHECK_INT(tu_sql_int(path, "PRAGMA user_version"), ACC_DB_SCHEMA_VERSION);
    bytes = tu_bytes(path, &len);
    CHECK_INT(bytes[18], 1);
    CHECK_INT(bytes[19], 1);
    acc_mem_free(bytes);
}

ACC_TEST(topology_round_trip)
{
    static const char *const sources[] = {"nodes=1 gpus=8 nvlink=18", "dgx-a100",
                                          "nodes=4 gpus=4 arch=a100 nvlink=12 nic=4x200"};
    const char *path = tu_fresh("store_topo.db");
    acc_db_t *db = tu_open(path, 0);
    char fp[3][ACC_SHA256_HEX_LEN + 1];
    acc_db_topo_info_t *info = NULL;
    size_t i, n;

    for (i = 0; i < 3; i++) {
        acc_topo_t *t = NULL, *back = NULL;
        acc_buf_t a, b;
        char fp2[ACC_SHA256_HEX_LEN + 1];
        CHECK_OK(acc_topo_load(sources[i], &t));
        CHECK_OK(acc_db_put_topology(db, t, fp[i]));
        CHECK_OK(acc_topo_fingerprint(t, fp2));
        CHECK_STR(fp[i], fp2);
        CHECK_OK(acc_db_get_topology(db, fp[i], &back));
        CHECK_STR(acc_topo_name(back), acc_topo_name(t));
        CHECK_STR(acc_topo_source(back), acc_topo_source(t));
        CHECK_INT(acc_topo_format(back), acc_topo_format(t));
        CHECK_INT(acc_topo_ranks(back), acc_topo_ranks(t));
        acc_buf_init(&a);
        acc_buf_init(&b);
        CHECK_OK(acc_topo_export_yaml(t, &a));
        CHECK_OK(acc_topo_export_yaml(back, &b));
        CHECK_STR(b.data, a.data);
        acc_buf_free(&a);
        acc_buf_free(&b);
        acc_topo_destroy(t);
        acc_topo_destroy(back);
    }
    CHECK_OK(acc_db_list_topologies(db, &info, &n));
    CHECK_INT(n, 3);
    for (i = 0; i < n; i++)
        CHECK(info[i].nodes >= 1 && info[i].gpus_per_node >= 4);
    /* Ordered by name, with where each came from. */
    CHECK_STR(info[0].name, "dgx-a100");
    CHECK_STR(info[0].format, "yaml");
    CHECK(strstr(info[0].source, "dgx-a100.yaml") != NULL);
    CHECK(strcmp(info[1].name, info[2].name) < 0);
    CHECK_STR(info[2].format, "synthetic");
    acc_mem_free(info);
    {
        acc_topo_t *none = NULL;
        char missing[ACC_SHA256_HEX_LEN + 1];
        memset(missing, 'a', ACC_SHA256_HEX_LEN);
        missing[ACC_SHA256_HEX_LEN] = '\0';
        CHECK_ERR(acc_db_get_topology(db, missing, &none), ACC_ERR_NOT_FOUND);
        CHECK_MSG_HAS(path);
        CHECK(none == NULL);
        CHECK_ERR(acc_db_get_topology(db, "1234", &none), ACC_ERR_INVALID);
    }
    acc_db_close(db);
}

ACC_TEST(real_topology_file_round_trip)
{
    const char *path = tu_fresh("store_real.db");
    acc_db_t *db = tu_open(path, 0);
    acc_topo_t *t = NULL, *back = NULL;
    char fp[ACC_SHA256_HEX_LEN + 1], fp2[ACC_SHA256_HEX_LEN + 1];

    CHECK_OK(
        acc_topo_load_file(acc_test_data("topologies/nccl-xml/ibm-vpc-gx3d-8xh100-topo.xml"), &t));
    CHECK_OK(acc_db_put_topology(db, t, fp));
    CHECK_OK(acc_db_get_topology(db, fp, &back));
    CHECK_OK(acc_topo_fingerprint(back, fp2));
    CHECK_STR(fp2, fp);
    CHECK_STR(acc_topo_source(back), acc_topo_source(t));
    CHECK_INT(acc_topo_link_count(back), acc_topo_link_count(t));
    acc_topo_destroy(t);
    acc_topo_destroy(back);
    acc_db_close(db);
}

ACC_TEST(plan_round_trip_and_hash)
{
    const char *path = tu_fresh("store_plan.db");
    acc_db_t *db = tu_open(path, 0);
    acc_plan_t *plans[3];
    char hash[ACC_SHA256_HEX_LEN + 1], again[ACC_SHA256_HEX_LEN + 1];
    int i;

    plans[0] = fx_ring_allreduce(4, 2);
    plans[1] = fx_ring_allgather(8, 2);
    plans[2] = fx_oneshot_allreduce(4, 2);
    for (i = 0; i < 3; i++) {
        acc_plan_t *back = NULL;
        acc_buf_t yaml;
        char want[ACC_SHA256_HEX_LEN + 1];
        CHECK_OK(acc_plan_verify(plans[i]));
        CHECK_OK(acc_db_put_plan(db, plans[i], hash));
        /* The hash is SHA-256 of the plan's YAML text. */
        acc_buf_init(&yaml);
        CHECK_OK(acc_plan_dump_yaml(plans[i], &yaml));
        CHECK_OK(acc_sha256_hex(yaml.data, yaml.len, want));
        acc_buf_free(&yaml);
        CHECK_STR(hash, want);
        CHECK_OK(acc_plan_hash(plans[i], again));
        CHECK_STR(again, hash);
        CHECK_OK(acc_db_get_plan(db, hash, &back));
        CHECK(acc_plan_equal(back, plans[i]));
        acc_plan_destroy(back);
        /* The class form gives the same plan, without the YAML. */
        CHECK_OK(acc_db_get_whole_plan(db, hash, &back));
        CHECK(acc_plan_equal(back, plans[i]));
        acc_plan_destroy(back);
    }
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM plans"), 3);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM plan_heads"), 3);
    {
        /* A program altered behind acc's back: its digest tells, and the plan is not used. */
        acc_plan_t *none = NULL;
        tu_sql(path, "UPDATE plan_programs SET program = program || x'01' WHERE cls = 1");
        CHECK_ERR(acc_db_get_whole_plan(db, hash, &none), ACC_ERR_PARSE);
        CHECK_MSG_HAS("it was altered");
        CHECK(none == NULL);
    }
    {
        acc_plan_t *none = NULL;
        char missing[ACC_SHA256_HEX_LEN + 1];
        memset(missing, 'f', ACC_SHA256_HEX_LEN);
        missing[ACC_SHA256_HEX_LEN] = '\0';
        CHECK_ERR(acc_db_get_plan(db, missing, &none), ACC_ERR_NOT_FOUND);
        CHECK(none == NULL);
        CHECK_ERR(acc_db_get_plan(db, "ABCDEF", &none), ACC_ERR_INVALID);
    }
    for (i = 0; i < 3; i++)
        acc_plan_destroy(plans[i]);
    acc_db_close(db);
}

ACC_TEST(selection_round_trip_and_replace)
{
    const char *path = tu_fresh("store_select.db");
    acc_db_t *db = tu_open(path, 0);
    acc_plan_t *plan = fx_ring_allreduce(8, 2);
    acc_select_table_t *t = NULL, *back = NULL, *small = NULL;
    char fp[ACC_SHA256_HEX_LEN + 1], hash[ACC_SHA256_HEX_LEN + 1];

    tu_put_synth(db, "nodes=1 gpus=8 nvlink=18", fp);
    CHECK_OK(acc_db_put_plan(db, plan, hash));
    t = tu_table(ACC_COLL_ALLREDUCE, fp, hash, 20, 0);
    t->entries[4].source = ACC_SELECT_USER;
    CHECK_OK(acc_db_put_selection(db, t));
    CHECK_OK(acc_db_get_selection(db, fp, ACC_COLL_ALLREDUCE, &back));
    tu_check_same_table(back, t);
    /* The loaded table answers look-ups like the stored one, open end included. */
    CHECK(acc_select_lookup(back, 3000) == &back->entries[2]);
    CHECK(acc_select_lookup(back, UINT64_MAX) == &back->entries[19]);
    acc_select_destroy(back);

    /* A new table for the same key replaces the old one entirely. */
    small = tu_table(ACC_COLL_ALLREDUCE, fp, hash, 3, 5);
    CHECK_OK(acc_db_put_selection(db, small));
    CHECK_OK(acc_db_get_selection(db, fp, ACC_COLL_ALLREDUCE, &back));
    tu_check_same_table(back, small);
    acc_select_destroy(back);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM selection_entries"), 3);

    /* Other collectives are separate keys. */
    back = NULL;
    CHECK_ERR(acc_db_get_selection(db, fp, ACC_COLL_ALLGATHER, &back), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("allgather");
    CHECK(back == NULL);
    acc_select_destroy(t);
    acc_select_destroy(small);
    acc_plan_destroy(plan);
    acc_db_close(db);
}

/* NCCL's own choices, what the tuner plugin serves: every field back as stored, a new put
 * replaces the old ranges, other collectives are other keys, and a missing key says how to
 * build it. */
ACC_TEST(nccl_choices_round_trip_and_replace)
{
    const char *path = tu_fresh("store_nccl.db");
    acc_db_t *db = tu_open(path, 0);
    acc_select_nccl_t *t, *small, *back = NULL;
    char fp[ACC_SHA256_HEX_LEN + 1];

    tu_put_synth(db, "nodes=1 gpus=8 nvlink=18", fp);
    t = tu_nccl(ACC_COLL_ALLGATHER, fp, 12, 0);
    CHECK_OK(acc_db_put_nccl_choices(db, t));
    CHECK_OK(acc_db_get_nccl_choices(db, fp, ACC_COLL_ALLGATHER, &back));
    tu_check_same_nccl(back, t);
    CHECK(acc_select_nccl_lookup(back, UINT64_MAX) == &back->entries[11]);
    acc_select_nccl_destroy(back);

    small = tu_nccl(ACC_COLL_ALLGATHER, fp, 3, 4);
    CHECK_OK(acc_db_put_nccl_choices(db, small));
    CHECK_OK(acc_db_get_nccl_choices(db, fp, ACC_COLL_ALLGATHER, &back));
    tu_check_same_nccl(back, small);
    acc_select_nccl_destroy(back);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM nccl_choices"), 3);

    back = NULL;
    CHECK_ERR(acc_db_get_nccl_choices(db, fp, ACC_COLL_ALLREDUCE, &back), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("no NCCL choices for allreduce");
    CHECK_MSG_HAS("acc-compile --topo T --db");
    CHECK(back == NULL);
    acc_select_nccl_destroy(t);
    acc_select_nccl_destroy(small);
    acc_db_close(db);
}

/* NCCL's choices of an unknown topology are refused; a row altered outside acc (an algorithm
 * NCCL does not have) is refused on the way out, naming the row and what to do. */
ACC_TEST(nccl_choices_need_their_topology_and_valid_rows)
{
    const char *path = tu_fresh("store_nccl_bad.db");
    acc_db_t *db = tu_open(path, 0);
    acc_select_nccl_t *t, *back = NULL;
    char fp[ACC_SHA256_HEX_LEN + 1], other[ACC_SHA256_HEX_LEN + 1];

    tu_put_synth(db, "nodes=1 gpus=8 nvlink=18", fp);
    memset(other, 'a', ACC_SHA256_HEX_LEN);
    other[ACC_SHA256_HEX_LEN] = '\0';
    t = tu_nccl(ACC_COLL_ALLREDUCE, other, 4, 0);
    CHECK_ERR(acc_db_put_nccl_choices(db, t), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("store the topology first");
    acc_select_nccl_destroy(t);
    t = tu_nccl(ACC_COLL_ALLREDUCE, fp, 4, 0);
    t->entries[1].proto = ACC_NCCL_PROTO_COUNT;
    CHECK_ERR(acc_db_put_nccl_choices(db, t), ACC_ERR_INVALID);
    t->entries[1].proto = ACC_NCCL_PROTO_LL;
    CHECK_OK(acc_db_put_nccl_choices(db, t));
    acc_db_close(db);
    tu_sql(path, "UPDATE nccl_choices SET algo = 'Butterfly' WHERE min_bytes = 1024");
    db = tu_open(path, ACC_DB_READONLY);
    CHECK_ERR(acc_db_get_nccl_choices(db, fp, ACC_COLL_ALLREDUCE, &back), ACC_ERR_PARSE);
    CHECK_MSG_HAS("invalid row at 1024 bytes (Butterfly/");
    CHECK_MSG_HAS("rebuild the database");
    CHECK(back == NULL);
    acc_select_nccl_destroy(t);
    acc_db_close(db);
}

ACC_TEST(selection_needs_its_topology_and_plans)
{
    const char *path = tu_fresh("store_select_refs.db");
    acc_db_t *db = tu_open(path, 0);
    acc_select_table_t *t;
    char fp[ACC_SHA256_HEX_LEN + 1], other[ACC_SHA256_HEX_LEN + 1];
    acc_topo_t *topo = tu_synth("nodes=1 gpus=4 nvlink=12 arch=a100");
    char unknown[ACC_SHA256_HEX_LEN + 1];

    memset(unknown, 'b', ACC_SHA256_HEX_LEN);
    unknown[ACC_SHA256_HEX_LEN] = '\0';
    CHECK_OK(acc_topo_fingerprint(topo, other));
    tu_put_synth(db, "nodes=1 gpus=8 nvlink=18", fp);
    t = tu_table(ACC_COLL_ALLGATHER, other, unknown, 4, 0);
    CHECK_ERR(acc_db_put_selection(db, t), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("not stored");
    CHECK_OK(acc_db_put_topology(db, topo, NULL));
    CHECK_ERR(acc_db_put_selection(db, t), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("names plan bbbbbbbb");
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM selections"), 0);

    /* Plans must be of the table's collective and span the topology's ranks. */
    {
        acc_plan_t *ag = fx_ring_allgather(4, 1), *ar8 = fx_ring_allreduce(8, 1);
        char h[ACC_SHA256_HEX_LEN + 1];
        size_t i;
        CHECK_OK(acc_db_put_plan(db, ag, h));
        for (i = 0; i < t->n; i++)
            if (!t->entries[i].use_nccl)
                memcpy(t->entries[i].plan_hash, h, sizeof(h));
        CHECK_OK(acc_db_put_selection(db, t));
        t->coll = ACC_COLL_ALLREDUCE;
        CHECK_ERR(acc_db_put_selection(db, t), ACC_ERR_INVALID);
        CHECK_MSG_HAS("a allgather plan for 4 ranks, but the table is for allreduce on 4 ranks");
        CHECK_OK(acc_db_put_plan(db, ar8, h));
        for (i = 0; i < t->n; i++)
            if (!t->entries[i].use_nccl)
                memcpy(t->entries[i].plan_hash, h, sizeof(h));
        CHECK_ERR(acc_db_put_selection(db, t), ACC_ERR_INVALID);
        CHECK_MSG_HAS("for 8 ranks");
        /* A plan stored in class form alone (as a table built by class stores it) is named by
         * that form's hash (schema 12). */
        {
            acc_cplan_t *cp = NULL;
            t->coll = ACC_COLL_ALLGATHER;
            CHECK_OK(acc_cplan_from_plan(ag, &cp));
            CHECK_OK(acc_db_put_cplan(db, cp, NULL, h));
            for (i = 0; i < t->n; i++)
                if (!t->entries[i].use_nccl)
                    memcpy(t->entries[i].plan_hash, h, sizeof(h));
            CHECK_OK(acc_db_put_selection(db, t));
            CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM plans"), 2);
            /* acc-info counts it with the others, and says how it is stored. */
            {
                acc_buf_t sum;
                acc_buf_init(&sum);
                CHECK_OK(acc_db_summary(db, &sum));
                CHECK_MSG(strstr(sum.data, "plans: 3, 1 of them in class form alone, ") != NULL,
                          "%s", sum.data);
                acc_buf_free(&sum);
            }
            /* The text reader says where the plan is, and a rank's view reads it. */
            {
                acc_plan_t *back = NULL;
                CHECK_ERR(acc_db_get_plan(db, h, &back), ACC_ERR_NOT_FOUND);
                CHECK_MSG_HAS("stored in class form alone");
                CHECK_OK(acc_db_get_rank_plan(db, h, 1, &back));
                CHECK_INT(back->nranks, ag->nranks);
                acc_plan_destroy(back);
            }
            acc_cplan_destroy(cp);
        }
        acc_plan_destroy(ag);
        acc_plan_destroy(ar8);
    }
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM selections"), 1);

    /* An acc entry without a plan hash, or an NCCL entry with one, is refused. */
    t->entries[0].plan_hash[0] = '\0';
    CHECK_ERR(acc_db_put_selection(db, t), ACC_ERR_INVALID);
    CHECK_MSG_HAS("entry 0");
    acc_select_destroy(t);
    acc_topo_destroy(topo);
    acc_db_close(db);
}

ACC_TEST(profile_and_network_round_trip)
{
    const char *path = tu_fresh("store_profile.db");
    acc_db_t *db = tu_open(path, 0);
    const char *yaml = "name: gpt3-1.3b\nlayers: 24\nhidden: 2048\n";
    acc_db_network_t net, back;
    char *text = NULL;
    uint64_t params = 0;
    char longname[100];

    CHECK_OK(acc_db_put_profile(db, "gpt3-1.3b", yaml, 1300000000ull, NULL));
    CHECK_OK(acc_db_get_profile(db, "gpt3-1.3b", &text, &params));
    CHECK_STR(text, yaml);
    CHECK(params == 1300000000ull);
    acc_mem_free(text);
    CHECK_ERR(acc_db_get_profile(db, "llama", &text, &params), ACC_ERR_NOT_FOUND);
    CHECK(text == NULL);
    /* A profile that is not YAML is refused where it is stored, naming the line. */
    CHECK_ERR(acc_db_put_profile(db, "broken", "layers: [1, 2\nhidden: 3\n", 1, NULL),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("model profile broken");
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    CHECK_ERR(acc_db_put_profile(db, longname, yaml, 1, NULL), ACC_ERR_RANGE);

    memset(&net, 0, sizeof(net));
    snprintf(net.name, sizeof(net.name), "ib-ndr-rail");
    snprintf(net.description, sizeof(net.description), "InfiniBand NDR, rail optimised");
    snprintf(net.params, sizeof(net.params), "nic=400 latency_us=2 rail=1 oversub=1");
    CHECK_OK(acc_db_put_network(db, &net));
    CHECK_OK(acc_db_get_network(db, "ib-ndr-rail", &back));
    CHECK_STR(back.name, net.name);
    CHECK_STR(back.description, net.description);
    CHECK_STR(back.params, net.params);
    CHECK_ERR(acc_db_get_network(db, "efa", &back), ACC_ERR_NOT_FOUND);
    acc_db_close(db);
}

static acc_db_tuning_run_t make_run(const char *fp, const char *params, double score,
                                    int64_t created)
{
    acc_db_tuning_run_t r;
    memset(&r, 0, sizeof(r));
    snprintf(r.model, sizeof(r.model), "gpt3-1.3b");
    snprintf(r.topo_fingerprint, sizeof(r.topo_fingerprint), "%s", fp);
    snprintf(r.network, sizeof(r.network), "ib-ndr");
    snprintf(r.params, sizeof(r.params), "%s", params);
    snprintf(r.method, sizeof(r.method), "model");
    snprintf(r.strategy, sizeof(r.strategy), "grid");
    r.score = score;
    r.seconds = 0.25;
    r.created_us = created;
    return r;
}

ACC_TEST(tuning_runs_and_optima_round_trip)
{
    const char *path = tu_fresh("store_tune.db");
    acc_db_t *db = tu_open(path, 0);
    char fp[ACC_SHA256_HEX_LEN + 1];
    acc_db_tuning_run_t r, *runs = NULL;
    acc_db_optimum_t o, back, *all = NULL;
    int64_t id1, id2, id3;
    size_t n;

    tu_put_synth(db, "nodes=2 gpus=8 nvlink=18 nic=8x400", fp);
    r = make_run(fp, "fusion=25M streams=2", 130.5, 1700000000000001);
    CHECK_ERR(acc_db_add_tuning_run(db, &r, &id1), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("model profile gpt3-1.3b is not stored");
    CHECK_OK(acc_db_put_profile(db, "gpt3-1.3b", "layers: 24\n", 1300000000ull, NULL));
    CHECK_OK(acc_db_add_tuning_run(db, &r, &id1));
    r = make_run(fp, "fusion=64M streams=4", 120.25, 1700000000000002);
    CHECK_OK(acc_db_add_tuning_run(db, &r, &id2));
    r = make_run(fp, "fusion=4M streams=1", 150.0, 0); /* time stamped by the database */
    CHECK_OK(acc_db_add_tuning_run(db, &r, &id3));
    CHECK(id1 != id2 && id2 != id3);
    /* The same run again adds nothing and gives the stored id. */
    r = make_run(fp, "fusion=25M streams=2", 130.5, 1700000000000001);
    CHECK_OK(acc_db_add_tuning_run(db, &r, &id3));
    CHECK_INT(id3, id1);

    CHECK_OK(acc_db_list_tuning_runs(db, "gpt3-1.3b", fp, NULL, &runs, &n));
    CHECK_INT(n, 3);
    CHECK_STR(runs[0].params, "fusion=64M streams=4"); /* best score first */
    CHECK_NEAR(runs[0].score, 120.25, 0);
    CHECK_STR(runs[0].acc_version, ACC_VERSION_STRING);
    CHECK_STR(runs[0].method, "model");
    CHECK_STR(runs[0].strategy, "grid");
    CHECK_NEAR(runs[0].seconds, 0.25, 0);
    CHECK_INT(runs[0].created_us, 1700000000000002);
    CHECK(runs[2].created_us > 1700000000000002); /* "now" */
    acc_mem_free(runs);
    CHECK_OK(acc_db_list_tuning_runs(db, NULL, NULL, "efa", &runs, &n));
    CHECK_INT(n, 0);
    acc_mem_free(runs);

    memset(&o, 0, sizeof(o));
    snprintf(o.model, sizeof(o.model), "gpt3-1.3b");
    snprintf(o.topo_fingerprint, sizeof(o.topo_fingerprint), "%s", fp);
    snprintf(o.network, sizeof(o.network), "ib-ndr");
    snprintf(o.method, sizeof(o.method), "itersim");
    o.fusion_bytes = 64ull << 20;
    o.streams = 4;
    snprintf(o.algo, sizeof(o.algo), "ring");
    snprintf(o.params, sizeof(o.params), "chunks=4");
    o.score = 120.25;
    o.run_id = id2;
    CHECK_OK(acc_db_put_optimum(db, &o));
    CHECK_OK(acc_db_get_optimum(db, "gpt3-1.3b", fp, "ib-ndr", "itersim", &back));
    CHECK(back.fusion_bytes == o.fusion_bytes);
    CHECK_INT(back.streams, 4);
    CHECK_STR(back.algo, "ring");
    CHECK_STR(back.params, "chunks=4");
    CHECK_INT(back.run_id, id2);
    CHECK_NEAR(back.score, 120.25, 0);
    /* A better one replaces it; the run must belong to the same key. */
    o.run_id = 987654;
    CHECK_ERR(acc_db_put_optimum(db, &o), ACC_ERR_NOT_FOUND);
    o.run_id = 0;
    o.streams = 2;
    CHECK_OK(acc_db_put_optimum(db, &o));
    CHECK_OK(acc_db_list_optima(db, &all, &n));
    CHECK_INT(n, 1);
    CHECK_INT(all[0].streams, 2);
    CHECK_INT(all[0].run_id, 0);
    acc_mem_free(all);
    CHECK_ERR(acc_db_get_optimum(db, "gpt3-1.3b", fp, "", "itersim", &back), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("acc-tune");
    /* A measured optimum of the same key sits beside the simulated one; an optimum must say
     * how it was obtained. */
    snprintf(o.method, sizeof(o.method), "measured");
    o.streams = 3;
    CHECK_OK(acc_db_put_optimum(db, &o));
    CHECK_OK(acc_db_get_optimum(db, "gpt3-1.3b", fp, "ib-ndr", "measured", &back));
    CHECK_INT(back.streams, 3);
    CHECK_OK(acc_db_get_optimum(db, "gpt3-1.3b", fp, "ib-ndr", "itersim", &back));
    CHECK_INT(back.streams, 2);
    CHECK_OK(acc_db_list_optima(db, &all, &n));
    CHECK_INT(n, 2);
    CHECK_STR(all[0].method, "itersim");
    CHECK_STR(all[1].method, "measured");
    acc_mem_free(all);
    o.method[0] = '\0';
    CHECK_ERR(acc_db_put_optimum(db, &o), ACC_ERR_INVALID);
    CHECK_MSG_HAS("optimum method");
    acc_db_close(db);
}

/* Everything a full acc-compile + acc-tune session would store, deterministic. */
static void store_everything(acc_db_t *db, const char *topo_src, char fp[ACC_SHA256_HEX_LEN + 1])
{
    acc_plan_t *plans[3];
    acc_topo_t *t = NULL;
    char hash[ACC_SHA256_HEX_LEN + 1];
    acc_db_kernel_t k;
    acc_db_network_t net;
    acc_db_tuning_run_t r;
    acc_db_optimum_t o;
    uint8_t cubin[64] = {0x7f, 'E', 'L', 'F'};
    int c;

    CHECK_OK(acc_topo_load(topo_src, &t));
    CHECK_OK(acc_db_put_topology(db, t, fp));
    plans[0] = fx_ring_allreduce(acc_topo_ranks(t), 2);
    plans[1] = fx_ring_allgather(acc_topo_ranks(t), 2);
    plans[2] = fx_ring_reduce_scatter(acc_topo_ranks(t));
    acc_topo_destroy(t);
    for (c = 2; c >= 0; c--) { /* allreduce last: the kernel below is built from its plan */
        acc_select_table_t *tab;
        acc_select_nccl_t *nccl;
        CHECK_INT(plans[c]->coll, c);
        CHECK_OK(acc_db_put_plan(db, plans[c], hash));
        tab = tu_table((acc_coll_t)c, fp, hash, 20, 0);
        CHECK_OK(acc_db_put_selection(db, tab));
        acc_select_destroy(tab);
        nccl = tu_nccl((acc_coll_t)c, fp, 6, 0);
        CHECK_OK(acc_db_put_nccl_choices(db, nccl));
        acc_select_nccl_destroy(nccl);
        acc_plan_destroy(plans[c]);
    }
    memset(&k, 0, sizeof(k));
    memcpy(k.plan_hash, hash, sizeof(hash));
    snprintf(k.arch, sizeof(k.arch), "sm_90");
    k.dtype = ACC_DT_BF16;
    k.redop = ACC_RED_MAX;
    snprintf(k.compiler_version, sizeof(k.compiler_version), "nvrtc 12.4");
    CHECK_OK(acc_sha256_hex("src", 3, k.source_hash));
    k.cubin = cubin;
    k.cubin_size = sizeof(cubin);
    CHECK_OK(acc_db_put_kernel(db, &k));
    CHECK_OK(acc_db_put_profile(db, "gpt3-1.3b", "layers: 24\n", 1300000000ull, NULL));
    memset(&net, 0, sizeof(net));
    snprintf(net.name, sizeof(net.name), "ib-ndr");
    CHECK_OK(acc_db_put_network(db, &net));
    r = make_run(fp, "fusion=25M streams=2", 130.5, 1700000000000001);
    CHECK_OK(acc_db_add_tuning_run(db, &r, NULL));
    memset(&o, 0, sizeof(o));
    snprintf(o.model, sizeof(o.model), "gpt3-1.3b");
    memcpy(o.topo_fingerprint, fp, sizeof(o.topo_fingerprint));
    snprintf(o.network, sizeof(o.network), "ib-ndr");
    snprintf(o.method, sizeof(o.method), "itersim");
    o.fusion_bytes = 25ull << 20;
    o.streams = 2;
    snprintf(o.algo, sizeof(o.algo), "ring");
    o.score = 130.5;
    CHECK_OK(acc_db_put_optimum(db, &o));
}

ACC_TEST(storing_twice_changes_nothing)
{
    const char *path = tu_fresh("store_twice.db");
    acc_db_t *db = tu_open(path, 0);
    char fp[ACC_SHA256_HEX_LEN + 1], fp2[ACC_SHA256_HEX_LEN + 1];
    char *first, *second, *third;

    store_everything(db, "dgx-h100", fp);
    acc_db_close(db);
    first = tu_dump(path);
    db = tu_open(path, 0);
    store_everything(db, "dgx-h100", fp);
    acc_db_close(db);
    second = tu_dump(path);
    CHECK_STR(second, first);
    /* A second topology adds to the file and leaves the first one's rows alone. */
    db = tu_open(path, 0);
    store_everything(db, "nodes=2 gpus=8 nvlink=18 nic=8x400", fp2);
    acc_db_close(db);
    CHECK(strcmp(fp, fp2) != 0);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM topologies"), 2);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM selections"), 6);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM plans"), 6);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM tuning_runs"), 2);
    third = tu_dump(path);
    CHECK(strlen(third) > strlen(second));
    acc_mem_free(first);
    acc_mem_free(second);
    acc_mem_free(third);
}

ACC_TEST(summary_lists_what_the_file_holds)
{
    const char *path = tu_fresh("store_summary.db");
    acc_db_t *db = tu_open(path, 0);
    char fp[ACC_SHA256_HEX_LEN + 1];
    acc_buf_t b;

    store_everything(db, "dgx-h100", fp);
    acc_buf_init(&b);
    acc_buf_puts(&b, "kept: ");
    CHECK_OK(acc_db_summary(db, &b));
    printf("%s", b.data);
    CHECK(strncmp(b.data, "kept: database ", 15) == 0);
    {
        char version[64];
        snprintf(version, sizeof(version), "schema version %d\n", ACC_DB_SCHEMA_VERSION);
        CHECK(strstr(b.data, version) != NULL);
    }
    CHECK(strstr(b.data, ", recorded by jobs: 0, ") != NULL);
    CHECK(strstr(b.data, "measured times: 0\n") != NULL);
    CHECK(strstr(b.data, "topologies: 1\n  dgx-h100 (") != NULL);
    CHECK(strstr(b.data, "allreduce       20 ranges over [0 B, inf): acc 14, NCCL 6") != NULL);
    CHECK(strstr(b.data, "reduce_scatter") != NULL);
    /* NCCL's choices, what the tuner plugin serves, from the start of each range. */
    CHECK(strstr(b.data, "    allgather       NCCL runs from 0 B Tree/LL/1ch, from 1 KiB "
                         "Ring/LL128/2ch, from 2 KiB CollNetDirect/Simple/3ch, from 4 KiB "
                         "CollNetChain/LL/0ch,") != NULL);
    CHECK(strstr(b.data, "plans: 3, kernels: 1 (sm_90 1)\n") != NULL);
    CHECK(strstr(b.data, "tuning runs: 1") != NULL);
    CHECK(strstr(b.data, "gpt3-1.3b on dgx-h100") != NULL);
    CHECK(strstr(b.data, "fusion 25 MiB, 2 streams, ring") != NULL);
    acc_buf_free(&b);
    acc_db_close(db);
}

ACC_TEST(readonly_handle_refuses_writes)
{
    const char *path = tu_fresh("store_ro.db");
    acc_db_t *db = tu_open(path, 0);
    char fp[ACC_SHA256_HEX_LEN + 1];
    acc_topo_t *t = tu_synth("nodes=1 gpus=2 pcie=4");

    acc_db_close(db);
    db = tu_open(path, ACC_DB_READONLY | ACC_DB_CHECK);
    CHECK_ERR(acc_db_put_topology(db, t, fp), ACC_ERR_INVALID);
    CHECK_MSG_HAS("read-only");
    acc_db_close(db);
    acc_topo_destroy(t);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM topologies"), 0);
}
