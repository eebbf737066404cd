/*
 * The host executor: runs a plan with one thread per (rank, lane) over real buffers, following
 * the execution model of acc_plan.h to the letter, so that a wrong plan gives wrong numbers or a
 * reported deadlock here before it ever reaches a GPU.
 *
 * - Connections are FIFO rings of plan->slots messages per (sender, receiver, lane).  A send
 *   copies its data into the ring (real buffering) and blocks while the ring is full; a receive
 *   blocks while it is empty.  The fused forms receive first and release the incoming message
 *   before they send, exactly as a receive followed by a send would.
 * - A message carries its chunks and the element count of each: with sizes that do not divide,
 *   chunks differ by one element, and a scratch chunk takes the length of whatever was last
 *   written to it (scratch chunks have room for the largest input or output chunk).  Writing a
 *   chunk of another length into an input or output chunk is reported, never truncated.
 * - Explicit dependencies wait for the other lane's operation to complete; SIGNAL/WAIT use
 *   counters per (from, to, slot).  Peer-memory operations touch the other rank's buffers
 *   directly and are ordered only by those counters.
 * - In place, input and output alias as acc_plan.h says.  The caller passes in out[r] the larger
 *   of the two buffers: for allgather the output (input at out[r] + r x count elements), for
 *   reduce_scatter the input (the result lands at out[r] + r x count elements).
 *
 * All shared state changes under one mutex; each thread sleeps on its own condition variable
 * and is woken only by the change it waits for.  That makes deadlock detection exact: when every
 * live thread is blocked, nothing can ever change again, and the run stops at once with the
 * list of stuck operations.  A watchdog on the progress counter stands behind it.
 */
#include "host_exec.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

/* Threads run small frames only (kernels use blocks of 256 elements), so 512 threads of one
 * 64-rank x 8-lane plan fit easily. */
#define WORKER_STACK (256u * 1024u)
/* Seconds without any completed operation or moved chunk before the watchdog stops the run.
 * Exact detection reports real deadlocks at once; this catches only what it cannot see. */
#define WATCHDOG_SECONDS 20
#define DEADLOCK         "deadlock: every remaining thread is blocked"

static void lock(exec_t *x)
{
    pthread_mutex_lock(&x->lock);
}

static void unlock(exec_t *x)
{
    pthread_mutex_unlock(&x->lock);
}

void hx_wake(exec_t *x, worker_t *w)
{
    if (w->blocked) {
        w->blocked = 0;
        x->nblocked--;
        pthread_cond_signal(&w->cond);
    }
}

static void abort_all(exec_t *x)
{
    int i;
    x->abort = 1;
    for (i = 0; i < x->nworkers; i++)
        pthread_cond_signal(&x->workers[i].cond);
    pthread_cond_signal(&x->main_cond);
}

int hx_fail(exec_t *x, const worker_t *w, acc_status_t st, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    const acc_op_t *op = &w->prog->ops[w->cur_op];

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    lock(x);
    if (x->status == ACC_OK) {
        x->status = st;
        snprintf(x->msg, sizeof(x->msg), "rank %d lane %d operation %u (%s): %s", w->rank, w->lane,
                 w->cur_op, acc_op_name((acc_opcode_t)op->code), what);
    }
    abort_all(x);
    unlock(x);
    return -1;
}

static const char *wait_text(const exec_t *x, const worker_t *w, char *buf, size_t len)
{
    const acc_op_t *op = &w->prog->ops[w->cur_op];
    const conn_t *c = w->wait_conn < x->nconns ? &x->conns[w->wait_conn] : NULL;
    switch (w->wait_kind) {
    case W_SPACE:
        snprintf(buf, len, "send to rank %d: connection full (%d messages not received)",
                 c ? c->receiver / x->plan->nlanes : -1, x->plan->slots);
        break;
    case W_MSG:
        snprintf(buf, len, "receive from rank %d: nothing sent",
                 c ? c->sender / x->plan->nlanes : -1);
        break;
    case W_DEP:
        snprintf(buf, len, "waits for lane %d operation %u", w->wait_lane, w->wait_op);
        break;
    case W_SIGNAL:
        snprintf(buf, len, "waits for signal %u from rank %d to reach %u (it is %u)", w->wait_slot,
                 w->wait_peer, w->wait_value,
                 x->counters[hx_counter(x, w->wait_peer, w->rank, w->wait_slot)]);
        break;
    default:
        snprintf(buf, len, "%s", acc_op_name((acc_opcode_t)op->code));
        break;
    }
    return buf;
}

