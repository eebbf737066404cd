/*
 * Recursive halving and doubling over groups of any size (folding the ranks past the largest
 * power of two), the one copy behind rhd allreduce, rh reduce-scatter, rd allgather and the
 * hierarchical plans' halving/doubling outer steps.
 */
#include "algo_util.h"

/* ---- recursive halving / doubling ---------------------------------------------------------- */

int algo_pow2_floor(int m)
{
    int p = 1;
    while (p * 2 <= m)
        p *= 2;
    return p;
}

/* The virtual rank of position q, or -1 for a folded-out position. */
static int fold_virtual(int m, int q)
{
    int r = m - algo_pow2_floor(m);
    if (q < 2 * r)
        return (q % 2) ? q / 2 : -1;
    return q - r;
}

static int fold_position(int m, int v)
{
    int r = m - algo_pow2_floor(m);
    return v < r ? 2 * v + 1 : v + r;
}

/* The fold at position q, on the way in: a folded-out position hands blocks [0, hi) of src to
 * its partner, which adds them into work and goes on from there (*cur: work, else src). */
static acc_status_t fold_take_in(acc_plan_t *p, int lane, const int *g, int m, int q,
                                 const algo_layout_t *src, const algo_layout_t *work, int hi,
                                 const algo_layout_t **cur)
{
    int r = m - algo_pow2_floor(m);
    *cur = src;
    if (q >= 2 * r)
        return ACC_OK;
    if (q % 2 == 0)
        return algo_emit(p, g[q], lane, ACC_OP_SEND, g[q + 1], -1, src, 0, hi, NULL, 0, 0);
    *cur = work;
    return algo_emit(p, g[q], lane, ACC_OP_RECV_REDUCE_COPY, g[q - 1], -1, src, 0, hi, work, 0, hi);
}

/* The fold on the way out: the folded positions get the result, blocks [0, hi) of res, from
 * their partners. */
static acc_status_t fold_give_back(acc_plan_t *p, int lane, const int *g, int m,
                                   const algo_layout_t *res, int hi)
{
    int r = m - algo_pow2_floor(m);
    acc_status_t st = ACC_OK;
    for (int q = 0; q < 2 * r && st == ACC_OK; q++)
        st = (q % 2) ? algo_emit(p, g[q], lane, ACC_OP_SEND, g[q - 1], -1, res, 0, hi, NULL, 0, 0)
                     : algo_emit(p, g[q], lane, ACC_OP_RECV, g[q + 1], -1, NULL, 0, 0, res, 0, hi);
    return st;
}

/* Halving among the virtual ranks: virtual rank v ends with virtual block v of work reduced over
 * the group.  Folded positions first hand all of src to their partner. */
static acc_status_t halving(acc_plan_t *p, int lane, const int *g, int m, const algo_layout_t *src,
                            const algo_layout_t *work)
{
    int P = algo_pow2_floor(m), q;
    acc_status_t st = ACC_OK;

    for (q = 0; q < m && st == ACC_OK; q++) {
        int rank = g[q], v = fold_virtual(m, q), lo = 0, hi = P, mask;
        const algo_layout_t *cur;
        st = fold_take_in(p, lane, g, m, q, src, work, P, &cur);
        if (v < 0)
            continue;
        for (mask = P / 2; mask >= 1 && st == ACC_OK; mask /= 2) {
            int mid = lo + mask, peer = g[fold_position(m, v ^ mask)];
            int klo = (v & mask) ? mid : lo, khi = (v & mask) ? hi : mid;
            int slo = (v & mask) ? lo : mid, shi = (v & mask) ? mid : hi;
            st = algo_emit_exchange(p, rank, lane, peer, cur, slo, shi, ACC_OP_RECV_REDUCE_COPY,
                                    cur, work, klo, khi);
            cur = work;
            lo = klo;
            hi = khi;
        }
        if (st == ACC_OK && cur != work && !algo_layout_eq(src, work))
            st = algo_emit(p, rank, lane, ACC_OP_COPY, -1, -1, src, v, v + 1, work, v, v + 1);
    }
    return st;
}

/* Doubling among the virtual ranks: virtual rank v holds virtual block v of buf and ends with
 * all of them. */
static acc_status_t doubling(acc_plan_t *p, int lane, const int *g, int m, const algo_layout_t *buf)
{
    int P = algo_pow2_floor(m), q, mask;
    acc_status_t st = ACC_OK;

    for (q = 0; q < m && st == ACC_OK; q++) {
        int rank = g[q], v = fold_virtual(m, q);
        if (v < 0)
            continue;
        for (mask = 1; mask < P && st == ACC_OK; mask *= 2) {
            int peer = g[fold_position(m, v ^ mask)];
            int mine = v & ~(mask - 1), theirs = (v ^ mask) & ~(mask - 1);
            st = algo_emit_exchange(p, rank, lane, peer, buf, mine, mine + mask, ACC_OP_RECV, NULL,
                                    buf, theirs, theirs + mask);
        }
    }
    return st;
}

