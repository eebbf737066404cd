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

/* What the layout pass learns about the plan on the way. */
typedef struct {
    uint32_t *changes;  /* per lane: how often the peer of its receives changes */
    int32_t *last;      /* per lane: the peer of its last receive */
    int32_t *last_send; /* per lane: the peer of its last send */
    int peer_ops;       /* any put, get or reduce_peers */
    acc_status_t st;
} scan_t;

static int32_t send_target(const acc_op_t *op)
{
    switch ((acc_opcode_t)op->code) {
    case ACC_OP_SEND:
        return op->peer;
    case ACC_OP_RECV_COPY_SEND:
    case ACC_OP_RECV_REDUCE_SEND:
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        return op->peer2;
    default:
        return -1;
    }
}

static int is_recv(unsigned code)
{
    return code >= ACC_OP_RECV && code <= ACC_OP_RECV_REDUCE_COPY_SEND;
}

static int is_peer(unsigned code)
{
    return code == ACC_OP_PUT || code == ACC_OP_GET || code == ACC_OP_REDUCE_PEERS;
}

static inline void compact(const acc_sim_t *sim, scan_t *sc, uint32_t t, const acc_op_t *op,
                           sim_op_t *out)
{
    int32_t to = send_target(op);
    if (op->peer != sc->last[t] && is_recv(op->code)) {
        sc->changes[t]++;
        sc->last[t] = op->peer;
    }
    /* Each lane has at most one message flow at a time: a link carries at once at most one
     * flow per lane that sends over it (counted again at every change of peer: an upper
     * bound). */
    if (to != sc->last_send[t] && to >= 0 && to < sim->nranks && sc->st == ACC_OK) {
        sim_path_t path;
        uint32_t i;
        sc->last_send[t] = to;
        sc->st = sim_path(sim, (int)(t / (uint32_t)sim->plan->nlanes), to, &path);
        for (i = 0; sc->st == ACC_OK && i < path.n; i++)
            sim->res_flows[path.res[i]]++;
    }
    sc->peer_ops |= is_peer(op->code);
    out->code = op->code;
    out->dep = op->dep_lane >= 0;
    out->slot = op->slot;
    out->peer = op->peer;
    out->peer2 = op->code == ACC_OP_WAIT ? (int32_t)op->value : op->peer2;
    out->bytes = op_bytes(sim, op);
}

/* Which resources could ever saturate in this call; the others are left out of every flow.
 * Every lane runs one operation at a time and an operation's flows together move at most the
 * lane's cap.  So a link, NIC or fabric share carries at once at most the lanes counted in
 * res_flows; a rank's memory serves at most its own lanes, each at the cap with the heaviest
 * local weight (3, a reduce), plus one message flow at the cap from every lane that sends to it
 * (at most the number of times a receiving lane's peer changes), at the receive weight; a rank's
 * LL engine serves its own lanes.  Peer-memory operations reach other ranks without
 * connections: plans with them keep every resource. */
static void decide(acc_sim_t *sim, const scan_t *sc)
{
    const acc_plan_t *p = sim->plan;
    uint32_t r, l, n = (uint32_t)p->nranks, nl = (uint32_t)p->nlanes;

    for (r = 0; r < sim->res_mem; r++)
        sim->res_on[r] = sc->peer_ops || sim->res_flows[r] * sim->lane_cap > sim->res[r].cap;
    for (r = 0; r < n; r++) {
        double in = 0, mem = sim->res[sim->res_mem + r].cap, ll = sim->res[sim->res_ll + r].cap;
        for (l = 0; l < nl; l++)
            in += sc->changes[r * nl + l];
        sim->res_on[sim->res_mem + r] =
            sc->peer_ops ||
            sim->lane_cap * (3.0 * nl + in * sim_mem_weight_recv(sim->reduces)) > mem;
        sim->res_on[sim->res_ll + r] =
            sim->proto == ACC_PROTO_LL && (sc->peer_ops || sim->lane_cap * nl > ll);
    }
}

acc_status_t sim_prog_build(acc_sim_t *sim)
{
    const acc_plan_t *p = sim->plan;
    uint32_t t, t0, pc, maxn = 0;
    uint64_t total = 0, need;
    scan_t sc;
    acc_status_t st;

    for (t = 0; t < sim->nth; t++) {
        total += p->progs[t].nops;
        if (p->progs[t].nops > maxn)
            maxn = p->progs[t].nops;
    }
    sc.peer_ops = 0;
    sc.st = ACC_OK;
    sc.changes = acc_calloc(sim->nth, sizeof(uint32_t));
    sc.last = acc_malloc((size_t)sim->nth * sizeof(int32_t) + 1);
    sc.last_send = acc_malloc((size_t)sim->nth * sizeof(int32_t) + 1);
    if (!sc.changes || !sc.last || !sc.last_send) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for %u lanes", sim->nth);
        goto out;
    }
    for (t = 0; t < sim->nth; t++)
        sc.last[t] = sc.last_send[t] = -1;
    memset(sim->res_flows, 0, (size_t)sim->nres * sizeof(uint32_t));
    sim->ops_rows = (uint64_t)maxn * sim->nth <= total + total / 2 + sim->nth;
    need = sim->ops_rows ? (uint64_t)maxn * sim->nth : total;
    if (need > sim->ops_cap) {
        sim_op_t *o = acc_realloc_array(sim->ops, (size_t)need, sizeof(sim_op_t));
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
            uint64_t *o = acc_realloc_array(sim->op_off, sim->nth, sizeof(uint64_t));
            if (!o) {
                st = acc_error_set(ACC_ERR_NOMEM, "out of memory for %u lanes", sim->nth);
                goto out;
            }
            sim->op_off = o;
            sim->op_off_cap = sim->nth;
        }
        for (total = 0, t = 0; t < sim->nth; t++) {
            sim->op_off[t] = total;
            for (pc = 0; pc < p->progs[t].nops; pc++)
                compact(sim, &sc, t, &p->progs[t].ops[pc], &sim->ops[total + pc]);
            total += p->progs[t].nops;
        }
        goto decide;
    }
    /* Transpose in blocks of 16 lanes: 16 sequential reads, writes 16 records (256 B) apart
     * from nothing. */
    for (t0 = 0; t0 < sim->nth; t0 += 16) {
        uint32_t t1 = t0 + 16 < sim->nth ? t0 + 16 : sim->nth, m = 0;
        for (t = t0; t < t1; t++)
            if (p->progs[t].nops > m)
                m = p->progs[t].nops;
        for (pc = 0; pc < m; pc++)
            for (t = t0; t < t1; t++)
                if (pc < p->progs[t].nops)
                    compact(sim, &sc, t, &p->progs[t].ops[pc],
                            &sim->ops[(size_t)pc * sim->nth + t]);
    }
decide:
    if ((st = sc.st) == ACC_OK)
        decide(sim, &sc);
out:
    acc_free(sc.changes);
    acc_free(sc.last);
    acc_free(sc.last_send);
    return st;
}
