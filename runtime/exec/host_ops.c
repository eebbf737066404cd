/*
 * The data half of the host executor: what each operation does to the buffers, and the
 * connection rings.  Runs without the executor's lock except around the ring indices and the
 * signal counters (host_exec.h says which fields are shared).
 */
#include "host_exec.h"

#include <string.h>

static void lock(exec_t *x)
{
    pthread_mutex_lock(&x->lock);
}

static void unlock(exec_t *x)
{
    pthread_mutex_unlock(&x->lock);
}

/* Chunk c of buffer b at rank r: its first element, and how many it holds (-1: a scratch chunk
 * nothing has been written to yet). */
static unsigned char *chunk(exec_t *x, int r, uint8_t b, uint32_t c, int64_t *n)
{
    rank_mem_t *m = &x->mem[r];
    uint64_t first, cnt;
    if (b == ACC_BUF_SCRATCH) {
        *n = m->scratch_len[c];
        return m->base[b] + (size_t)c * x->scratch_cap * x->es;
    }
    acc_chunk_range(m->elems[b], m->nchunks[b], c, &first, &cnt);
    *n = (int64_t)cnt;
    return m->base[b] + first * x->es;
}

/* Chunk t of ref at rank r, read: it must hold data. */
static const unsigned char *src_chunk(exec_t *x, worker_t *w, int r, acc_ref_t ref, uint32_t t,
                                      uint64_t *n)
{
    int64_t len;
    const unsigned char *p = chunk(x, r, ref.buf, ref.off + t, &len);
    if (len < 0) {
        hx_fail(x, w, ACC_ERR_INVALID,
                "reads scratch chunk %u of rank %d before anything was "
                "written to it",
                ref.off + t, r);
        return NULL;
    }
    *n = (uint64_t)len;
    return p;
}

/* Chunk t of ref at rank r, about to be given n elements.  A scratch chunk takes the length; an
 * input or output chunk must already have it, or the plan moves data between chunks that are
 * not the same part of the message. */
static unsigned char *dst_chunk(exec_t *x, worker_t *w, int r, acc_ref_t ref, uint32_t t,
                                uint64_t n)
{
    int64_t len;
    unsigned char *p = chunk(x, r, ref.buf, ref.off + t, &len);
    if (ref.buf == ACC_BUF_SCRATCH) {
        if (n > x->scratch_cap) {
            hx_fail(x, w, ACC_ERR_INVALID,
                    "writes %llu elements into scratch chunk %u of rank "
                    "%d, which holds at most %llu",
                    (unsigned long long)n, ref.off + t, r, (unsigned long long)x->scratch_cap);
            return NULL;
        }
        x->mem[r].scratch_len[ref.off + t] = (int64_t)n;
        return p;
    }
    if ((uint64_t)len != n) {
        hx_fail(x, w, ACC_ERR_INVALID,
                "writes %llu elements into %s chunk %u of rank %d, which "
                "has %lld (the chunks are different parts of the message)",
                (unsigned long long)n, acc_buf_name((acc_bufid_t)ref.buf), ref.off + t, r,
                (long long)len);
        return NULL;
    }
    return p;
}

/* Room for a message; never a NULL buffer, even for empty chunks (count 0), so that memcpy is
 * always handed valid pointers. */
static int msg_fit(exec_t *x, worker_t *w, hx_msg_t *m, uint64_t bytes, uint32_t nchunks)
{
    if (!bytes)
        bytes = 1;
    if (!nchunks)
        nchunks = 1;
    if (bytes > m->cap) {
        void *p = acc_mem_realloc_array(m->data, (size_t)bytes, 1);
        if (!p)
            return hx_fail(x, w, ACC_ERR_NOMEM, "out of memory for a message of %llu bytes",
                           (unsigned long long)bytes);
        m->data = p;
        m->cap = (size_t)bytes;
    }
    if (nchunks > m->lcap) {
        void *p = acc_mem_realloc_array(m->lens, nchunks, sizeof(uint64_t));
        if (!p)
            return hx_fail(x, w, ACC_ERR_NOMEM, "out of memory for a message");
        m->lens = p;
        m->lcap = nchunks;
    }
    return 0;
}

