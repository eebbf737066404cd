/*
 * Plans by rank class (acc_cplan.h).  The two forms agree: for the generators with a class form
 * the expansion is the plan the generator built rank by rank before (algo_rounds_plan), YAML
 * byte for byte, over synthetic topologies, lane and chunk variants and the shipped platforms;
 * every other generator's plan survives the degenerate conversion.  The proof by class agrees
 * with acc_plan_verify on the expansion: unmutated plans are accepted on the quotient, and over
 * 600 random mutations of class programs (a dropped, duplicated or swapped operation, a wrong
 * peer, a wrong chunk) both verifiers take the same decision every time, most of them on the
 * quotient.  (Ring programs have no dependencies, so "a missing dependency" has nothing to
 * drop; the quotient leaves plans with dependencies to the explicit verifier.)
 */
#include "acc_test.h"

#include "acc_compiler.h"
#include "class_forms.h"
#include "plan_fixtures.h"

#include <stdlib.h>
#include <string.h>

/* The old way and the new way, compared as text (yaml) or operation by operation. */
static void compare(const acc_topo_t *t, const char *what, int lanes, int chunks, int yaml)
{
    size_t f;

    for (f = 0; f < CF_NFORMS; f++) {
        acc_algo_args_t args = cf_args(f, lanes, chunks);
        acc_plan_t *old = NULL, *neu = NULL;
        acc_buf_t a, b;
        if (cf_forms[f]->algo->supports(t, &args) != ACC_OK || !cf_has_class(f, t, &args))
            continue;
        CHECK_MSG(algo_class_build_explicit(cf_forms[f], t, &args, &old) == ACC_OK, "%s: %s", what,
                  acc_error_message());
        CHECK_MSG(cf_forms[f]->algo->build(t, &args, &neu) == ACC_OK, "%s: %s", what,
                  acc_error_message());
        if (yaml) {
            acc_buf_init(&a);
            acc_buf_init(&b);
            CHECK_OK(acc_plan_dump_yaml(old, &a));
            CHECK_OK(acc_plan_dump_yaml(neu, &b));
            CHECK_MSG(a.len == b.len && memcmp(a.data, b.data, a.len) == 0,
                      "%s %s lanes=%d chunks=%d: the expansion's YAML differs", what,
                      acc_coll_name(cf_forms[f]->algo->coll), lanes, chunks);
            acc_buf_free(&a);
            acc_buf_free(&b);
        } else {
            CHECK_MSG(acc_plan_equal(old, neu), "%s %s lanes=%d chunks=%d: the expansion differs",
                      what, acc_coll_name(cf_forms[f]->algo->coll), lanes, chunks);
        }
        acc_plan_destroy(old);
        acc_plan_destroy(neu);
    }
}

ACC_TEST(expansion_equals_explicit_small)
{
    static const int nodes[] = {1, 2, 3, 4, 5, 8};
    static const int gpus[] = {1, 2, 3, 4, 8};
    size_t i, j;
    for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
        for (j = 0; j < sizeof(gpus) / sizeof(gpus[0]); j++) {
            char desc[96];
            acc_topo_t *t;
            snprintf(desc, sizeof(desc), "nodes=%d gpus=%d%s nic=%dx400", nodes[i], gpus[j],
                     gpus[j] > 1 ? " nvlink=18" : "", gpus[j]);
            t = cf_load(desc);
            compare(t, desc, 0, 0, 1);
            compare(t, desc, 1, 3, 1);
            compare(t, desc, 3, 2, 1);
            acc_topo_destroy(t);
        }
    }
}

/* Up to 1,024 ranks, operation by operation (the YAML of a 1,024-rank ring is hundreds of MB). */
ACC_TEST(expansion_equals_explicit_large)
{
    static const char *const descs[] = {
        "nodes=16 gpus=8 nvlink=18 nic=8x400", "nodes=33 gpus=4 nvlink=18 nic=4x400",
        "nodes=128 gpus=1 nic=1x400", "nodes=64 gpus=8 nvlink=18 nic=8x400",
        "nodes=128 gpus=8 nvlink=18 nic=8x400"};
    size_t i;
    for (i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
        acc_topo_t *t = cf_load(descs[i]);
        compare(t, descs[i], i + 1 < sizeof(descs) / sizeof(descs[0]) ? 0 : 1, 1, 0);
        acc_topo_destroy(t);
    }
}

ACC_TEST(expansion_equals_explicit_platforms)
{
    char **names = NULL;
    size_t n = 0, i;
    CHECK_OK(acc_topo_platform_list(&names, &n));
    CHECK(n >= 1);
    for (i = 0; i < n; i++) {
        acc_topo_t *t = NULL;
        CHECK_MSG(acc_topo_load_platform(names[i], &t) == ACC_OK, "platform %s: %s", names[i],
                  acc_error_message());
        compare(t, names[i], 0, 0, 1);
        compare(t, names[i], 2, 2, 1);
        acc_topo_destroy(t);
    }
    acc_strv_free(names, n);
}

