/* The setup shared by the hierarchical generators: names, checks, node rings and rails; and the
 * allreduce between nodes that hier and hier_pipe share. */
#include "algo_util.h"

#include <string.h>

/* Resolve one of inner/outer: *kind gets the index of the name in names[] (NULL entries are
 * not offered). */
static acc_status_t pick(const algo_spec_t *spec, const char *what, const char *given,
                         const char *const *names, int count, int def, int *kind, const char **name)
{
    acc_buf_t known;
    acc_status_t st;
    int i;

    if (!given || !given[0]) {
        *kind = def;
        *name = names[def];
        return ACC_OK;
    }
    for (i = 0; i < count; i++) {
        if (names[i] && strcmp(given, names[i]) == 0) {
            *kind = i;
            *name = names[i];
            return ACC_OK;
        }
    }
    acc_buf_init(&known);
    for (i = 0; i < count; i++)
        if (names[i])
            acc_buf_printf(&known, "%s%s", known.len ? ", " : "", names[i]);
    st = acc_error_set(ACC_ERR_INVALID, "%s: %s='%s' is not one of %s", spec->name, what, given,
                       known.data ? known.data : "");
    acc_buf_free(&known);
    return st;
}

acc_status_t algo_hier_setup(algo_hier_t *h, const algo_spec_t *spec, const char *hd, int has_tree,
                             const acc_topo_t *topo, const acc_algo_args_t *args, int build)
{
    static const char *const inner_names[] = {"ring", "direct"};
    const char *outer_names[3];
    int k, q, n, direct_ok;
    acc_status_t st;

    memset(h, 0, sizeof(*h));
    if ((st = algo_params(spec, topo, args, &h->pr)) != ACC_OK)
        return st;
    h->nodes = acc_topo_nodes(topo);
    h->gpn = acc_topo_gpus_per_node(topo);
    n = h->nodes * h->gpn;
    if (h->nodes < 2)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "hier needs at least 2 nodes; this topology "
                             "has 1 (use ring, or a peer-memory algorithm within the node)");
    outer_names[ALGO_OUTER_RING] = "ring";
    outer_names[ALGO_OUTER_HD] = hd;
    outer_names[ALGO_OUTER_TREE] = has_tree ? "tree" : NULL;
    direct_ok = algo_need_nvlink_within(topo, "hier inner=direct") == ACC_OK;
    if ((st = pick(spec, "inner", args ? args->inner : NULL, inner_names, 2,
                   direct_ok ? ALGO_INNER_DIRECT : ALGO_INNER_RING, &h->inner, &h->inner_name)) !=
            ACC_OK ||
        (st = pick(spec, "outer", args ? args->outer : NULL, outer_names, 3, ALGO_OUTER_RING,
                   &h->outer, &h->outer_name)) != ACC_OK)
        return st;
    if (h->inner == ALGO_INNER_DIRECT &&
        (st = algo_need_nvlink_within(topo, "hier inner=direct")) != ACC_OK)
        return st;
    if (!build)
        return ACC_OK;
    for (k = 0; k < 2; k++) {
        h->cyc[k] = acc_mem_calloc((size_t)h->gpn, sizeof(int));
        h->node[k] = acc_mem_calloc((size_t)n, sizeof(int));
    }
    h->rail = acc_mem_calloc((size_t)n, sizeof(int));
    if (!h->cyc[0] || !h->cyc[1] || !h->node[0] || !h->node[1] || !h->rail) {
        algo_hier_free(h);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a hierarchical plan of %d ranks", n);
    }
    if ((st = algo_node_cycle(topo, h->cyc[0])) != ACC_OK) {
        algo_hier_free(h);
        return st;
    }
    for (q = 0; q < h->gpn; q++)
        h->cyc[1][q] = h->cyc[0][(h->gpn - q) % h->gpn];
    for (k = 0; k < h->nodes; k++) {
        for (q = 0; q < h->gpn; q++) {
            h->node[0][k * h->gpn + q] = k * h->gpn + h->cyc[0][q];
            h->node[1][k * h->gpn + q] = k * h->gpn + h->cyc[1][q];
            h->rail[q * h->nodes + k] = k * h->gpn + q;
        }
    }
    return ACC_OK;
}

void algo_hier_free(algo_hier_t *h)
{
    int k;
    for (k = 0; k < 2; k++) {
        acc_mem_free(h->cyc[k]);
        acc_mem_free(h->node[k]);
    }
    acc_mem_free(h->rail);
    memset(h, 0, sizeof(*h));
}

