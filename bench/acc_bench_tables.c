/*
 * acc-bench --runtime host --tables FILE: the host backend's own selection table, from its own
 * measured costs.  The tables an image build makes are predictions for GPUs (NVLink peer memory,
 * NCCL beside it); on the host backend peer-memory plans stage every byte through shared memory
 * and NCCL does not exist, so their choices are often the slowest there.  This measures instead:
 * every rank generates the same candidates from the topology (each allreduce generator that
 * applies, at 1, 2 and 4 lanes and 1, 2 and 4 chunks where it takes them), runs each through
 * the runtime (acc_comm_run_plan, on a duplicate communicator of its own that takes its
 * buffers with it when destroyed) at every size of the sweep, checked once against the
 * reference and timed out of place and in place (the fusion engine's way), and keeps the
 * slowest rank's mean (small sizes take more calls, calls_at).  Rank 0 prints the two best per size
 * and writes FILE: the topology, every measured plan with its times (acc_db_put_measurement) and
 * the table of the fastest per size, sizes between two of the sweep going to the smaller one's
 * choice, the first range starting at 0 and the last reaching every larger size.
 *
 * A candidate is no longer run at a size once its time at a smaller size exceeds the best time
 * found at this one: times do not fall as sizes grow.  Since the ranks agree on every time,
 * they agree on what to skip.  FILE must not hold predicted tables of the same topology: the
 * host backend's tables live in a database of their own.
 */
#include "acc_bench.h"
#include "acc_compiler.h"
#include "acc_db.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 48

typedef struct {
    acc_plan_t *plan;
    char hash[ACC_SHA256_HEX_LEN + 1];
    char params[ACC_PLAN_PARAMS_MAX];
    double us[MAX_SIZES]; /* < 0: not measured (pruned, or it cannot run here) */
} cand_t;

typedef struct {
    const bench_comm_t *b;
    const bench_sweep_t *s;
    const char *path;
    acc_comm_t *comm;
    acc_topo_t *topo;
    FILE *out; /* rank 0's */
    cand_t *c;
    size_t nc;
    uint64_t sizes[MAX_SIZES];
    int nsizes;
    float *in, *res;
} tab_t;

/* The candidates, in the same order on every rank: each generator of the collective that
 * applies, at lanes x chunks, duplicates (the same plan text) dropped. */
static acc_status_t candidates(tab_t *t)
{
    static const int lanes[] = {1, 2, 4}, chunks[] = {0, 2, 4};
    static const char *const inner[] = {NULL, "ring", "direct"};
    static const char *const outer[] = {NULL, "ring", "rhd", "tree"};
    size_t nalgo, cap = 0;
    const acc_algo_t *const *algos = acc_algo_list(&nalgo);

    for (size_t a = 0; a < nalgo; a++) {
        if (algos[a]->coll != t->b->coll)
            continue;
        for (size_t li = 0; li < 3; li++)
            for (size_t ci = 0; ci < 3; ci++)
                for (size_t ii = 0; ii < 3; ii++)
                    for (size_t oi = 0; oi < 4; oi++) {
                        acc_algo_args_t args = {.lanes = lanes[li],
                                                .chunks = chunks[ci],
                                                .root = t->b->root,
                                                .inner = inner[ii],
                                                .outer = outer[oi],
                                                .proto = ACC_PROTO_SIMPLE};
                        acc_plan_t *p = NULL;
                        char hash[ACC_SHA256_HEX_LEN + 1];
                        size_t k;
                        if (algos[a]->supports(t->topo, &args) != ACC_OK ||
                            acc_algo_generate(algos[a], t->topo, &args, &p) != ACC_OK)
                            continue;
                        if (acc_plan_hash(p, hash) != ACC_OK)
                            return acc_plan_destroy(p), ACC_ERR_INTERNAL;
                        for (k = 0; k < t->nc && strcmp(t->c[k].hash, hash); k++)
                            ;
                        if (k < t->nc) {
                            acc_plan_destroy(p);
                            continue;
                        }
                        if (acc_array_reserve((void **)&t->c, &cap, t->nc + 1, sizeof(cand_t)) !=
                            ACC_OK)
                            return acc_plan_destroy(p),
                                   acc_error_set(ACC_ERR_NOMEM, "out of memory");
                        memset(&t->c[t->nc], 0, sizeof(cand_t));
                        t->c[t->nc].plan = p;
                        memcpy(t->c[t->nc].hash, hash, sizeof(hash));
                        snprintf(t->c[t->nc].params, sizeof(t->c[t->nc].params), "%.200s%sproto=%s",
                                 p->params, p->params[0] ? " " : "", acc_proto_name(p->proto));
                        for (int z = 0; z < MAX_SIZES; z++)
                            t->c[t->nc].us[z] = -1;
                        t->nc++;
                    }
    }
    if (!t->nc)
        return acc_error_set(ACC_ERR_NOT_FOUND, "no %s generator applies to this topology",
                             acc_coll_name(t->b->coll));
    return ACC_OK;
}

