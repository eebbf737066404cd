/*
 * compiler/sim_internal.h - what the files of acc's plan simulator share (sim*.c, bound.c) and
 * nothing else includes except the simulator's own tests.
 *
 * The simulator in one paragraph.  Each lane of each rank is a thread that runs its operations
 * in order; an operation that moves data starts one or more *flows*: a number of bytes over a
 * list of *resources* (directed links of the node graph, a NIC's egress or ingress, a node's
 * share of an oversubscribed fabric, a GPU's memory, a GPU's LL engine), each resource used with
 * a weight (bytes of that resource per byte of the flow).  Active flows share every resource
 * max-min fairly (progressive filling), each capped at its lane's rate.  Time advances from one
 * batch of simultaneous events to the next; rates are recomputed only where the set of flows on
 * a *contended* resource changed (one whose flows, all at their caps, would exceed it), so
 * resources that cannot saturate never couple flows and symmetric plans cost one rate
 * computation per step.  Files by stage:
 *   sim_constants.c  every constant, with its source
 *   sim_routes.c     routes through the node graph and the cluster, resource numbering
 *   sim_rates.c      flows, resources and max-min fair rates
 *   sim_events.c     the event queue: timestamps in buckets, one heap entry per distinct time
 *   sim_prog.c       the plan laid out for the call (16-byte operations in rows), and which
 *                    resources could ever saturate (the others stay out of flows)
 *   sim_conn.c       connections, counters, and the resources and weights of each flow
 *   sim_ops.c        what each operation costs: when it starts and when it completes
 *   sim.c            the public API and the event loop
 *   sim_device.c     a measured device in place of the constants (acc_sim_set_device)
 *   bound.c          acc_cost_bound
 *
 * Units inside the simulator: time in microseconds, sizes in bytes, rates in bytes per
 * microsecond (1 GB/s = 1e3 B/us).
 */
#ifndef ACC_SIM_INTERNAL_H
#define ACC_SIM_INTERNAL_H

#include "acc_cost.h"

#define SIM_NONE UINT32_MAX
/* Resources of one flow: a route through two node graphs (GPU to NIC, NIC to GPU), the NICs,
 * the fabric, both GPUs' memories and an LL engine.  The longest route of any shipped or
 * synthetic node is 7 links; 16 per node side leaves room for deep PCIe trees. */
#define SIM_FLOW_MAXRES    40
#define SIM_ROUTE_MAXLINKS 16
/* two node routes, two NICs, two fabric shares, two memories, one LL engine */
_Static_assert(SIM_FLOW_MAXRES >= 2 * SIM_ROUTE_MAXLINKS + 7, "a flow's resources must fit");

/* ---- constants (sim_constants.c) ------------------------------------------------------ */

/* Latency classes of a route, as NCCL's hwLat table has them. */
typedef enum { SIM_CLASS_NVLINK = 0, SIM_CLASS_PCI, SIM_CLASS_NET, SIM_CLASS_COUNT } sim_class_t;

/* Kernel launch to start plus the protocol's fixed setup: paid once per call. */
double sim_call_overhead_us(acc_proto_t proto);
/* One message over a connection: NVLINK/PCI the protocol's per-step latency; NET the protocol's
 * overhead only (the fabric's own latency comes from the topology). */
double sim_step_latency_us(acc_proto_t proto, sim_class_t cls);
/* A flag or data store seen by a polling peer (signal, put), by class; NET: 0 (fabric latency
 * from the topology). */
double sim_peer_latency_us(sim_class_t cls);
/* Round trips of a remote load (get, reduce_peers): request and response. */
double sim_peer_read_trips(void);
/* Payload fraction of the wire for a protocol. */
double sim_proto_efficiency(acc_proto_t proto);
/* Fraction of a link's hardware rate that applications reach; SMP by CPU vendor. */
double sim_link_efficiency(acc_link_kind_t kind, const char *cpu_vendor);
double sim_nic_efficiency(void);
double sim_mem_efficiency(void);
/* Per-lane payload cap (GB/s) by protocol and GPU generation (min SM over the GPUs), the same
 * for every node count; the aggregate LL cap of one GPU (GB/s) by generation and node count. */
