/*
 * Pipelined hierarchical allreduce ("hier_pipe"): hier's three stages - an intra-node
 * reduce-scatter leaving block q reduced over the node at GPU q of the node ring, an allreduce of
 * block q along its rail between nodes, an intra-node allgather - on lanes of their own, so that
 * the network carries one round while NVLink carries the next.  In hier every lane runs its round's
 * stages one after the other, all lanes in step, so NVLink and the NICs take turns; on a node
 * whose NICs are a large share of what a GPU can send (AWS p5: 4 x 100 Gb/s EFA against 18
 * NVLinks) that leaves a third of the time on the table.
 *
 * Lanes 0 .. I-1 (I = ceil(lanes / 2)) are inner lanes, I .. lanes-1 outer lanes.  The message is
 * cut into I x chunks rounds; round r's intra-node stages run on inner lane r mod I, its rail
 * allreduce on outer lane I + r mod (lanes - I), which a GPU with several NICs spreads over
 * them (the simulator sends lane l through NIC l mod n).  An inner lane reduce-scatters all of
 * its rounds first and then gathers them, each gather waiting (a nop with a dependency) for its
 * round's rail allreduce, which waits for its round's reduce-scatter: while an outer lane works
 * on round r its inner lane works on round r + I.  With one lane both roles fall on it and the
 * plan is hier's, reordered.  inner/outer as hier.  Correct in place.
 */
#include "algo_util.h"

#include <string.h>

static const algo_spec_t spec = {"hier_pipe allreduce", 2, 2, 0, 1};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    algo_hier_t h;
    return algo_hier_setup(&h, &spec, "rhd", 1, topo, args, 0);
}

typedef struct {
    acc_plan_t *p;
    const algo_hier_t *h;
    const algo_tree_t *trees;
    int inner_lanes, outer_lanes, rounds, n;
    uint32_t blk;
    uint32_t *done; /* rounds x ranks: the last operation of a round's stage on its lane
                     * (UINT32_MAX: none) */
} pipe_t;

static int inner_lane(const pipe_t *x, int r)
{
    return r % x->inner_lanes;
}

static int outer_lane(const pipe_t *x, int r)
{
    return x->outer_lanes ? x->inner_lanes + r % x->outer_lanes : inner_lane(x, r);
}

/* Every rank's lane `lane` waits for operation done[r] of lane `on` (nothing when they are one). */
static acc_status_t wait_for(pipe_t *x, int r, int lane, int on)
{
    acc_status_t st = ACC_OK;
    int k;
    if (lane == on)
        return ACC_OK;
    for (k = 0; k < x->n && st == ACC_OK; k++) {
        acc_op_t op = acc_op_init(ACC_OP_NOP);
        if (x->done[(size_t)r * (size_t)x->n + (size_t)k] == UINT32_MAX)
            continue; /* the rank has nothing on that lane yet: nothing to wait for */
        op.dep_lane = on;
        op.dep_op = (int32_t)x->done[(size_t)r * (size_t)x->n + (size_t)k];
        st = acc_plan_add(x->p, k, lane, &op, NULL);
    }
    return st;
}

static void mark(pipe_t *x, int r, int lane)
{
    int k;
    for (k = 0; k < x->n; k++)
        x->done[(size_t)r * (size_t)x->n + (size_t)k] = acc_plan_prog(x->p, k, lane)->nops - 1u;
}

/* Round r's intra-node reduce-scatter (gather = 0) or allgather (1) on its inner lane. */
static acc_status_t intra(pipe_t *x, int r, int gather)
{
    const algo_hier_t *h = x->h;
    int lane = inner_lane(x, r), k, g = h->gpn;
    uint32_t j = (uint32_t)(r / x->inner_lanes), base = (uint32_t)r * (uint32_t)g * x->blk;
    const int *node = h->node[lane % 2];
    algo_layout_t in = algo_layout(ACC_BUF_IN, base, x->blk, x->blk);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, base, x->blk, x->blk);
    acc_status_t st = ACC_OK;

    for (k = 0; k < h->nodes && st == ACC_OK; k++) {
        const int *grp = node + k * g;
        if (h->inner == ALGO_INNER_RING) {
            st = gather ? algo_ring_allgather(x->p, lane, grp, g, NULL, &res, NULL, 0)
                        : algo_ring_reduce_scatter(x->p, lane, grp, g, NULL, &in, &res, 0);
        } else if (gather) {
            st = algo_pm_allgather(x->p, lane, grp, g, NULL, &res, NULL, ALGO_SLOT(lane, 1), j + 1);
        } else {
            st = algo_pm_barrier(x->p, lane, grp, g, ALGO_SLOT(lane, 0), j + 1);
            if (st == ACC_OK)
                st = algo_pm_reduce_scatter(x->p, lane, grp, g, NULL, &in, &res);
        }
    }
    return st;
}

