/*
 * bench_sim: time of simulating one plan at one size with acc's simulator, for the ring and
 * hierarchical allreduce over 128 nodes x 8 GPUs (the scale target: well under a second per
 * simulated plan), beside the time to merely walk every operation of the same plan once,
 * measured in the same run.
 *
 *     bench_sim [TOPOLOGY [ALGO...]]     default "nodes=128 gpus=8 nvlink=18 nic=8x400" ring hier
 *
 * Each figure is the best of three runs (CPU time of this process, so that other programs on a
 * shared machine do not count).  Plans are built without the verifier (bench_plan times that).
 */
#include "bench_util.h"
#include "acc_compiler.h"
#include "acc_cost.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define REPEAT 3

/* The baseline: read every operation once, as any consumer of the plan must. */
static double walk(const acc_plan_t *p, uint64_t *sink)
{
    double best = 1e30;
    int k, rep;
    for (rep = 0; rep < REPEAT; rep++) {
        double t0 = bench_cpu_s();
        uint64_t sum = 0;
        for (k = 0; k < p->nranks * p->nlanes; k++) {
            uint32_t j;
            for (j = 0; j < p->progs[k].nops; j++)
                sum += p->progs[k].ops[j].code + p->progs[k].ops[j].src.cnt +
                       (uint32_t)p->progs[k].ops[j].peer;
        }
        *sink += sum;
        if (bench_cpu_s() - t0 < best)
            best = bench_cpu_s() - t0;
    }
    return best;
}

static int bench(const acc_topo_t *t, acc_sim_t *s, const char *name, const uint64_t *sizes,
                 int nsizes, uint64_t *sink)
{
    const acc_algo_t *a = acc_algo_find(ACC_COLL_ALLREDUCE, name);
    acc_plan_t *p = NULL;
    double w;
    int i, rep;

    if (!a || a->supports(t, NULL) != ACC_OK || a->build(t, NULL, &p) != ACC_OK) {
        fprintf(stderr, "bench_sim: allreduce %s: %s\n", name, acc_error_message());
        return 1;
    }
    w = walk(p, sink);
    for (i = 0; i < nsizes; i++) {
        acc_sim_result_t r;
        double best = 1e30;
        for (rep = 0; rep < REPEAT; rep++) {
            double t0 = bench_cpu_s();
            if (acc_sim_plan(s, p, sizes[i], ACC_DT_F32, &r) != ACC_OK) {
                fprintf(stderr, "bench_sim: simulating %s: %s\n", name, acc_error_message());
                acc_plan_destroy(p);
                return 1;
            }
            if (bench_cpu_s() - t0 < best)
                best = bench_cpu_s() - t0;
        }
        printf("%-6s %6d %10zu %11llu %9.4f %9.3f %8.1f %12.1f %8.1f %10llu\n", name, p->nlanes,
               acc_plan_op_count(p), (unsigned long long)sizes[i], w, best, best / w, r.time_us,
               r.busbw, (unsigned long long)r.transfers);
    }
    acc_plan_destroy(p);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = {"ring", "hier"};
    static const uint64_t sizes[] = {1ull << 20, 256ull << 20};
    const char *src = argc > 1 ? argv[1] : "nodes=128 gpus=8 nvlink=18 nic=8x400";
    const char *const *names = argc > 2 ? (const char *const *)argv + 2 : defaults;
    int count = argc > 2 ? argc - 2 : 2, i, bad = 0;
    acc_topo_t *t = NULL;
    acc_sim_t *s = NULL;
    uint64_t sink = 0;

    if (acc_topo_load(src, &t) != ACC_OK || acc_sim_create(t, &s) != ACC_OK) {
        fprintf(stderr, "bench_sim: %s\n", acc_error_message());
        acc_topo_destroy(t);
        return 1;
    }
    printf("# simulate allreduce on %s: %d ranks (%d nodes x %d GPUs)\n", src, acc_topo_ranks(t),
           acc_topo_nodes(t), acc_topo_gpus_per_node(t));
    printf("# CPU seconds, best of %d; target: well under 1 s per simulated plan; baseline "
           "walk_s: reading every operation once\n",
           REPEAT);
    printf("%-6s %6s %10s %11s %9s %9s %8s %12s %8s %10s\n", "algo", "lanes", "ops", "bytes",
           "walk_s", "sim_s", "x_walk", "predicted_us", "busbw", "transfers");
    for (i = 0; i < count; i++)
        bad |= bench(t, s, names[i], sizes, (int)(sizeof(sizes) / sizeof(sizes[0])), &sink);
    printf("# (checksum %llu)\n", (unsigned long long)(sink & 0xffff));
    acc_sim_destroy(s);
    acc_topo_destroy(t);
    return bad;
}