double sim_lane_cap_gbs(acc_proto_t proto, int sm);
double sim_ll_gpu_cap_gbs(int sm, int nodes);
/* Bytes after which a receiver sees the first part of a message (the protocol's step). */
double sim_slice_bytes(acc_proto_t proto);
/* Memory bytes per byte moved: reading a message's source, landing and consuming it. */
double sim_mem_weight_send(void);
double sim_mem_weight_recv(int reduces);

/* ---- a measured device in place of the constants (sim_device.c) ----------------------------
 * acc_sim_set_device: every rank on one device whose launch, hand-off and copy rate were
 * measured.  These give what the simulator uses, from the device when one is set, else from
 * the constants above. */
double sim_overhead_us(const acc_sim_t *sim, acc_proto_t proto);
double sim_msg_latency_us(const acc_sim_t *sim, sim_class_t cls);
double sim_peer_lat_us(const acc_sim_t *sim, sim_class_t cls);
double sim_peer_trips(const acc_sim_t *sim);
/* The per-lane payload cap, bytes/us. */
double sim_lane_cap_us(const acc_sim_t *sim, acc_proto_t proto);

/* ---- routes and resources (sim_routes.c) ---------------------------------------------- */

typedef enum {
    SIM_RES_LINK = 0, /* a directed link of one node's graph */
    SIM_RES_NIC,      /* a NIC's egress or ingress */
    SIM_RES_FABRIC,   /* a node's share of an oversubscribed fabric core, one direction */
    SIM_RES_MEM,      /* a GPU's memory */
    SIM_RES_LL        /* a GPU's LL engine (NCCL's llMaxBws) */
} sim_res_kind_t;

typedef struct {
    uint32_t off, n; /* links in sim->route_links[off .. off + n) */
    sim_class_t cls; /* NVLINK when every link is NVLink or C2C, else PCI */
} sim_route_t;

/* A route between two ranks as resources: links, NICs, fabric (no memory, no LL). */
typedef struct {
    uint32_t n;
    uint32_t res[SIM_FLOW_MAXRES];
    sim_class_t cls;
    double lat_net; /* the fabric's one-way latency when cls is NET */
} sim_path_t;

/* ---- flows and rates (sim_rates.c) ---------------------------------------------------- */

typedef struct {
    double cap;     /* bytes/us this plan's protocol may push through it */
    double demand;  /* sum over active flows of (flow cap x weight) */
    double carried; /* bytes x weight carried during the call (utilisation) */
    uint32_t head;  /* first flow slot on this resource (slot = flow * SIM_FLOW_MAXRES + k) */
    uint32_t nflows;
    uint8_t kind;     /* sim_res_kind_t */
    uint8_t dirty;    /* in sim->dirty_res */
    uint8_t seen;     /* visited by the current rate computation */
    uint8_t sat;      /* saturated at the current level of progressive filling */
    double rem, wsum; /* progressive filling */
} sim_res_t;

typedef enum { SIM_FLOW_MSG = 0, SIM_FLOW_OP } sim_flow_kind_t;

typedef struct {
    double rem; /* bytes left at t0 */
    double t0;
    double rate; /* bytes/us; 0 before the first rate computation */
    double cap;
    double bytes;
    uint32_t nres;
    uint32_t version;   /* bumped at every rate change: stale finish events are skipped */
    uint32_t thread;    /* the thread whose operation waits for this flow */
    uint32_t conn, seq; /* SIM_FLOW_MSG: the connection and the message's ring position */
    uint8_t kind;
    uint8_t active;
    uint8_t queued;   /* in the current computation's flow list */
    uint8_t fresh;    /* started this batch: needs a first rate */
    uint8_t unfrozen; /* still rising in progressive filling */
    /* Its resources, each with its weight and its place in the resource's list of slots
     * (slot = flow * SIM_FLOW_MAXRES + k); kept together so that a flow of a few resources is
     * a cache line or two. */
    struct {
        uint32_t res;
        float w;
        uint32_t prev, next;
    } r[SIM_FLOW_MAXRES];
} sim_flow_t;

/* ---- events (sim_events.c) ------------------------------------------------------------ */

