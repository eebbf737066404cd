/*
 * bench_scale: how each step of a plan grows with the rank count in class form (acc_cplan.h) -
 * generate, prove, cost, store - and, as the baseline in the same run, generate + prove in the
 * explicit form (build + acc_plan_verify) at the sizes where it still runs.
 *
 *     bench_scale [MAX_RANKS [EXPLICIT_MAX_RANKS]]     default 131072 and 2048
 *
 * For nodes = 128, 256, ... of 8 GPUs (1,024 ranks up to MAX_RANKS), each generator with a
 * class form - ring allreduce, allgather, reduce_scatter, hier allreduce with rings inside and
 * between nodes, and the default hier allreduce, allgather and reduce_scatter and hier_pipe
 * allreduce (peer memory inside nodes, proven on one node), and halving and doubling (rhd and
 * rd allreduce, rh reduce_scatter, rd allgather: peers by XOR, proven on one rank), and the
 * double binary tree allreduce and tree broadcast (a class per head between nodes, proven by
 * expansion and priced on the whole plan: a root breaks the symmetry) - runs in a child
 * process of its own:
 *   generate  acc_algo_build_class
 *   prove     acc_cplan_verify against the topology (on the quotient, on one node or one rank;
 *             trees by expansion)
 *   cost      acc_cplan_quotient by one node (moved by XOR for halving and doubling; trees
 *             the whole expansion), then
 *             acc_sim_plan at 1 MiB, 64 MiB and 1 GiB
 *             (Simple): the prices a selection sweep takes
 *   store     acc_db_put_cplan into a fresh database; its bytes are the head and programs
 * Each step's wall time, and the process's peak resident memory after it (VmHWM, so each
 * figure includes the steps before).  Prints a markdown table, then the growth exponent of
 * the four steps together (the slope of log time and log memory over log ranks, least
 * squares) and the machine's load before and after.
 */
#include "bench_util.h"
#include "acc_compiler.h"
#include "acc_cost.h"
#include "acc_db.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    acc_coll_t coll;
    const char *algo;
    const char *name; /* as the table says it */
    int hier_rings;
    int whole; /* a tree: proven by expansion and priced on the whole plan (a root and heads
                  break the symmetry) */
} gen_t;

static const gen_t gens[] = {
    {ACC_COLL_ALLREDUCE, "ring", "ring", 0, 0},
    {ACC_COLL_ALLGATHER, "ring", "ring", 0, 0},
    {ACC_COLL_REDUCE_SCATTER, "ring", "ring", 0, 0},
    {ACC_COLL_ALLREDUCE, "hier", "hier (rings)", 1, 0},
    {ACC_COLL_ALLREDUCE, "hier", "hier (direct)", 0, 0},
    {ACC_COLL_ALLGATHER, "hier", "hier (direct)", 0, 0},
    {ACC_COLL_REDUCE_SCATTER, "hier", "hier (direct)", 0, 0},
    {ACC_COLL_ALLREDUCE, "hier_pipe", "hier_pipe (direct)", 0, 0},
    {ACC_COLL_ALLREDUCE, "rhd", "rhd", 0, 0},
    {ACC_COLL_ALLREDUCE, "rd", "rd", 0, 0},
    {ACC_COLL_REDUCE_SCATTER, "rh", "rh", 0, 0},
    {ACC_COLL_ALLGATHER, "rd", "rd", 0, 0},
    {ACC_COLL_ALLREDUCE, "tree", "tree", 0, 1},
    {ACC_COLL_BROADCAST, "tree", "tree", 0, 1},
};
#define NGENS (sizeof(gens) / sizeof(gens[0]))

enum { STEP_GEN, STEP_PROVE, STEP_COST, STEP_STORE, NSTEPS };
static const char *const step_names[NSTEPS] = {"generate", "prove", "cost", "store"};