/* Stop the run (lock held), naming the operations the threads are stuck in. */
static void report_stuck(exec_t *x, const char *why)
{
    char line[160], msg[sizeof(x->msg)];
    size_t len;
    int i, shown = 0, stuck = 0;

    len = (size_t)snprintf(msg, sizeof(msg), "%s;", why);
    for (i = 0; i < x->nworkers; i++) {
        const worker_t *w = &x->workers[i];
        if (!w->prog->nops || w->finished)
            continue;
        stuck++;
        if (shown < 6 && len < sizeof(msg)) {
            len +=
                (size_t)snprintf(msg + len, sizeof(msg) - len, " rank %d lane %d op %u (%s)",
                                 w->rank, w->lane, w->cur_op, wait_text(x, w, line, sizeof(line)));
            shown++;
        }
    }
    if (stuck > shown && len < sizeof(msg))
        snprintf(msg + len, sizeof(msg) - len, " and %d more", stuck - shown);
    if (x->status == ACC_OK) {
        x->status = ACC_ERR_INTERNAL;
        memcpy(x->msg, msg, sizeof(msg));
    }
    abort_all(x);
}

static int ready(const exec_t *x, const worker_t *w)
{
    switch (w->wait_kind) {
    case W_SPACE:
        return x->conns[w->wait_conn].count < (uint32_t)x->plan->slots;
    case W_MSG:
        return x->conns[w->wait_conn].count > 0;
    case W_DEP:
        return x->workers[w->rank * x->plan->nlanes + w->wait_lane].done > w->wait_op;
    case W_SIGNAL:
        return x->counters[hx_counter(x, w->wait_peer, w->rank, w->wait_slot)] >= w->wait_value;
    default:
        return 1;
    }
}

int hx_block(exec_t *x, worker_t *w)
{
    while (!ready(x, w)) {
        if (x->abort)
            return -1;
        w->blocked = 1;
        x->nblocked++;
        if (x->nblocked == x->nlive) {
            report_stuck(x, DEADLOCK);
            return -1;
        }
        while (w->blocked && !x->abort)
            pthread_cond_wait(&w->cond, &x->lock);
        if (w->blocked) {
            w->blocked = 0;
            x->nblocked--;
        }
    }
    w->wait_kind = W_NONE;
    return x->abort ? -1 : 0;
}

/* Operation completed (lock held): wake lanes of the rank waiting for it. */
static void complete(exec_t *x, worker_t *w)
{
    int l, base = w->rank * x->plan->nlanes;
    w->done++;
    atomic_fetch_add(&x->progress, 1);
    for (l = 0; l < x->plan->nlanes; l++) {
        worker_t *o = &x->workers[base + l];
        if (o->blocked && o->wait_kind == W_DEP && o->wait_lane == w->lane && o->wait_op < w->done)
            hx_wake(x, o);
    }
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    exec_t *x = w->x;
    uint32_t k;

    for (k = 0; k < w->prog->nops; k++) {
        const acc_op_t *op = &w->prog->ops[k];
        lock(x);
        w->cur_op = k;
        if (op->dep_lane >= 0) {
            w->wait_kind = W_DEP;
            w->wait_lane = op->dep_lane;
            w->wait_op = (uint32_t)op->dep_op;
            if (hx_block(x, w) != 0) {
                unlock(x);
                break;
            }
        }
        if (x->abort) {
            unlock(x);
            break;
        }
        unlock(x);
        if (hx_run_op(x, w, op) != 0)
            break;
        lock(x);
        complete(x, w);
        unlock(x);
    }
    lock(x);
    w->finished = 1;
    x->nlive--;
    if (x->nlive == 0)
        pthread_cond_signal(&x->main_cond);
    else if (x->nblocked == x->nlive && !x->abort)
        report_stuck(x, DEADLOCK);
    unlock(x);
    return NULL;
}