/* Calls timed (or warming up) at a size: below 64 KiB, where a call costs little and a few of
 * them are mostly noise, `calls` times 64 KiB / size, at most 16 times; the same on every rank. */
static int calls_at(int calls, uint64_t bytes)
{
    uint64_t f = bytes ? (64u << 10) / bytes : 16;
    return calls * (int)(f < 1 ? 1 : f > 16 ? 16 : f);
}

/* One size of one candidate on dup: checked once, then timed out of place and in place; the
 * slowest rank's mean, or -1 when the backend cannot run it here.  ACC_OK or the failure. */
static acc_status_t measure(tab_t *t, acc_comm_t *dup, cand_t *c, uint64_t bytes, double *us)
{
    const bench_sweep_t *s = t->s;
    const acc_plan_t *p = c->plan;
    int me = acc_comm_rank(dup), n = acc_comm_size(dup);
    uint64_t count = bytes / sizeof(float), wrong = 0, all = 0;
    double mine = 0, slowest = 0;
    acc_status_t st;

    acc_host_fill_rank(p->coll, n, me, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_RANDOM, 1, count, t->in);
    st = acc_comm_run_plan(dup, p, t->in, t->res, count, ACC_DT_F32, ACC_RED_SUM, NULL);
    if (st == ACC_ERR_UNSUPPORTED) {
        *us = -1;
        return ACC_OK;
    }
    if (st != ACC_OK)
        return st;
    wrong = acc_host_check_rank(p->coll, n, p->root, me, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_RANDOM,
                                1, count, t->res, NULL);
    for (int inplace = 0; inplace < 2 && st == ACC_OK; inplace++) {
        int warmup = calls_at(s->warmup, bytes), iters = calls_at(s->iters, bytes);
        double t0 = 0;
        for (int i = 0; i < warmup + iters && st == ACC_OK; i++) {
            if (i == warmup)
                t0 = acc_now_s();
            st = acc_comm_run_plan(dup, p, t->in, inplace ? t->in : t->res, count, ACC_DT_F32,
                                   ACC_RED_SUM, NULL);
        }
        mine += (acc_now_s() - t0) * 1e6 / iters / 2;
    }
    if (st != ACC_OK ||
        (st = acc_allreduce(&mine, &slowest, 1, ACC_DT_F64, ACC_RED_MAX, t->comm, NULL)) !=
            ACC_OK ||
        (st = acc_allreduce(&wrong, &all, 1, ACC_DT_I32, ACC_RED_SUM, t->comm, NULL)) != ACC_OK)
        return st;
    if (all)
        return acc_error_set(ACC_ERR_INTERNAL, "%s %s gave %llu wrong elements at %llu bytes",
                             p->algo, c->params, (unsigned long long)all,
                             (unsigned long long)bytes);
    *us = slowest;
    return ACC_OK;
}

/* The best time measured so far at size z, or INFINITY. */
static double best_at(const tab_t *t, int z)
{
    double b = INFINITY;
    for (size_t k = 0; k < t->nc; k++)
        if (t->c[k].us[z] > 0 && t->c[k].us[z] < b)
            b = t->c[k].us[z];
    return b;
}

/* Every candidate at every size it may win, on a duplicate communicator of its own. */
static acc_status_t sweep(tab_t *t)
{
    acc_status_t st = ACC_OK;
    for (size_t k = 0; k < t->nc && st == ACC_OK; k++) {
        cand_t *c = &t->c[k];
        acc_comm_t *dup = NULL;
        double prev = 0;
        if ((st = acc_comm_dup(t->comm, &dup)) != ACC_OK)
            break;
        for (int z = 0; z < t->nsizes && st == ACC_OK; z++) {
            if (prev > best_at(t, z))
                break; /* it cannot win here, nor at any larger size */
            st = measure(t, dup, c, t->sizes[z], &c->us[z]);
            if (c->us[z] < 0)
                break; /* the backend cannot run it here */
            prev = c->us[z];
        }
        if (st != ACC_OK) {
            acc_error_prefix(st, "%s %s: ", c->plan->algo, c->params);
            acc_comm_abort(dup);
        } else {
            st = acc_comm_destroy(dup);
        }
    }
    return st;
}

