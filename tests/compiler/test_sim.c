/*
 * acc's plan simulator (compiler/sim*.c) on cases computed by hand from its constants
 * (compiler/sim_constants.c, read through sim_internal.h so that a changed constant changes the
 * expectation with it), then on the generators' plans: monotonic in size, the ring reaching the
 * link-rate limit, 1024-rank plans, and the lower bound.  Bad input must give clear errors.
 */
#include "acc_test.h"
#include "acc_compiler.h"
#include "sim_internal.h"

#include <math.h>
#include <string.h>

/* Two H100s joined by `nvlinks` NVLinks, nothing else. */
static acc_topo_t *pair(int nvlinks)
{
    char text[512];
    acc_topo_t *t;
    snprintf(text, sizeof(text),
             "version: 1\n"
             "node:\n"
             "  gpus:\n"
             "    - {id: 0, sm: 90, pci_device: 0x2330}\n"
             "    - {id: 1, sm: 90, pci_device: 0x2330}\n"
             "  links:\n"
             "    - {a: GPU0, b: GPU1, kind: nvlink, count: %d}\n",
             nvlinks);
    CHECK_OK(acc_topo_load_buffer(text, strlen(text), "pair.yaml", &t));
    return t;
}

/* Three H100s in a chain: GPU0 -1 NVLink- GPU1 -2 NVLinks- GPU2 (GPU0 reaches GPU2 through
 * GPU1, NVLink to NVLink). */
static acc_topo_t *chain(void)
{
    static const char text[] = "version: 1\n"
                               "node:\n"
                               "  gpus:\n"
                               "    - {id: 0, sm: 90, pci_device: 0x2330}\n"
                               "    - {id: 1, sm: 90, pci_device: 0x2330}\n"
                               "    - {id: 2, sm: 90, pci_device: 0x2330}\n"
                               "  links:\n"
                               "    - {a: GPU0, b: GPU1, kind: nvlink, count: 1}\n"
                               "    - {a: GPU1, b: GPU2, kind: nvlink, count: 2}\n";
    acc_topo_t *t;
    CHECK_OK(acc_topo_load_buffer(text, sizeof(text) - 1, "chain.yaml", &t));
    return t;
}

/* A broadcast-shaped plan of `chunks` input chunks to which the cases add their operations. */
static acc_plan_t *bare(int nranks, int nlanes, uint32_t chunks, acc_proto_t proto)
{
    acc_plan_t *p;
    CHECK_OK(acc_plan_create(ACC_COLL_BROADCAST, nranks, nlanes, chunks, chunks, 0, &p));
    p->root = 0;
    p->proto = proto;
    return p;
}

static acc_sim_result_t sim(const acc_topo_t *t, const acc_plan_t *p, uint64_t nbytes)
{
    acc_sim_t *s;
    acc_sim_result_t r;
    CHECK_OK(acc_sim_create(t, &s));
    CHECK_OK(acc_sim_plan(s, p, nbytes, ACC_DT_F32, &r));
    acc_sim_destroy(s);
    return r;
}

/* NVLink on Hopper: 25 GB/s per link and direction (topo_hw.c), in bytes per microsecond. */
static double nvlink_rate(int links, acc_proto_t proto)
{
    return links * 25.0 * 1e3 * sim_link_efficiency(ACC_LINK_NVLINK, NULL) *
           sim_proto_efficiency(proto);
}

#define CHECK_REL(a, b, rel) CHECK_NEAR((a), (b), fabs((double)(b)) * (rel))

ACC_TEST(one_send_over_one_nvlink)
{
    /* time = call overhead + step latency + bytes / (link rate x efficiencies): one NVLink
     * (20 GB/s achievable) is slower than a Hopper lane, so the link binds. */
    const acc_proto_t protos[] = {ACC_PROTO_SIMPLE, ACC_PROTO_LL, ACC_PROTO_LL128};
    acc_topo_t *t = pair(1);
    size_t i;
    for (i = 0; i < 3; i++) {
        acc_plan_t *p = bare(2, 1, 1, protos[i]);
        uint64_t b = 20000000; /* 20 MB */
        acc_sim_result_t r;
        double want;
        CHECK_OK(acc_plan_send(p, 0, 0, 1, acc_ref(ACC_BUF_IN, 0, 1)));
        CHECK_OK(acc_plan_recv(p, 1, 0, 0, acc_ref(ACC_BUF_OUT, 0, 1)));
        r = sim(t, p, b);
        want = sim_call_overhead_us(protos[i]) + sim_step_latency_us(protos[i], SIM_CLASS_NVLINK) +
               (double)b / nvlink_rate(1, protos[i]);
        CHECK_REL(r.time_us, want, 1e-9);
        CHECK_INT(r.transfers, 1);
        CHECK_REL(r.algbw, (double)b / want / 1e3, 1e-9);
        CHECK_REL(r.busbw, r.algbw, 1e-12); /* broadcast: factor 1 */
        /* The link was busy for all but the fixed costs. */
        CHECK_REL(r.link_util, (double)b / nvlink_rate(1, protos[i]) / want, 1e-6);
        acc_plan_destroy(p);
    }
    acc_topo_destroy(t);
}

