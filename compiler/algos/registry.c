/*
 * The registry: every algorithm generator, in a stable order (by collective, then roughly from
 * the most general to the most specialised), looked up by name.  acc_algo_generate() is the one
 * way plans leave the compiler: supports, build, then the verifier.
 */
#include "acc_compiler.h"
#include "algo_util.h"
#include "../ir/cplan_internal.h"

#include <string.h>

extern const acc_algo_t algo_allreduce_ring, algo_allreduce_tree, algo_allreduce_rhd,
    algo_allreduce_rd, algo_allreduce_oneshot, algo_allreduce_twoshot, algo_allreduce_hier,
    algo_allreduce_hier_pipe, algo_allgather_ring, algo_allgather_direct, algo_allgather_rd,
    algo_allgather_hier, algo_reduce_scatter_ring, algo_reduce_scatter_direct,
    algo_reduce_scatter_rh, algo_reduce_scatter_hier, algo_broadcast_ring, algo_broadcast_tree,
    algo_reduce_ring, algo_reduce_tree;

static const acc_algo_t *const algos[] = {
    &algo_allreduce_ring,      &algo_allreduce_tree,        &algo_allreduce_rhd,
    &algo_allreduce_rd,        &algo_allreduce_oneshot,     &algo_allreduce_twoshot,
    &algo_allreduce_hier,      &algo_allreduce_hier_pipe,   &algo_allgather_ring,
    &algo_allgather_direct,    &algo_allgather_rd,          &algo_allgather_hier,
    &algo_reduce_scatter_ring, &algo_reduce_scatter_direct, &algo_reduce_scatter_rh,
    &algo_reduce_scatter_hier, &algo_broadcast_ring,        &algo_broadcast_tree,
    &algo_reduce_ring,         &algo_reduce_tree,
};

const acc_algo_t *const *acc_algo_list(size_t *count)
{
    *count = sizeof(algos) / sizeof(algos[0]);
    return algos;
}

const acc_algo_t *acc_algo_find(acc_coll_t coll, const char *name)
{
    acc_buf_t known;
    size_t i;

    for (i = 0; name && i < sizeof(algos) / sizeof(algos[0]); i++)
        if (algos[i]->coll == coll && strcmp(algos[i]->name, name) == 0)
            return algos[i];
    acc_buf_init(&known);
    for (i = 0; i < sizeof(algos) / sizeof(algos[0]); i++)
        if (algos[i]->coll == coll)
            acc_buf_printf(&known, "%s%s", known.len ? ", " : "", algos[i]->name);
    acc_error_set(ACC_ERR_NOT_FOUND, "no %s algorithm named '%s' (known: %s)", acc_coll_name(coll),
                  name ? name : "", known.data ? known.data : "none");
    acc_buf_free(&known);
    return NULL;
}

acc_status_t algo_check_memory(const acc_topo_t *topo, acc_coll_t coll, const char *name,
                               const acc_algo_args_t *args, const char *what)
{
    uint64_t n = (uint64_t)acc_topo_ranks(topo), nodes = (uint64_t)acc_topo_nodes(topo);
    uint64_t phases, ops, lanes = args && args->lanes > 0 ? (uint64_t)args->lanes : 1, around;
    int hier = strcmp(name, "hier") == 0 || strcmp(name, "hier_pipe") == 0;
    char text[256];

    if (strcmp(name, "ring") == 0)
        around = n;
    else if (hier && (!args || !args->outer || strcmp(args->outer, "ring") == 0))
        around = nodes;
    else
        return ACC_OK;
    if (coll == ACC_COLL_ALLREDUCE)
        phases = 2;
    else if (coll == ACC_COLL_ALLGATHER || coll == ACC_COLL_REDUCE_SCATTER)
        phases = 1;
    else
        return ACC_OK;
    ops = phases * n * (around > 0 ? around - 1 : 0) * lanes;
    snprintf(text, sizeof(text), "%s %s on %llu ranks (a ring over every %s%s has %.3g operations)",
             what, acc_coll_name(coll), (unsigned long long)n, hier ? "node" : "rank",
             lanes > 1 ? "" : " alone", (double)ops);
    return acc_mem_check(ops * 2 * sizeof(acc_op_t), text,
                         "acc's plans list every rank's operations, so flat ones grow with the "
                         "square of the rank count; build tables for fewer ranks (fewer nodes) "
                         "and let NCCL serve larger jobs");
}

