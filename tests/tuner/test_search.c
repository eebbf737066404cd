/* The search: Bayesian optimisation and successive halving against the exhaustive grid on real
 * (model, platform) pairs, the space, budgets, seeds, warm starts, and the reports. */
#include "acc_test.h"
#include "acc_topo.h"
#include "acc_tune.h"

#include <math.h>
#include <string.h>

/* Within 3% of the grid's optimum with at most a quarter of its evaluations. */
#define TOLERANCE 0.03

static acc_tune_comm_t *comm_of(const char *topo_src, int nccl_only, int *sm)
{
    acc_topo_t *t = NULL;
    acc_tune_comm_t *c = NULL;
    acc_tune_comm_opts_t o;
    CHECK_OK(acc_topo_load(topo_src, &t));
    *sm = acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_GPU, 0))->sm;
    acc_tune_comm_opts_init(&o);
    o.nccl_only = nccl_only;
    CHECK_OK(acc_tune_comm_create(t, &o, &c));
    acc_topo_destroy(t);
    return c;
}

/* Every choice the times have; NCCL's alone when acc's plans were not swept (auto would be
 * NCCL's choice again). */
static void space_for(const acc_tune_comm_t *c, acc_tune_space_t *sp)
{
    acc_tune_space_init(sp);
    if (!acc_tune_comm_has(c, ACC_TUNE_ALGO_ACC))
        sp->algos = 1u << ACC_TUNE_ALGO_NCCL;
}

static double best_ms(const acc_tune_search_result_t *r)
{
    return r->evals[r->best].result.iteration_ms;
}

/* Grid, then Bayes and halving with fixed seeds, on one model; returns the grid's optimum. */
static void compare(const char *model, const char *platform, const acc_tune_comm_t *c, int sm)
{
    acc_profile_t *p = NULL;
    acc_itersim_t *sim = NULL;
    acc_tune_space_t sp;
    acc_tune_search_opts_t o;
    acc_tune_search_result_t *grid = NULL, *r = NULL;
    size_t size, i;
    int s;

    CHECK_OK(acc_profile_load_builtin(model, &p));
    CHECK_MSG(acc_profile_find_compute(p, sm, NULL), "%s has no sm_%d entry", model, sm);
    CHECK_OK(acc_itersim_create(p, acc_profile_find_compute(p, sm, NULL), c, NULL, &sim));
    space_for(c, &sp);
    size = acc_tune_space_size(&sp);
    acc_tune_search_opts_init(&o);
    CHECK_OK(acc_tune_search(sim, &sp, &o, &grid));
    CHECK_INT(grid->nevals, size);
    for (i = 0; i < grid->nevals; i++)
        CHECK(grid->evals[i].result.iteration_ms >= best_ms(grid) * (1 - 1e-9));
    for (s = ACC_SEARCH_BAYES; s <= ACC_SEARCH_HALVING; s++) {
        o.strategy = (acc_search_strategy_t)s;
        o.seed = 42;
        CHECK_OK(acc_tune_search(sim, &sp, &o, &r));
        CHECK_MSG(r->nevals * 4 <= size, "%s on %s, %s: %zu evaluations of %zu", model, platform,
                  acc_search_strategy_name(r->strategy), r->nevals, size);
        CHECK_MSG(best_ms(r) <= best_ms(grid) * (1 + TOLERANCE),
                  "%s on %s, %s: %.3f ms, grid optimum %.3f ms", model, platform,
                  acc_search_strategy_name(r->strategy), best_ms(r), best_ms(grid));
        CHECK(r->evals[r->best].fidelity == 1.0);
        printf("%-10s %-24s %-7s %3zu/%zu evaluations (cost %5.1f): %.3f ms, grid %.3f ms "
               "(+%.3f%%)\n",
               model, platform, acc_search_strategy_name(r->strategy), r->nevals, size, r->cost,
               best_ms(r), best_ms(grid), 100 * (best_ms(r) / best_ms(grid) - 1));
        acc_tune_search_result_destroy(r);
    }
    acc_tune_search_result_destroy(grid);
    acc_itersim_destroy(sim);
    acc_profile_destroy(p);
}

