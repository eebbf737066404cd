/*
 * acc's plan simulator: the public API (acc_cost.h) and the event loop.
 *
 * The loop takes the earliest batch of events (every event within a nanosecond-scale window of
 * the earliest, so that symmetric steps are one batch), lets them finish flows, deliver messages
 * and signals and complete operations, runs every thread that became ready as far as it goes,
 * and then recomputes fair rates once for everything the batch started or disturbed
 * (sim_rates.c).  A call ends when every lane has run its last operation; its time is the last
 * lane's end plus the call's fixed cost (launch and protocol setup, sim_constants.c).
 */
#include "sim_internal.h"

#include <math.h>
#include <string.h>

/* ---- a small open-addressing map ------------------------------------------------------- */

static uint32_t slot_of(uint64_t key, uint32_t cap)
{
    key ^= key >> 31;
    key *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(key >> 32) & (cap - 1);
}

uint32_t sim_map_get(const sim_map_t *m, uint64_t key)
{
    uint32_t i;
    if (!m->cap)
        return SIM_NONE;
    for (i = slot_of(key, m->cap); m->slots[i].val != SIM_NONE; i = (i + 1) & (m->cap - 1))
        if (m->slots[i].key == key)
            return m->slots[i].val;
    return SIM_NONE;
}

static void map_empty(sim_map_slot_t *slots, uint32_t cap)
{
    for (uint32_t i = 0; i < cap; i++)
        slots[i].val = SIM_NONE;
}

static acc_status_t map_grow(sim_map_t *m)
{
    uint32_t cap = m->cap ? m->cap * 2 : 1024, i;
    sim_map_slot_t *slots = acc_mem_alloc((size_t)cap * sizeof(sim_map_slot_t));

    if (!slots)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the simulator's maps");
    map_empty(slots, cap);
    for (i = 0; i < m->cap; i++) {
        uint32_t j;
        if (m->slots[i].val == SIM_NONE)
            continue;
        for (j = slot_of(m->slots[i].key, cap); slots[j].val != SIM_NONE; j = (j + 1) & (cap - 1))
            ;
        slots[j] = m->slots[i];
    }
    acc_mem_free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return ACC_OK;
}

acc_status_t sim_map_put(sim_map_t *m, uint64_t key, uint32_t val)
{
    uint32_t i;
    acc_status_t st;
    if ((m->n + 1) * 2 > m->cap && (st = map_grow(m)) != ACC_OK)
        return st;
    for (i = slot_of(key, m->cap); m->slots[i].val != SIM_NONE; i = (i + 1) & (m->cap - 1))
        if (m->slots[i].key == key) {
            m->slots[i].val = val;
            return ACC_OK;
        }
    m->slots[i].key = key;
    m->slots[i].val = val;
    m->n++;
    return ACC_OK;
}

void sim_map_clear(sim_map_t *m)
{
    map_empty(m->slots, m->cap);
    m->n = 0;
}

void sim_map_free(sim_map_t *m)
{
    acc_mem_free(m->slots);
    memset(m, 0, sizeof(*m));
}

/* ---- life cycle ----------------------------------------------------------------------- */

double sim_busbw_factor(acc_coll_t coll, int nranks)
{
    double n = nranks;
    switch (coll) {
    case ACC_COLL_ALLREDUCE:
        return n > 1 ? 2.0 * (n - 1) / n : 0.0;
    case ACC_COLL_ALLGATHER:
    case ACC_COLL_REDUCE_SCATTER:
    case ACC_COLL_ALLTOALL:
        return n > 1 ? (n - 1) / n : 0.0;
    default:
        return 1.0;
    }
}