acc_status_t algo_hier_params(acc_plan_t *p, const algo_hier_t *h)
{
    return acc_plan_set_params(p, "lanes=%d chunks=%d inner=%s outer=%s", h->pr.lanes, h->pr.chunks,
                               h->inner_name, h->outer_name);
}

int algo_hier_class_covers(const algo_spec_t *spec, const char *hd, int has_tree,
                           const acc_topo_t *topo, const acc_algo_args_t *args, int direct)
{
    algo_hier_t h;
    return algo_hier_setup(&h, spec, hd, has_tree, topo, args, 0) == ACC_OK &&
           h.outer == ALGO_OUTER_RING && (!direct || h.inner == ALGO_INNER_DIRECT);
}

acc_status_t algo_hier_cplan(const algo_hier_t *h, const char *algo, acc_coll_t coll,
                             const acc_algo_args_t *args, uint32_t in, uint32_t out,
                             uint32_t scratch, acc_cplan_t **cpp)
{
    int32_t dims[2] = {h->nodes, h->gpn};
    char params[ACC_PLAN_PARAMS_MAX];
    acc_cplan_t *cp = NULL;
    acc_status_t st = acc_cplan_create(coll, 2, dims, h->pr.lanes, in, out, scratch, &cp);

    *cpp = NULL;
    if (st != ACC_OK)
        return st;
    snprintf(cp->algo, sizeof(cp->algo), "%s", algo);
    cp->proto = args ? args->proto : ACC_PROTO_SIMPLE;
    cp->inplace = 1;
    /* Nodes are alike: translating by one node maps every link onto a like one. */
    cp->sym_step[0] = 1;
    snprintf(params, sizeof(params), "lanes=%d chunks=%d inner=%s outer=%s", h->pr.lanes,
             h->pr.chunks, h->inner_name, h->outer_name);
    if ((st = acc_cplan_set_params(cp, params)) != ACC_OK) {
        acc_cplan_destroy(cp);
        return st;
    }
    *cpp = cp;
    return ACC_OK;
}

acc_status_t algo_hier_class_build(const algo_hier_t *h, acc_coll_t coll,
                                   const acc_algo_args_t *args, uint32_t in, uint32_t out,
                                   uint32_t scratch, int per_position,
                                   algo_hier_class_round_fn round, acc_cplan_t **cpp)
{
    acc_cplan_t *cp = NULL;
    acc_status_t st = algo_hier_cplan(h, "hier", coll, args, in, out, scratch, &cp);

    *cpp = NULL;
    for (int lane = 0; lane < h->pr.lanes && st == ACC_OK; lane++) {
        if ((st = acc_cplan_set_ranks(cp, lane, h->node[lane % 2])) != ACC_OK)
            break;
        for (int q = 0; q < (per_position ? h->gpn : 1) && st == ACC_OK; q++) {
            int32_t lo[2] = {0, per_position ? q : 0};
            int32_t hi[2] = {h->nodes, per_position ? q + 1 : h->gpn};
            uint32_t cls;
            if ((st = acc_cplan_add_class(cp, lane, lo, hi, &cls)) != ACC_OK)
                break;
            for (int j = 0; j < h->pr.chunks && st == ACC_OK; j++)
                st = round(cp, lane, cls, h, per_position ? q : -1, (uint32_t)j);
        }
    }
    if (st != ACC_OK) {
        acc_cplan_destroy(cp);
        return st;
    }
    *cpp = cp;
    return ACC_OK;
}

acc_status_t algo_hier_class_signal_wait(acc_cplan_t *cp, int lane, uint32_t cls, int q, int m,
                                         uint16_t slot, uint32_t value)
{
    acc_status_t st = ACC_OK;
    for (int pass = 0; pass < 2; pass++)
        for (int s = 0; s < m && st == ACC_OK; s++) {
            acc_cop_t op = acc_cop_init(pass ? ACC_OP_WAIT : ACC_OP_SIGNAL);
            if (s == q)
                continue;
            op.peer = acc_cpeer_rel(1, s - q);
            op.slot = slot;
            op.value = pass ? value : 0;
            st = acc_cplan_add(cp, lane, cls, &op);
        }
    return st;
}

/* Block q of a round: chunks base + q * blk .. + blk of buf, q the position along dimension 1. */
static acc_status_t node_block(acc_bufid_t buf, uint32_t base, uint32_t blk, acc_cref_t *out)
{
    *out = acc_cref_const(buf, base, blk);
    return acc_cref_add_term(out, ACC_CTERM_COORD, 1, 0, blk);
}

