/*
 * The simulator's connections and counters, and the flows an operation starts over them: which
 * resources a message, a peer-memory access or a local copy uses, and with which weights.
 */
#include "sim_internal.h"

#include <math.h>
#include <string.h>

static acc_status_t nomem(void)
{
    return acc_error_set(ACC_ERR_NOMEM, "out of memory simulating a plan");
}

/* ---- connections and counters ---------------------------------------------------------- */

static acc_status_t new_conn(acc_sim_t *sim, int from, int to, int lane, uint32_t *out)
{
    uint32_t slots = (uint32_t)(sim->plan->slots > 0 ? sim->plan->slots : 1), c, i;
    sim_path_t path;
    sim_conn_t *cn;
    acc_status_t st;
    void *p;

    if ((st = sim_path(sim, from, to, lane, &path)) != ACC_OK)
        return st;
    p = sim->conns;
    {
        size_t cap = sim->conns_cap;
        if (acc_array_reserve(&p, &cap, (size_t)sim->nconns + 1, sizeof(sim_conn_t)) != ACC_OK)
            return nomem();
        sim->conns = p;
        sim->conns_cap = (uint32_t)cap;
        p = sim->msgs;
        cap = sim->msgs_cap;
        if (acc_array_reserve(&p, &cap, (size_t)sim->nmsgs + slots, sizeof(sim_msg_t)) != ACC_OK)
            return nomem();
        sim->msgs = p;
        sim->msgs_cap = (uint32_t)cap;
        p = sim->conn_res;
        cap = sim->conn_res_cap;
        if (acc_array_reserve(&p, &cap, (size_t)sim->nconn_res + path.n, sizeof(uint32_t)) !=
            ACC_OK)
            return nomem();
        sim->conn_res = p;
        sim->conn_res_cap = (uint32_t)cap;
    }
    c = sim->nconns++;
    cn = &sim->conns[c];
    memset(cn, 0, sizeof(*cn));
    cn->from = from;
    cn->to = to;
    cn->lane = lane;
    cn->msg_off = sim->nmsgs;
    cn->slots = slots;
    sim->nmsgs += slots;
    cn->res_off = sim->nconn_res;
    for (i = 0; i < path.n; i++)
        if (sim->res_on[path.res[i]])
            sim->conn_res[sim->nconn_res++] = path.res[i];
    cn->nres = sim->nconn_res - cn->res_off;
    cn->lat = sim_msg_latency_us(sim, path.cls) + path.lat_net;
    *out = c;
    return sim_map_put(
        &sim->conn_map,
        ((uint64_t)(uint32_t)from << 40) | ((uint64_t)(uint32_t)to << 16) | (uint32_t)lane, c);
}

/* On a quotient, an edge (from, to) stands for its translate that ends at a simulated rank:
 * the receiver's, so that a send from any rank and the receive at `to` meet on one.  Moved by
 * XOR (plan->period_xor), the translate by shift is (from ^ shift, to ^ shift). */
static void edge_rep(const acc_sim_t *sim, int *from, int *to)
{
    int shift;
    if (!sim->period)
        return;
    shift = *to - *to % sim->period;
    *to -= shift;
    if (sim->plan->period_xor)
        *from ^= shift;
    else
        *from = (int)(((int64_t)*from - shift + sim->nranks) % sim->nranks);
}

static acc_status_t conn_of(acc_sim_t *sim, int from, int to, int lane, uint32_t *out)
{
    uint64_t key;
    edge_rep(sim, &from, &to);
    key = ((uint64_t)(uint32_t)from << 40) | ((uint64_t)(uint32_t)to << 16) | (uint32_t)lane;
    uint32_t c = sim_map_get(&sim->conn_map, key);
    if (c != SIM_NONE) {
        *out = c;
        return ACC_OK;
    }
    return new_conn(sim, from, to, lane, out);
}

acc_status_t sim_out_conn_slow(acc_sim_t *sim, uint32_t t, int peer, uint32_t *out)
{
    int nl = sim->plan->nlanes;
    acc_status_t st = conn_of(sim, (int)t / nl, peer, (int)t % nl, out);
    if (st == ACC_OK) {
        sim_thread_t *th = &sim->th[t];
        th->cout_peer[th->cout_next] = (uint32_t)peer;
        th->cout_conn[th->cout_next] = *out;
        th->cout_next = (uint8_t)((th->cout_next + 1) % SIM_CONN_CACHE);
    }
    return st;
}

acc_status_t sim_in_conn_slow(acc_sim_t *sim, uint32_t t, int peer, uint32_t *out)
{
    int nl = sim->plan->nlanes;
    acc_status_t st = conn_of(sim, peer, (int)t / nl, (int)t % nl, out);
    if (st == ACC_OK) {
        sim_thread_t *th = &sim->th[t];
        th->cin_peer[th->cin_next] = (uint32_t)peer;
        th->cin_conn[th->cin_next] = *out;
        th->cin_next = (uint8_t)((th->cin_next + 1) % SIM_CONN_CACHE);
    }
    return st;
}

acc_status_t sim_counter(acc_sim_t *sim, int from, int to, uint32_t slot, uint32_t *out)
{
    uint64_t key;
    uint32_t c;
    edge_rep(sim, &from, &to);
    key = (((uint64_t)(uint32_t)from * (uint32_t)sim->nranks + (uint32_t)to) << 16) | slot;
    c = sim_map_get(&sim->ctr_map, key);
    if (c == SIM_NONE) {
        size_t cap = sim->ctrs_cap;
        void *p = sim->ctrs;
        if (acc_array_reserve(&p, &cap, (size_t)sim->nctrs + 1, sizeof(sim_counter_t)) != ACC_OK)
            return nomem();
        sim->ctrs = p;
        sim->ctrs_cap = (uint32_t)cap;
        c = sim->nctrs++;
        sim->ctrs[c].arrived = 0;
        sim->ctrs[c].waiters = SIM_NONE;
        if (sim_map_put(&sim->ctr_map, key, c) != ACC_OK)
            return nomem();
    }
    *out = c;
    return ACC_OK;
}

