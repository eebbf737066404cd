/*
 * search.c - the search space of fusion size x streams x collective choice, the driver every
 * strategy runs under (budget, warm start, bookkeeping, the caller's callback) and the grid.
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "search_internal.h"

static const char *const strategy_names[ACC_SEARCH_STRATEGY_COUNT] = {"grid", "bayes", "halving"};

const char *acc_search_strategy_name(acc_search_strategy_t s)
{
    return (unsigned)s < ACC_SEARCH_STRATEGY_COUNT ? strategy_names[s] : "?";
}

acc_status_t acc_search_strategy_parse(const char *s, acc_search_strategy_t *out)
{
    int i;
    for (i = 0; i < ACC_SEARCH_STRATEGY_COUNT; i++) {
        if (s && acc_str_ieq(s, strategy_names[i])) {
            *out = (acc_search_strategy_t)i;
            return ACC_OK;
        }
    }
    return acc_error_set(ACC_ERR_INVALID,
                         "unknown search strategy '%s' (expected grid, bayes or halving)",
                         s ? s : "");
}

/* ---- the space ---- */

void acc_tune_space_init(acc_tune_space_t *s)
{
    memset(s, 0, sizeof(*s));
    s->policy = ACC_FUSION_ACC;
    s->assign = ACC_STREAMS_LEAST_LOADED;
    s->fusion_min = 256ull << 10;
    s->fusion_max = 1ull << 30;
    s->streams_min = 1;
    s->streams_max = 8;
    s->algos = (1u << ACC_TUNE_ALGO_COUNT) - 1;
    s->compressions = 1u << ACC_COMPRESS_NONE;
}

static int pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

acc_status_t acc_tune_space_check(const acc_tune_space_t *s)
{
    int rounds = s->policy == ACC_FUSION_HOROVOD || s->policy == ACC_FUSION_NEGOTIATE;
    if (s->policy != ACC_FUSION_ACC && s->policy != ACC_FUSION_DDP && !rounds)
        return acc_error_set(ACC_ERR_INVALID,
                             "search space: policy %s has no fusion size to tune "
                             "(acc, ddp, horovod or negotiate)",
                             acc_fusion_policy_name(s->policy));
    if (!pow2(s->fusion_min) || !pow2(s->fusion_max) || s->fusion_min > s->fusion_max ||
        s->fusion_max > (1ull << 40))
        return acc_error_set(ACC_ERR_RANGE,
                             "search space: fusion sizes %llu..%llu must be powers of two, "
                             "ascending, at most 1 TiB",
                             (unsigned long long)s->fusion_min, (unsigned long long)s->fusion_max);
    if (s->streams_min < 1 || s->streams_max > ACC_TUNE_MAX_STREAMS ||
        s->streams_min > s->streams_max)
        return acc_error_set(ACC_ERR_RANGE, "search space: streams %d..%d must lie within 1..%d",
                             s->streams_min, s->streams_max, ACC_TUNE_MAX_STREAMS);
    if (!(s->algos & ((1u << ACC_TUNE_ALGO_COUNT) - 1)) || (s->algos >> ACC_TUNE_ALGO_COUNT))
        return acc_error_set(ACC_ERR_INVALID, "search space: no collective choice to search");
    if (!(s->compressions & ((1u << ACC_COMPRESS_COUNT) - 1)) ||
        (s->compressions >> ACC_COMPRESS_COUNT))
        return acc_error_set(ACC_ERR_INVALID,
                             "search space: no compression to search (none, fp16, bf16)");
    if (!(s->cycle_ms >= 0) || (rounds && !(s->cycle_ms > 0)))
        return acc_error_set(ACC_ERR_RANGE, "search space: cycle %g ms is not valid for %s",
                             s->cycle_ms, acc_fusion_policy_name(s->policy));
    return ACC_OK;
}

size_t acc_tune_space_fusions(const acc_tune_space_t *s)
{
    size_t n = 0;
    uint64_t f;
    for (f = s->fusion_min; f && f <= s->fusion_max; f <<= 1)
        n++;
    return n;
}

int acc_tune_space_streams(const acc_tune_space_t *s)
{
    return s->streams_max - s->streams_min + 1;
}

/* Bits set in mask below bit `below`. */
static int bits_below(unsigned mask, int below)
{
    int i, n = 0;
    for (i = 0; i < below; i++)
        n += (mask >> i) & 1;
    return n;
}

