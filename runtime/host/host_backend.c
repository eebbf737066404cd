/*
 * The host backend's face to the communicator: which instance serves a call (made on first
 * use, remade larger when a call outgrows it), the caller's buffers in and out, and the AVG
 * epilogue where the plan's reductions could not take it.
 */
#include "host_internal.h"

#include "exec/host_reduce.h"

#include <string.h>

static acc_status_t create(acc_comm_t *c, void **state)
{
    hb_state_t *s = acc_mem_calloc(1, sizeof(*s));
    if (!s)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the host backend");
    s->comm = c;
    *state = s;
    return ACC_OK;
}

static void destroy(acc_comm_t *c, void *state, int abort)
{
    hb_state_t *s = state;
    (void)abort; /* nothing here waits for peers: segments and sockets just go */
    if (!s)
        return;
    for (size_t i = 0; i < s->ninsts; i++)
        hb_inst_destroy(c, s->insts[i]);
    acc_mem_free(s->insts);
    acc_mem_free(s);
}

/* The instance of (plan, element size) able to hold count, made or remade collectively. */
static acc_status_t instance(acc_comm_t *c, hb_state_t *s, const acc_plan_t *plan, size_t es,
                             uint64_t count, hb_inst_t **out)
{
    size_t i;
    uint64_t cap = count;
    acc_status_t st;

    if ((st = comm_refused(c, plan)) != ACC_OK)
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
    if ((st = hb_inst_create(c, s->next_id++, plan, es, cap, out)) != ACC_OK) {
        /* Every rank saw the same failure (the set-up agrees on it): refuse the plan from now
         * on, everywhere, rather than trying again at every call. */
        comm_refuse(c, plan);
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

    if ((st = instance(c, s, plan, es, rc->count, &in)) != ACC_OK)
        return st;
    memset(&call, 0, sizeof(call));
    call.in = in;
    call.dt = rc->dt;
    call.op = rc->op;
    call.count = rc->count;
    call.elems[ACC_BUF_IN] = acc_plan_buf_elems(plan, ACC_BUF_IN, rc->count);
    call.elems[ACC_BUF_OUT] = acc_plan_buf_elems(plan, ACC_BUF_OUT, rc->count);
    call.elems[ACC_BUF_SCRATCH] = in->scratch_cap;
    call.timeout_ms = c->timeout_ms;
    call.abort_flag = &c->abort;
    if ((st = set_buffers(in, &call, rc, &tmp)) != ACC_OK)
        return st;
    /* Scratch chunks start unwritten.  No peer touches this rank's memory before a signal of
     * this call, so resetting here cannot race with them. */
    memset(in->seg[in->rank] + in->layouts[in->rank].scratch_len, 0xff,
           ((size_t)plan->scratch_chunks + 1) * sizeof(int64_t));
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
};
