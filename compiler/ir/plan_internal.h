/*
 * plan_internal.h - what the plan's files (plan.c, plan_view.c, cplan*.c) share beyond
 * acc_plan.h.  Not installed.
 */
#ifndef PLAN_INTERNAL_H
#define PLAN_INTERNAL_H

#include "acc_plan.h"

/* The header fields a plan's copy keeps besides its shape (acc_plan_create's arguments): the
 * root, algorithm, parameters, slots, protocol and whether it runs in place. */
void plan_copy_header(acc_plan_t *dst, const acc_plan_t *src);

#endif /* PLAN_INTERNAL_H */
