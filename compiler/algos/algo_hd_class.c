/*
 * Halving and doubling in class form (acc_cplan.h): algo_hd.c's steps on a power-of-two group,
 * written once for every position of the grid [n].  Position x's partner at a step is x ^ d
 * (an XOR peer), and the blocks it keeps or sends are those of x with the step's bit flipped
 * and the bits below it cleared (XOR terms), so every position runs one program.  Step for
 * step the schedule of algo_hd.c with no rank folded, so that the expansion is the plan
 * algo_rounds_plan builds (tests/compiler/test_cplan_xor.c compares their YAML).
 */
#include "algo_util.h"

/* Blocks ((x ^ flip) & mask) + add of a layout at position x: the first of a run of them. */
typedef struct {
    uint32_t flip, mask, add;
} hd_blk_t;

static int contiguous(const algo_layout_t *l)
{
    return l->nsub <= 1 && l->stride == l->cnt;
}

/* As algo_util.c's run_count: one operation for nb blocks of a contiguous layout, else one a
 * block. */
static uint32_t runs(const algo_layout_t *l, uint32_t nb)
{
    return nb == 0 ? 0 : contiguous(l) ? 1 : nb;
}

/* Run k of nb blocks from b. */
static acc_status_t run_ref(const algo_layout_t *l, hd_blk_t b, uint32_t nb, uint32_t k,
                            acc_cref_t *out)
{
    int whole = contiguous(l);
    if (l->nsub > 1 || l->fold)
        return acc_error_set(ACC_ERR_INTERNAL,
                             "halving/doubling in class form: a layout of %u pieces or folded "
                             "ranks",
                             l->nsub);
    *out = acc_cref_const((acc_bufid_t)l->buf, l->base + (b.add + (whole ? 0 : k)) * l->stride,
                          whole ? nb * l->cnt : l->cnt);
    return b.mask && l->stride ? acc_cref_add_xor(out, 0, b.flip, b.mask, l->stride) : ACC_OK;
}

static acc_status_t add(acc_cplan_t *cp, int lane, uint32_t cls, acc_opcode_t code, uint32_t flip,
                        const algo_layout_t *src, hd_blk_t sb, uint32_t ns,
                        const algo_layout_t *dst, hd_blk_t db, uint32_t nd, uint32_t k)
{
    acc_cop_t op = acc_cop_init(code);
    acc_status_t st = ACC_OK;
    if (flip)
        op.peer = acc_cpeer_xor(0, flip);
    if (src)
        st = run_ref(src, sb, ns, k, &op.src);
    if (st == ACC_OK && dst)
        st = run_ref(dst, db, nd, k, &op.dst);
    return st == ACC_OK ? acc_cplan_add(cp, lane, cls, &op) : st;
}

/* algo_emit_exchange with the partner x ^ flip: send ns blocks of out from sb, receive nr
 * blocks from rb with code, run by run. */
static acc_status_t exchange(acc_cplan_t *cp, int lane, uint32_t cls, uint32_t flip,
                             const algo_layout_t *out, hd_blk_t sb, uint32_t ns, acc_opcode_t code,
                             const algo_layout_t *src, const algo_layout_t *dst, hd_blk_t rb,
                             uint32_t nr)
{
    uint32_t s = runs(out, ns), r = runs(dst, nr), k;
    acc_status_t st = ACC_OK;
    if (src && runs(src, nr) != r)
        return acc_error_set(ACC_ERR_INTERNAL, "exchange in class form: blocks cut into "
                                               "different runs in source and destination");
    for (k = 0; (k < s || k < r) && st == ACC_OK; k++) {
        if (k < s)
            st = add(cp, lane, cls, ACC_OP_SEND, flip, out, sb, ns, NULL, sb, 0, k);
        if (k < r && st == ACC_OK)
            st = add(cp, lane, cls, code, flip, src, rb, nr, dst, rb, nr, k);
    }
    return st;
}

/* A local copy of one block. */
static acc_status_t copy(acc_cplan_t *cp, int lane, uint32_t cls, const algo_layout_t *src,
                         hd_blk_t sb, const algo_layout_t *dst, hd_blk_t db)
{
    return add(cp, lane, cls, ACC_OP_COPY, 0, src, sb, 1, dst, db, 1, 0);
}

