/*
 * bench_tune: what acc-tune's simulator and search cost.
 *   - One simulated GPT-2 XL iteration (580 tensors, 6.2 GB of gradients) on 128 ranks (16
 *     DGX H100, "nodes=16 gpus=8 nvlink=18 nic=8x400"), for DDP's and Horovod's defaults, no
 *     fusion and acc's fusion on 8 streams, beside a walk of the tensor list (bytes and ready
 *     times summed: the least any simulator of the profile must do).
 *   - A full grid (13 fusion sizes x 8 stream counts x 3 collective choices = 312 iterations)
 *     for ResNet-50 on one DGX H100, beside the same walk times 312, and the sweep of the
 *     collective times the grid prices with (acc's plans simulated at 23 sizes, NCCL's model).
 * Targets (issue 6): one iteration < 50 ms, the grid < 10 s.
 *
 * usage: bench_tune [REPS]   (default 50 repetitions of each timed iteration)
 */
#include "acc_topo.h"
#include "acc_tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(const char *what)
{
    fprintf(stderr, "bench_tune: %s: %s\n", what, acc_error_message());
    return 1;
}

/* The baseline: every tensor's bytes and ready time read once.  The result is printed so that
 * the compiler cannot drop the loop. */
static volatile double sink;

static double walk_us(const acc_profile_t *p, int reps)
{
    double t[64], s = 0;
    int r;
    size_t i;
    if (reps > 64)
        reps = 64;
    for (r = 0; r < reps; r++) {
        double t0 = (acc_now_s() * 1e6);
        for (i = 0; i < p->ntensors; i++)
            s += (double)(p->tensors[i].elems * acc_dtype_size(p->tensors[i].dtype)) +
                 p->tensors[i].ready;
        t[r] = (acc_now_s() * 1e6) - t0;
    }
    sink = s;
    return acc_median(t, reps);
}

static int load(const char *model, const char *topo_src, acc_profile_t **p, acc_tune_comm_t **c,
                acc_itersim_t **sim, double *sweep_us)
{
    acc_topo_t *t = NULL;
    double t0;
    int v;

    if (acc_profile_load_builtin(model, p) != ACC_OK)
        return fail(model);
    if (acc_topo_load(topo_src, &t) != ACC_OK)
        return fail(topo_src);
    v = acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_GPU, 0))->sm;
    t0 = (acc_now_s() * 1e6);
    if (acc_tune_comm_create(t, NULL, c) != ACC_OK)
        return fail("collective times");
    *sweep_us = (acc_now_s() * 1e6) - t0;
    acc_topo_destroy(t);
    if (acc_itersim_create(*p, acc_profile_find_compute(*p, v, NULL), *c, NULL, sim) != ACC_OK)
        return fail("iteration simulator");
    return 0;
}

static int one_iteration(int reps)
{
    acc_profile_t *p = NULL;
    acc_tune_comm_t *c = NULL;
    acc_itersim_t *sim = NULL;
    acc_tune_config_t cfg[4];
    static const char *const names[4] = {"DDP defaults", "Horovod defaults", "no fusion",
                                         "acc 32M x 8 streams"};
    double *t = calloc((size_t)reps, sizeof(double)), sweep, walk;
    int k, r, rc = 1;

    if (!t || load("gpt2-xl", "nodes=16 gpus=8 nvlink=18 nic=8x400", &p, &c, &sim, &sweep))
        goto out;
    acc_tune_config_ddp(&cfg[0]);
    acc_tune_config_horovod(&cfg[1]);
    acc_tune_config_nofusion(&cfg[2]);
    acc_tune_config_acc(&cfg[3], 32ull << 20, 8, ACC_TUNE_ALGO_AUTO);
    walk = walk_us(p, reps);
    printf("GPT-2 XL, %zu tensors, on %d ranks (collective times: %.2f s to sweep, once)\n",
           p->ntensors, acc_tune_comm_ranks(c), sweep / 1e6);
    printf("  %-22s %12s %10s %9s %8s %12s\n", "configuration", "median us", "x walk", "buffers",
           "events", "iteration ms");
    printf("  %-22s %12.2f %10s\n", "walk of the tensors", walk, "1");
    for (k = 0; k < 4; k++) {
        acc_itersim_result_t res;
        for (r = 0; r < reps; r++) {
            double t0 = (acc_now_s() * 1e6);
            if (acc_itersim_run(sim, &cfg[k], &res) != ACC_OK) {
                fail(names[k]);
                goto out;
            }
            t[r] = (acc_now_s() * 1e6) - t0;
        }
        printf("  %-22s %12.2f %10.1f %9zu %8llu %12.3f\n", names[k], acc_median(t, reps),
               acc_median(t, reps) / walk, res.buffers, (unsigned long long)res.events,
               res.iteration_ms);
        if (acc_median(t, reps) > 50e3)
            printf("  ^ above the 50 ms target\n");
    }
    rc = 0;
out:
    free(t);
    acc_itersim_destroy(sim);
    acc_tune_comm_destroy(c);
    acc_profile_destroy(p);
    return rc;
}

static int full_grid(void)
{
    acc_profile_t *p = NULL;
    acc_tune_comm_t *c = NULL;
    acc_itersim_t *sim = NULL;
    acc_tune_space_t sp;
    acc_tune_search_result_t *r = NULL;
    char cfg[ACC_TUNE_CONFIG_TEXT_MAX];
    double sweep, walk, t0, grid;
    int rc = 1;

    if (load("resnet50", "dgx-h100", &p, &c, &sim, &sweep))
        goto out;
    acc_tune_space_init(&sp);
    walk = walk_us(p, 64);
    t0 = (acc_now_s() * 1e6);
    if (acc_tune_search(sim, &sp, NULL, &r) != ACC_OK) {
        fail("grid");
        goto out;
    }
    grid = (acc_now_s() * 1e6) - t0;
    acc_tune_config_format(&r->evals[r->best].config, cfg, sizeof(cfg));
    printf("\nResNet-50 on DGX H100, full grid of %zu configurations\n", r->nevals);
    printf("  walk of the tensors x %zu     %12.3f ms\n", r->nevals, walk * r->nevals / 1e3);
    printf("  grid search                 %12.3f ms  (%.1f x the walks; %.1f us per iteration)\n",
           grid / 1e3, grid / (walk * r->nevals), grid / r->nevals);
    printf("  collective times (sweep)    %12.3f ms  (once per topology)\n", sweep / 1e3);
    printf("  sweep + grid                %12.3f ms  (target < 10 s)\n", (sweep + grid) / 1e3);
    printf("  optimum: %s, %.3f ms per iteration\n", cfg, r->evals[r->best].result.iteration_ms);
    rc = 0;
out:
    acc_tune_search_result_destroy(r);
    acc_itersim_destroy(sim);
    acc_tune_comm_destroy(c);
    acc_profile_destroy(p);
    return rc;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 50;
    if (reps < 1 || reps > 100000) {
        fprintf(stderr, "usage: bench_tune [REPS]   (1 to 100000)\n");
        return 2;
    }
    if (one_iteration(reps) || full_grid())
        return 1;
    return 0;
}
