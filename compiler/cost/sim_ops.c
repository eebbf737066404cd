/*
 * What each operation of a plan costs: when it may start (acc_plan.h's execution model), which
 * flows it starts, and when it completes.
 *
 *   send           needs a free slot on its connection; one flow over the route to the peer;
 *                  completes when its last byte has left.  The message arrives one step
 *                  latency later (the protocol's per-step latency for the route's class).
 *   recv, rrc      complete when the message has arrived.  Their memory traffic (landing,
 *                  reading back, the local operand) rides on the message's flow as weights on
 *                  the receiver's memory: NCCL's primitives and acc's kernels reduce slice by
 *                  slice as data lands, so the arithmetic overlaps the transfer.
 *   rcs, rrs, rrcs forward as they receive: they may start once the message's first step
 *                  (sim_slice_bytes) has landed and the outgoing connection has a free slot,
 *                  and complete no earlier than one step after the incoming message is complete.
 *                  This is what lets a ring hide its per-step latency behind the transfer of
 *                  large messages, as NCCL's pipelined ring does.
 *   copy, reduce   a flow on the rank's own memory (2 or 3 bytes of traffic per byte).
 *   put, get       one flow over the route, plus one (put) or two (get: request and response)
 *                  peer latencies.
 *   reduce_peers   one flow from every other listed rank (remote loads, two peer latencies),
 *                  and the local read and write; the lane's cap is shared by its flows.
 *   signal         the counter moves one peer latency later; the lane goes on at once.
 *   wait           completes when the counter has reached the value.
 * Every flow is capped at the plan's per-lane rate (one lane is one thread block).
 */
#include "sim_internal.h"

#include <math.h>
#include <string.h>

enum { START_BLOCK = 0, START_RUN, START_DONE };

static double eps_at(double t)
{
    return 1e-9 * (t > 1.0 ? t : 1.0);
}

static acc_status_t nomem(void)
{
    return acc_error_set(ACC_ERR_NOMEM, "out of memory simulating a plan");
}

static acc_status_t grow_ready(acc_sim_t *sim)
{
    size_t c = sim->ready_cap;
    void *p = sim->ready;
    if (acc_array_reserve(&p, &c, (size_t)sim->nready + 1, sizeof(uint32_t)) != ACC_OK)
        return nomem();
    sim->ready = p;
    sim->ready_cap = (uint32_t)c;
    return ACC_OK;
}

/* The hot paths of the simulator are small helpers called for every operation: kept inline. */
static inline acc_status_t push_ready(acc_sim_t *sim, uint32_t t)
{
    acc_status_t st;
    if (sim->th[t].in_ready)
        return ACC_OK;
    if (sim->nready == sim->ready_cap && (st = grow_ready(sim)) != ACC_OK)
        return st;
    sim->th[t].in_ready = 1;
    sim->ready[sim->nready++] = t;
    return ACC_OK;
}

acc_status_t sim_wake(acc_sim_t *sim, uint32_t t)
{
    sim_thread_t *th = &sim->th[t];
    if (th->state != SIM_TH_BLOCKED && th->state != SIM_TH_READY)
        return ACC_OK;
    th->state = SIM_TH_READY;
    return push_ready(sim, t);
}

/* ---- starting and completing operations ------------------------------------------------ */

static void begin(acc_sim_t *sim, uint32_t t)
{
    sim_thread_t *th = &sim->th[t];
    th->pending = 0;
    th->done_at = sim->now;
    th->tail = 0;
    th->in_conn = SIM_NONE;
}

/* After starting: run while flows are pending, or until its latency has passed. */
static acc_status_t settle(acc_sim_t *sim, uint32_t t, int *how)
{
    sim_thread_t *th = &sim->th[t];
    double at;
    if (th->pending > 0) {
        *how = START_RUN;
        return ACC_OK;
    }
    at = th->done_at > sim->now + th->tail ? th->done_at : sim->now + th->tail;
    if (at <= sim->now + eps_at(sim->now)) {
        *how = START_DONE;
        return ACC_OK;
    }
    *how = START_RUN;
    return sim_queue_push(&sim->q, at, SIM_EV_OPDONE, t, th->pc);
}

