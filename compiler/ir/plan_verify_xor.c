/*
 * Halving and doubling proven on one rank (plan_internal.h, plan_verify_xor).  Recursive
 * halving-doubling, recursive halving and recursive doubling on a power-of-two rank count pair
 * rank r with r ^ 2^k at step k, and keep or send the half of their range that bit k of r
 * names: rank r ^ t runs rank r's program with every peer ^ t and every chunk range moved by an
 * XOR mask that bit k of t flips.  Such a plan is the same under XOR by any rank, all ranks are
 * one orbit, and running rank 0 alone through the explicit verifier - a message from rank a is
 * rank 0's message to a, its values' ranks ^ a and its chunks moved - is one schedule of the
 * whole plan, every rank in its image's state (the argument of cplan_verify_period.c, with XOR
 * for the translation).  At 8,192 ranks that is one rank's chunks instead of 8,192 x 8,192.
 *
 * The masks are read off rank 0 and rank 2^k (an operation of one chunk names the whole mask),
 * then every operation of every rank is checked against rank 0's in O(1): the same fields, its
 * peers ^ r, and each range the aligned block of rank 0's moved by the mask of r (ranges are
 * aligned blocks of a power of two chunks, so their image is one; source and destination move
 * their chunks alike).  Plans that fold (rank counts that are not powers of two), roots and
 * peer lists are left to the whole verifier.
 */
#include "plan_internal.h"

#include <stdio.h>
#include <string.h>

/* The mask of rank r for buffer b: the XOR of the masks of r's bits. */
static uint32_t mask_of(const plan_quot_map_t *m, uint8_t b, uint32_t r)
{
    uint32_t x = 0;
    for (int k = 0; r; k++, r >>= 1)
        if (r & 1)
            x ^= m->xmask[b][k];
    return x;
}

static int pow2(uint32_t x)
{
    return x && !(x & (x - 1));
}

/* Is range y rank 0's range x moved by mask m: an aligned block of a power of two chunks, its
 * image the aligned block at (x.off ^ m) (low bits of m only reorder inside it)? */
static int range_moved(acc_ref_t x, acc_ref_t y, uint32_t m)
{
    if (!x.cnt && !y.cnt)
        return x.buf == y.buf && x.off == y.off;
    return x.buf == y.buf && x.cnt == y.cnt && pow2(x.cnt) && x.off % x.cnt == 0 &&
           y.off == ((x.off ^ m) & ~(x.cnt - 1));
}

static int op_moved(const acc_op_t *x, const acc_op_t *y, uint32_t r, const plan_quot_map_t *m)
{
    uint32_t ms = x->src.cnt ? mask_of(m, x->src.buf % ACC_BUF_COUNT, r) : 0;
    uint32_t md = x->dst.cnt ? mask_of(m, x->dst.buf % ACC_BUF_COUNT, r) : 0;
    if (x->code != y->code || x->slot != y->slot || x->value != y->value || x->npeers ||
        y->npeers || x->dep_lane != y->dep_lane || x->dep_op != y->dep_op ||
        (x->peer < 0) != (y->peer < 0) || (x->peer >= 0 && (uint32_t)y->peer != (x->peer ^ r)) ||
        (x->peer2 < 0) != (y->peer2 < 0) || (x->peer2 >= 0 && (uint32_t)y->peer2 != (x->peer2 ^ r)))
        return 0;
    /* Source chunk j and destination chunk j meet again at one place. */
    if (x->src.cnt && x->dst.cnt && (ms & (x->src.cnt - 1)) != (md & (x->dst.cnt - 1)))
        return 0;
    return range_moved(x->src, y->src, ms) && range_moved(x->dst, y->dst, md);
}

static uint32_t size_of(const acc_plan_t *p, int b)
{
    return b == ACC_BUF_IN ? p->in_chunks : b == ACC_BUF_OUT ? p->out_chunks : p->scratch_chunks;
}