/* ---- setup -------------------------------------------------------------------------------- */

static uint32_t ref_limit(const acc_plan_t *p, uint8_t buf)
{
    return buf == ACC_BUF_IN    ? p->in_chunks
           : buf == ACC_BUF_OUT ? p->out_chunks
                                : p->scratch_chunks;
}

static int ref_ok(const acc_plan_t *p, acc_ref_t r)
{
    return r.buf < ACC_BUF_COUNT && (uint64_t)r.off + r.cnt <= ref_limit(p, r.buf);
}

/* Which operands an operation uses: bit 0 src, bit 1 dst, bit 2 peer, bit 3 peer2. */
static unsigned op_uses(uint8_t code)
{
    switch (code) {
    case ACC_OP_SEND:
        return 1 | 4;
    case ACC_OP_RECV:
        return 2 | 4;
    case ACC_OP_RECV_REDUCE_COPY:
        return 1 | 2 | 4;
    case ACC_OP_RECV_COPY_SEND:
        return 2 | 4 | 8;
    case ACC_OP_RECV_REDUCE_SEND:
        return 1 | 4 | 8;
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        return 1 | 2 | 4 | 8;
    case ACC_OP_COPY:
    case ACC_OP_REDUCE:
        return 1 | 2;
    case ACC_OP_PUT:
    case ACC_OP_GET:
        return 1 | 2 | 4;
    case ACC_OP_REDUCE_PEERS:
        return 1 | 2;
    case ACC_OP_SIGNAL:
    case ACC_OP_WAIT:
        return 4;
    default:
        return 0;
    }
}

/* Structural checks that keep an unverified plan from crashing the executor. */
static acc_status_t check_plan(const acc_plan_t *p, uint32_t *nslots)
{
    int r, l;
    uint32_t k, j;
    *nslots = 0;
    if (p->slots < 1)
        return acc_error_set(ACC_ERR_INVALID,
                             "plan has %d slots per connection; at least 1 is "
                             "needed",
                             p->slots);
    for (r = 0; r < p->nranks; r++) {
        for (l = 0; l < p->nlanes; l++) {
            const acc_lane_prog_t *prog = acc_plan_prog(p, r, l);
            for (k = 0; k < prog->nops; k++) {
                const acc_op_t *op = &prog->ops[k];
                unsigned u = op_uses(op->code);
                const char *bad = NULL;
                if (op->code >= ACC_OP_COUNT)
                    bad = "unknown operation code";
                else if ((u & 1) && !ref_ok(p, op->src))
                    bad = "source chunks outside the buffer";
                else if ((u & 2) && !ref_ok(p, op->dst))
                    bad = "destination chunks outside the buffer";
                else if ((u & 4) && (op->peer < 0 || op->peer >= p->nranks))
                    bad = "peer outside the ranks";
                else if ((u & 8) && (op->peer2 < 0 || op->peer2 >= p->nranks))
                    bad = "forwarding peer outside the ranks";
                else if (op->dep_lane >= 0 &&
                         (op->dep_lane >= p->nlanes || op->dep_lane == l || op->dep_op < 0 ||
                          (uint32_t)op->dep_op >= acc_plan_prog(p, r, op->dep_lane)->nops))
                    bad = "dependency on an operation that does not exist";
                else if (op->code == ACC_OP_REDUCE_PEERS &&
                         (op->npeers == 0 || (uint64_t)op->peers_off + op->npeers > p->npeer_pool))
                    bad = "peer list outside the plan's pool";
                if (op->code == ACC_OP_REDUCE_PEERS && !bad)
                    for (j = 0; j < op->npeers; j++)
                        if (p->peer_pool[op->peers_off + j] >= (uint32_t)p->nranks)
                            bad = "peer list names a rank outside the plan";
                if (bad)
                    return acc_error_set(ACC_ERR_INVALID,
                                         "host executor: rank %d lane %d "
                                         "operation %u (%s): %s",
                                         r, l, k, acc_op_name((acc_opcode_t)op->code), bad);
                if ((op->code == ACC_OP_SIGNAL || op->code == ACC_OP_WAIT) &&
                    op->slot + 1u > *nslots)
                    *nslots = op->slot + 1u;
            }
        }
    }
    return ACC_OK;
}

