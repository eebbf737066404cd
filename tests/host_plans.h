/*
 * host_plans.h - plans of every collective written out by hand, step by step, independently of
 * compiler/algos: ring allreduce on several lanes, ring allgather and reduce-scatter, chain
 * broadcast and reduce (fused operations and the long way through scratch), direct alltoall,
 * and peer-memory allreduce / allgather / broadcast with signal, wait and cross-lane
 * dependencies.  Shared by the host executor and MSCCL tests; header-only.
 */
#ifndef HOST_PLANS_H
#define HOST_PLANS_H

#include "acc_plan.h"
#include "acc_test.h"

static inline int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

static inline acc_plan_t *create(acc_coll_t coll, int n, int lanes, uint32_t in, uint32_t out,
                                 uint32_t scratch, const char *algo)
{
    acc_plan_t *p = NULL;
    CHECK_OK(acc_plan_create(coll, n, lanes, in, out, scratch, &p));
    snprintf(p->algo, sizeof(p->algo), "%s", algo);
    return p;
}

static inline uint32_t add(acc_plan_t *p, int r, int l, acc_opcode_t code, int peer, int peer2,
                           acc_ref_t src, acc_ref_t dst)
{
    acc_op_t o = acc_op_init(code);
    uint32_t at = 0;
    o.peer = peer;
    o.peer2 = peer2;
    o.src = src;
    o.dst = dst;
    CHECK_OK(acc_plan_add(p, r, l, &o, &at));
    return at;
}

static inline void add_sync(acc_plan_t *p, int r, int l, acc_opcode_t code, int peer, uint16_t slot,
                            uint32_t value)
{
    acc_op_t o = acc_op_init(code);
    o.peer = peer;
    o.slot = slot;
    o.value = value;
    CHECK_OK(acc_plan_add(p, r, l, &o, NULL));
}

static inline void add_dep_nop(acc_plan_t *p, int r, int l, int dep_lane, int dep_op)
{
    acc_op_t o = acc_op_init(ACC_OP_NOP);
    o.dep_lane = dep_lane;
    o.dep_op = dep_op;
    CHECK_OK(acc_plan_add(p, r, l, &o, NULL));
}

#define NONE      acc_ref(ACC_BUF_IN, 0, 0)
#define IN(o, c)  acc_ref(ACC_BUF_IN, (uint32_t)(o), (uint32_t)(c))
#define OUT(o, c) acc_ref(ACC_BUF_OUT, (uint32_t)(o), (uint32_t)(c))
#define SCR(o, c) acc_ref(ACC_BUF_SCRATCH, (uint32_t)(o), (uint32_t)(c))

/* Ring allreduce, lane l owning chunks l*n .. l*n+n-1.  Reduce-scatter: rank r sends its chunk
 * r, then for s = 0 .. n-2 receives chunk r-s-1, adds its own input and forwards it; the last of
 * those (chunk r+1) is complete.  Allgather: n-2 receive-copy-forwards of chunks r, r-1, ...
 * and a final receive of chunk r+2.  In place is safe: a chunk's output is written only once
 * its input has been sent. */
static inline acc_plan_t *ring_allreduce(int n, int lanes)
{
    acc_plan_t *p = create(ACC_COLL_ALLREDUCE, n, lanes, (uint32_t)(n * lanes),
                           (uint32_t)(n * lanes), 0, "ring");
    int r, l, s;
    p->inplace = 1;
    for (r = 0; r < n; r++)
        for (l = 0; l < lanes; l++) {
            int prev = mod(r - 1, n), next = mod(r + 1, n), b = l * n;
            add(p, r, l, ACC_OP_SEND, next, -1, IN(b + r, 1), NONE);
            for (s = 0; s <= n - 2; s++) {
                int c = b + mod(r - s - 1, n);
                add(p, r, l, ACC_OP_RECV_REDUCE_COPY_SEND, prev, next, IN(c, 1), OUT(c, 1));
            }
            for (s = 0; s <= n - 3; s++)
                add(p, r, l, ACC_OP_RECV_COPY_SEND, prev, next, NONE, OUT(b + mod(r - s, n), 1));
            add(p, r, l, ACC_OP_RECV, prev, -1, NONE, OUT(b + mod(r + 2, n), 1));
        }
    return p;
}

/* Ring allgather of c chunks per rank, sent as one message of c chunks per step. */
static inline acc_plan_t *ring_allgather(int n, uint32_t c)
{
    acc_plan_t *p = create(ACC_COLL_ALLGATHER, n, 1, c, c * (uint32_t)n, 0, "ring");
    int r, t;
    p->inplace = 1;
    for (r = 0; r < n; r++) {
        int prev = mod(r - 1, n), next = mod(r + 1, n);
        add(p, r, 0, ACC_OP_COPY, -1, -1, IN(0, c), OUT((uint32_t)r * c, c));
        add(p, r, 0, ACC_OP_SEND, next, -1, IN(0, c), NONE);
        for (t = 0; t <= n - 3; t++)
            add(p, r, 0, ACC_OP_RECV_COPY_SEND, prev, next, NONE,
                OUT((uint32_t)mod(r - 1 - t, n) * c, c));
        add(p, r, 0, ACC_OP_RECV, prev, -1, NONE, OUT((uint32_t)mod(r + 1, n) * c, c));
    }
    return p;
}