/* The error of a generated plan that did not verify (or could not be verified). */
static acc_status_t not_verified(const acc_algo_t *algo, acc_status_t st)
{
    return acc_error_prefix(st,
                            st == ACC_ERR_VERIFY ? "%s %s generated a plan that does not verify: "
                                                 : "%s %s: verifying its plan: ",
                            acc_coll_name(algo->coll), algo->name);
}

acc_status_t acc_algo_generate(const acc_algo_t *algo, const acc_topo_t *topo,
                               const acc_algo_args_t *args, acc_plan_t **out)
{
    return acc_algo_generate_within(algo, topo, args, 0, 0, out);
}

acc_status_t acc_algo_generate_within(const acc_algo_t *algo, const acc_topo_t *topo,
                                      const acc_algo_args_t *args, uint64_t max_ops,
                                      uint64_t max_locations, acc_plan_t **out)
{
    acc_plan_t *plan = NULL;
    acc_status_t st;

    *out = NULL;
    if ((st = algo->supports(topo, args)) != ACC_OK ||
        (st = algo_check_memory(topo, algo->coll, algo->name, args, "the plan of")) != ACC_OK)
        return st;
    plan_op_limit(max_ops);
    st = algo->build(topo, args, &plan);
    plan_op_limit(0);
    if (st != ACC_OK)
        return acc_error_prefix(st, "%s %s: ", acc_coll_name(algo->coll), algo->name);
    if (plan_locations_within(plan->nranks, plan->in_chunks, plan->out_chunks, plan->scratch_chunks,
                              max_locations) != ACC_OK) {
        /* Halving and doubling are proven on one rank's chunks (plan_verify_xor). */
        char why[256];
        int applies = 0;
        st = plan_verify_xor(plan, &applies, why, sizeof(why));
        if (applies && st == ACC_OK) {
            *out = plan;
            return ACC_OK;
        }
        if (st == ACC_OK) /* said again: the attempt may have replaced the message */
            st = acc_error_prefix(plan_locations_within(plan->nranks, plan->in_chunks,
                                                        plan->out_chunks, plan->scratch_chunks,
                                                        max_locations),
                                  "%s %s: ", acc_coll_name(algo->coll), algo->name);
        else
            st = not_verified(algo, st);
        acc_plan_destroy(plan);
        return st;
    }
    /* Every plan that leaves the compiler is proven correct first. */
    if ((st = acc_plan_verify(plan)) != ACC_OK) {
        acc_plan_destroy(plan);
        return not_verified(algo, st);
    }
    *out = plan;
    return ACC_OK;
}

static const algo_class_form_t *const class_forms[] = {
    &algo_allreduce_ring_class,      &algo_allgather_ring_class, &algo_reduce_scatter_ring_class,
    &algo_allreduce_hier_class,      &algo_allgather_hier_class, &algo_reduce_scatter_hier_class,
    &algo_allreduce_hier_pipe_class, &algo_allreduce_rhd_class,  &algo_allreduce_rd_class,
    &algo_reduce_scatter_rh_class,   &algo_allgather_rd_class,   &algo_allreduce_tree_class,
    &algo_broadcast_tree_class,      &algo_broadcast_ring_class, &algo_reduce_tree_class,
    &algo_reduce_ring_class,
};

static const algo_class_form_t *class_form(const acc_algo_t *algo)
{
    size_t i;
    for (i = 0; i < sizeof(class_forms) / sizeof(class_forms[0]); i++)
        if (class_forms[i]->algo == algo)
            return class_forms[i];
    return NULL;
}

int acc_algo_has_class(const acc_algo_t *algo, const acc_topo_t *topo, const acc_algo_args_t *args)
{
    const algo_class_form_t *f = class_form(algo);
    return f && (!f->covers || f->covers(topo, args));
}