/* Open-addressing map from a connection key to its index in x->conns. */
typedef struct {
    uint64_t *keys;
    uint32_t *vals;
    size_t cap;
} conn_map_t;

static uint32_t conn_find(exec_t *x, conn_map_t *m, int s, int r, int lane)
{
    uint64_t key =
        ((uint64_t)s * (uint64_t)x->plan->nranks + (uint64_t)r) * (uint64_t)x->plan->nlanes +
        (uint64_t)lane + 1;
    size_t i = (size_t)(acc_fnv1a64(&key, sizeof(key)) & (m->cap - 1));
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->keys[i]) {
        conn_t *c = &x->conns[x->nconns];
        m->keys[i] = key;
        m->vals[i] = x->nconns++;
        c->sender = s * x->plan->nlanes + lane;
        c->receiver = r * x->plan->nlanes + lane;
    }
    return m->vals[i];
}

/* Give every operation the index of the connections it sends on and receives from. */
static acc_status_t map_connections(exec_t *x)
{
    const acc_plan_t *p = x->plan;
    conn_map_t m = {NULL, NULL, 16};
    size_t nops = acc_plan_op_count(p), i;
    acc_status_t st = ACC_OK;
    uint32_t k;

    while (m.cap < 2 * nops + 16)
        m.cap *= 2;
    m.keys = acc_mem_calloc(m.cap, sizeof(uint64_t));
    m.vals = acc_mem_calloc(m.cap, sizeof(uint32_t));
    /* at most two connections per operation */
    x->conns = acc_mem_calloc(2 * nops + 1, sizeof(conn_t));
    if (!m.keys || !m.vals || !x->conns) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory mapping the plan's connections");
        goto out;
    }
    for (i = 0; i < (size_t)x->nworkers; i++) {
        worker_t *w = &x->workers[i];
        if (!w->prog->nops)
            continue;
        w->in_conn = acc_mem_calloc(w->prog->nops, sizeof(uint32_t));
        w->out_conn = acc_mem_calloc(w->prog->nops, sizeof(uint32_t));
        if (!w->in_conn || !w->out_conn) {
            st = acc_error_set(ACC_ERR_NOMEM, "out of memory mapping the plan's connections");
            goto out;
        }
        for (k = 0; k < w->prog->nops; k++) {
            const acc_op_t *op = &w->prog->ops[k];
            unsigned u = op_uses(op->code);
            if (op->code == ACC_OP_SEND)
                w->out_conn[k] = conn_find(x, &m, w->rank, op->peer, w->lane);
            else if (op->code <= ACC_OP_RECV_REDUCE_COPY_SEND)
                w->in_conn[k] = conn_find(x, &m, op->peer, w->rank, w->lane);
            if (u & 8)
                w->out_conn[k] = conn_find(x, &m, w->rank, op->peer2, w->lane);
        }
    }
out:
    acc_mem_free(m.keys);
    acc_mem_free(m.vals);
    return st;
}