typedef enum {
    SIM_EV_FLOW = 0, /* a = flow, b = version: the flow's last byte left */
    SIM_EV_MSG,      /* a = connection, b = ring position: the message has arrived */
    SIM_EV_WAKE,     /* a = thread: look again whether it can go on */
    SIM_EV_OPDONE,   /* a = thread, b = operation index: the running operation completes */
    SIM_EV_SIGNAL    /* a = counter: one signal has arrived */
} sim_ev_type_t;

typedef struct {
    uint32_t next;
    uint32_t type;
    uint32_t a, b;
} sim_event_t;

typedef struct {
    double t;
    uint64_t seq; /* creation order: equal times pop in the order they were first used */
    uint32_t head, tail;
    uint32_t live;
} sim_bucket_t;

#define SIM_BUCKET_CACHE 256

typedef struct {
    sim_event_t *ev;
    uint32_t nev, ev_cap, ev_free;
    sim_bucket_t *bk;
    uint32_t nbk, bk_cap, bk_free;
    uint32_t *heap; /* bucket indices, ordered by time */
    uint32_t nheap, heap_cap;
    struct {
        double t;
        uint32_t bucket;
    } cache[SIM_BUCKET_CACHE];
    uint64_t pushed; /* events scheduled in all (statistics) */
    uint64_t seq;
} sim_queue_t;

acc_status_t sim_queue_push(sim_queue_t *q, double t, sim_ev_type_t type, uint32_t a, uint32_t b);
/* The earliest bucket's time, or a negative value when the queue is empty. */
double sim_queue_next_time(const sim_queue_t *q);
/* Unlink the earliest bucket; its events are q->ev[head ..] through .next, to be released with
 * sim_queue_release after processing. */
uint32_t sim_queue_pop(sim_queue_t *q, double *t);
void sim_queue_release(sim_queue_t *q, uint32_t bucket);
void sim_queue_reset(sim_queue_t *q);
void sim_queue_free(sim_queue_t *q);

/* ---- the plan in compact form (sim_prog.c) ----------------------------------------------- */

/* One operation as the simulator needs it: 16 bytes instead of acc_op_t's 56, with its size in
 * bytes for this call already cut from its chunk range. */
typedef struct {
    uint8_t code;
    uint8_t dep; /* 1: has an explicit dependency (read it from the plan) */
    uint16_t slot;
    int32_t peer;
    int32_t peer2; /* WAIT: the value */
    float bytes;   /* the operand's bytes: float keeps 24 bits, far below the model's accuracy */
} sim_op_t;

/* Lay out the plan's operations for this call (after the chunk bounds are known), and decide
 * which memories and LL engines could ever saturate (after the lane cap is known). */
acc_status_t sim_prog_build(acc_sim_t *sim);

/* ---- execution state (sim.c, sim_ops.c) ----------------------------------------------- */

/* Connections each lane remembers: a ring lane talks to two peers for thousands of
 * operations, a tree lane to its parent and two children in turn. */
#define SIM_CONN_CACHE 4

typedef enum {
    SIM_TH_READY = 0, /* may try its next operation */
    SIM_TH_RUNNING,   /* an operation is in progress */
    SIM_TH_BLOCKED,   /* waits for a message, a slot, a counter or a dependency */
    SIM_TH_DONE
} sim_th_state_t;

typedef struct {
    uint32_t pc; /* operation running or next to start: pc operations have completed */
    uint8_t state;
    uint8_t in_ready; /* in the ready list */
    uint8_t reg_kind; /* on a waiter list: 0 none, 1 a thread's dependants, 2 a counter's */
    uint32_t reg_id;  /* that thread or counter */
    uint32_t pending; /* flows and arrivals the running operation still waits for */
    double done_at;   /* earliest completion of the running operation */
    double tail;      /* latency after the last flow before completion */
    double out_rate;  /* rate of its last message flow (streaming tail) */
    double out_bytes;
    uint32_t in_conn;   /* connection a running fused operation consumes from; SIM_NONE */
    uint32_t next_wait; /* intrusive list of waiters (dependency or counter) */
    uint32_t dep_head;  /* threads waiting for one of my operations */
    /* the last SIM_CONN_CACHE peers it received from and sent to, with their connections */
    uint32_t cin_peer[SIM_CONN_CACHE], cin_conn[SIM_CONN_CACHE];
    uint32_t cout_peer[SIM_CONN_CACHE], cout_conn[SIM_CONN_CACHE];
    uint8_t cin_next, cout_next; /* the entry replaced next */
    double finish; /* when its last operation completed */
} sim_thread_t;

