/*
 * The proof of a class plan on a period of its ranks (compiler/ir/cplan_verify_period.c): hier
 * allreduce, allgather and reduce_scatter with peer memory inside their nodes (the default hier
 * on NVLink nodes: signals, puts and reductions over a node's GPUs, a class per position in the
 * node), and hier_pipe (whose lanes wait for each other through dependencies), are proven on
 * one node, every other node a translate.  It agrees with acc_plan_verify on the expansion:
 * unmutated plans are accepted, and over 300 random mutations of any position's program (a
 * dropped, duplicated or swapped operation, a wrong peer, slot, counter value or chunk, a
 * missing dependency) both verifiers take the same decision every time, most of them on the
 * period.
 */
#include "acc_test.h"

#include "acc_compiler.h"
#include "class_forms.h"
#include "plan_fixtures.h"

#include <stdlib.h>
#include <string.h>

/* cf_forms' hier allreduce, allgather, reduce_scatter and hier_pipe with inner=direct */
enum { HIER_DIRECT = 4, HIER_DIRECT_END = 8 };

ACC_TEST(hier_direct_proven_on_one_node)
{
    static const char *const descs[] = {
        "nodes=2 gpus=2 nvlink=18 nic=2x400", "nodes=3 gpus=4 nvlink=18 nic=4x400",
        "nodes=4 gpus=8 nvlink=18 nic=8x400", "nodes=5 gpus=3 nvlink=18 nic=3x400",
        "nodes=16 gpus=8 nvlink=18 nic=8x400"};
    CHECK_INT(CF_NFORMS, HIER_DIRECT_END + 1);
    for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
        acc_topo_t *t = cf_load(descs[i]);
        for (int f = HIER_DIRECT; f < HIER_DIRECT_END; f++)
            for (int lanes = 1; lanes <= 3; lanes++) {
                acc_algo_args_t args = cf_args((size_t)f, lanes, 1 + lanes % 2);
                const acc_algo_t *algo = cf_forms[f]->algo;
                acc_cplan_t *cp = NULL;
                acc_plan_t *p = NULL;
                acc_cplan_proof_t proof;
                CHECK(!strcmp(cf_inner[f], "direct"));
                if (!cf_has_class((size_t)f, t, &args))
                    continue;
                CHECK_MSG(acc_algo_generate_class(algo, t, &args, &cp, &proof) == ACC_OK, "%s: %s",
                          descs[i], acc_error_message());
                CHECK_MSG(proof.by_class, "%s %s lanes=%d: by_class 0 (%s)", descs[i],
                          acc_coll_name(algo->coll), lanes, proof.why);
                /* One node per lane ran. */
                CHECK_INT(proof.orbits, acc_topo_gpus_per_node(t) * lanes);
                CHECK_OK(acc_cplan_expand(cp, &p));
                CHECK_OK(acc_plan_verify(p));
                acc_plan_destroy(p);
                acc_cplan_destroy(cp);
            }
        acc_topo_destroy(t);
    }
}

/* One random mutation of a random position's program. */
static int mutate(acc_cplan_t *cp, fx_rng_t *g, const char **kind)
{
    acc_clane_t *ln = &cp->lanes[fx_rnd(g, (uint32_t)cp->nlanes)];
    acc_cclass_t *c = &ln->classes[fx_rnd(g, ln->nclasses)];
    uint32_t i = fx_rnd(g, c->nops);
    acc_cop_t *o = &c->ops[i];
    acc_cref_t *r;
    uint32_t how = fx_rnd(g, 8);

    switch (how) {
    case 7:
        /* hier_pipe's lanes wait for each other through nops with dependencies. */
        for (uint32_t k = 0; k < c->nops; k++) {
            acc_cop_t *d = &c->ops[(i + k) % c->nops];
            if (d->dep_lane < 0)
                continue;
            *kind = "missing dependency";
            d->dep_lane = d->dep_op = -1;
            return 1;
        }
        return 0;
    case 0:
    case 1:
    case 2:
        return cf_mutate_order(c, i, (int)how, kind);
    case 3:
        /* Another peer in the node (dimension 1) or on the rail (dimension 0). */
        if (o->peer.kind != ACC_CPEER_REL)
            return 0;
        *kind = "wrong peer";
        o->peer.v[fx_rnd(g, 2)] += fx_rnd(g, 2) ? 1 : -1;
        return 1;
    case 4:
        if (o->code != ACC_OP_SIGNAL && o->code != ACC_OP_WAIT)
            return 0;
        *kind = "wrong slot";
        o->slot ^= 1;
        return 1;
    case 5:
        if (o->code != ACC_OP_WAIT)
            return 0;
        *kind = "wrong value";
        o->value = fx_rnd(g, 2) ? o->value + 1 : o->value - 1;
        return 1;
    default:
        r = o->dst.cnt && (!o->src.cnt || fx_rnd(g, 2)) ? &o->dst : &o->src;
        if (!r->cnt)
            return 0;
        *kind = "wrong chunk";
        if (r->nterms && fx_rnd(g, 2))
            r->term[fx_rnd(g, r->nterms)].add += fx_rnd(g, 2) ? 1 : -1;
        else
            r->base = r->base ? r->base - 1 : r->base + 1;
        return 1;
    }
}