/* x->owned has room for two buffers per rank, all this is ever asked for. */
static void *private_buffer(exec_t *x, uint64_t bytes)
{
    void *p = acc_mem_calloc(1, bytes ? (size_t)bytes : 1);
    if (p)
        x->owned[x->nowned++] = p;
    return p;
}

/* Point each rank's three buffers at the caller's memory, aliased in place, or at private
 * memory where the collective has no such buffer on that rank. */
static acc_status_t map_buffers(exec_t *x, void *const *in, void *const *out, int inplace)
{
    const acc_plan_t *p = x->plan;
    static unsigned char empty[16];
    uint64_t ein = acc_plan_buf_elems(p, ACC_BUF_IN, x->count);
    uint64_t eout = acc_plan_buf_elems(p, ACC_BUF_OUT, x->count);
    uint64_t shift = x->count * x->es, cin = 0, cout = 0, sbytes;
    int r;

    if (p->in_chunks)
        cin = (ein + p->in_chunks - 1) / p->in_chunks;
    if (p->out_chunks)
        cout = (eout + p->out_chunks - 1) / p->out_chunks;
    x->scratch_cap = cin > cout ? cin : cout;
    if ((ein && ein > SIZE_MAX / 2 / x->es) || (eout && eout > SIZE_MAX / 2 / x->es) ||
        (p->scratch_chunks && x->scratch_cap > SIZE_MAX / 2 / x->es / p->scratch_chunks))
        return acc_error_set(ACC_ERR_RANGE, "host executor: %llu elements do not fit in memory",
                             (unsigned long long)x->count);
    sbytes = x->scratch_cap * x->es * p->scratch_chunks;
    for (r = 0; r < p->nranks; r++) {
        rank_mem_t *m = &x->mem[r];
        int has_in = p->coll != ACC_COLL_BROADCAST || r == p->root;
        int has_out = p->coll != ACC_COLL_REDUCE || r == p->root;
        unsigned char *o = out ? out[r] : NULL;
        m->elems[ACC_BUF_IN] = ein;
        m->elems[ACC_BUF_OUT] = eout;
        m->nchunks[ACC_BUF_IN] = p->in_chunks;
        m->nchunks[ACC_BUF_OUT] = p->out_chunks;
        m->nchunks[ACC_BUF_SCRATCH] = p->scratch_chunks;
        if (inplace) {
            if (!o && (ein || eout) && (has_in || has_out))
                return acc_error_set(ACC_ERR_INVALID, "host executor: out[%d] is NULL", r);
            if (!o)
                o = private_buffer(x, (ein > eout ? ein : eout) * x->es);
            m->base[ACC_BUF_IN] = m->base[ACC_BUF_OUT] = o;
            if (p->coll == ACC_COLL_ALLGATHER && ein)
                m->base[ACC_BUF_IN] = o + (uint64_t)r * shift;
            if (p->coll == ACC_COLL_REDUCE_SCATTER && eout)
                m->base[ACC_BUF_OUT] = o + (uint64_t)r * shift;
        } else {
            m->base[ACC_BUF_IN] = in ? in[r] : NULL;
            m->base[ACC_BUF_OUT] = o;
            if (!m->base[ACC_BUF_IN] && ein && has_in)
                return acc_error_set(ACC_ERR_INVALID, "host executor: in[%d] is NULL", r);
            if (!m->base[ACC_BUF_OUT] && eout && has_out)
                return acc_error_set(ACC_ERR_INVALID, "host executor: out[%d] is NULL", r);
            if (!m->base[ACC_BUF_IN])
                m->base[ACC_BUF_IN] = private_buffer(x, ein * x->es);
            if (!m->base[ACC_BUF_OUT])
                m->base[ACC_BUF_OUT] = private_buffer(x, eout * x->es);
        }
        if (!ein)
            m->base[ACC_BUF_IN] = empty;
        if (!eout)
            m->base[ACC_BUF_OUT] = empty;
        m->base[ACC_BUF_SCRATCH] = sbytes ? acc_mem_alloc((size_t)sbytes) : empty;
        m->own_scratch = sbytes != 0;
        m->scratch_len = acc_mem_alloc((p->scratch_chunks + 1) * sizeof(int64_t));
        if (!m->base[ACC_BUF_IN] || !m->base[ACC_BUF_OUT] || !m->base[ACC_BUF_SCRATCH] ||
            !m->scratch_len)
            return acc_error_set(ACC_ERR_NOMEM,
                                 "host executor: out of memory for the buffers "
                                 "of rank %d",
                                 r);
        memset(m->scratch_len, 0xff, (p->scratch_chunks + 1) * sizeof(int64_t));
    }
    return ACC_OK;
}