/* The pairs: ResNet-50 on one DGX H100, on 16 DGX-1 V100 over 32 Gb/s, BERT-large there too,
 * GPT-2 XL on 16 DGX H100 (128 ranks), and ResNet-50, BERT-large and GPT-2 XL on two DGX H100.
 * acc's plans are swept where the sweep is quick; on two DGX H100 (a sweep of a minute) the
 * space is NCCL's choice only. */
ACC_TEST(search_dgx_h100)
{
    int sm;
    acc_tune_comm_t *c = comm_of("dgx-h100", 0, &sm);
    compare("resnet50", "dgx-h100", c, sm);
    compare("bert-large", "dgx-h100", c, sm);
    acc_tune_comm_destroy(c);
}

ACC_TEST(search_dawnbench_v100_16node)
{
    int sm;
    acc_tune_comm_t *c = comm_of("dawnbench-v100-16node", 0, &sm);
    compare("resnet50", "dawnbench-v100-16node", c, sm);
    compare("bert-large", "dawnbench-v100-16node", c, sm);
    acc_tune_comm_destroy(c);
}

ACC_TEST(search_h100_16node)
{
    int sm;
    acc_tune_comm_t *c = comm_of("nodes=16 gpus=8 nvlink=18 nic=8x400", 0, &sm);
    compare("gpt2-xl", "16x DGX H100 (synthetic)", c, sm);
    acc_tune_comm_destroy(c);
}

ACC_TEST(search_dgx_h100_2node)
{
    int sm;
    acc_tune_comm_t *c = comm_of("dgx-h100-2node", 1, &sm);
    compare("resnet50", "dgx-h100-2node", c, sm);
    compare("bert-large", "dgx-h100-2node", c, sm);
    compare("gpt2-xl", "dgx-h100-2node", c, sm);
    acc_tune_comm_destroy(c);
}

/* A slow network, where the landscape is not flat: 4 nodes of 8 H100 over one 10 Gb/s NIC. */
ACC_TEST(search_slow_network)
{
    int sm;
    acc_tune_comm_t *c = comm_of("nodes=4 gpus=8 nvlink=18 nic=1x10", 1, &sm);
    compare("bert-large", "4x H100, 10 Gb/s", c, sm);
    compare("resnet50", "4x H100, 10 Gb/s", c, sm);
    acc_tune_comm_destroy(c);
}

typedef struct {
    size_t calls;
    size_t stop_at;
    size_t last_budget;
} counter_t;

static acc_status_t count_evals(void *ctx, const acc_tune_eval_t *e, size_t done, size_t budget)
{
    counter_t *k = ctx;
    k->calls++;
    k->last_budget = budget;
    CHECK_INT(done, k->calls);
    CHECK(e->result.iteration_ms > 0);
    if (k->stop_at && done == k->stop_at)
        return acc_error_set(ACC_ERR_IO, "disk full (test)");
    return ACC_OK;
}

static acc_itersim_t *resnet_sim(acc_profile_t **p, acc_tune_comm_t **c)
{
    int sm;
    acc_itersim_t *sim = NULL;
    *c = comm_of("dawnbench-v100-16node", 1, &sm);
    CHECK_OK(acc_profile_load_builtin("resnet50", p));
    CHECK_OK(acc_itersim_create(*p, acc_profile_find_compute(*p, sm, NULL), *c, NULL, &sim));
    return sim;
}