ACC_TEST(two_flows_share_a_link)
{
    /* Lanes 0 and 1 of rank 0 send b each over the same NVLink at the same time: each gets half
     * of it, so both finish when one alone would have moved 2b. */
    acc_topo_t *t = pair(1);
    acc_plan_t *p = bare(2, 2, 2, ACC_PROTO_SIMPLE);
    uint64_t b = 10000000;
    int l;
    for (l = 0; l < 2; l++) {
        CHECK_OK(acc_plan_send(p, 0, l, 1, acc_ref(ACC_BUF_IN, (uint32_t)l, 1)));
        CHECK_OK(acc_plan_recv(p, 1, l, 0, acc_ref(ACC_BUF_OUT, (uint32_t)l, 1)));
    }
    CHECK_REL(sim(t, p, 2 * b).time_us,
              sim_call_overhead_us(ACC_PROTO_SIMPLE) +
                  sim_step_latency_us(ACC_PROTO_SIMPLE, SIM_CLASS_NVLINK) +
                  (double)b / (nvlink_rate(1, ACC_PROTO_SIMPLE) / 2),
              1e-9);
    acc_plan_destroy(p);
    acc_topo_destroy(t);
}

ACC_TEST(lane_cap_binds)
{
    /* Four NVLinks (80 GB/s achievable) are faster than one Hopper lane (NCCL's per-channel
     * Simple cap): one lane moves at the lane's rate; two lanes at twice that. */
    acc_topo_t *t = pair(4);
    double lane = sim_lane_cap_gbs(ACC_PROTO_SIMPLE, 90) * 1e3, fixed;
    uint64_t b = 38700000;
    acc_plan_t *p1 = bare(2, 1, 1, ACC_PROTO_SIMPLE), *p2 = bare(2, 2, 2, ACC_PROTO_SIMPLE);
    int l;

    CHECK(lane < nvlink_rate(4, ACC_PROTO_SIMPLE) && 2 * lane < nvlink_rate(4, ACC_PROTO_SIMPLE));
    fixed = sim_call_overhead_us(ACC_PROTO_SIMPLE) +
            sim_step_latency_us(ACC_PROTO_SIMPLE, SIM_CLASS_NVLINK);
    CHECK_OK(acc_plan_send(p1, 0, 0, 1, acc_ref(ACC_BUF_IN, 0, 1)));
    CHECK_OK(acc_plan_recv(p1, 1, 0, 0, acc_ref(ACC_BUF_OUT, 0, 1)));
    CHECK_REL(sim(t, p1, b).time_us, fixed + (double)b / lane, 1e-9);
    for (l = 0; l < 2; l++) {
        CHECK_OK(acc_plan_send(p2, 0, l, 1, acc_ref(ACC_BUF_IN, (uint32_t)l, 1)));
        CHECK_OK(acc_plan_recv(p2, 1, l, 0, acc_ref(ACC_BUF_OUT, (uint32_t)l, 1)));
    }
    CHECK_REL(sim(t, p2, 2 * b).time_us, fixed + (double)b / lane, 1e-9);
    acc_plan_destroy(p1);
    acc_plan_destroy(p2);
    acc_topo_destroy(t);
}