static void exec_free(exec_t *x)
{
    int i;
    uint32_t c, s;
    if (x->mem)
        for (i = 0; i < x->plan->nranks; i++) {
            if (x->mem[i].own_scratch)
                acc_mem_free(x->mem[i].base[ACC_BUF_SCRATCH]);
            acc_mem_free(x->mem[i].scratch_len);
        }
    for (c = 0; x->conns && c < x->nconns; c++)
        for (s = 0; x->conns[c].ring && s < (uint32_t)x->plan->slots; s++) {
            acc_mem_free(x->conns[c].ring[s].data);
            acc_mem_free(x->conns[c].ring[s].lens);
        }
    for (c = 0; x->conns && c < x->nconns; c++)
        acc_mem_free(x->conns[c].ring);
    for (i = 0; x->workers && i < x->nworkers; i++) {
        acc_mem_free(x->workers[i].in_conn);
        acc_mem_free(x->workers[i].out_conn);
        acc_mem_free(x->workers[i].tmp.data);
        acc_mem_free(x->workers[i].tmp.lens);
        acc_mem_free(x->workers[i].ptrs);
        pthread_cond_destroy(&x->workers[i].cond);
    }
    for (i = 0; i < (int)x->nowned; i++)
        acc_mem_free(x->owned[i]);
    acc_mem_free(x->workers);
    acc_mem_free(x->conns);
    acc_mem_free(x->counters);
    acc_mem_free(x->mem);
    acc_mem_free(x->owned);
    pthread_cond_destroy(&x->main_cond);
    pthread_mutex_destroy(&x->lock);
}

/* AVG: divide the sum by nranks once, on the outputs the postcondition defines. */
static void divide_outputs(exec_t *x)
{
    const acc_plan_t *p = x->plan;
    int r;
    if (x->op != ACC_RED_AVG || !acc_coll_reduces(p->coll))
        return;
    for (r = 0; r < p->nranks; r++)
        if (p->coll != ACC_COLL_REDUCE || r == p->root)
            hx_divide(x->dt, x->mem[r].base[ACC_BUF_OUT], (size_t)x->mem[r].elems[ACC_BUF_OUT],
                      p->nranks);
}

/* Start the threads, watch them, and wait for the end. */
static void run_workers(exec_t *x)
{
    pthread_attr_t attr;
    size_t stack = WORKER_STACK;
    uint64_t last = UINT64_MAX;
    time_t since = time(NULL);
    int i, started = 0, wanted = x->nlive;

    pthread_attr_init(&attr);
    if (stack < (size_t)PTHREAD_STACK_MIN)
        stack = (size_t)PTHREAD_STACK_MIN;
    pthread_attr_setstacksize(&attr, stack);
    for (i = 0; i < x->nworkers; i++) {
        worker_t *w = &x->workers[i];
        if (!w->prog->nops)
            continue;
        if (pthread_create(&w->tid, &attr, worker_main, w) != 0)
            break;
        w->started = 1;
        started++;
    }
    pthread_attr_destroy(&attr);
    lock(x);
    if (started < wanted) {
        x->nlive -= wanted - started;
        if (x->status == ACC_OK) {
            x->status = ACC_ERR_NOMEM;
            snprintf(x->msg, sizeof(x->msg), "host executor: could only start %d of %d threads",
                     started, wanted);
        }
        abort_all(x);
    }
    while (x->nlive > 0) {
        struct timespec ts;
        uint64_t now = atomic_load(&x->progress);
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        if (now != last) {
            last = now;
            since = time(NULL);
        } else if (!x->abort && time(NULL) - since >= WATCHDOG_SECONDS) {
            char why[96];
            snprintf(why, sizeof(why), "watchdog: no operation completed for %d s",
                     WATCHDOG_SECONDS);
            report_stuck(x, why);
        }
        pthread_cond_timedwait(&x->main_cond, &x->lock, &ts);
    }
    unlock(x);
    for (i = 0; i < x->nworkers; i++)
        if (x->workers[i].started)
            pthread_join(x->workers[i].tid, NULL);
}

