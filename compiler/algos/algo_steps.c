/*
 * The building blocks that emit operations for a group of ranks on one lane: ring steps (and
 * the driver of round-based plans) and peer-memory steps; recursive halving/doubling is in
 * algo_hd.c, trees in algo_tree.c.  Every generator and every phase of the hierarchical ones
 * goes through these, so each schedule shape is written once.
 */
#include "algo_util.h"

#include <string.h>

#define ID(id, i) ((id) ? (id)[i] : (i))

static int mod(int a, int m)
{
    return ((a % m) + m) % m;
}

/* ---- ring ---------------------------------------------------------------------------------- */

/* Step k of the reduce-scatter at ring position q handles the block of position q - k - 1: it
 * arrives partially reduced from the previous rank, gets this rank's contribution and moves on,
 * so that after m - 1 steps position q holds its own block reduced over everyone. */
static acc_status_t ring_rs(acc_plan_t *p, int lane, const int *g, int m, const int *id,
                            const algo_layout_t *src, const algo_layout_t *dst, int forward)
{
    int q, k, b;
    acc_status_t st = ACC_OK;

    for (q = 0; q < m && st == ACC_OK; q++) {
        int rank = g[q], next = g[mod(q + 1, m)], prev = g[mod(q - 1, m)];
        if (m == 1) {
            b = ID(id, 0);
            if (!algo_layout_eq(src, dst))
                st = algo_emit(p, rank, lane, ACC_OP_COPY, -1, -1, src, b, b + 1, dst, b, b + 1);
            continue;
        }
        b = ID(id, mod(q - 1, m));
        st = algo_emit(p, rank, lane, ACC_OP_SEND, next, -1, src, b, b + 1, NULL, 0, 0);
        for (k = 1; k < m - 1 && st == ACC_OK; k++) {
            b = ID(id, mod(q - k - 1, m));
            st = algo_emit(p, rank, lane, ACC_OP_RECV_REDUCE_SEND, prev, next, src, b, b + 1, NULL,
                           0, 0);
        }
        b = ID(id, q);
        if (st == ACC_OK)
            st = algo_emit(p, rank, lane,
                           forward ? ACC_OP_RECV_REDUCE_COPY_SEND : ACC_OP_RECV_REDUCE_COPY, prev,
                           forward ? next : -1, src, b, b + 1, dst, b, b + 1);
    }
    return st;
}

/* Step k of the allgather at position q passes on the block of position q - k. */
static acc_status_t ring_ag(acc_plan_t *p, int lane, const int *g, int m, const int *id,
                            const algo_layout_t *buf, const algo_layout_t *own, int after_rs)
{
    int q, k, b;
    acc_status_t st = ACC_OK;

    for (q = 0; q < m && st == ACC_OK; q++) {
        int rank = g[q], next = g[mod(q + 1, m)], prev = g[mod(q - 1, m)], mine = ID(id, q);
        if (m > 1) {
            if (!after_rs)
                st = algo_emit(p, rank, lane, ACC_OP_SEND, next, -1, own ? own : buf, mine,
                               mine + 1, NULL, 0, 0);
            for (k = 0; k < m - 2 && st == ACC_OK; k++) {
                b = ID(id, mod(q - k - 1, m));
                st = algo_emit(p, rank, lane, ACC_OP_RECV_COPY_SEND, prev, next, NULL, 0, 0, buf, b,
                               b + 1);
            }
            b = ID(id, mod(q + 1, m));
            if (st == ACC_OK)
                st = algo_emit(p, rank, lane, ACC_OP_RECV, prev, -1, NULL, 0, 0, buf, b, b + 1);
        }
        /* The local copy goes last so that it does not delay the first send. */
        if (own && st == ACC_OK)
            st = algo_emit(p, rank, lane, ACC_OP_COPY, -1, -1, own, mine, mine + 1, buf, mine,
                           mine + 1);
    }
    return st;
}

acc_status_t algo_rounds_supports(const algo_rounds_t *r, const acc_topo_t *topo,
                                  const acc_algo_args_t *args)
{
    acc_status_t st = algo_check_args(r->spec, topo, args);
    if (st == ACC_OK && r->peer_memory)
        st = algo_need_nvlink_node(topo, r->algo);
    return st;
}

uint32_t algo_rounds_width(const algo_rounds_t *r, int n)
{
    return (uint32_t)(r->width == ALGO_WIDTH_P   ? algo_pow2_floor(n)
                      : r->width == ALGO_WIDTH_1 ? 1
                                                 : n);
}