acc_status_t acc_algo_build_class(const acc_algo_t *algo, const acc_topo_t *topo,
                                  const acc_algo_args_t *args, acc_cplan_t **out)
{
    acc_plan_t *plan = NULL;
    acc_status_t st;

    *out = NULL;
    if (acc_algo_has_class(algo, topo, args))
        return algo_class_build(class_form(algo), topo, args, out);
    /* Without a class form the plan is listed and proven rank by rank, within the explicit
     * form's limits, as acc_algo_generate does. */
    if ((st = acc_algo_generate(algo, topo, args, &plan)) != ACC_OK)
        return st;
    st = acc_cplan_from_plan(plan, out);
    acc_plan_destroy(plan);
    return st;
}

acc_status_t acc_algo_generate_class(const acc_algo_t *algo, const acc_topo_t *topo,
                                     const acc_algo_args_t *args, acc_cplan_t **out,
                                     acc_cplan_proof_t *proof)
{
    return acc_algo_generate_class_within(algo, topo, args, 0, 0, out, proof);
}

acc_status_t acc_algo_generate_class_within(const acc_algo_t *algo, const acc_topo_t *topo,
                                            const acc_algo_args_t *args, uint64_t max_ops,
                                            uint64_t max_locations, acc_cplan_t **out,
                                            acc_cplan_proof_t *proof)
{
    acc_cplan_t *cp = NULL;
    acc_status_t st;

    *out = NULL;
    if (proof)
        memset(proof, 0, sizeof(*proof));
    if ((st = algo->supports(topo, args)) != ACC_OK)
        return st;
    if (!acc_algo_has_class(algo, topo, args)) {
        /* Listed and proven rank by rank, within the limits, then converted. */
        acc_plan_t *plan = NULL;
        if ((st = acc_algo_generate_within(algo, topo, args, max_ops, max_locations, &plan)) ==
            ACC_OK)
            st = acc_cplan_from_plan(plan, out);
        acc_plan_destroy(plan);
        if (st == ACC_OK && proof) {
            proof->orbits = (uint32_t)(*out)->nranks * (uint32_t)(*out)->nlanes;
            snprintf(proof->why, sizeof(proof->why), "%s %s has no class form for these arguments",
                     acc_coll_name(algo->coll), algo->name);
        }
        return st;
    }
    if ((st = acc_algo_build_class(algo, topo, args, &cp)) != ACC_OK)
        return acc_error_prefix(st, "%s %s: ", acc_coll_name(algo->coll), algo->name);
    if ((st = cplan_verify_within(cp, topo, max_ops, max_locations, proof)) != ACC_OK) {
        acc_cplan_destroy(cp);
        return st == ACC_ERR_RANGE
                   ? acc_error_prefix(st, "%s %s: ", acc_coll_name(algo->coll), algo->name)
                   : not_verified(algo, st);
    }
    *out = cp;
    return ACC_OK;
}

acc_status_t acc_algo_generate_all(const acc_topo_t *topo, acc_coll_t coll, acc_plan_t ***out,
                                   size_t *count)
{
    const size_t n = sizeof(algos) / sizeof(algos[0]);
    acc_plan_t **plans = acc_mem_calloc(n, sizeof(*plans));
    size_t i, m = 0;
    acc_status_t st = ACC_OK;

    *out = NULL;
    *count = 0;
    if (!plans)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory generating plans");
    for (i = 0; i < n && st == ACC_OK; i++) {
        if ((coll != ACC_COLL_COUNT && algos[i]->coll != coll) ||
            algos[i]->supports(topo, NULL) != ACC_OK)
            continue;
        if ((st = acc_algo_generate(algos[i], topo, NULL, &plans[m])) == ACC_OK)
            m++;
    }
    if (st == ACC_OK && !m)
        st = acc_error_set(ACC_ERR_NOT_FOUND, "no algorithm applies to %s%s%s",
                           acc_topo_source(topo), coll != ACC_COLL_COUNT ? " for " : "",
                           coll != ACC_COLL_COUNT ? acc_coll_name(coll) : "");
    if (st != ACC_OK) {
        while (m > 0)
            acc_plan_destroy(plans[--m]);
        acc_mem_free(plans);
        return st;
    }
    *out = plans;
    *count = m;
    return ACC_OK;
}