ACC_TEST(budget_seed_and_callback)
{
    acc_profile_t *p = NULL;
    acc_tune_comm_t *c = NULL;
    acc_itersim_t *sim = resnet_sim(&p, &c);
    acc_tune_space_t sp;
    acc_tune_search_opts_t o;
    acc_tune_search_result_t *a = NULL, *b = NULL;
    counter_t k;
    size_t i;
    int s;

    space_for(c, &sp);
    CHECK_INT(acc_tune_space_size(&sp), 13 * 8);
    for (s = ACC_SEARCH_GRID; s <= ACC_SEARCH_HALVING; s++) {
        memset(&k, 0, sizeof(k));
        acc_tune_search_opts_init(&o);
        o.strategy = (acc_search_strategy_t)s;
        o.budget = 20;
        o.seed = 7;
        o.on_eval = count_evals;
        o.ctx = &k;
        CHECK_OK(acc_tune_search(sim, &sp, &o, &a));
        CHECK(a->nevals <= 20);
        CHECK_INT(k.calls, a->nevals);
        CHECK_INT(k.last_budget, 20);
        /* The same seed, the same evaluations. */
        memset(&k, 0, sizeof(k));
        CHECK_OK(acc_tune_search(sim, &sp, &o, &b));
        CHECK_INT(a->nevals, b->nevals);
        for (i = 0; i < a->nevals; i++) {
            CHECK_INT(a->evals[i].index, b->evals[i].index);
            CHECK_NEAR(a->evals[i].fidelity, b->evals[i].fidelity, 0);
        }
        acc_tune_search_result_destroy(b);
        acc_tune_search_result_destroy(a);
        /* A failing callback stops the search with its status. */
        memset(&k, 0, sizeof(k));
        k.stop_at = 3;
        CHECK_ERR(acc_tune_search(sim, &sp, &o, &a), ACC_ERR_IO);
        CHECK_MSG_HAS("disk full");
        CHECK(a == NULL);
        CHECK_INT(k.calls, 3);
    }
    /* A budget too small for successive halving to reach full fidelity says so. */
    acc_tune_search_opts_init(&o);
    o.strategy = ACC_SEARCH_HALVING;
    o.budget = 1;
    CHECK_ERR(acc_tune_search(sim, &sp, &o, &a), ACC_ERR_RANGE);
    CHECK_MSG_HAS("budget");
    acc_itersim_destroy(sim);
    acc_profile_destroy(p);
    acc_tune_comm_destroy(c);
}

ACC_TEST(warm_start_comes_first)
{
    acc_profile_t *p = NULL;
    acc_tune_comm_t *c = NULL;
    acc_itersim_t *sim = resnet_sim(&p, &c);
    acc_tune_space_t sp;
    acc_tune_search_opts_t o;
    acc_tune_search_result_t *grid = NULL, *r = NULL;
    acc_tune_config_t warm[2];

    space_for(c, &sp);
    acc_tune_search_opts_init(&o);
    CHECK_OK(acc_tune_search(sim, &sp, &o, &grid));
    /* An optimum found before (the grid's) and a poor one, off the grid (3 MiB, 12 streams). */
    warm[0] = grid->evals[grid->best].config;
    acc_tune_config_acc(&warm[1], 3ull << 20, 12, ACC_TUNE_ALGO_NCCL);
    o.warm = warm;
    o.nwarm = 2;
    o.strategy = ACC_SEARCH_BAYES;
    o.budget = 12;
    CHECK_OK(acc_tune_search(sim, &sp, &o, &r));
    CHECK(r->evals[0].warm && r->evals[1].warm && !r->evals[2].warm);
    CHECK_INT(r->evals[0].index, grid->evals[grid->best].index);
    CHECK_INT(r->evals[1].config.fusion_bytes, 4ull << 20); /* log2(3 MiB) rounds to 4 MiB */
    CHECK_INT(r->evals[1].config.streams, 8);
    CHECK_NEAR(best_ms(r), best_ms(grid), 0);
    acc_tune_search_result_destroy(r);
    /* The grid skips what the warm start already evaluated. */
    o.strategy = ACC_SEARCH_GRID;
    o.budget = 0;
    CHECK_OK(acc_tune_search(sim, &sp, &o, &r));
    CHECK_INT(r->nevals, acc_tune_space_size(&sp));
    acc_tune_search_result_destroy(r);
    acc_tune_search_result_destroy(grid);
    acc_itersim_destroy(sim);
    acc_profile_destroy(p);
    acc_tune_comm_destroy(c);
}

ACC_TEST(space_points_and_bad_spaces)
{
    acc_tune_space_t sp;
    acc_tune_config_t c;
    size_t i;

    acc_tune_space_init(&sp);
    CHECK_INT(acc_tune_space_size(&sp), 13 * 8 * 3);
    for (i = 0; i < acc_tune_space_size(&sp); i++) {
        acc_tune_space_config(&sp, i, &c);
        CHECK_OK(acc_tune_config_check(&c));
        CHECK(c.fusion_bytes >= (256ull << 10) && c.fusion_bytes <= (1ull << 30));
        CHECK(c.streams >= 1 && c.streams <= 8);
        CHECK_INT(acc_tune_space_nearest(&sp, &c), i);
    }
    sp.fusion_min = 3ull << 20;
    CHECK_ERR(acc_tune_space_check(&sp), ACC_ERR_RANGE);
    CHECK_MSG_HAS("powers of two");
    acc_tune_space_init(&sp);
    sp.streams_max = 17;
    CHECK_ERR(acc_tune_space_check(&sp), ACC_ERR_RANGE);
    acc_tune_space_init(&sp);
    sp.algos = 0;
    CHECK_ERR(acc_tune_space_check(&sp), ACC_ERR_INVALID);
    acc_tune_space_init(&sp);
    sp.policy = ACC_FUSION_NONE;
    CHECK_ERR(acc_tune_space_check(&sp), ACC_ERR_INVALID);
    CHECK_MSG_HAS("none");
    acc_tune_space_init(&sp);
    sp.compressions = 0;
    CHECK_ERR(acc_tune_space_check(&sp), ACC_ERR_INVALID);
    CHECK_MSG_HAS("compression");
}