static acc_status_t consume(acc_sim_t *sim, uint32_t c)
{
    sim_conn_t *cn = &sim->conns[c];
    cn->q_head++;
    cn->head_pos = cn->head_pos + 1 == cn->slots ? 0 : cn->head_pos + 1;
    if (cn->send_waiting) {
        cn->send_waiting = 0;
        return sim_wake(sim, sim_thread_of(sim, cn->from, cn->lane));
    }
    return ACC_OK;
}

/* ---- waiter lists: a blocked thread is on at most one ------------------------------------ */

enum { REG_NONE = 0, REG_DEP, REG_CTR };

static uint32_t *list_head(acc_sim_t *sim, int kind, uint32_t id)
{
    return kind == REG_DEP ? &sim->th[id].dep_head : &sim->ctrs[id].waiters;
}

static void unregister(acc_sim_t *sim, uint32_t t)
{
    sim_thread_t *th = &sim->th[t];
    uint32_t *p;
    if (th->reg_kind == REG_NONE)
        return;
    for (p = list_head(sim, th->reg_kind, th->reg_id); *p != SIM_NONE; p = &sim->th[*p].next_wait)
        if (*p == t) {
            *p = th->next_wait;
            break;
        }
    th->reg_kind = REG_NONE;
}

static void register_on(acc_sim_t *sim, uint32_t t, int kind, uint32_t id)
{
    sim_thread_t *th = &sim->th[t];
    uint32_t *head;
    if (th->reg_kind == kind && th->reg_id == id)
        return;
    unregister(sim, t);
    head = list_head(sim, kind, id);
    th->next_wait = *head;
    *head = t;
    th->reg_kind = (uint8_t)kind;
    th->reg_id = id;
}

/* Wake every thread on a list for which `ready` holds, taking it off the list. */
static acc_status_t wake_list(acc_sim_t *sim, int kind, uint32_t id,
                              int (*ready)(const acc_sim_t *, uint32_t, uint32_t))
{
    uint32_t *p = list_head(sim, kind, id);
    acc_status_t st = ACC_OK;
    while (*p != SIM_NONE) {
        uint32_t w = *p;
        if (!ready(sim, w, id)) {
            p = &sim->th[w].next_wait;
            continue;
        }
        *p = sim->th[w].next_wait;
        sim->th[w].reg_kind = REG_NONE;
        if (st == ACC_OK)
            st = sim_wake(sim, w);
    }
    return st;
}

/* Is w's current operation no longer held back by thread id (its dependency) or counter id? */
static int dep_ready(const acc_sim_t *sim, uint32_t w, uint32_t id)
{
    const sim_thread_t *wt = &sim->th[w];
    const acc_op_t *op;
    if (wt->pc >= sim->plan->progs[w].nops)
        return 1;
    op = &sim->plan->progs[w].ops[wt->pc];
    return op->dep_lane < 0 || sim->th[id].pc > (uint32_t)op->dep_op ||
           sim->th[id].state == SIM_TH_DONE;
}

static int ctr_ready(const acc_sim_t *sim, uint32_t w, uint32_t id)
{
    const sim_thread_t *wt = &sim->th[w];
    const sim_op_t *op;
    if (wt->pc >= sim->plan->progs[w].nops)
        return 1;
    op = sim_op(sim, w, wt->pc);
    return op->code != ACC_OP_WAIT || sim->ctrs[id].arrived >= (uint32_t)op->peer2;
}

