/*
 * Ring plans in class form (acc_cplan.h): the ring steps of algo_steps.c written once for every
 * ring position, relative to it, and the driver of round-based ring plans.  Step for step the
 * same schedule as ring_rs / ring_ag there, so that the expansion is the plan algo_rounds_plan
 * builds (tests/compiler/test_cplan.c compares their YAML).
 */
#include "algo_util.h"

#include <string.h>

/* Block (q + add) of a plain layout at position q of the ring: chunk base + stride * id, id the
 * position (COORD) or the rank there (RANK), moved by the fixed term. */
static acc_status_t block(const algo_layout_t *l, const algo_cring_t *ring, int32_t add,
                          acc_cref_t *out)
{
    acc_status_t st = ACC_OK;
    *out = acc_cref_const((acc_bufid_t)l->buf, l->base, l->cnt);
    if ((l->nsub > 1) || l->fold)
        return acc_error_set(ACC_ERR_INTERNAL,
                             "ring in class form: a layout of %u pieces per block "
                             "(strided hierarchical layouts have no class form yet)",
                             l->nsub);
    if (l->stride)
        st = acc_cref_add_term(out, ring->id_rank ? ACC_CTERM_RANK : ACC_CTERM_COORD, ring->dim,
                               add, l->stride);
    if (st == ACC_OK && ring->fixed_dim >= 0)
        st = acc_cref_add_term(out, ACC_CTERM_COORD, ring->fixed_dim, 0, ring->fixed_coef);
    return st;
}

/* Append `code` with peers (0: none, else the offset along the ring) and blocks. */
static acc_status_t emit(acc_cplan_t *cp, int lane, uint32_t cls, acc_opcode_t code, int peer,
                         int peer2, const algo_cring_t *ring, const algo_layout_t *src,
                         int32_t sadd, const algo_layout_t *dst, int32_t dadd)
{
    acc_cop_t op = acc_cop_init(code);
    acc_status_t st = ACC_OK;
    if (peer)
        op.peer = acc_cpeer_rel(ring->dim, peer);
    if (peer2)
        op.peer2 = acc_cpeer_rel(ring->dim, peer2);
    if (src && (st = block(src, ring, sadd, &op.src)) != ACC_OK)
        return st;
    if (dst && (st = block(dst, ring, dadd, &op.dst)) != ACC_OK)
        return st;
    return acc_cplan_add(cp, lane, cls, &op);
}

acc_status_t algo_ring_rs_class(acc_cplan_t *cp, int lane, uint32_t cls, const algo_cring_t *ring,
                                const algo_layout_t *src, const algo_layout_t *dst, int forward)
{
    int m = cp->dims[ring->dim], k;
    acc_status_t st;

    if (m == 1)
        return algo_layout_eq(src, dst)
                   ? ACC_OK
                   : emit(cp, lane, cls, ACC_OP_COPY, 0, 0, ring, src, 0, dst, 0);
    st = emit(cp, lane, cls, ACC_OP_SEND, 1, 0, ring, src, -1, NULL, 0);
    for (k = 1; k < m - 1 && st == ACC_OK; k++)
        st = emit(cp, lane, cls, ACC_OP_RECV_REDUCE_SEND, -1, 1, ring, src, -k - 1, NULL, 0);
    if (st == ACC_OK)
        st = emit(cp, lane, cls, forward ? ACC_OP_RECV_REDUCE_COPY_SEND : ACC_OP_RECV_REDUCE_COPY,
                  -1, forward ? 1 : 0, ring, src, 0, dst, 0);
    return st;
}

acc_status_t algo_ring_ag_class(acc_cplan_t *cp, int lane, uint32_t cls, const algo_cring_t *ring,
                                const algo_layout_t *buf, const algo_layout_t *own, int after_rs)
{
    int m = cp->dims[ring->dim], k;
    acc_status_t st = ACC_OK;

    if (m > 1) {
        if (!after_rs)
            st = emit(cp, lane, cls, ACC_OP_SEND, 1, 0, ring, own ? own : buf, 0, NULL, 0);
        for (k = 0; k < m - 2 && st == ACC_OK; k++)
            st = emit(cp, lane, cls, ACC_OP_RECV_COPY_SEND, -1, 1, ring, NULL, 0, buf, -k - 1);
        if (st == ACC_OK)
            st = emit(cp, lane, cls, ACC_OP_RECV, -1, 0, ring, NULL, 0, buf, 1);
    }
    if (own && st == ACC_OK)
        st = emit(cp, lane, cls, ACC_OP_COPY, 0, 0, ring, own, 0, buf, 0);
    return st;
}

