/*
 * Selection tables from the cost models: every variant of every applicable generator simulated
 * at every size of a sweep, acc's fastest put beside NCCL's own choice and the lower bound, the
 * faster of the two recorded per size, neighbours merged.  See acc_select.h.
 */
#include "select_internal.h"
#include "../algos/algo_util.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#define SWEEP_MIN_DEFAULT (1ull << 10)
#define SWEEP_MAX_DEFAULT (1ull << 32)

struct acc_select_builder {
    const acc_topo_t *topo;
    acc_select_build_opts_t opts;
    acc_sim_t *sims[SELECT_THREADS_MAX]; /* one per thread */
    int nthreads;
    acc_nccl_model_t *nccl; /* NULL when NCCL could not run on the topology */
    char fingerprint[ACC_SHA256_HEX_LEN + 1];
    uint64_t *sizes;
    size_t nsizes;
    int max_lanes;
};

/* One thread per online CPU, at most 8: beyond that the passes have too few variants to share
 * out, and every thread holds a plan in memory. */
static int default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

/* Every collective some generator or NCCL's model covers: alltoall has neither. */
static const acc_coll_t table_colls[] = {ACC_COLL_ALLREDUCE, ACC_COLL_ALLGATHER,
                                         ACC_COLL_REDUCE_SCATTER, ACC_COLL_BROADCAST,
                                         ACC_COLL_REDUCE};

const acc_coll_t *acc_select_colls(size_t *count)
{
    *count = sizeof(table_colls) / sizeof(table_colls[0]);
    return table_colls;
}

void acc_select_build_opts_init(acc_select_build_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->dtype = ACC_DT_F32;
    acc_nccl_options_init(&opts->nccl);
}

static acc_status_t make_sizes(acc_select_builder_t *b)
{
    uint64_t lo = b->opts.min_bytes ? b->opts.min_bytes : SWEEP_MIN_DEFAULT;
    uint64_t hi = b->opts.max_bytes ? b->opts.max_bytes : SWEEP_MAX_DEFAULT, s;
    size_t n = 0;

    if (lo > hi)
        return acc_error_set(ACC_ERR_INVALID, "selection sweep from %llu to %llu bytes is empty",
                             (unsigned long long)lo, (unsigned long long)hi);
    /* lo, then every power of two above it up to hi, then hi itself. */
    b->sizes = acc_mem_calloc(66, sizeof(uint64_t));
    if (!b->sizes)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the selection sweep");
    b->sizes[n++] = lo;
    for (s = 1; s <= hi && s != 0; s <<= 1)
        if (s > lo)
            b->sizes[n++] = s;
    if (b->sizes[n - 1] != hi)
        b->sizes[n++] = hi;
    b->nsizes = n;
    return ACC_OK;
}

/* Measured times the sweep can use: a collective, a plan hash and a positive time each. */
static acc_status_t check_measured(const acc_select_build_opts_t *o)
{
    size_t i;
    for (i = 0; o->measured && i < o->nmeasured; i++) {
        const acc_select_measured_t *m = &o->measured[i];
        if ((unsigned)m->coll >= ACC_COLL_COUNT || strlen(m->plan_hash) != ACC_SHA256_HEX_LEN ||
            !(m->us > 0) || !isfinite(m->us))
            return acc_error_set(ACC_ERR_INVALID,
                                 "selection options: measured[%zu] (collective %d, plan '%.16s', "
                                 "%llu bytes, %g us) needs a collective, a plan hash of %d hex "
                                 "digits and a time above 0",
                                 i, (int)m->coll, m->plan_hash, (unsigned long long)m->nbytes,
                                 m->us, ACC_SHA256_HEX_LEN);
    }
    return ACC_OK;
}

