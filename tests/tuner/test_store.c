/* The tuning key (model, topology with the network applied, network name) and what the database
 * keeps of tuning: runs, optima, warm starts and report points, through the library as acc-tune
 * and the runtime call it. */
#include "acc_test.h"
#include "acc_tune.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TWO_NODES "nodes=2 gpus=8 nvlink=18 nic=8x400" /* synthetic: no fabric name */

/* A database file that did not exist before (per process: ctest -j runs cases at once). */
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

static acc_tune_target_t *target(const char *model, const char *topo, const char *network,
                                 acc_db_t *db)
{
    acc_tune_target_t *t = NULL;
    CHECK_OK(acc_tune_target_load(model, topo, network, NULL, db, &t));
    return t;
}

static void topo_fingerprint(const char *src, char fp[ACC_SHA256_HEX_LEN + 1])
{
    acc_topo_t *t = NULL;
    CHECK_OK(acc_topo_load(src, &t));
    CHECK_OK(acc_topo_fingerprint(t, fp));
    acc_topo_destroy(t);
}

ACC_TEST(key_of_model_topology_and_network)
{
    acc_tune_target_t *t = target("resnet50", "dgx-h100-2node", NULL, NULL);
    char fp[ACC_SHA256_HEX_LEN + 1], title[512];

    topo_fingerprint("dgx-h100-2node", fp);
    CHECK_STR(t->key.model, "resnet50");
    CHECK_STR(t->key.fingerprint, fp);
    CHECK_STR(t->key.network, "ib-ndr"); /* the platform's fabric */
    CHECK_INT(t->compute->sm, 90);
    acc_tune_target_title(t, title, sizeof(title));
    CHECK_STR(title, "resnet50 on dgx-h100-2node (16 GPUs, H100 SXM5 80GB, fp16, batch 1280), "
                     "network ib-ndr");
    acc_tune_target_destroy(t);

    /* Another network is another cluster, named by its fabric. */
    t = target("resnet50", "dgx-h100-2node", "nic=100 fabric=roce", NULL);
    CHECK(strcmp(t->key.fingerprint, fp) != 0);
    CHECK_STR(t->key.network, "roce");
    acc_tune_target_destroy(t);

    /* Without a fabric name: the parameters as given, or "net" for the topology's own. */
    t = target("resnet50", TWO_NODES, "latency=5", NULL);
    CHECK_STR(t->key.network, "latency=5");
    acc_tune_target_destroy(t);
    t = target("resnet50", TWO_NODES, NULL, NULL);
    CHECK_STR(t->key.network, "net");
    acc_tune_target_destroy(t);

    /* One node has no network, whatever is said about it. */
    t = target("resnet50", "dgx-h100", "fabric=roce", NULL);
    CHECK_STR(t->key.network, "");
    acc_tune_target_destroy(t);
}

ACC_TEST(key_of_a_topology_object_and_a_profile_file)
{
    acc_topo_t *topo = NULL;
    acc_tune_target_t *a = target("resnet50", "dgx-h100-2node", NULL, NULL), *b = NULL;

    /* What the runtime does: its own topology object, a profile given as a file. */
    CHECK_OK(acc_topo_load("dgx-h100-2node", &topo));
    CHECK_OK(acc_tune_target_create(acc_test_src("tuner/models/resnet50.yaml"), topo, NULL, NULL,
                                    NULL, &b));
    CHECK_STR(b->key.model, a->key.model);
    CHECK_STR(b->key.fingerprint, a->key.fingerprint);
    CHECK_STR(b->key.network, a->key.network);
    acc_tune_target_destroy(b);
    acc_tune_target_destroy(a);
    acc_topo_destroy(topo);
}

ACC_TEST(own_network_keeps_the_key)
{
    acc_tune_target_t *own = target("bert-large", "dgx-h100-2node", NULL, NULL);
    acc_tune_target_t *given =
        target("bert-large", "dgx-h100-2node", "fabric=ib-ndr,latency=2.7", NULL);

    CHECK_STR(given->key.fingerprint, own->key.fingerprint);
    CHECK_STR(given->key.network, own->key.network);
    acc_tune_target_destroy(given);
    acc_tune_target_destroy(own);
}

