/*
 * bench_scale: how synthesis and proof grow with the rank count, in class form (acc_cplan.h)
 * and, as the baseline in the same run, the explicit form (build + acc_plan_verify) at the
 * sizes where it still runs.
 *
 *     bench_scale [MAX_RANKS [EXPLICIT_MAX_RANKS]]     default 131072 and 2048
 *
 * For nodes = 128, 256, ... of 8 GPUs (1,024 ranks up to MAX_RANKS), each generator with a
 * class form - ring allreduce, allgather, reduce_scatter, hier allreduce (inner=ring
 * outer=ring) - is generated and proven in a child process of its own, so that each figure's
 * peak resident memory (wait4's ru_maxrss) is its own.  Prints a markdown table, then the
 * growth exponent of each (the slope of log time and log memory over log ranks, least
 * squares) and the machine's load before and after.
 */
#include "bench_util.h"
#include "acc_compiler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    acc_coll_t coll;
    const char *algo;
    int hier_rings;
} gen_t;

static const gen_t gens[] = {
    {ACC_COLL_ALLREDUCE, "ring", 0},
    {ACC_COLL_ALLGATHER, "ring", 0},
    {ACC_COLL_REDUCE_SCATTER, "ring", 0},
    {ACC_COLL_ALLREDUCE, "hier", 1},
};
#define NGENS (sizeof(gens) / sizeof(gens[0]))

typedef struct {
    double s, mib;
    int ok;
} fig_t;

/* Generate and prove one plan; 0 on success.  *ops receives its operation count. */
static int run_one(const gen_t *g, int nodes, int explicit_form, uint64_t *ops)
{
    char desc[96];
    acc_topo_t *t = NULL;
    acc_algo_args_t args;
    const acc_algo_t *a = acc_algo_find(g->coll, g->algo);
    int rc = 1;

    memset(&args, 0, sizeof(args));
    if (g->hier_rings)
        args.inner = args.outer = "ring";
    snprintf(desc, sizeof(desc), "nodes=%d gpus=8 nvlink=18 nic=8x400", nodes);
    if (!a || acc_topo_load(desc, &t) != ACC_OK)
        return 1;
    if (explicit_form) {
        acc_plan_t *p = NULL;
        if (acc_algo_generate(a, t, &args, &p) == ACC_OK) {
            *ops = acc_plan_op_count(p);
            rc = 0;
        }
        acc_plan_destroy(p);
    } else {
        acc_cplan_t *cp = NULL;
        acc_cplan_proof_t proof;
        if (acc_algo_generate_class(a, t, &args, &cp, &proof) == ACC_OK && proof.by_class) {
            *ops = acc_cplan_op_count(cp);
            rc = 0;
        }
        acc_cplan_destroy(cp);
    }
    if (rc)
        fprintf(stderr, "bench_scale: %s %s on %d nodes (%s): %s\n", acc_coll_name(g->coll),
                g->algo, nodes, explicit_form ? "explicit" : "class", acc_error_message());
    acc_topo_destroy(t);
    return rc;
}

/* Time and peak memory of run_one in a child process. */
static fig_t measure(const gen_t *g, int nodes, int explicit_form, uint64_t *ops)
{
    fig_t f = {0, 0, 0};
    int fd[2], status = 0;
    struct rusage ru;
    pid_t pid;
    struct {
        double s;
        uint64_t ops;
    } msg = {0, 0};

    if (pipe(fd) != 0)
        return f;
    pid = fork();
    if (pid == 0) {
        close(fd[0]);
        msg.s = acc_now_s();
        if (run_one(g, nodes, explicit_form, &msg.ops) != 0)
            _exit(1);
        msg.s = acc_now_s() - msg.s;
        if (write(fd[1], &msg, sizeof(msg)) != (ssize_t)sizeof(msg))
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    if (pid > 0 && read(fd[0], &msg, sizeof(msg)) == (ssize_t)sizeof(msg) &&
        wait4(pid, &status, 0, &ru) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        f.s = msg.s;
        f.mib = (double)ru.ru_maxrss / 1024.0;
        f.ok = 1;
        *ops = msg.ops;
    } else if (pid > 0) {
        waitpid(pid, &status, 0);
    }
    close(fd[0]);
    return f;
}

static double slope(const double *x, const double *y, int n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int i;
    for (i = 0; i < n; i++) {
        sx += x[i];
        sy += y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
    }
    return n > 1 ? (n * sxy - sx * sy) / (n * sxx - sx * sx) : 0;
}

static void load(char *out, size_t cap)
{
    FILE *f = fopen("/proc/loadavg", "r");
    out[0] = '\0';
    if (f) {
        if (!fgets(out, (int)cap, f))
            out[0] = '\0';
        fclose(f);
    }
    out[strcspn(out, "\n")] = '\0';
}

int main(int argc, char **argv)
{
    int max_ranks = argc > 1 ? atoi(argv[1]) : 131072;
    int explicit_max = argc > 2 ? atoi(argv[2]) : 2048;
    double lx[NGENS][16], lt[NGENS][16], lm[NGENS][16];
    int nfit[NGENS], nodes;
    char before[128], after[128];
    size_t g;

    memset(nfit, 0, sizeof(nfit));
    load(before, sizeof(before));
    printf("| generator | ranks | operations | class: s | class: MiB | explicit: s | "
           "explicit: MiB | explicit / class (s) |\n|---|---|---|---|---|---|---|---|\n");
    fflush(stdout);
    for (nodes = 128; nodes * 8 <= max_ranks; nodes *= 2) {
        for (g = 0; g < NGENS; g++) {
            uint64_t ops = 0, eops = 0;
            fig_t c = measure(&gens[g], nodes, 0, &ops), e = {0, 0, 0};
            if (nodes * 8 <= explicit_max)
                e = measure(&gens[g], nodes, 1, &eops);
            printf("| %s %s | %d | %.4g | ", acc_coll_name(gens[g].coll), gens[g].algo, nodes * 8,
                   (double)ops);
            if (c.ok)
                printf("%.3f | %.1f | ", c.s, c.mib);
            else
                printf("failed | | ");
            if (e.ok && c.ok)
                printf("%.3f | %.1f | %.1fx |\n", e.s, e.mib, e.s / (c.s > 0 ? c.s : 1e-9));
            else
                printf("%s | | |\n", nodes * 8 <= explicit_max ? "failed" : "-");
            fflush(stdout);
            if (c.ok && nfit[g] < 16) {
                lx[g][nfit[g]] = log((double)nodes * 8);
                lt[g][nfit[g]] = log(c.s > 1e-4 ? c.s : 1e-4);
                lm[g][nfit[g]] = log(c.mib);
                nfit[g]++;
            }
        }
    }
    load(after, sizeof(after));
    printf("\nGrowth exponents of the class form (time and peak memory ~ ranks^k, least squares "
           "over the sizes above):\n\n");
    for (g = 0; g < NGENS; g++)
        printf("- %s %s: time k = %.2f, memory k = %.2f\n", acc_coll_name(gens[g].coll),
               gens[g].algo, slope(lx[g], lt[g], nfit[g]), slope(lx[g], lm[g], nfit[g]));
    printf("\nLoad average before: %s; after: %s\n", before, after);
    return 0;
}
