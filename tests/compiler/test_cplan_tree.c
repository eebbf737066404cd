/*
 * Trees by rank class (compiler/algos/algo_tree_class.c): double binary tree allreduce, tree
 * and chain broadcast and reduce build their class form directly.  Its expansion is the plan
 * the generator built rank by rank (YAML byte for byte on small clusters with lane, chunk and
 * root variants, operation by operation up to 1,024 ranks and on the shipped platforms); the
 * classes a lane has grow with nodes + GPUs per node, not with ranks (a chain has three); the
 * proof expands them (a root breaks the symmetry) and says so, and rejects a damaged class.
 */
#include "acc_test.h"

#include "acc_compiler.h"
#include "class_forms.h"

#include <string.h>

static const algo_class_form_t *const tree_forms[] = {
    &algo_allreduce_tree_class, &algo_broadcast_tree_class, &algo_broadcast_ring_class,
    &algo_reduce_tree_class,    &algo_reduce_ring_class,
};
#define NTREE (sizeof(tree_forms) / sizeof(tree_forms[0]))

static const char *name_of(const algo_class_form_t *f)
{
    static char text[64];
    snprintf(text, sizeof(text), "%s %s", acc_coll_name(f->algo->coll), f->algo->name);
    return text;
}

/* Rank by rank and by class, compared as YAML or operation by operation. */
static int compare(const acc_topo_t *t, const char *what, const acc_algo_args_t *args, int yaml)
{
    int compared = 0;
    for (size_t f = 0; f < NTREE; f++) {
        acc_plan_t *old = NULL, *neu = NULL;
        acc_algo_args_t a = *args;
        /* Allreduce has no root. */
        if (tree_forms[f]->algo->coll == ACC_COLL_ALLREDUCE)
            a.root = 0;
        CHECK_MSG(tree_forms[f]->algo->supports(t, &a) == ACC_OK, "%s %s: %s", what,
                  name_of(tree_forms[f]), acc_error_message());
        CHECK(acc_algo_has_class(tree_forms[f]->algo, t, &a));
        CHECK_MSG(algo_class_build_explicit(tree_forms[f], t, &a, &old) == ACC_OK, "%s %s: %s",
                  what, name_of(tree_forms[f]), acc_error_message());
        CHECK_MSG(tree_forms[f]->algo->build(t, &a, &neu) == ACC_OK, "%s %s: %s", what,
                  name_of(tree_forms[f]), acc_error_message());
        if (yaml) {
            acc_buf_t ya, yb;
            acc_buf_init(&ya);
            acc_buf_init(&yb);
            CHECK_OK(acc_plan_dump_yaml(old, &ya));
            CHECK_OK(acc_plan_dump_yaml(neu, &yb));
            CHECK_MSG(ya.len == yb.len && memcmp(ya.data, yb.data, ya.len) == 0,
                      "%s %s lanes=%d chunks=%d root=%d: the expansion's YAML differs", what,
                      name_of(tree_forms[f]), a.lanes, a.chunks, a.root);
            acc_buf_free(&ya);
            acc_buf_free(&yb);
        } else {
            CHECK_MSG(acc_plan_equal(old, neu), "%s %s: the expansion differs", what,
                      name_of(tree_forms[f]));
        }
        compared++;
        acc_plan_destroy(old);
        acc_plan_destroy(neu);
    }
    return compared;
}

static acc_algo_args_t args_of(int lanes, int chunks, int root)
{
    acc_algo_args_t a;
    memset(&a, 0, sizeof(a));
    a.lanes = lanes;
    a.chunks = chunks;
    a.root = root;
    return a;
}

ACC_TEST(expansion_equals_explicit_small)
{
    static const int nodes[] = {1, 2, 3, 5, 8};
    static const int gpus[] = {1, 2, 3, 8};
    int compared = 0;
    for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
        for (size_t j = 0; j < sizeof(gpus) / sizeof(gpus[0]); j++) {
            char desc[96];
            int n = nodes[i] * gpus[j];
            acc_topo_t *t;
            snprintf(desc, sizeof(desc), "nodes=%d gpus=%d%s nic=%dx400", nodes[i], gpus[j],
                     gpus[j] > 1 ? " nvlink=18" : "", gpus[j]);
            t = cf_load(desc);
            acc_algo_args_t a = args_of(0, 0, 0), b = args_of(1, 3, n - 1),
                            c = args_of(3, 2, n / 2);
            compared += compare(t, desc, &a, 1);
            compared += compare(t, desc, &b, 1);
            compared += compare(t, desc, &c, 1);
            acc_topo_destroy(t);
        }
    CHECK_INT(compared, 5 * 3 * 5 * 4);
}

/* Up to 1,024 ranks, and every shipped platform. */
ACC_TEST(expansion_equals_explicit_large)
{
    static const char *const descs[] = {"nodes=128 gpus=8 nvlink=18 nic=8x400",
                                        "nodes=1024 gpus=1 nic=1x400",
                                        "nodes=33 gpus=4 nvlink=18 nic=4x400"};
    char **names = NULL;
    size_t n = 0;
    for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
        acc_topo_t *t = cf_load(descs[i]);
        acc_algo_args_t a = args_of(2, 2, acc_topo_ranks(t) - 5);
        CHECK_INT(compare(t, descs[i], &a, 0), 5);
        acc_topo_destroy(t);
    }
    CHECK_OK(acc_topo_platform_list(&names, &n));
    for (size_t i = 0; i < n; i++) {
        acc_topo_t *t = NULL;
        acc_algo_args_t a = args_of(0, 0, 0);
        CHECK_MSG(acc_topo_load_platform(names[i], &t) == ACC_OK, "platform %s: %s", names[i],
                  acc_error_message());
        CHECK_INT(compare(t, names[i], &a, 1), 5);
        acc_topo_destroy(t);
    }
    acc_strv_free(names, n);
}