acc_status_t algo_rounds_plan(const algo_rounds_t *r, const acc_topo_t *topo,
                              const acc_algo_args_t *args, acc_plan_t **out)
{
    algo_params_t pr;
    acc_plan_t *p = NULL;
    int n = acc_topo_ranks(topo), *order = NULL, lane, j;
    uint32_t per, width, in, res;
    acc_status_t st;

    if ((st = algo_rounds_supports(r, topo, args)) != ACC_OK ||
        (st = algo_params(r->spec, topo, args, &pr)) != ACC_OK)
        return st;
    per = (uint32_t)(pr.lanes * pr.chunks);
    width = algo_rounds_width(r, n);
    in = r->coll == ACC_COLL_ALLGATHER ? per : per * width;
    res = r->coll == ACC_COLL_REDUCE_SCATTER ? per : per * width;
    if (!(order = acc_mem_calloc((size_t)n, sizeof(int))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for an order of %d ranks", n);
    for (j = 0; j < n; j++)
        order[j] = j;
    if ((st = algo_plan_new(topo, r->coll, r->algo, args, pr.lanes, in, res, r->scratch ? in : 0,
                            &p)) != ACC_OK)
        goto out;
    p->inplace = 1;
    for (lane = 0; lane < pr.lanes && st == ACC_OK; lane++) {
        if (r->ring && (st = algo_ring_order(topo, lane, order)) != ACC_OK)
            break;
        if (lane == 0 && (st = algo_set_params(p, &pr, r->ring ? order : NULL)) != ACC_OK)
            break;
        for (j = 0; j < pr.chunks && st == ACC_OK; j++)
            st = r->round(p, lane, (uint32_t)(lane * pr.chunks + j), per, order);
    }
out:
    acc_mem_free(order);
    if (st != ACC_OK) {
        acc_plan_destroy(p);
        return st;
    }
    *out = p;
    return ACC_OK;
}

static uint32_t pieces(const algo_layout_t *a, const algo_layout_t *b)
{
    uint32_t na = a->nsub ? a->nsub : 1, nb = b && b->nsub ? b->nsub : na;
    return na == nb ? na : 0;
}

/* A block that is several pieces (one per node, hierarchical layouts) would make every ring
 * step several messages, and every rank would send them all before receiving any: more than a
 * connection's slots deadlock.  Each piece gets a ring of its own instead. */
acc_status_t algo_ring_reduce_scatter(acc_plan_t *p, int lane, const int *g, int m, const int *id,
                                      const algo_layout_t *src, const algo_layout_t *dst,
                                      int forward)
{
    uint32_t n = pieces(src, dst), s;
    acc_status_t st = ACC_OK;
    if (!n)
        return acc_error_set(ACC_ERR_INTERNAL, "ring reduce-scatter: layouts of %u and %u pieces",
                             src->nsub, dst->nsub);
    if (n == 1)
        return ring_rs(p, lane, g, m, id, src, dst, forward);
    for (s = 0; s < n && st == ACC_OK; s++) {
        algo_layout_t a = algo_layout_piece(src, s), b = algo_layout_piece(dst, s);
        st = ring_rs(p, lane, g, m, id, &a, &b, forward);
    }
    return st;
}

acc_status_t algo_ring_allgather(acc_plan_t *p, int lane, const int *g, int m, const int *id,
                                 const algo_layout_t *buf, const algo_layout_t *own, int after_rs)
{
    uint32_t n = pieces(buf, own), s;
    acc_status_t st = ACC_OK;
    if (!n)
        return acc_error_set(ACC_ERR_INTERNAL, "ring allgather: layouts of %u and %u pieces",
                             buf->nsub, own->nsub);
    if (n == 1 || after_rs)
        return n == 1 ? ring_ag(p, lane, g, m, id, buf, own, after_rs)
                      : acc_error_set(ACC_ERR_INTERNAL,
                                      "ring allgather after a reduce-scatter "
                                      "over %u pieces",
                                      n);
    for (s = 0; s < n && st == ACC_OK; s++) {
        algo_layout_t a = algo_layout_piece(buf, s), b;
        if (own)
            b = algo_layout_piece(own, s);
        st = ring_ag(p, lane, g, m, id, &a, own ? &b : NULL, after_rs);
    }
    return st;
}

/* ---- peer memory --------------------------------------------------------------------------- */

/* Position q signals every other rank of g on slot, then waits for each of their signals. */
static acc_status_t signal_wait(acc_plan_t *p, int lane, const int *g, int m, int q, uint16_t slot,
                                uint32_t value)
{
    int s, pass;
    acc_status_t st = ACC_OK;

    for (pass = 0; pass < 2; pass++) {
        for (s = 0; s < m && st == ACC_OK; s++) {
            acc_op_t op = acc_op_init(pass ? ACC_OP_WAIT : ACC_OP_SIGNAL);
            if (s == q)
                continue;
            op.peer = g[s];
            op.slot = slot;
            op.value = pass ? value : 0;
            st = acc_plan_add(p, g[q], lane, &op, NULL);
        }
    }
    return st;
}

acc_status_t algo_pm_barrier(acc_plan_t *p, int lane, const int *g, int m, uint16_t slot,
                             uint32_t value)
{
    int q;
    acc_status_t st = ACC_OK;
    for (q = 0; q < m && st == ACC_OK; q++)
        st = signal_wait(p, lane, g, m, q, slot, value);
    return st;
}

static acc_status_t add_group(acc_plan_t *p, const int *g, int m, uint32_t *off)
{
    uint32_t *ranks = acc_mem_calloc((size_t)m, sizeof(uint32_t));
    acc_status_t st;
    int i;
    if (!ranks)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a peer list of %d ranks", m);
    for (i = 0; i < m; i++)
        ranks[i] = (uint32_t)g[i];
    st = acc_plan_add_peers(p, ranks, (uint32_t)m, off);
    acc_mem_free(ranks);
    return st;
}

/* Point the REDUCE_PEERS operations from index `from` on at the peer list. */
static void set_peers(acc_plan_t *p, int rank, int lane, uint32_t from, uint32_t off, int m)
{
    acc_lane_prog_t *prog = acc_plan_prog(p, rank, lane);
    uint32_t i;
    for (i = from; i < prog->nops; i++) {
        prog->ops[i].peers_off = off;
        prog->ops[i].npeers = (uint32_t)m;
    }
}

acc_status_t algo_pm_reduce_scatter(acc_plan_t *p, int lane, const int *g, int m, const int *id,
                                    const algo_layout_t *src, const algo_layout_t *dst)
{
    uint32_t off;
    int q;
    acc_status_t st = add_group(p, g, m, &off);

    for (q = 0; q < m && st == ACC_OK; q++) {
        uint32_t from = acc_plan_prog(p, g[q], lane)->nops;
        int b = ID(id, q);
        st = algo_emit(p, g[q], lane, ACC_OP_REDUCE_PEERS, -1, -1, src, b, b + 1, dst, b, b + 1);
        set_peers(p, g[q], lane, from, off, m);
    }
    return st;
}

acc_status_t algo_pm_reduce_all(acc_plan_t *p, int lane, const int *g, int m, acc_ref_t src,
                                acc_ref_t dst)
{
    uint32_t off;
    int q;
    acc_status_t st = add_group(p, g, m, &off);

    for (q = 0; q < m && st == ACC_OK; q++) {
        acc_op_t op = acc_op_init(ACC_OP_REDUCE_PEERS);
        op.src = src;
        op.dst = dst;
        op.peers_off = off;
        op.npeers = (uint32_t)m;
        st = acc_plan_add(p, g[q], lane, &op, NULL);
    }
    return st;
}

acc_status_t algo_pm_allgather(acc_plan_t *p, int lane, const int *g, int m, const int *id,
                               const algo_layout_t *buf, const algo_layout_t *own, uint16_t slot,
                               uint32_t value)
{
    int q, s;
    acc_status_t st = ACC_OK;

    for (q = 0; q < m && st == ACC_OK; q++) {
        int b = ID(id, q);
        /* Position q writes to q+1, q+2, ... in turn, so that at every step each rank has
         * one writer, rather than all of them writing to the same rank. */
        for (s = 1; s < m && st == ACC_OK; s++)
            st = algo_emit(p, g[q], lane, ACC_OP_PUT, g[(q + s) % m], -1, own ? own : buf, b, b + 1,
                           buf, b, b + 1);
        if (own && st == ACC_OK)
            st = algo_emit(p, g[q], lane, ACC_OP_COPY, -1, -1, own, b, b + 1, buf, b, b + 1);
        if (st == ACC_OK)
            st = signal_wait(p, lane, g, m, q, slot, value);
    }
    return st;
}