int acc_tune_space_algos(const acc_tune_space_t *s)
{
    return bits_below(s->algos, ACC_TUNE_ALGO_COUNT);
}

int acc_tune_space_categories(const acc_tune_space_t *s)
{
    return acc_tune_space_algos(s) * bits_below(s->compressions, ACC_COMPRESS_COUNT);
}

size_t acc_tune_space_size(const acc_tune_space_t *s)
{
    return acc_tune_space_fusions(s) * (size_t)acc_tune_space_streams(s) *
           (size_t)acc_tune_space_categories(s);
}

/* The value of the k-th bit set in mask (of n bits); 0 when there is none. */
static int nth_bit(unsigned mask, int n, int k)
{
    int i;
    for (i = 0; i < n; i++)
        if (((mask >> i) & 1) && k-- == 0)
            return i;
    return 0;
}

void acc_tune_space_config(const acc_tune_space_t *s, size_t index, acc_tune_config_t *out)
{
    size_t nf = acc_tune_space_fusions(s), ns = (size_t)acc_tune_space_streams(s);
    int cat = (int)(index / (nf * ns)), na = acc_tune_space_algos(s);
    acc_tune_config_acc(out, s->fusion_min << (index % nf), s->streams_min + (int)(index / nf % ns),
                        (acc_tune_algo_t)nth_bit(s->algos, ACC_TUNE_ALGO_COUNT, cat % na));
    out->compress = (acc_compress_t)nth_bit(s->compressions, ACC_COMPRESS_COUNT, cat / na);
    out->policy = s->policy;
    out->cycle_ms = s->cycle_ms;
    out->assign = s->assign;
}

size_t acc_tune_space_nearest(const acc_tune_space_t *s, const acc_tune_config_t *c)
{
    size_t nf = acc_tune_space_fusions(s), ns = (size_t)acc_tune_space_streams(s), fi;
    double l = log2((double)(c->fusion_bytes ? c->fusion_bytes : 1)) - log2((double)s->fusion_min);
    int st = c->streams, algo = 0, comp = 0;

    l = floor(l + 0.5);
    fi = l < 0 ? 0 : l > (double)(nf - 1) ? nf - 1 : (size_t)l;
    st = st < s->streams_min ? s->streams_min : st > s->streams_max ? s->streams_max : st;
    if ((unsigned)c->algo < ACC_TUNE_ALGO_COUNT && ((s->algos >> c->algo) & 1))
        algo = bits_below(s->algos, (int)c->algo);
    if ((unsigned)c->compress < ACC_COMPRESS_COUNT && ((s->compressions >> c->compress) & 1))
        comp = bits_below(s->compressions, (int)c->compress);
    return fi + nf * ((size_t)(st - s->streams_min) +
                      ns * (size_t)(algo + acc_tune_space_algos(s) * comp));
}

void search_coords(const acc_tune_space_t *sp, size_t index, double x[2], int *cat)
{
    size_t nf = acc_tune_space_fusions(sp), ns = (size_t)acc_tune_space_streams(sp);
    x[0] = nf > 1 ? (double)(index % nf) / (double)(nf - 1) : 0.0;
    x[1] = ns > 1 ? (double)(index / nf % ns) / (double)(ns - 1) : 0.0;
    *cat = (int)(index / (nf * ns));
}

/* ---- bookkeeping shared by the strategies ---- */

uint64_t search_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double search_uniform(uint64_t *state)
{
    return (double)(search_rand(state) >> 11) * (1.0 / 9007199254740992.0);
}

int search_done(const search_t *s, size_t index)
{
    return !isnan(s->score[index]);
}

size_t search_left(const search_t *s)
{
    return s->budget > s->res->nevals ? s->budget - s->res->nevals : 0;
}

/* Is a better than b?  Faster; among times equal to a part in 10^9, fewer streams, then a
 * smaller fusion size (less memory: a buffer per stream), then the earlier choice (auto first),
 * so that every strategy names the same optimum on a plateau. */