static acc_status_t start_op(acc_sim_t *sim, uint32_t t, const sim_op_t *op, int *how)
{
    int nl = sim->plan->nlanes, rank = (int)t / nl;
    uint32_t c, o, i;
    acc_status_t st = ACC_OK;
    sim_msg_t *m;
    double lat = 0;

    *how = START_DONE;
    switch ((acc_opcode_t)op->code) {
    case ACC_OP_SEND:
        if ((st = sim_out_conn(sim, t, op->peer, &c)) != ACC_OK)
            return st;
        if (sim_conn_full(&sim->conns[c])) {
            sim->conns[c].send_waiting = 1;
            *how = START_BLOCK;
            return ACC_OK;
        }
        begin(sim, t);
        if ((st = sim_send_msg(sim, t, c, op->bytes)) != ACC_OK)
            return st;
        return settle(sim, t, how);
    case ACC_OP_RECV:
    case ACC_OP_RECV_REDUCE_COPY:
        if ((st = sim_in_conn(sim, t, op->peer, &c)) != ACC_OK)
            return st;
        if (sim->conns[c].q_head == sim->conns[c].q_tail ||
            !sim_msg(sim, c, sim->conns[c].head_pos)->arrived) {
            sim->conns[c].recv_waiting = 1;
            *how = START_BLOCK;
            return ACC_OK;
        }
        return consume(sim, c);
    case ACC_OP_RECV_COPY_SEND:
    case ACC_OP_RECV_REDUCE_SEND:
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        if ((st = sim_in_conn(sim, t, op->peer, &c)) != ACC_OK)
            return st;
        m = sim->conns[c].q_head == sim->conns[c].q_tail ? NULL
                                                         : sim_msg(sim, c, sim->conns[c].head_pos);
        if (!m || (!m->arrived && m->head_at > sim->now + eps_at(sim->now))) {
            sim->conns[c].recv_waiting = 1;
            *how = START_BLOCK;
            /* The head's time is known once the flow has a rate (sim_on_rate wakes then); a
             * message of one step arrives whole at its head, and its arrival wakes. */
            return m && isfinite(m->head_at) && m->bytes > sim->slice
                       ? sim_queue_push(&sim->q, m->head_at, SIM_EV_WAKE, t, 0)
                       : ACC_OK;
        }
        if ((st = sim_out_conn(sim, t, op->peer2, &o)) != ACC_OK)
            return st;
        if (sim_conn_full(&sim->conns[o])) {
            sim->conns[o].send_waiting = 1;
            *how = START_BLOCK;
            return ACC_OK;
        }
        begin(sim, t);
        sim->th[t].in_conn = c;
        m = sim_msg(sim, c, sim->conns[c].head_pos); /* creating o may have moved the rings */
        if (!m->arrived) {
            m->consumer = t;
            sim->th[t].pending++;
        }
        st = sim_send_msg(sim, t, o, op->bytes);
        return st != ACC_OK ? st : settle(sim, t, how);
    case ACC_OP_COPY:
    case ACC_OP_REDUCE:
        begin(sim, t);
        st = sim_local_flow(sim, t, rank, op->bytes, op->code == ACC_OP_COPY ? 2.0 : 3.0,
                            sim->lane_cap);
        return st != ACC_OK ? st : settle(sim, t, how);
    case ACC_OP_PUT:
        begin(sim, t);
        st = sim_peer_flow(sim, t, rank, op->peer, op->bytes, sim->lane_cap, 1.0, &lat);
        sim->th[t].tail = lat;
        return st != ACC_OK ? st : settle(sim, t, how);
    case ACC_OP_GET:
        begin(sim, t);
        st = sim_peer_flow(sim, t, op->peer, rank, op->bytes, sim->lane_cap, 1.0, &lat);
        sim->th[t].tail = lat * sim->peer_trips;
        return st != ACC_OK ? st : settle(sim, t, how);
    case ACC_OP_REDUCE_PEERS: {
        const acc_op_t *full = &sim->plan->progs[t].ops[sim->th[t].pc];
        const uint32_t *peers = sim->plan->peer_pool + full->peers_off;
        double bytes = op->bytes, cap, w_local = 1.0, worst = 0;
        uint32_t remote = 0;
        for (i = 0; i < full->npeers; i++) {
            if ((int)peers[i] == rank)
                w_local += 1.0; /* its own contribution is read locally */
            else
                remote++;
        }
        /* The lane's rate is shared by its loads: one thread block issues all of them. */
        cap = sim->lane_cap / (double)(remote + 1);
        begin(sim, t);
        for (i = 0; i < full->npeers && st == ACC_OK; i++) {
            if ((int)peers[i] == rank)
                continue;
            st = sim_peer_flow(sim, t, (int)peers[i], rank, bytes, cap, 0.0, &lat);
            if (lat > worst)
                worst = lat;
        }
        if (st == ACC_OK)
            st = sim_local_flow(sim, t, rank, bytes, w_local, cap);
        sim->th[t].tail = remote ? worst * sim->peer_trips : 0.0;
        return st != ACC_OK ? st : settle(sim, t, how);
    }
    case ACC_OP_SIGNAL: {
        sim_path_t path;
        if ((st = sim_counter(sim, rank, op->peer, op->slot, &c)) != ACC_OK)
            return st;
        if (op->peer != rank) {
            if ((st = sim_path(sim, rank, op->peer, (int)(t % (uint32_t)sim->plan->nlanes),
                               &path)) != ACC_OK)
                return st;
            lat = sim_peer_lat_us(sim, path.cls) + path.lat_net;
        }
        return sim_queue_push(&sim->q, sim->now + lat, SIM_EV_SIGNAL, c, 0);
    }
    case ACC_OP_WAIT:
        if ((st = sim_counter(sim, op->peer, rank, op->slot, &c)) != ACC_OK)
            return st;
        if (sim->ctrs[c].arrived >= (uint32_t)op->peer2) {
            unregister(sim, t);
            return ACC_OK;
        }
        register_on(sim, t, REG_CTR, c);
        *how = START_BLOCK;
        return ACC_OK;
    default: /* NOP */
        return ACC_OK;
    }
}