acc_status_t acc_sim_create(const acc_topo_t *topo, acc_sim_t **out)
{
    acc_sim_t *sim;
    acc_status_t st;
    int g, i;

    if (!out)
        return acc_error_set(ACC_ERR_INVALID, "acc_sim_create: no place for the result");
    *out = NULL;
    if (!topo || acc_topo_ranks(topo) < 1)
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_sim_create: a finalized topology with GPUs is needed");
    if (!(sim = acc_mem_calloc(1, sizeof(*sim))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory creating a simulator");
    sim->topo = topo;
    sim->nodes = acc_topo_nodes(topo);
    sim->gpn = acc_topo_gpus_per_node(topo);
    sim->nranks = acc_topo_ranks(topo);
    sim->nlinks = acc_topo_link_count(topo);
    sim->nverts = acc_topo_vertex_count(topo);
    sim->flow_free = SIM_NONE;
    sim->min_sm = 0;
    for (g = 0; g < sim->gpn; g++) {
        const acc_topo_vertex_t *v = acc_topo_vertex(topo, acc_topo_find(topo, ACC_VTX_GPU, g));
        if (!v) {
            st = acc_error_set(ACC_ERR_TOPO, "simulator: GPU%d is missing from the topology", g);
            goto out;
        }
        if (sim->min_sm == 0 || (v->sm > 0 && v->sm < sim->min_sm))
            sim->min_sm = v->sm;
    }
    /* A link or NIC without bandwidth would hold its transfers for ever. */
    for (i = 0; i < sim->nlinks; i++) {
        const acc_topo_link_t *l = acc_topo_link(topo, i);
        if (!(l->bw > 0)) {
            st = acc_error_set(ACC_ERR_TOPO, "simulator: link %s -> %s has no bandwidth",
                               acc_topo_vertex(topo, l->from)->name,
                               acc_topo_vertex(topo, l->to)->name);
            goto out;
        }
    }
    for (i = 0; i < sim->nverts; i++) {
        const acc_topo_vertex_t *v = acc_topo_vertex(topo, i);
        if (v->kind == ACC_VTX_NIC && sim->nodes > 1 && !(v->speed_gbps > 0)) {
            st = acc_error_set(ACC_ERR_TOPO, "simulator: %s has no speed", v->name);
            goto out;
        }
    }
    st = sim_routes_build(sim);
out:
    if (st != ACC_OK) {
        acc_sim_destroy(sim);
        return st;
    }
    *out = sim;
    return ACC_OK;
}

void acc_sim_destroy(acc_sim_t *sim)
{
    int i;
    if (!sim)
        return;
    sim_routes_free(sim);
    sim_queue_free(&sim->q);
    acc_mem_free(sim->th);
    acc_mem_free(sim->ready);
    acc_mem_free(sim->flows);
    acc_mem_free(sim->fresh);
    acc_mem_free(sim->firsts);
    acc_mem_free(sim->dirty_res);
    acc_mem_free(sim->work);
    acc_mem_free(sim->rates);
    acc_mem_free(sim->unf);
    acc_mem_free(sim->comp_res);
    acc_mem_free(sim->conns);
    acc_mem_free(sim->msgs);
    acc_mem_free(sim->conn_res);
    acc_mem_free(sim->ctrs);
    for (i = 0; i < ACC_BUF_COUNT; i++)
        acc_mem_free(sim->bounds[i]);
    acc_mem_free(sim->ops);
    acc_mem_free(sim->op_off);

    sim_map_free(&sim->conn_map);
    sim_map_free(&sim->ctr_map);
    acc_mem_free(sim);
}

/* ---- one call -------------------------------------------------------------------------- */

static acc_status_t check_args(const acc_sim_t *sim, const acc_plan_t *plan, acc_proto_t proto,
                               acc_dtype_t dt, const acc_sim_result_t *out)
{
    if (!sim || !plan || !out)
        return acc_error_set(ACC_ERR_INVALID, "acc_sim_plan: simulator, plan and result needed");
    if (plan->nranks != sim->nranks)
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_sim_plan: the plan is for %d ranks, the topology has %d "
                             "(%d nodes x %d GPUs); generate the plan on this topology",
                             plan->nranks, sim->nranks, sim->nodes, sim->gpn);
    if (plan->nlanes < 1 || !plan->progs)
        return acc_error_set(ACC_ERR_INVALID, "acc_sim_plan: the plan has no lanes");
    if (plan->view)
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_sim_plan: rank %d's view of %s holds one rank's programs; "
                             "simulate the whole plan or its quotient",
                             plan->view->rank, plan->algo);
    /* A quotient moves by whole nodes: the cluster is the same moved that way (by XOR too:
     * nodes are alike and each has its own share of the fabric). */
    if (plan->period &&
        (plan->period < 0 || plan->period % sim->gpn != 0 || plan->nranks % plan->period != 0 ||
         (plan->period_xor &&
          ((plan->period & (plan->period - 1)) || (plan->nranks & (plan->nranks - 1))))))
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_sim_plan: %s is a quotient by %d ranks, which is not a whole "
                             "number of this topology's nodes of %d GPUs dividing its %d ranks",
                             plan->algo, plan->period, sim->gpn, plan->nranks);
    if ((unsigned)proto >= ACC_PROTO_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "acc_sim_plan: unknown protocol %d", (int)proto);
    if ((unsigned)dt >= ACC_DT_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "acc_sim_plan: unknown element type %d", (int)dt);
    if ((unsigned)plan->coll >= ACC_COLL_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "acc_sim_plan: unknown collective %d",
                             (int)plan->coll);
    return ACC_OK;
}