/* The fastest candidate at size z (SIZE_MAX: none), and the runner-up. */
static size_t fastest(const tab_t *t, int z, size_t *second)
{
    size_t best = SIZE_MAX;
    *second = SIZE_MAX;
    for (size_t k = 0; k < t->nc; k++) {
        if (t->c[k].us[z] <= 0)
            continue;
        if (best == SIZE_MAX || t->c[k].us[z] < t->c[best].us[z]) {
            *second = best;
            best = k;
        } else if (*second == SIZE_MAX || t->c[k].us[z] < t->c[*second].us[z]) {
            *second = k;
        }
    }
    return best;
}

static void print(const tab_t *t)
{
    double factor = bench_bus_factor(t->b->coll, t->b->nranks);
    fprintf(t->out, "#\n# %10s  %9s  %6s  %-44s  %9s  %s\n", "size (B)", "time (us)", "busbw",
            "fastest", "next (us)", "next");
    for (int z = 0; z < t->nsizes; z++) {
        size_t second, best = fastest(t, z, &second);
        char name[ACC_PLAN_NAME_MAX + ACC_PLAN_PARAMS_MAX + 2];
        if (best == SIZE_MAX)
            continue;
        snprintf(name, sizeof(name), "%s %s", t->c[best].plan->algo, t->c[best].params);
        fprintf(t->out, "  %10llu  %9.1f  %6.2f  %-44s", (unsigned long long)t->sizes[z],
                t->c[best].us[z], (double)t->sizes[z] / t->c[best].us[z] / 1e3 * factor, name);
        if (second != SIZE_MAX)
            fprintf(t->out, "  %9.1f  %s %s", t->c[second].us[z], t->c[second].plan->algo,
                    t->c[second].params);
        fprintf(t->out, "\n");
    }
}

/* The predicted tables of an image build, if the file holds one for this topology. */
static int predicted_table(acc_db_t *db, const char *fp, acc_coll_t coll)
{
    acc_select_table_t *old = NULL;
    int predicted = 0;
    if (acc_db_get_selection(db, fp, coll, &old) != ACC_OK)
        return 0;
    for (size_t i = 0; i < old->n; i++)
        predicted |= old->entries[i].source != ACC_SELECT_MEASURED;
    acc_select_destroy(old);
    return predicted;
}

static acc_status_t store(const tab_t *t)
{
    acc_db_t *db = NULL;
    acc_select_table_t *tab = NULL;
    char fp[ACC_SHA256_HEX_LEN + 1], source[ACC_DB_TEXT_MAX];
    acc_status_t st;

    snprintf(source, sizeof(source),
             "acc-bench --runtime host --tables: %d ranks on %d nodes, float sum, mean of out "
             "of place and in place, slowest rank",
             t->b->nranks, acc_topo_nodes(t->topo));
    if ((st = acc_db_open(t->path, 0, &db)) != ACC_OK ||
        (st = acc_db_put_topology(db, t->topo, fp)) != ACC_OK)
        goto out;
    if (predicted_table(db, fp, t->b->coll)) {
        st = acc_error_set(ACC_ERR_INVALID,
                           "%s holds tables predicted for this topology (an image build's); "
                           "the host backend's measured tables go into a database of their own",
                           t->path);
        goto out;
    }
    for (size_t k = 0; k < t->nc && st == ACC_OK; k++) {
        int stored = 0;
        for (int z = 0; z < t->nsizes && st == ACC_OK; z++) {
            acc_db_measurement_t m = {.coll = t->b->coll,
                                      .dtype = ACC_DT_F32,
                                      .nbytes = t->sizes[z],
                                      .us = t->c[k].us[z]};
            if (m.us <= 0)
                continue;
            if (!stored++ && (st = acc_db_put_plan(db, t->c[k].plan, NULL)) != ACC_OK)
                break;
            memcpy(m.topo_fingerprint, fp, sizeof(fp));
            memcpy(m.plan_hash, t->c[k].hash, sizeof(m.plan_hash));
            snprintf(m.source, sizeof(m.source), "%s", source);
            st = acc_db_put_measurement(db, &m);
        }
    }
    if (st != ACC_OK || (st = acc_select_create(t->b->coll, fp, &tab)) != ACC_OK)
        goto out;
    for (int z = 0; z < t->nsizes && st == ACC_OK; z++) {
        size_t second, best = fastest(t, z, &second);
        acc_select_entry_t e;
        if (best == SIZE_MAX)
            continue;
        memset(&e, 0, sizeof(e));
        e.min_bytes = tab->n ? t->sizes[z] : 0;
        e.max_bytes = z + 1 < t->nsizes ? t->sizes[z + 1] - 1 : UINT64_MAX;
        snprintf(e.algo, sizeof(e.algo), "%s", t->c[best].plan->algo);
        snprintf(e.params, sizeof(e.params), "%s", t->c[best].params);
        memcpy(e.plan_hash, t->c[best].hash, sizeof(e.plan_hash));
        e.predicted_us = -1;
        e.measured_us = t->c[best].us[z];
        e.source = ACC_SELECT_MEASURED;
        e.backends = acc_plan_backends(t->c[best].plan, acc_topo_gpus_per_node(t->topo));
        st = acc_select_add(tab, &e);
    }
    if (st == ACC_OK) {
        acc_select_merge(tab);
        st = acc_db_put_selection(db, tab);
    }
out:
    acc_select_destroy(tab);
    acc_db_close(db);
    return st;
}