/* Every other generator's plan, converted one class per rank and expanded, is itself. */
ACC_TEST(degenerate_form_round_trips)
{
    acc_topo_t *t = cf_load("nodes=2 gpus=4 nvlink=18 nic=4x400");
    size_t n, i;
    const acc_algo_t *const *algos = acc_algo_list(&n);
    for (i = 0; i < n; i++) {
        acc_plan_t *p = NULL, *back = NULL;
        acc_cplan_t *cp = NULL;
        acc_cplan_proof_t proof;
        if (algos[i]->supports(t, NULL) != ACC_OK)
            continue;
        CHECK_OK(acc_algo_generate(algos[i], t, NULL, &p));
        CHECK_OK(acc_cplan_from_plan(p, &cp));
        CHECK_INT((long long)acc_cplan_op_count(cp), (long long)acc_plan_op_count(p));
        CHECK_OK(acc_cplan_expand(cp, &back));
        CHECK_MSG(acc_plan_equal(p, back), "%s %s: the degenerate form does not expand to it",
                  acc_coll_name(algos[i]->coll), algos[i]->name);
        /* Rank by rank, nothing is symmetric: the explicit verifier decides, and says so. */
        CHECK_OK(acc_cplan_verify(cp, t, &proof));
        CHECK(!proof.by_class && proof.why[0]);
        acc_cplan_destroy(cp);
        acc_plan_destroy(p);
        acc_plan_destroy(back);
    }
    acc_topo_destroy(t);
}

/* Generated class plans are proven on the quotient, one point per lane, and the count of
 * operations matches the expansion's. */
ACC_TEST(ring_proven_by_class)
{
    static const char *const descs[] = {"nodes=1 gpus=1", "nodes=1 gpus=2 nvlink=18",
                                        "nodes=4 gpus=8 nvlink=18 nic=8x400",
                                        "nodes=5 gpus=2 nvlink=18 nic=2x400"};
    size_t i, f;
    for (i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
        acc_topo_t *t = cf_load(descs[i]);
        for (f = 0; f < CF_NFORMS; f++) {
            acc_algo_args_t args = cf_args(f, 0, 0);
            acc_cplan_t *cp = NULL;
            acc_plan_t *p = NULL;
            acc_cplan_proof_t proof;
            if (cf_forms[f]->algo->supports(t, &args) != ACC_OK)
                continue;
            CHECK_MSG(acc_algo_generate_class(cf_forms[f]->algo, t, &args, &cp, &proof) == ACC_OK,
                      "%s: %s", descs[i], acc_error_message());
            CHECK_MSG(proof.by_class, "%s %s: by_class %d (%s)", descs[i],
                      acc_coll_name(cf_forms[f]->algo->coll), proof.by_class, proof.why);
            CHECK_OK(acc_cplan_expand(cp, &p));
            CHECK_INT((long long)acc_cplan_op_count(cp), (long long)acc_plan_op_count(p));
            acc_plan_destroy(p);
            acc_cplan_destroy(cp);
        }
        acc_topo_destroy(t);
    }
}

/* ---- mutations --------------------------------------------------------------------------- */

static int has_peer(const acc_cop_t *o)
{
    return o->peer.kind == ACC_CPEER_REL;
}

/* One random mutation of lane `lane`'s program; its name in *kind. */
static int mutate(acc_cplan_t *cp, fx_rng_t *g, const char **kind)
{
    acc_cclass_t *c = &cp->lanes[fx_rnd(g, (uint32_t)cp->nlanes)].classes[0];
    uint32_t i, j;
    acc_cop_t *o;

    if (c->nops < 2)
        return 0;
    i = fx_rnd(g, c->nops);
    o = &c->ops[i];
    switch (fx_rnd(g, 6)) {
    case 0:
        return cf_mutate_order(c, i, 0, kind);
    case 1:
        /* Duplicate a send (or any operation when it lands elsewhere). */
        for (j = 0; j < c->nops && c->ops[(i + j) % c->nops].code != ACC_OP_SEND; j++)
            ;
        i = (i + (j < c->nops ? j : 0)) % c->nops;
        if (c->nops == c->cap)
            return 0;
        return cf_mutate_order(c, i, 1, kind);
    case 2:
        if (!has_peer(o))
            return 0;
        *kind = "wrong peer";
        if (o->peer2.kind == ACC_CPEER_REL && fx_rnd(g, 2))
            o->peer2.v[0] += fx_rnd(g, 2) ? 1 : -1;
        else
            o->peer.v[0] += fx_rnd(g, 2) ? 1 : -1;
        return 1;
    case 3: {
        acc_cref_t *r = o->dst.cnt && (!o->src.cnt || fx_rnd(g, 2)) ? &o->dst : &o->src;
        if (!r->cnt)
            return 0;
        *kind = "wrong chunk";
        if (r->nterms && fx_rnd(g, 4))
            r->term[0].add += fx_rnd(g, 2) ? 1 : -1;
        else if (r->base || fx_rnd(g, 2))
            r->base = r->base ? r->base - 1 : r->base + 1;
        else
            r->base += 1;
        return 1;
    }
    case 4:
        return cf_mutate_order(c, i, 2, kind);
    default:
        /* A send to the other neighbour. */
        if (o->code != ACC_OP_SEND)
            return 0;
        *kind = "wrong peer";
        o->peer.v[0] = -o->peer.v[0];
        return 1;
    }
}