ACC_TEST(max_min_three_flows_two_links)
{
    /* Chain GPU0 -[20 GB/s]- GPU1 -[40 GB/s]- GPU2.  Flows A: 0->1 (s), C: 0->2 (s, over both
     * links), B: 1->2 (3s).  Max-min: the first link saturates at 10 each for A and C; B then
     * takes the rest of the second link, 40 - 10 = 30, and finishes its 3s exactly when A and
     * C finish theirs (an equal split of 20 would leave B running half as long again). */
    acc_topo_t *t = chain();
    acc_plan_t *p = bare(3, 2, 5, ACC_PROTO_SIMPLE);
    double s, one = nvlink_rate(1, ACC_PROTO_SIMPLE), want;
    uint64_t total = 5000000;

    CHECK_OK(acc_plan_send(p, 0, 0, 1, acc_ref(ACC_BUF_IN, 0, 1))); /* A */
    CHECK_OK(acc_plan_recv(p, 1, 0, 0, acc_ref(ACC_BUF_OUT, 0, 1)));
    CHECK_OK(acc_plan_send(p, 0, 1, 2, acc_ref(ACC_BUF_IN, 1, 1))); /* C */
    CHECK_OK(acc_plan_send(p, 1, 1, 2, acc_ref(ACC_BUF_IN, 2, 3))); /* B */
    CHECK_OK(acc_plan_recv(p, 2, 1, 0, acc_ref(ACC_BUF_OUT, 1, 1)));
    CHECK_OK(acc_plan_recv(p, 2, 1, 1, acc_ref(ACC_BUF_OUT, 2, 3)));
    s = total / 5.0;
    want = sim_call_overhead_us(ACC_PROTO_SIMPLE) +
           sim_step_latency_us(ACC_PROTO_SIMPLE, SIM_CLASS_NVLINK) + s / (one / 2);
    CHECK_REL(sim(t, p, total).time_us, want, 1e-9);
    CHECK_INT(sim(t, p, total).transfers, 3);
    acc_plan_destroy(p);
    acc_topo_destroy(t);
}

ACC_TEST(ll_beats_simple_small_and_loses_large)
{
    /* One message over an NVSwitch (no link binds: the lane does).  LL pays less per call and
     * per step but moves half the payload per line: it wins small messages, Simple large ones,
     * and the crossover is where the fixed costs' difference equals the transfer's. */
    acc_topo_t *t;
    acc_plan_t *p = bare(2, 1, 1, ACC_PROTO_SIMPLE);
    acc_sim_t *s;
    acc_sim_result_t a, b;
    double fs, fl, rs, rl, cross;
    uint64_t lo = 1024, hi = 64u << 20;

    CHECK_OK(acc_topo_load("nodes=1 gpus=2 nvlink=18", &t));
    CHECK_OK(acc_sim_create(t, &s));
    CHECK_OK(acc_plan_send(p, 0, 0, 1, acc_ref(ACC_BUF_IN, 0, 1)));
    CHECK_OK(acc_plan_recv(p, 1, 0, 0, acc_ref(ACC_BUF_OUT, 0, 1)));
    fs = sim_call_overhead_us(ACC_PROTO_SIMPLE) +
         sim_step_latency_us(ACC_PROTO_SIMPLE, SIM_CLASS_NVLINK);
    fl = sim_call_overhead_us(ACC_PROTO_LL) + sim_step_latency_us(ACC_PROTO_LL, SIM_CLASS_NVLINK);
    rs = sim_lane_cap_gbs(ACC_PROTO_SIMPLE, 90) * 1e3;
    rl = sim_lane_cap_gbs(ACC_PROTO_LL, 90) * 1e3;
    cross = (fs - fl) / (1.0 / rl - 1.0 / rs);
    CHECK(fl < fs && rl < rs);
    p->proto = ACC_PROTO_LL;
    CHECK_OK(acc_sim_plan(s, p, 8192, ACC_DT_F32, &a));
    p->proto = ACC_PROTO_SIMPLE;
    CHECK_OK(acc_sim_plan(s, p, 8192, ACC_DT_F32, &b));
    CHECK(a.time_us < b.time_us);
    p->proto = ACC_PROTO_LL;
    CHECK_OK(acc_sim_plan(s, p, 4u << 20, ACC_DT_F32, &a));
    p->proto = ACC_PROTO_SIMPLE;
    CHECK_OK(acc_sim_plan(s, p, 4u << 20, ACC_DT_F32, &b));
    CHECK(a.time_us > b.time_us);
    /* Find the crossover by bisection on the simulator and compare with the formula. */
    while (hi - lo > 256) {
        uint64_t mid = (lo + hi) / 2 / 4 * 4;
        p->proto = ACC_PROTO_LL;
        CHECK_OK(acc_sim_plan(s, p, mid, ACC_DT_F32, &a));
        p->proto = ACC_PROTO_SIMPLE;
        CHECK_OK(acc_sim_plan(s, p, mid, ACC_DT_F32, &b));
        if (a.time_us < b.time_us)
            lo = mid;
        else
            hi = mid;
    }
    CHECK_REL((double)lo, cross, 0.01);
    acc_sim_destroy(s);
    acc_plan_destroy(p);
    acc_topo_destroy(t);
}

