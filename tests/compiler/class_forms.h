/*
 * class_forms.h - what the tests of plans by rank class share: the generators with a class
 * form, the arguments each class form covers, and loading a topology.  Header-only: each test
 * program that includes it gets its own static copy.
 */
#ifndef CLASS_FORMS_H
#define CLASS_FORMS_H

#include "acc_compiler.h"
#include "acc_cost.h"
#include "acc_test.h"
#include "algos/algo_util.h"
#include "plan_fixtures.h"

#include <math.h>
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

/* The mutations of order every class program takes alike, on operation i of class c: drop it
 * (how 0), duplicate it (1; cf_room made space) or swap it with the next (2).  0 when there is
 * no next to swap with. */
static inline int cf_mutate_order(acc_cclass_t *c, uint32_t i, int how, const char **kind)
{
    if (how == 0) {
        *kind = "drop";
        memmove(&c->ops[i], &c->ops[i + 1], (c->nops - i - 1) * sizeof(acc_cop_t));
        c->nops--;
    } else if (how == 1) {
        *kind = "duplicate";
        memmove(&c->ops[i + 1], &c->ops[i], (c->nops - i) * sizeof(acc_cop_t));
        c->nops++;
    } else {
        acc_cop_t t;
        if (i + 1 >= c->nops)
            return 0;
        *kind = "swap";
        t = c->ops[i];
        c->ops[i] = c->ops[i + 1];
        c->ops[i + 1] = t;
    }
    return 1;
}

/* A random mutation of a class plan; its name in *kind; 0 when it found nothing to change. */
typedef int (*cf_mutate_fn)(acc_cplan_t *cp, fx_rng_t *g, const char **kind);

/* Form f's class plan on desc with args, mutated and proven both ways (cf_agree); 0 when the
 * mutation found nothing to change (nothing is counted). */
static inline int cf_mutation(const algo_class_form_t *f, const char *desc,
                              const acc_algo_args_t *args, fx_rng_t *g, cf_mutate_fn mutate,
                              const char **kind, int *by_class, int *rejected)
{
    acc_topo_t *t = cf_load(desc);
    acc_cplan_t *cp = NULL;
    int done;
    CHECK_OK(algo_class_build(f, t, args, &cp));
    cf_room(cp);
    if ((done = mutate(cp, g, kind)) != 0)
        cf_agree(cp, desc, *kind, by_class, rejected);
    acc_cplan_destroy(cp);
    acc_topo_destroy(t);
    return done;
}

/* What a mutation test asserts: at least min_total mutations, at least half rejected by both
 * proofs (a mutation mostly breaks a plan), and at least half decided without the expansion
 * (on `where`: "the quotient", "one rank"). */
static inline void cf_mutations_check(int total, int rejected, int decided, int min_total,
                                      const char *where)
{
    printf("%d mutations: %d rejected by both, %d decided on %s\n", total, rejected, decided,
           where);
    CHECK(total >= min_total);
    CHECK_MSG(decided * 2 >= total, "only %d of %d mutations decided on %s", decided, total, where);
    CHECK(rejected * 2 >= total);
}

/* A whole plan and its quotient simulated alike at bytes with protocol proto: equal times (to
 * tol, relative), link utilisation (to 10 tol) and transfer counts. */
static inline void cf_sim_agree(acc_sim_t *sim, acc_plan_t *whole, acc_plan_t *quot,
                                acc_proto_t proto, uint64_t bytes, double tol, const char *desc)
{
    acc_sim_result_t a, b;
    whole->proto = quot->proto = proto;
    CHECK_OK(acc_sim_plan(sim, whole, bytes, ACC_DT_F32, &a));
    CHECK_OK(acc_sim_plan(sim, quot, bytes, ACC_DT_F32, &b));
    CHECK_MSG(fabs(a.time_us - b.time_us) <= tol * a.time_us,
              "%s: %s %s (%s) %s at %llu bytes: whole %.6f us, quotient %.6f us", desc,
              acc_coll_name(whole->coll), whole->algo, whole->params, acc_proto_name(proto),
              (unsigned long long)bytes, a.time_us, b.time_us);
    CHECK_MSG(fabs(a.link_util - b.link_util) <= tol * 10, "%s: utilisation %.6f / %.6f", desc,
              a.link_util, b.link_util);
    CHECK_INT((long long)b.transfers, (long long)a.transfers);
}

#endif /* CLASS_FORMS_H */