ACC_TEST(period_mutations_agree)
{
    static const char *const descs[] = {
        "nodes=2 gpus=2 nvlink=18 nic=2x400", "nodes=2 gpus=4 nvlink=18 nic=4x400",
        "nodes=3 gpus=4 nvlink=18 nic=4x400", "nodes=4 gpus=3 nvlink=18 nic=3x400",
        "nodes=4 gpus=8 nvlink=18 nic=8x400", "nodes=64 gpus=8 nvlink=18 nic=8x400"};
    fx_rng_t g = {0x2545f4914f6cdd1dull};
    int total = 0, period = 0, rejected = 0, tries, deps = 0, deps_rejected = 0;

    for (tries = 0; (total < 300 || deps < 20) && tries < 6000; tries++) {
        /* The 512-rank plans are few: each explicit proof of one takes a while. */
        size_t di = fx_rnd(&g, 30) == 0 ? 5 : fx_rnd(&g, 5);
        size_t fi = HIER_DIRECT + fx_rnd(&g, HIER_DIRECT_END - HIER_DIRECT);
        acc_algo_args_t args = cf_args(fi, 1 + (int)fx_rnd(&g, 2), 1 + (int)fx_rnd(&g, 2));
        const char *kind = "";
        int by_class, rej;

        if (!cf_mutation(cf_forms[fi], descs[di], &args, &g, mutate, &kind, &by_class, &rej))
            continue;
        total++;
        period += by_class;
        rejected += rej;
        deps += !strcmp(kind, "missing dependency");
        deps_rejected += rej && !strcmp(kind, "missing dependency");
    }
    printf("%d mutations: %d rejected by both, %d decided on one node; %d missing dependencies, "
           "%d of them rejected\n",
           total, rejected, period, deps, deps_rejected);
    CHECK(deps >= 20 && deps_rejected >= 1);
    CHECK(total >= 300);
    /* A mutation changes one position on every node alike: the period must decide most. */
    CHECK_MSG(period * 2 >= total, "only %d of %d mutations decided on one node", period, total);
    CHECK(rejected * 2 >= total);
}

/* 8,192 ranks (1,024 nodes of 8): one node proven for each collective; allreduce also at
 * 65,536 (8,192 nodes). */
ACC_TEST(hier_direct_at_8192_and_65536_ranks)
{
    static const char *const descs[] = {"nodes=1024 gpus=8 nvlink=18 nic=8x400",
                                        "nodes=8192 gpus=8 nvlink=18 nic=8x400"};
    for (int i = 0; i < 2; i++) {
        acc_topo_t *t = cf_load(descs[i]);
        for (int f = HIER_DIRECT; f < (i ? HIER_DIRECT + 1 : HIER_DIRECT_END); f++) {
            acc_algo_args_t args = cf_args((size_t)f, 0, 0);
            acc_cplan_t *cp = NULL;
            acc_cplan_proof_t proof;
            CHECK_MSG(acc_algo_generate_class(cf_forms[f]->algo, t, &args, &cp, &proof) == ACC_OK,
                      "%s: %s", descs[i], acc_error_message());
            CHECK_MSG(proof.by_class, "%s", proof.why);
            CHECK_INT(proof.orbits, 8 * cp->nlanes);
            CHECK_INT(cp->nranks, acc_topo_ranks(t));
            acc_cplan_destroy(cp);
        }
        acc_topo_destroy(t);
    }
}
