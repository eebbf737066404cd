/*
 * Trees in class form (acc_cplan.h): the tree steps of algo_tree.c written once for every run
 * of grid points that sees the tree alike, relative to the run's first point.  Step for step
 * the same schedule as the rank-by-rank build, so that the expansion is its plan
 * (tests/compiler/test_cplan_tree.c compares their YAML).
 *
 * A tree has a root and, between nodes, heads whose parents and children sit at offsets of
 * their own, so each head is a class by itself and the plan is proven by expansion; what the
 * class form saves is the G - 1 GPUs of every node on the chains inside nodes (one class per
 * local index) and the inner positions of a chain (one class), so that a broadcast over
 * 8,192 nodes of 8 GPUs is stored as 8,192 + 7 classes a lane, not 65,536.
 */
#include "algo_util.h"
#include "../ir/cplan_internal.h"

#include <string.h>

/* The offset on lane's grid from rank a's point to rank b's. */
static void offset(const acc_cplan_t *cp, int lane, int a, int b, int32_t *v)
{
    cplan_at_t xa, xb;
    cplan_at(cp, acc_cplan_point(cp, lane, a), &xa);
    cplan_at(cp, acc_cplan_point(cp, lane, b), &xb);
    for (int d = 0; d < ACC_CPLAN_MAX_DIMS; d++)
        v[d] = d < cp->ndims ? xb.x[d] - xa.x[d] : 0;
}

static acc_cpeer_t peer_of(const algo_tree_out_t *o, int peer)
{
    acc_cpeer_t p;
    memset(&p, 0, sizeof(p));
    if (peer < 0)
        return p;
    p.kind = ACC_CPEER_REL;
    offset(o->cp, o->lane, o->rank, peer, p.v);
    return p;
}

acc_status_t algo_tree_class_add(const algo_tree_out_t *o, const acc_op_t *op)
{
    acc_cop_t c = acc_cop_init((acc_opcode_t)op->code);
    c.peer = peer_of(o, op->peer);
    c.peer2 = peer_of(o, op->peer2);
    c.src = acc_cref_const((acc_bufid_t)op->src.buf, op->src.off, op->src.cnt);
    c.dst = acc_cref_const((acc_bufid_t)op->dst.buf, op->dst.off, op->dst.cnt);
    return acc_cplan_add(o->cp, o->lane, o->cls, &c);
}

/* Does rank b see tree t as rank a does: its parent and each child at the same offsets? */
static int alike(const acc_cplan_t *cp, int lane, const algo_tree_t *t, int a, int b)
{
    int32_t va[ACC_CPLAN_MAX_DIMS], vb[ACC_CPLAN_MAX_DIMS];
    const int *ca = t->child + a * ALGO_TREE_MAXCH, *cb = t->child + b * ALGO_TREE_MAXCH;

    if (t->nchild[a] != t->nchild[b] || (t->parent[a] < 0) != (t->parent[b] < 0))
        return 0;
    if (t->parent[a] >= 0) {
        offset(cp, lane, a, t->parent[a], va);
        offset(cp, lane, b, t->parent[b], vb);
        if (memcmp(va, vb, sizeof(va)) != 0)
            return 0;
    }
    for (int i = 0; i < t->nchild[a]; i++) {
        offset(cp, lane, a, ca[i], va);
        offset(cp, lane, b, cb[i], vb);
        if (memcmp(va, vb, sizeof(va)) != 0)
            return 0;
    }
    return 1;
}

acc_status_t algo_tree_classes(acc_cplan_t *cp, int lane, const algo_tree_t *const *trees,
                               int ntrees, algo_tree_emit_fn emit, void *ctx)
{
    uint32_t stride = (uint32_t)cp->nranks / (uint32_t)cp->dims[0];
    acc_status_t st = ACC_OK;

    /* Column c: the points whose coordinates past dimension 0 are those of point c. */
    for (uint32_t c = 0; c < stride && st == ACC_OK; c++) {
        int32_t first = 0;
        while (first < cp->dims[0] && st == ACC_OK) {
            int r0 = acc_cplan_rank(cp, lane, (uint32_t)first * stride + c), end = first + 1;
            int32_t hi[ACC_CPLAN_MAX_DIMS];
            cplan_at_t lo;
            algo_tree_out_t o = {NULL, cp, lane, r0, 0};
            for (; end < cp->dims[0]; end++) {
                int r = acc_cplan_rank(cp, lane, (uint32_t)end * stride + c), same = 1;
                for (int k = 0; k < ntrees && same; k++)
                    same = alike(cp, lane, trees[k], r0, r);
                if (!same)
                    break;
            }
            cplan_at(cp, c, &lo);
            for (int d = 1; d < cp->ndims; d++)
                hi[d] = lo.x[d] + 1;
            lo.x[0] = first;
            hi[0] = end;
            if ((st = acc_cplan_add_class(cp, lane, lo.x, hi, &o.cls)) == ACC_OK)
                st = emit(ctx, &o);
            first = end;
        }
    }
    return st;
}
