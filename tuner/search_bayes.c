/*
 * search_bayes.c - Bayesian optimisation of the fusion configuration: a Gaussian process over
 * the space and expected improvement, with the little linear algebra it needs written here (a
 * Cholesky factorisation of a kernel matrix of at most a few dozen points).
 *
 * Inputs are log2(fusion) and streams, each scaled to [0, 1], plus the collective choice as a
 * category.  The kernel is Matern 5/2 on the scaled distance with a length scale per axis
 * (Snoek, Larochelle and Adams, "Practical Bayesian Optimization of Machine Learning
 * Algorithms", NeurIPS 2012, recommend it over the squared exponential, whose smoothness
 * assumption is unrealistic for such objectives), times rho between different choices.  The
 * observations are log iteration times, standardised, so that the prior variance is 1 and a
 * length scale means the same on every model.  Horovod's GP works on raw MB and ms with one
 * length scale (reference/03-fusion-autotune.md §1); scaling each axis avoids its weak spot.
 *
 * Hyper-parameters (the two length scales and rho) are the maximisers of the marginal
 * likelihood over a small grid, refitted after every evaluation: with at most a few dozen
 * points an exhaustive grid costs less than an optimiser and cannot diverge.  The space is
 * finite, so expected improvement is maximised by evaluating it at every unevaluated point.
 */
#include <math.h>
#include <string.h>

#include "search_internal.h"

/* A tiny nugget on the diagonal: the simulator is deterministic, so this only keeps the
 * factorisation stable when two points are nearly the same. */
#define NUGGET 1e-6
/* Expected improvement's exploration margin, in standardised units (Horovod: xi = 0.01). */
#define XI 0.01
/* Stop when no point is expected to improve by more than this (standardised units). */
#define EI_STOP 1e-7

static const double lf_grid[] = {0.05, 0.1, 0.2, 0.4, 0.8};
static const double ls_grid[] = {0.1, 0.25, 0.5, 1.0, 2.0};
static const double rho_grid[] = {0.3, 0.6, 0.9};

typedef struct {
    double lf, ls, rho;
} hyp_t;

typedef struct {
    size_t n; /* observations */
    double (*x)[2];
    int *cat;
    double *y;     /* standardised */
    double *K;     /* n x n: kernel matrix, then its Cholesky factor (lower) */
    double *alpha; /* K^-1 y */
    double *v;     /* scratch, n */
    double lml;    /* log marginal likelihood of the fit */
    hyp_t h;
} gp_t;

static double kernel(const hyp_t *h, const double *a, int ca, const double *b, int cb)
{
    double df = (a[0] - b[0]) / h->lf, ds = (a[1] - b[1]) / h->ls;
    double r = sqrt(5.0 * (df * df + ds * ds));
    double k = (1.0 + r + r * r / 3.0) * exp(-r);
    return ca == cb ? k : h->rho * k;
}

/* In-place Cholesky of the lower triangle of the n x n matrix A = L L^T; 0 when A is not
 * positive definite. */
static int cholesky(double *A, size_t n)
{
    size_t i, j, k;
    for (j = 0; j < n; j++) {
        double d = A[j * n + j];
        for (k = 0; k < j; k++)
            d -= A[j * n + k] * A[j * n + k];
        if (!(d > 0))
            return 0;
        d = sqrt(d);
        A[j * n + j] = d;
        for (i = j + 1; i < n; i++) {
            double s = A[i * n + j];
            for (k = 0; k < j; k++)
                s -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = s / d;
        }
    }
    return 1;
}

/* Solve L z = b (forward) into z. */
static void forward(const double *L, size_t n, const double *b, double *z)
{
    size_t i, k;
    for (i = 0; i < n; i++) {
        double s = b[i];
        for (k = 0; k < i; k++)
            s -= L[i * n + k] * z[k];
        z[i] = s / L[i * n + i];
    }
}

/* Solve L^T z = b (backward) into z. */
static void backward(const double *L, size_t n, const double *b, double *z)
{
    size_t i, k;
    for (i = n; i-- > 0;) {
        double s = b[i];
        for (k = i + 1; k < n; k++)
            s -= L[k * n + i] * z[k];
        z[i] = s / L[i * n + i];
    }
}

/* Factor the kernel matrix for hyper-parameters h; the log marginal likelihood in g->lml, or
 * -inf when the matrix cannot be factored. */
static void fit(gp_t *g, const hyp_t *h)
{
    size_t i, j, n = g->n;

    g->h = *h;
    for (i = 0; i < n; i++)
        for (j = 0; j <= i; j++)
            g->K[i * n + j] =
                kernel(h, g->x[i], g->cat[i], g->x[j], g->cat[j]) + (i == j ? NUGGET : 0.0);
    if (!cholesky(g->K, n)) {
        g->lml = -INFINITY;
        return;
    }
    forward(g->K, n, g->y, g->v);
    backward(g->K, n, g->v, g->alpha);
    g->lml = 0;
    for (i = 0; i < n; i++)
        g->lml -= 0.5 * g->y[i] * g->alpha[i] + log(g->K[i * n + i]);
}