/* ---- flows of operations ----------------------------------------------------------------- */

typedef struct {
    uint32_t n;
    uint32_t res[SIM_FLOW_MAXRES];
    float w[SIM_FLOW_MAXRES];
} resv_t;

static void add_res(resv_t *v, uint32_t r, double w)
{
    uint32_t i;
    /* A resource named twice (both ends' memory, when the ranks share one device) carries
     * both weights. */
    for (i = 0; i < v->n; i++)
        if (v->res[i] == r) {
            v->w[i] += (float)w;
            return;
        }
    if (v->n < SIM_FLOW_MAXRES) {
        v->res[v->n] = r;
        v->w[v->n++] = (float)w;
    }
}

/* A resource joins a flow only where it could ever saturate in this call (sim_prog.c): on most
 * plans most cannot, and a flow on no resource costs the simulator next to nothing. */
static void add_mem(const acc_sim_t *sim, resv_t *v, int rank, double w)
{
    if (w > 0 && sim->res_on[sim_mem_res(sim, rank)])
        add_res(v, sim_mem_res(sim, rank), w);
}

static void add_ll(const acc_sim_t *sim, resv_t *v, int rank)
{
    if (sim->proto == ACC_PROTO_LL && sim->res_on[sim_ll_res(sim, rank)])
        add_res(v, sim_ll_res(sim, rank), 1.0);
}

/* Start a flow for thread t's operation; message flows name their connection and position. */
static acc_status_t start_flow(acc_sim_t *sim, uint32_t t, const resv_t *v, double bytes,
                               double cap, uint32_t conn, uint32_t pos)
{
    uint32_t f;
    acc_status_t st = sim_flow_start(sim, v->res, v->w, v->n, bytes, cap, &f);
    if (st != ACC_OK)
        return st;
    sim->flows[f].thread = t;
    sim->th[t].pending++;
    if (conn != SIM_NONE) {
        sim->flows[f].kind = SIM_FLOW_MSG;
        sim->flows[f].conn = conn;
        sim->flows[f].seq = pos;
        sim_msg(sim, conn, pos)->flow = f;
    }
    return sim_flow_commit(sim, f);
}

/* Send `bytes` on connection c from thread t: queue the message and start its flow. */
acc_status_t sim_send_msg(acc_sim_t *sim, uint32_t t, uint32_t c, double bytes)
{
    sim_conn_t *cn = &sim->conns[c];
    uint32_t pos, i;
    sim_msg_t *m;
    resv_t v;

    /* An empty connection starts its ring over: a lane pair exchanging one message at a time
     * then keeps using one slot, one cache line. */
    if (cn->q_head == cn->q_tail)
        cn->head_pos = cn->tail_pos = 0;
    pos = cn->tail_pos;
    m = sim_msg(sim, c, pos);

    m->bytes = bytes;
    m->head_at = m->arrive_at = INFINITY;
    m->flow = SIM_NONE;
    m->arrived = 0;
    m->consumer = SIM_NONE;
    sim->th[t].out_bytes = bytes;
    if (bytes <= 0) {
        m->head_at = m->arrive_at = sim->now + cn->lat;
        cn->q_tail++;
        cn->tail_pos = pos + 1 == cn->slots ? 0 : pos + 1;
        return sim_queue_push(&sim->q, m->arrive_at, SIM_EV_MSG, c, pos);
    }
    cn->q_tail++;
    cn->tail_pos = pos + 1 == cn->slots ? 0 : pos + 1;
    cn->bytes += bytes;
    v.n = 0;
    for (i = 0; i < cn->nres; i++)
        add_res(&v, sim->conn_res[cn->res_off + i], 1.0);
    add_mem(sim, &v, cn->from, sim_mem_weight_send());
    add_mem(sim, &v, cn->to, sim_mem_weight_recv(sim->reduces));
    add_ll(sim, &v, cn->from);
    return start_flow(sim, t, &v, bytes, sim->lane_cap, c, pos);
}

/* A flow of `bytes` from rank src to rank dst over their route (peer memory), with memory
 * traffic at both ends and the peer latency class returned in *lat. */
acc_status_t sim_peer_flow(acc_sim_t *sim, uint32_t t, int src, int dst, double bytes, double cap,
                           double w_dst, double *lat)
{
    sim_path_t path;
    resv_t v;
    uint32_t i;
    acc_status_t st;

    if ((st = sim_path(sim, src, dst, (int)(t % (uint32_t)sim->plan->nlanes), &path)) != ACC_OK)
        return st;
    *lat = sim_peer_lat_us(sim, path.cls) + path.lat_net;
    if (bytes <= 0)
        return ACC_OK;
    v.n = 0;
    for (i = 0; i < path.n; i++) {
        sim->res[path.res[i]].carried += bytes;
        if (sim->res_on[path.res[i]])
            add_res(&v, path.res[i], 1.0);
    }
    add_mem(sim, &v, src, 1.0);
    add_mem(sim, &v, dst, w_dst);
    add_ll(sim, &v, src);
    return start_flow(sim, t, &v, bytes, cap, SIM_NONE, 0);
}

acc_status_t sim_local_flow(acc_sim_t *sim, uint32_t t, int rank, double bytes, double w,
                            double cap)
{
    resv_t v;
    if (bytes <= 0)
        return ACC_OK;
    v.n = 0;
    add_mem(sim, &v, rank, w);
    return start_flow(sim, t, &v, bytes, cap, SIM_NONE, 0);
}
