/*
 * compiler/select_internal.h - what the table builder's files share: the parameter variants of
 * the generators (select_variants.c) and size formatting for the reports.
 */
#ifndef SELECT_INTERNAL_H
#define SELECT_INTERNAL_H

#include "acc_compiler.h"
#include "acc_kernels.h"
#include "acc_select.h"

/* An inner x outer pair of a hierarchical generator; both NULL for flat ones. */
typedef struct {
    const char *inner, *outer; /* static strings */
} select_pair_t;

#define SELECT_PAIRS_MAX 16

/* The pairs worth trying with this generator on this topology (each accepted by supports());
 * one NULL pair for flat generators.  Returns how many were written to out. */
size_t select_pairs(const acc_topo_t *topo, const acc_algo_t *algo, select_pair_t *out);

/* The variants of one generator and pair besides its default, in two steps (see
 * select_variants.c).  def_params are the params of the default plan (base's lanes and chunks
 * left 0), which tell the default lanes and chunks ("lanes=2 chunks=1 ...").  First the lanes
 * line: every lane count up to max_lanes at the default chunks; then, for a lane count that
 * won somewhere, the other chunk counts.  Fewer on large topologies.  Each variant is accepted
 * by supports(); *out is taken by the caller (acc_mem_free). */
acc_status_t select_lane_variants(const acc_topo_t *topo, const acc_algo_t *algo,
                                  const acc_algo_args_t *base, const char *def_params,
                                  int max_lanes, acc_algo_args_t **out, size_t *n);
acc_status_t select_chunk_variants(const acc_topo_t *topo, const acc_algo_t *algo,
                                   const acc_algo_args_t *base, const char *def_params, int lanes,
                                   acc_algo_args_t **out, size_t *n);

/* ---- the sweep (select_sweep.c) ---------------------------------------------------------- */

#define SELECT_THREADS_MAX 16

/* acc's best candidate at one size. */
typedef struct {
    int var;      /* its slot; -1: none yet */
    uint64_t key; /* its position among candidates, for ties: var x protocols + protocol */
    acc_proto_t proto;
    acc_sim_result_t r; /* its simulation */
    double measured_us; /* its measured time; < 0 none */
} select_best_t;

/* The time a best candidate stands for: measured where it was. */
static inline double select_best_us(const select_best_t *b)
{
    return b->measured_us >= 0 ? b->measured_us : b->r.time_us;
}

/* A variant: its plan, alive while it holds a size (or is being simulated). */
typedef struct {
    acc_plan_t *plan;   /* what the simulator plays: the plan, or by class its quotient */
    acc_cplan_t *cplan; /* by class: the class plan; else NULL */
    size_t wins; /* sizes it holds */
    size_t ops;  /* its plan's operations */
    int lanes;   /* its plan's lanes, kept after the plan is freed */
    int group;   /* its generator and inner/outer pair */
    int active;  /* generated and not yet swept, or being swept */
} select_slot_t;

typedef struct {
    /* in */
    const acc_topo_t *topo;
    const uint64_t *sizes;
    size_t nsizes;
    acc_dtype_t dtype;
    int max_lanes, exhaustive;
    acc_sim_t *const *sims; /* one per thread */
    int nthreads;
    const acc_select_measured_t *measured; /* borrowed, any collectives */
    size_t nmeasured;
    /* out */
    select_best_t *best;  /* nsizes, allocated by the caller */
    select_slot_t *slots; /* every variant tried; free with select_sweep_free */
    size_t nslots, cap;
    size_t variants, simulations;
    char **left_out; /* by class: a line per generator left out, and why */
    size_t nleft_out, left_out_cap;
} select_sweep_t;

/* By class, a generator without a class form is built, proven and simulated rank by rank
 * only where its plan has at most SELECT_CLASS_OPS operations (stopped while it is built) and
 * its proof tracks at most SELECT_CLASS_LOCATIONS chunk locations (24 bytes each, 768 MiB),
 * unless it is proven on one rank (halving and doubling on a power-of-two rank count,
 * plan_verify_xor); otherwise it is left out.  A sweep by class is for clusters of thousands of
 * ranks, where an explicit plan costs what every rank's operations cost at every size swept: at
 * 65,536 ranks a hierarchical allreduce with a tree between nodes has 17.6 million operations,
 * takes 29 s to build and 40-80 s per size to simulate on nodes of 64 GPUs sharing 8 NICs;
 * halving-doubling's proof rank by rank at 8,192 ranks took a minute and 10 GiB (one rank's: 0.06
 * s).  A million operations keeps recursive doubling and trees up to 16,384-32,768 ranks. */
#define SELECT_CLASS_OPS       (1ull << 20)
#define SELECT_CLASS_LOCATIONS (1ull << 25)

/* A size keeps the next smaller size's plan when that plan is at most this much slower there
 * than the best (0.5 %). */
#define SELECT_KEEP 0.005

/* Generate, verify and simulate every variant of every generator of coll (see
 * select_sweep.c), filling best[] and slots[]; the plans best[] names stay alive. */
acc_status_t select_sweep(select_sweep_t *sw, acc_coll_t coll);
void select_sweep_free(select_sweep_t *sw);

/* Is a protocol worth simulating for a plan of `ops` operations on this topology?  Never when
 * acc has no kernel for the plan with it (acc_kernel_supports). */
int select_proto_worth(const acc_topo_t *topo, const acc_plan_t *plan, size_t ops,
                       acc_proto_t proto);

/* The most lanes worth trying on this topology. */
int select_lanes_cap(const acc_topo_t *topo);

/* params without the ring order ("ring=0,1,3,2"), which is long and only matters to a reader of
 * the plan itself. */
void select_short_params(const char *params, char *out, size_t cap);

/* "1K", "64K", "1M", "4G", "3000": a size in binary units when it divides evenly. */
void select_size_name(uint64_t bytes, char *out, size_t cap);

#endif /* SELECT_INTERNAL_H */
