/*
 * Hierarchical allgather for nodes x gpn GPUs: first an allgather along each rail (the GPUs with
 * the same local index on every node, one NIC rail), so GPU h of every node holds the inputs of
 * GPU h of all nodes; then an allgather inside each node, GPU h contributing those `nodes`
 * blocks.  Each GPU receives only (nodes-1)/n of the output over the network.
 *
 * outer (per rail): ring or rd (recursive doubling); inner (in the node): ring, or direct (peer
 * memory; NVLink/NVSwitch nodes only).  A GPU's blocks in the node step lie `gpn` blocks apart
 * in the output, so inner steps move one piece per node (algo_layout_t.nsub).  Lanes and rounds
 * split each rank's input: round i moves input chunk i.  Correct in place.
 */
#include "algo_util.h"

static const algo_spec_t spec = {"hier allgather", 2, 1, 0, 1};

static acc_status_t supports(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    algo_hier_t h;
    return algo_hier_setup(&h, &spec, "rd", 0, topo, args, 0);
}

static acc_status_t round_fn(acc_plan_t *p, const algo_hier_t *h, int lane, uint32_t j)
{
    uint32_t per = (uint32_t)(h->pr.lanes * h->pr.chunks), g = (uint32_t)h->gpn;
    uint32_t i = (uint32_t)(lane * h->pr.chunks) + j;
    const int *cyc = h->cyc[lane % 2], *node = h->node[lane % 2];
    algo_layout_t own = algo_layout(ACC_BUF_IN, i, 0, 1), strided;
    acc_status_t st = ACC_OK;
    uint32_t q;
    int k;

    /* Rail q: position k is rank k*gpn + q, whose block is output chunk (k*gpn + q)*per + i. */
    for (q = 0; q < g && st == ACC_OK; q++) {
        const int *r = h->rail + q * (uint32_t)h->nodes;
        algo_layout_t res = algo_layout(ACC_BUF_OUT, q * per + i, g * per, 1);
        st = h->outer == ALGO_OUTER_RING
                 ? algo_ring_allgather(p, lane, r, h->nodes, NULL, &res, &own, 0)
                 : algo_rd_allgather(p, lane, r, h->nodes, &own, &res);
    }
    /* In the node, GPU h's block is output chunks (k*gpn + h)*per + i for every node k. */
    strided = algo_layout(ACC_BUF_OUT, i, per, 1);
    strided.nsub = (uint32_t)h->nodes;
    strided.sub_stride = g * per;
    for (k = 0; k < h->nodes && st == ACC_OK; k++) {
        const int *grp = node + k * h->gpn;
        strided.sub_first = (uint32_t)k;
        if (h->inner == ALGO_INNER_RING) {
            st = algo_ring_allgather(p, lane, grp, h->gpn, cyc, &strided, NULL, 0);
        } else {
            st = algo_pm_barrier(p, lane, grp, h->gpn, ALGO_SLOT(lane, 0), j + 1);
            if (st == ACC_OK)
                st = algo_pm_allgather(p, lane, grp, h->gpn, cyc, &strided, NULL,
                                       ALGO_SLOT(lane, 1), j + 1);
        }
    }
    return st;
}

static acc_status_t build_explicit(const acc_topo_t *topo, const acc_algo_args_t *args,
                                   acc_plan_t **out)
{
    algo_hier_t h;
    acc_plan_t *p = NULL;
    uint32_t per;
    int lane, j;
    acc_status_t st;

    if ((st = algo_hier_setup(&h, &spec, "rd", 0, topo, args, 1)) != ACC_OK)
        return st;
    per = (uint32_t)(h.pr.lanes * h.pr.chunks);
    st = algo_plan_new(topo, ACC_COLL_ALLGATHER, "hier", args, h.pr.lanes, per,
                       per * (uint32_t)acc_topo_ranks(topo), 0, &p);
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
 * Position q's blocks are rank blocks (k'*gpn + h)*per + i: chunk i + per x the rank at a point,
 * a RANK term.  The rail ring runs along dimension 0 with ranks as block ids; the node step puts
 * position q's block of every node k + d (d = 0 .. nodes-1, its own node's first:
 * algo_layout_t.sub_first) to each other position of its node. */

static int class_covers(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    return algo_hier_class_covers(&spec, "rd", 0, topo, args, 1);
}

static acc_status_t class_round(acc_cplan_t *cp, int lane, uint32_t cls, const algo_hier_t *h,
                                int q, uint32_t j)
{
    static const algo_cring_t rail = {0, 1, -1, 0};
    uint32_t per = (uint32_t)(h->pr.lanes * h->pr.chunks);
    uint32_t i = (uint32_t)(lane * h->pr.chunks) + j;
    algo_layout_t own = algo_layout(ACC_BUF_IN, i, 0, 1);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, i, per, 1);
    acc_status_t st = algo_ring_ag_class(cp, lane, cls, &rail, &res, &own, 0);

    if (st == ACC_OK)
        st = algo_hier_class_signal_wait(cp, lane, cls, q, h->gpn, ALGO_SLOT(lane, 0), j + 1);
    for (int s = 1; s < h->gpn && st == ACC_OK; s++)
        for (int d = 0; d < h->nodes && st == ACC_OK; d++) {
            acc_cop_t op = acc_cop_init(ACC_OP_PUT);
            op.peer = acc_cpeer_rel(1, s);
            op.src = acc_cref_const(ACC_BUF_OUT, i, 1);
            if ((st = acc_cref_add_term(&op.src, ACC_CTERM_RANK, 0, d, per)) == ACC_OK) {
                op.dst = op.src;
                st = acc_cplan_add(cp, lane, cls, &op);
            }
        }
    return st != ACC_OK
               ? st
               : algo_hier_class_signal_wait(cp, lane, cls, q, h->gpn, ALGO_SLOT(lane, 1), j + 1);
}

static acc_status_t build_class(const acc_topo_t *topo, const acc_algo_args_t *args,
                                acc_cplan_t **out)
{
    algo_hier_t h;
    uint32_t per;
    acc_status_t st;

    *out = NULL;
    if ((st = algo_hier_setup(&h, &spec, "rd", 0, topo, args, 1)) != ACC_OK)
        return st;
    per = (uint32_t)(h.pr.lanes * h.pr.chunks);
    st = h.outer != ALGO_OUTER_RING || h.inner != ALGO_INNER_DIRECT
             ? acc_error_set(ACC_ERR_UNSUPPORTED,
                             "hier allgather has a class form for inner=direct outer=ring only")
             : algo_hier_class_build(&h, ACC_COLL_ALLGATHER, args, per,
                                     per * (uint32_t)acc_topo_ranks(topo), 0, 1, class_round, out);
    algo_hier_free(&h);
    return st;
}

static acc_status_t build(const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    return algo_class_expanded(&algo_allgather_hier_class, topo, args, out);
}

const acc_algo_t algo_allgather_hier = {
    "hier", ACC_COLL_ALLGATHER,
    "per-rail inter-node allgather, then intra-node allgather (inner=ring|direct, "
    "outer=ring|rd)",
    supports, build};

const algo_class_form_t algo_allgather_hier_class = {
    &algo_allgather_hier, class_covers, build_class, build_explicit, NULL, NULL};
