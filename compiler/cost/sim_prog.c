/*
 * The plan's operations in the simulator's compact form, laid out for the order in which the
 * simulator reads them.
 *
 * A 1024-rank ring has 4 million operations (230 MB of acc_op_t), and the simulator reads them
 * lane after lane, one step at a time: every read would miss the caches and the TLB, and that
 * dominated the simulation.  So once per call the operations are copied into 16-byte records,
 * with their sizes for this call, and stored in rows: operation pc of every lane side by side.
 * Lanes that advance in step (every symmetric plan) then read consecutive memory.  When the
 * lanes' lengths differ so much that rows would waste more than half of the space, each lane
 * gets its own run instead.
 */
#include "sim_internal.h"

#include <string.h>

static inline float op_bytes(const acc_sim_t *sim, const acc_op_t *op)
{
    acc_ref_t r;
    const uint64_t *b;
    switch ((acc_opcode_t)op->code) {
    case ACC_OP_RECV:
    case ACC_OP_RECV_REDUCE_COPY:
    case ACC_OP_RECV_COPY_SEND:
    case ACC_OP_RECV_REDUCE_COPY_SEND:
    case ACC_OP_GET:
        r = op->dst;
        break;
    default:
        r = op->src;
    }
    if (!r.cnt || r.buf >= ACC_BUF_COUNT || (uint64_t)r.off + r.cnt > sim->nchunks[r.buf])
        return 0.0f;
    b = sim->bounds[r.buf];
    return (float)((double)(b[r.off + r.cnt] - b[r.off]) * sim->esize);
}

/* What the layout pass learns about the plan on the way: for every lane, the peer of its last
 * send and the last peer-memory operation's target (kind in the high bits), so that routes are
 * counted once per change, not once per operation. */
typedef struct {
    int32_t *last_send;
    int64_t *last_peer;
    acc_status_t st;
} scan_t;

/* Which resources could ever saturate in this call; the others are left out of every flow.
 * Every lane runs one operation at a time, and an operation's flows together move at most the
 * lane's cap.  So the most a resource is ever asked is the sum, over the lanes that may use it,
 * of what one of their flows may move through it: bound[] collects that, each lane counted
 * again at every change of peer (an upper bound).  A rank's own lanes may use its memory at the
 * heaviest local weight (3, a reduce) and its LL engine at their cap; messages add the receive
 * weight at their destination, peer-memory accesses one byte per byte at the remote end. */
static void add_path(acc_sim_t *sim, scan_t *sc, int from, int to, int lane, double c)
{
    sim_path_t path;
    uint32_t i;
    if (sc->st != ACC_OK || from == to || to < 0 || to >= sim->nranks || from < 0 ||
        from >= sim->nranks)
        return;
    if ((sc->st = sim_path(sim, from, to, lane, &path)) != ACC_OK)
        return;
    for (i = 0; i < path.n; i++)
        sim->res_bound[path.res[i]] += c;
}

static void scan(acc_sim_t *sim, scan_t *sc, uint32_t t, const acc_op_t *op)
{
    int rank = (int)(t / (uint32_t)sim->plan->nlanes);
    int lane = (int)(t % (uint32_t)sim->plan->nlanes);
    double cap = sim->lane_cap;
    int32_t to = -1;
    int64_t sig;
    uint32_t i, remote = 0;
    const uint32_t *peers;

    switch ((acc_opcode_t)op->code) {
    case ACC_OP_SEND:
        to = op->peer;
        break;
    case ACC_OP_RECV_COPY_SEND:
    case ACC_OP_RECV_REDUCE_SEND:
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        to = op->peer2;
        break;
    case ACC_OP_PUT:
    case ACC_OP_GET:
        sig = ((int64_t)op->code << 40) | (uint32_t)op->peer;
        if (sig == sc->last_peer[t] || op->peer < 0 || op->peer >= sim->nranks)
            return;
        sc->last_peer[t] = sig;
        if (op->code == ACC_OP_PUT) {
            add_path(sim, sc, rank, op->peer, lane, cap);
        } else {
            add_path(sim, sc, op->peer, rank, lane, cap);
            sim->res_bound[sim_ll_res(sim, op->peer)] += cap;
        }
        sim->res_bound[sim_mem_res(sim, op->peer)] += cap;
        return;
    case ACC_OP_REDUCE_PEERS:
        sig = ((int64_t)op->code << 40) | op->peers_off;
        if (sig == sc->last_peer[t] || (uint64_t)op->peers_off + op->npeers > sim->plan->npeer_pool)
            return;
        sc->last_peer[t] = sig;
        peers = sim->plan->peer_pool + op->peers_off;
        for (i = 0; i < op->npeers; i++)
            remote += (int)peers[i] != rank;
        for (i = 0; i < op->npeers; i++) {
            if ((int)peers[i] == rank || peers[i] >= (uint32_t)sim->nranks)
                continue;
            add_path(sim, sc, (int)peers[i], rank, lane, cap / (remote + 1));
            sim->res_bound[sim_mem_res(sim, (int)peers[i])] += cap / (remote + 1);
            sim->res_bound[sim_ll_res(sim, (int)peers[i])] += cap / (remote + 1);
        }
        return;
    default:
        return;
    }
    if (to == sc->last_send[t] || to < 0 || to >= sim->nranks)
        return;
    sc->last_send[t] = to;
    add_path(sim, sc, rank, to, lane, cap);
    sim->res_bound[sim_mem_res(sim, to)] += cap * sim_mem_weight_recv(sim->reduces);
}