/* Compression is a category beside the collective choice: every pair once. */
ACC_TEST(space_with_compressions)
{
    acc_tune_space_t sp;
    acc_tune_config_t c;
    unsigned seen = 0, mask = 0;
    size_t i;

    acc_tune_space_init(&sp);
    sp.algos = (1u << ACC_TUNE_ALGO_AUTO) | (1u << ACC_TUNE_ALGO_NCCL);
    CHECK_OK(acc_compress_parse_list("none,bf16", &sp.compressions));
    CHECK_INT(acc_tune_space_categories(&sp), 4);
    CHECK_INT(acc_tune_space_size(&sp), 13 * 8 * 4);
    for (i = 0; i < acc_tune_space_size(&sp); i++) {
        acc_tune_space_config(&sp, i, &c);
        CHECK(c.compress == ACC_COMPRESS_NONE || c.compress == ACC_COMPRESS_BF16);
        CHECK(c.algo == ACC_TUNE_ALGO_AUTO || c.algo == ACC_TUNE_ALGO_NCCL);
        seen |= 1u << (c.algo * ACC_COMPRESS_COUNT + c.compress);
        CHECK_INT(acc_tune_space_nearest(&sp, &c), i);
    }
    CHECK_INT(__builtin_popcount(seen), 4);
    /* A compression the space does not search falls back to its first. */
    c.compress = ACC_COMPRESS_FP16;
    acc_tune_space_config(&sp, acc_tune_space_nearest(&sp, &c), &c);
    CHECK_INT(c.compress, ACC_COMPRESS_NONE);
    CHECK_ERR(acc_compress_parse_list("none,int8", &mask), ACC_ERR_INVALID);
    CHECK_MSG_HAS("int8");
    CHECK_ERR(acc_compress_parse_list("", &mask), ACC_ERR_INVALID);
    CHECK_OK(acc_compress_parse_list("fp16", &mask));
    CHECK_INT(mask, 1u << ACC_COMPRESS_FP16);
}

/* A measurement stands in for the simulator: the same strategies, scored by the caller. */
typedef struct {
    const acc_itersim_t *sim;
    int calls;
} fake_measure_t;

static acc_status_t measure_by_sim(void *ctx, const acc_tune_config_t *c, acc_itersim_result_t *out)
{
    fake_measure_t *m = ctx;
    m->calls++;
    return acc_itersim_run(m->sim, c, out);
}

