/*
 * class_forms.h - what the tests of plans by rank class share: the generators with a class
 * form, the arguments each class form covers, and loading a topology.  Header-only: each test
 * program that includes it gets its own static copy.
 */
#ifndef CLASS_FORMS_H
#define CLASS_FORMS_H

#include "acc_compiler.h"
#include "acc_test.h"
#include "algos/algo_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline acc_topo_t *cf_load(const char *src)
{
    acc_topo_t *t = NULL;
    CHECK_MSG(acc_topo_load(src, &t) == ACC_OK, "%s: %s", src, acc_error_message());
    return t;
}

static const algo_class_form_t *const cf_forms[] = {
    &algo_allreduce_ring_class,      &algo_allgather_ring_class,
    &algo_reduce_scatter_ring_class, &algo_allreduce_hier_class,
    &algo_allreduce_hier_class,      &algo_allgather_hier_class,
    &algo_reduce_scatter_hier_class, &algo_allreduce_hier_pipe_class,
    &algo_allreduce_hier_pipe_class,
};
#define CF_NFORMS (sizeof(cf_forms) / sizeof(cf_forms[0]))
/* hier allreduce twice: rings inside nodes, and peer memory (where the nodes have NVLink);
 * hier allgather and reduce_scatter with peer memory; hier_pipe (dependencies between lanes)
 * with peer memory and with rings. */
static const char *const cf_inner[CF_NFORMS] = {NULL,     NULL,     NULL,     "ring", "direct",
                                                "direct", "direct", "direct", "ring"};

/* Does cf_forms[f] have its class form for args?  Always, but for hier_pipe with an odd number
 * of inner lanes and outer ones (an outer lane would carry rounds of both directions). */
static inline int cf_has_class(size_t f, const acc_topo_t *t, const acc_algo_args_t *args)
{
    int has = acc_algo_has_class(cf_forms[f]->algo, t, args);
    CHECK(has || cf_forms[f] == &algo_allreduce_hier_pipe_class);
    return has;
}

/* The arguments the class form of cf_forms[f] covers: hier's with rings between nodes. */
static inline acc_algo_args_t cf_args(size_t f, int lanes, int chunks)
{
    acc_algo_args_t args;
    memset(&args, 0, sizeof(args));
    args.lanes = lanes;
    args.chunks = chunks;
    if (cf_inner[f]) {
        args.inner = cf_inner[f];
        args.outer = "ring";
    }
    return args;
}

/* Room in every class for one more operation (a mutation that duplicates one). */
static inline void cf_room(acc_cplan_t *cp)
{
    for (int l = 0; l < cp->nlanes; l++)
        for (uint32_t k = 0; k < cp->lanes[l].nclasses; k++) {
            acc_cclass_t *c = &cp->lanes[l].classes[k];
            acc_cop_t *grown = acc_mem_realloc_array(c->ops, c->nops + 1, sizeof(acc_cop_t));
            CHECK(grown != NULL);
            c->ops = grown;
            c->cap = c->nops + 1;
        }
}

/* A mutated class plan proven both ways, which must agree; *by_class: whether the class
 * proof decided without expanding, *rejected: whether both rejected it. */
static inline void cf_agree(acc_cplan_t *cp, const char *what, const char *kind, int *by_class,
                            int *rejected)
{
    acc_plan_t *p = NULL;
    acc_cplan_proof_t proof;
    acc_status_t se, sc;
    CHECK_OK(acc_cplan_expand(cp, &p));
    se = acc_plan_verify(p);
    sc = acc_cplan_verify(cp, NULL, &proof);
    CHECK_MSG((se == ACC_OK) == (sc == ACC_OK),
              "%s %s, %s: the explicit verifier %s, the class verifier %s (%s)", what,
              acc_coll_name(cp->coll), kind, se == ACC_OK ? "accepts" : "rejects",
              sc == ACC_OK ? "accepts" : "rejects", acc_error_message());
    if (getenv("CPLAN_DEBUG") && !proof.by_class)
        printf("%s: %s\n", kind, proof.why);
    *by_class = proof.by_class;
    *rejected = se != ACC_OK;
    acc_plan_destroy(p);
}

#endif /* CLASS_FORMS_H */
