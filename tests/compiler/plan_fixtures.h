/*
 * plan_fixtures.h - hand-built plans of the classic algorithms, written independently of the
 * generators in compiler/algos so that the verifier, the YAML form and the mutation test can be
 * checked against plans whose correctness is argued here, step by step.  Header-only: each test
 * program that includes it gets its own static copy.
 */
#ifndef PLAN_FIXTURES_H
#define PLAN_FIXTURES_H

#include "acc_plan.h"
#include "acc_test.h"

#define FX(expr)                                                                                   \
    do {                                                                                           \
        acc_status_t fx_st_ = (expr);                                                              \
        if (fx_st_ != ACC_OK)                                                                      \
            acc_test_fail(__FILE__, __LINE__, "%s: %s", #expr, acc_error_message());               \
    } while (0)

/* A small xorshift generator: mutation tests draw from it with fixed seeds, so that a failure
 * repeats. */
typedef struct {
    uint64_t s;
} fx_rng_t;

static inline uint32_t fx_rnd(fx_rng_t *g, uint32_t n)
{
    g->s ^= g->s << 13;
    g->s ^= g->s >> 7;
    g->s ^= g->s << 17;
    return n ? (uint32_t)(g->s % n) : 0;
}

static inline int fx_mod(int a, int n)
{
    return ((a % n) + n) % n;
}

static inline acc_plan_t *fx_create(acc_coll_t coll, int n, int lanes, uint32_t in, uint32_t out,
                                    uint32_t scratch, const char *algo)
{
    acc_plan_t *p = NULL;
    FX(acc_plan_create(coll, n, lanes, in, out, scratch, &p));
    snprintf(p->algo, sizeof(p->algo), "%s", algo);
    return p;
}

static inline void fx_add(acc_plan_t *p, int r, int l, acc_op_t op)
{
    FX(acc_plan_add(p, r, l, &op, NULL));
}

static inline acc_op_t fx_op(acc_opcode_t code, int peer, int peer2, acc_ref_t src, acc_ref_t dst)
{
    acc_op_t o = acc_op_init(code);
    o.peer = peer;
    o.peer2 = peer2;
    o.src = src;
    o.dst = dst;
    return o;
}

static inline acc_ref_t fx_none(void)
{
    return acc_ref(ACC_BUF_IN, 0, 0);
}

/* Ring allreduce: each lane reduces-scatters then allgathers its own n chunks around the ring
 * r -> r+1.  At reduce-scatter step s rank r forwards the partial sum of chunk r-s; after n-1
 * steps it holds chunk r+1 complete, then passes complete chunks on for n-1 more steps.  In place
 * is safe: every input chunk is read before its output chunk is written. */
static inline acc_plan_t *fx_ring_allreduce(int n, int lanes)
{
    acc_plan_t *p = fx_create(ACC_COLL_ALLREDUCE, n, lanes, (uint32_t)(n * lanes),
                              (uint32_t)(n * lanes), 0, "ring");
    int r, l, s;
    p->inplace = 1;
    FX(acc_plan_set_params(p, "lanes=%d", lanes));
    for (l = 0; l < lanes; l++)
        for (r = 0; r < n; r++) {
            int prev = fx_mod(r - 1, n), next = fx_mod(r + 1, n);
            uint32_t b = (uint32_t)(l * n);
#define C(i) (b + (uint32_t)fx_mod((i), n))
            fx_add(p, r, l, fx_op(ACC_OP_SEND, next, -1, acc_ref(ACC_BUF_IN, C(r), 1), fx_none()));
            for (s = 1; s <= n - 2; s++)
                fx_add(p, r, l,
                       fx_op(ACC_OP_RECV_REDUCE_SEND, prev, next, acc_ref(ACC_BUF_IN, C(r - s), 1),
                             fx_none()));
            fx_add(p, r, l,
                   fx_op(ACC_OP_RECV_REDUCE_COPY_SEND, prev, next, acc_ref(ACC_BUF_IN, C(r + 1), 1),
                         acc_ref(ACC_BUF_OUT, C(r + 1), 1)));
            for (s = 1; s <= n - 2; s++)
                fx_add(p, r, l,
                       fx_op(ACC_OP_RECV_COPY_SEND, prev, next, fx_none(),
                             acc_ref(ACC_BUF_OUT, C(r + 1 - s), 1)));
            fx_add(p, r, l,
                   fx_op(ACC_OP_RECV, prev, -1, fx_none(), acc_ref(ACC_BUF_OUT, C(r + 2), 1)));
#undef C
        }
    return p;
}

/* Ring allgather of c chunks per rank: rank r places its own block, then forwards the block it
 * received one step earlier. */
static inline acc_plan_t *fx_ring_allgather(int n, uint32_t c)
{
    acc_plan_t *p = fx_create(ACC_COLL_ALLGATHER, n, 1, c, c * (uint32_t)n, 0, "ring");
    int r, s;
    p->inplace = 1;
    for (r = 0; r < n; r++) {
        int prev = fx_mod(r - 1, n), next = fx_mod(r + 1, n);
        fx_add(p, r, 0,
               fx_op(ACC_OP_COPY, -1, -1, acc_ref(ACC_BUF_IN, 0, c),
                     acc_ref(ACC_BUF_OUT, (uint32_t)r * c, c)));
        fx_add(p, r, 0,
               fx_op(ACC_OP_SEND, next, -1, acc_ref(ACC_BUF_OUT, (uint32_t)r * c, c), fx_none()));
        for (s = 1; s <= n - 2; s++)
            fx_add(p, r, 0,
                   fx_op(ACC_OP_RECV_COPY_SEND, prev, next, fx_none(),
                         acc_ref(ACC_BUF_OUT, (uint32_t)fx_mod(r - s, n) * c, c)));
        fx_add(p, r, 0,
               fx_op(ACC_OP_RECV, prev, -1, fx_none(),
                     acc_ref(ACC_BUF_OUT, (uint32_t)fx_mod(r + 1, n) * c, c)));
    }
    return p;
}

/* Ring reduce-scatter: as the first half of the ring allreduce, shifted by one so that rank r
 * ends with chunk r. */
static inline acc_plan_t *fx_ring_reduce_scatter(int n)
{
    acc_plan_t *p = fx_create(ACC_COLL_REDUCE_SCATTER, n, 1, (uint32_t)n, 1, 0, "ring");
    int r, s;
    p->inplace = 1;
    for (r = 0; r < n; r++) {
        int prev = fx_mod(r - 1, n), next = fx_mod(r + 1, n);
        fx_add(p, r, 0,
               fx_op(ACC_OP_SEND, next, -1, acc_ref(ACC_BUF_IN, (uint32_t)fx_mod(r - 1, n), 1),
                     fx_none()));
        for (s = 1; s <= n - 2; s++)
            fx_add(p, r, 0,
                   fx_op(ACC_OP_RECV_REDUCE_SEND, prev, next,
                         acc_ref(ACC_BUF_IN, (uint32_t)fx_mod(r - 1 - s, n), 1), fx_none()));
        fx_add(p, r, 0,
               fx_op(ACC_OP_RECV_REDUCE_COPY, prev, -1, acc_ref(ACC_BUF_IN, (uint32_t)r, 1),
                     acc_ref(ACC_BUF_OUT, 0, 1)));
    }
    return p;
}

static inline void fx_barrier(acc_plan_t *p, int r, int n, uint16_t slot)
{
    int q;
    for (q = 0; q < n; q++)
        if (q != r) {
            acc_op_t o = acc_op_init(ACC_OP_SIGNAL);
            o.peer = q;
            o.slot = slot;
            fx_add(p, r, 0, o);
        }
    for (q = 0; q < n; q++)
        if (q != r) {
            acc_op_t o = acc_op_init(ACC_OP_WAIT);
            o.peer = q;
            o.slot = slot;
            o.value = 1;
            fx_add(p, r, 0, o);
        }
}

/* One-shot allreduce over peer memory: a barrier says every rank has started (its input is
 * ready), each rank sums the input of all ranks into its output, and a second barrier keeps
 * every rank from returning while others still read its input.  Not in place: a rank's output
 * would overwrite the input its peers are reading. */
static inline acc_plan_t *fx_oneshot_allreduce(int n, uint32_t c)
{
    acc_plan_t *p = fx_create(ACC_COLL_ALLREDUCE, n, 1, c, c, 0, "oneshot");
    uint32_t *all = (uint32_t *)calloc((size_t)n, sizeof(uint32_t)), off = 0;
    int r;
    for (r = 0; r < n; r++)
        all[r] = (uint32_t)r;
    FX(acc_plan_add_peers(p, all, (uint32_t)n, &off));
    free(all);
    for (r = 0; r < n; r++) {
        acc_op_t o = fx_op(ACC_OP_REDUCE_PEERS, -1, -1, acc_ref(ACC_BUF_IN, 0, c),
                           acc_ref(ACC_BUF_OUT, 0, c));
        o.peers_off = off;
        o.npeers = (uint32_t)n;
        fx_barrier(p, r, n, 0);
        fx_add(p, r, 0, o);
        fx_barrier(p, r, n, 1);
    }
    return p;
}

/* Pipelined chain broadcast from `root` in c chunks: root, root+1, ... each forwards chunk by
 * chunk. */
static inline acc_plan_t *fx_chain_broadcast(int n, int root, uint32_t c)
{
    acc_plan_t *p = fx_create(ACC_COLL_BROADCAST, n, 1, c, c, 0, "chain");
    uint32_t k;
    int i;
    p->root = root;
    p->inplace = 1;
    for (i = 0; i < n; i++) {
        int r = fx_mod(root + i, n), prev = fx_mod(r - 1, n), next = fx_mod(r + 1, n);
        for (k = 0; k < c; k++) {
            if (i == 0) {
                fx_add(p, r, 0,
                       fx_op(ACC_OP_COPY, -1, -1, acc_ref(ACC_BUF_IN, k, 1),
                             acc_ref(ACC_BUF_OUT, k, 1)));
                if (n > 1)
                    fx_add(p, r, 0,
                           fx_op(ACC_OP_SEND, next, -1, acc_ref(ACC_BUF_OUT, k, 1), fx_none()));
            } else if (i < n - 1) {
                fx_add(p, r, 0,
                       fx_op(ACC_OP_RECV_COPY_SEND, prev, next, fx_none(),
                             acc_ref(ACC_BUF_OUT, k, 1)));
            } else {
                fx_add(p, r, 0,
                       fx_op(ACC_OP_RECV, prev, -1, fx_none(), acc_ref(ACC_BUF_OUT, k, 1)));
            }
        }
    }
    return p;
}

/* Direct alltoall: every rank sends block q of its input to rank q, then receives. */
static inline acc_plan_t *fx_alltoall(int n)
{
    acc_plan_t *p = fx_create(ACC_COLL_ALLTOALL, n, 1, (uint32_t)n, (uint32_t)n, 0, "direct");
    int r, q;
    p->inplace = 1;
    for (r = 0; r < n; r++) {
        fx_add(p, r, 0,
               fx_op(ACC_OP_COPY, -1, -1, acc_ref(ACC_BUF_IN, (uint32_t)r, 1),
                     acc_ref(ACC_BUF_OUT, (uint32_t)r, 1)));
        for (q = 1; q < n; q++)
            fx_add(p, r, 0,
                   fx_op(ACC_OP_SEND, fx_mod(r + q, n), -1,
                         acc_ref(ACC_BUF_IN, (uint32_t)fx_mod(r + q, n), 1), fx_none()));
        for (q = 1; q < n; q++)
            fx_add(p, r, 0,
                   fx_op(ACC_OP_RECV, fx_mod(r - q, n), -1, fx_none(),
                         acc_ref(ACC_BUF_OUT, (uint32_t)fx_mod(r - q, n), 1)));
    }
    return p;
}

/* Recursive-doubling allgather (n a power of two): at distance d, rank r swaps its block of d
 * ranks' data with rank r ^ d. */
static inline acc_plan_t *fx_rd_allgather(int n)
{
    acc_plan_t *p = fx_create(ACC_COLL_ALLGATHER, n, 1, 1, (uint32_t)n, 0, "rd");
    int r, d;
    for (r = 0; r < n; r++) {
        fx_add(p, r, 0,
               fx_op(ACC_OP_COPY, -1, -1, acc_ref(ACC_BUF_IN, 0, 1),
                     acc_ref(ACC_BUF_OUT, (uint32_t)r, 1)));
        for (d = 1; d < n; d *= 2) {
            int q = r ^ d, mine = r & ~(d - 1), theirs = q & ~(d - 1);
            fx_add(p, r, 0,
                   fx_op(ACC_OP_SEND, q, -1, acc_ref(ACC_BUF_OUT, (uint32_t)mine, (uint32_t)d),
                         fx_none()));
            fx_add(p, r, 0,
                   fx_op(ACC_OP_RECV, q, -1, fx_none(),
                         acc_ref(ACC_BUF_OUT, (uint32_t)theirs, (uint32_t)d)));
        }
    }
    return p;
}

/* Binary-tree reduce to rank 0 (children of r: 2r+1, 2r+2), c chunks, partial sums in scratch. */
static inline acc_plan_t *fx_tree_reduce(int n, uint32_t c)
{
    acc_plan_t *p = fx_create(ACC_COLL_REDUCE, n, 1, c, c, c, "tree");
    int r;
    p->root = 0;
    for (r = 0; r < n; r++) {
        int c1 = 2 * r + 1, c2 = 2 * r + 2, parent = (r - 1) / 2;
        acc_bufid_t acc = r == 0 ? ACC_BUF_OUT : ACC_BUF_SCRATCH;
        if (c1 >= n) {
            fx_add(p, r, 0, fx_op(ACC_OP_SEND, parent, -1, acc_ref(ACC_BUF_IN, 0, c), fx_none()));
            continue;
        }
        if (c2 >= n) {
            if (r == 0)
                fx_add(p, r, 0,
                       fx_op(ACC_OP_RECV_REDUCE_COPY, c1, -1, acc_ref(ACC_BUF_IN, 0, c),
                             acc_ref(ACC_BUF_OUT, 0, c)));
            else
                fx_add(p, r, 0,
                       fx_op(ACC_OP_RECV_REDUCE_SEND, c1, parent, acc_ref(ACC_BUF_IN, 0, c),
                             fx_none()));
            continue;
        }
        fx_add(
            p, r, 0,
            fx_op(ACC_OP_RECV_REDUCE_COPY, c1, -1, acc_ref(ACC_BUF_IN, 0, c), acc_ref(acc, 0, c)));
        if (r == 0)
            fx_add(p, r, 0,
                   fx_op(ACC_OP_RECV_REDUCE_COPY, c2, -1, acc_ref(ACC_BUF_OUT, 0, c),
                         acc_ref(ACC_BUF_OUT, 0, c)));
        else
            fx_add(p, r, 0,
                   fx_op(ACC_OP_RECV_REDUCE_SEND, c2, parent, acc_ref(ACC_BUF_SCRATCH, 0, c),
                         fx_none()));
    }
    return p;
}

/* Hierarchical allreduce over `nodes` x `g` ranks (rank = node * g + local): ring reduce-scatter
 * inside each node on lane 0 (local rank j ends with slice j+1 of the node's sum), then for each
 * slice a ring allreduce across the nodes of its rail (ranks with one local index), then a ring
 * allgather inside the node.  Each slice has `nodes` chunks, so the inter-node ring moves one chunk
 * per step: in = out = g * nodes chunks. */
static inline acc_plan_t *fx_hier_allreduce(int nodes, int g)
{
    int n = nodes * g, node, j, s;
    uint32_t C = (uint32_t)(g * nodes);
    acc_plan_t *p = fx_create(ACC_COLL_ALLREDUCE, n, 1, C, C, C, "hier");
    FX(acc_plan_set_params(p, "nodes=%d gpus=%d", nodes, g));
    for (node = 0; node < nodes; node++)
        for (j = 0; j < g; j++) {
            int r = node * g + j, lprev = node * g + fx_mod(j - 1, g),
                lnext = node * g + fx_mod(j + 1, g);
            int nprev = fx_mod(node - 1, nodes) * g + j, nnext = fx_mod(node + 1, nodes) * g + j;
            uint32_t mine = (uint32_t)fx_mod(j + 1, g) * (uint32_t)nodes; /* my slice */
#define SL(i)    ((uint32_t)fx_mod((i), g) * (uint32_t)nodes)
#define IN(i, m) acc_ref(ACC_BUF_IN, SL(i), (m))
            /* 1. intra-node ring reduce-scatter of slices (each slice = nodes chunks), into
             * scratch; a node of one rank just copies. */
            if (g == 1) {
                fx_add(p, r, 0,
                       fx_op(ACC_OP_COPY, -1, -1, acc_ref(ACC_BUF_IN, 0, C),
                             acc_ref(ACC_BUF_SCRATCH, 0, C)));
            } else {
                fx_add(p, r, 0, fx_op(ACC_OP_SEND, lnext, -1, IN(j, (uint32_t)nodes), fx_none()));
                for (s = 1; s <= g - 2; s++)
                    fx_add(p, r, 0,
                           fx_op(ACC_OP_RECV_REDUCE_SEND, lprev, lnext, IN(j - s, (uint32_t)nodes),
                                 fx_none()));
                fx_add(p, r, 0,
                       fx_op(ACC_OP_RECV_REDUCE_COPY, lprev, -1, IN(j + 1, (uint32_t)nodes),
                             acc_ref(ACC_BUF_SCRATCH, mine, (uint32_t)nodes)));
            }
            /* 2. inter-node ring allreduce of my slice across my rail: scratch -> out. */
            if (nodes == 1) {
                fx_add(p, r, 0,
                       fx_op(ACC_OP_COPY, -1, -1, acc_ref(ACC_BUF_SCRATCH, mine, (uint32_t)nodes),
                             acc_ref(ACC_BUF_OUT, mine, (uint32_t)nodes)));
            } else {
#define CH(i) (mine + (uint32_t)fx_mod((i), nodes))
                fx_add(p, r, 0,
                       fx_op(ACC_OP_SEND, nnext, -1, acc_ref(ACC_BUF_SCRATCH, CH(node), 1),
                             fx_none()));
                for (s = 1; s <= nodes - 2; s++)
                    fx_add(p, r, 0,
                           fx_op(ACC_OP_RECV_REDUCE_SEND, nprev, nnext,
                                 acc_ref(ACC_BUF_SCRATCH, CH(node - s), 1), fx_none()));
                fx_add(p, r, 0,
                       fx_op(ACC_OP_RECV_REDUCE_COPY_SEND, nprev, nnext,
                             acc_ref(ACC_BUF_SCRATCH, CH(node + 1), 1),
                             acc_ref(ACC_BUF_OUT, CH(node + 1), 1)));
                for (s = 1; s <= nodes - 2; s++)
                    fx_add(p, r, 0,
                           fx_op(ACC_OP_RECV_COPY_SEND, nprev, nnext, fx_none(),
                                 acc_ref(ACC_BUF_OUT, CH(node + 1 - s), 1)));
                fx_add(p, r, 0,
                       fx_op(ACC_OP_RECV, nprev, -1, fx_none(),
                             acc_ref(ACC_BUF_OUT, CH(node + 2), 1)));
#undef CH
            }
            /* 3. intra-node ring allgather of the slices. */
            if (g > 1) {
                fx_add(p, r, 0,
                       fx_op(ACC_OP_SEND, lnext, -1, acc_ref(ACC_BUF_OUT, mine, (uint32_t)nodes),
                             fx_none()));
                for (s = 1; s <= g - 2; s++)
                    fx_add(p, r, 0,
                           fx_op(ACC_OP_RECV_COPY_SEND, lprev, lnext, fx_none(),
                                 acc_ref(ACC_BUF_OUT, SL(j + 1 - s), (uint32_t)nodes)));
                fx_add(p, r, 0,
                       fx_op(ACC_OP_RECV, lprev, -1, fx_none(),
                             acc_ref(ACC_BUF_OUT, SL(j + 2), (uint32_t)nodes)));
            }
#undef IN
#undef SL
        }
    return p;
}

#endif /* PLAN_FIXTURES_H */
