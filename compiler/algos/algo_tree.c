/*
 * Trees: construction (binary in-order trees and their complement, heaps, chains, and the
 * topology-aware composition of NCCL's double binary tree), the up / down steps that move one
 * chunk range through a tree (into an explicit plan's rank or a class, algo_tree_out_t), and
 * the rooted broadcast and reduce plans built both ways.
 */
#include "algo_util.h"

#include <string.h>

acc_status_t algo_tree_init(algo_tree_t *t, int n)
{
    int i;
    memset(t, 0, sizeof(*t));
    t->n = n;
    t->parent = acc_mem_calloc((size_t)n, sizeof(int));
    t->nchild = acc_mem_calloc((size_t)n, sizeof(int));
    t->child = acc_mem_calloc((size_t)n * ALGO_TREE_MAXCH, sizeof(int));
    if (!t->parent || !t->nchild || !t->child) {
        algo_tree_free(t);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a tree of %d ranks", n);
    }
    for (i = 0; i < n; i++)
        t->parent[i] = -1;
    return ACC_OK;
}

void algo_tree_free(algo_tree_t *t)
{
    acc_mem_free(t->parent);
    acc_mem_free(t->nchild);
    acc_mem_free(t->child);
    memset(t, 0, sizeof(*t));
}

static acc_status_t link(algo_tree_t *t, int child, int parent)
{
    if (t->nchild[parent] >= ALGO_TREE_MAXCH)
        return acc_error_set(ACC_ERR_INTERNAL, "tree: rank %d would get more than %d children",
                             parent, ALGO_TREE_MAXCH);
    t->parent[child] = parent;
    t->child[parent * ALGO_TREE_MAXCH + t->nchild[parent]++] = child;
    return ACC_OK;
}

/* Parent of label i in the infinite in-order binary tree over 1, 2, 3, ...: i's height is its
 * count of trailing zero bits, and its parent is the neighbour at distance 2^height whose next
 * bit up is set. */
static int inorder_parent(int i)
{
    int h = 0;
    while (!((i >> h) & 1))
        h++;
    return (i & ~((2 << h) - 1)) | (2 << h);
}

acc_status_t algo_tree_btree(algo_tree_t *t, const int *g, int m, int shift)
{
    int root = algo_pow2_floor(m), label;
    acc_status_t st = ACC_OK;

    /* Labels 1..m; a parent past m is skipped for the first ancestor inside (the root, the
     * largest power of two <= m, is everybody's ancestor). */
    for (label = 1; label <= m && st == ACC_OK; label++) {
        int par = label, q, pq;
        if (label == root)
            continue;
        do
            par = inorder_parent(par);
        while (par > m);
        q = ((label - 1 - shift) % m + m) % m;
        pq = ((par - 1 - shift) % m + m) % m;
        st = link(t, g[q], g[pq]);
    }
    return st;
}

acc_status_t algo_tree_heap(algo_tree_t *t, const int *g, int m)
{
    int q;
    acc_status_t st = ACC_OK;
    for (q = 1; q < m && st == ACC_OK; q++)
        st = link(t, g[q], g[(q - 1) / 2]);
    return st;
}

acc_status_t algo_tree_chain(algo_tree_t *t, const int *g, int m)
{
    int q;
    acc_status_t st = ACC_OK;
    for (q = 1; q < m && st == ACC_OK; q++)
        st = link(t, g[q], g[q - 1]);
    return st;
}

/* seq[0..n) rotated to start at value `first`, reversed after it when `backwards`. */
static void rotate(const int *seq, int n, int first, int backwards, int *out)
{
    int i, at = 0;
    for (i = 0; i < n; i++)
        if (seq[i] == first)
            at = i;
    for (i = 0; i < n; i++)
        out[i] = seq[((backwards ? at - i : at + i) % n + n) % n];
}

acc_status_t algo_tree_topo(algo_tree_t *t, const acc_topo_t *topo, int which, int root)
{
    int gpn = acc_topo_gpus_per_node(topo), nodes = acc_topo_nodes(topo), n = gpn * nodes;
    int *cyc = acc_mem_calloc((size_t)n, sizeof(int)),
        *seq = acc_mem_calloc((size_t)n, sizeof(int));
    int k, i, head;
    acc_status_t st;

    if (!cyc || !seq) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory building a tree of %d ranks", n);
        goto out;
    }
    if (which == 3) {
        /* A chain along the lane-0 ring, from the root: rail-aligned like the ring. */
        if ((st = algo_ring_order(topo, 0, cyc)) == ACC_OK) {
            rotate(cyc, n, root, 0, seq);
            st = algo_tree_chain(t, seq, n);
        }
        goto out;
    }
    if ((st = algo_node_cycle(topo, cyc)) != ACC_OK)
        goto out;
    if (nodes == 1) {
        if (which == 2) {
            rotate(cyc, gpn, root, 0, seq);
            st = algo_tree_heap(t, seq, gpn);
        } else {
            st = algo_tree_btree(t, cyc, gpn, which);
        }
        goto out;
    }
    /* Heads: the same local GPU in every node keeps inter-node edges on one rail; the second
     * tree of a pair enters the nodes half a ring away (another NIC, usually another socket)
     * and runs its chains the other way round. */
    head = which == 2 ? root % gpn : which == 1 ? cyc[gpn / 2] : cyc[0];
    rotate(cyc, gpn, head, which == 1, seq);
    for (k = 0; k < nodes && st == ACC_OK; k++)
        for (i = 1; i < gpn && st == ACC_OK; i++)
            st = link(t, k * gpn + seq[i], k * gpn + seq[i - 1]);
    for (k = 0; k < nodes; k++)
        seq[k] = (which == 2 ? (root / gpn + k) % nodes : k) * gpn + head;
    if (st == ACC_OK)
        st = which == 2 ? algo_tree_heap(t, seq, nodes) : algo_tree_btree(t, seq, nodes, which);