static int better(const search_t *s, const acc_tune_eval_t *a, const acc_tune_eval_t *b)
{
    double ta = a->result.iteration_ms, tb = b->result.iteration_ms;
    size_t nf = acc_tune_space_fusions(s->space), ns = (size_t)acc_tune_space_streams(s->space);

    if (fabs(ta - tb) > 1e-9 * fmax(ta, tb))
        return ta < tb;
    if (a->index / nf % ns != b->index / nf % ns)
        return a->index / nf % ns < b->index / nf % ns;
    if (a->index % nf != b->index % nf)
        return a->index % nf < b->index % nf;
    return a->index < b->index;
}

/* One evaluation's result: the simulator's, or the caller's measurement. */
static acc_status_t evaluate(search_t *s, const acc_itersim_t *sim, acc_tune_eval_t *e)
{
    acc_status_t st;
    if (!s->opts->measure)
        return acc_itersim_run(sim, &e->config, &e->result);
    if ((st = s->opts->measure(s->opts->measure_ctx, &e->config, &e->result)) != ACC_OK)
        return st;
    if (!(e->result.iteration_ms > 0))
        return acc_error_set(ACC_ERR_INVALID,
                             "search: the measurement of a configuration gave %g ms; an "
                             "iteration time must be positive",
                             e->result.iteration_ms);
    return ACC_OK;
}

acc_status_t search_eval(search_t *s, const acc_itersim_t *sim, size_t index, int warm, double *ms)
{
    double fid = sim ? acc_itersim_fidelity(sim) : 1.0, t0;
    acc_tune_eval_t *e;
    acc_status_t st;

    if (fid >= 1.0 && search_done(s, index)) {
        *ms = s->score[index];
        return ACC_OK;
    }
    if (!search_left(s))
        return acc_error_set(ACC_ERR_RANGE, "search budget of %zu evaluations spent", s->budget);
    e = &s->res->evals[s->res->nevals];
    memset(e, 0, sizeof(*e));
    acc_tune_space_config(s->space, index, &e->config);
    e->index = index;
    e->fidelity = fid;
    e->warm = warm;
    t0 = acc_now_s();
    if ((st = evaluate(s, sim, e)) != ACC_OK)
        return st;
    e->seconds = acc_now_s() - t0;
    s->res->nevals++;
    s->res->cost += fid;
    *ms = e->result.iteration_ms;
    if (fid >= 1.0) {
        s->score[index] = *ms;
        if (s->res->best == (size_t)-1 || better(s, e, &s->res->evals[s->res->best]))
            s->res->best = s->res->nevals - 1;
    }
    if (s->opts->on_eval)
        return s->opts->on_eval(s->opts->ctx, e, s->res->nevals, s->budget);
    return ACC_OK;
}

acc_status_t search_warm(search_t *s)
{
    acc_status_t st;
    size_t i;
    double ms;

    for (i = 0; i < s->opts->nwarm && search_left(s); i++) {
        size_t idx = acc_tune_space_nearest(s->space, &s->opts->warm[i]);
        if (!search_done(s, idx) && (st = search_eval(s, s->sim, idx, 1, &ms)) != ACC_OK)
            return st;
    }
    return ACC_OK;
}