/* ---- connections ------------------------------------------------------------------------ */

/* Wait for room in connection ci and return the slot to fill; NULL when the run stops. */
static hx_msg_t *reserve(exec_t *x, worker_t *w, uint32_t ci)
{
    conn_t *c = &x->conns[ci];
    hx_msg_t *m = NULL;
    lock(x);
    w->wait_kind = W_SPACE;
    w->wait_conn = ci;
    if (hx_block(x, w) == 0) {
        if (!c->ring)
            c->ring = acc_mem_calloc((size_t)x->plan->slots, sizeof(hx_msg_t));
        if (c->ring)
            m = &c->ring[(c->head + c->count) % (uint32_t)x->plan->slots];
    }
    unlock(x);
    if (!m && !c->ring && !x->abort)
        hx_fail(x, w, ACC_ERR_NOMEM, "out of memory for a connection");
    return m;
}

static void commit(exec_t *x, uint32_t ci)
{
    conn_t *c = &x->conns[ci];
    worker_t *r = &x->workers[c->receiver];
    lock(x);
    c->count++;
    if (r->wait_kind == W_MSG && r->wait_conn == ci)
        hx_wake(x, r);
    unlock(x);
}

/* Wait for the oldest message of connection ci; NULL when the run stops. */
static hx_msg_t *acquire(exec_t *x, worker_t *w, uint32_t ci)
{
    conn_t *c = &x->conns[ci];
    hx_msg_t *m = NULL;
    lock(x);
    w->wait_kind = W_MSG;
    w->wait_conn = ci;
    if (hx_block(x, w) == 0)
        m = &c->ring[c->head];
    unlock(x);
    return m;
}

static void release(exec_t *x, uint32_t ci)
{
    conn_t *c = &x->conns[ci];
    worker_t *s = &x->workers[c->sender];
    lock(x);
    c->head = (c->head + 1) % (uint32_t)x->plan->slots;
    c->count--;
    if (s->wait_kind == W_SPACE && s->wait_conn == ci)
        hx_wake(x, s);
    unlock(x);
}

/* Send chunks ref of my buffers on connection ci. */
static int send_ref(exec_t *x, worker_t *w, uint32_t ci, acc_ref_t ref)
{
    hx_msg_t *m = reserve(x, w, ci);
    uint64_t total = 0, n, off = 0;
    uint32_t t;
    if (!m)
        return -1;
    for (t = 0; t < ref.cnt; t++) {
        if (!src_chunk(x, w, w->rank, ref, t, &n))
            return -1;
        total += n;
    }
    if (msg_fit(x, w, m, total * x->es, ref.cnt) != 0)
        return -1;
    m->nchunks = ref.cnt;
    for (t = 0; t < ref.cnt; t++) {
        const unsigned char *s = src_chunk(x, w, w->rank, ref, t, &n);
        memcpy(m->data + off, s, (size_t)(n * x->es));
        m->lens[t] = n;
        off += n * x->es;
    }
    commit(x, ci);
    return 0;
}

/* The received message m must have as many chunks as ref. */
static int check_shape(exec_t *x, worker_t *w, const hx_msg_t *m, acc_ref_t ref)
{
    if (m->nchunks != ref.cnt)
        return hx_fail(x, w, ACC_ERR_INVALID,
                       "receives %u chunks but the matching send carried "
                       "%u",
                       ref.cnt, m->nchunks);
    return 0;
}

