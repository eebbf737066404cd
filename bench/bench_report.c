/*
 * bench_report: time of the full report (acc-compile --topo T --report: the selection sweep of
 * allreduce, allgather, reduce_scatter, broadcast and reduce from 1 KiB to 4 GiB, rendered as
 * text, JSON and SVG) on DGX H100 and on 128 nodes x 8 H100 GPUs (the targets: under
 * 2 s and under 60 s).
 *
 *     bench_report [TOPOLOGY...]     default: dgx-h100 and "nodes=128 gpus=8 nvlink=18 nic=8x400"
 *
 * report_s is wall-clock time, the target's measure; cpu_s the CPU time of all the report's
 * threads (one per CPU, at most 8), so that a run on a busy machine can still be judged.
 *
 * Baseline, measured in the same run: generating and verifying the default plan of every
 * applicable generator once -- work no report can avoid.  x_base is the report's time over it,
 * so it says what the variants and the simulations cost on top.  Peak memory is the process's
 * maximum resident set so far (getrusage), which only grows.
 */
#include "bench_util.h"
#include "acc_compiler.h"
#include "acc_select.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static const acc_coll_t colls[] = {ACC_COLL_ALLREDUCE, ACC_COLL_ALLGATHER, ACC_COLL_REDUCE_SCATTER,
                                   ACC_COLL_BROADCAST, ACC_COLL_REDUCE};
#define NCOLL (sizeof(colls) / sizeof(colls[0]))

/* The baseline: every generator's default plan, generated and verified once. */
static int baseline(const acc_topo_t *t, double *secs, size_t *plans)
{
    size_t n, i, k;
    const acc_algo_t *const *algos = acc_algo_list(&n);
    double t0 = acc_now_s();

    *plans = 0;
    for (k = 0; k < NCOLL; k++) {
        for (i = 0; i < n; i++) {
            acc_algo_args_t args;
            acc_plan_t *p = NULL;
            memset(&args, 0, sizeof(args));
            if (algos[i]->coll != colls[k] || algos[i]->supports(t, &args) != ACC_OK)
                continue;
            if (acc_algo_generate(algos[i], t, &args, &p) != ACC_OK) {
                fprintf(stderr, "bench_report: %s %s: %s\n", acc_coll_name(colls[k]),
                        algos[i]->name, acc_error_message());
                return 1;
            }
            acc_plan_destroy(p);
            (*plans)++;
        }
    }
    *secs = acc_now_s() - t0;
    return 0;
}

/* The full report, as acc-compile --report makes it. */
static int report(const acc_topo_t *t, double *secs, double *cpu, size_t *variants, size_t *sims,
                  double per_coll[NCOLL])
{
    acc_select_builder_t *b = NULL;
    acc_select_result_t *res[NCOLL] = {NULL};
    acc_buf_t text, json, svg;
    double t0 = acc_now_s(), c0 = bench_cpu_s(), tc;
    size_t k;
    int rc = 0;

    acc_buf_init(&text);
    acc_buf_init(&json);
    acc_buf_init(&svg);
    *variants = *sims = 0;
    if (acc_select_builder_create(t, NULL, &b) != ACC_OK)
        rc = 1;
    for (k = 0; k < NCOLL && rc == 0; k++) {
        tc = acc_now_s();
        if (acc_select_build(b, colls[k], &res[k]) != ACC_OK) {
            rc = 1;
            break;
        }
        per_coll[k] = acc_now_s() - tc;
        *variants += res[k]->variants;
        *sims += res[k]->simulations;
    }
    if (rc == 0 &&
        (acc_select_report_text((const acc_select_result_t *const *)res, NCOLL, &text) != ACC_OK ||
         acc_select_report_json((const acc_select_result_t *const *)res, NCOLL, &json) != ACC_OK ||
         acc_select_report_svg((const acc_select_result_t *const *)res, NCOLL, &svg) != ACC_OK))
        rc = 1;
    *secs = acc_now_s() - t0;
    *cpu = bench_cpu_s() - c0;
    if (rc)
        fprintf(stderr, "bench_report: %s\n", acc_error_message());
    for (k = 0; k < NCOLL; k++)
        acc_select_result_destroy(res[k]);
    acc_select_builder_destroy(b);
    acc_buf_free(&text);
    acc_buf_free(&json);
    acc_buf_free(&svg);
    return rc;
}

static int bench(const char *src, double target)
{
    acc_topo_t *t = NULL;
    double base_s = 0, rep_s = 0, rep_cpu = 0, per[NCOLL] = {0};
    size_t base_plans = 0, variants = 0, sims = 0, k;

    if (acc_topo_load(src, &t) != ACC_OK) {
        fprintf(stderr, "bench_report: %s\n", acc_error_message());
        return 1;
    }
    if (baseline(t, &base_s, &base_plans) || report(t, &rep_s, &rep_cpu, &variants, &sims, per)) {
        acc_topo_destroy(t);
        return 1;
    }
    printf("%-28s %6d %8zu %8zu %8zu %9.3f %9.2f %9.2f %7.1f %9.1f %8.0f  %s\n",
           acc_topo_name(t)[0] ? acc_topo_name(t) : src, acc_topo_ranks(t), base_plans, variants,
           sims, base_s, rep_s, rep_cpu, base_s > 0 ? rep_s / base_s : 0, bench_peak_mib(), target,
           target <= 0      ? "-"
           : rep_s < target ? "meets"
                            : "MISSES");
    printf("#   per collective (s):");
    for (k = 0; k < NCOLL; k++)
        printf(" %s %.2f", acc_coll_name(colls[k]), per[k]);
    printf("\n");
    acc_topo_destroy(t);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *src;
        double target_s;
    } defaults[] = {{"dgx-h100", 2}, {"nodes=128 gpus=8 nvlink=18 nic=8x400", 60}};
    int i, rc = 0;

    printf("# full report (5 collectives x 1K..4G, text + JSON + SVG); baseline: every "
           "generator's default plan generated and verified once\n");
    printf("%-28s %6s %8s %8s %8s %9s %9s %9s %7s %9s %8s\n", "topology", "ranks", "base_pl",
           "variants", "sims", "base_s", "report_s", "cpu_s", "x_base", "peak_MiB", "target_s");
    fflush(stdout);
    if (argc > 1) {
        for (i = 1; i < argc; i++)
            rc |= bench(argv[i], 0);
    } else {
        for (i = 0; i < (int)(sizeof(defaults) / sizeof(defaults[0])); i++) {
            rc |= bench(defaults[i].src, defaults[i].target_s);
            fflush(stdout);
        }
    }
    return rc;
}
