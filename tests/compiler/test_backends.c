/*
 * Which backend runs what (acc_plan_runs_on and the tables built on it): the host backend runs
 * plans whose messages cross nodes but never touches another node's memory; the cuda backend
 * runs plans within a node of at most ACC_KARG_RANKS ranks and leaves the rest to NCCL.  On two
 * AWS p5 nodes - where the table picks acc's plans - every range is NCCL's for a GPU job, with
 * the reason in the report, while the host backend keeps acc's choices.
 */
#include "acc_test.h"
#include "plan_fixtures.h"

#include "acc_kernels.h"
#include "acc_select.h"

static const int two_by_four[8] = {0, 0, 0, 0, 1, 1, 1, 1};

ACC_TEST(host_runs_messages_between_nodes_cuda_leaves_them_to_nccl)
{
    acc_plan_t *p = fx_ring_allreduce(8, 1);
    CHECK_OK(acc_plan_verify(p));
    CHECK_OK(acc_plan_runs_on(p, ACC_BACKEND_HOST, NULL));
    CHECK_OK(acc_plan_runs_on(p, ACC_BACKEND_CUDA, NULL));
    CHECK_OK(acc_plan_runs_on(p, ACC_BACKEND_HOST, two_by_four));
    CHECK_ERR(acc_plan_runs_on(p, ACC_BACKEND_CUDA, two_by_four), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("the cuda backend runs multi-node plans through NCCL: allreduce ring");
    CHECK_MSG_HAS("reaches rank");
    /* The same through the node-major numbering of a topology. */
    CHECK_INT(acc_plan_backends(p, 4), ACC_BACKENDS_HOST);
    CHECK_INT(acc_plan_backends(p, 8), ACC_BACKENDS_ALL);
    CHECK_INT(acc_plan_backends(p, 0), ACC_BACKENDS_ALL);
    CHECK_ERR(acc_plan_runs_on(p, ACC_BACKEND_AUTO, NULL), ACC_ERR_INVALID);
    acc_plan_destroy(p);
}

/* A one-shot allreduce reads every peer's input in place and signals through counters in peer
 * memory: split over two nodes, neither backend can run it. */
ACC_TEST(peer_memory_stays_within_a_node)
{
    acc_plan_t *p = fx_oneshot_allreduce(8, 4);
    char rule[256];
    CHECK_OK(acc_plan_verify(p));
    CHECK_INT(acc_plan_backends(p, 8), ACC_BACKENDS_ALL);
    CHECK_ERR(acc_plan_runs_on(p, ACC_BACKEND_HOST, two_by_four), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("the host backend reaches other nodes through messages only: allreduce oneshot");
    CHECK_MSG_HAS("touches the memory of rank 4 on another node");
    acc_plan_backend_rule(acc_error_message(), rule, sizeof(rule));
    CHECK_STR(rule, "the host backend reaches other nodes through messages only");
    CHECK_INT(acc_plan_backends(p, 4), 0);
    acc_plan_destroy(p);
}

ACC_TEST(more_ranks_than_a_launch_holds_go_to_nccl_on_gpus)
{
    acc_plan_t *p = fx_ring_allreduce(ACC_KARG_RANKS + 1, 1);
    char rule[256];
    CHECK_OK(acc_plan_runs_on(p, ACC_BACKEND_HOST, NULL));
    CHECK_ERR(acc_plan_runs_on(p, ACC_BACKEND_CUDA, NULL), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("the cuda backend runs acc's plans on up to 64 ranks; NCCL serves 65");
    acc_plan_backend_rule(acc_error_message(), rule, sizeof(rule));
    CHECK_STR(rule, "the cuda backend runs acc's plans on up to 64 ranks; NCCL serves 65");
    CHECK_INT(acc_plan_backends(p, 0), ACC_BACKENDS_HOST);
    acc_plan_destroy(p);
}

ACC_TEST(backend_sets_as_text_and_back)
{
    static const unsigned sets[] = {0, ACC_BACKENDS_HOST, ACC_BACKENDS_CUDA, ACC_BACKENDS_ALL};
    static const char *const texts[] = {"", "host", "cuda", "host cuda"};
    char text[32];
    unsigned set = 99;
    for (size_t i = 0; i < 4; i++) {
        acc_backends_format(sets[i], text, sizeof(text));
        CHECK_STR(text, texts[i]);
        CHECK_OK(acc_backends_parse(texts[i], &set));
        CHECK_INT(set, sets[i]);
    }
    CHECK_OK(acc_backends_parse("cuda host", &set));
    CHECK_INT(set, ACC_BACKENDS_ALL);
    CHECK_ERR(acc_backends_parse("host gpu", &set), ACC_ERR_INVALID);
    CHECK_MSG_HAS("'gpu' is not host or cuda");
    CHECK_ERR(acc_backends_parse("auto", &set), ACC_ERR_INVALID);
    CHECK_ERR(acc_backends_parse("host  cuda", &set), ACC_ERR_INVALID);
}

/* ---- the tables of AWS p5 ---------------------------------------------------------------- */

/* The allreduce table of `nodes` p5 instances on EFA, 1 KiB to 1 MiB. */
static acc_select_result_t *p5_allreduce(int nodes)
{
    acc_topo_t *one = NULL, *topo = NULL;
    acc_select_build_opts_t opts;
    acc_select_builder_t *b = NULL;
    acc_select_result_t *r = NULL;
    char params[64];

    CHECK_OK(acc_topo_load(ACC_TEST_SOURCE_DIR "/schedules/platforms/aws-p5.yaml", &one));
    snprintf(params, sizeof(params), "nodes=%d fabric=efa", nodes);
    CHECK_OK(acc_topo_with_network(one, params, &topo));
    acc_select_build_opts_init(&opts);
    opts.max_bytes = 1u << 20;
    CHECK_OK(acc_select_builder_create(topo, &opts, &b));
    CHECK_OK(acc_select_build(b, ACC_COLL_ALLREDUCE, &r));
    acc_select_builder_destroy(b);
    acc_topo_destroy(topo);
    acc_topo_destroy(one);
    return r;
}

static char *ranges_text(const acc_select_result_t *r)
{
    acc_buf_t b;
    acc_buf_init(&b);
    CHECK_OK(acc_select_report_ranges(&r, 1, &b));
    printf("%s", b.data);
    return acc_buf_take(&b);
}

ACC_TEST(two_p5_nodes_give_gpu_jobs_nccl_and_keep_the_host_backends_choices)
{
    acc_select_result_t *r = p5_allreduce(2);
    const acc_select_entry_t *small = acc_select_lookup(r->table, 1024);
    acc_buf_t json;
    char *text = ranges_text(r);
    size_t acc_ranges = 0;

    /* What the issue saw: acc's plan at 1 KiB.  It stays the host backend's. */
    CHECK(small != NULL && !small->use_nccl);
    CHECK(acc_select_entry_runs_on(small, ACC_BACKEND_HOST));
    for (size_t i = 0; i < r->table->n; i++) {
        const acc_select_entry_t *e = &r->table->entries[i];
        CHECK_MSG(!acc_select_entry_runs_on(e, ACC_BACKEND_CUDA),
                  "a GPU job is offered acc's %s at %llu bytes", e->algo,
                  (unsigned long long)e->min_bytes);
        CHECK_INT(e->backends, e->use_nccl ? ACC_BACKENDS_CUDA : ACC_BACKENDS_HOST);
        acc_ranges += !e->use_nccl;
    }
    CHECK(acc_ranges >= 1);
    CHECK(strstr(text, "runs on: host; GPUs: NCCL (1)") != NULL);
    CHECK(strstr(text, "  (1) the cuda backend runs multi-node plans through NCCL\n") != NULL);
    CHECK(strstr(text, "runs on: host cuda") == NULL);
    acc_buf_init(&json);
    CHECK_OK(acc_select_report_json((const acc_select_result_t *const *)&r, 1, &json));
    CHECK(strstr(json.data, "\"backends\": [\"host\"], \"gpus\": \"nccl\", \"gpus_why\": \"the "
                            "cuda backend runs multi-node plans through NCCL\"") != NULL);
    acc_buf_free(&json);
    acc_mem_free(text);
    acc_select_result_destroy(r);
}

ACC_TEST(one_p5_node_runs_accs_plans_on_either_backend)
{
    acc_select_result_t *r = p5_allreduce(1);
    char *text = ranges_text(r);
    size_t acc_ranges = 0;

    for (size_t i = 0; i < r->table->n; i++) {
        const acc_select_entry_t *e = &r->table->entries[i];
        CHECK_INT(e->backends, e->use_nccl ? ACC_BACKENDS_CUDA : ACC_BACKENDS_ALL);
        acc_ranges += acc_select_entry_runs_on(e, ACC_BACKEND_CUDA);
    }
    CHECK(acc_ranges >= 1);
    CHECK(strstr(text, "runs on: host cuda") != NULL);
    CHECK(strstr(text, "GPUs: NCCL (") == NULL);
    acc_mem_free(text);
    acc_select_result_destroy(r);
}
