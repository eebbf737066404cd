/*
 * acc_compiler.h - the compiler: algorithm generators that turn a topology into plans, and
 * everything in acc_plan.h (the IR, its text form, verification, MSCCL XML, host execution).
 *
 * Algorithms are named everywhere (YAML, database, tune strings, logs), never referred to by
 * index.  Each is one file in compiler/algos/ exporting one acc_algo_t descriptor, listed in the
 * registry (compiler/algos/registry.c).  Generation is deterministic: the same topology and
 * arguments give the same plan, operation for operation.
 *
 * Conventions for errors, ownership and threads as in acc_common.h.
 */
#ifndef ACC_COMPILER_H
#define ACC_COMPILER_H

#include "acc_cplan.h"
#include "acc_plan.h"
#include "acc_topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Arguments of a generator; 0 / NULL means "the generator's default". */
typedef struct {
    int lanes;           /* parallel lanes (rings, trees, thread blocks) */
    int chunks;          /* chunks per rank, or pipeline depth */
    int root;            /* broadcast / reduce root (default 0) */
    const char *inner;   /* hierarchical: the intra-node algorithm name */
    const char *outer;   /* hierarchical: the inter-node algorithm name */
    acc_proto_t proto;   /* recorded in the plan for the cost model */
} acc_algo_args_t;

typedef struct acc_algo {
    const char *name;    /* "ring", "tree", "rhd", "oneshot", "twoshot", "hier", "direct", ... */
    acc_coll_t coll;
    const char *summary; /* one line for --list-algos */
    /* ACC_OK if the algorithm applies to this topology and these arguments; otherwise
     * ACC_ERR_UNSUPPORTED with a message saying why not (e.g. "needs every GPU pair on
     * NVLink/NVSwitch; GPU0-GPU4 is SYS"). */
    acc_status_t (*supports)(const acc_topo_t *topo, const acc_algo_args_t *args);
    /* Build the plan for all ranks of the topology (acc_topo_ranks). */
    acc_status_t (*build)(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out);
} acc_algo_t;

/* The registry: every algorithm, in a stable order. */
const acc_algo_t *const *acc_algo_list(size_t *count);
/* Look up by collective and name; NULL with a message listing the names that exist. */
const acc_algo_t *acc_algo_find(acc_coll_t coll, const char *name);
/* supports() then build() then acc_plan_verify(): every plan that leaves the compiler is
 * verified. */
acc_status_t acc_algo_generate(const acc_algo_t *algo, const acc_topo_t *topo,
                               const acc_algo_args_t *args, acc_plan_t **out);
/* Plans by rank class (acc_cplan.h).  Generators with a class form for the arguments
 * (acc_algo_has_class: ring allreduce, allgather and reduce_scatter; hier and hier_pipe with
 * outer=ring; rhd and rd allreduce, rh reduce_scatter and rd allgather on a power of two of
 * ranks; tree allreduce, tree and ring broadcast and reduce) build it directly, without an
 * explicit plan, and their build() is its expansion; for the others acc_algo_build_class
 * converts acc_algo_generate's plan (one class per rank). */
int acc_algo_has_class(const acc_algo_t *algo, const acc_topo_t *topo, const acc_algo_args_t *args);
acc_status_t acc_algo_build_class(const acc_algo_t *algo, const acc_topo_t *topo,
                                  const acc_algo_args_t *args, acc_cplan_t **out);
/* acc_algo_generate in class form: supports(), acc_algo_build_class(), then acc_cplan_verify()
 * against the topology (for generators without a class form, acc_algo_generate's proof);
 * proof (optional) says whether the proof ran on the quotient. */
acc_status_t acc_algo_generate_class(const acc_algo_t *algo, const acc_topo_t *topo,
                                     const acc_algo_args_t *args, acc_cplan_t **out,
                                     acc_cplan_proof_t *proof);
/* acc_algo_generate_class within acc_algo_generate_within's limits, which apply where the
 * proof lists the plan rank by rank (a generator without a class form, a class plan proven by
 * expansion), not to a proof by class. */
acc_status_t acc_algo_generate_class_within(const acc_algo_t *algo, const acc_topo_t *topo,
                                            const acc_algo_args_t *args, uint64_t max_ops,
                                            uint64_t max_locations, acc_cplan_t **out,
                                            acc_cplan_proof_t *proof);
/* acc_algo_generate, refusing (ACC_ERR_RANGE) a plan of more than max_ops operations (stopped
 * while it is built) or whose proof rank by rank would track more than max_locations chunk
 * locations (ranks x the chunks of its buffers; checked before the proof, and not asked of a
 * halving/doubling plan that is proven on one rank); 0: no limit but the verifier's own. */
acc_status_t acc_algo_generate_within(const acc_algo_t *algo, const acc_topo_t *topo,
                                      const acc_algo_args_t *args, uint64_t max_ops,
                                      uint64_t max_locations, acc_plan_t **out);
/* The plan of every algorithm of coll (ACC_COLL_COUNT: of every collective) that applies to
 * the topology, with its default arguments, in registry order, each through
 * acc_algo_generate.  ACC_ERR_NOT_FOUND when none applies.  *plans is taken: destroy each of
 * the *count plans, then acc_mem_free the array. */
acc_status_t acc_algo_generate_all(const acc_topo_t *topo, acc_coll_t coll, acc_plan_t ***plans,
                                   size_t *count);

#ifdef __cplusplus
}
#endif
#endif /* ACC_COMPILER_H */
