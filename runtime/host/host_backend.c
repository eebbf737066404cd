/*
 * The host backend's face to the communicator: which instance serves a call (made on first
 * use, remade larger when a call outgrows it), the caller's buffers in and out, and the AVG
 * epilogue where the plan's reductions could not take it.
 */
#include "host_internal.h"

#include "exec/host_reduce.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

static void destroy(acc_comm_t *c, void *state, int abort)
{
    hb_state_t *s = state;
    (void)abort; /* nothing here waits for peers: segments and sockets just go */
    if (!s)
        return;
    for (size_t i = 0; i < s->ninsts; i++)
        hb_inst_destroy(c, s->insts[i]);
    acc_mem_free(s->insts);
    acc_mem_free(s->pids);
    acc_mem_free(s->pidns);
    acc_mem_free(s->machine);
    hb_rails_free(s);
    acc_mem_free(s);
}

/* Once per process: what dead jobs left in /dev/shm goes before this one adds to it. */
static void cleanup_once(void)
{
    if (acc_comm_cleanup(NULL) != ACC_OK)
        ACC_DEBUG(RUNTIME, "host backend: %s", acc_error_message());
}

/* What a rank tells rank 0 about itself when the backend is made. */
typedef struct {
    int32_t pid, pidns, machine, rails;
} hb_who_t;

/* Rank 0 gathers every rank's record; every rank gets back the rails' summary (the fewest
 * interfaces, the most, and a rank with the fewest) and its node's records - those it names
 * segments after and watches by process id - and no other rank's. */
static acc_status_t meet(acc_comm_t *c, hb_state_t *s, const hb_who_t *mine, int32_t rails[3])
{
    hb_who_t *who = acc_mem_calloc((size_t)c->nranks, sizeof(hb_who_t));
    int *peers = acc_mem_alloc((size_t)c->nranks * sizeof(int)), n = 0;
    acc_status_t st;

    if (!who || !peers) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for the host backend");
        goto out;
    }
    if ((st = boot_gather(c->boot, mine, sizeof(*mine), who)) != ACC_OK)
        goto out;
    if (c->rank == 0) {
        rails[0] = INT32_MAX;
        rails[1] = 0;
        for (int r = 0; r < c->nranks; r++) {
            if (who[r].rails < rails[0]) {
                rails[0] = who[r].rails;
                rails[2] = r;
            }
            if (who[r].rails > rails[1])
                rails[1] = who[r].rails;
        }
    }
    if ((st = boot_bcast(c->boot, rails, 3 * sizeof(int32_t), 0)) != ACC_OK)
        goto out;
    for (int r = 0; r < c->nranks; r++)
        if (r != c->rank && c->node_of[r] == c->node_of[c->rank])
            peers[n++] = r;
    who[c->rank] = *mine;
    if ((st = boot_fetch(c->boot, who, sizeof(hb_who_t), peers, n)) != ACC_OK)
        goto out;
    for (int r = 0; r < c->nranks; r++) {
        s->pids[r] = who[r].pid;
        s->pidns[r] = (unsigned)who[r].pidns;
        s->machine[r] = (unsigned)who[r].machine;
    }
out:
    acc_mem_free(who);
    acc_mem_free(peers);
    return st;
}

