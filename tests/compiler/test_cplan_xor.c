/*
 * Halving and doubling by rank class (compiler/algos/algo_hd_class.c, ACC_CPEER_XOR and
 * ACC_CTERM_XOR in acc_cplan.h).  rhd and rd allreduce, rh reduce_scatter and rd allgather on
 * a power of two of ranks are one program for every rank, built without an explicit plan:
 *   - its expansion is the plan they built rank by rank before (YAML byte for byte up to 128
 *     ranks, operation for operation at 1,024), over lane and chunk variants;
 *   - it is proven on one rank (cplan_verify_xor.c), without expanding, at 8,192 ranks too;
 *   - over 500 random mutations of the class programs up to 256 ranks (a dropped, duplicated
 *     or swapped operation, a wrong partner, a wrong chunk or mask) the class proof and the
 *     explicit verifier on the expansion take the same decision every time;
 *   - the binary form is version 2 (each rank's view from it is test_plan_view.c's), its size
 *     does not grow with the ranks beyond their logarithm, and plans without XOR keep version 1;
 *   - the simulator plays one node of it (a quotient moved by XOR) for the times of all ranks,
 *     equal to playing the whole expansion on clusters with one, two and half a NIC per GPU
 *     and oversubscribed and rail-optimised fabrics.
 */
#include "acc_test.h"

#include "acc_compiler.h"
#include "acc_cost.h"
#include "class_forms.h"
#include "plan_fixtures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const algo_class_form_t *const hd_forms[] = {
    &algo_allreduce_rhd_class, &algo_allreduce_rd_class, &algo_reduce_scatter_rh_class,
    &algo_allgather_rd_class};
#define NHD (sizeof(hd_forms) / sizeof(hd_forms[0]))

static acc_algo_args_t lc(int lanes, int chunks)
{
    acc_algo_args_t args;
    memset(&args, 0, sizeof(args));
    args.lanes = lanes;
    args.chunks = chunks;
    return args;
}

/* The rank-by-rank build and the class form's expansion, as YAML or operation by operation. */
static void compare(const acc_topo_t *t, const char *what, int lanes, int chunks, int yaml)
{
    for (size_t f = 0; f < NHD; f++) {
        acc_algo_args_t args = lc(lanes, chunks);
        acc_plan_t *old = NULL, *neu = NULL;
        acc_cplan_t *cp = NULL;
        CHECK(acc_algo_has_class(hd_forms[f]->algo, t, &args));
        CHECK_MSG(algo_class_build_explicit(hd_forms[f], t, &args, &old) == ACC_OK, "%s: %s", what,
                  acc_error_message());
        CHECK_MSG(algo_class_build(hd_forms[f], t, &args, &cp) == ACC_OK, "%s: %s", what,
                  acc_error_message());
        CHECK_OK(acc_cplan_expand(cp, &neu));
        CHECK_INT((long long)acc_cplan_op_count(cp), (long long)acc_plan_op_count(old));
        if (yaml) {
            acc_buf_t a, b;
            acc_buf_init(&a);
            acc_buf_init(&b);
            CHECK_OK(acc_plan_dump_yaml(old, &a));
            CHECK_OK(acc_plan_dump_yaml(neu, &b));
            CHECK_MSG(a.len == b.len && memcmp(a.data, b.data, a.len) == 0,
                      "%s %s %s lanes=%d chunks=%d: the expansion's YAML differs", what,
                      acc_coll_name(hd_forms[f]->algo->coll), hd_forms[f]->algo->name, lanes,
                      chunks);
            acc_buf_free(&a);
            acc_buf_free(&b);
        } else {
            CHECK_MSG(acc_plan_equal(old, neu), "%s %s %s: the expansion differs", what,
                      acc_coll_name(hd_forms[f]->algo->coll), hd_forms[f]->algo->name);
        }
        acc_cplan_destroy(cp);
        acc_plan_destroy(old);
        acc_plan_destroy(neu);
    }
}