typedef struct {
    double bytes;
    double head_at;   /* when the receiver may start forwarding it; +inf until known */
    double arrive_at; /* when it is complete at the receiver; +inf until known */
    uint32_t flow;    /* active flow or SIM_NONE */
    uint8_t arrived;
    uint32_t consumer; /* thread of a fused operation forwarding it, or SIM_NONE */
} sim_msg_t;

typedef struct {
    int from, to, lane;
    uint32_t q_head, q_tail;     /* messages received and sent so far */
    uint32_t head_pos, tail_pos; /* their positions in its ring of `slots` messages */
    uint32_t slots;
    uint32_t msg_off; /* the ring, in sim->msgs */
    uint8_t recv_waiting, send_waiting;
    double lat;    /* one message's latency */
    double bytes;  /* bytes sent on it (link utilisation) */
    uint32_t nres; /* the resources of its route that may saturate, in sim->conn_res */
    uint32_t res_off;
} sim_conn_t;

typedef struct {
    uint32_t arrived; /* signals arrived so far */
    uint32_t waiters; /* threads waiting on it */
} sim_counter_t;

/* Open addressing map from 64-bit keys to indices; a key and its value side by side, so
 * that a probe is one cache miss. */
typedef struct {
    uint64_t key;
    uint32_t val; /* SIM_NONE: empty */
} sim_map_slot_t;

typedef struct {
    sim_map_slot_t *slots;
    uint32_t cap, n;
} sim_map_t;

uint32_t sim_map_get(const sim_map_t *m, uint64_t key);
acc_status_t sim_map_put(sim_map_t *m, uint64_t key, uint32_t val);
void sim_map_clear(sim_map_t *m);
void sim_map_free(sim_map_t *m);

struct acc_sim {
    const acc_topo_t *topo;
    int nodes, gpn, nranks, nlinks, nnics, nverts;
    int min_sm;
    /* node-local routes: GPU to GPU (gpn x gpn), GPU to each NIC of its stripe and back (one per
     * entry of nic_ids) */
    sim_route_t *route_gg, *route_gn, *route_ng;
    uint32_t *route_links;
    uint32_t nroute_links;
    int *nic_start; /* local GPU g's NICs are nic_ids[nic_start[g] .. nic_start[g + 1]) */
    int *nic_ids;   /* NIC ids (among NICs), the GPU's rail first */
    int *nic_planes; /* the network plane of each entry of nic_ids */
    /* resource numbering */
    uint32_t nres, res_nic, res_fabric, res_mem, res_ll;
    int fabric;      /* 1 when the fabric is oversubscribed (fabric resources exist) */
    double *raw_cap; /* bytes/us before protocol efficiency */
    sim_res_t *res;

    /* a measured device (sim_device.c): every rank's memory is resource res_mem */
    int device_on;
    acc_sim_device_t device;

    /* per call */
    const acc_plan_t *plan;
    /* 0, or the plan's period (a quotient, acc_cplan_quotient): only ranks 0 .. period - 1
     * run, and a rank, a connection or a resource beyond them stands for its translate among
     * them (sim_rep).  By the plan's symmetry and the cluster's (identical nodes, one fabric
     * share per node), every translate of a lane runs the same timeline, so playing one
     * period gives the whole call's times. */
    int period;
    acc_proto_t proto;
    double esize;
    uint64_t elems[ACC_BUF_COUNT];
    uint32_t nchunks[ACC_BUF_COUNT];
    /* first element of chunk i of each buffer, i = 0 .. nchunks (the cutting rule, once per
     * call instead of two 128-bit divisions per operation) */
    uint64_t *bounds[ACC_BUF_COUNT];
    uint32_t bounds_cap[ACC_BUF_COUNT];
    /* the operations: rows of nth (operation pc of every lane together, so that lanes
     * advancing in step read memory in order) when the lanes' lengths allow it, else one run
     * per lane from op_off[t] */
    sim_op_t *ops;
    size_t ops_cap;
    uint64_t *op_off;
    uint32_t op_off_cap;
    int ops_rows;
    /* may a resource ever saturate in this call (sim_prog.c)?  per resource, and the most
     * the lanes that may use it could ask of it, bytes/us */
    uint8_t *res_on;
    double *res_bound;
    double lane_cap; /* bytes/us */
    double slice;
    double peer_trips;
    int reduces;
    double now;
    sim_queue_t q;
    /* acc_sim_plan_trace: each operation's start and end, at 2 x (trace_off[t] + pc) and the
     * next; NULL in every other call */
    double *trace;
    uint64_t *trace_off;