static acc_status_t complete(acc_sim_t *sim, uint32_t t)
{
    sim_thread_t *th = &sim->th[t];
    acc_status_t st = ACC_OK;
    if (th->in_conn != SIM_NONE) {
        uint32_t c = th->in_conn;
        th->in_conn = SIM_NONE;
        st = consume(sim, c);
    }
    if (sim->trace)
        sim->trace[2 * (sim->trace_off[t] + th->pc) + 1] = sim->now;
    th->pc++;
    th->state = SIM_TH_READY;
    /* The operation after the next one is read when this lane comes back, a whole step later:
     * fetch its line now, while it is far away in memory. */
    if (sim->ops_rows && th->pc + 1 < sim->plan->progs[t].nops)
        __builtin_prefetch(sim_op(sim, t, th->pc + 1));

    if (st == ACC_OK && th->dep_head != SIM_NONE)
        st = wake_list(sim, REG_DEP, t, dep_ready);
    return st;
}

acc_status_t sim_thread_run(acc_sim_t *sim, uint32_t t)
{
    int nl = sim->plan->nlanes;
    acc_status_t st;

    sim->th[t].in_ready = 0;
    for (;;) {
        sim_thread_t *th = &sim->th[t];
        uint32_t nops = sim->plan->progs[t].nops;
        const sim_op_t *op;
        int how;

        if (th->state == SIM_TH_RUNNING || th->state == SIM_TH_DONE)
            return ACC_OK;
        if (th->pc >= nops) {
            th->state = SIM_TH_DONE;
            th->finish = sim->now;
            sim->threads_done++;
            return th->dep_head != SIM_NONE ? wake_list(sim, REG_DEP, t, dep_ready) : ACC_OK;
        }
        op = sim_op(sim, t, th->pc);
        if (op->dep) {
            const acc_op_t *full = &sim->plan->progs[t].ops[th->pc];
            uint32_t d = (uint32_t)((int)t / nl * nl + full->dep_lane);
            if (sim->th[d].pc <= (uint32_t)full->dep_op) {
                register_on(sim, t, REG_DEP, d);
                th->state = SIM_TH_BLOCKED;
                return ACC_OK;
            }
            if (th->reg_kind == REG_DEP)
                unregister(sim, t);
        }
        if (sim->trace) /* a retried start overwrites: the time it really started */
            sim->trace[2 * (sim->trace_off[t] + th->pc)] = sim->now;
        if ((st = start_op(sim, t, op, &how)) != ACC_OK)
            return acc_error_prefix(st, "rank %d lane %d op %u (%s): ", (int)t / nl, (int)t % nl,
                                    sim->th[t].pc, acc_op_name((acc_opcode_t)op->code));
        th = &sim->th[t];
        if (how == START_BLOCK) {
            th->state = SIM_TH_BLOCKED;
            return ACC_OK;
        }
        if (how == START_RUN) {
            th->state = SIM_TH_RUNNING;
            return ACC_OK;
        }
        if ((st = complete(sim, t)) != ACC_OK)
            return st;
    }
}

/* The running operation of t has nothing pending: complete it now, or when its latency has
 * passed. */
