/*
 * cplan_internal.h - a point of a class plan's grid with its coordinates worked out once, for
 * the expansion, which evaluates every operation of a class at every point (cplan.c,
 * cplan_expand.c).  Not installed.
 */
#ifndef CPLAN_INTERNAL_H
#define CPLAN_INTERNAL_H

#include "acc_cplan.h"

typedef struct {
    uint32_t point;                    /* row-major index */
    int32_t x[ACC_CPLAN_MAX_DIMS];     /* its coordinates */
    uint32_t step[ACC_CPLAN_MAX_DIMS]; /* each dimension's step in the index */
} cplan_at_t;

void cplan_at(const acc_cplan_t *cp, uint32_t point, cplan_at_t *at);
/* acc_cplan_peer_at and acc_cplan_ref_at at a prepared point. */
int cplan_peer_at(const acc_cplan_t *cp, int lane, const cplan_at_t *at, const acc_cpeer_t *peer);
acc_ref_t cplan_ref_at(const acc_cplan_t *cp, int lane, const cplan_at_t *at, const acc_cref_t *r);

#endif /* CPLAN_INTERNAL_H */