/* Round r's allreduce along every rail on its outer lane: block q of the round, reduced at GPU
 * q of the inner lane's node ring. */
static acc_status_t between(pipe_t *x, int r)
{
    const algo_hier_t *h = x->h;
    int lane = outer_lane(x, r), q, g = h->gpn;
    const int *cyc = h->cyc[inner_lane(x, r) % 2];
    uint32_t base = (uint32_t)r * (uint32_t)g * x->blk;
    acc_status_t st = ACC_OK;

    for (q = 0; q < g && st == ACC_OK; q++)
        st = algo_hier_allreduce_outer(x->p, h, x->trees, lane, h->rail + cyc[q] * h->nodes,
                                       base + (uint32_t)q * x->blk);
    return st;
}

static acc_status_t emit(pipe_t *x)
{
    acc_status_t st = ACC_OK;
    int r;

    for (r = 0; r < x->rounds && st == ACC_OK; r++) {
        st = intra(x, r, 0);
        mark(x, r, inner_lane(x, r));
    }
    for (r = 0; r < x->rounds && st == ACC_OK; r++) {
        st = wait_for(x, r, outer_lane(x, r), inner_lane(x, r));
        if (st == ACC_OK)
            st = between(x, r);
        mark(x, r, outer_lane(x, r));
    }
    for (r = 0; r < x->rounds && st == ACC_OK; r++) {
        st = wait_for(x, r, inner_lane(x, r), outer_lane(x, r));
        if (st == ACC_OK)
            st = intra(x, r, 1);
    }
    return st;
}

static acc_status_t build_explicit(const acc_topo_t *topo, const acc_algo_args_t *args,
                                   acc_plan_t **out)
{
    algo_hier_t h;
    algo_tree_t trees[2];
    pipe_t x;
    uint32_t total;
    int t, q;
    acc_status_t st;

    memset(trees, 0, sizeof(trees));
    memset(&x, 0, sizeof(x));
    if ((st = algo_hier_setup(&h, &spec, "rhd", 1, topo, args, 1)) != ACC_OK)
        return st;
    x.h = &h;
    x.trees = trees;
    x.n = h.nodes * h.gpn;
    x.inner_lanes = (h.pr.lanes + 1) / 2;
    x.outer_lanes = h.pr.lanes - x.inner_lanes;
    x.rounds = x.inner_lanes * h.pr.chunks;
    x.blk = (uint32_t)(h.outer == ALGO_OUTER_RING ? h.nodes
                       : h.outer == ALGO_OUTER_HD ? algo_pow2_floor(h.nodes)
                                                  : 2);
    total = (uint32_t)(x.rounds * h.gpn) * x.blk;
    x.done = acc_mem_calloc((size_t)x.rounds * (size_t)x.n, sizeof(uint32_t));
    if (!x.done)
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for a pipelined plan of %d ranks", x.n);
    for (t = 0; t < 2 && h.outer == ALGO_OUTER_TREE && st == ACC_OK; t++) {
        st = algo_tree_init(&trees[t], x.n);
        for (q = 0; q < h.gpn && st == ACC_OK; q++)
            st = algo_tree_btree(&trees[t], h.rail + q * h.nodes, h.nodes, t);
    }
    if (st == ACC_OK)
        st = algo_plan_new(topo, ACC_COLL_ALLREDUCE, "hier_pipe", args, h.pr.lanes, total, total, 0,
                           &x.p);
    if (st == ACC_OK)
        st = algo_hier_params(x.p, &h);
    if (st == ACC_OK)
        st = emit(&x);
    algo_tree_free(&trees[0]);
    algo_tree_free(&trees[1]);
    algo_hier_free(&h);
    acc_mem_free(x.done);
    if (st != ACC_OK) {
        acc_plan_destroy(x.p);
        return st;
    }
    x.p->inplace = 1;
    *out = x.p;
    return ACC_OK;
}