static acc_status_t create(acc_comm_t *c, void **state)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    hb_state_t *s = acc_mem_calloc(1, sizeof(*s));
    hb_who_t mine;
    int32_t rails[3] = {0, 0, 0};
    acc_status_t st, rails_st = ACC_OK;
    char rails_msg[512] = "";

    pthread_once(&once, cleanup_once);
    if (s)
        for (int r = 0; r < HB_MAX_RAILS; r++)
            s->rail_listen[r] = -1;
    if (!s || !(s->pids = acc_mem_calloc((size_t)c->nranks, sizeof(int))) ||
        !(s->pidns = acc_mem_calloc((size_t)c->nranks, sizeof(unsigned))) ||
        !(s->machine = acc_mem_calloc((size_t)c->nranks, sizeof(unsigned)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for the host backend");
        goto out;
    }
    s->comm = c;
    /* Every rank names its peers' segments after their creators, and says how many interfaces
     * it has for the connections between nodes. */
    mine.pid = (int32_t)getpid();
    mine.pidns = (int32_t)hb_pid_namespace();
    mine.machine = (int32_t)hb_machine();
    if ((mine.rails = hb_rails_mine(c, s, &rails_st)) < 0)
        snprintf(rails_msg, sizeof(rails_msg), "%s", acc_error_message());
    if ((st = meet(c, s, &mine, rails)) != ACC_OK)
        goto out;
    st = hb_rails_setup(c, s, rails[0], rails[1], rails[2]);
    if (rails_st != ACC_OK)
        st = acc_error_set(rails_st, "%s", rails_msg);
out:
    if (st != ACC_OK) {
        destroy(c, s, 1);
        return st;
    }
    *state = s;
    return ACC_OK;
}

/* The instance of (plan, element size) able to hold count, made or remade collectively.  A
 * set-up every rank saw fail (comm_agree) refuses the plan for calls of this size or more,
 * everywhere, rather than trying again at every call; one that left the ranks apart (a peer
 * gone in the middle of it) breaks the communicator. */
static acc_status_t instance(acc_comm_t *c, hb_state_t *s, const acc_plan_t *plan, size_t es,
                             uint64_t count, hb_inst_t **out, int *broken)
{
    size_t i;
    uint64_t cap = count;
    acc_status_t st;

    if ((st = comm_refused_at(c, plan, count * es)) != ACC_OK)
        return st;
    for (i = 0; i < s->ninsts; i++) {
        hb_inst_t *in = s->insts[i];
        if (in->plan != plan || in->es != es)
            continue;
        if (in->cap >= count) {
            *out = in;
            return ACC_OK;
        }
        /* Grow geometrically, so that a job whose sizes creep up remakes it rarely. */
        cap = in->cap * 2 > count ? in->cap * 2 : count;
        hb_inst_destroy(c, in);
        s->insts[i] = s->insts[--s->ninsts];
        break;
    }
    if (acc_array_reserve((void **)&s->insts, &s->insts_cap, s->ninsts + 1, sizeof(hb_inst_t *)) !=
        ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    st = hb_inst_create(c, s->next_id++, plan, es, cap, out);
    /* Short of shared memory for the doubled capacity: the call's own may still fit. */
    if (st == ACC_ERR_NOMEM && cap > count && comm_error(c) == ACC_OK)
        st = hb_inst_create(c, s->next_id++, plan, es, cap = count, out);
    if (st != ACC_OK) {
        if (comm_error(c) != ACC_OK)
            *broken = 1;
        else
            comm_refuse_at(c, plan, st == ACC_ERR_NOMEM ? cap * es : 0, st, acc_error_message());
        return st;
    }
    s->insts[s->ninsts++] = *out;
    return ACC_OK;
}

/* Does the caller's input overlap its output (NCCL's in place, or worse)? */
static int overlaps(const void *a, uint64_t abytes, const void *b, uint64_t bbytes)
{
    const unsigned char *pa = a, *pb = b;
    return a && b && abytes && bbytes && pa < pb + bbytes && pb < pa + abytes;
}

/* Point the call at its buffers: the caller's, or the segment's for staged plans and for
 * in-place calls a plan cannot run in place. */
static acc_status_t set_buffers(hb_inst_t *in, hb_call_t *call, const rt_call_t *rc, void **tmp)
{
    const acc_plan_t *p = in->plan;
    int me = in->rank;
    uint64_t inb = call->elems[ACC_BUF_IN] * in->es, outb = call->elems[ACC_BUF_OUT] * in->es;
    int has_in = p->coll != ACC_COLL_BROADCAST || me == p->root;
    int has_out = p->coll != ACC_COLL_REDUCE || me == p->root;

    call->base[ACC_BUF_SCRATCH] = in->seg[me] + in->layouts[me].scratch;
    if (in->staged) {
        call->base[ACC_BUF_IN] = in->seg[me] + in->layouts[me].in;
        call->base[ACC_BUF_OUT] = in->seg[me] + in->layouts[me].out;
        if (has_in && inb)
            memcpy(call->base[ACC_BUF_IN], rc->send, (size_t)inb);
        return ACC_OK;
    }
    call->base[ACC_BUF_IN] = has_in ? (unsigned char *)rc->send : NULL;
    call->base[ACC_BUF_OUT] = has_out ? rc->recv : NULL;
    if (has_in && has_out && overlaps(rc->send, inb, rc->recv, outb) &&
        !(p->inplace && rc->inplace)) {
        if (!(*tmp = acc_mem_alloc((size_t)inb)))
            return acc_error_set(ACC_ERR_NOMEM, "out of memory for a copy of the input");
        memcpy(*tmp, rc->send, (size_t)inb);
        call->base[ACC_BUF_IN] = *tmp;
    }
    return ACC_OK;
}

static acc_status_t run(acc_comm_t *c, void *state, const acc_plan_t *plan, const rt_call_t *rc,
                        int *broken)
{
    hb_state_t *s = state;
    size_t es = acc_dtype_size(rc->dt);
    hb_inst_t *in;
    hb_call_t call;
    void *tmp = NULL;
    acc_status_t st;
    int has_out;

    /* Every rank numbers its calls alike, those that fail included (every rank saw the same
     * failure, or the communicator is broken). */
    s->runs++;
    if ((st = instance(c, s, plan, es, rc->count, &in, broken)) != ACC_OK)
        return st;
    memset(&call, 0, sizeof(call));
    call.in = in;
    call.dt = rc->dt;
    call.op = rc->op;
    call.count = rc->count;
    call.elems[ACC_BUF_IN] = acc_plan_buf_elems(plan, ACC_BUF_IN, rc->count);
    call.elems[ACC_BUF_OUT] = acc_plan_buf_elems(plan, ACC_BUF_OUT, rc->count);
    call.elems[ACC_BUF_SCRATCH] = in->scratch_cap;
    /* What the peers compare their calls with (hb_call_rec_t). */
    call.seq = s->runs - 1;
    {
        uint64_t sig[6] = {
            (uint64_t)rc->coll,           rc->count, (uint64_t)rc->dt, (uint64_t)rc->op,
            (uint64_t)(uint32_t)rc->root, call.seq};
        call.sig = (uint32_t)acc_fnv1a64(sig, sizeof(sig));
    }
    call.timeout_ms = c->timeout_ms;
    call.abort_flag = &c->abort;
    call.comm = c;
    if ((st = set_buffers(in, &call, rc, &tmp)) != ACC_OK)
        return st;
    /* Scratch chunks start unwritten.  No peer touches this rank's memory before a signal of
     * this call, so resetting here cannot race with them. */
    memset(in->seg[in->rank] + in->layouts[in->rank].scratch_len, 0xff,
           ((size_t)plan->scratch_chunks + 1) * sizeof(int64_t));
    hb_call_publish(&call, rc);
    st = hb_run_lanes(&call);
    if (st != ACC_OK) {
        acc_error_set(st, "%s", call.msg);
        *broken = 1; /* the counters of this instance no longer agree between the ranks */
    } else {
        in->calls++;
        has_out = plan->coll != ACC_COLL_REDUCE || in->rank == plan->root;
        if (in->staged && has_out && call.elems[ACC_BUF_OUT])
            memcpy(rc->recv, call.base[ACC_BUF_OUT], (size_t)(call.elems[ACC_BUF_OUT] * es));
        /* The operations that complete the sums divided them already where the plan says
         * which they are (host_data.c). */
        if (rc->op == ACC_RED_AVG && acc_coll_reduces(plan->coll) && has_out && !in->final)
            hx_divide(rc->dt, rc->recv, (size_t)call.elems[ACC_BUF_OUT], plan->nranks);
    }
    acc_mem_free(tmp);
    return st;
}

const rt_backend_t rt_host_backend = {
    .name = "host",
    .create = create,
    .destroy = destroy,
    .run = run,
    .supports = hb_plan_fits,
    .rank_views = 1,
};
