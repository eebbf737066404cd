/*
 * itersim_comm.c - what one allreduce costs on a cluster, at any size: the curves the iteration
 * simulator prices its collectives with.  See "collective times" in acc_tune.h.
 *
 * The curves come from the compiler's sweep (acc_select_build), one point per power of two,
 * and are read between points as straight lines in bytes.  A line's intercept is the call's
 * latency part and its slope times the size its bandwidth part: the split the simulator needs
 * to let concurrent calls share bandwidth while their latencies overlap.
 */
#include <math.h>
#include <string.h>

#include "acc_select.h"
#include "acc_tune.h"

struct acc_tune_comm {
    int nranks;
    int sm_count;
    int none; /* one GPU: nothing to communicate, every cost 0 */
    int has[ACC_TUNE_ALGO_COUNT];
    acc_tune_comm_point_t *points; /* ascending; every us[] >= 0 after filling */
    size_t n;
};

static const char *const algo_names[ACC_TUNE_ALGO_COUNT] = {"auto", "acc", "nccl"};

const char *acc_tune_algo_name(acc_tune_algo_t a)
{
    return (unsigned)a < ACC_TUNE_ALGO_COUNT ? algo_names[a] : "?";
}

acc_status_t acc_tune_algo_parse(const char *s, acc_tune_algo_t *out)
{
    int a;
    for (a = 0; a < ACC_TUNE_ALGO_COUNT; a++) {
        if (s && acc_str_ieq(s, algo_names[a])) {
            *out = (acc_tune_algo_t)a;
            return ACC_OK;
        }
    }
    return acc_error_set(ACC_ERR_INVALID,
                         "unknown collective choice '%s' (expected auto, acc or nccl)", s ? s : "");
}

void acc_tune_comm_opts_init(acc_tune_comm_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    acc_nccl_options_init(&opts->nccl);
}

/* The GPU's SM count: the topology's fact, else the part's from the hardware table, else 0
 * (no SM accounting, which the caller is told about). */
static int topo_sm_count(const acc_topo_t *topo)
{
    int v = acc_topo_find(topo, ACC_VTX_GPU, 0);
    const acc_topo_vertex_t *g = v >= 0 ? acc_topo_vertex(topo, v) : NULL;
    const acc_gpu_model_t *m;

    if (!g)
        return 0;
    if (g->sm_count > 0)
        return g->sm_count;
    m = g->model[0] ? acc_topo_gpu_model_by_name(g->model) : NULL;
    return m ? m->sm_count : 0;
}

/* Where a choice has no time at a size (acc with no applicable plan there, or NCCL where its
 * model is silent), the runtime would use the other: fill the gap from AUTO.  AUTO is the
 * faster of the two (ties go to NCCL, the runtime's default). */
static acc_status_t fill_choices(acc_tune_comm_t *c)
{
    size_t i;
    int a;

    for (i = 0; i < c->n; i++) {
        acc_tune_comm_point_t *p = &c->points[i];
        double acc = p->us[ACC_TUNE_ALGO_ACC], nccl = p->us[ACC_TUNE_ALGO_NCCL];
        if (acc >= 0 && (nccl < 0 || acc < nccl)) {
            p->us[ACC_TUNE_ALGO_AUTO] = acc;
            p->ctas[ACC_TUNE_ALGO_AUTO] = p->ctas[ACC_TUNE_ALGO_ACC];
        } else if (nccl >= 0) {
            p->us[ACC_TUNE_ALGO_AUTO] = nccl;
            p->ctas[ACC_TUNE_ALGO_AUTO] = p->ctas[ACC_TUNE_ALGO_NCCL];
        } else if (p->us[ACC_TUNE_ALGO_AUTO] < 0) {
            return acc_error_set(ACC_ERR_INVALID, "collective times: no time at all for %llu bytes",
                                 (unsigned long long)p->nbytes);
        }
        for (a = ACC_TUNE_ALGO_ACC; a < ACC_TUNE_ALGO_COUNT; a++) {
            if (p->us[a] >= 0) {
                c->has[a] = 1;
            } else {
                p->us[a] = p->us[ACC_TUNE_ALGO_AUTO];
                p->ctas[a] = p->ctas[ACC_TUNE_ALGO_AUTO];
            }
        }
    }
    c->has[ACC_TUNE_ALGO_AUTO] = 1;
    return ACC_OK;
}

static acc_status_t comm_alloc(int nranks, int sm_count, size_t n, acc_tune_comm_t **out)
{
    acc_tune_comm_t *c = acc_mem_calloc(1, sizeof(*c));
    if (!c || !(c->points = acc_mem_calloc(n ? n : 1, sizeof(*c->points)))) {
        acc_mem_free(c);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for collective times");
    }
    c->nranks = nranks;
    c->sm_count = sm_count;
    c->n = n;
    *out = c;
    return ACC_OK;
}