/* The translation the topology must be symmetric under: rings enter and leave nodes through
 * the same GPUs and run through odd nodes backwards (algo_ring_order), so two nodes' positions
 * on; within one node nothing is claimed. */
static int32_t ring_step(const acc_topo_t *topo)
{
    int nodes = acc_topo_nodes(topo);
    return nodes > 1 ? 2 * acc_topo_gpus_per_node(topo) : 0;
}

acc_status_t algo_rounds_cplan(const algo_rounds_t *r, algo_class_round_fn round,
                               const acc_topo_t *topo, const acc_algo_args_t *args,
                               acc_cplan_t **out)
{
    algo_params_t pr;
    acc_cplan_t *cp = NULL;
    int n = acc_topo_ranks(topo), *order = NULL, lane, j;
    int32_t dims[1] = {n}, lo[1] = {0}, hi[1] = {n};
    uint32_t per, width, in, res, cls;
    char params[ACC_PLAN_PARAMS_MAX];
    acc_status_t st;

    *out = NULL;
    if (r->width == ALGO_WIDTH_1 && r->ring)
        return acc_error_set(ACC_ERR_INTERNAL, "%s has no class form", r->spec->name);
    if ((st = algo_rounds_supports(r, topo, args)) != ACC_OK ||
        (st = algo_params(r->spec, topo, args, &pr)) != ACC_OK)
        return st;
    per = (uint32_t)(pr.lanes * pr.chunks);
    width = algo_rounds_width(r, n);
    in = r->coll == ACC_COLL_ALLGATHER ? per : per * width;
    res = r->coll == ACC_COLL_REDUCE_SCATTER ? per : per * width;
    if (!(order = acc_mem_calloc((size_t)n, sizeof(int))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for an order of %d ranks", n);
    if ((st = acc_cplan_create(r->coll, 1, dims, pr.lanes, in, res, r->scratch ? in : 0, &cp)) !=
        ACC_OK)
        goto out;
    snprintf(cp->algo, sizeof(cp->algo), "%s", r->algo);
    cp->proto = args ? args->proto : ACC_PROTO_SIMPLE;
    cp->inplace = 1;
    /* Rings claim the topology's symmetry under their translation; halving and doubling
     * (ranks in their own order, no table) claim none: they are proven under XOR. */
    cp->sym_step[0] = r->ring ? ring_step(topo) : 0;
    for (lane = 0; lane < pr.lanes && st == ACC_OK; lane++) {
        if ((r->ring && ((st = algo_ring_order(topo, lane, order)) != ACC_OK ||
                         (st = acc_cplan_set_ranks(cp, lane, order)) != ACC_OK)) ||
            (st = acc_cplan_add_class(cp, lane, lo, hi, &cls)) != ACC_OK)
            break;
        if (lane == 0) {
            algo_params_format(params, sizeof(params), &pr, r->ring ? order : NULL, n);
            if ((st = acc_cplan_set_params(cp, params)) != ACC_OK)
                break;
        }
        for (j = 0; j < pr.chunks && st == ACC_OK; j++)
            st = round(cp, lane, cls, (uint32_t)(lane * pr.chunks + j), per);
    }
out:
    acc_mem_free(order);
    if (st != ACC_OK) {
        acc_cplan_destroy(cp);
        return st;
    }
    *out = cp;
    return ACC_OK;
}

acc_status_t algo_class_expanded(const algo_class_form_t *f, const acc_topo_t *topo,
                                 const acc_algo_args_t *args, acc_plan_t **out)
{
    acc_cplan_t *cp = NULL;
    acc_status_t st;
    *out = NULL;
    if (f->covers && !f->covers(topo, args))
        return algo_class_build_explicit(f, topo, args, out);
    if ((st = algo_class_build(f, topo, args, &cp)) == ACC_OK)
        st = acc_cplan_expand(cp, out);
    acc_cplan_destroy(cp);
    return st;
}

acc_status_t algo_class_build(const algo_class_form_t *f, const acc_topo_t *topo,
                              const acc_algo_args_t *args, acc_cplan_t **out)
{
    return f->build_class ? f->build_class(topo, args, out)
                          : algo_rounds_cplan(f->rounds, f->round, topo, args, out);
}

acc_status_t algo_class_build_explicit(const algo_class_form_t *f, const acc_topo_t *topo,
                                       const acc_algo_args_t *args, acc_plan_t **out)
{
    return f->build_explicit ? f->build_explicit(topo, args, out)
                             : algo_rounds_plan(f->rounds, topo, args, out);
}