static void tab_free(tab_t *t)
{
    for (size_t k = 0; k < t->nc; k++)
        acc_plan_destroy(t->c[k].plan);
    acc_mem_free(t->c);
    free(t->in);
    free(t->res);
    acc_topo_destroy(t->topo);
}

/* One rank: join, generate, measure, and on rank 0 print and store. */
static int tables_rank(const bench_comm_t *b, const acc_unique_id_t *id, int rank, FILE *out,
                       void *ctx)
{
    const bench_tables_t *a = ctx;
    const char *spec = b->topo ? b->topo : acc_setting_str(ACC_SETTING_TOPO);
    acc_comm_opts_t opts;
    tab_t t;
    uint64_t size;
    acc_status_t st = ACC_OK;
    int rc, more;

    if ((rc = bench_comm_opts(b, &opts)) != EXIT_OK)
        return rc;
    memset(&t, 0, sizeof(t));
    t.b = b;
    t.s = a->sweep;
    t.path = a->path;
    t.out = rank == 0 ? out : NULL;
    for (size = t.s->min_bytes, more = 1; more && t.nsizes < MAX_SIZES;
         more = bench_advance(t.s, &size))
        if (size >= sizeof(float))
            t.sizes[t.nsizes++] = size / sizeof(float) * sizeof(float);
    if (acc_comm_init_rank(&t.comm, b->nranks, id, rank, &opts) != ACC_OK ||
        acc_topo_load(spec, &t.topo) != ACC_OK) {
        fprintf(stderr, "acc-bench: rank %d: %s\n", rank, acc_error_message());
        acc_comm_abort(t.comm);
        tab_free(&t);
        return EXIT_INPUT;
    }
    if (acc_topo_ranks(t.topo) != b->nranks)
        st = acc_error_set(ACC_ERR_INVALID, "topology '%s' has %d ranks, the job %d", spec,
                           acc_topo_ranks(t.topo), b->nranks);
    else if (!t.nsizes || !(t.in = malloc(t.sizes[t.nsizes - 1])) ||
             !(t.res = malloc(t.sizes[t.nsizes - 1])))
        st = acc_error_set(ACC_ERR_NOMEM, "no memory for buffers of the sweep");
    if (st == ACC_OK)
        st = candidates(&t);
    if (st == ACC_OK && t.out) {
        fprintf(t.out,
                "# acc-bench --tables %s: %s on %d ranks (%d nodes), host backend, %zu candidate "
                "plans, %d sizes, %d timed calls out of place and %d in place each (up to 16x as "
                "many below 64 KiB)\n",
                t.path, acc_coll_name(b->coll), b->nranks, acc_topo_nodes(t.topo), t.nc, t.nsizes,
                t.s->iters, t.s->iters);
        fflush(t.out);
    }
    if (st == ACC_OK)
        st = sweep(&t);
    if (st == ACC_OK && t.out) {
        print(&t);
        if ((st = store(&t)) == ACC_OK)
            fprintf(t.out, "# stored: the plans, their times and the %s table, in %s\n",
                    acc_coll_name(b->coll), t.path);
    }
    if (st != ACC_OK) {
        fprintf(stderr, "acc-bench: rank %d: %s\n", rank, acc_error_message());
        acc_comm_abort(t.comm);
        tab_free(&t);
        return EXIT_INPUT;
    }
    tab_free(&t);
    return acc_comm_destroy(t.comm) == ACC_OK ? EXIT_OK : EXIT_INPUT;
}

int bench_tables(const bench_comm_t *b, const bench_tables_t *a, FILE *out)
{
    return bench_launch(b, tables_rank, (void *)a, out);
}