static acc_status_t drained(acc_sim_t *sim, uint32_t t)
{
    sim_thread_t *th = &sim->th[t];
    double at = th->done_at > sim->now + th->tail ? th->done_at : sim->now + th->tail;
    acc_status_t st;
    if (at > sim->now + eps_at(sim->now))
        return sim_queue_push(&sim->q, at, SIM_EV_OPDONE, t, th->pc);
    if ((st = complete(sim, t)) != ACC_OK)
        return st;
    return push_ready(sim, t);
}

acc_status_t sim_on_flow_done(acc_sim_t *sim, uint32_t f)
{
    sim_flow_t *fl = &sim->flows[f];
    uint32_t t = fl->thread, c = fl->conn, pos = fl->seq;
    int msg = fl->kind == SIM_FLOW_MSG;
    acc_status_t st = sim_flow_end(sim, f);

    if (st != ACC_OK)
        return st;
    if (msg) {
        sim_msg_t *m = sim_msg(sim, c, pos);
        m->flow = SIM_NONE;
        m->arrive_at = sim->now + sim->conns[c].lat;
        if (m->head_at > m->arrive_at)
            m->head_at = m->arrive_at;
        if ((st = sim_queue_push(&sim->q, m->arrive_at, SIM_EV_MSG, c, pos)) != ACC_OK)
            return st;
    }
    if (--sim->th[t].pending == 0)
        return drained(sim, t);
    return ACC_OK;
}

acc_status_t sim_on_msg_arrived(acc_sim_t *sim, uint32_t c, uint32_t pos)
{
    sim_msg_t *m = sim_msg(sim, c, pos);
    sim_conn_t *cn = &sim->conns[c];
    acc_status_t st = ACC_OK;

    m->arrived = 1;
    if (m->consumer != SIM_NONE) {
        /* A forwarding operation finishes one step after its input is complete. */
        sim_thread_t *th = &sim->th[m->consumer];
        uint32_t t = m->consumer;
        double step = th->out_bytes < sim->slice ? th->out_bytes : sim->slice;
        double at = sim->now + (th->out_rate > 0 ? step / th->out_rate : 0.0);
        m->consumer = SIM_NONE;
        if (at > th->done_at)
            th->done_at = at;
        if (--th->pending == 0)
            st = drained(sim, t);
    }
    if (st == ACC_OK && cn->recv_waiting) {
        cn->recv_waiting = 0;
        st = sim_wake(sim, sim_thread_of(sim, cn->to, cn->lane));
    }
    return st;
}

acc_status_t sim_on_op_done(acc_sim_t *sim, uint32_t t, uint32_t op)
{
    sim_thread_t *th = &sim->th[t];
    acc_status_t st;
    if (th->state != SIM_TH_RUNNING || th->pc != op || th->pending)
        return ACC_OK;
    if ((st = complete(sim, t)) != ACC_OK)
        return st;
    return push_ready(sim, t);
}

acc_status_t sim_on_signal(acc_sim_t *sim, uint32_t ctr)
{
    sim->ctrs[ctr].arrived++;
    return wake_list(sim, REG_CTR, ctr, ctr_ready);
}

acc_status_t sim_on_rate(acc_sim_t *sim, uint32_t f, int first)
{
    sim_flow_t *fl = &sim->flows[f];
    sim_msg_t *m;
    sim_conn_t *cn;
    double step;

    if (fl->kind != SIM_FLOW_MSG)
        return ACC_OK;
    sim->th[fl->thread].out_rate = fl->rate;
    if (!first)
        return ACC_OK;
    m = sim_msg(sim, fl->conn, fl->seq);
    cn = &sim->conns[fl->conn];
    step = m->bytes < sim->slice ? m->bytes : sim->slice;
    /* The first step lands one latency after it has crossed at the flow's first rate; later
     * rate changes move the message's end, not its head. */
    m->head_at = sim->now + cn->lat + step / fl->rate;
    /* A message of one step arrives whole at its head: its arrival wakes the receiver. */
    if (cn->recv_waiting && m->bytes > sim->slice)
        return sim_queue_push(&sim->q, m->head_at, SIM_EV_WAKE,
                              sim_thread_of(sim, cn->to, cn->lane), 0);
    return ACC_OK;
}