out:
    acc_mem_free(cyc);
    acc_mem_free(seq);
    return st;
}

static int ref_eq(acc_ref_t a, acc_ref_t b)
{
    return a.buf == b.buf && a.off == b.off && a.cnt == b.cnt;
}

static acc_status_t add(const algo_tree_out_t *o, acc_opcode_t code, int peer, int peer2,
                        const acc_ref_t *src, const acc_ref_t *dst)
{
    acc_op_t op = acc_op_init(code);
    op.peer = peer;
    op.peer2 = peer2;
    if (src)
        op.src = *src;
    if (dst)
        op.dst = *dst;
    return o->cp ? algo_tree_class_add(o, &op) : acc_plan_add(o->p, o->rank, o->lane, &op, NULL);
}

acc_status_t algo_tree_up(const algo_tree_out_t *o, const algo_tree_t *t, acc_ref_t src,
                          acc_ref_t tmp, acc_ref_t dst)
{
    int rank = o->rank, nch = t->nchild[rank], parent = t->parent[rank], i;
    const int *ch = t->child + rank * ALGO_TREE_MAXCH;
    acc_ref_t acc = src, into = parent >= 0 ? tmp : dst;
    acc_status_t st = ACC_OK;

    if (nch == 0) {
        if (parent >= 0)
            return add(o, ACC_OP_SEND, parent, -1, &src, NULL);
        return ref_eq(src, dst) ? ACC_OK : add(o, ACC_OP_COPY, -1, -1, &src, &dst);
    }
    /* Fold in one child at a time; the last one's sum goes straight on to the parent. */
    for (i = 0; i < nch && st == ACC_OK; i++) {
        if (i == nch - 1 && parent >= 0) {
            st = add(o, ACC_OP_RECV_REDUCE_SEND, ch[i], parent, &acc, NULL);
        } else {
            st = add(o, ACC_OP_RECV_REDUCE_COPY, ch[i], -1, &acc, &into);
            acc = into;
        }
    }
    return st;
}

acc_status_t algo_tree_down(const algo_tree_out_t *o, const algo_tree_t *t, acc_ref_t root_src,
                            acc_ref_t buf)
{
    int rank = o->rank, nch = t->nchild[rank], parent = t->parent[rank], i;
    const int *ch = t->child + rank * ALGO_TREE_MAXCH;
    acc_status_t st = ACC_OK;

    if (parent < 0) {
        for (i = 0; i < nch && st == ACC_OK; i++)
            st = add(o, ACC_OP_SEND, ch[i], -1, &root_src, NULL);
        if (st == ACC_OK && !ref_eq(root_src, buf))
            st = add(o, ACC_OP_COPY, -1, -1, &root_src, &buf);
        return st;
    }
    if (nch == 0)
        return add(o, ACC_OP_RECV, parent, -1, NULL, &buf);
    st = add(o, ACC_OP_RECV_COPY_SEND, parent, ch[0], NULL, &buf);
    for (i = 1; i < nch && st == ACC_OK; i++)
        st = add(o, ACC_OP_SEND, ch[i], -1, &buf, NULL);
    return st;
}

acc_status_t algo_rooted_steps(const algo_tree_out_t *o, const algo_tree_t *t, acc_coll_t coll,
                               int chunks)
{
    acc_status_t st = ACC_OK;
    for (int s = 0; s < chunks && st == ACC_OK; s++) {
        uint32_t c = (uint32_t)(o->lane * chunks + s);
        acc_ref_t in = acc_ref(ACC_BUF_IN, c, 1), res = acc_ref(ACC_BUF_OUT, c, 1);
        st = coll == ACC_COLL_BROADCAST
                 ? algo_tree_down(o, t, in, res)
                 : algo_tree_up(o, t, in, acc_ref(ACC_BUF_SCRATCH, c, 1), res);
    }
    return st;
}

/* What both builds of a rooted plan share: the parameters, the chunks and the tree. */
typedef struct {
    algo_params_t pr;
    algo_tree_t t;
    uint32_t total, scratch;
} rooted_t;

/* Its parameters as both forms record them. */
static void rooted_params(const rooted_t *r, char *text, size_t cap)
{
    snprintf(text, cap, "lanes=%d chunks=%d root=%d", r->pr.lanes, r->pr.chunks, r->pr.root);
}