static int bad_rank(const acc_sim_t *sim, int32_t r)
{
    return r < 0 || r >= sim->nranks;
}

/* The simulator trusts verified plans but must not read out of bounds on others: check what
 * it indexes with (peers, lanes of dependencies, the peer pool). */
static acc_status_t check_op(const acc_sim_t *sim, uint32_t t, uint32_t pc, const acc_op_t *op)
{
    const char *what = NULL;
    uint32_t i;
    if (op->code >= ACC_OP_COUNT)
        what = "an unknown operation code";
    else if (op->dep_lane >= sim->plan->nlanes || (op->dep_lane >= 0 && op->dep_op < 0))
        what = "a dependency on a lane the plan does not have";
    else if (op->code != ACC_OP_COPY && op->code != ACC_OP_REDUCE && op->code != ACC_OP_NOP &&
             op->code != ACC_OP_REDUCE_PEERS && bad_rank(sim, op->peer))
        what = "a peer that is not a rank of the plan";
    else if ((op->code == ACC_OP_RECV_COPY_SEND || op->code == ACC_OP_RECV_REDUCE_SEND ||
              op->code == ACC_OP_RECV_REDUCE_COPY_SEND) &&
             bad_rank(sim, op->peer2))
        what = "a forwarding peer that is not a rank of the plan";
    else if (op->code == ACC_OP_REDUCE_PEERS) {
        if ((uint64_t)op->peers_off + op->npeers > sim->plan->npeer_pool)
            what = "a peer list outside the plan's pool";
        for (i = 0; !what && i < op->npeers; i++)
            if (bad_rank(sim, (int32_t)sim->plan->peer_pool[op->peers_off + i]))
                what = "a listed peer that is not a rank of the plan";
    }
    if (!what)
        return ACC_OK;
    return acc_error_set(ACC_ERR_INVALID,
                         "acc_sim_plan: rank %u lane %u op %u (%s) has %s (%d ranks, %d lanes); "
                         "simulate only plans that pass acc_plan_verify",
                         t / (uint32_t)sim->plan->nlanes, t % (uint32_t)sim->plan->nlanes, pc,
                         acc_op_name((acc_opcode_t)op->code), what, sim->nranks, sim->plan->nlanes);
}

static inline void compact(const acc_sim_t *sim, const acc_op_t *op, sim_op_t *out)
{
    out->code = op->code;
    out->dep = op->dep_lane >= 0;
    out->slot = op->slot;
    out->peer = op->peer;
    out->peer2 = op->code == ACC_OP_WAIT ? (int32_t)op->value : op->peer2;
    out->bytes = op_bytes(sim, op);
}

