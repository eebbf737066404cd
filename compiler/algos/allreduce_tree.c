/*
 * Double binary tree allreduce (NCCL's): two complementary binary trees, each reducing half of
 * the data up to its root and broadcasting it back down, pipelined in chunks.  A rank that is
 * inner in one tree is a leaf in the other, so every rank sends and receives about the message
 * size once per direction while the depth, and so the latency, grows with log n.
 *
 * On one node the trees are over the GPUs in ring order; across nodes they are over nodes, with
 * a chain through each node's GPUs (algo_tree_topo).  The data is cut into slices, one tree each
 * (trees alternate between slices), each slice into `chunks` pipeline chunks; lanes carry
 * slices in parallel.  Per rank and slice the order is up(0), up(1), down(0), up(2), down(1)...:
 * chunk s goes down while chunk s+1 goes up.  Inner ranks keep partial sums in the output,
 * which the down phase overwrites; correct in place.
 */
#include "algo_util.h"

#include <string.h>

static const algo_spec_t spec = {"tree allreduce", 2, 4, 0, 0};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_check_args(&spec, topo, args);
}

/* Slice k's chunks, up and down interleaved, on one rank (or class). */
static acc_status_t slice(const algo_tree_out_t *o, const algo_tree_t *t, uint32_t first,
                          int chunks)
{
    int s;
    acc_status_t st = ACC_OK;
    for (s = 0; s <= chunks && st == ACC_OK; s++) {
        acc_ref_t in = acc_ref(ACC_BUF_IN, first + (uint32_t)s, 1);
        acc_ref_t out = acc_ref(ACC_BUF_OUT, first + (uint32_t)s, 1);
        acc_ref_t prev = acc_ref(ACC_BUF_OUT, first + (uint32_t)s - 1, 1);
        if (s < chunks)
            st = algo_tree_up(o, t, in, out, out);
        if (s > 0 && st == ACC_OK)
            st = algo_tree_down(o, t, prev, prev);
    }
    return st;
}

/* What both builds share: the parameters, the slices (an even number, so that both trees
 * carry the same share) and the two trees. */
typedef struct {
    algo_params_t pr;
    int nslices;
    algo_tree_t trees[2];
} setup_t;

static void setup_free(setup_t *s)
{
    algo_tree_free(&s->trees[0]);
    algo_tree_free(&s->trees[1]);
}

static acc_status_t setup(const acc_topo_t *topo, const acc_algo_args_t *args, setup_t *s)
{
    int n = acc_topo_ranks(topo), k;
    acc_status_t st;

    memset(s, 0, sizeof(*s));
    if ((st = algo_params(&spec, topo, args, &s->pr)) != ACC_OK)
        return st;
    s->nslices = s->pr.lanes % 2 ? 2 * s->pr.lanes : s->pr.lanes;
    for (k = 0; k < 2 && st == ACC_OK; k++)
        if ((st = algo_tree_init(&s->trees[k], n)) == ACC_OK)
            st = algo_tree_topo(&s->trees[k], topo, k, 0);
    if (st != ACC_OK)
        setup_free(s);
    return st;
}

/* Lane o->lane's slices, in order, for o->rank. */
static acc_status_t lane_slices(const setup_t *s, const algo_tree_out_t *o)
{
    acc_status_t st = ACC_OK;
    for (int k = o->lane; k < s->nslices && st == ACC_OK; k += s->pr.lanes)
        st = slice(o, &s->trees[k % 2], (uint32_t)(k * s->pr.chunks), s->pr.chunks);
    return st;
}

static acc_status_t build_explicit(const acc_topo_t *topo, const acc_algo_args_t *args,
                                   acc_plan_t **out)
{
    setup_t s;
    acc_plan_t *p = NULL;
    int n = acc_topo_ranks(topo), lane, rank;
    acc_status_t st;

    if ((st = setup(topo, args, &s)) != ACC_OK)
        return st;
    st = algo_plan_new(topo, ACC_COLL_ALLREDUCE, "tree", args, s.pr.lanes,
                       (uint32_t)(s.nslices * s.pr.chunks), (uint32_t)(s.nslices * s.pr.chunks), 0,
                       &p);
    if (st == ACC_OK)
        st = algo_set_params(p, &s.pr, NULL);
    for (lane = 0; lane < s.pr.lanes && st == ACC_OK; lane++)
        for (rank = 0; rank < n && st == ACC_OK; rank++) {
            algo_tree_out_t o = algo_tree_out(p, lane, rank);
            st = lane_slices(&s, &o);
        }
    setup_free(&s);
    if (st != ACC_OK) {
        acc_plan_destroy(p);
        return st;
    }
    p->inplace = 1;
    *out = p;
    return ACC_OK;
}

static acc_status_t emit(void *ctx, const algo_tree_out_t *o)
{
    return lane_slices(ctx, o);
}

static acc_status_t build_class(const acc_topo_t *topo, const acc_algo_args_t *args,
                                acc_cplan_t **out)
{
    setup_t s;
    acc_cplan_t *cp = NULL;
    int32_t dims[2] = {acc_topo_nodes(topo), acc_topo_gpus_per_node(topo)};
    uint32_t total;
    char params[ACC_PLAN_PARAMS_MAX];
    acc_status_t st;

    *out = NULL;
    if ((st = setup(topo, args, &s)) != ACC_OK)
        return st;
    total = (uint32_t)(s.nslices * s.pr.chunks);
    if ((st = acc_cplan_create(ACC_COLL_ALLREDUCE, 2, dims, s.pr.lanes, total, total, 0, &cp)) ==
        ACC_OK) {
        snprintf(cp->algo, sizeof(cp->algo), "tree");
        cp->proto = args ? args->proto : ACC_PROTO_SIMPLE;
        cp->inplace = 1;
        algo_params_format(params, sizeof(params), &s.pr, NULL, cp->nranks);
        st = acc_cplan_set_params(cp, params);
    }
    for (int lane = 0; lane < s.pr.lanes && st == ACC_OK; lane++) {
        /* A lane carries slices of one tree, or of both when the lanes are odd. */
        const algo_tree_t *used[2] = {&s.trees[lane % 2], &s.trees[(lane + 1) % 2]};
        st = algo_tree_classes(cp, lane, used, s.nslices > lane + s.pr.lanes ? 2 : 1, emit, &s);
    }
    setup_free(&s);
    if (st != ACC_OK) {
        acc_cplan_destroy(cp);
        return st;
    }
    *out = cp;
    return ACC_OK;
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_allreduce_tree_class, topo, args, out);
}

const acc_algo_t algo_allreduce_tree = {
    "tree", ACC_COLL_ALLREDUCE,
    "double binary tree (two complementary trees, half the data each), pipelined in chunks",
    supports, build};

const algo_class_form_t algo_allreduce_tree_class = {&algo_allreduce_tree, NULL, build_class,
                                                     build_explicit,       NULL, NULL};