    sim_thread_t *th;
    uint32_t nth, th_cap;
    uint32_t *ready;
    uint32_t nready, ready_cap;

    sim_flow_t *flows;
    uint32_t nflows, flows_cap, flow_free;
    uint32_t *fresh; /* flows started in this batch on a contended resource */
    uint32_t nfresh, fresh_cap;
    uint32_t *firsts; /* flows started in this batch at their cap */
    uint32_t nfirsts, firsts_cap;
    uint32_t *dirty_res;
    uint32_t ndirty, dirty_cap;
    uint32_t *work; /* flows of the current rate computation */
    uint32_t nwork, work_cap;
    double *rates; /* their new rates */
    uint32_t *unf; /* progressive filling scratch: 2 x rates_cap */
    uint32_t rates_cap;
    uint32_t *comp_res;
    uint32_t ncomp_res, comp_res_cap;

    sim_conn_t *conns;
    uint32_t nconns, conns_cap;
    sim_msg_t *msgs;
    uint32_t nmsgs, msgs_cap;
    uint32_t *conn_res;
    uint32_t nconn_res, conn_res_cap;
    sim_map_t conn_map;
    sim_counter_t *ctrs;
    uint32_t nctrs, ctrs_cap;
    sim_map_t ctr_map;

    uint64_t transfers;
    uint32_t threads_done;
};

/* The rank that stands for `rank` in the simulation: itself, or on a quotient its translate
 * among the first `period` ranks. */
static inline int sim_rep(const acc_sim_t *sim, int rank)
{
    return sim->period ? rank % sim->period : rank;
}

/* The thread of a rank's lane (the rank's representative's). */
static inline uint32_t sim_thread_of(const acc_sim_t *sim, int rank, int lane)
{
    return (uint32_t)sim_rep(sim, rank) * (uint32_t)sim->plan->nlanes + (uint32_t)lane;
}

/* The memory resource of a rank: its own GPU's, or the one device every rank shares. */
static inline uint32_t sim_mem_res(const acc_sim_t *sim, int rank)
{
    return sim->res_mem + (sim->device_on ? 0u : (uint32_t)sim_rep(sim, rank));
}

/* A rank's LL engine. */
static inline uint32_t sim_ll_res(const acc_sim_t *sim, int rank)
{
    return sim->res_ll + (uint32_t)sim_rep(sim, rank);
}

static inline const sim_op_t *sim_op(const acc_sim_t *sim, uint32_t t, uint32_t pc)
{
    return &sim->ops[sim->ops_rows ? (size_t)pc * sim->nth + t : sim->op_off[t] + pc];
}

/* sim_routes.c */
acc_status_t sim_routes_build(acc_sim_t *sim);
void sim_routes_free(acc_sim_t *sim);
/* Route between two ranks (links, NICs, fabric), with its latency class. */
/* The resources a transfer from rank `from` to rank `to` on `lane` crosses.  Between nodes lane
 * l leaves by NIC l mod n of the sender's n (acc_topo_gpu_nics) and enters by NIC l mod m of the
 * receiver's m, as NCCL spreads its channels over a GPU's NICs. */
acc_status_t sim_path(const acc_sim_t *sim, int from, int to, int lane, sim_path_t *out);
/* Set every resource's capacity for a protocol. */
void sim_set_caps(acc_sim_t *sim, acc_proto_t proto);

/* sim_rates.c */
/* Start a flow of `bytes` over resources res[0..nres) with weights w; *out gets its index. */
acc_status_t sim_flow_start(acc_sim_t *sim, const uint32_t *res, const float *w, uint32_t nres,
                            double bytes, double cap, uint32_t *out);