static acc_status_t rooted_setup(const algo_spec_t *spec, acc_coll_t coll, int which,
                                 const acc_topo_t *topo, const acc_algo_args_t *args, rooted_t *r)
{
    acc_status_t st;

    memset(r, 0, sizeof(*r));
    if ((st = algo_params(spec, topo, args, &r->pr)) != ACC_OK)
        return st;
    r->total = (uint32_t)(r->pr.lanes * r->pr.chunks);
    /* A chain has one child per rank and needs no room for partial sums. */
    r->scratch = (coll == ACC_COLL_REDUCE && which != 3) ? r->total : 0;
    if ((st = algo_tree_init(&r->t, acc_topo_ranks(topo))) != ACC_OK)
        return st;
    if ((st = algo_tree_topo(&r->t, topo, which, r->pr.root)) != ACC_OK)
        algo_tree_free(&r->t);
    return st;
}

acc_status_t algo_rooted_plan(const algo_spec_t *spec, acc_coll_t coll, const char *name, int which,
                              const acc_topo_t *topo, const acc_algo_args_t *args, acc_plan_t **out)
{
    rooted_t r;
    acc_plan_t *p = NULL;
    char params[ACC_PLAN_PARAMS_MAX];
    int n = acc_topo_ranks(topo), lane, rank;
    acc_status_t st;

    if ((st = rooted_setup(spec, coll, which, topo, args, &r)) != ACC_OK)
        return st;
    if ((st = algo_plan_new(topo, coll, name, args, r.pr.lanes, r.total, r.total, r.scratch, &p)) !=
        ACC_OK)
        goto out;
    p->root = r.pr.root;
    p->inplace = 1;
    rooted_params(&r, params, sizeof(params));
    st = acc_plan_set_params(p, "%s", params);
    for (lane = 0; lane < r.pr.lanes && st == ACC_OK; lane++) {
        for (rank = 0; rank < n && st == ACC_OK; rank++) {
            algo_tree_out_t o = algo_tree_out(p, lane, rank);
            st = algo_rooted_steps(&o, &r.t, coll, r.pr.chunks);
        }
    }
out:
    algo_tree_free(&r.t);
    if (st != ACC_OK) {
        acc_plan_destroy(p);
        return st;
    }
    *out = p;
    return ACC_OK;
}

typedef struct {
    const rooted_t *r;
    acc_coll_t coll;
} rooted_emit_t;

static acc_status_t rooted_emit(void *ctx, const algo_tree_out_t *o)
{
    const rooted_emit_t *e = ctx;
    return algo_rooted_steps(o, &e->r->t, e->coll, e->r->pr.chunks);
}

acc_status_t algo_rooted_cplan(const algo_spec_t *spec, acc_coll_t coll, const char *name,
                               int which, const acc_topo_t *topo, const acc_algo_args_t *args,
                               acc_cplan_t **out)
{
    rooted_t r;
    rooted_emit_t e = {&r, coll};
    acc_cplan_t *cp = NULL;
    int n = acc_topo_ranks(topo), *seq = NULL, lane;
    /* A chain runs along the ring (its positions the grid, the ring from the root its table);
     * the other trees over nodes x GPUs, ranks in their own order. */
    int32_t dims[2] = {acc_topo_nodes(topo), acc_topo_gpus_per_node(topo)}, chain[1] = {n};
    acc_status_t st;

    *out = NULL;
    if ((st = rooted_setup(spec, coll, which, topo, args, &r)) != ACC_OK)
        return st;
    if ((st = acc_cplan_create(coll, which == 3 ? 1 : 2, which == 3 ? chain : dims, r.pr.lanes,
                               r.total, r.total, r.scratch, &cp)) != ACC_OK)
        goto out;
    snprintf(cp->algo, sizeof(cp->algo), "%s", name);
    cp->proto = args ? args->proto : ACC_PROTO_SIMPLE;
    cp->root = r.pr.root;
    cp->inplace = 1;
    rooted_params(&r, cp->params, sizeof(cp->params));
    if (which == 3) {
        /* The chain's order: from the root down. */
        if (!(seq = acc_mem_calloc((size_t)n, sizeof(int)))) {
            st = acc_error_set(ACC_ERR_NOMEM, "out of memory for a chain of %d ranks", n);
            goto out;
        }
        seq[0] = r.pr.root;
        for (int q = 1; q < n; q++)
            seq[q] = r.t.nchild[seq[q - 1]] == 1 ? r.t.child[seq[q - 1] * ALGO_TREE_MAXCH] : -1;
    }
    for (lane = 0; lane < r.pr.lanes && st == ACC_OK; lane++) {
        const algo_tree_t *used = &r.t;
        if (seq && (st = acc_cplan_set_ranks(cp, lane, seq)) != ACC_OK)
            break;
        st = algo_tree_classes(cp, lane, &used, 1, rooted_emit, &e);
    }
out:
    algo_tree_free(&r.t);
    acc_mem_free(seq);
    if (st != ACC_OK) {
        acc_cplan_destroy(cp);
        return st;
    }
    *out = cp;
    return ACC_OK;
}