ACC_TEST(expansion_equals_explicit)
{
    static const char *const small[] = {
        "nodes=1 gpus=2 nvlink=18",           "nodes=1 gpus=4 nvlink=18",
        "nodes=2 gpus=1 nic=1x400",           "nodes=2 gpus=4 nvlink=18 nic=4x400",
        "nodes=4 gpus=8 nvlink=18 nic=8x400", "nodes=16 gpus=8 nvlink=18 nic=8x400"};
    for (size_t i = 0; i < sizeof(small) / sizeof(small[0]); i++) {
        acc_topo_t *t = cf_load(small[i]);
        compare(t, small[i], 0, 0, 1);
        compare(t, small[i], 1, 3, 1);
        compare(t, small[i], 3, 2, 1);
        acc_topo_destroy(t);
    }
    {
        const char *big = "nodes=128 gpus=8 nvlink=18 nic=8x400";
        acc_topo_t *t = cf_load(big);
        compare(t, big, 0, 0, 0);
        compare(t, big, 2, 1, 0);
        acc_topo_destroy(t);
    }
}

/* Rank counts that are not powers of two fold: the rank-by-rank build stays. */
ACC_TEST(folding_counts_stay_explicit)
{
    acc_topo_t *t = cf_load("nodes=3 gpus=4 nvlink=18 nic=4x400");
    for (size_t f = 0; f < NHD; f++) {
        acc_cplan_t *cp = NULL;
        acc_cplan_proof_t proof;
        CHECK(!acc_algo_has_class(hd_forms[f]->algo, t, NULL));
        CHECK_OK(acc_algo_generate_class(hd_forms[f]->algo, t, NULL, &cp, &proof));
        CHECK(!proof.by_class && strstr(proof.why, "no class form"));
        acc_cplan_destroy(cp);
    }
    acc_topo_destroy(t);
}

/* Proven on one rank, never expanded; the operation count comes from the class form. */
ACC_TEST(proven_on_one_rank)
{
    static const char *const descs[] = {"nodes=1 gpus=2 nvlink=18",
                                        "nodes=4 gpus=8 nvlink=18 nic=8x400",
                                        "nodes=1024 gpus=8 nvlink=18 nic=8x400"};
    for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
        acc_topo_t *t = cf_load(descs[i]);
        int n = acc_topo_ranks(t), bits = 0;
        while ((1 << bits) < n)
            bits++;
        for (size_t f = 0; f < NHD; f++) {
            acc_cplan_t *cp = NULL;
            acc_cplan_proof_t proof;
            long long per;
            CHECK_MSG(acc_algo_generate_class(hd_forms[f]->algo, t, NULL, &cp, &proof) == ACC_OK,
                      "%s %s: %s", descs[i], hd_forms[f]->algo->name, acc_error_message());
            CHECK_MSG(proof.by_class && proof.orbits == 1, "%s %s: by_class %d orbits %u (%s)",
                      descs[i], hd_forms[f]->algo->name, proof.by_class, proof.orbits, proof.why);
            /* Per rank: rhd a send and a receive per step of halving and of doubling; rd one
             * exchange per step; rh and allgather rd one exchange per step and a copy. */
            per = hd_forms[f] == &algo_allreduce_rhd_class  ? 4LL * bits
                  : hd_forms[f] == &algo_allreduce_rd_class ? 2LL * bits
                                                            : 2LL * bits + 1;
            CHECK_INT((long long)acc_cplan_op_count(cp), per * n);
            acc_cplan_destroy(cp);
        }
        acc_topo_destroy(t);
    }
}

/* ---- mutations --------------------------------------------------------------------------- */