/* dst = message (RECV), or dst = src (+) message (with_src). */
static int land(exec_t *x, worker_t *w, const hx_msg_t *m, const acc_op_t *op, int with_src)
{
    uint64_t off = 0, n, ns;
    uint32_t t;
    if (check_shape(x, w, m, op->dst) != 0)
        return -1;
    for (t = 0; t < m->nchunks; t++) {
        const unsigned char *s = NULL;
        unsigned char *d;
        n = m->lens[t];
        if (with_src) {
            s = src_chunk(x, w, w->rank, op->src, t, &ns);
            if (!s)
                return -1;
            if (ns != n)
                return hx_fail(x, w, ACC_ERR_INVALID,
                               "reduces a received chunk of %llu "
                               "elements with %s chunk %u of %llu",
                               (unsigned long long)n, acc_buf_name((acc_bufid_t)op->src.buf),
                               op->src.off + t, (unsigned long long)ns);
        }
        d = dst_chunk(x, w, w->rank, op->dst, t, n);
        if (!d)
            return -1;
        if (with_src)
            hx_reduce2(x->dt, x->op, d, s, m->data + off, (size_t)n);
        else
            memcpy(d, m->data + off, (size_t)(n * x->es));
        off += n * x->es;
    }
    atomic_fetch_add(&x->progress, 1);
    return 0;
}

/* RECV_REDUCE_SEND: reduce the message with src into w->tmp, free the incoming slot, then hand
 * w->tmp's storage to the outgoing slot (swapping buffers, not copying them). */
static int recv_reduce_send(exec_t *x, worker_t *w, uint32_t k, const acc_op_t *op)
{
    hx_msg_t *m = acquire(x, w, w->in_conn[k]), *o, swap;
    uint64_t off = 0, total = 0, n, ns;
    uint32_t t;
    if (!m || check_shape(x, w, m, op->src) != 0)
        return -1;
    for (t = 0; t < m->nchunks; t++)
        total += m->lens[t];
    if (msg_fit(x, w, &w->tmp, total * x->es, m->nchunks) != 0)
        return -1;
    w->tmp.nchunks = m->nchunks;
    for (t = 0; t < m->nchunks; t++) {
        const unsigned char *s = src_chunk(x, w, w->rank, op->src, t, &ns);
        n = m->lens[t];
        if (!s)
            return -1;
        if (ns != n)
            return hx_fail(x, w, ACC_ERR_INVALID,
                           "reduces a received chunk of %llu elements "
                           "with %s chunk %u of %llu",
                           (unsigned long long)n, acc_buf_name((acc_bufid_t)op->src.buf),
                           op->src.off + t, (unsigned long long)ns);
        hx_reduce2(x->dt, x->op, w->tmp.data + off, s, m->data + off, (size_t)n);
        w->tmp.lens[t] = n;
        off += n * x->es;
    }
    release(x, w->in_conn[k]);
    o = reserve(x, w, w->out_conn[k]);
    if (!o)
        return -1;
    swap = *o;
    *o = w->tmp;
    w->tmp = swap;
    commit(x, w->out_conn[k]);
    return 0;
}

/* ---- local and peer-memory operations ------------------------------------------------------ */

/* dst at rank rd = src at rank rs, chunk by chunk (COPY, PUT, GET). */
static int move(exec_t *x, worker_t *w, int rs, acc_ref_t src, int rd, acc_ref_t dst)
{
    uint32_t t;
    uint64_t n;
    if (src.cnt != dst.cnt)
        return hx_fail(x, w, ACC_ERR_INVALID, "copies %u chunks into %u", src.cnt, dst.cnt);
    for (t = 0; t < src.cnt; t++) {
        const unsigned char *s = src_chunk(x, w, rs, src, t, &n);
        unsigned char *d = s ? dst_chunk(x, w, rd, dst, t, n) : NULL;
        if (!d)
            return -1;
        memmove(d, s, (size_t)(n * x->es)); /* in place, a chunk may be copied onto itself */
        atomic_fetch_add(&x->progress, 1);
    }
    return 0;
}