static void decide(acc_sim_t *sim)
{
    uint32_t r, n = (uint32_t)(sim->period ? sim->period : sim->nranks),
                nl = (uint32_t)sim->plan->nlanes;
    for (r = 0; r < n; r++) {
        sim->res_bound[sim_mem_res(sim, (int)r)] += 3.0 * nl * sim->lane_cap;
        sim->res_bound[sim->res_ll + r] += (double)nl * sim->lane_cap;
    }
    for (r = 0; r < sim->nres; r++)
        sim->res_on[r] = sim->res_bound[r] > sim->res[r].cap * (1.0 + 1e-9);
    /* NCCL's LL engine cap is a fact of NCCL's kernels, not of a measured device's. */
    if (sim->proto != ACC_PROTO_LL || sim->device_on)
        for (r = 0; r < n; r++)
            sim->res_on[sim->res_ll + r] = 0;
}

acc_status_t sim_prog_build(acc_sim_t *sim)
{
    const acc_plan_t *p = sim->plan;
    uint32_t t, t0, pc, maxn = 0;
    uint64_t total = 0, need;
    scan_t sc;
    acc_status_t st = ACC_OK;

    for (t = 0; t < sim->nth; t++) {
        total += p->progs[t].nops;
        if (p->progs[t].nops > maxn)
            maxn = p->progs[t].nops;
    }
    sc.st = ACC_OK;
    sc.last_send = acc_mem_alloc((size_t)sim->nth * sizeof(int32_t) + 1);
    sc.last_peer = acc_mem_alloc((size_t)sim->nth * sizeof(int64_t) + 1);
    if (!sc.last_send || !sc.last_peer) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for %u lanes", sim->nth);
        goto out;
    }
    for (t = 0; t < sim->nth; t++) {
        sc.last_send[t] = -1;
        sc.last_peer[t] = -1;
    }
    memset(sim->res_bound, 0, (size_t)sim->nres * sizeof(double));
    sim->ops_rows = (uint64_t)maxn * sim->nth <= total + total / 2 + sim->nth;
    need = sim->ops_rows ? (uint64_t)maxn * sim->nth : total;
    if (need > sim->ops_cap) {
        sim_op_t *o = acc_mem_realloc_array(sim->ops, (size_t)need, sizeof(sim_op_t));
        if (!o) {
            st = acc_error_set(ACC_ERR_NOMEM, "out of memory for %llu simulated operations",
                               (unsigned long long)need);
            goto out;
        }
        sim->ops = o;
        sim->ops_cap = (size_t)need;
    }
    if (!sim->ops_rows) {
        if (sim->nth > sim->op_off_cap) {
            uint64_t *o = acc_mem_realloc_array(sim->op_off, sim->nth, sizeof(uint64_t));
            if (!o) {
                st = acc_error_set(ACC_ERR_NOMEM, "out of memory for %u lanes", sim->nth);
                goto out;
            }
            sim->op_off = o;
            sim->op_off_cap = sim->nth;
        }
        for (total = 0, t = 0; t < sim->nth && st == ACC_OK; t++) {
            sim->op_off[t] = total;
            for (pc = 0; pc < p->progs[t].nops && st == ACC_OK; pc++) {
                if ((st = check_op(sim, t, pc, &p->progs[t].ops[pc])) != ACC_OK)
                    break;
                scan(sim, &sc, t, &p->progs[t].ops[pc]);
                compact(sim, &p->progs[t].ops[pc], &sim->ops[total + pc]);
            }
            total += p->progs[t].nops;
        }
    } else {
        /* Transpose in blocks of 16 lanes: 16 sequential reads, 256-byte runs written. */
        for (t0 = 0; t0 < sim->nth && st == ACC_OK; t0 += 16) {
            uint32_t t1 = t0 + 16 < sim->nth ? t0 + 16 : sim->nth, m = 0;
            for (t = t0; t < t1; t++)
                if (p->progs[t].nops > m)
                    m = p->progs[t].nops;
            for (pc = 0; pc < m && st == ACC_OK; pc++)
                for (t = t0; t < t1 && st == ACC_OK; t++)
                    if (pc < p->progs[t].nops) {
                        if ((st = check_op(sim, t, pc, &p->progs[t].ops[pc])) != ACC_OK)
                            break;
                        scan(sim, &sc, t, &p->progs[t].ops[pc]);
                        compact(sim, &p->progs[t].ops[pc], &sim->ops[(size_t)pc * sim->nth + t]);
                    }
        }
    }
    if (st == ACC_OK && (st = sc.st) == ACC_OK)
        decide(sim);
out:
    acc_mem_free(sc.last_send);
    acc_mem_free(sc.last_peer);
    return st;
}