/* Choose the hyper-parameters of largest marginal likelihood and leave g fitted with them. */
static void fit_best(gp_t *g)
{
    hyp_t best = {0.2, 0.5, 0.6}, h;
    double best_lml = -INFINITY;
    size_t a, b, c;

    for (a = 0; a < sizeof(lf_grid) / sizeof(lf_grid[0]); a++)
        for (b = 0; b < sizeof(ls_grid) / sizeof(ls_grid[0]); b++)
            for (c = 0; c < sizeof(rho_grid) / sizeof(rho_grid[0]); c++) {
                h = (hyp_t){lf_grid[a], ls_grid[b], rho_grid[c]};
                fit(g, &h);
                if (g->lml > best_lml) {
                    best_lml = g->lml;
                    best = h;
                }
            }
    fit(g, &best);
}

/* Expected improvement below `best` at one point. */
static double expected_improvement(gp_t *g, const double *x, int cat, double best, double *kstar)
{
    double mu = 0, var = 1.0, imp, sd, z;
    size_t i;

    for (i = 0; i < g->n; i++) {
        kstar[i] = kernel(&g->h, x, cat, g->x[i], g->cat[i]);
        mu += kstar[i] * g->alpha[i];
    }
    forward(g->K, g->n, kstar, g->v);
    for (i = 0; i < g->n; i++)
        var -= g->v[i] * g->v[i];
    sd = var > 1e-12 ? sqrt(var) : 0.0;
    imp = best - mu - XI;
    if (sd == 0.0)
        return imp > 0 ? imp : 0.0;
    z = imp / sd;
    return imp * 0.5 * erfc(-z / sqrt(2.0)) + sd * exp(-0.5 * z * z) / sqrt(2.0 * M_PI);
}

/* Gather the full-fidelity observations, standardise their logs; the best standardised y. */
static double observe(search_t *s, gp_t *g)
{
    double mean = 0, var = 0, sd, best = INFINITY;
    size_t i, n = 0;

    for (i = 0; i < s->size; i++) {
        if (!search_done(s, i))
            continue;
        search_coords(s->space, i, g->x[n], &g->cat[n]);
        g->y[n] = log(s->score[i]);
        mean += g->y[n++];
    }
    g->n = n;
    mean /= (double)n;
    for (i = 0; i < n; i++)
        var += (g->y[i] - mean) * (g->y[i] - mean);
    sd = n > 1 && var > 0 ? sqrt(var / (double)(n - 1)) : 1.0;
    for (i = 0; i < n; i++) {
        g->y[i] = (g->y[i] - mean) / sd;
        if (g->y[i] < best)
            best = g->y[i];
    }
    return best;
}

/* The unevaluated point of largest expected improvement; SIZE_MAX when none is worth it. */
static size_t propose(search_t *s, gp_t *g, double best, double *kstar)
{
    size_t i, arg = (size_t)-1;
    double top = EI_STOP, x[2];
    int cat;

    for (i = 0; i < s->size; i++) {
        double ei;
        if (search_done(s, i))
            continue;
        search_coords(s->space, i, x, &cat);
        ei = expected_improvement(g, x, cat, best, kstar);
        if (ei > top) {
            top = ei;
            arg = i;
        }
    }
    return arg;
}

acc_status_t search_bayes(search_t *s)
{
    size_t cap = s->budget + 1, ninit, *design = NULL, i;
    gp_t g;
    double *kstar = NULL, ms;
    acc_status_t st = ACC_OK;

    memset(&g, 0, sizeof(g));
    g.x = acc_mem_calloc(cap, sizeof(*g.x));
    g.cat = acc_mem_calloc(cap, sizeof(*g.cat));
    g.y = acc_mem_calloc(cap, sizeof(*g.y));
    g.K = acc_mem_calloc(cap * cap, sizeof(*g.K));
    g.alpha = acc_mem_calloc(cap, sizeof(*g.alpha));
    g.v = acc_mem_calloc(cap, sizeof(*g.v));
    kstar = acc_mem_calloc(cap, sizeof(*kstar));
    if (!g.x || !g.cat || !g.y || !g.K || !g.alpha || !g.v || !kstar) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for the Gaussian process");
        goto out;
    }
    /* The initial design: enough points to fit three hyper-parameters, a tenth of the budget
     * beyond that, never more than half of it. */
    ninit = 4 + (size_t)acc_tune_space_categories(s->space) + s->budget / 10;
    if (ninit > s->budget / 2)
        ninit = s->budget / 2 ? s->budget / 2 : 1;
    if ((st = search_design(s, ninit, &design)) != ACC_OK)
        goto out;
    for (i = 0; i < ninit && search_left(s); i++)
        if ((st = search_eval(s, s->sim, design[i], 0, &ms)) != ACC_OK)
            goto out;
    while (search_left(s)) {
        double best = observe(s, &g);
        size_t next;
        fit_best(&g);
        next = propose(s, &g, best, kstar);
        if (next == (size_t)-1)
            break; /* nothing left that could do better */
        if ((st = search_eval(s, s->sim, next, 0, &ms)) != ACC_OK)
            goto out;
    }
out:
    acc_mem_free(design);
    acc_mem_free(g.x);
    acc_mem_free(g.cat);
    acc_mem_free(g.y);
    acc_mem_free(g.K);
    acc_mem_free(g.alpha);
    acc_mem_free(g.v);
    acc_mem_free(kstar);
    return st;
}