ACC_TEST(mutations_agree)
{
    static const char *const descs[] = {
        "nodes=1 gpus=2 nvlink=18",           "nodes=1 gpus=3 nvlink=18",
        "nodes=1 gpus=4 nvlink=18",           "nodes=2 gpus=4 nvlink=18 nic=4x400",
        "nodes=1 gpus=5 nvlink=18",           "nodes=2 gpus=8 nvlink=18 nic=8x400",
        "nodes=4 gpus=8 nvlink=18 nic=8x400", "nodes=64 gpus=8 nvlink=18 nic=8x400"};
    fx_rng_t g = {0x9e3779b97f4a7c15ull};
    int total = 0, quotient = 0, rejected = 0, tries = 0;

    for (tries = 0; total < 600 && tries < 5000; tries++) {
        /* The 512-rank plans are few: each explicit proof of one takes a while. */
        size_t di = fx_rnd(&g, 40) == 0 ? 7 : fx_rnd(&g, 7);
        size_t fi = fx_rnd(&g, CF_NFORMS);
        const algo_class_form_t *f = cf_forms[fi];
        acc_algo_args_t args;
        acc_topo_t *t = cf_load(descs[di]);
        const char *kind = "";
        int by_class, rej, applies;

        args =
            cf_args(fi, di == 7 ? 1 : 1 + (int)fx_rnd(&g, 2), di == 7 ? 1 : 1 + (int)fx_rnd(&g, 2));
        applies = f->algo->supports(t, &args) == ACC_OK;
        acc_topo_destroy(t);
        if (!applies || !cf_mutation(f, descs[di], &args, &g, mutate, &kind, &by_class, &rej))
            continue;
        total++;
        quotient += by_class;
        rejected += rej;
    }
    /* Most mutations keep the plan symmetric; the quotient must decide those itself. */
    cf_mutations_check(total, rejected, quotient, 600, "the quotient");
}

/* 8,192 ranks: synthesis and proof in class form, no expansion (which acc_algo_generate
 * refuses there), and the operation count from the class form. */
ACC_TEST(hier_at_131072_ranks)
{
    acc_topo_t *t = cf_load("nodes=16384 gpus=8 nvlink=18 nic=8x400");
    acc_algo_args_t args = cf_args(3, 0, 0);
    acc_cplan_t *cp = NULL;
    acc_cplan_proof_t proof;
    CHECK_OK(acc_algo_generate_class(algo_allreduce_hier_class.algo, t, &args, &cp, &proof));
    CHECK_MSG(proof.by_class, "not proven by class: %s", proof.why);
    /* Per lane and point: 8 + 8 inner operations (reduce-scatter, allgather), 16384 + 16383 on
     * the rail. */
    CHECK_INT((long long)acc_cplan_op_count(cp), 2LL * 131072 * (8 + 8 + 16384 + 16383));
    acc_cplan_destroy(cp);
    acc_topo_destroy(t);
}

ACC_TEST(ring_at_8192_ranks)
{
    acc_topo_t *t = cf_load("nodes=1024 gpus=8 nvlink=18 nic=8x400");
    acc_cplan_t *cp = NULL;
    acc_cplan_proof_t proof;
    CHECK_OK(acc_algo_generate_class(algo_allreduce_ring_class.algo, t, NULL, &cp, &proof));
    CHECK_MSG(proof.by_class, "not proven by class: %s", proof.why);
    /* Two lanes, each n + (n - 1) operations (reduce-scatter, allgather) at each position. */
    CHECK_INT((long long)acc_cplan_op_count(cp), 2LL * 8192 * (2 * 8192 - 1));
    acc_cplan_destroy(cp);
    acc_topo_destroy(t);
}