ACC_TEST(signal_wait_and_get_latencies)
{
    /* Peer memory over one NVLink: a signal reaches its waiter one peer latency later; a get
     * pays a request and a response besides its bytes. */
    acc_topo_t *t = pair(1);
    acc_plan_t *p = bare(2, 1, 1, ACC_PROTO_SIMPLE), *g = bare(2, 1, 1, ACC_PROTO_SIMPLE);
    acc_op_t op = acc_op_init(ACC_OP_SIGNAL);
    uint64_t b = 2000000;
    double oh = sim_call_overhead_us(ACC_PROTO_SIMPLE),
           peer = sim_peer_latency_us(SIM_CLASS_NVLINK);

    op.peer = 1;
    CHECK_OK(acc_plan_add(p, 0, 0, &op, NULL));
    op = acc_op_init(ACC_OP_WAIT);
    op.peer = 0;
    op.value = 1;
    CHECK_OK(acc_plan_add(p, 1, 0, &op, NULL));
    CHECK_REL(sim(t, p, b).time_us, oh + peer, 1e-9);
    CHECK_INT(sim(t, p, b).transfers, 0);

    op = acc_op_init(ACC_OP_GET);
    op.peer = 0;
    op.src = acc_ref(ACC_BUF_IN, 0, 1);
    op.dst = acc_ref(ACC_BUF_OUT, 0, 1);
    CHECK_OK(acc_plan_add(g, 1, 0, &op, NULL));
    CHECK_REL(sim(t, g, b).time_us,
              oh + sim_peer_read_trips() * peer + (double)b / nvlink_rate(1, ACC_PROTO_SIMPLE),
              1e-9);
    acc_plan_destroy(p);
    acc_plan_destroy(g);
    acc_topo_destroy(t);
}

ACC_TEST(a_full_connection_holds_the_sender)
{
    /* Two messages on one connection.  With 8 slots they leave back to back; with one slot
     * the second may leave only once the first has been received, one step latency after it
     * left. */
    acc_topo_t *t = pair(1);
    acc_plan_t *p = bare(2, 1, 2, ACC_PROTO_SIMPLE);
    uint64_t b = 2000000; /* 1 MB per message: 50 us over the link */
    double msg = (double)(b / 2) / nvlink_rate(1, ACC_PROTO_SIMPLE);
    double lat = sim_step_latency_us(ACC_PROTO_SIMPLE, SIM_CLASS_NVLINK);
    double oh = sim_call_overhead_us(ACC_PROTO_SIMPLE);

    CHECK_OK(acc_plan_send(p, 0, 0, 1, acc_ref(ACC_BUF_IN, 0, 1)));
    CHECK_OK(acc_plan_send(p, 0, 0, 1, acc_ref(ACC_BUF_IN, 1, 1)));
    CHECK_OK(acc_plan_recv(p, 1, 0, 0, acc_ref(ACC_BUF_OUT, 0, 1)));
    CHECK_OK(acc_plan_recv(p, 1, 0, 0, acc_ref(ACC_BUF_OUT, 1, 1)));
    p->slots = 8;
    CHECK_REL(sim(t, p, b).time_us, oh + 2 * msg + lat, 1e-9);
    p->slots = 1;
    CHECK_REL(sim(t, p, b).time_us, oh + 2 * msg + 2 * lat, 1e-9);
    acc_plan_destroy(p);
    acc_topo_destroy(t);
}

static acc_plan_t *gen(const acc_topo_t *t, acc_coll_t coll, const char *name, int lanes)
{
    const acc_algo_t *a = acc_algo_find(coll, name);
    acc_algo_args_t args;
    acc_plan_t *p;
    CHECK_MSG(a != NULL, "no algorithm %s: %s", name, acc_error_message());
    memset(&args, 0, sizeof(args));
    args.lanes = lanes;
    CHECK_OK(acc_algo_generate(a, t, &args, &p));
    return p;
}