/* A random mutation of lane 0's program, applied to every rank alike; its name in *kind. */
static int mutate(acc_cplan_t *cp, fx_rng_t *g, const char **kind)
{
    acc_cclass_t *c = &cp->lanes[fx_rnd(g, (uint32_t)cp->nlanes)].classes[0];
    uint32_t n = (uint32_t)cp->nranks, i, j;
    acc_cop_t *o;
    if (c->nops < 2)
        return 0;
    i = fx_rnd(g, c->nops);
    o = &c->ops[i];
    switch (fx_rnd(g, 6)) {
    case 0:
        return cf_mutate_order(c, i, 0, kind);
    case 1:
        /* Duplicate a send (or any operation when there is none after it). */
        for (j = 0; j < c->nops && c->ops[(i + j) % c->nops].code != ACC_OP_SEND; j++)
            ;
        return cf_mutate_order(c, (i + (j < c->nops ? j : 0)) % c->nops, 1, kind);
    case 2:
        if (o->peer.kind != ACC_CPEER_XOR)
            return 0;
        *kind = "wrong partner";
        o->peer.v[0] ^= (int32_t)(1u << fx_rnd(g, 31 - (uint32_t)__builtin_clz(n)));
        return 1;
    case 3: {
        acc_cref_t *r = o->dst.cnt && (!o->src.cnt || fx_rnd(g, 2)) ? &o->dst : &o->src;
        if (!r->cnt)
            return 0;
        *kind = "wrong chunk";
        if (r->nterms && r->term[0].kind == ACC_CTERM_XOR && fx_rnd(g, 2)) {
            uint32_t bit = 1u << fx_rnd(g, 31 - (uint32_t)__builtin_clz(n));
            if (fx_rnd(g, 2))
                r->term[0].add ^= (int32_t)bit;
            else
                r->term[0].mask ^= bit;
        } else {
            r->base = r->base ? r->base - 1 : r->base + 1;
        }
        return 1;
    }
    case 4:
        return cf_mutate_order(c, i, 2, kind);
    default:
        /* Half of a chunk range: its count, as a wrong step would. */
        if (!o->src.cnt || o->src.cnt < 2)
            return 0;
        *kind = "short range";
        o->src.cnt /= 2;
        if (o->dst.cnt)
            o->dst.cnt /= 2;
        return 1;
    }
}

ACC_TEST(mutations_agree)
{
    static const char *const descs[] = {"nodes=1 gpus=2 nvlink=18", "nodes=1 gpus=4 nvlink=18",
                                        "nodes=2 gpus=4 nvlink=18 nic=4x400",
                                        "nodes=4 gpus=8 nvlink=18 nic=8x400",
                                        "nodes=32 gpus=8 nvlink=18 nic=8x400"};
    fx_rng_t g = {0x51ed270b2a3c4d5eull};
    int total = 0, by_class = 0, rejected = 0, tries;

    for (tries = 0; total < 520 && tries < 5000; tries++) {
        size_t di = fx_rnd(&g, 12) == 0 ? 4 : fx_rnd(&g, 4), fi = fx_rnd(&g, NHD);
        acc_algo_args_t args = lc(1 + (int)fx_rnd(&g, 2), 1);
        const char *kind = "";
        int bc, rej;
        /* Allreduce also with several rounds a lane (rh and allgather rd step through strided
         * pieces then, which the class proof leaves to the expansion). */
        if (hd_forms[fi]->algo->coll == ACC_COLL_ALLREDUCE)
            args.chunks = 1 + (int)fx_rnd(&g, 2);
        if (!cf_mutation(hd_forms[fi], descs[di], &args, &g, mutate, &kind, &bc, &rej))
            continue;
        total++;
        by_class += bc;
        rejected += rej;
    }
    cf_mutations_check(total, rejected, by_class, 500, "one rank");
}

/* ---- the binary form --------------------------------------------------------------------- */

/* The version: 2 for a plan with XOR (each rank's view from it is checked against the
 * expansion's with every other class form in test_plan_view.c). */
ACC_TEST(binary_form_version_2)
{
    acc_topo_t *t = cf_load("nodes=8 gpus=4 nvlink=18 nic=4x400");
    for (size_t f = 0; f < NHD; f++) {
        acc_cplan_t *cp = NULL;
        acc_cplan_bin_t bin;
        acc_chead_t *h = NULL;
        CHECK_OK(algo_class_build(hd_forms[f], t, NULL, &cp));
        CHECK_OK(acc_cplan_encode(cp, NULL, &bin));
        CHECK_INT(bin.head.data[4], 2);
        CHECK_OK(acc_chead_load(bin.head.data, bin.head.len, "test", &h));
        acc_chead_destroy(h);
        h = NULL;
        /* A head claiming a version past those this acc reads is refused. */
        bin.head.data[4] = 3;
        CHECK(acc_chead_load(bin.head.data, bin.head.len, "test", &h) != ACC_OK);
        CHECK(h == NULL && strstr(acc_error_message(), "version") != NULL);
        acc_cplan_bin_free(&bin);
        acc_cplan_destroy(cp);
    }
    acc_topo_destroy(t);
}