/* The masks from ranks 0 and 2^k; 0 with why when they do not make one. */
static int read_masks(const acc_plan_t *p, plan_quot_map_t *m, char *why, size_t cap)
{
    int bits = 0;
    while ((1 << bits) < p->nranks)
        bits++;
    for (int k = 0; k < bits; k++) {
        uint32_t seen[ACC_BUF_COUNT] = {0};
        for (int l = 0; l < p->nlanes; l++) {
            const acc_lane_prog_t *a = acc_plan_prog(p, 0, l), *b = acc_plan_prog(p, 1 << k, l);
            if (a->nops != b->nops) {
                snprintf(why, cap, "ranks 0 and %d run programs of different lengths", 1 << k);
                return 0;
            }
            for (uint32_t i = 0; i < a->nops; i++) {
                const acc_ref_t *ra[2] = {&a->ops[i].src, &a->ops[i].dst};
                const acc_ref_t *rb[2] = {&b->ops[i].src, &b->ops[i].dst};
                for (int j = 0; j < 2; j++)
                    if (ra[j]->cnt == 1 && rb[j]->cnt == 1 && ra[j]->buf < ACC_BUF_COUNT &&
                        ra[j]->buf == rb[j]->buf && !seen[ra[j]->buf]) {
                        m->xmask[ra[j]->buf][k] = ra[j]->off ^ rb[j]->off;
                        seen[ra[j]->buf] = 1;
                    }
            }
        }
        /* A buffer with no single chunk to read it from moves as one of its size does (an
         * allreduce's output and input, a reduce-scatter's scratch and input); the check of
         * every operation below decides whether that is so. */
        for (int b = 0; b < ACC_BUF_COUNT; b++)
            for (int c = 0; c < ACC_BUF_COUNT && !seen[b]; c++)
                if (seen[c] == 1 && size_of(p, b) == size_of(p, c)) {
                    m->xmask[b][k] = m->xmask[c][k];
                    seen[b] = 2;
                }
    }
    return 1;
}

/* Rank 0's lane program is the plan's; every other rank's comes from prog(ctx, r, lane) (NULL
 * with an error set when it cannot be had), read once. */
acc_status_t plan_verify_xor_by(const acc_plan_t *p, plan_xor_prog_fn prog, void *ctx, int *applies,
                                char *why, size_t cap)
{
    plan_quot_map_t m;
    acc_status_t st = ACC_OK;

    *applies = 0;
    memset(&m, 0, sizeof(m));
    m.xor_mode = 1;
    if (!p || p->period || p->view || p->root != -1 || p->nranks < 2 ||
        !pow2((uint32_t)p->nranks) || p->npeer_pool) {
        snprintf(why, cap, "not a plan of a power-of-two rank count without roots or peer lists");
        return ACC_OK;
    }
    if (!read_masks(p, &m, why, cap))
        return ACC_OK;
    for (uint32_t r = 1; r < (uint32_t)p->nranks; r++)
        for (int l = 0; l < p->nlanes; l++) {
            const acc_lane_prog_t *a = acc_plan_prog(p, 0, l), *b = prog(ctx, r, l);
            if (!b)
                return acc_error_prefix(ACC_ERR_NOMEM, "rank %u: ", r);
            if (a->nops != b->nops) {
                snprintf(why, cap, "ranks 0 and %u run programs of different lengths", r);
                return ACC_OK;
            }
            for (uint32_t i = 0; i < a->nops; i++)
                if (!op_moved(&a->ops[i], &b->ops[i], r, &m)) {
                    snprintf(why, cap,
                             "rank %u lane %d op %u is not rank 0's moved by XOR %u (peers, "
                             "chunks or fields)",
                             r, l, i, r);
                    return ACC_OK;
                }
        }
    *applies = 1;
    for (int mode = 0; mode <= (p->inplace ? 1 : 0) && st == ACC_OK; mode++) {
        if ((st = plan_verify_quotient(p, mode, &m)) == ACC_OK)
            continue;
        if (st == ACC_ERR_INTERNAL) { /* a message the masks did not carry: not this kind */
            snprintf(why, cap, "%s", acc_error_message());
            *applies = 0;
            return ACC_OK;
        }
        if (p->inplace)
            st = acc_error_prefix(st, mode ? "in place: " : "out of place: ");
    }
    return st;
}

static const acc_lane_prog_t *plan_prog(void *ctx, uint32_t r, int lane)
{
    return acc_plan_prog((const acc_plan_t *)ctx, (int)r, lane);
}

acc_status_t plan_verify_xor(const acc_plan_t *p, int *applies, char *why, size_t cap)
{
    return plan_verify_xor_by(p, plan_prog, (void *)p, applies, why, cap);
}