ACC_TEST(monotonic_in_size_and_above_the_bound)
{
    /* Every generator of every collective, default, 8 and (one node) 24 lanes, every protocol, on
     * machines of every kind: a larger message never takes less time (the selection builder prunes
     * on it), and no plan beats the topology's lower bound. */
    static const char *const srcs[] = {"dgx-h100", "nodes=2 gpus=4 nvlink=18 nic=4x400",
                                       "pcie-8gpu", "dgx-a100", "p4d-4node"};
    static const int lanes[] = {0, 8, 24};
    size_t i, j, na, simulated = 0;
    const acc_algo_t *const *algos = acc_algo_list(&na);
    for (i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
        acc_topo_t *t;
        acc_sim_t *s;
        CHECK_OK(acc_topo_load(srcs[i], &t));
        CHECK_OK(acc_sim_create(t, &s));
        for (j = 0; j < na * 3; j++) {
            const acc_algo_t *a = algos[j / 3];
            acc_algo_args_t args;
            acc_plan_t *p;
            int proto;
            memset(&args, 0, sizeof(args));
            args.lanes = lanes[j % 3];
            /* 24 lanes on clusters contend everywhere and take seconds: one node suffices
             * to exercise many connections per lane. */
            if ((args.lanes > 8 && acc_topo_nodes(t) > 1) || a->supports(t, &args) != ACC_OK)
                continue;
            CHECK_OK(acc_algo_generate(a, t, &args, &p));
            for (proto = 0; proto < ACC_PROTO_COUNT; proto++) {
                double last = 0;
                uint64_t n;
                p->proto = (acc_proto_t)proto;
                for (n = 1024; n <= (1ull << 31); n *= 4) {
                    acc_sim_result_t r;
                    acc_bound_t b;
                    CHECK_OK(acc_sim_plan(s, p, n, ACC_DT_F32, &r));
                    CHECK_OK(acc_cost_bound(t, p->coll, n, &b));
                    CHECK_MSG(r.time_us >= last, "%s %s %s %s: %llu B take %.3f us, less than %.3f",
                              srcs[i], acc_coll_name(p->coll), p->params,
                              acc_proto_name((acc_proto_t)proto), (unsigned long long)n, r.time_us,
                              last);
                    CHECK_MSG(r.time_us >= b.us * (1 - 1e-9),
                              "%s %s %s %s: %llu B take %.3f us, below the bound %.3f", srcs[i],
                              acc_coll_name(p->coll), p->params, acc_proto_name((acc_proto_t)proto),
                              (unsigned long long)n, r.time_us, b.us);
                    last = r.time_us;
                    simulated++;
                }
            }
            acc_plan_destroy(p);
        }
        acc_sim_destroy(s);
        acc_topo_destroy(t);
    }
    CHECK(simulated > 1000);
}

ACC_TEST(ring_reaches_the_link_limit)
{
    /* 8 H100s on NVSwitches: 18 NVLinks x 25 GB/s x NVLink efficiency per GPU.  A ring with
     * enough lanes keeps every GPU's link busy: its busbw approaches that rate from below.  The
     * bound counts on more - the switches reducing (NVLS) and NCCL's 20.6 GB/s a link - so the
     * ring stays below it. */
    acc_topo_t *t;
    acc_plan_t *p;
    acc_sim_t *s;
    acc_sim_result_t r;
    acc_bound_t bd;
    double limit = nvlink_rate(18, ACC_PROTO_SIMPLE) / 1e3;

    CHECK_OK(acc_topo_load("dgx-h100", &t));
    p = gen(t, ACC_COLL_ALLREDUCE, "ring", 24);
    CHECK_OK(acc_sim_create(t, &s));
    CHECK_OK(acc_sim_plan(s, p, 4ull << 30, ACC_DT_F32, &r));
    CHECK(r.busbw <= limit * (1 + 1e-9));
    CHECK_REL(r.busbw, limit, 0.01);
    CHECK(r.link_util > 0.98);
    CHECK_OK(acc_cost_bound(t, ACC_COLL_ALLREDUCE, 4ull << 30, &bd));
    CHECK(bd.in_switch);
    CHECK(bd.busbw > limit);
    CHECK(r.time_us >= bd.us);
    /* Small: latency-bound, far from the link. */
    CHECK_OK(acc_sim_plan(s, p, 8192, ACC_DT_F32, &r));
    CHECK(r.busbw < 0.05 * limit);
    acc_sim_destroy(s);
    acc_plan_destroy(p);
    acc_topo_destroy(t);
}