/* What a child reports: per step its time and the peak memory after it. */
typedef struct {
    double s[NSTEPS], mib[NSTEPS];
    double cost_us[3]; /* the predicted times at 1 MiB, 64 MiB, 1 GiB */
    uint64_t ops, bytes;
    int ok;
} fig_t;

static const uint64_t cost_sizes[3] = {1ull << 20, 64ull << 20, 1ull << 30};

/* The class form's steps, timed, in this process. */
static int run_class(const acc_algo_t *a, const acc_topo_t *t, const acc_algo_args_t *args,
                     int whole, fig_t *f)
{
    acc_cplan_t *cp = NULL;
    acc_cplan_proof_t proof;
    acc_plan_t *quot = NULL;
    acc_sim_t *sim = NULL;
    acc_db_t *db = NULL;
    acc_cplan_bin_t bin;
    char path[64];
    double t0 = acc_now_s();
    int rc = 1, i;

    snprintf(path, sizeof(path), "/tmp/bench_scale.%d.db", (int)getpid());
    unlink(path);
    if (acc_algo_build_class(a, t, args, &cp) != ACC_OK)
        goto out;
    f->s[STEP_GEN] = acc_now_s() - t0;
    f->mib[STEP_GEN] = bench_peak_mib();
    t0 = acc_now_s();
    if (acc_cplan_verify(cp, t, &proof) != ACC_OK || proof.by_class == whole)
        goto out;
    f->s[STEP_PROVE] = acc_now_s() - t0;
    f->mib[STEP_PROVE] = bench_peak_mib();
    t0 = acc_now_s();
    if ((whole ? acc_cplan_expand(cp, &quot)
               : acc_cplan_quotient(cp, acc_topo_gpus_per_node(t), &quot)) != ACC_OK ||
        acc_sim_create(t, &sim) != ACC_OK)
        goto out;
    quot->proto = ACC_PROTO_SIMPLE;
    for (i = 0; i < 3; i++) {
        acc_sim_result_t r;
        if (acc_sim_plan(sim, quot, cost_sizes[i], ACC_DT_F32, &r) != ACC_OK)
            goto out;
        f->cost_us[i] = r.time_us;
    }
    f->s[STEP_COST] = acc_now_s() - t0;
    f->mib[STEP_COST] = bench_peak_mib();
    t0 = acc_now_s();
    if (acc_db_open(path, 0, &db) != ACC_OK || acc_db_put_cplan(db, cp, NULL, NULL) != ACC_OK)
        goto out;
    f->s[STEP_STORE] = acc_now_s() - t0;
    f->mib[STEP_STORE] = bench_peak_mib();
    if (acc_cplan_encode(cp, NULL, &bin) == ACC_OK) {
        f->bytes = bin.head.len;
        for (uint32_t k = 0; k < bin.nprogs; k++)
            f->bytes += bin.progs[k].len;
        acc_cplan_bin_free(&bin);
    }
    f->ops = acc_cplan_op_count(cp);
    rc = 0;
out:
    acc_db_close(db);
    unlink(path);
    acc_sim_destroy(sim);
    acc_plan_destroy(quot);
    acc_cplan_destroy(cp);
    return rc;
}

/* One generator on `nodes` nodes, in this process; 0 on success. */
static int run_one(const gen_t *g, int nodes, int explicit_form, fig_t *f)
{
    char desc[96];
    acc_topo_t *t = NULL;
    acc_algo_args_t args;
    const acc_algo_t *a = acc_algo_find(g->coll, g->algo);
    double t0 = acc_now_s();
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
            f->ops = acc_plan_op_count(p);
            f->s[STEP_GEN] = acc_now_s() - t0;
            f->mib[STEP_GEN] = bench_peak_mib();
            rc = 0;
        }
        acc_plan_destroy(p);
    } else {
        rc = run_class(a, t, &args, g->whole, f);
    }
    if (rc)
        fprintf(stderr, "bench_scale: %s %s on %d nodes (%s): %s\n", acc_coll_name(g->coll),
                g->algo, nodes, explicit_form ? "explicit" : "class", acc_error_message());
    acc_topo_destroy(t);
    return rc;
}