/* Ring reduce-scatter of c chunks per rank: rank r sends block r-1, reduces and forwards blocks
 * r-2, r-3, ... (RECV_REDUCE_SEND keeps nothing locally) and ends reducing block r into its
 * output. */
static inline acc_plan_t *ring_reduce_scatter(int n, uint32_t c)
{
    acc_plan_t *p = create(ACC_COLL_REDUCE_SCATTER, n, 1, c * (uint32_t)n, c, 0, "ring");
    int r, s;
    p->inplace = 1;
    for (r = 0; r < n; r++) {
        int prev = mod(r - 1, n), next = mod(r + 1, n);
        add(p, r, 0, ACC_OP_SEND, next, -1, IN((uint32_t)mod(r - 1, n) * c, c), NONE);
        for (s = 0; s <= n - 3; s++)
            add(p, r, 0, ACC_OP_RECV_REDUCE_SEND, prev, next,
                IN((uint32_t)mod(r - 2 - s, n) * c, c), NONE);
        add(p, r, 0, ACC_OP_RECV_REDUCE_COPY, prev, -1, IN((uint32_t)r * c, c), OUT(0, c));
    }
    return p;
}

/* Pipelined chain broadcast root, root+1, ...; chunk k travels on lane k % lanes. */
static inline acc_plan_t *chain_broadcast(int n, int root, uint32_t k, int lanes)
{
    acc_plan_t *p = create(ACC_COLL_BROADCAST, n, lanes, k, k, 0, "chain");
    uint32_t c;
    int i;
    p->root = root;
    p->inplace = 1;
    for (i = 0; i < n; i++) {
        int r = mod(root + i, n), prev = mod(r - 1, n), next = mod(r + 1, n);
        for (c = 0; c < k; c++) {
            int l = (int)(c % (uint32_t)lanes);
            if (i == 0) {
                add(p, r, l, ACC_OP_COPY, -1, -1, IN(c, 1), OUT(c, 1));
                if (n > 1)
                    add(p, r, l, ACC_OP_SEND, next, -1, IN(c, 1), NONE);
            } else if (i < n - 1) {
                add(p, r, l, ACC_OP_RECV_COPY_SEND, prev, next, NONE, OUT(c, 1));
            } else {
                add(p, r, l, ACC_OP_RECV, prev, -1, NONE, OUT(c, 1));
            }
        }
    }
    return p;
}

/* Pipelined chain reduce ending at root: root+1 sends, the middle ranks add and forward, the
 * root adds its own input into its output.  Even chunks use the fused operations; odd chunks
 * the long way, through scratch: receive, local REDUCE, send (and at the root COPY + REDUCE). */
static inline acc_plan_t *chain_reduce(int n, int root, uint32_t k)
{
    acc_plan_t *p = create(ACC_COLL_REDUCE, n, 1, k, k, k, "chain");
    uint32_t c;
    int i;
    p->root = root;
    p->inplace = 1;
    for (i = 0; i < n; i++) {
        int r = mod(root + 1 + i, n), prev = mod(r - 1, n), next = mod(r + 1, n);
        for (c = 0; c < k; c++) {
            if (n == 1) {
                add(p, r, 0, ACC_OP_COPY, -1, -1, IN(c, 1), OUT(c, 1));
            } else if (i == 0) {
                add(p, r, 0, ACC_OP_SEND, next, -1, IN(c, 1), NONE);
            } else if (c % 2 == 0) {
                if (i < n - 1)
                    add(p, r, 0, ACC_OP_RECV_REDUCE_SEND, prev, next, IN(c, 1), NONE);
                else
                    add(p, r, 0, ACC_OP_RECV_REDUCE_COPY, prev, -1, IN(c, 1), OUT(c, 1));
            } else {
                add(p, r, 0, ACC_OP_RECV, prev, -1, NONE, SCR(c, 1));
                if (i < n - 1) {
                    add(p, r, 0, ACC_OP_REDUCE, -1, -1, IN(c, 1), SCR(c, 1));
                    add(p, r, 0, ACC_OP_SEND, next, -1, SCR(c, 1), NONE);
                } else {
                    add(p, r, 0, ACC_OP_COPY, -1, -1, IN(c, 1), OUT(c, 1));
                    add(p, r, 0, ACC_OP_REDUCE, -1, -1, SCR(c, 1), OUT(c, 1));
                }
            }
        }
    }
    return p;
}

/* Direct alltoall: the block for peer p goes on lane (r + p) % lanes, the same lane on both
 * ends; each lane sends all its blocks before receiving, so one slot per connection suffices. */