static uint64_t volume(const acc_cplan_t *cp, const acc_cclass_t *k)
{
    uint64_t v = 1;
    for (int d = 0; d < cp->ndims; d++)
        v *= (uint64_t)(k->hi[d] - k->lo[d]);
    return v;
}

/* A lane's classes: a chain has three (root, inner positions, last); a tree between N nodes
 * of G GPUs a class per head and per local index past it; on one node a class per GPU. */
ACC_TEST(classes_grow_with_nodes_plus_gpus)
{
    static const struct {
        const char *desc;
        int nodes, gpus;
    } topos[] = {{"nodes=128 gpus=8 nvlink=18 nic=8x400", 128, 8},
                 {"nodes=16 gpus=64 nvlink=18 nic=8x400", 16, 64},
                 {"nodes=1 gpus=8 nvlink=18", 1, 8}};
    for (size_t i = 0; i < sizeof(topos) / sizeof(topos[0]); i++) {
        acc_topo_t *t = cf_load(topos[i].desc);
        int n = topos[i].nodes * topos[i].gpus;
        for (size_t f = 0; f < NTREE; f++) {
            int rooted = tree_forms[f]->algo->coll != ACC_COLL_ALLREDUCE;
            acc_algo_args_t a = args_of(2, 0, rooted ? 3 : 0);
            acc_cplan_t *cp = NULL;
            CHECK_OK(algo_class_build(tree_forms[f], t, &a, &cp));
            for (int l = 0; l < cp->nlanes; l++) {
                uint32_t most, got = cp->lanes[l].nclasses;
                if (!strcmp(tree_forms[f]->algo->name, "ring"))
                    most = 3;
                else if (topos[i].nodes == 1)
                    most = (uint32_t)topos[i].gpus;
                else /* a head a node at most (neighbours may see the tree alike), a column
                        of each other local index; lanes=2 is one tree a lane */
                    most = (uint32_t)(topos[i].nodes + topos[i].gpus - 1);
                CHECK_MSG(got <= most && (got == most || topos[i].nodes > 1),
                          "%s %s lane %d: "
                          "%u classes, not %u",
                          topos[i].desc, name_of(tree_forms[f]), l, got, most);
                CHECK(got >= (uint32_t)topos[i].gpus || (most == 3 && got == 3));
                CHECK(got < (uint32_t)n || topos[i].nodes == 1);
            }
            CHECK_INT((long long)acc_cplan_op_count(cp) > 0, 1);
            acc_cplan_destroy(cp);
        }
        acc_topo_destroy(t);
    }
}

/* The proof expands a tree (its root and heads break the symmetry) and says why; a class
 * program that lost an operation, or whose peer moved, is rejected as the explicit verifier
 * rejects its expansion. */
ACC_TEST(proof_expands_and_rejects_damage)
{
    acc_topo_t *t = cf_load("nodes=4 gpus=4 nvlink=18 nic=4x400");
    for (size_t f = 0; f < NTREE; f++) {
        acc_cplan_t *cp = NULL;
        acc_cplan_proof_t proof;
        acc_plan_t *expl = NULL;
        CHECK_OK(acc_algo_generate_class(tree_forms[f]->algo, t, NULL, &cp, &proof));
        CHECK_MSG(!proof.by_class && proof.why[0], "%s: by_class %d", name_of(tree_forms[f]),
                  proof.by_class);
        CHECK_INT(proof.orbits, (long long)cp->nranks * cp->nlanes);
        /* The biggest class of lane 0 (a chain's inner positions, a column of GPUs). */
        acc_cclass_t *big = &cp->lanes[0].classes[0];
        for (uint32_t k = 1; k < cp->lanes[0].nclasses; k++)
            if (volume(cp, &cp->lanes[0].classes[k]) > volume(cp, big))
                big = &cp->lanes[0].classes[k];
        CHECK(volume(cp, big) > 1 && big->nops > 0);
        /* Its first operation dropped. */
        acc_cop_t first = big->ops[0];
        memmove(big->ops, big->ops + 1, (big->nops - 1) * sizeof(acc_cop_t));
        big->nops--;
        CHECK_MSG(acc_cplan_verify(cp, t, NULL) != ACC_OK, "%s: a dropped operation passed",
                  name_of(tree_forms[f]));
        CHECK_OK(acc_cplan_expand(cp, &expl));
        CHECK(acc_plan_verify(expl) != ACC_OK);
        acc_plan_destroy(expl);
        memmove(big->ops + 1, big->ops, big->nops * sizeof(acc_cop_t));
        big->ops[0] = first;
        big->nops++;
        CHECK_OK(acc_cplan_verify(cp, t, NULL));
        /* Its first peer one position further on. */
        acc_cop_t *op = &big->ops[0];
        CHECK(op->peer.kind == ACC_CPEER_REL);
        op->peer.v[cp->ndims - 1] += 1;
        CHECK_MSG(acc_cplan_verify(cp, t, NULL) != ACC_OK, "%s: a moved peer passed",
                  name_of(tree_forms[f]));
        acc_cplan_destroy(cp);
    }
    acc_topo_destroy(t);
}