/* dst = dst (+) src (REDUCE), or dst = (+) of src at every rank of the peer list. */
static int reduce_local(exec_t *x, worker_t *w, const acc_op_t *op)
{
    const acc_plan_t *p = x->plan;
    uint32_t t, j, nsrc = op->code == ACC_OP_REDUCE ? 2 : op->npeers;
    uint64_t n = 0, nj;

    if (op->src.cnt != op->dst.cnt)
        return hx_fail(x, w, ACC_ERR_INVALID, "reduces %u chunks into %u", op->src.cnt,
                       op->dst.cnt);
    if (!w->ptrs && !(w->ptrs = acc_mem_calloc((size_t)p->npeer_pool + 2, sizeof(void *))))
        return hx_fail(x, w, ACC_ERR_NOMEM, "out of memory");
    for (t = 0; t < op->src.cnt; t++) {
        unsigned char *d;
        for (j = 0; j < nsrc; j++) {
            int r = op->code == ACC_OP_REDUCE ? w->rank : (int)p->peer_pool[op->peers_off + j];
            acc_ref_t ref = (op->code == ACC_OP_REDUCE && j == 0) ? op->dst : op->src;
            w->ptrs[j] = src_chunk(x, w, r, ref, t, &nj);
            if (!w->ptrs[j])
                return -1;
            if (j == 0)
                n = nj;
            else if (nj != n)
                return hx_fail(x, w, ACC_ERR_INVALID,
                               "reduces chunks of %llu and %llu "
                               "elements (%s chunk %u at rank %d)",
                               (unsigned long long)n, (unsigned long long)nj,
                               acc_buf_name((acc_bufid_t)ref.buf), ref.off + t, r);
        }
        d = dst_chunk(x, w, w->rank, op->dst, t, n);
        if (!d)
            return -1;
        hx_reduce_many(x->dt, x->op, d, w->ptrs, nsrc, (size_t)n);
        atomic_fetch_add(&x->progress, 1);
    }
    return 0;
}

static int signal_peer(exec_t *x, worker_t *w, const acc_op_t *op)
{
    int l, base = op->peer * x->plan->nlanes;
    uint32_t v;
    lock(x);
    v = ++x->counters[hx_counter(x, w->rank, op->peer, op->slot)];
    for (l = 0; l < x->plan->nlanes; l++) {
        worker_t *o = &x->workers[base + l];
        if (o->blocked && o->wait_kind == W_SIGNAL && o->wait_peer == w->rank &&
            o->wait_slot == op->slot && o->wait_value <= v)
            hx_wake(x, o);
    }
    unlock(x);
    return 0;
}

static int wait_peer(exec_t *x, worker_t *w, const acc_op_t *op)
{
    int rc;
    lock(x);
    w->wait_kind = W_SIGNAL;
    w->wait_peer = op->peer;
    w->wait_slot = op->slot;
    w->wait_value = op->value;
    rc = hx_block(x, w);
    unlock(x);
    return rc;
}

int hx_run_op(exec_t *x, worker_t *w, const acc_op_t *op)
{
    uint32_t k = w->cur_op;
    hx_msg_t *m;
    int rc;

    switch (op->code) {
    case ACC_OP_SEND:
        return send_ref(x, w, w->out_conn[k], op->src);
    case ACC_OP_RECV:
    case ACC_OP_RECV_COPY_SEND:
    case ACC_OP_RECV_REDUCE_COPY:
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        m = acquire(x, w, w->in_conn[k]);
        if (!m)
            return -1;
        rc = land(x, w, m, op,
                  op->code == ACC_OP_RECV_REDUCE_COPY || op->code == ACC_OP_RECV_REDUCE_COPY_SEND);
        if (rc != 0)
            return rc;
        release(x, w->in_conn[k]);
        if (op->code == ACC_OP_RECV_COPY_SEND || op->code == ACC_OP_RECV_REDUCE_COPY_SEND)
            return send_ref(x, w, w->out_conn[k], op->dst);
        return 0;
    case ACC_OP_RECV_REDUCE_SEND:
        return recv_reduce_send(x, w, k, op);
    case ACC_OP_COPY:
        return move(x, w, w->rank, op->src, w->rank, op->dst);
    case ACC_OP_PUT:
        return move(x, w, w->rank, op->src, op->peer, op->dst);
    case ACC_OP_GET:
        return move(x, w, op->peer, op->src, w->rank, op->dst);
    case ACC_OP_REDUCE:
    case ACC_OP_REDUCE_PEERS:
        return reduce_local(x, w, op);
    case ACC_OP_SIGNAL:
        return signal_peer(x, w, op);
    case ACC_OP_WAIT:
        return wait_peer(x, w, op);
    default:
        return 0; /* NOP: it only carried its dependency */
    }
}