static void shuffle(size_t *v, size_t n, uint64_t *rng)
{
    size_t i;
    for (i = n; i > 1; i--) {
        size_t j = (size_t)(search_rand(rng) % i), t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

acc_status_t search_design(search_t *s, size_t n, size_t **out)
{
    size_t nf = acc_tune_space_fusions(s->space), ns = (size_t)acc_tune_space_streams(s->space);
    size_t nc = (size_t)acc_tune_space_categories(s->space), *pf, *ps, *pts, i;

    *out = NULL;
    pf = acc_mem_calloc(n ? n : 1, sizeof(size_t));
    ps = acc_mem_calloc(n ? n : 1, sizeof(size_t));
    pts = acc_mem_calloc(n ? n : 1, sizeof(size_t));
    if (!pf || !ps || !pts) {
        acc_mem_free(pf);
        acc_mem_free(ps);
        acc_mem_free(pts);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the search design");
    }
    for (i = 0; i < n; i++)
        pf[i] = ps[i] = i;
    shuffle(pf, n, &s->rng);
    shuffle(ps, n, &s->rng);
    for (i = 0; i < n; i++) {
        /* Stratum k of n covers [k/n, (k+1)/n) of the axis; a random position within it. */
        size_t f = (size_t)(((double)pf[i] + search_uniform(&s->rng)) / (double)n * (double)nf);
        size_t st = (size_t)(((double)ps[i] + search_uniform(&s->rng)) / (double)n * (double)ns);
        pts[i] = (f < nf ? f : nf - 1) + nf * ((st < ns ? st : ns - 1) + ns * (i % nc));
    }
    acc_mem_free(pf);
    acc_mem_free(ps);
    *out = pts;
    return ACC_OK;
}

/* ---- the driver ---- */

void acc_tune_search_opts_init(acc_tune_search_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->strategy = ACC_SEARCH_GRID;
    opts->seed = 1;
}

static acc_status_t search_grid(search_t *s)
{
    acc_status_t st;
    size_t i;
    double ms;

    for (i = 0; i < s->size && search_left(s); i++)
        if ((st = search_eval(s, s->sim, i, 0, &ms)) != ACC_OK)
            return st;
    return ACC_OK;
}

acc_status_t acc_tune_search(const acc_itersim_t *sim, const acc_tune_space_t *space,
                             const acc_tune_search_opts_t *opts, acc_tune_search_result_t **out)
{
    acc_tune_search_opts_t o;
    acc_tune_search_result_t *r = NULL;
    search_t s;
    acc_status_t st;
    size_t i;
    double t0 = acc_now_s();
    int a;

    *out = NULL;
    if (opts)
        o = *opts;
    else
        acc_tune_search_opts_init(&o);
    if ((st = acc_tune_space_check(space)) != ACC_OK)
        return st;
    if ((unsigned)o.strategy >= ACC_SEARCH_STRATEGY_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "unknown search strategy %d", (int)o.strategy);
    if (o.measure && o.strategy == ACC_SEARCH_HALVING)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "search: successive halving needs the simulator's fidelities; "
                             "measure with grid or bayes");
    if (!o.measure && !sim)
        return acc_error_set(ACC_ERR_INVALID, "search: neither a simulator nor a measurement");
    if (sim && acc_itersim_fidelity(sim) < 1.0)
        return acc_error_set(ACC_ERR_INVALID, "search: the simulator must be at fidelity 1");
    for (a = 0; a < ACC_TUNE_ALGO_COUNT && sim; a++)
        if (((space->algos >> a) & 1) && acc_itersim_comm(sim) &&
            !acc_tune_comm_has(acc_itersim_comm(sim), (acc_tune_algo_t)a))
            return acc_error_set(ACC_ERR_UNSUPPORTED,
                                 "search: the collective times have no '%s' choice; leave it out "
                                 "of the space",
                                 acc_tune_algo_name((acc_tune_algo_t)a));
    memset(&s, 0, sizeof(s));
    s.sim = sim;
    s.space = space;
    s.opts = &o;
    s.size = acc_tune_space_size(space);
    s.budget = o.budget ? o.budget : o.strategy == ACC_SEARCH_GRID ? s.size : (s.size + 3) / 4;
    s.rng = o.seed;
    if (!(r = acc_mem_calloc(1, sizeof(*r))) ||
        !(r->evals = acc_mem_calloc(s.budget ? s.budget : 1, sizeof(*r->evals))) ||
        !(s.score = acc_mem_calloc(s.size, sizeof(*s.score)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for a search of %zu points", s.size);
        goto out;
    }
    r->strategy = o.strategy;
    r->best = (size_t)-1;
    s.res = r;
    for (i = 0; i < s.size; i++)
        s.score[i] = NAN;
    if ((st = search_warm(&s)) != ACC_OK)
        goto out;
    switch (o.strategy) {
    case ACC_SEARCH_GRID:
        st = search_grid(&s);
        break;
    case ACC_SEARCH_BAYES:
        st = search_bayes(&s);
        break;
    default:
        st = search_halving(&s);
        break;
    }
    if (st == ACC_OK && r->best == (size_t)-1)
        st = acc_error_set(ACC_ERR_RANGE,
                           "search: a budget of %zu evaluations gave no "
                           "full-fidelity result; give a larger --budget",
                           s.budget);
out:
    acc_mem_free(s.score);
    if (st != ACC_OK) {
        acc_tune_search_result_destroy(r);
        return st;
    }
    r->seconds = acc_now_s() - t0;
    *out = r;
    return ACC_OK;
}

void acc_tune_search_result_destroy(acc_tune_search_result_t *r)
{
    if (!r)
        return;
    acc_mem_free(r->evals);
    acc_mem_free(r);
}