/* Reset the per-call state and size the buffers for nbytes (NCCL's nBytes). */
static acc_status_t prepare(acc_sim_t *sim, const acc_plan_t *plan, acc_proto_t proto,
                            uint64_t nbytes, acc_dtype_t dt)
{
    uint32_t nth = (uint32_t)(plan->period ? plan->period : plan->nranks) * (uint32_t)plan->nlanes,
             t;
    size_t es = acc_dtype_size(dt);
    acc_status_t st;
    int b;
    uint64_t count;

    sim->plan = plan;
    sim->period = plan->period == plan->nranks ? 0 : plan->period;
    sim->proto = proto;
    sim->esize = (double)es;
    switch (plan->coll) {
    case ACC_COLL_ALLGATHER:
    case ACC_COLL_REDUCE_SCATTER:
    case ACC_COLL_ALLTOALL:
        count = nbytes / es / (uint64_t)plan->nranks;
        break;
    default:
        count = nbytes / es;
    }
    sim->elems[ACC_BUF_IN] = acc_plan_buf_elems(plan, ACC_BUF_IN, count);
    sim->elems[ACC_BUF_OUT] = acc_plan_buf_elems(plan, ACC_BUF_OUT, count);
    sim->nchunks[ACC_BUF_IN] = plan->in_chunks;
    sim->nchunks[ACC_BUF_OUT] = plan->out_chunks;
    sim->nchunks[ACC_BUF_SCRATCH] = plan->scratch_chunks;
    /* Scratch chunks are as large as output chunks (acc_plan.h). */
    sim->elems[ACC_BUF_SCRATCH] =
        plan->out_chunks
            ? (uint64_t)(((unsigned __int128)sim->elems[ACC_BUF_OUT] * plan->scratch_chunks) /
                         plan->out_chunks)
            : 0;
    for (b = 0; b < ACC_BUF_COUNT; b++) {
        uint32_t k = sim->nchunks[b], i;
        if (k + 1 > sim->bounds_cap[b]) {
            uint64_t *p = acc_mem_realloc_array(sim->bounds[b], (size_t)k + 1, sizeof(uint64_t));
            if (!p)
                return acc_error_set(ACC_ERR_NOMEM, "out of memory for %u chunk bounds", k + 1);
            sim->bounds[b] = p;
            sim->bounds_cap[b] = k + 1;
        }
        for (i = 0; i <= k; i++)
            sim->bounds[b][i] = k ? (uint64_t)(((unsigned __int128)i * sim->elems[b]) / k) : 0;
    }
    sim->lane_cap = sim_lane_cap_us(sim, proto);
    sim->slice = sim_slice_bytes(proto);
    sim->peer_trips = sim_peer_trips(sim);
    sim->reduces = acc_coll_reduces(plan->coll);
    sim->now = 0;
    sim->transfers = 0;
    sim->threads_done = 0;
    sim->nready = 0;
    sim->nconns = sim->nmsgs = sim->nconn_res = sim->nctrs = 0;
    sim_map_clear(&sim->conn_map);
    sim_map_clear(&sim->ctr_map);
    sim_queue_reset(&sim->q);
    sim_flows_reset(sim);
    sim_set_caps(sim, proto);
    if (nth > sim->th_cap) {
        sim_thread_t *th = acc_mem_realloc_array(sim->th, nth, sizeof(sim_thread_t));
        uint32_t *rd = th ? acc_mem_realloc_array(sim->ready, nth, sizeof(uint32_t)) : NULL;
        if (th)
            sim->th = th;
        if (!rd)
            return acc_error_set(ACC_ERR_NOMEM, "out of memory for %u simulated lanes", nth);
        sim->ready = rd;
        sim->th_cap = sim->ready_cap = nth;
    }
    sim->nth = nth;
    if ((st = sim_prog_build(sim)) != ACC_OK)
        return st;
    for (t = 0; t < nth; t++) {
        sim_thread_t *th = &sim->th[t];
        memset(th, 0, sizeof(*th));
        th->in_conn = SIM_NONE;
        th->next_wait = SIM_NONE;
        th->dep_head = SIM_NONE;
        memset(th->cin_peer, 0xff, sizeof(th->cin_peer));
        memset(th->cout_peer, 0xff, sizeof(th->cout_peer));
        th->in_ready = 1;
        sim->ready[sim->nready++] = t;
    }
    return ACC_OK;
}

