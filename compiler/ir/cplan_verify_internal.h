/*
 * cplan_verify_internal.h - the proof of a class plan on the quotient, split by stage:
 *   cplan_verify.c      entry point, which plans the quotient applies to (one class per lane over
 *                       the whole grid, relative peers, equivariant chunk ranges: the digits
 *                       below), the topology's symmetry, the fallback to acc_plan_verify;
 *   cplan_verify_sim.c  symbolic execution of one point per lane: values as sets of grid boxes,
 *                       messages as the point's own sends translated, the postcondition.
 * Not installed; used by these two files only.
 */
#ifndef CPLAN_VERIFY_INTERNAL_H
#define CPLAN_VERIFY_INTERNAL_H

#include "acc_cplan.h"

/* How translating the grid permutes a buffer's chunks.  A chunk index is read in mixed radix:
 * digit k is (c / stride) mod size, and a translation by t moves a COORD digit of dimension d
 * to (y + t_d) mod dims[d] and a RANK digit (a rank) to the rank at its point + t; the other
 * parts of c stay.  A chunk range is equivariant when it has exactly one term per digit, with the
 * digit's stride as coefficient, and its base has zero in every digit: then translating the
 * point by t maps the range of point x onto the image of the range under that permutation. */
#define CV_MAX_DIGITS 4
typedef struct {
    uint8_t kind; /* acc_cterm_kind_t */
    uint8_t dim;
    uint32_t stride;
    uint32_t size; /* dims[dim], or nranks for RANK */
} cv_digit_t;

typedef struct {
    uint32_t n;
    cv_digit_t d[CV_MAX_DIGITS];
} cv_digits_t;

/* One lane's proof: its class program, digits per logical buffer, the mode. */
typedef struct {
    const acc_cplan_t *cp;
    int lane;
    int inplace;
    const acc_cclass_t *cls;
    cv_digits_t dig[ACC_BUF_COUNT];
    /* Per storage x chunk key (storage * owner_size + key): the lane that writes it, -1 none. */
    const int32_t *owner;
    uint32_t owner_size;
} cv_lane_t;

/* The storage a logical buffer lives in, in the lane's mode. */
uint8_t cv_storage(const acc_cplan_t *cp, int inplace, uint8_t buf);
/* Chunk c of logical buffer buf with its digits zeroed: the same for all chunks translations
 * carry it to (and, in place, for the storage chunk it aliases). */
uint32_t cv_key(const cv_lane_t *L, uint8_t buf, uint32_t c);

/* The permutation of chunk c of logical buffer buf under the translation t (a row-major point
 * index, as an offset). */
uint32_t cv_permute(const cv_lane_t *L, uint8_t buf, uint32_t c, uint32_t t);
/* The point index of p + t (both row-major indices; t an offset). */
uint32_t cv_translate(const acc_cplan_t *cp, uint32_t p, uint32_t t);
/* The offset of a relative peer as a row-major index (each component mod its dimension). */
uint32_t cv_offset(const acc_cplan_t *cp, const acc_cpeer_t *peer);
/* -t as an offset. */
uint32_t cv_negate(const acc_cplan_t *cp, uint32_t t);

/* Digits (cplan_verify.c): learn those of range r into L (0, with why, when two ranges of a
 * buffer disagree); give an allreduce's input and output each other's; are a buffer's digits
 * in separate places of the mixed radix? */
int cv_learn_digits(cv_lane_t *L, const acc_cref_t *r, char *why, size_t cap);
int cv_share_digits(cv_lane_t *L, char *why, size_t cap);
int cv_digits_disjoint(const cv_digits_t *g);
/* Does translating the point by any t map range r onto its image under L's digits' permutation
 * (as a set)? */
int cv_equivariant(const cv_lane_t *L, const acc_cref_t *r);

/* The proof on a period of ranks (cplan_verify_period.c), for plans the lock step of one point
 * does not take (peer memory and signals inside a node, a class per position along it): when
 * the plan is the same moved by a period of ranks (acc_cplan_quotient), the explicit verifier
 * runs that period alone in each buffer mode, every other rank being a translate.  *applies 0,
 * with why, when the plan has no such period or moving it does not map it onto itself (then
 * it is expanded); otherwise the verifier's decision.  *period receives the period. */
acc_status_t cv_prove_period(const acc_cplan_t *cp, char *why, size_t cap, int *applies,
                             int *period);

/* The proof on one rank of a plan that pairs ranks by XOR (cplan_verify_xor.c): in halving and
 * doubling's shape (cplan_xor_shaped), its operations at each rank rank 0's moved by XOR
 * (plan_verify_xor_by).  *applies 0, with why, when it is not such a plan; otherwise the
 * verifier's decision. */
acc_status_t cv_prove_xor(const acc_cplan_t *cp, char *why, size_t cap, int *applies);

/* Run lane L's program at point 0, every other point being its translate: ACC_OK, or
 * ACC_ERR_VERIFY naming the operation and what went wrong, as acc_plan_verify would reject
 * the expansion. */
acc_status_t cv_sim_lane(const cv_lane_t *L);

#endif /* CPLAN_VERIFY_INTERNAL_H */
