/*
 * Instances of the host backend: what a plan's connections and counters are, where they live
 * in each rank's segment (every rank computes every layout from the plan), and the collective
 * set-up that creates, maps and connects them (host_internal.h explains the design).
 */
#include "host_internal.h"

#include <string.h>
#include <sys/mman.h>

#define PAGE 4096u

static uint64_t align(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

acc_status_t hb_plan_fits(const acc_comm_t *c, const acc_plan_t *p)
{
    return acc_plan_runs_on(p, ACC_BACKEND_HOST, c->node_of);
}

/* ---- the plan's connections and counters ----------------------------------------------- */

uint32_t hb_find_conn(const hb_inst_t *in, int from, int to, int lane)
{
    for (uint32_t i = 0; i < in->nconns; i++)
        if (in->conns[i].from == from && in->conns[i].to == to && in->conns[i].lane == lane)
            return i;
    return UINT32_MAX;
}

static uint32_t find_ctr(const hb_inst_t *in, int from, int to, uint32_t slot)
{
    for (uint32_t i = 0; i < in->nctrs; i++)
        if (in->ctrs[i].from == from && in->ctrs[i].to == to && in->ctrs[i].slot == slot)
            return i;
    return UINT32_MAX;
}

/* The connections (sender, receiver, lane) and counters (from, to, slot) into the ranks near
 * this one, from the view's edges: by receiver, then sender and lane or slot, an order every
 * rank that lays out the receiver's segment shares. */
static acc_status_t collect(hb_inst_t *in)
{
    const acc_plan_view_t *v = in->view;
    uint32_t nc = 0, nt = 0;

    for (uint32_t i = 0; i < v->nedges; i++)
        v->edges[i].sig ? nt++ : nc++;
    in->conns = acc_mem_calloc((size_t)nc + 1, sizeof(hb_conn_t));
    in->ctrs = acc_mem_calloc((size_t)nt + 1, sizeof(hb_ctr_t));
    if (!in->conns || !in->ctrs)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < v->nedges; i++) {
        const acc_plan_edge_t *e = &v->edges[i];
        if (e->sig) {
            in->ctrs[in->nctrs++] =
                (hb_ctr_t){.from = e->from, .to = e->to, .slot = e->chan, .per_call = e->count};
            continue;
        }
        hb_conn_t *cn = &in->conns[in->nconns++];
        *cn = (hb_conn_t){.from = e->from,
                          .to = e->to,
                          .lane = (int)e->chan,
                          .maxcnt = e->maxcnt,
                          .per_call = e->count};
        for (int f = 0; f < HB_MAX_RAILS; f++)
            cn->fd[f] = -1;
    }
    in->staged = v->staged;
    return ACC_OK;
}

