/*
 * bench_plan: time and memory of generating and verifying a hierarchical allreduce for 128 nodes
 * x 8 GPUs (the scale target: under 10 s and 2 GiB), with the ring allreduce beside it
 * as the baseline measured in the same run.
 *
 *     bench_plan [TOPOLOGY] [ALGO...]     default "nodes=128 gpus=8 nvlink=18 nic=8x400" hier ring
 *
 * Peak memory is the process's maximum resident set (getrusage), which only grows: each row
 * shows the peak reached so far, so the first row is the first algorithm's own peak.
 */
#include "bench_util.h"
#include "acc_compiler.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef struct {
    double build_s, verify_s, peak_mib;
    size_t ops;
} result_t;

static int measure(const acc_topo_t *t, const char *name, result_t *r)
{
    const acc_algo_t *a = acc_algo_find(ACC_COLL_ALLREDUCE, name);
    acc_algo_args_t args;
    acc_plan_t *p = NULL;
    double t0, t1, t2;

    memset(&args, 0, sizeof(args));
    if (!a || a->supports(t, &args) != ACC_OK) {
        fprintf(stderr, "bench_plan: allreduce %s: %s\n", name, acc_error_message());
        return 1;
    }
    t0 = acc_now_s();
    if (a->build(t, &args, &p) != ACC_OK) {
        fprintf(stderr, "bench_plan: building %s: %s\n", name, acc_error_message());
        return 1;
    }
    t1 = acc_now_s();
    if (acc_plan_verify(p) != ACC_OK) {
        fprintf(stderr, "bench_plan: verifying %s: %s\n", name, acc_error_message());
        acc_plan_destroy(p);
        return 1;
    }
    t2 = acc_now_s();
    r->build_s = t1 - t0;
    r->verify_s = t2 - t1;
    r->peak_mib = bench_peak_mib();
    r->ops = acc_plan_op_count(p);
    acc_plan_destroy(p);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = {"hier", "ring"};
    const char *src = argc > 1 ? argv[1] : "nodes=128 gpus=8 nvlink=18 nic=8x400";
    const char *const *names = argc > 2 ? (const char *const *)argv + 2 : defaults;
    int count = argc > 2 ? argc - 2 : 2, i, bad = 0;
    result_t res[16];
    acc_topo_t *t = NULL;

    if (count > 16)
        count = 16;
    if (acc_topo_load(src, &t) != ACC_OK) {
        fprintf(stderr, "bench_plan: %s\n", acc_error_message());
        return 1;
    }
    printf("# generate + verify allreduce on %s: %d ranks (%d nodes x %d GPUs)\n", src,
           acc_topo_ranks(t), acc_topo_nodes(t), acc_topo_gpus_per_node(t));
    printf("# target for %s: < 10 s and < 2048 MiB; ratios against %s\n", names[0],
           count > 1 ? names[count - 1] : names[0]);
    printf("%-8s %10s %9s %9s %9s %10s %8s %8s\n", "algo", "ops", "build_s", "verify_s", "total_s",
           "peak_MiB", "x_time", "x_ops");
    for (i = 0; i < count; i++)
        bad |= measure(t, names[i], &res[i]);
    if (!bad) {
        const result_t *base = &res[count - 1];
        double base_total = base->build_s + base->verify_s;
        for (i = 0; i < count; i++) {
            double total = res[i].build_s + res[i].verify_s;
            printf("%-8s %10zu %9.3f %9.3f %9.3f %10.1f %8.3f %8.3f\n", names[i], res[i].ops,
                   res[i].build_s, res[i].verify_s, total, res[i].peak_mib,
                   base_total > 0 ? total / base_total : 0.0,
                   base->ops ? (double)res[i].ops / (double)base->ops : 0.0);
        }
        printf("# %s: %s the target\n", names[0],
               res[0].build_s + res[0].verify_s < 10.0 && res[0].peak_mib < 2048.0 ? "meets"
                                                                                   : "misses");
    }
    acc_topo_destroy(t);
    return bad;
}