/* ---- class form (outer=ring; algo_hier_cplan's grid) -------------------------------------
 * Each lane's grid runs in the node cycle of the inner lane whose rounds it carries; an outer
 * lane carries rounds of one direction only where the lane counts allow it (one inner lane, no
 * outer one, or an even number of each), which is where the class form covers.  With peer
 * memory inside nodes every lane has a class per position.  A wait is a nop on the other lane's
 * last operation of the round's stage: one index at every rank, since a lane's classes have one
 * length at every stage (checked). */

static int lanes_one_way(int inner, int outer)
{
    return outer == 0 || inner == 1 || (inner % 2 == 0 && outer % 2 == 0);
}

static int class_covers(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    algo_hier_t h;
    int inner;
    if (!algo_hier_class_covers(&spec, "rhd", 1, topo, args, 0) ||
        algo_hier_setup(&h, &spec, "rhd", 1, topo, args, 0) != ACC_OK)
        return 0;
    inner = (h.pr.lanes + 1) / 2;
    return lanes_one_way(inner, h.pr.lanes - inner);
}

typedef struct {
    acc_cplan_t *cp;
    const algo_hier_t *h;
    int inner_lanes, outer_lanes, rounds, q;
    uint32_t *cls;   /* per lane: the class of position q */
    uint32_t *done;  /* per round: the last operation of its stage on the lane that ran it */
    uint32_t *first; /* position 0's marks, which every other position's must equal */
    uint32_t nmarks;
} cpipe_t;

static int c_inner(const cpipe_t *x, int r)
{
    return r % x->inner_lanes;
}

static int c_outer(const cpipe_t *x, int r)
{
    return x->outer_lanes ? x->inner_lanes + r % x->outer_lanes : c_inner(x, r);
}

static acc_status_t c_mark(cpipe_t *x, int r, int lane)
{
    uint32_t n = x->cp->lanes[lane].classes[x->cls[lane]].nops - 1u;
    uint32_t k = x->nmarks++;
    x->done[r] = n;
    if (x->q <= 0)
        x->first[k] = n;
    else if (x->first[k] != n)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "hier_pipe: the positions' programs differ in length on lane %d",
                             lane);
    return ACC_OK;
}

static acc_status_t c_wait(cpipe_t *x, int r, int lane, int on)
{
    acc_cop_t op = acc_cop_init(ACC_OP_NOP);
    if (lane == on || x->done[r] == UINT32_MAX)
        return ACC_OK;
    op.dep_lane = on;
    op.dep_op = (int32_t)x->done[r];
    return acc_cplan_add(x->cp, lane, x->cls[lane], &op);
}

static acc_status_t c_intra(cpipe_t *x, int r, int gather)
{
    int lane = c_inner(x, r);
    uint32_t base = (uint32_t)r * (uint32_t)x->h->gpn * (uint32_t)x->h->nodes;
    return algo_hier_class_node_step(x->cp, lane, x->cls[lane], x->h, x->q,
                                     (uint32_t)(r / x->inner_lanes), base, gather);
}

/* emit()'s order, for position q. */
static acc_status_t c_emit(cpipe_t *x)
{
    uint32_t blk = (uint32_t)x->h->nodes;
    acc_status_t st = ACC_OK;
    int r;

    x->nmarks = 0;
    for (r = 0; r < x->rounds && st == ACC_OK; r++)
        if ((st = c_intra(x, r, 0)) == ACC_OK)
            st = c_mark(x, r, c_inner(x, r));
    for (r = 0; r < x->rounds && st == ACC_OK; r++) {
        int lane = c_outer(x, r);
        uint32_t base = (uint32_t)r * (uint32_t)x->h->gpn * blk;
        if ((st = c_wait(x, r, lane, c_inner(x, r))) == ACC_OK &&
            (st = algo_hier_class_rails(x->cp, lane, x->cls[lane], base, blk)) == ACC_OK)
            st = c_mark(x, r, lane);
    }
    for (r = 0; r < x->rounds && st == ACC_OK; r++)
        if ((st = c_wait(x, r, c_inner(x, r), c_outer(x, r))) == ACC_OK)
            st = c_intra(x, r, 1);
    return st;
}