/* For each operation of this rank: the connections and counter it uses. */
static acc_status_t index_ops(hb_inst_t *in)
{
    const acc_plan_t *p = in->plan;
    uint32_t total = 0, k;
    int l;

    if (!(in->lane_first = acc_mem_calloc((size_t)p->nlanes + 1, sizeof(uint32_t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (l = 0; l < p->nlanes; l++) {
        in->lane_first[l] = total;
        total += acc_plan_prog(p, in->rank, l)->nops;
    }
    in->lane_first[p->nlanes] = total;
    in->in_conn = acc_mem_calloc(total + 1, sizeof(uint32_t));
    in->out_conn = acc_mem_calloc(total + 1, sizeof(uint32_t));
    in->ctr = acc_mem_calloc(total + 1, sizeof(uint32_t));
    if (!in->in_conn || !in->out_conn || !in->ctr)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (l = 0; l < p->nlanes; l++) {
        const acc_lane_prog_t *prog = acc_plan_prog(p, in->rank, l);
        for (k = 0; k < prog->nops; k++) {
            const acc_op_t *op = &prog->ops[k];
            uint32_t i = in->lane_first[l] + k;
            int from = acc_op_recv_peer(op), to = acc_op_send_peer(op);
            in->in_conn[i] = from >= 0 ? hb_find_conn(in, from, in->rank, l) : UINT32_MAX;
            in->out_conn[i] = to >= 0 ? hb_find_conn(in, in->rank, to, l) : UINT32_MAX;
            in->ctr[i] = op->code == ACC_OP_SIGNAL ? find_ctr(in, in->rank, op->peer, op->slot)
                         : op->code == ACC_OP_WAIT ? find_ctr(in, op->peer, in->rank, op->slot)
                                                   : UINT32_MAX;
            if ((from >= 0 && in->in_conn[i] == UINT32_MAX) ||
                (to >= 0 && in->out_conn[i] == UINT32_MAX) ||
                (op->code == ACC_OP_WAIT && in->ctr[i] == UINT32_MAX) ||
                (op->code == ACC_OP_SIGNAL && in->ctr[i] == UINT32_MAX))
                return acc_error_set(ACC_ERR_INVALID,
                                     "%s %s: rank %d lane %d operation %u (%s) waits for what "
                                     "nobody sends (was the plan verified?)",
                                     acc_coll_name(p->coll), p->algo, in->rank, l, k,
                                     acc_op_name((acc_opcode_t)op->code));
        }
    }
    return ACC_OK;
}

/* The segment layouts of the ranks near this one, at capacity in->cap. */
static acc_status_t lay_out(acc_comm_t *c, hb_inst_t *in)
{
    const acc_plan_t *p = in->plan;
    uint64_t ein = acc_plan_buf_elems(p, ACC_BUF_IN, in->cap);
    uint64_t eout = acc_plan_buf_elems(p, ACC_BUF_OUT, in->cap);
    uint64_t cin = p->in_chunks ? (ein + p->in_chunks - 1) / p->in_chunks : 0;
    uint64_t cout = p->out_chunks ? (eout + p->out_chunks - 1) / p->out_chunks : 0;

    in->scratch_cap = cin > cout ? cin : cout;
    if (!(in->layouts = acc_mem_calloc((size_t)p->nranks, sizeof(hb_layout_t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < in->nconns; i++) {
        hb_conn_t *cn = &in->conns[i];
        cn->slot_bytes =
            align(hb_slot_header(cn->maxcnt) + (uint64_t)cn->maxcnt * in->scratch_cap * in->es, 64);
        cn->remote = c->node_of[cn->from] != c->node_of[cn->to];
    }
    for (uint32_t k = 0; k < in->view->nnear; k++) {
        int r = in->view->near[k];
        hb_layout_t *l = &in->layouts[r];
        uint64_t off = PAGE; /* the first page: the segment's header */
        for (uint32_t i = 0; i < in->nctrs; i++)
            if (in->ctrs[i].to == r) {
                in->ctrs[i].off = off;
                off += sizeof(hb_word_t);
            }
        for (uint32_t i = 0; i < in->nconns; i++)
            if (in->conns[i].to == r) {
                in->conns[i].off = off;
                off += sizeof(hb_ring_t) + (uint64_t)p->slots * in->conns[i].slot_bytes;
            }
        l->scratch_len = align(off, 64);
        off = l->scratch_len + ((uint64_t)p->scratch_chunks + 1) * sizeof(int64_t);
        l->scratch = align(off, PAGE);
        off = l->scratch + (uint64_t)p->scratch_chunks * in->scratch_cap * in->es;
        if (in->staged) {
            l->in = align(off, PAGE);
            l->out = align(l->in + ein * in->es, PAGE);
            off = l->out + eout * in->es;
        }
        l->bytes = align(off, PAGE);
    }
    return ACC_OK;
}

static acc_status_t prepare(acc_comm_t *c, hb_inst_t *in)
{
    acc_status_t st;
    const acc_plan_t *p = in->plan;
    /* A whole plan (the ring fallback's, one run through acc_comm_run_plan) is seen as this
     * rank's view of it. */
    if (p->view) {
        in->view = p->view;
    } else {
        if ((st = acc_plan_view_of(p, in->rank, &in->own_view)) != ACC_OK)
            return st;
        in->view = in->own_view->view;
    }
    /* Where an average is divided: the view's flags (without them, at the end of the call). */
    in->final = acc_coll_reduces(p->coll) ? in->view->final : NULL;
    if ((st = collect(in)) != ACC_OK || (st = index_ops(in)) != ACC_OK ||
        (st = lay_out(c, in)) != ACC_OK)
        return st;
    in->seg = acc_mem_calloc((size_t)p->nranks, sizeof(unsigned char *));
    in->seg_bytes = acc_mem_calloc((size_t)p->nranks, sizeof(uint64_t));
    in->next = acc_mem_calloc((size_t)p->nlanes, sizeof(uint32_t));
    if (!in->seg || !in->seg_bytes || !in->next)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < in->nconns; i++) {
        hb_conn_t *cn = &in->conns[i];
        if (cn->remote && cn->from == in->rank &&
            !(cn->outbox = acc_mem_alloc((size_t)cn->slot_bytes * (size_t)p->slots)))
            return acc_error_set(ACC_ERR_NOMEM,
                                 "out of memory for an outbox of %d messages of %llu bytes",
                                 p->slots, (unsigned long long)cn->slot_bytes);
    }
    return hb_seg_map(c, c->be_state, in, in->rank, 1);
}

/* What makes an instance: the plan (by what it is), the element size, the capacity. */
typedef struct {
    uint64_t plan, es, cap;
} inst_ident_t;

static uint64_t plan_key(const acc_plan_t *p)
{
    char text[ACC_PLAN_NAME_MAX + ACC_PLAN_PARAMS_MAX + 64];
    int n = snprintf(text, sizeof(text), "%d %d %d %d %s %s", (int)p->coll, p->nranks, p->root,
                     p->nlanes, p->algo, p->params);
    return acc_fnv1a64(text, n > 0 && (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

/* Do all ranks set up the same instance?  They do unless they made different calls (misuse):
 * then, rather than map each other's memory with different layouts, every rank fails here
 * with the same message, and the communicator is broken. */
static acc_status_t same_instance(acc_comm_t *c, const hb_inst_t *in)
{
    inst_ident_t mine = {plan_key(in->plan), in->es, in->cap}, root = mine;
    boot_vote_t *v = acc_mem_alloc(2 * sizeof(boot_vote_t));
    acc_status_t st;

    if (!v)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    /* Rank 0's call to every rank, and one vote back: no rank is sent every rank's. */
    boot_vote_init(&v[0], ACC_OK);
    if ((st = boot_bcast(c->boot, &root, sizeof(root), 0)) == ACC_OK) {
        if (mine.plan != root.plan || mine.es != root.es || mine.cap != root.cap)
            v[0].status = ACC_ERR_INVALID;
        st = boot_vote(c->boot, &v[0], &v[1]);
    }
    if (st != ACC_OK) {
        acc_mem_free(v);
        return comm_break(c, acc_error_prefix(st, "comparing the ranks' calls: "));
    }
    if (v[1].status != ACC_OK)
        st = acc_error_set(ACC_ERR_INVALID,
                           "rank %d's call needs another plan or size than rank 0's (%s "
                           "of %zu-byte elements): every rank must make the same calls, in "
                           "the same order, with the same count, type, reduction and root",
                           v[1].rank, acc_coll_name(in->plan->coll), (size_t)root.es);
    acc_mem_free(v);
    /* Ranks whose calls went apart cannot be trusted with any later call either. */
    return st == ACC_OK ? st : comm_break(c, st);
}

acc_status_t hb_inst_create(acc_comm_t *c, int id, const acc_plan_t *plan, size_t es, uint64_t cap,
                            hb_inst_t **out)
{
    hb_inst_t *in = acc_mem_calloc(1, sizeof(*in));
    acc_status_t st;

    *out = NULL;
    if (!in)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    in->plan = plan;
    in->rank = c->rank;
    in->id = id;
    in->evfd = -1;
    in->es = es;
    in->cap = cap ? cap : 1;
    /* Each step ends with every rank knowing whether every rank managed it, so that all give
     * up together instead of waiting for a peer that already has. */
    st = comm_agree(c, prepare(c, in), "setting up the shared memory of a plan");
    /* Before anyone maps a peer's segment with this plan's layout. */
    if (st == ACC_OK)
        st = same_instance(c, in);
    if (st == ACC_OK) {
        for (uint32_t k = 0; k < in->view->nnear && st == ACC_OK; k++) {
            int r = in->view->near[k];
            if (r != c->rank && c->node_of[r] == c->node_of[c->rank])
                st = hb_seg_map(c, c->be_state, in, r, 0);
        }
        st = comm_agree(c, st, "mapping the peers' shared memory");
    }
    if (st == ACC_OK)
        st = comm_agree(c, hb_rails_fetch(c, in), "asking for the peers' addresses");
    if (st == ACC_OK)
        st = comm_agree(c, hb_net_connect(c, in), "connecting to the ranks of other nodes");
    /* Once every rank has mapped it, the name has done its work: unlinked, the memory goes
     * away with the last mapping even if a process dies (before, the name says whose it is, so
     * acc_comm_cleanup can remove it if every rank dies now). */
    if (in->seg && in->seg[in->rank])
        hb_seg_unlink(c, c->be_state, in);
    if (st != ACC_OK) {
        hb_inst_destroy(c, in);
        return acc_error_prefix(st, "host backend, %s %s: ", acc_coll_name(plan->coll), plan->algo);
    }
    *out = in;
    return ACC_OK;
}

void hb_inst_destroy(acc_comm_t *c, hb_inst_t *in)
{
    if (!in)
        return;
    hb_net_stop(in);
    for (int r = 0; in->seg && r < in->plan->nranks; r++)
        if (in->seg[r])
            munmap(in->seg[r], (size_t)in->seg_bytes[r]);
    for (uint32_t i = 0; i < in->nconns; i++)
        acc_mem_free(in->conns[i].outbox);
    acc_mem_free(in->seg);
    acc_mem_free(in->seg_bytes);
    acc_mem_free(in->conns);
    acc_mem_free(in->ctrs);
    acc_mem_free(in->layouts);
    acc_mem_free(in->lane_first);
    acc_mem_free(in->in_conn);
    acc_mem_free(in->out_conn);
    acc_mem_free(in->ctr);
    acc_mem_free(in->next);
    acc_plan_destroy(in->own_view);
    acc_mem_free(in);
    (void)c;
}