acc_status_t acc_host_exec(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op, uint64_t count,
                           void *const *in, void *const *out, int inplace)
{
    exec_t x;
    acc_status_t st;
    uint32_t nslots;
    int i;

    if (!plan)
        return acc_error_set(ACC_ERR_INVALID, "host executor: no plan");
    if (dt < 0 || dt >= ACC_DT_COUNT || op < 0 || op >= ACC_RED_COUNT)
        return acc_error_set(ACC_ERR_INVALID,
                             "host executor: data type %d or reduction %d is "
                             "not one of acc_dtype_t / acc_redop_t",
                             (int)dt, (int)op);
    if (inplace && !plan->inplace)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "host executor: plan '%s' does not support "
                             "in-place operation",
                             plan->algo);
    if ((plan->coll == ACC_COLL_BROADCAST || plan->coll == ACC_COLL_REDUCE) &&
        (plan->root < 0 || plan->root >= plan->nranks))
        return acc_error_set(ACC_ERR_INVALID, "host executor: %s plan has root %d of %d ranks",
                             acc_coll_name(plan->coll), plan->root, plan->nranks);
    st = check_plan(plan, &nslots);
    if (st != ACC_OK)
        return st;

    memset(&x, 0, sizeof(x));
    x.plan = plan;
    x.dt = dt;
    x.op = op;
    x.es = acc_dtype_size(dt);
    x.count = count;
    x.nslots = nslots;
    x.nworkers = plan->nranks * plan->nlanes;
    pthread_mutex_init(&x.lock, NULL);
    pthread_cond_init(&x.main_cond, NULL);
    atomic_init(&x.progress, 0);
    x.workers = acc_mem_calloc((size_t)x.nworkers, sizeof(worker_t));
    x.mem = acc_mem_calloc((size_t)plan->nranks, sizeof(rank_mem_t));
    x.owned = acc_mem_calloc(2 * (size_t)plan->nranks, sizeof(void *));
    x.counters =
        acc_mem_calloc((size_t)plan->nranks * plan->nranks * (nslots ? nslots : 1), sizeof(uint32_t));
    if (!x.workers || !x.mem || !x.owned || !x.counters) {
        acc_mem_free(x.workers);
        x.workers = NULL;
        st =
            acc_error_set(ACC_ERR_NOMEM, "host executor: out of memory for %d threads", x.nworkers);
        goto out;
    }
    for (i = 0; i < x.nworkers; i++) {
        worker_t *w = &x.workers[i];
        w->x = &x;
        w->rank = i / plan->nlanes;
        w->lane = i % plan->nlanes;
        w->prog = &plan->progs[i];
        w->wait_conn = UINT32_MAX;
        pthread_cond_init(&w->cond, NULL);
        if (w->prog->nops)
            x.nlive++;
    }
    st = map_buffers(&x, in, out, inplace);
    if (st == ACC_OK)
        st = map_connections(&x);
    if (st != ACC_OK)
        goto out;
    run_workers(&x);
    if (x.status != ACC_OK) {
        st = acc_error_set(x.status, "%s", x.msg);
        goto out;
    }
    divide_outputs(&x);
out:
    exec_free(&x);
    return st;
}