static acc_status_t handle(acc_sim_t *sim, const sim_event_t *e)
{
    switch ((sim_ev_type_t)e->type) {
    case SIM_EV_FLOW:
        if (!sim->flows[e->a].active || sim->flows[e->a].version != e->b)
            return ACC_OK; /* its rate changed since: a later event stands for it */
        return sim_on_flow_done(sim, e->a);
    case SIM_EV_MSG:
        return sim_on_msg_arrived(sim, e->a, e->b);
    case SIM_EV_WAKE:
        return sim_wake(sim, e->a);
    case SIM_EV_OPDONE:
        return sim_on_op_done(sim, e->a, e->b);
    default:
        return sim_on_signal(sim, e->a);
    }
}

/* The first lane that cannot go on, for the message of a stalled plan. */
static acc_status_t stalled(const acc_sim_t *sim)
{
    uint32_t t;
    int nl = sim->plan->nlanes;
    for (t = 0; t < sim->nth; t++) {
        const sim_thread_t *th = &sim->th[t];
        if (th->state == SIM_TH_DONE)
            continue;
        return acc_error_set(ACC_ERR_VERIFY,
                             "acc_sim_plan: the plan stalls at %.3f us: rank %d lane %d op %u "
                             "(%s) can never start; simulate only plans that pass "
                             "acc_plan_verify",
                             sim->now, (int)t / nl, (int)t % nl, th->pc,
                             th->pc < sim->plan->progs[t].nops
                                 ? acc_op_name((acc_opcode_t)sim_op(sim, t, th->pc)->code)
                                 : "end");
    }
    return acc_error_set(ACC_ERR_INTERNAL, "acc_sim_plan: the event queue ran dry");
}

static acc_status_t run(acc_sim_t *sim)
{
    acc_status_t st;
    for (;;) {
        uint32_t i, b;
        double t, until;
        for (i = 0; i < sim->nready; i++) /* threads made ready while running join the end */
            if ((st = sim_thread_run(sim, sim->ready[i])) != ACC_OK)
                return st;
        sim->nready = 0;
        if ((st = sim_rates_update(sim)) != ACC_OK)
            return st;
        if (sim->threads_done == sim->nth)
            return ACC_OK;
        t = sim_queue_next_time(&sim->q);
        if (t < 0)
            return stalled(sim);
        if (t > sim->now)
            sim->now = t;
        until = sim->now + 1e-9 * (sim->now > 1.0 ? sim->now : 1.0);
        while (sim_queue_next_time(&sim->q) >= 0 && sim_queue_next_time(&sim->q) <= until) {
            uint32_t e;
            b = sim_queue_pop(&sim->q, &t);
            for (e = sim->q.bk[b].head; e != SIM_NONE; e = sim->q.ev[e].next) {
                sim_event_t ev = sim->q.ev[e];
                if ((st = handle(sim, &ev)) != ACC_OK)
                    return st;
            }
            sim_queue_release(&sim->q, b);
        }
    }
}