acc_status_t acc_tune_comm_create_points(int nranks, int sm_count,
                                         const acc_tune_comm_point_t *points, size_t n,
                                         acc_tune_comm_t **out)
{
    acc_tune_comm_t *c = NULL;
    acc_status_t st;
    size_t i;
    int a;

    *out = NULL;
    if (nranks < 1 || sm_count < 0 || n == 0 || !points)
        return acc_error_set(ACC_ERR_INVALID,
                             "collective times need ranks >= 1, SMs >= 0 and at least one point");
    for (i = 0; i < n; i++) {
        if (points[i].nbytes == 0 || (i > 0 && points[i].nbytes <= points[i - 1].nbytes))
            return acc_error_set(ACC_ERR_INVALID,
                                 "collective times: point %zu: sizes must be > 0 and strictly "
                                 "ascending (%llu after %llu)",
                                 i, (unsigned long long)points[i].nbytes,
                                 (unsigned long long)(i ? points[i - 1].nbytes : 0));
        for (a = 0; a < ACC_TUNE_ALGO_COUNT; a++) {
            if (isnan(points[i].us[a]) || isinf(points[i].us[a]) || points[i].ctas[a] < 0)
                return acc_error_set(ACC_ERR_INVALID,
                                     "collective times: point %zu (%llu bytes): %s time must "
                                     "be a number and CTAs >= 0",
                                     i, (unsigned long long)points[i].nbytes,
                                     acc_tune_algo_name((acc_tune_algo_t)a));
        }
    }
    if ((st = comm_alloc(nranks, sm_count, n, &c)) != ACC_OK)
        return st;
    memcpy(c->points, points, n * sizeof(*points));
    c->none = nranks == 1;
    if ((st = fill_choices(c)) != ACC_OK) {
        acc_tune_comm_destroy(c);
        return st;
    }
    *out = c;
    return ACC_OK;
}

static acc_status_t sweep_sizes(uint64_t max_bytes, size_t *n)
{
    uint64_t s;
    if (max_bytes < 1024 || (max_bytes & (max_bytes - 1)))
        return acc_error_set(ACC_ERR_INVALID,
                             "collective times: max_bytes %llu must be a power of two >= 1 KiB",
                             (unsigned long long)max_bytes);
    for (*n = 0, s = 1024; s <= max_bytes && s; s <<= 1)
        (*n)++;
    return ACC_OK;
}

static acc_status_t from_nccl(const acc_topo_t *topo, const acc_tune_comm_opts_t *o,
                              acc_tune_comm_t *c)
{
    acc_nccl_model_t *m = NULL;
    acc_status_t st;
    size_t i;

    if ((st = acc_nccl_model_create(topo, &o->nccl, &m)) != ACC_OK)
        return st;
    for (i = 0; i < c->n; i++) {
        acc_tune_comm_point_t *p = &c->points[i];
        acc_nccl_choice_t ch;
        p->nbytes = 1024ull << i;
        p->us[ACC_TUNE_ALGO_AUTO] = p->us[ACC_TUNE_ALGO_ACC] = -1;
        if ((st = acc_nccl_model_select(m, ACC_COLL_ALLREDUCE, p->nbytes, &ch)) != ACC_OK)
            goto out;
        p->us[ACC_TUNE_ALGO_NCCL] = ch.time_us;
        p->ctas[ACC_TUNE_ALGO_NCCL] = ch.nchannels;
    }
out:
    acc_nccl_model_destroy(m);
    return st;
}

static acc_status_t from_selection(const acc_topo_t *topo, const acc_tune_comm_opts_t *o,
                                   acc_tune_comm_t *c)
{
    acc_select_build_opts_t bo;
    acc_select_builder_t *b = NULL;
    acc_select_result_t *r = NULL;
    acc_status_t st;
    size_t i;

    acc_select_build_opts_init(&bo);
    bo.min_bytes = 1024;
    bo.max_bytes = c->points[c->n - 1].nbytes;
    bo.nccl = o->nccl;
    if ((st = acc_select_builder_create(topo, &bo, &b)) != ACC_OK ||
        (st = acc_select_build(b, ACC_COLL_ALLREDUCE, &r)) != ACC_OK)
        goto out;
    if (r->nrows != c->n) {
        st = acc_error_set(ACC_ERR_INTERNAL, "collective times: the sweep gave %zu sizes, not %zu",
                           r->nrows, c->n);
        goto out;
    }
    for (i = 0; i < c->n; i++) {
        const acc_select_row_t *row = &r->rows[i];
        acc_tune_comm_point_t *p = &c->points[i];
        p->nbytes = row->nbytes;
        p->us[ACC_TUNE_ALGO_AUTO] = -1;
        p->us[ACC_TUNE_ALGO_ACC] = row->plan >= 0 ? row->acc_us : -1;
        p->ctas[ACC_TUNE_ALGO_ACC] = row->plan >= 0 ? r->plans[row->plan].plan->nlanes : 0;
        p->us[ACC_TUNE_ALGO_NCCL] = row->nccl_ok ? row->nccl.time_us : -1;
        p->ctas[ACC_TUNE_ALGO_NCCL] = row->nccl_ok ? row->nccl.nchannels : 0;
    }
out:
    acc_select_result_destroy(r);
    acc_select_builder_destroy(b);
    return st;
}