/* algo_pm_barrier + algo_pm_reduce_scatter (before the rails) or algo_pm_allgather (after). */
static acc_status_t node_direct(acc_cplan_t *cp, int lane, uint32_t cls, const algo_hier_t *h,
                                int q, uint32_t j, uint32_t base, uint32_t blk, int after)
{
    acc_status_t st = ACC_OK;
    int g = h->gpn;
    if (!after) {
        acc_cop_t op = acc_cop_init(ACC_OP_REDUCE_PEERS);
        if ((st = algo_hier_class_signal_wait(cp, lane, cls, q, g, ALGO_SLOT(lane, 0), j + 1)) !=
                ACC_OK ||
            (st = node_block(ACC_BUF_IN, base, blk, &op.src)) != ACC_OK ||
            (st = node_block(ACC_BUF_OUT, base, blk, &op.dst)) != ACC_OK)
            return st;
        op.peer = acc_cpeer_row(1);
        return acc_cplan_add(cp, lane, cls, &op);
    }
    for (int s = 1; s < g && st == ACC_OK; s++) {
        acc_cop_t op = acc_cop_init(ACC_OP_PUT);
        op.peer = acc_cpeer_rel(1, s);
        if ((st = node_block(ACC_BUF_OUT, base, blk, &op.src)) == ACC_OK &&
            (st = node_block(ACC_BUF_OUT, base, blk, &op.dst)) == ACC_OK)
            st = acc_cplan_add(cp, lane, cls, &op);
    }
    return st != ACC_OK
               ? st
               : algo_hier_class_signal_wait(cp, lane, cls, q, g, ALGO_SLOT(lane, 1), j + 1);
}

acc_status_t algo_hier_class_node_step(acc_cplan_t *cp, int lane, uint32_t cls,
                                       const algo_hier_t *h, int q, uint32_t j, uint32_t base,
                                       int after)
{
    static const algo_cring_t inner = {1, 0, -1, 0};
    uint32_t blk = (uint32_t)h->nodes;
    algo_layout_t in = algo_layout(ACC_BUF_IN, base, blk, blk);
    algo_layout_t res = algo_layout(ACC_BUF_OUT, base, blk, blk);
    if (q >= 0)
        return node_direct(cp, lane, cls, h, q, j, base, blk, after);
    return after ? algo_ring_ag_class(cp, lane, cls, &inner, &res, NULL, 0)
                 : algo_ring_rs_class(cp, lane, cls, &inner, &in, &res, 0);
}

acc_status_t algo_hier_class_rails(acc_cplan_t *cp, int lane, uint32_t cls, uint32_t base,
                                   uint32_t blk)
{
    const algo_cring_t outer = {0, 0, 1, blk};
    algo_layout_t sub = algo_layout(ACC_BUF_OUT, base, 1, 1);
    acc_status_t st = algo_ring_rs_class(cp, lane, cls, &outer, &sub, &sub, 1);
    return st != ACC_OK ? st : algo_ring_ag_class(cp, lane, cls, &outer, &sub, NULL, 1);
}

acc_status_t algo_hier_allreduce_outer(acc_plan_t *p, const algo_hier_t *h,
                                       const algo_tree_t *trees, int lane, const int *r,
                                       uint32_t base)
{
    algo_layout_t sub = algo_layout(ACC_BUF_OUT, base, 1, 1);
    acc_status_t st = ACC_OK;
    int k, t;

    if (h->outer == ALGO_OUTER_RING) {
        st = algo_ring_reduce_scatter(p, lane, r, h->nodes, NULL, &sub, &sub, 1);
        return st != ACC_OK ? st : algo_ring_allgather(p, lane, r, h->nodes, NULL, &sub, NULL, 1);
    }
    if (h->outer == ALGO_OUTER_HD)
        return algo_rhd_allreduce(p, lane, r, h->nodes, &sub, &sub);
    /* Both trees up, then both down: each rank is inner in at most one of them. */
    for (k = 0; k < h->nodes && st == ACC_OK; k++) {
        for (t = 0; t < 2 && st == ACC_OK; t++) {
            acc_ref_t c = acc_ref(ACC_BUF_OUT, base + (uint32_t)t, 1);
            algo_tree_out_t o = algo_tree_out(p, lane, r[k]);
            st = algo_tree_up(&o, &trees[t], c, c, c);
        }
        for (t = 0; t < 2 && st == ACC_OK; t++) {
            acc_ref_t c = acc_ref(ACC_BUF_OUT, base + (uint32_t)t, 1);
            algo_tree_out_t o = algo_tree_out(p, lane, r[k]);
            st = algo_tree_down(&o, &trees[t], c, c);
        }
    }
    return st;
}