ACC_TEST(plans_of_1024_ranks_run)
{
    /* The scale target: ring and hierarchical allreduce over 128 x 8 H100s (timed in
     * bench/bench_sim.c, not here).  Built without the verifier, which bench_plan times. */
    acc_topo_t *t;
    acc_sim_t *s;
    const char *names[] = {"ring", "hier"};
    size_t i;

    CHECK_OK(acc_topo_load("nodes=128 gpus=8 nvlink=18 nic=8x400", &t));
    CHECK_OK(acc_sim_create(t, &s));
    for (i = 0; i < 2; i++) {
        const acc_algo_t *a = acc_algo_find(ACC_COLL_ALLREDUCE, names[i]);
        acc_plan_t *p;
        acc_sim_result_t r;
        acc_bound_t bd;
        uint64_t sends = 0;
        int k;
        CHECK_OK(a->build(t, NULL, &p));
        for (k = 0; k < p->nranks * p->nlanes; k++) {
            uint32_t j;
            for (j = 0; j < p->progs[k].nops; j++)
                sends += p->progs[k].ops[j].code == ACC_OP_SEND ||
                         p->progs[k].ops[j].code == ACC_OP_RECV_COPY_SEND ||
                         p->progs[k].ops[j].code == ACC_OP_RECV_REDUCE_SEND ||
                         p->progs[k].ops[j].code == ACC_OP_RECV_REDUCE_COPY_SEND ||
                         p->progs[k].ops[j].code == ACC_OP_PUT ||
                         p->progs[k].ops[j].code == ACC_OP_GET;
        }
        CHECK_OK(acc_sim_plan(s, p, 256u << 20, ACC_DT_F32, &r));
        CHECK_OK(acc_cost_bound(t, ACC_COLL_ALLREDUCE, 256u << 20, &bd));
        CHECK(r.time_us >= bd.us);
        CHECK(r.busbw > 0 && r.busbw <= bd.busbw);
        CHECK(r.transfers >= sends);
        acc_plan_destroy(p);
    }
    acc_sim_destroy(s);
    acc_topo_destroy(t);
}

ACC_TEST(bound_bandwidth_and_latency)
{
    acc_topo_t *t;
    acc_bound_t b, ag, rs;
    uint64_t n = 1ull << 30;
    /* H100: NCCL's 20.6 GB/s a link, faster than the simulator's 25 x 0.8; A100: both 20. */
    double nic, nvl = 18 * 20.6, a100 = 12 * 20.0;

    /* One node of A100s: the GPU's NVLink egress; allreduce moves twice what allgather
     * moves. */
    CHECK_OK(acc_topo_load("dgx-a100", &t));
    CHECK_OK(acc_cost_bound(t, ACC_COLL_ALLREDUCE, n, &b));
    CHECK(!b.in_switch);
    CHECK_REL(b.bw_us, 2.0 * 7 / 8 * n / (a100 * 1e3), 1e-6);
    CHECK_OK(acc_cost_bound(t, ACC_COLL_ALLGATHER, n, &ag));
    CHECK_OK(acc_cost_bound(t, ACC_COLL_REDUCE_SCATTER, n, &rs));
    CHECK_REL(ag.bw_us, b.bw_us / 2, 1e-9);
    CHECK_REL(rs.bw_us, b.bw_us / 2, 1e-9);
    CHECK_REL(b.busbw, a100, 1e-6);
    acc_topo_destroy(t);

    /* H100s on third-generation NVSwitches, which reduce (NVLS): an allreduce sends the message
     * once each way, 8/7 of what an allgather moves; the others gain nothing. */
    CHECK_OK(acc_topo_load("dgx-h100", &t));
    CHECK_OK(acc_cost_bound(t, ACC_COLL_ALLREDUCE, n, &b));
    CHECK(b.in_switch);
    CHECK_REL(b.bw_us, (double)n / (nvl * 1e3), 1e-6);
    CHECK_OK(acc_cost_bound(t, ACC_COLL_ALLGATHER, n, &ag));
    CHECK_OK(acc_cost_bound(t, ACC_COLL_REDUCE_SCATTER, n, &rs));
    CHECK(!ag.in_switch && !rs.in_switch);
    CHECK_REL(ag.bw_us, b.bw_us * 7 / 8, 1e-9);
    CHECK_REL(rs.bw_us, b.bw_us * 7 / 8, 1e-9);
    /* 8 ranks: 3 hops of the smallest NVLink latency, after a launch. */
    CHECK_OK(acc_cost_bound(t, ACC_COLL_ALLREDUCE, 8, &b));
    CHECK_REL(b.lat_us,
              sim_call_overhead_us(ACC_PROTO_LL) + 3 * sim_peer_latency_us(SIM_CLASS_NVLINK), 1e-9);
    CHECK_REL(b.us, b.lat_us, 1e-12);
    acc_topo_destroy(t);

    /* Four nodes of eight 400 Gb/s NICs (8 x 50 GB/s, their line rate as NCCL counts it): an
     * allgather must bring 31/32 of the message to each GPU over its NVLinks and its NIC (371 +
     * 50 GB/s), which takes longer than the node's 3/4 over its NICs; an allreduce with the
     * switches reducing sends the message once per GPU, and its node cut (2 x 3/4 over the
     * NICs) binds.  At 128 nodes the NICs bind.  Latency adds 2 network hops. */
    CHECK_OK(acc_topo_load("nodes=4 gpus=8 nvlink=18 nic=8x400", &t));
    nic = 8 * 400 / 8.0;
    CHECK_OK(acc_cost_bound(t, ACC_COLL_ALLGATHER, n, &b));
    CHECK_REL(b.bw_us, 31.0 / 32 * n / ((nvl + nic / 8) * 1e3), 1e-6);
    CHECK_REL(b.busbw, nvl + nic / 8, 1e-6);
    CHECK_OK(acc_cost_bound(t, ACC_COLL_ALLREDUCE, n, &b));
    CHECK_REL(b.bw_us, 2.0 * 3 / 4 * n / (nic * 1e3), 1e-9);
    CHECK_OK(acc_cost_bound(t, ACC_COLL_ALLREDUCE, 8, &b));
    CHECK_REL(b.lat_us,
              sim_call_overhead_us(ACC_PROTO_LL) + 3 * sim_peer_latency_us(SIM_CLASS_NVLINK) +
                  2 * acc_topo_network(t)->latency_us,
              1e-9);
    CHECK_ERR(acc_cost_bound(t, ACC_COLL_COUNT, n, &b), ACC_ERR_INVALID);
    acc_topo_destroy(t);
    CHECK_OK(acc_topo_load("nodes=128 gpus=8 nvlink=18 nic=8x400", &t));
    CHECK_OK(acc_cost_bound(t, ACC_COLL_ALLREDUCE, n, &b));
    CHECK_REL(b.bw_us, 2.0 * 127 / 128 * n / (nic * 1e3), 1e-9);
    acc_topo_destroy(t);

    /* PCIe-only GPUs: their PCIe link, at NCCL's PCIe efficiency. */
    CHECK_OK(acc_topo_load("pcie-8gpu", &t));
    CHECK_OK(acc_cost_bound(t, ACC_COLL_ALLREDUCE, n, &b));
    CHECK(b.busbw > 5 && b.busbw < 64 * sim_link_efficiency(ACC_LINK_PCIE, NULL));
    acc_topo_destroy(t);
}

