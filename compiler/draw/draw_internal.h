/*
 * compiler/draw/draw_internal.h - what the files of a plan's picture share (acc_plan_draw_svg):
 * the plan's operations as a dependency graph with a time per operation, and the two panels.
 *
 *   plan_deps.c      every operation's predecessors (its lane's previous operation, its explicit
 *                    dependency, the send a receive takes, the signal a wait needs), times in
 *                    steps where nothing simulates them, and the critical path
 *   plan_graph.c     the graph panel: ranks on a circle, each lane's connections as arrows
 *   plan_timeline.c  the timeline panel: rank x lane rows, an operation a bar, the critical path
 *   plan_draw.c      the public entry point: simulate (or count steps), lay out, write
 */
#ifndef ACC_DRAW_INTERNAL_H
#define ACC_DRAW_INTERNAL_H

#include "acc_cost.h"

/* Operations are numbered rank by rank, lane by lane, in order: operation k of thread
 * t = rank x nlanes + lane is off[t] + k. */
typedef struct {
    const acc_plan_t *plan;
    size_t nops, nth;
    uint64_t *off; /* nth + 1 */
    int64_t *pred; /* 3 per operation: lane's previous, explicit dependency, peer's; -1 none */
    double *t;     /* 2 per operation: start, end (us, or steps) */
    uint8_t *crit; /* 1 on the critical path */
    uint8_t *wait; /* 1 for a wait (its signal may be dropped to break a cycle) */
    size_t ncrit;
    int simulated; /* t from the simulator (us), else steps */
    double end;    /* the last end */
} draw_deps_t;

acc_status_t draw_deps_build(const acc_plan_t *plan, draw_deps_t *d);
/* Times in steps: every operation one step, as soon as its predecessors are done. */
acc_status_t draw_deps_steps(draw_deps_t *d);
/* Mark the critical path: from the operation that ends last, back through the predecessor that
 * ended last, to one that waited for nothing. */
void draw_deps_critical(draw_deps_t *d);
void draw_deps_free(draw_deps_t *d);

/* The panels, from y on, w wide; each returns its height. */
double draw_plan_graph(acc_buf_t *b, const acc_plan_t *plan, double y, double w);
double draw_plan_timeline(acc_buf_t *b, const draw_deps_t *d, double y, double w);

#endif