acc_status_t acc_tune_comm_create(const acc_topo_t *topo, const acc_tune_comm_opts_t *opts,
                                  acc_tune_comm_t **out)
{
    acc_tune_comm_opts_t o;
    acc_tune_comm_t *c = NULL;
    acc_status_t st;
    size_t n = 0, i;

    *out = NULL;
    if (opts)
        o = *opts;
    else
        acc_tune_comm_opts_init(&o);
    if (!o.max_bytes)
        o.max_bytes = 4ull << 30;
    if ((st = sweep_sizes(o.max_bytes, &n)) != ACC_OK)
        return st;
    if (acc_topo_ranks(topo) == 1) {
        /* Nothing to reduce: one point of cost 0 stands for every size. */
        acc_tune_comm_point_t p = {.nbytes = 1024};
        return acc_tune_comm_create_points(1, topo_sm_count(topo), &p, 1, out);
    }
    if ((st = comm_alloc(acc_topo_ranks(topo), topo_sm_count(topo), n, &c)) != ACC_OK)
        return st;
    for (i = 0; i < n; i++)
        c->points[i].nbytes = 1024ull << i;
    if (c->sm_count == 0)
        ACC_WARN(TUNER,
                 "%s: the GPU's SM count is unknown; collectives will not take SMs from "
                 "compute in the iteration simulator",
                 acc_topo_name(topo)[0] ? acc_topo_name(topo) : acc_topo_source(topo));
    st = o.nccl_only ? from_nccl(topo, &o, c) : from_selection(topo, &o, c);
    if (st == ACC_OK)
        st = fill_choices(c);
    if (st != ACC_OK) {
        acc_error_prefix(st, "allreduce times on %s: ",
                         acc_topo_name(topo)[0] ? acc_topo_name(topo) : acc_topo_source(topo));
        acc_tune_comm_destroy(c);
        return st;
    }
    *out = c;
    return ACC_OK;
}

void acc_tune_comm_destroy(acc_tune_comm_t *c)
{
    if (!c)
        return;
    acc_mem_free(c->points);
    acc_mem_free(c);
}

int acc_tune_comm_ranks(const acc_tune_comm_t *c)
{
    return c->nranks;
}

int acc_tune_comm_sm_count(const acc_tune_comm_t *c)
{
    return c->sm_count;
}

int acc_tune_comm_has(const acc_tune_comm_t *c, acc_tune_algo_t algo)
{
    return (unsigned)algo < ACC_TUNE_ALGO_COUNT && c->has[algo];
}

const acc_tune_comm_point_t *acc_tune_comm_points(const acc_tune_comm_t *c, size_t *n)
{
    *n = c->n;
    return c->points;
}

/* The segment [i, i + 1] that prices nbytes: the one holding it, else the first or the last. */
static size_t segment(const acc_tune_comm_t *c, uint64_t nbytes)
{
    size_t lo = 0, hi = c->n - 1;
    if (c->n < 2 || nbytes <= c->points[0].nbytes)
        return 0;
    if (nbytes >= c->points[hi].nbytes)
        return hi - 1;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->points[mid].nbytes <= nbytes)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

acc_status_t acc_tune_comm_cost(const acc_tune_comm_t *c, acc_tune_algo_t algo, uint64_t nbytes,
                                acc_tune_cost_t *out)
{
    const acc_tune_comm_point_t *p0, *p1;
    double slope, icpt, t, s = (double)nbytes;
    size_t i;

    memset(out, 0, sizeof(*out));
    if ((unsigned)algo >= ACC_TUNE_ALGO_COUNT || !c->has[algo])
        return acc_error_set(ACC_ERR_UNSUPPORTED, "no %s times in this model of collectives",
                             acc_tune_algo_name(algo));
    if (c->none || nbytes == 0)
        return ACC_OK;
    i = segment(c, nbytes);
    p0 = &c->points[i];
    out->ctas = p0->ctas[algo];
    if (c->n == 1) {
        out->us = out->lat_us = p0->us[algo];
        return ACC_OK;
    }
    p1 = &c->points[i + 1];
    if (nbytes > p1->nbytes)
        out->ctas = p1->ctas[algo];
    /* alpha + beta x bytes through the two points; a time that falls with the size (a change
     * of protocol or algorithm between them) is read as flat: all latency. */
    slope = (p1->us[algo] - p0->us[algo]) / ((double)p1->nbytes - (double)p0->nbytes);
    if (slope < 0)
        slope = 0;
    icpt = p0->us[algo] - slope * (double)p0->nbytes;
    t = icpt + slope * s;
    if (t < 0)
        t = 0;
    out->us = t;
    out->lat_us = icpt < 0 ? 0 : icpt > t ? t : icpt;
    out->bw_us = t - out->lat_us;
    return ACC_OK;
}