/* run_one in a child process, so that each figure's peak memory is its own. */
static fig_t measure(const gen_t *g, int nodes, int explicit_form)
{
    fig_t f;
    int fd[2], status = 0;
    pid_t pid;

    memset(&f, 0, sizeof(f));
    if (pipe(fd) != 0)
        return f;
    pid = fork();
    if (pid == 0) {
        close(fd[0]);
        if (run_one(g, nodes, explicit_form, &f) != 0)
            _exit(1);
        f.ok = 1;
        if (write(fd[1], &f, sizeof(f)) != (ssize_t)sizeof(f))
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    if (pid > 0 && read(fd[0], &f, sizeof(f)) == (ssize_t)sizeof(f) &&
        waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        f.ok = 1;
    else {
        f.ok = 0;
        if (pid > 0)
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
    int nfit[NGENS], nodes, k;
    char before[128], after[128];
    size_t g;

    memset(nfit, 0, sizeof(nfit));
    load(before, sizeof(before));
    printf("Class form, per step: seconds, and the peak MiB after it; cost is three "
           "simulations of the quotient (1 MiB, 64 MiB, 1 GiB).  Explicit form: generate + "
           "prove.\n\n");
    printf("| generator | ranks | operations |");
    for (k = 0; k < NSTEPS; k++)
        printf(" %s: s | %s: MiB |", step_names[k], step_names[k]);
    printf(" stored bytes | 1 MiB / 1 GiB predicted, us | explicit: s | explicit: MiB "
           "|\n|---|---|---|");
    for (k = 0; k < NSTEPS; k++)
        printf("---|---|");
    printf("---|---|---|---|\n");
    fflush(stdout);
    for (nodes = 128; nodes * 8 <= max_ranks; nodes *= 2) {
        for (g = 0; g < NGENS; g++) {
            fig_t c = measure(&gens[g], nodes, 0), e;
            double total = 0;
            memset(&e, 0, sizeof(e));
            if (nodes * 8 <= explicit_max)
                e = measure(&gens[g], nodes, 1);
            printf("| %s %s | %d | %.4g |", acc_coll_name(gens[g].coll), gens[g].name, nodes * 8,
                   (double)(c.ok ? c.ops : e.ops));
            for (k = 0; k < NSTEPS; k++) {
                if (c.ok)
                    printf(" %.3f | %.1f |", c.s[k], c.mib[k]);
                else
                    printf(" failed | |");
                total += c.s[k];
            }
            if (c.ok)
                printf(" %llu | %.0f / %.0f |", (unsigned long long)c.bytes, c.cost_us[0],
                       c.cost_us[2]);
            else
                printf(" | |");
            if (e.ok)
                printf(" %.3f | %.1f |\n", e.s[STEP_GEN], e.mib[STEP_GEN]);
            else
                printf(" %s | |\n", nodes * 8 <= explicit_max ? "failed" : "-");
            fflush(stdout);
            if (c.ok && nfit[g] < 16) {
                lx[g][nfit[g]] = log((double)nodes * 8);
                lt[g][nfit[g]] = log(total > 1e-4 ? total : 1e-4);
                lm[g][nfit[g]] = log(c.mib[STEP_STORE]);
                nfit[g]++;
            }
        }
    }
    load(after, sizeof(after));
    printf("\nGrowth exponents of the class form, all four steps (time and peak memory ~ "
           "ranks^k, least squares over the sizes above):\n\n");
    for (g = 0; g < NGENS; g++)
        printf("- %s %s: time k = %.2f, memory k = %.2f\n", acc_coll_name(gens[g].coll),
               gens[g].name, slope(lx[g], lt[g], nfit[g]), slope(lx[g], lm[g], nfit[g]));
    printf("\nLoad average before: %s; after: %s\n", before, after);
    return 0;
}
