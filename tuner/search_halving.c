/*
 * search_halving.c - successive halving (Jamieson and Talwalkar, "Non-stochastic Best Arm
 * Identification and Hyperparameter Optimization", AISTATS 2016; the inner loop of Hyperband):
 * evaluate many configurations cheaply, keep the better half, evaluate those at twice the
 * fidelity, and so on up to full fidelity.
 *
 * Fidelity here is the iteration simulator's: at fidelity f the tensor list is merged into
 * about f x n groups of consecutive tensors (acc_itersim_opts_t), so an evaluation does about f
 * of the work of an exact one, and the groups keep the backward timeline's shape.  What a
 * coarse run gets wrong is fusion below the size of a group, so the lowest rung keeps at least
 * MIN_UNITS units.  With a measured backend the same loop would use fewer timed iterations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_internal.h"

#define MAX_RUNGS 4
#define MIN_UNITS 16

typedef struct {
    size_t index;
    double ms;
} cand_t;

static int by_ms(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->ms != y->ms)
        return x->ms < y->ms ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Rungs: as many halvings as keep MIN_UNITS units at the lowest fidelity, at most MAX_RUNGS. */
static int rung_count(const search_t *s)
{
    size_t n = acc_itersim_profile(s->sim)->ntensors;
    int r = 1;
    while (r < MAX_RUNGS && (n >> r) >= MIN_UNITS)
        r++;
    return r;
}

/* Evaluations the rungs take when the first has n0 configurations. */
static size_t rung_cost(size_t n0, int rungs)
{
    size_t c = 0, n = n0;
    int r;
    for (r = 0; r < rungs; r++) {
        c += n;
        n = (n + 1) / 2;
    }
    return c;
}

static size_t dedupe(size_t *v, size_t n)
{
    size_t i, j, m = 0;
    for (i = 0; i < n; i++) {
        for (j = 0; j < m && v[j] != v[i]; j++)
            ;
        if (j == m)
            v[m++] = v[i];
    }
    return m;
}

acc_status_t search_halving(search_t *s)
{
    int rungs = rung_count(s), r;
    size_t n0 = 1, n, i, *design = NULL, ndesign;
    cand_t *cand = NULL;
    acc_itersim_t *coarse = NULL;
    acc_status_t st = ACC_OK;

    while (n0 < s->size && rung_cost(n0 + 1, rungs) <= search_left(s))
        n0++;
    /* Twice the strata asked for, so that after dropping the points that fell on the same
     * configuration there are still n0 to take. */
    if ((st = search_design(s, 2 * n0, &design)) != ACC_OK)
        goto out;
    ndesign = dedupe(design, 2 * n0);
    if (ndesign > n0)
        ndesign = n0;
    if (!(cand = acc_mem_calloc(ndesign ? ndesign : 1, sizeof(*cand)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for successive halving");
        goto out;
    }
    for (i = 0; i < ndesign; i++)
        cand[i].index = design[i];
    n = ndesign;
    for (r = 0; r < rungs && n > 0 && search_left(s); r++) {
        double fid = ldexp(1.0, r - (rungs - 1));
        const acc_itersim_t *sim = s->sim;
        size_t keep;
        if (fid < 1.0) {
            if ((st = acc_itersim_refine(s->sim, fid, &coarse)) != ACC_OK)
                goto out;
            sim = coarse;
        }
        for (i = 0; i < n && search_left(s); i++)
            if ((st = search_eval(s, sim, cand[i].index, 0, &cand[i].ms)) != ACC_OK)
                goto out;
        n = i;
        acc_itersim_destroy(coarse);
        coarse = NULL;
        qsort(cand, n, sizeof(*cand), by_ms);
        keep = (n + 1) / 2;
        /* The last rung keeps everything it evaluated; earlier rungs pass on the better half,
         * topped up from the next ranked while the budget allows the remaining rungs. */
        if (r + 1 < rungs)
            while (keep < n && rung_cost(keep + 1, rungs - r - 1) <= search_left(s))
                keep++;
        n = keep;
    }
out:
    acc_itersim_destroy(coarse);
    acc_mem_free(cand);
    acc_mem_free(design);
    return st;
}