static inline acc_plan_t *direct_alltoall(int n, uint32_t c, int lanes)
{
    acc_plan_t *p =
        create(ACC_COLL_ALLTOALL, n, lanes, c * (uint32_t)n, c * (uint32_t)n, 0, "direct");
    int r, q, l;
    p->inplace = 1;
    p->slots = 1;
    for (r = 0; r < n; r++) {
        add(p, r, 0, ACC_OP_COPY, -1, -1, IN((uint32_t)r * c, c), OUT((uint32_t)r * c, c));
        for (l = 0; l < lanes; l++) {
            for (q = 0; q < n; q++)
                if (q != r && (r + q) % lanes == l)
                    add(p, r, l, ACC_OP_SEND, q, -1, IN((uint32_t)q * c, c), NONE);
            for (q = 0; q < n; q++)
                if (q != r && (r + q) % lanes == l)
                    add(p, r, l, ACC_OP_RECV, q, -1, NONE, OUT((uint32_t)q * c, c));
        }
    }
    return p;
}

static inline uint32_t all_ranks(acc_plan_t *p, int n)
{
    uint32_t ranks[64], off = 0;
    int r;
    for (r = 0; r < n; r++)
        ranks[r] = (uint32_t)r;
    CHECK_OK(acc_plan_add_peers(p, ranks, (uint32_t)n, &off));
    return off;
}

/* One-shot allreduce over peer memory, two lanes.  Lane 0 copies the input to scratch and
 * signals slot 0 to every peer; once every peer has signalled, each lane sums its chunk of
 * every rank's scratch into its output, then a second signal/wait keeps the scratch alive
 * until all have read it.  Lane 1 depends on lane 0's copy.  In place works because peers read
 * the scratch copy, never the output being written. */
static inline acc_plan_t *oneshot_allreduce(int n)
{
    acc_plan_t *p = create(ACC_COLL_ALLREDUCE, n, 2, 2, 2, 2, "oneshot");
    uint32_t peers = all_ranks(p, n);
    int r, q, l;
    p->inplace = 1;
    for (r = 0; r < n; r++) {
        uint32_t copy = add(p, r, 0, ACC_OP_COPY, -1, -1, IN(0, 2), SCR(0, 2));
        for (q = 0; q < n; q++)
            if (q != r)
                add_sync(p, r, 0, ACC_OP_SIGNAL, q, 0, 0);
        add_dep_nop(p, r, 1, 0, (int)copy);
        for (l = 0; l < 2; l++) {
            acc_op_t o = acc_op_init(ACC_OP_REDUCE_PEERS);
            for (q = 0; q < n; q++)
                if (q != r)
                    add_sync(p, r, l, ACC_OP_WAIT, q, 0, 1);
            o.src = SCR(l, 1);
            o.dst = OUT(l, 1);
            o.peers_off = peers;
            o.npeers = (uint32_t)n;
            CHECK_OK(acc_plan_add(p, r, l, &o, NULL));
            for (q = 0; q < n; q++)
                if (q != r)
                    add_sync(p, r, l, ACC_OP_SIGNAL, q, (uint16_t)(1 + l), 0);
            for (q = 0; q < n; q++)
                if (q != r)
                    add_sync(p, r, l, ACC_OP_WAIT, q, (uint16_t)(1 + l), 1);
        }
    }
    return p;
}

/* Allgather by PUT: every rank writes its block into every peer's output, then signals. */
static inline acc_plan_t *put_allgather(int n)
{
    acc_plan_t *p = create(ACC_COLL_ALLGATHER, n, 1, 1, (uint32_t)n, 0, "put");
    int r, q;
    p->inplace = 1;
    for (r = 0; r < n; r++) {
        add(p, r, 0, ACC_OP_COPY, -1, -1, IN(0, 1), OUT(r, 1));
        for (q = 0; q < n; q++)
            if (q != r) {
                add(p, r, 0, ACC_OP_PUT, q, -1, IN(0, 1), OUT(r, 1));
                add_sync(p, r, 0, ACC_OP_SIGNAL, q, 0, 0);
            }
        for (q = 0; q < n; q++)
            if (q != r)
                add_sync(p, r, 0, ACC_OP_WAIT, q, 0, 1);
    }
    return p;
}

/* Broadcast by GET: the root signals that its input is ready, every other rank reads it and
 * signals back, and the root waits for all before returning. */
static inline acc_plan_t *get_broadcast(int n, int root)
{
    acc_plan_t *p = create(ACC_COLL_BROADCAST, n, 1, 3, 3, 0, "get");
    int r;
    p->root = root;
    p->inplace = 1;
    for (r = 0; r < n; r++) {
        if (r == root) {
            add(p, r, 0, ACC_OP_COPY, -1, -1, IN(0, 3), OUT(0, 3));
            for (int q = 0; q < n; q++)
                if (q != r)
                    add_sync(p, r, 0, ACC_OP_SIGNAL, q, 0, 0);
            for (int q = 0; q < n; q++)
                if (q != r)
                    add_sync(p, r, 0, ACC_OP_WAIT, q, 1, 1);
        } else {
            add_sync(p, r, 0, ACC_OP_WAIT, root, 0, 1);
            add(p, r, 0, ACC_OP_GET, root, -1, IN(0, 3), OUT(0, 3));
            add_sync(p, r, 0, ACC_OP_SIGNAL, root, 1, 0);
        }
    }
    return p;
}

#endif