static acc_status_t build_class(const acc_topo_t *topo, const acc_algo_args_t *args,
                                acc_cplan_t **out)
{
    algo_hier_t h;
    cpipe_t x;
    uint32_t total;
    int lane, direct;
    acc_status_t st;

    *out = NULL;
    memset(&x, 0, sizeof(x));
    if ((st = algo_hier_setup(&h, &spec, "rhd", 1, topo, args, 1)) != ACC_OK)
        return st;
    x.h = &h;
    x.inner_lanes = (h.pr.lanes + 1) / 2;
    x.outer_lanes = h.pr.lanes - x.inner_lanes;
    x.rounds = x.inner_lanes * h.pr.chunks;
    total = (uint32_t)(x.rounds * h.gpn) * (uint32_t)h.nodes;
    direct = h.inner == ALGO_INNER_DIRECT;
    if (h.outer != ALGO_OUTER_RING || !lanes_one_way(x.inner_lanes, x.outer_lanes))
        st = acc_error_set(ACC_ERR_UNSUPPORTED,
                           "hier_pipe has a class form for outer=ring, with one inner lane, "
                           "no outer one, or an even number of each");
    if (st == ACC_OK && (!(x.cls = acc_mem_calloc((size_t)h.pr.lanes, sizeof(uint32_t))) ||
                         !(x.done = acc_mem_calloc((size_t)x.rounds, sizeof(uint32_t))) ||
                         !(x.first = acc_mem_calloc((size_t)x.rounds * 2, sizeof(uint32_t)))))
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for a pipelined class plan");
    if (st == ACC_OK)
        st = algo_hier_cplan(&h, "hier_pipe", ACC_COLL_ALLREDUCE, args, total, total, 0, &x.cp);
    /* A lane's table: the node cycle of the inner lane whose rounds it carries. */
    for (lane = 0; lane < h.pr.lanes && st == ACC_OK; lane++) {
        int il = lane < x.inner_lanes ? lane : (lane - x.inner_lanes) % x.inner_lanes;
        st = acc_cplan_set_ranks(x.cp, lane, h.node[il % 2]);
    }
    for (x.q = direct ? 0 : -1; x.q < (direct ? h.gpn : 0) && st == ACC_OK; x.q++) {
        for (lane = 0; lane < h.pr.lanes && st == ACC_OK; lane++) {
            int32_t lo[2] = {0, x.q < 0 ? 0 : x.q}, hi[2] = {h.nodes, x.q < 0 ? h.gpn : x.q + 1};
            st = acc_cplan_add_class(x.cp, lane, lo, hi, &x.cls[lane]);
        }
        if (st == ACC_OK)
            st = c_emit(&x);
    }
    algo_hier_free(&h);
    acc_mem_free(x.cls);
    acc_mem_free(x.done);
    acc_mem_free(x.first);
    if (st != ACC_OK) {
        acc_cplan_destroy(x.cp);
        return st;
    }
    *out = x.cp;
    return ACC_OK;
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_allreduce_hier_pipe_class, topo, args, out);
}

const acc_algo_t algo_allreduce_hier_pipe = {
    "hier_pipe", ACC_COLL_ALLREDUCE,
    "hier with its intra-node and inter-node stages on lanes of their own, pipelined over rounds "
    "so that NVLink and the NICs work at once (inner=ring|direct, outer=ring|rhd|tree)",
    supports, build};

const algo_class_form_t algo_allreduce_hier_pipe_class = {
    &algo_allreduce_hier_pipe, class_covers, build_class, build_explicit, NULL, NULL};
