/*
 * Hierarchical reduce-scatter for nodes x gpn GPUs: first a reduce-scatter inside each node in
 * which GPU h collects, reduced over its node, the blocks of GPU h of every node (into scratch);
 * then a reduce-scatter along each rail (GPU h of every node, one NIC rail) that finishes them.
 * Each GPU sends only (nodes-1)/n of the input over the network.
 *
 * inner (in the node): ring, or direct (peer memory; NVLink/NVSwitch nodes only); outer (per
 * rail): ring or rh (recursive halving).  A GPU's blocks in the node step lie `gpn` blocks apart
 * in the input, so inner steps move one piece per node (algo_layout_t.nsub).  Scratch is laid out
 * like the input.  Lanes and rounds split each block: round i handles chunk i of every block.
 * Correct in place: the input is read only in the node step, the output written only at the end.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"hier reduce_scatter", 2, 1, 0, 1};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    algo_hier_t h;
    return algo_hier_setup(&h, &spec, "rh", 0, topo, args, 0);
}

static acc_status_t round_fn(acc_plan_t *p, const algo_hier_t *h, int lane, uint32_t j)
{
    uint32_t per = (uint32_t)(h->pr.lanes * h->pr.chunks), g = (uint32_t)h->gpn;
    uint32_t i = (uint32_t)(lane * h->pr.chunks) + j;
    const int *cyc = h->cyc[lane % 2], *node = h->node[lane % 2];
    algo_layout_t in = algo_layout(ACC_BUF_IN, i, per, 1), part;
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, 0, 1);
    acc_status_t st = ACC_OK;
    uint32_t q;
    int k;

    /* GPU h's blocks: input chunks (k*gpn + h)*per + i for every node k. */
    in.nsub = (uint32_t)h->nodes;
    in.sub_stride = g * per;
    part = in;
    part.buf = ACC_BUF_SCRATCH;
    for (k = 0; k < h->nodes && st == ACC_OK; k++) {
        const int *grp = node + k * h->gpn;
        in.sub_first = part.sub_first = (uint32_t)k;
        if (h->inner == ALGO_INNER_RING) {
            st = algo_ring_reduce_scatter(p, lane, grp, h->gpn, cyc, &in, &part, 0);
            continue;
        }
        /* The second barrier keeps each GPU until its peers have read its input. */
        st = algo_pm_barrier(p, lane, grp, h->gpn, ALGO_SLOT(lane, 0), j + 1);
        if (st == ACC_OK)
            st = algo_pm_reduce_scatter(p, lane, grp, h->gpn, cyc, &in, &part);
        if (st == ACC_OK)
            st = algo_pm_barrier(p, lane, grp, h->gpn, ALGO_SLOT(lane, 1), j + 1);
    }
    /* Rail q: position k is rank k*gpn + q, whose block is scratch chunk (k*gpn + q)*per + i. */
    for (q = 0; q < g && st == ACC_OK; q++) {
        const int *r = h->rail + q * (uint32_t)h->nodes;
        algo_layout_t src = algo_layout(ACC_BUF_SCRATCH, q * per + i, g * per, 1);
        st = h->outer == ALGO_OUTER_RING
                 ? algo_ring_reduce_scatter(p, lane, r, h->nodes, NULL, &src, &res, 0)
                 : algo_rh_reduce_scatter(p, lane, r, h->nodes, &src, &src, &res);
    }
    return st;
}

static acc_status_t build_explicit(const acc_topo_t *topo, const acc_algo_args_t *args,
                                   acc_plan_t **out)
{
    algo_hier_t h;
    acc_plan_t *p = NULL;
    uint32_t per, n = (uint32_t)acc_topo_ranks(topo);
    int lane, j;
    acc_status_t st;

    if ((st = algo_hier_setup(&h, &spec, "rh", 0, topo, args, 1)) != ACC_OK)
        return st;
    per = (uint32_t)(h.pr.lanes * h.pr.chunks);
    st = algo_plan_new(topo, ACC_COLL_REDUCE_SCATTER, "hier", args, h.pr.lanes, per * n, per,
                       per * n, &p);
    if (st == ACC_OK)
        st = algo_hier_params(p, &h);
    for (lane = 0; lane < h.pr.lanes && st == ACC_OK; lane++)
        for (j = 0; j < h.pr.chunks && st == ACC_OK; j++)
            st = round_fn(p, &h, lane, (uint32_t)j);
    algo_hier_free(&h);
    if (st != ACC_OK) {
        acc_plan_destroy(p);
        return st;
    }
    p->inplace = 1;
    *out = p;
    return ACC_OK;
}