ACC_TEST(stored_network_by_name)
{
    acc_db_t *db = fresh_db("store_net");
    acc_db_network_t net;
    acc_tune_target_t *named, *direct;
    acc_tune_target_t *t = NULL;

    memset(&net, 0, sizeof(net));
    snprintf(net.name, sizeof(net.name), "slow-roce");
    snprintf(net.params, sizeof(net.params), "nic=100 latency_us=10 oversub=2 fabric=roce");
    CHECK_OK(acc_db_put_network(db, &net));
    named = target("resnet50", "dgx-h100-2node", "slow-roce", db);
    direct = target("resnet50", "dgx-h100-2node", net.params, db);
    /* The cluster of its parameters, under the stored network's name. */
    CHECK_STR(named->key.fingerprint, direct->key.fingerprint);
    CHECK_STR(named->key.network, "slow-roce");
    CHECK_STR(direct->key.network, "roce");
    acc_tune_target_destroy(named);
    acc_tune_target_destroy(direct);

    CHECK_ERR(acc_tune_target_load("resnet50", "dgx-h100-2node", "fast-ib", NULL, db, &t),
              ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("network 'fast-ib' is not in the database");
    CHECK_ERR(acc_tune_target_load("resnet50", "dgx-h100-2node", "slow-roce", NULL, NULL, &t),
              ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("no database was given");
    CHECK_ERR(acc_tune_target_load("resnet50", "dgx-h100-2node", "", NULL, db, &t),
              ACC_ERR_INVALID);
    CHECK_ERR(acc_tune_target_load("resnet50", "dgx-h100-2node", "nic=-4", NULL, db, &t),
              ACC_ERR_INVALID);
    CHECK_MSG_HAS("nic=-4");
    CHECK(t == NULL);
    acc_db_close(db);
}

ACC_TEST(bad_models)
{
    acc_tune_target_t *t = NULL;

    CHECK_ERR(acc_tune_target_load("resnet-51", "dgx-h100", NULL, NULL, NULL, &t),
              ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("resnet-51");
    /* VGG-16's profile has no fp32 time on the H100 (published or derived). */
    CHECK_ERR(acc_tune_target_load("vgg16", "dgx-h100", NULL, "fp32", NULL, &t), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("no compute time for sm_90 in fp32");
    CHECK_ERR(acc_tune_target_load("resnet50", "dgx-h100", NULL, "fp64", NULL, &t),
              ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("sm_90 in fp64");
    CHECK_ERR(acc_tune_target_load(NULL, "dgx-h100", NULL, NULL, NULL, &t), ACC_ERR_INVALID);
    CHECK(t == NULL);
}

static acc_tune_config_t config(uint64_t fusion, int streams)
{
    acc_tune_config_t c;
    acc_tune_config_acc(&c, fusion, streams, ACC_TUNE_ALGO_AUTO);
    return c;
}

static size_t tu_count_optima(acc_db_t *db)
{
    acc_db_optimum_t *all = NULL;
    size_t n = 0;
    CHECK_OK(acc_db_list_optima(db, &all, &n));
    acc_mem_free(all);
    return n;
}

ACC_TEST(runs_and_optimum)
{
    acc_db_t *db = fresh_db("store_runs");
    acc_tune_target_t *t = target("resnet50", "dgx-h100-2node", NULL, db);
    acc_tune_config_t ddp, none, c32 = config(32u << 20, 2), c8 = config(8u << 20, 1);
    acc_tune_point_t *pts = NULL, *base = NULL;
    acc_db_tuning_run_t *runs = NULL;
    acc_tune_optimum_t opt, got;
    size_t npts = 0, nbase = 0, nruns = 0;
    int64_t id = 0;

    /* Nothing stored yet: no data, which is not a failure. */
    CHECK_INT(acc_tune_optimum_get(db, &t->key, &got), ACC_NO_DATA);
    CHECK_INT(got.run_id, 0);

    CHECK_OK(acc_tune_store_prepare(db, t));
    acc_tune_config_ddp(&ddp);
    acc_tune_config_nofusion(&none);
    CHECK_OK(acc_tune_run_add(db, &t->key, &none, 1.0, 130.0, ACC_TUNE_RUN_BASELINE, 0, NULL));
    CHECK_OK(acc_tune_run_add(db, &t->key, &ddp, 1.0, 120.0, ACC_TUNE_RUN_BASELINE, 0, NULL));
    CHECK_OK(acc_tune_run_add(db, &t->key, &c8, 0.25, 112.5, "halving", 0.5, NULL));
    CHECK_OK(acc_tune_run_add(db, &t->key, &c32, 1.0, 110.0, "grid", 1.5, &id));
    CHECK(id > 0);

    /* The database's view: microseconds, the fidelity in the method. */
    CHECK_OK(acc_db_list_tuning_runs(db, "resnet50", t->key.fingerprint, "ib-ndr", &runs, &nruns));
    CHECK_INT(nruns, 4);
    CHECK_NEAR(runs[0].score, 110000.0, 1e-6);
    CHECK_STR(runs[0].method, "itersim");
    CHECK_STR(runs[0].strategy, "grid");
    CHECK_STR(runs[0].params, "policy=acc fusion=32M streams=2 algo=auto");
    CHECK_STR(runs[1].method, "itersim@0.25");
    acc_mem_free(runs);

    /* Report points: the search's runs best first, the baselines apart in a fixed order. */
    CHECK_OK(acc_tune_report_points(db, &t->key, &pts, &npts, &base, &nbase));
    CHECK_INT(npts, 2);
    CHECK_STR(pts[0].label, "grid");
    CHECK_NEAR(pts[0].iteration_ms, 110.0, 1e-9);
    CHECK_NEAR(pts[0].fidelity, 1.0, 0);
    CHECK_INT(pts[0].config.streams, 2);
    CHECK_STR(pts[1].label, "halving");
    CHECK_NEAR(pts[1].fidelity, 0.25, 0);
    CHECK_INT(nbase, 2);
    CHECK_STR(base[0].label, "DDP defaults");
    CHECK_STR(base[1].label, "no fusion");
    acc_mem_free(pts);
    acc_mem_free(base);

    memset(&opt, 0, sizeof(opt));
    opt.config = c32;
    opt.iteration_ms = 110.0;
    opt.run_id = id;
    CHECK_OK(acc_tune_optimum_put(db, &t->key, &opt));
    CHECK_OK(acc_tune_optimum_get(db, &t->key, &got));
    CHECK(memcmp(&got.config, &c32, sizeof(c32)) == 0);
    CHECK_NEAR(got.iteration_ms, 110.0, 1e-9);
    CHECK_INT(got.run_id, id);
    /* A later search replaces it. */
    opt.config = c8;
    opt.iteration_ms = 105.0;
    opt.run_id = 0;
    CHECK_OK(acc_tune_optimum_put(db, &t->key, &opt));
    CHECK_OK(acc_tune_optimum_get(db, &t->key, &got));
    CHECK_INT(got.config.streams, 1);
    CHECK_INT(got.run_id, 0);
    CHECK_INT(got.measured, 0);

    /* A measured optimum (a job's online tuning) is kept beside the simulated one, and the
     * job's next start prefers it; its runs are no simulator's report points. */
    c32.compress = ACC_COMPRESS_BF16;
    CHECK_OK(acc_tune_run_add_measured(db, &t->key, &c32, 131.5, "bayes", 0.9, &id));
    CHECK_OK(acc_db_list_tuning_runs(db, "resnet50", t->key.fingerprint, "ib-ndr", &runs, &nruns));
    CHECK_INT(nruns, 5);
    CHECK_STR(runs[4].method, ACC_TUNE_MEASURED);
    CHECK_STR(runs[4].params, "policy=acc fusion=32M streams=2 algo=auto compress=bf16");
    acc_mem_free(runs);
    CHECK_OK(acc_tune_report_points(db, &t->key, &pts, &npts, &base, &nbase));
    CHECK_INT(npts, 2);
    acc_mem_free(pts);
    acc_mem_free(base);
    opt.config = c32;
    opt.iteration_ms = 131.5;
    opt.run_id = id;
    opt.measured = 1;
    CHECK_OK(acc_tune_optimum_put(db, &t->key, &opt));
    CHECK_OK(acc_tune_optimum_get(db, &t->key, &got));
    CHECK_INT(got.measured, 1);
    CHECK_INT(got.config.compress, ACC_COMPRESS_BF16);
    CHECK_NEAR(got.iteration_ms, 131.5, 1e-9);
    CHECK_INT(tu_count_optima(db), 2);
    acc_tune_target_destroy(t);
    acc_db_close(db);
}

/* An optimum written straight into the database, as another program could: its text form and
 * its typed fields as given. */
static void put_raw_optimum(acc_db_t *db, const acc_tune_key_t *key, const char *params,
                            uint64_t fusion, int streams)
{
    acc_db_optimum_t o;
    memset(&o, 0, sizeof(o));
    snprintf(o.model, sizeof(o.model), "%s", key->model);
    snprintf(o.topo_fingerprint, sizeof(o.topo_fingerprint), "%s", key->fingerprint);
    snprintf(o.network, sizeof(o.network), "%s", key->network);
    snprintf(o.params, sizeof(o.params), "%s", params);
    snprintf(o.method, sizeof(o.method), "itersim");
    o.fusion_bytes = fusion;
    o.streams = streams;
    snprintf(o.algo, sizeof(o.algo), "nccl");
    o.score = 1000.0;
    CHECK_OK(acc_db_put_optimum(db, &o));
}

ACC_TEST(optimum_of_another_program)
{
    acc_db_t *db = fresh_db("store_foreign");
    acc_tune_target_t *t = target("resnet50", "dgx-h100", NULL, db);
    acc_tune_optimum_t got;

    CHECK_OK(acc_tune_store_prepare(db, t));
    /* No text form acc reads: the typed fields, under acc's policy. */
    put_raw_optimum(db, &t->key, "", 8u << 20, 3);
    CHECK_OK(acc_tune_optimum_get(db, &t->key, &got));
    CHECK_INT(got.config.policy, ACC_FUSION_ACC);
    CHECK(got.config.fusion_bytes == 8u << 20);
    CHECK_INT(got.config.streams, 3);
    CHECK_INT(got.config.algo, ACC_TUNE_ALGO_NCCL);
    /* Neither: refused, with what was found. */
    put_raw_optimum(db, &t->key, "buckets=lots", 0, 3);
    CHECK_ERR(acc_tune_optimum_get(db, &t->key, &got), ACC_ERR_PARSE);
    CHECK_MSG_HAS("buckets=lots");
    acc_tune_target_destroy(t);
    acc_db_close(db);
}

ACC_TEST(warm_starts_most_similar_first)
{
    acc_db_t *db = fresh_db("store_warm");
    /* The key tuned, and keys of decreasing similarity; each optimum has its own stream count. */
    acc_tune_target_t *t[] = {
        target("resnet50", "dgx-h100-2node", NULL, db),          /* the same key */
        target("bert-large", "dgx-h100", NULL, db),              /* nothing in common */
        target("bert-large", "dgx-h100-2node", NULL, db),        /* the same topology */
        target("resnet50", "dgx-h100", NULL, db),                /* the same model */
        target("resnet50", "dgx-h100-2node", "fabric=roce", db), /* another network name */
    };
    static const int streams[] = {1, 5, 4, 3, 2};
    acc_tune_target_t *other = target("resnet50", TWO_NODES, NULL, db);
    acc_tune_config_t warm[8];
    acc_tune_optimum_t opt;
    size_t i, n = 0;

    memset(&opt, 0, sizeof(opt));
    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        CHECK_OK(acc_tune_store_prepare(db, t[i]));
        opt.config = config(16u << 20, streams[i]);
        opt.iteration_ms = 100.0 + (double)i;
        opt.run_id = 0;
        CHECK_OK(acc_tune_optimum_put(db, &t[i]->key, &opt));
    }
    /* An optimum nothing can start from (of the same model) is skipped, not an error. */
    CHECK_OK(acc_tune_store_prepare(db, other));
    put_raw_optimum(db, &other->key, "buckets=lots", 0, 3);
    CHECK_OK(acc_tune_warm_starts(db, &t[0]->key, warm, 8, &n));
    CHECK_INT(n, 4);
    CHECK_INT(warm[0].streams, 1); /* the same key */
    CHECK_INT(warm[1].streams, 2); /* the same model and topology, another network name */
    CHECK_INT(warm[2].streams, 3); /* the same model */
    CHECK_INT(warm[3].streams, 4); /* the same topology */
    /* At most max, the most similar kept. */
    CHECK_OK(acc_tune_warm_starts(db, &t[0]->key, warm, 2, &n));
    CHECK_INT(n, 2);
    CHECK_INT(warm[1].streams, 2);
    /* From bert-large on one node: its own key, bert-large elsewhere, then its topology. */
    CHECK_OK(acc_tune_warm_starts(db, &t[1]->key, warm, 8, &n));
    CHECK_INT(n, 3);
    CHECK_INT(warm[0].streams, 5);
    CHECK_INT(warm[1].streams, 4);
    CHECK_INT(warm[2].streams, 3);
    /* A measured optimum of a key comes before its simulated one. */
    opt.config = config(16u << 20, 7);
    opt.measured = 1;
    CHECK_OK(acc_tune_optimum_put(db, &t[0]->key, &opt));
    CHECK_OK(acc_tune_warm_starts(db, &t[0]->key, warm, 8, &n));
    CHECK_INT(n, 5);
    CHECK_INT(warm[0].streams, 7);
    CHECK_INT(warm[1].streams, 1);
    acc_tune_target_destroy(other);
    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        acc_tune_target_destroy(t[i]);
    acc_db_close(db);
}