ACC_TEST(search_by_measurement)
{
    acc_profile_t *p = NULL;
    acc_tune_comm_t *c = NULL;
    acc_itersim_t *sim = resnet_sim(&p, &c);
    acc_tune_space_t sp;
    acc_tune_search_opts_t o;
    acc_tune_search_result_t *grid = NULL, *r = NULL;
    fake_measure_t m = {sim, 0};

    space_for(c, &sp);
    sp.compressions = (1u << ACC_COMPRESS_NONE) | (1u << ACC_COMPRESS_FP16);
    acc_tune_search_opts_init(&o);
    CHECK_OK(acc_tune_search(sim, &sp, &o, &grid));
    o.strategy = ACC_SEARCH_BAYES;
    o.measure = measure_by_sim;
    o.measure_ctx = &m;
    CHECK_OK(acc_tune_search(NULL, &sp, &o, &r));
    CHECK_INT(m.calls, r->nevals);
    CHECK(r->nevals * 4 <= grid->nevals);
    CHECK(best_ms(r) <= best_ms(grid) * (1 + TOLERANCE));
    acc_tune_search_result_destroy(r);
    /* Successive halving's rungs are the simulator's; a measurement has none. */
    o.strategy = ACC_SEARCH_HALVING;
    CHECK_ERR(acc_tune_search(NULL, &sp, &o, &r), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("halving");
    acc_tune_search_result_destroy(grid);
    acc_itersim_destroy(sim);
    acc_profile_destroy(p);
    acc_tune_comm_destroy(c);
}

ACC_TEST(nccl_only_times_refuse_acc_choices)
{
    acc_profile_t *p = NULL;
    acc_tune_comm_t *c = NULL;
    acc_itersim_t *sim = resnet_sim(&p, &c);
    acc_tune_space_t sp;
    acc_tune_search_result_t *r = NULL;

    acc_tune_space_init(&sp);
    CHECK_ERR(acc_tune_search(sim, &sp, NULL, &r), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("'acc'");
    acc_itersim_destroy(sim);
    acc_profile_destroy(p);
    acc_tune_comm_destroy(c);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (; (hay = strstr(hay, needle)) != NULL; hay += strlen(needle))
        n++;
    return n;
}

ACC_TEST(reports)
{
    acc_profile_t *p = NULL;
    acc_tune_comm_t *c = NULL;
    acc_itersim_t *sim = resnet_sim(&p, &c);
    acc_tune_space_t sp;
    acc_tune_search_result_t *r = NULL;
    acc_tune_point_t *pts, best, base[3];
    acc_tune_report_t rep;
    acc_buf_t b;
    size_t i;

    space_for(c, &sp);
    CHECK_OK(acc_tune_search(sim, &sp, NULL, &r));
    pts = acc_mem_calloc(r->nevals, sizeof(*pts));
    for (i = 0; i < r->nevals; i++)
        acc_tune_point_from_eval(&r->evals[i], "grid", &pts[i]);
    best = pts[r->best];
    for (i = 0; i < 3; i++) {
        acc_tune_eval_t e;
        memset(&e, 0, sizeof(e));
        if (i == 0)
            acc_tune_config_ddp(&e.config);
        else if (i == 1)
            acc_tune_config_horovod(&e.config);
        else
            acc_tune_config_nofusion(&e.config);
        CHECK_OK(acc_itersim_run(sim, &e.config, &e.result));
        e.fidelity = 1;
        acc_tune_point_from_eval(&e, acc_tune_baseline_label(e.config.policy), &base[i]);
        CHECK(base[i].iteration_ms >= best.iteration_ms);
    }
    memset(&rep, 0, sizeof(rep));
    rep.title = "resnet50 on dawnbench <test & check>";
    rep.points = pts;
    rep.npoints = r->nevals;
    rep.best = &best;
    rep.baselines = base;
    rep.nbaselines = 3;
    acc_buf_init(&b);
    CHECK_OK(acc_tune_report_text(&rep, 5, &b));
    CHECK(strstr(b.data, "optimum (grid)") && strstr(b.data, "DDP defaults") &&
          strstr(b.data, "Horovod defaults") && strstr(b.data, "no fusion"));
    CHECK(strstr(b.data, "best 5 of 104"));
    acc_buf_reset(&b);
    CHECK_OK(acc_tune_report_csv(&rep, &b));
    CHECK_INT(count(b.data, "\n"), 1 + 3 + r->nevals);
    CHECK(strncmp(b.data, "label,policy,fusion_bytes", 25) == 0);
    acc_buf_reset(&b);
    CHECK_OK(acc_tune_report_svg(&rep, &b));
    CHECK(strncmp(b.data, "<?xml ", 6) == 0 && strstr(b.data, "<svg ") &&
          strstr(b.data, "</svg>\n"));
    CHECK(strstr(b.data, "&lt;test &amp; check&gt;")); /* the title escaped */
    CHECK_INT(count(b.data, "<title>"), 13 * 8 + 1);   /* a cell each, and the optimum */
    CHECK(strstr(b.data, "DDP defaults: ") && strstr(b.data, "Horovod defaults: "));
    acc_buf_reset(&b);
    rep.npoints = 0;
    CHECK_ERR(acc_tune_report_svg(&rep, &b), ACC_ERR_NOT_FOUND);
    acc_buf_free(&b);
    acc_mem_free(pts);
    acc_tune_search_result_destroy(r);
    acc_itersim_destroy(sim);
    acc_profile_destroy(p);
    acc_tune_comm_destroy(c);
}
