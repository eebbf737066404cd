/* Shared between the search strategies of the tuner (search*.c); not installed. */
#ifndef ACC_SEARCH_INTERNAL_H
#define ACC_SEARCH_INTERNAL_H

#include "acc_tune.h"

typedef struct {
    const acc_itersim_t *sim; /* fidelity 1 */
    const acc_tune_space_t *space;
    const acc_tune_search_opts_t *opts;
    acc_tune_search_result_t *res;
    size_t size;   /* points in the space */
    size_t budget; /* evaluations allowed */
    double *score; /* per point: full-fidelity iteration time, ms; NAN until evaluated */
    uint64_t rng;
} search_t;

/* Evaluate point `index` with `sim` (whose fidelity is recorded), add it to the result, tell
 * the caller's callback.  A point already evaluated at full fidelity is not evaluated again:
 * *ms is its score and nothing is added.  ACC_ERR_RANGE when the budget is spent. */
acc_status_t search_eval(search_t *s, const acc_itersim_t *sim, size_t index, int warm, double *ms);
int search_done(const search_t *s, size_t index); /* evaluated at full fidelity */
size_t search_left(const search_t *s);            /* evaluations left in the budget */
/* Evaluate the warm points (those not evaluated yet), at full fidelity, within the budget. */
acc_status_t search_warm(search_t *s);

/* Point index -> coordinates: log2 fusion and streams scaled to [0, 1], and the choice's rank
 * among those searched. */
void search_coords(const acc_tune_space_t *sp, size_t index, double x[2], int *cat);

/* splitmix64: a small, seedable generator, so that a seed gives the same search everywhere. */
uint64_t search_rand(uint64_t *state);
double search_uniform(uint64_t *state); /* [0, 1) */
/* A stratified random design of n points: fusion and streams each cut into n strata visited
 * in independent random orders (a Latin hypercube over the grid), the choice cycling. */
acc_status_t search_design(search_t *s, size_t n, size_t **out);

acc_status_t search_bayes(search_t *s);
acc_status_t search_halving(search_t *s);

#endif