/* After the caller has filled in the flow's owner: give it its rate now when it touches no
 * contended resource, else queue it for sim_rates_update. */
acc_status_t sim_flow_commit(acc_sim_t *sim, uint32_t f);
/* The flow has moved its last byte: take it off its resources. */
acc_status_t sim_flow_end(acc_sim_t *sim, uint32_t f);
/* Give every flow started or disturbed since the last call its max-min fair rate and schedule
 * its finish. */
acc_status_t sim_rates_update(acc_sim_t *sim);
void sim_flows_reset(acc_sim_t *sim);

/* sim_conn.c: connections (created on first use), counters, and the flows operations start. */
acc_status_t sim_out_conn_slow(acc_sim_t *sim, uint32_t t, int peer, uint32_t *out);
acc_status_t sim_in_conn_slow(acc_sim_t *sim, uint32_t t, int peer, uint32_t *out);
acc_status_t sim_counter(acc_sim_t *sim, int from, int to, uint32_t slot, uint32_t *out);
/* Queue a message of `bytes` on connection c from thread t and start its flow. */
acc_status_t sim_send_msg(acc_sim_t *sim, uint32_t t, uint32_t c, double bytes);
/* Peer memory: bytes from rank src to rank dst (put: src is t's rank; get: dst is), memory
 * weight w_dst at the destination; *lat gets the peer latency of the route. */
acc_status_t sim_peer_flow(acc_sim_t *sim, uint32_t t, int src, int dst, double bytes, double cap,
                           double w_dst, double *lat);
/* Work on a rank's own memory, w bytes of traffic per byte. */
acc_status_t sim_local_flow(acc_sim_t *sim, uint32_t t, int rank, double bytes, double w,
                            double cap);

/* Thread t's connection to (out) or from (in) a peer, through its caches (SIM_CONN_CACHE). */
static inline acc_status_t sim_out_conn(acc_sim_t *sim, uint32_t t, int peer, uint32_t *out)
{
    const sim_thread_t *th = &sim->th[t];
    for (int i = 0; i < SIM_CONN_CACHE; i++)
        if (th->cout_peer[i] == (uint32_t)peer) {
            *out = th->cout_conn[i];
            return ACC_OK;
        }
    return sim_out_conn_slow(sim, t, peer, out);
}

static inline acc_status_t sim_in_conn(acc_sim_t *sim, uint32_t t, int peer, uint32_t *out)
{
    const sim_thread_t *th = &sim->th[t];
    for (int i = 0; i < SIM_CONN_CACHE; i++)
        if (th->cin_peer[i] == (uint32_t)peer) {
            *out = th->cin_conn[i];
            return ACC_OK;
        }
    return sim_in_conn_slow(sim, t, peer, out);
}

/* The message at ring position pos of connection c. */
static inline sim_msg_t *sim_msg(acc_sim_t *sim, uint32_t c, uint32_t pos)
{
    return &sim->msgs[sim->conns[c].msg_off + pos];
}

static inline int sim_conn_full(const sim_conn_t *c)
{
    return c->q_tail - c->q_head >= c->slots;
}

/* sim_ops.c */
/* Run a ready thread as far as it goes at the current time. */
acc_status_t sim_thread_run(acc_sim_t *sim, uint32_t t);
/* Event handlers. */
acc_status_t sim_on_flow_done(acc_sim_t *sim, uint32_t f);
acc_status_t sim_on_msg_arrived(acc_sim_t *sim, uint32_t conn, uint32_t seq);
acc_status_t sim_on_op_done(acc_sim_t *sim, uint32_t t, uint32_t op);
acc_status_t sim_on_signal(acc_sim_t *sim, uint32_t ctr);
/* The flow's rate was set (first or new): messages learn when their head arrives. */
acc_status_t sim_on_rate(acc_sim_t *sim, uint32_t f, int first);
acc_status_t sim_wake(acc_sim_t *sim, uint32_t t);

/* Latency of a bound's hop and busbw factors, shared with bound.c. */
double sim_busbw_factor(acc_coll_t coll, int nranks);

#endif /* ACC_SIM_INTERNAL_H */