static hd_blk_t own_block(const acc_cplan_t *cp)
{
    hd_blk_t b = {0, (uint32_t)cp->nranks - 1, 0};
    return b;
}

static hd_blk_t fixed_block(uint32_t add)
{
    hd_blk_t b = {0, 0, add};
    return b;
}

/* Halving: position x ends with block x of work reduced over the group. */
static acc_status_t halving(acc_cplan_t *cp, int lane, uint32_t cls, const algo_layout_t *src,
                            const algo_layout_t *work)
{
    uint32_t P = (uint32_t)cp->nranks, mask;
    const algo_layout_t *cur = src;
    acc_status_t st = ACC_OK;

    for (mask = P / 2; mask >= 1 && st == ACC_OK; mask /= 2) {
        uint32_t low = (P - 1) & ~(mask - 1); /* the bits from this step's up */
        hd_blk_t keep = {0, low, 0}, give = {mask, low, 0};
        st = exchange(cp, lane, cls, mask, cur, give, mask, ACC_OP_RECV_REDUCE_COPY, cur, work,
                      keep, mask);
        cur = work;
    }
    return st;
}

/* Doubling: position x holds block x of buf and ends with all of them. */
static acc_status_t doubling(acc_cplan_t *cp, int lane, uint32_t cls, const algo_layout_t *buf)
{
    uint32_t P = (uint32_t)cp->nranks, mask;
    acc_status_t st = ACC_OK;

    for (mask = 1; mask < P && st == ACC_OK; mask *= 2) {
        uint32_t low = (P - 1) & ~(mask - 1);
        hd_blk_t mine = {0, low, 0}, theirs = {mask, low, 0};
        st = exchange(cp, lane, cls, mask, buf, mine, mask, ACC_OP_RECV, NULL, buf, theirs, mask);
    }
    return st;
}

static acc_status_t need_pow2(const acc_cplan_t *cp)
{
    uint32_t n = (uint32_t)cp->nranks;
    return n >= 2 && !(n & (n - 1)) ? ACC_OK
                                    : acc_error_set(ACC_ERR_INTERNAL,
                                                    "halving/doubling in class form on %u ranks, "
                                                    "not a power of two",
                                                    n);
}

acc_status_t algo_rhd_allreduce_class(acc_cplan_t *cp, int lane, uint32_t cls,
                                      const algo_layout_t *src, const algo_layout_t *res)
{
    acc_status_t st = need_pow2(cp);
    if (st == ACC_OK)
        st = halving(cp, lane, cls, src, res);
    return st == ACC_OK ? doubling(cp, lane, cls, res) : st;
}

acc_status_t algo_rd_allreduce_class(acc_cplan_t *cp, int lane, uint32_t cls,
                                     const algo_layout_t *src, const algo_layout_t *res)
{
    const algo_layout_t *cur = src;
    acc_status_t st = need_pow2(cp);
    for (uint32_t mask = 1; mask < (uint32_t)cp->nranks && st == ACC_OK; mask *= 2) {
        st = exchange(cp, lane, cls, mask, cur, fixed_block(0), 1, ACC_OP_RECV_REDUCE_COPY, cur,
                      res, fixed_block(0), 1);
        cur = res;
    }
    return st;
}

acc_status_t algo_rh_reduce_scatter_class(acc_cplan_t *cp, int lane, uint32_t cls,
                                          const algo_layout_t *src, const algo_layout_t *work,
                                          const algo_layout_t *dst)
{
    acc_status_t st = need_pow2(cp);
    if (st == ACC_OK)
        st = halving(cp, lane, cls, src, work);
    return st == ACC_OK ? copy(cp, lane, cls, work, own_block(cp), dst, own_block(cp)) : st;
}

acc_status_t algo_rd_allgather_class(acc_cplan_t *cp, int lane, uint32_t cls,
                                     const algo_layout_t *own, const algo_layout_t *buf)
{
    acc_status_t st = need_pow2(cp);
    if (st == ACC_OK)
        st = copy(cp, lane, cls, own, own_block(cp), buf, own_block(cp));
    return st == ACC_OK ? doubling(cp, lane, cls, buf) : st;
}

int algo_hd_class_covers(const acc_topo_t *topo, const acc_algo_args_t *args)
{
    int n = acc_topo_ranks(topo);
    (void)args;
    return n >= 2 && !(n & (n - 1));
}