acc_status_t acc_select_builder_create(const acc_topo_t *topo, const acc_select_build_opts_t *opts,
                                       acc_select_builder_t **out)
{
    acc_select_builder_t *b;
    acc_status_t st;
    int t;

    *out = NULL;
    if (!(b = acc_mem_calloc(1, sizeof(*b))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory creating a selection builder");
    b->topo = topo;
    if (opts)
        b->opts = *opts;
    else
        acc_select_build_opts_init(&b->opts);
    if (b->opts.dtype < 0 || b->opts.dtype >= ACC_DT_COUNT || b->opts.max_lanes < 0 ||
        b->opts.threads < 0 || b->opts.threads > SELECT_THREADS_MAX) {
        st = acc_error_set(ACC_ERR_INVALID,
                           "selection options: dtype %d, max_lanes %d or threads %d (0 to %d) "
                           "invalid",
                           (int)b->opts.dtype, b->opts.max_lanes, b->opts.threads,
                           SELECT_THREADS_MAX);
        goto out;
    }
    if ((st = check_measured(&b->opts)) != ACC_OK)
        goto out;
    /* The plugin latency the NCCL model gets is stated, not left to the fabric, so that the
     * stored build key says which it was. */
    b->opts.nccl.net_latency_us = acc_nccl_net_latency_us(&b->opts.nccl, topo);
    b->nthreads = b->opts.threads ? b->opts.threads : default_threads();
    b->max_lanes = b->opts.max_lanes ? b->opts.max_lanes : select_lanes_cap(topo);
    if ((st = make_sizes(b)) != ACC_OK ||
        (st = acc_topo_fingerprint(topo, b->fingerprint)) != ACC_OK)
        goto out;
    for (t = 0; t < b->nthreads; t++)
        if ((st = acc_sim_create(topo, &b->sims[t])) != ACC_OK)
            goto out;
    st = acc_nccl_model_create(topo, &b->opts.nccl, &b->nccl);
    if (st == ACC_ERR_UNSUPPORTED) {
        /* acc's plans can still be compared with each other; say why NCCL is missing. */
        ACC_WARN(COMPILER, "no NCCL comparison on %s: %s", acc_topo_source(topo),
                 acc_error_message());
        b->nccl = NULL;
        st = ACC_OK;
    }
out:
    if (st != ACC_OK) {
        acc_select_builder_destroy(b);
        return st;
    }
    *out = b;
    return ACC_OK;
}

void acc_select_builder_destroy(acc_select_builder_t *b)
{
    int t;
    if (!b)
        return;
    for (t = 0; t < SELECT_THREADS_MAX; t++)
        acc_sim_destroy(b->sims[t]);
    acc_nccl_model_destroy(b->nccl);
    acc_mem_free(b->sizes);
    acc_mem_free(b);
}

void acc_select_result_destroy(acc_select_result_t *r)
{
    size_t i;
    if (!r)
        return;
    for (i = 0; i < r->nplans; i++) {
        acc_plan_destroy(r->plans[i].plan);
        acc_cplan_destroy(r->plans[i].cplan);
    }
    acc_mem_free(r->plans);
    acc_strv_free(r->left_out, r->nleft_out);
    acc_mem_free(r->rows);
    acc_select_destroy(r->table);
    acc_select_nccl_destroy(r->nccl);
    acc_mem_free(r);
}

/* The size at which size i's entry starts, and where it ends: at the next size of the sweep. */
static uint64_t range_end(const acc_select_builder_t *b, size_t i)
{
    return i + 1 < b->nsizes ? b->sizes[i + 1] - 1 : b->sizes[i];
}

/* A plan's params and its protocol; when both do not fit, the ring order gives way (the plan's
 * YAML keeps it). */
static void entry_params(const char *params, acc_proto_t proto, char out[ACC_PLAN_PARAMS_MAX])
{
    char shorter[ACC_PLAN_PARAMS_MAX];
    const char *base = params, *pname = acc_proto_name(proto);
    size_t len;

    if (strlen(params) + strlen(" proto=") + strlen(pname) >= ACC_PLAN_PARAMS_MAX) {
        select_short_params(params, shorter, sizeof(shorter));
        base = shorter;
    }
    len = strlen(base);
    if (len > ACC_PLAN_PARAMS_MAX - 16) /* a proto name is at most "Simple" */
        len = ACC_PLAN_PARAMS_MAX - 16;
    memcpy(out, base, len);
    snprintf(out + len, ACC_PLAN_PARAMS_MAX - len, "%sproto=%s", len ? " " : "", pname);
}

/* The plans rows name: one per (variant, protocol) pair that is best somewhere, each with its
 * protocol set, its params and the hash of its YAML text.  Sets rows[i].plan. */
static acc_status_t collect_plans(acc_select_builder_t *b, acc_select_result_t *r,
                                  select_slot_t *slots, const select_best_t *best)
{
    size_t i, j, uses;
    acc_status_t st = ACC_OK;

    if (!(r->plans = acc_mem_calloc(b->nsizes, sizeof(*r->plans))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the selected plans");
    for (i = 0; i < b->nsizes && st == ACC_OK; i++) {
        acc_select_plan_t *sp;
        r->rows[i].plan = -1;
        if (best[i].var < 0)
            continue;
        for (j = 0; j < i; j++)
            if (best[j].var == best[i].var && best[j].proto == best[i].proto)
                break;
        if (j < i) {
            r->rows[i].plan = r->rows[j].plan;
            continue;
        }
        /* A variant chosen with one protocol only gives its plan away; copies (of up to
         * hundreds of megabytes) only where it is chosen with several. */
        for (j = i + 1, uses = 0; j < b->nsizes; j++)
            uses += best[j].var == best[i].var && best[j].proto != best[i].proto;
        sp = &r->plans[r->nplans];
        if (uses) {
            if ((st = acc_plan_clone(slots[best[i].var].plan, &sp->plan)) != ACC_OK ||
                (slots[best[i].var].cplan &&
                 (st = acc_cplan_clone(slots[best[i].var].cplan, &sp->cplan)) != ACC_OK)) {
                acc_plan_destroy(sp->plan);
                sp->plan = NULL;
                break;
            }
        } else {
            sp->plan = slots[best[i].var].plan;
            sp->cplan = slots[best[i].var].cplan;
            slots[best[i].var].plan = NULL;
            slots[best[i].var].cplan = NULL;
        }
        r->rows[i].plan = (int)r->nplans++;
        sp->plan->proto = best[i].proto;
        if (sp->cplan)
            sp->cplan->proto = best[i].proto;
        entry_params(sp->plan->params, best[i].proto, sp->params);
    }
    return st;
}

/* The hash of every plan a table entry names.  Plans that are acc's best only where NCCL keeps
 * the size are not hashed: no entry points at them, and the YAML text of a plan of millions of
 * operations takes seconds to write.  By class every plan is named by its class form. */
static acc_status_t hash_plans(acc_select_result_t *r)
{
    acc_buf_t yaml;
    size_t i;
    acc_status_t st = ACC_OK;

    acc_buf_init(&yaml);
    for (i = 0; i < r->nrows && st == ACC_OK; i++) {
        acc_select_plan_t *sp;
        if (r->rows[i].use_nccl || r->rows[i].plan < 0)
            continue;
        sp = &r->plans[r->rows[i].plan];
        if (sp->hash[0])
            continue;
        /* By class, an explicit plan goes by its class form too (one class per rank): the
         * YAML of every rank's operations is what a sweep by class does without. */
        if (!sp->cplan && acc_select_by_class(r->nranks) &&
            (st = acc_cplan_from_plan(sp->plan, &sp->cplan)) != ACC_OK)
            break;
        st = sp->cplan ? acc_cplan_hash(sp->cplan, sp->hash)
                       : acc_plan_dump_yaml_hash(sp->plan, &yaml, sp->hash);
    }
    acc_buf_free(&yaml);
    return st;
}

/* NCCL's choice and the bound at one size; absent models are not errors. */
static acc_status_t compare(acc_select_builder_t *b, acc_coll_t coll, acc_select_row_t *row)
{
    acc_status_t st;

    if (b->nccl && coll <= ACC_COLL_REDUCE_SCATTER) {
        if ((st = acc_nccl_model_select(b->nccl, coll, row->nbytes, &row->nccl)) != ACC_OK)
            return acc_error_prefix(st, "NCCL's choice for %s of %llu bytes: ", acc_coll_name(coll),
                                    (unsigned long long)row->nbytes);
        row->nccl_ok = 1;
    }
    st = acc_cost_bound(b->topo, coll, row->nbytes, &row->bound);
    if (st == ACC_OK)
        row->bound_ok = 1;
    else if (st == ACC_ERR_UNSUPPORTED)
        acc_error_clear();
    else
        return st;
    return ACC_OK;
}

static acc_status_t fill_rows(acc_select_builder_t *b, acc_select_result_t *r,
                              const select_best_t *best)
{
    size_t i;
    acc_status_t st;

    for (i = 0; i < b->nsizes; i++) {
        acc_select_row_t *row = &r->rows[i];
        double chosen;

        row->nbytes = b->sizes[i];
        if ((st = compare(b, r->coll, row)) != ACC_OK)
            return st;
        if (best[i].var >= 0) {
            /* Rates follow the time used, measured or predicted. */
            row->acc_us = select_best_us(&best[i]);
            row->acc_predicted_us = best[i].r.time_us;
            row->acc_measured = best[i].measured_us >= 0;
            row->acc_algbw = (double)row->nbytes / row->acc_us / 1e3;
            row->acc_busbw =
                best[i].r.algbw > 0 ? row->acc_algbw * best[i].r.busbw / best[i].r.algbw : 0;
        }
        if (best[i].var < 0 && !row->nccl_ok)
            return acc_error_set(ACC_ERR_UNSUPPORTED,
                                 "no acc algorithm applies to %s on %s and NCCL's model does not "
                                 "cover it",
                                 acc_coll_name(r->coll), r->topo_name);
        /* NCCL keeps the size unless acc is strictly faster: a tie is not worth a new kernel. */
        row->use_nccl = row->nccl_ok && (best[i].var < 0 || row->nccl.time_us <= row->acc_us);
        /* The largest size does not make a range of its own (acc's plan there is its
         * predecessor's already, select_sweep.c's keep_steady): it goes with the size before
         * where that choice can serve it. */
        if (i > 0 && i + 1 == b->nsizes && r->rows[i - 1].use_nccl != row->use_nccl &&
            (r->rows[i - 1].use_nccl ? row->nccl_ok
                                     : best[i].var >= 0 && best[i].var == best[i - 1].var &&
                                           best[i].proto == best[i - 1].proto))
            row->use_nccl = r->rows[i - 1].use_nccl;
        chosen = row->use_nccl ? row->nccl.time_us : row->acc_us;
        if (best[i].var >= 0 && row->nccl_ok && row->acc_us > 0)
            row->speedup = row->nccl.time_us / row->acc_us;
        if (row->bound_ok && chosen > 0)
            row->bound_fraction = row->bound.us / chosen;
    }
    return hash_plans(r);
}

/* The table: one entry per size of the sweep, up to the next size, then merged. */
static acc_status_t fill_table(acc_select_builder_t *b, acc_select_result_t *r)
{
    size_t i;
    acc_status_t st;

    for (i = 0; i < b->nsizes; i++) {
        const acc_select_row_t *row = &r->rows[i];
        acc_select_entry_t e;

        memset(&e, 0, sizeof(e));
        e.min_bytes = b->sizes[i];
        e.max_bytes = range_end(b, i);
        e.use_nccl = row->use_nccl;
        e.predicted_us = row->use_nccl ? row->nccl.time_us : row->acc_predicted_us;
        e.measured_us = !row->use_nccl && row->acc_measured ? row->acc_us : -1;
        e.source = e.measured_us >= 0 ? ACC_SELECT_MEASURED : ACC_SELECT_MODEL;
        if (row->use_nccl) {
            snprintf(e.algo, sizeof(e.algo), "%s", acc_nccl_algo_name(row->nccl.algo));
            snprintf(e.params, sizeof(e.params), "proto=%s channels=%d",
                     acc_nccl_proto_name(row->nccl.proto), row->nccl.nchannels);
            e.backends = ACC_BACKENDS_CUDA;
        } else {
            const acc_select_plan_t *sp = &r->plans[row->plan];
            e.backends = acc_plan_backends(sp->plan, r->gpus_per_node);
            snprintf(e.algo, sizeof(e.algo), "%s", sp->plan->algo);
            snprintf(e.params, sizeof(e.params), "%s", sp->params);
            snprintf(e.plan_hash, sizeof(e.plan_hash), "%s", sp->hash);
        }
        if ((st = acc_select_add(r->table, &e)) != ACC_OK)
            return st;
    }
    acc_select_merge(r->table);
    return ACC_OK;
}

/* NCCL's choice at every size, on the same ranges as the table's entries before merging. */
static acc_status_t fill_nccl(acc_select_builder_t *b, acc_select_result_t *r)
{
    size_t i;
    acc_status_t st;

    for (i = 0; i < b->nsizes; i++) {
        const acc_select_row_t *row = &r->rows[i];
        acc_select_nccl_entry_t e = {.min_bytes = b->sizes[i],
                                     .max_bytes = range_end(b, i),
                                     .algo = row->nccl.algo,
                                     .proto = row->nccl.proto,
                                     .channels = row->nccl.nchannels,
                                     .predicted_us = row->nccl.time_us,
                                     .measured_us = -1,
                                     .source = ACC_SELECT_MODEL};
        if (!row->nccl_ok)
            continue;
        if (!r->nccl && (st = acc_select_nccl_create(r->coll, b->fingerprint, &r->nccl)) != ACC_OK)
            return st;
        if ((st = acc_select_nccl_append(r->nccl, &e)) != ACC_OK)
            return st;
    }
    return ACC_OK;
}

acc_status_t acc_select_build(acc_select_builder_t *b, acc_coll_t coll, acc_select_result_t **out)
{
    acc_select_result_t *r = NULL;
    select_sweep_t sw;
    acc_status_t st;

    *out = NULL;
    memset(&sw, 0, sizeof(sw));
    if (coll < 0 || coll >= ACC_COLL_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "unknown collective %d", (int)coll);
    /* The ring every sweep of these collectives generates is its largest plan: refused now,
     * not after minutes of the others.  By class it is a few kilobytes. */
    if (!acc_select_by_class(acc_topo_ranks(b->topo)) &&
        (st = algo_check_memory(b->topo, coll, "ring", NULL, "the selection sweep of")) != ACC_OK)
        return st;
    r = acc_mem_calloc(1, sizeof(*r));
    sw.best = acc_mem_calloc(b->nsizes, sizeof(*sw.best));
    if (!r || !sw.best || !(r->rows = acc_mem_calloc(b->nsizes, sizeof(*r->rows)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory building a selection table");
        goto out;
    }
    r->coll = coll;
    r->dtype = b->opts.dtype;
    r->nrows = b->nsizes;
    r->nranks = acc_topo_ranks(b->topo);
    r->nodes = acc_topo_nodes(b->topo);
    r->gpus_per_node = acc_topo_gpus_per_node(b->topo);
    snprintf(r->topo_name, sizeof(r->topo_name), "%s",
             acc_topo_name(b->topo)[0] ? acc_topo_name(b->topo) : acc_topo_source(b->topo));
    sw.topo = b->topo;
    sw.sizes = b->sizes;
    sw.nsizes = b->nsizes;
    sw.dtype = b->opts.dtype;
    sw.max_lanes = b->max_lanes;
    sw.exhaustive = b->opts.exhaustive;
    sw.sims = b->sims;
    sw.nthreads = b->nthreads;
    sw.measured = b->opts.measured;
    sw.nmeasured = b->opts.measured ? b->opts.nmeasured : 0;
    if ((st = acc_select_create(coll, b->fingerprint, &r->table)) != ACC_OK)
        goto out;
    st = select_sweep(&sw, coll);
    r->variants = sw.variants;
    r->simulations = sw.simulations;
    r->left_out = sw.left_out; /* taken */
    r->nleft_out = sw.nleft_out;
    sw.left_out = NULL;
    sw.nleft_out = 0;
    ACC_INFO(COMPILER, "select %s: %zu variants verified, %zu simulations on %d threads",
             acc_coll_name(coll), sw.variants, sw.simulations, sw.nthreads);
    if (st != ACC_OK || (st = collect_plans(b, r, sw.slots, sw.best)) != ACC_OK)
        goto out;
    if ((st = fill_rows(b, r, sw.best)) == ACC_OK && (st = fill_table(b, r)) == ACC_OK)
        st = fill_nccl(b, r);
out:
    select_sweep_free(&sw);
    acc_mem_free(sw.best);
    if (st != ACC_OK) {
        acc_select_result_destroy(r);
        return st;
    }
    *out = r;
    return ACC_OK;
}