static size_t bin_size(const char *desc, const algo_class_form_t *f)
{
    acc_topo_t *t = cf_load(desc);
    acc_cplan_t *cp = NULL;
    acc_cplan_bin_t bin;
    size_t n;
    CHECK_OK(algo_class_build(f, t, NULL, &cp));
    CHECK_OK(acc_cplan_encode(cp, NULL, &bin));
    n = bin.head.len;
    for (uint32_t i = 0; i < bin.nprogs; i++)
        n += bin.progs[i].len;
    acc_cplan_bin_free(&bin);
    acc_cplan_destroy(cp);
    acc_topo_destroy(t);
    return n;
}

/* 64 to 65,536 ranks: the stored form grows with log2 of the ranks (a step more each time),
 * not with them. */
ACC_TEST(binary_form_size_grows_with_the_logarithm)
{
    for (size_t f = 0; f < NHD; f++) {
        size_t small = bin_size("nodes=8 gpus=8 nvlink=18 nic=8x400", hd_forms[f]);
        size_t big = bin_size("nodes=8192 gpus=8 nvlink=18 nic=8x400", hd_forms[f]);
        printf("%s %s: %zu bytes at 64 ranks, %zu at 65,536\n",
               acc_coll_name(hd_forms[f]->algo->coll), hd_forms[f]->algo->name, small, big);
        CHECK_MSG(big < 4 * small, "%s: %zu bytes at 65,536 ranks against %zu at 64",
                  hd_forms[f]->algo->name, big, small);
    }
}

/* A plan without XOR is written as before: version 1. */
ACC_TEST(plans_without_xor_keep_version_1)
{
    acc_topo_t *t = cf_load("nodes=2 gpus=4 nvlink=18 nic=4x400");
    acc_cplan_t *cp = NULL;
    acc_cplan_bin_t bin;
    CHECK_OK(algo_class_build(&algo_allreduce_ring_class, t, NULL, &cp));
    CHECK_OK(acc_cplan_encode(cp, NULL, &bin));
    CHECK_INT(bin.head.data[4], 1);
    acc_cplan_bin_free(&bin);
    acc_cplan_destroy(cp);
    acc_topo_destroy(t);
}

/* A class plan that flips bits past its grid is refused when it is built. */
ACC_TEST(xor_past_the_grid_refused)
{
    int32_t dims[1] = {6}, lo[1] = {0}, hi[1] = {6};
    acc_cplan_t *cp = NULL;
    acc_cop_t op = acc_cop_init(ACC_OP_SEND);
    uint32_t cls;
    CHECK_OK(acc_cplan_create(ACC_COLL_ALLREDUCE, 1, dims, 1, 6, 6, 0, &cp));
    CHECK_OK(acc_cplan_add_class(cp, 0, lo, hi, &cls));
    op.peer = acc_cpeer_xor(0, 1);
    op.src = acc_cref_const(ACC_BUF_IN, 0, 1);
    CHECK_INT(acc_cplan_add(cp, 0, cls, &op), ACC_ERR_INVALID);
    CHECK(strstr(acc_error_message(), "power of two") != NULL);
    acc_cplan_destroy(cp);
    dims[0] = hi[0] = 8;
    CHECK_OK(acc_cplan_create(ACC_COLL_ALLREDUCE, 1, dims, 1, 8, 8, 0, &cp));
    CHECK_OK(acc_cplan_add_class(cp, 0, lo, hi, &cls));
    op.peer = acc_cpeer_xor(0, 8);
    CHECK_INT(acc_cplan_add(cp, 0, cls, &op), ACC_ERR_INVALID);
    op.peer = acc_cpeer_xor(0, 4);
    CHECK_OK(acc_cplan_add(cp, 0, cls, &op));
    acc_cplan_destroy(cp);
}