static acc_status_t simulate(acc_sim_t *sim, const acc_plan_t *plan, acc_proto_t proto,
                             uint64_t nbytes, acc_dtype_t dt, acc_sim_result_t *out)
{
    acc_status_t st;
    double end = 0, util = 0, busy;
    uint32_t i;

    if ((st = check_args(sim, plan, proto, dt, out)) != ACC_OK)
        return st;
    memset(out, 0, sizeof(*out));
    if ((st = prepare(sim, plan, proto, nbytes, dt)) != ACC_OK || (st = run(sim)) != ACC_OK)
        return st;
    for (i = 0; i < sim->nth; i++)
        if (sim->th[i].finish > end)
            end = sim->th[i].finish;
    out->time_us = end + sim_overhead_us(sim, proto);
    out->algbw = out->time_us > 0 ? (double)nbytes / out->time_us / 1e3 : 0.0;
    out->busbw = out->algbw * sim_busbw_factor(plan->coll, plan->nranks);
    /* Bytes of messages are counted per connection; spread them over their routes. */
    for (i = 0; i < sim->nconns; i++) {
        sim_path_t path;
        uint32_t k;
        if (sim->conns[i].bytes <= 0 || sim_path(sim, sim->conns[i].from, sim->conns[i].to,
                                                 sim->conns[i].lane, &path) != ACC_OK)
            continue;
        for (k = 0; k < path.n; k++)
            sim->res[path.res[k]].carried += sim->conns[i].bytes;
    }
    busy = out->time_us;
    for (i = 0; i < sim->nres && busy > 0; i++) {
        const sim_res_t *r = &sim->res[i];
        double u;
        if (r->kind != SIM_RES_LINK && r->kind != SIM_RES_NIC && r->kind != SIM_RES_FABRIC)
            continue;
        u = r->carried / (r->cap * busy);
        if (u > util)
            util = u;
    }
    out->link_util = util > 1.0 ? 1.0 : util;
    /* A quotient's transfers happen at every translate of its ranks. */
    out->transfers = sim->transfers * (uint64_t)(sim->period ? sim->nranks / sim->period : 1);
    return ACC_OK;
}

acc_status_t acc_sim_plan(acc_sim_t *sim, const acc_plan_t *plan, uint64_t nbytes, acc_dtype_t dt,
                          acc_sim_result_t *out)
{
    if (sim)
        sim->trace = NULL;
    return simulate(sim, plan, plan ? plan->proto : ACC_PROTO_SIMPLE, nbytes, dt, out);
}

acc_status_t acc_sim_plan_proto(acc_sim_t *sim, const acc_plan_t *plan, acc_proto_t proto,
                                uint64_t nbytes, acc_dtype_t dt, acc_sim_result_t *out)
{
    if (sim)
        sim->trace = NULL;
    return simulate(sim, plan, proto, nbytes, dt, out);
}

acc_status_t acc_sim_plan_trace(acc_sim_t *sim, const acc_plan_t *plan, uint64_t nbytes,
                                acc_dtype_t dt, acc_sim_result_t *out, double *times)
{
    size_t nth, t;
    acc_status_t st;

    if (!times)
        return acc_error_set(ACC_ERR_INVALID, "acc_sim_plan_trace: no array for the times");
    if ((st = check_args(sim, plan, plan ? plan->proto : ACC_PROTO_SIMPLE, dt, out)) != ACC_OK)
        return st;
    if (plan->period)
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_sim_plan_trace: %s lists %d of its %d ranks' programs (a "
                             "quotient); the times of every rank need the whole plan",
                             plan->algo, plan->period, plan->nranks);
    nth = (size_t)plan->nranks * (size_t)plan->nlanes;
    if (!(sim->trace_off = acc_mem_calloc(nth + 1, sizeof(uint64_t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the trace of %zu lanes", nth);
    for (t = 0; t < nth; t++)
        sim->trace_off[t + 1] = sim->trace_off[t] + plan->progs[t].nops;
    sim->trace = times;
    st = simulate(sim, plan, plan->proto, nbytes, dt, out);
    sim->trace = NULL;
    acc_mem_free(sim->trace_off);
    sim->trace_off = NULL;
    return st;
}