ACC_TEST(errors_are_clear)
{
    acc_topo_t *t = pair(1), *big;
    acc_plan_t *p = bare(2, 1, 1, ACC_PROTO_SIMPLE), *q;
    acc_sim_t *s;
    acc_sim_result_t r;

    CHECK_ERR(acc_sim_create(NULL, &s), ACC_ERR_INVALID);
    CHECK_OK(acc_sim_create(t, &s));
    CHECK_ERR(acc_sim_plan(s, NULL, 1, ACC_DT_F32, &r), ACC_ERR_INVALID);
    CHECK_ERR(acc_sim_plan(s, p, 1, ACC_DT_COUNT, &r), ACC_ERR_INVALID);
    /* A plan for another rank count. */
    CHECK_OK(acc_topo_load("dgx-h100", &big));
    q = gen(big, ACC_COLL_ALLREDUCE, "ring", 1);
    CHECK_ERR(acc_sim_plan(s, q, 1024, ACC_DT_F32, &r), ACC_ERR_INVALID);
    CHECK_MSG_HAS("8 ranks");
    /* A receive nothing sends: the simulation stalls and says where. */
    CHECK_OK(acc_plan_recv(p, 1, 0, 0, acc_ref(ACC_BUF_OUT, 0, 1)));
    CHECK_ERR(acc_sim_plan(s, p, 1024, ACC_DT_F32, &r), ACC_ERR_VERIFY);
    CHECK_MSG_HAS("rank 1 lane 0 op 0 (recv)");
    /* A peer outside the plan is refused before anything is read with it. */
    CHECK_OK(acc_plan_send(p, 0, 0, 7, acc_ref(ACC_BUF_IN, 0, 1)));
    CHECK_ERR(acc_sim_plan(s, p, 1024, ACC_DT_F32, &r), ACC_ERR_INVALID);
    CHECK_MSG_HAS("rank 0 lane 0 op 0 (send) has a peer that is not a rank");
    p->progs[0].nops = 0;
    /* The simulator is still usable afterwards. */
    CHECK_OK(acc_plan_send(p, 0, 0, 1, acc_ref(ACC_BUF_IN, 0, 1)));
    CHECK_OK(acc_sim_plan(s, p, 1024, ACC_DT_F32, &r));
    CHECK(r.time_us > 0);
    acc_sim_destroy(s);
    acc_sim_destroy(NULL);
    acc_plan_destroy(p);
    acc_plan_destroy(q);
    acc_topo_destroy(big);
    acc_topo_destroy(t);
}