/* ---- the simulator on a quotient moved by XOR -------------------------------------------- */

static int sim_compare(const char *desc, int lanes)
{
    /* Sizes every plan's chunks divide (840 = lcm(1 .. 8) elements a rank), as in
     * test_sim_quotient.c: with uneven chunks the ranks' bytes differ by an element. */
    static const uint64_t per_rank[] = {4 * 840, 4 * 840 * 64, 4 * 840 * 4096};
    static const acc_proto_t protos[] = {ACC_PROTO_SIMPLE, ACC_PROTO_LL128, ACC_PROTO_LL};
    acc_topo_t *t = cf_load(desc);
    acc_sim_t *sim = NULL;
    int gpn = acc_topo_gpus_per_node(t), n = 0;

    CHECK_OK(acc_sim_create(t, &sim));
    for (size_t f = 0; f < NHD; f++) {
        acc_algo_args_t args = lc(lanes, 0);
        acc_cplan_t *cp = NULL;
        acc_plan_t *whole = NULL, *quot = NULL;
        CHECK_OK(acc_algo_generate_class(hd_forms[f]->algo, t, &args, &cp, NULL));
        CHECK_OK(acc_cplan_expand(cp, &whole));
        CHECK_MSG(acc_cplan_quotient(cp, gpn, &quot) == ACC_OK, "%s %s: %s", desc, cp->algo,
                  acc_error_message());
        CHECK(quot->period == gpn && quot->period_xor);
        for (size_t k = 0; k < sizeof(protos) / sizeof(protos[0]); k++)
            for (size_t i = 0; i < sizeof(per_rank) / sizeof(per_rank[0]); i++) {
                cf_sim_agree(sim, whole, quot, protos[k], per_rank[i] * (uint64_t)acc_topo_ranks(t),
                             1e-9, desc);
                n++;
            }
        acc_plan_destroy(whole);
        acc_plan_destroy(quot);
        acc_cplan_destroy(cp);
    }
    acc_sim_destroy(sim);
    acc_topo_destroy(t);
    return n;
}

ACC_TEST(xor_quotient_times_equal_whole)
{
    static const struct {
        const char *desc;
        int lanes;
    } cases[] = {
        {"nodes=4 gpus=8 nvlink=18 nic=8x400", 0},
        {"nodes=8 gpus=8 nvlink=18 nic=4x400", 2},           /* two GPUs a NIC */
        {"nodes=4 gpus=8 nvlink=18 nic=16x200", 0},          /* two NICs a GPU */
        {"nodes=8 gpus=4 nvlink=18 nic=4x400 oversub=3", 0}, /* fabric shares */
        {"nodes=8 gpus=4 nvlink=18 nic=4x400 oversub=2 rail=1", 3},
        {"nodes=16 gpus=1 nic=1x400", 1},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        n += sim_compare(cases[i].desc, cases[i].lanes);
    CHECK_INT(n, 6 * (int)NHD * 9);
}

/* A plan that pairs ranks by XOR but also names a peer otherwise has no XOR quotient. */
ACC_TEST(xor_quotient_refused_when_mixed)
{
    acc_topo_t *t = cf_load("nodes=4 gpus=4 nvlink=18 nic=4x400");
    acc_cplan_t *cp = NULL;
    acc_plan_t *quot = NULL;
    CHECK_OK(algo_class_build(&algo_allreduce_rd_class, t, NULL, &cp));
    cp->lanes[0].classes[0].ops[0].peer = acc_cpeer_rel(0, 1);
    CHECK(acc_cplan_quotient(cp, 4, &quot) == ACC_ERR_UNSUPPORTED);
    CHECK(quot == NULL);
    CHECK_MSG(strstr(acc_error_message(), "other than by XOR"), "%s", acc_error_message());
    acc_cplan_destroy(cp);
    acc_topo_destroy(t);
}