acc_status_t algo_rhd_allreduce(acc_plan_t *p, int lane, const int *g, int m,
                                const algo_layout_t *src, const algo_layout_t *res)
{
    acc_status_t st = halving(p, lane, g, m, src, res);

    if (st == ACC_OK)
        st = doubling(p, lane, g, m, res);
    if (st == ACC_OK)
        st = fold_give_back(p, lane, g, m, res, algo_pow2_floor(m));
    return st;
}

acc_status_t algo_rd_allreduce(acc_plan_t *p, int lane, const int *g, int m,
                               const algo_layout_t *src, const algo_layout_t *res)
{
    int P = algo_pow2_floor(m), q, mask;
    acc_status_t st = ACC_OK;

    for (q = 0; q < m && st == ACC_OK; q++) {
        int rank = g[q], v = fold_virtual(m, q);
        const algo_layout_t *cur;
        st = fold_take_in(p, lane, g, m, q, src, res, 1, &cur);
        if (v < 0) /* folded out: the sum comes back last */
            continue;
        /* The whole partial sum to the partner at distance 1, 2, ..., P/2, adding theirs: the
         * message is read when it is sent, before the sum overwrites it. */
        for (mask = 1; mask < P && st == ACC_OK; mask *= 2) {
            st = algo_emit_exchange(p, rank, lane, g[fold_position(m, v ^ mask)], cur, 0, 1,
                                    ACC_OP_RECV_REDUCE_COPY, cur, res, 0, 1);
            cur = res;
        }
        if (st == ACC_OK && cur != res && !algo_layout_eq(src, res))
            st = algo_emit(p, rank, lane, ACC_OP_COPY, -1, -1, src, 0, 1, res, 0, 1);
    }
    return st == ACC_OK ? fold_give_back(p, lane, g, m, res, 1) : st;
}

acc_status_t algo_rh_reduce_scatter(acc_plan_t *p, int lane, const int *g, int m,
                                    const algo_layout_t *src, const algo_layout_t *work,
                                    const algo_layout_t *dst)
{
    int r = m - algo_pow2_floor(m), q;
    algo_layout_t s = *src, w = *work;
    acc_status_t st;

    /* Virtual block i of a folded pair is the pair's two blocks. */
    s.fold = w.fold = r;
    st = halving(p, lane, g, m, &s, &w);
    w.fold = 0;
    for (q = 0; q < m && st == ACC_OK; q++) {
        if (q < 2 * r && q % 2 == 0) {
            st = algo_emit(p, g[q], lane, ACC_OP_RECV, g[q + 1], -1, NULL, 0, 0, dst, q, q + 1);
            continue;
        }
        if (q < 2 * r)
            st = algo_emit(p, g[q], lane, ACC_OP_SEND, g[q - 1], -1, &w, q - 1, q, NULL, 0, 0);
        if (st == ACC_OK)
            st = algo_emit(p, g[q], lane, ACC_OP_COPY, -1, -1, &w, q, q + 1, dst, q, q + 1);
    }
    return st;
}

acc_status_t algo_rd_allgather(acc_plan_t *p, int lane, const int *g, int m,
                               const algo_layout_t *own, const algo_layout_t *buf)
{
    int r = m - algo_pow2_floor(m), q;
    algo_layout_t b = *buf;
    acc_status_t st = ACC_OK;

    /* A folded pair first meets at its odd member; the local copies go after the message. */
    for (q = 0; q < m && st == ACC_OK; q++) {
        if (q < 2 * r)
            st = (q % 2) ? algo_emit(p, g[q], lane, ACC_OP_RECV, g[q - 1], -1, NULL, 0, 0, buf,
                                     q - 1, q)
                         : algo_emit(p, g[q], lane, ACC_OP_SEND, g[q + 1], -1, own, q, q + 1, NULL,
                                     0, 0);
        if (st == ACC_OK)
            st = algo_emit(p, g[q], lane, ACC_OP_COPY, -1, -1, own, q, q + 1, buf, q, q + 1);
    }
    b.fold = r;
    if (st == ACC_OK)
        st = doubling(p, lane, g, m, &b);
    /* The odd member passes everything but the even member's own block back. */
    for (q = 0; q < 2 * r && st == ACC_OK; q += 2) {
        st = algo_emit(p, g[q + 1], lane, ACC_OP_SEND, g[q], -1, buf, 0, q, NULL, 0, 0);
        if (st == ACC_OK)
            st = algo_emit(p, g[q + 1], lane, ACC_OP_SEND, g[q], -1, buf, q + 1, m, NULL, 0, 0);
        if (st == ACC_OK)
            st = algo_emit(p, g[q], lane, ACC_OP_RECV, g[q + 1], -1, NULL, 0, 0, buf, 0, q);
        if (st == ACC_OK)
            st = algo_emit(p, g[q], lane, ACC_OP_RECV, g[q + 1], -1, NULL, 0, 0, buf, q + 1, m);
    }
    return st;
}