ACC_TEST(constants_dump_names_every_source)
{
    acc_buf_t b;
    char *line, *save = NULL;
    int n = 0;
    acc_buf_init(&b);
    CHECK_OK(acc_sim_constants_dump(&b));
    CHECK(strstr(b.data, "nvlink_efficiency") != NULL);
    CHECK(strstr(b.data, "nccl-tests #212") != NULL);
    for (line = strtok_r(b.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        n++;
        /* name, value, then a source of more than a word */
        CHECK_MSG(strlen(line) > 40, "constant without a source: %s", line);
    }
    CHECK(n > 30);
    acc_buf_free(&b);
}

/* A measured device in place of the constants (what bench_kernels predicts the single-GPU
 * executor with): with no launch, a hand-off of 1 us and memory too fast to matter, a plan's
 * time is the count of hand-offs on its critical path - a ring allreduce of 8 ranks passes its
 * chunks on 2(n-1) times, halving-doubling 2 log2 n times; large sizes move at the shared
 * memory's rate, so that doubling it halves the time; a send costs launch + hand-off + its
 * bytes read and written once each way. */
ACC_TEST(a_measured_device_replaces_the_constants)
{
    acc_topo_t *t;
    acc_sim_t *s;
    acc_sim_result_t r, r2;
    acc_plan_t *ring, *rhd, *p;
    acc_sim_device_t dev = {0.0, 1.0, 1e9};
    uint64_t b = 1u << 30;

    CHECK_OK(acc_topo_load("dgx-h100", &t));
    ring = gen(t, ACC_COLL_ALLREDUCE, "ring", 1);
    rhd = gen(t, ACC_COLL_ALLREDUCE, "rhd", 1);
    CHECK_OK(acc_sim_create(t, &s));
    CHECK_OK(acc_sim_set_device(s, &dev));
    CHECK_OK(acc_sim_plan(s, ring, 1024, ACC_DT_F32, &r));
    CHECK_REL(r.time_us, 14.0, 1e-3);
    CHECK_OK(acc_sim_plan(s, rhd, 1024, ACC_DT_F32, &r));
    CHECK_REL(r.time_us, 6.0, 1e-3);
    dev.handoff_us = 1e-6;
    dev.copy_gbs = 2000;
    CHECK_OK(acc_sim_set_device(s, &dev));
    CHECK_OK(acc_sim_plan(s, ring, b, ACC_DT_F32, &r));
    dev.copy_gbs = 4000;
    CHECK_OK(acc_sim_set_device(s, &dev));
    CHECK_OK(acc_sim_plan(s, ring, b, ACC_DT_F32, &r2));
    CHECK_REL(r2.time_us, r.time_us / 2, 0.01);
    /* Bad figures are refused, naming them. */
    dev.copy_gbs = 0;
    CHECK_ERR(acc_sim_set_device(s, &dev), ACC_ERR_INVALID);
    CHECK_MSG_HAS("copy_gbs");
    acc_sim_destroy(s);
    acc_plan_destroy(ring);
    acc_plan_destroy(rhd);
    acc_topo_destroy(t);

    /* One send between two ranks of one device: launch 4 us, hand-off 0.5 us, 1000 GB/s; the
     * message is read once at the sender, written, read and written at the receiver (the
     * simulator's memory weights), all from the one memory. */
    t = pair(18);
    p = bare(2, 1, 1, ACC_PROTO_SIMPLE);
    CHECK_OK(acc_plan_send(p, 0, 0, 1, acc_ref(ACC_BUF_IN, 0, 1)));
    CHECK_OK(acc_plan_recv(p, 1, 0, 0, acc_ref(ACC_BUF_OUT, 0, 1)));
    dev.launch_us = 4.0;
    dev.handoff_us = 0.5;
    dev.copy_gbs = 1000;
    CHECK_OK(acc_sim_create(t, &s));
    CHECK_OK(acc_sim_set_device(s, &dev));
    CHECK_OK(acc_sim_plan(s, p, 1000000, ACC_DT_F32, &r));
    CHECK_REL(r.time_us,
              4.0 + 0.5 + 1e6 * (sim_mem_weight_send() + sim_mem_weight_recv(0)) / (1000 * 1e3),
              1e-6);
    acc_sim_destroy(s);
    acc_plan_destroy(p);
    acc_topo_destroy(t);
}