/* ---- class form (outer=ring inner=direct; algo_hier_cplan's grid) ------------------------
 * Position q's blocks are rank blocks (k'*gpn + h)*per + i of the input and scratch: chunk i +
 * per x the rank at a point, a RANK term.  The node step reduces position q's block of every
 * node k + d (d = 0 .. nodes-1, its own node's first: algo_layout_t.sub_first) over its node
 * into scratch; the rail ring then reduce-scatters scratch along dimension 0. */

static int class_covers(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_hier_class_covers(&spec, "rh", 0, topo, args, 1);
}

static acc_status_t class_round(acc_cplan_t *cp, int lane, uint32_t cls, const algo_hier_t *h,
                                int q, uint32_t j)
{
    static const algo_cring_t rail = {0, 1, -1, 0};
    uint32_t per = (uint32_t)(h->pr.lanes * h->pr.chunks);
    uint32_t i = (uint32_t)(lane * h->pr.chunks) + j;
    algo_layout_t src = algo_layout(ACC_BUF_SCRATCH, i, per, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, 0, 1);
    acc_status_t st =
        algo_hier_class_signal_wait(cp, lane, cls, q, h->gpn, ALGO_SLOT(lane, 0), j + 1);

    for (int d = 0; d < h->nodes && st == ACC_OK; d++) {
        acc_cop_t op = acc_cop_init(ACC_OP_REDUCE_PEERS);
        op.peer = acc_cpeer_row(1);
        op.src = acc_cref_const(ACC_BUF_IN, i, 1);
        op.dst = acc_cref_const(ACC_BUF_SCRATCH, i, 1);
        if ((st = acc_cref_add_term(&op.src, ACC_CTERM_RANK, 0, d, per)) == ACC_OK &&
            (st = acc_cref_add_term(&op.dst, ACC_CTERM_RANK, 0, d, per)) == ACC_OK)
            st = acc_cplan_add(cp, lane, cls, &op);
    }
    if (st == ACC_OK)
        st = algo_hier_class_signal_wait(cp, lane, cls, q, h->gpn, ALGO_SLOT(lane, 1), j + 1);
    return st != ACC_OK ? st : algo_ring_rs_class(cp, lane, cls, &rail, &src, &res, 0);
}

static acc_status_t build_class(const acc_topo_t *topo, const acc_algo_args_t *args,
                                acc_cplan_t **out)
{
    algo_hier_t h;
    uint32_t per, n = (uint32_t)acc_topo_ranks(topo);
    acc_status_t st;

    *out = NULL;
    if ((st = algo_hier_setup(&h, &spec, "rh", 0, topo, args, 1)) != ACC_OK)
        return st;
    per = (uint32_t)(h.pr.lanes * h.pr.chunks);
    st =
        h.outer != ALGO_OUTER_RING || h.inner != ALGO_INNER_DIRECT
            ? acc_error_set(ACC_ERR_UNSUPPORTED,
                            "hier reduce_scatter has a class form for inner=direct outer=ring only")
            : algo_hier_class_build(&h, ACC_COLL_REDUCE_SCATTER, args, per * n, per, per * n, 1,
                                    class_round, out);
    algo_hier_free(&h);
    return st;
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_reduce_scatter_hier_class, topo, args, out);
}

const acc_algo_t algo_reduce_scatter_hier = {
    "hier", ACC_COLL_REDUCE_SCATTER,
    "intra-node reduce-scatter into scratch, then per-rail inter-node reduce-scatter "
    "(inner=ring|direct, outer=ring|rh)",
    supports, build};

const algo_class_form_t algo_reduce_scatter_hier_class = {
    &algo_reduce_scatter_hier, class_covers, build_class, build_explicit, NULL, NULL};
