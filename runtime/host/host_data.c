/*
 * What each operation of a plan does on the host backend: chunks of this rank's buffers and of
 * the mapped buffers of its node's peers, messages through rings in shared memory or sockets,
 * signal counters.  The arithmetic and its rounding are the host executor's (host_reduce.h), so
 * both backends give the same bits.
 */
#include "host_internal.h"

#include "exec/host_reduce.h"

#include <string.h>

/* Rank r's buffer b as this process sees it; NULL when it cannot (another node, or a buffer
 * the caller did not give because the collective does not use it there). */
static unsigned char *base_of(const hb_call_t *call, int r, uint8_t b)
{
    const hb_inst_t *in = call->in;
    const hb_layout_t *l = &in->layouts[r];
    if (r == in->rank)
        return call->base[b];
    if (!in->seg[r])
        return NULL;
    if (b == ACC_BUF_SCRATCH)
        return in->seg[r] + l->scratch;
    if (!in->staged)
        return NULL;
    return in->seg[r] + (b == ACC_BUF_IN ? l->in : l->out);
}

static int64_t *scratch_len(const hb_inst_t *in, int r)
{
    return (int64_t *)(in->seg[r] + in->layouts[r].scratch_len);
}

static uint32_t nchunks_of(const acc_plan_t *p, uint8_t b)
{
    return b == ACC_BUF_IN ? p->in_chunks : b == ACC_BUF_OUT ? p->out_chunks : p->scratch_chunks;
}

/* Chunk t of ref at rank r: its first element and how many it holds (-1: scratch never
 * written).  NULL, with the failure recorded, when rank r's buffer is out of reach. */
static unsigned char *chunk(hb_lane_t *lc, int r, acc_ref_t ref, uint32_t t, int64_t *n)
{
    hb_call_t *call = lc->call;
    hb_inst_t *in = call->in;
    unsigned char *base = base_of(call, r, ref.buf);
    uint32_t c = ref.off + t;
    uint64_t first, cnt;

    if (!base) {
        hb_fail(lc, ACC_ERR_UNSUPPORTED, "%s buffer of rank %d is out of reach of rank %d",
                acc_buf_name((acc_bufid_t)ref.buf), r, in->rank);
        return NULL;
    }
    if (ref.buf == ACC_BUF_SCRATCH) {
        *n = scratch_len(in, r)[c];
        return base + (uint64_t)c * in->scratch_cap * in->es;
    }
    acc_chunk_range(call->elems[ref.buf], nchunks_of(in->plan, ref.buf), c, &first, &cnt);
    *n = (int64_t)cnt;
    return base + first * in->es;
}

static const unsigned char *src_chunk(hb_lane_t *lc, int r, acc_ref_t ref, uint32_t t, uint64_t *n)
{
    int64_t len;
    const unsigned char *p = chunk(lc, r, ref, t, &len);
    if (p && len < 0) {
        hb_fail(lc, ACC_ERR_INVALID,
                "reads scratch chunk %u of rank %d before anything was "
                "written to it",
                ref.off + t, r);
        return NULL;
    }
    *n = (uint64_t)len;
    return p;
}

/* Source chunk t of the operation at its rank, to combine with a received chunk of n
 * elements: it must hold as many. */
static const unsigned char *src_like(hb_lane_t *lc, uint32_t t, uint64_t n)
{
    const acc_op_t *op = lc->op;
    uint64_t ns;
    const unsigned char *src = src_chunk(lc, lc->call->in->rank, op->src, t, &ns);
    if (src && ns != n) {
        hb_fail(lc, ACC_ERR_INVALID,
                "reduces a received chunk of %llu elements with %s chunk %u of %llu",
                (unsigned long long)n, acc_buf_name((acc_bufid_t)op->src.buf), op->src.off + t,
                (unsigned long long)ns);
        return NULL;
    }
    return src;
}

/* Chunk t of ref at rank r, about to receive n elements: a scratch chunk takes the length, an
 * input or output chunk must have it already. */
static unsigned char *dst_chunk(hb_lane_t *lc, int r, acc_ref_t ref, uint32_t t, uint64_t n)
{
    hb_inst_t *in = lc->call->in;
    int64_t len;
    unsigned char *p = chunk(lc, r, ref, t, &len);
    if (!p)
        return NULL;
    if (ref.buf == ACC_BUF_SCRATCH) {
        if (n > in->scratch_cap) {
            hb_fail(lc, ACC_ERR_INVALID,
                    "writes %llu elements into scratch chunk %u of rank %d, which holds %llu",
                    (unsigned long long)n, ref.off + t, r, (unsigned long long)in->scratch_cap);
            return NULL;
        }
        scratch_len(in, r)[ref.off + t] = (int64_t)n;
        return p;
    }
    if ((uint64_t)len != n) {
        hb_fail(lc, ACC_ERR_INVALID,
                "writes %llu elements into %s chunk %u of rank %d, which has %lld",
                (unsigned long long)n, acc_buf_name((acc_bufid_t)ref.buf), ref.off + t, r,
                (long long)len);
        return NULL;
    }
    return p;
}

/* What the lane's operation divides what it reduces by: the rank count when it completes an
 * average, else 1. */
static int divisor(const hb_lane_t *lc)
{
    const hb_inst_t *in = lc->call->in;
    if (lc->call->op != ACC_RED_AVG || !in->final || !in->final[in->lane_first[lc->lane] + lc->k])
        return 1;
    return in->plan->nranks;
}

/* ---- the ranks' calls, compared ----------------------------------------------------------- */

static hb_call_rec_t *call_rec(const hb_inst_t *in, int r)
{
    return (hb_call_rec_t *)(in->seg[r] + HB_CALL_OFFSET);
}

void hb_call_publish(const hb_call_t *call, const rt_call_t *rc)
{
    hb_call_rec_t *rec = call_rec(call->in, call->in->rank);
    atomic_store_explicit(&rec->count, rc->count, memory_order_relaxed);
    atomic_store_explicit(&rec->seq, call->seq, memory_order_relaxed);
    atomic_store_explicit(&rec->what,
                          (uint64_t)rc->coll | (uint64_t)rc->dt << 8 | (uint64_t)rc->op << 16 |
                              (uint64_t)(uint32_t)(rc->root + 1) << 32,
                          memory_order_relaxed);
    atomic_store_explicit(&rec->id, (uint64_t)(uint32_t)call->in->calls << 32 | call->sig,
                          memory_order_release);
}

/* A call in words: "allreduce of 1000 float (reduction sum, root 0), call 17". */
static void call_text(uint64_t what, uint64_t count, uint64_t seq, char *buf, size_t n)
{
    snprintf(buf, n, "%s of %llu %s (reduction %s, root %d), call %llu",
             acc_coll_name((acc_coll_t)(what & 0xff)), (unsigned long long)count,
             acc_dtype_name((acc_dtype_t)(what >> 8 & 0xff)),
             acc_redop_name((acc_redop_t)(what >> 16 & 0xff)), (int)(what >> 32) - 1,
             (unsigned long long)seq);
}

/* Rank r's call in words, when its record is of this instance's call and reads whole; else
 * "". */
static void peer_call_text(const hb_lane_t *lc, int r, char *buf, size_t n)
{
    const hb_inst_t *in = lc->call->in;
    const hb_call_rec_t *rec;
    uint64_t id, count, what, seq;
    char text[160];
    buf[0] = '\0';
    if (!in->seg[r])
        return;
    rec = call_rec(in, r);
    id = atomic_load_explicit(&rec->id, memory_order_acquire);
    count = atomic_load_explicit(&rec->count, memory_order_relaxed);
    what = atomic_load_explicit(&rec->what, memory_order_relaxed);
    seq = atomic_load_explicit(&rec->seq, memory_order_relaxed);
    if ((uint32_t)(id >> 32) != (uint32_t)in->calls ||
        atomic_load_explicit(&rec->id, memory_order_acquire) != id)
        return;
    call_text(what, count, seq, text, sizeof(text));
    snprintf(buf, n, " (it runs %s)", text);
}

/* Another rank's call differs from this one's: say both. */
static int calls_differ(hb_lane_t *lc, int r)
{
    const hb_call_t *call = lc->call;
    const hb_call_rec_t *mine = call_rec(call->in, call->in->rank);
    char theirs[192], text[160];
    peer_call_text(lc, r, theirs, sizeof(theirs));
    call_text(atomic_load_explicit(&mine->what, memory_order_relaxed), call->count, call->seq, text,
              sizeof(text));
    return hb_fail(lc, ACC_ERR_INVALID,
                   "rank %d's call is not this rank's%s; this rank runs %s: every rank must make "
                   "the same calls, in the same order, with the same count, type, reduction and "
                   "root",
                   r, theirs, text);
}

/* After a signal of rank r's: is r's call (read in its record) this one? */
static int same_call_as(hb_lane_t *lc, int r)
{
    const hb_inst_t *in = lc->call->in;
    uint64_t id;
    if (!in->seg[r])
        return 0;
    id = atomic_load_explicit(&call_rec(in, r)->id, memory_order_acquire);
    /* A peer already in its next call wrote over the record: nothing to compare with. */
    if ((uint32_t)(id >> 32) != (uint32_t)in->calls || (uint32_t)id == lc->call->sig)
        return 0;
    return calls_differ(lc, r);
}

/* ---- connections ------------------------------------------------------------------------ */

static unsigned char *slot_data(const hb_conn_t *cn, hb_slot_t *s)
{
    return (unsigned char *)s + hb_slot_header(cn->maxcnt);
}

static uint32_t load(hb_word_t *w)
{
    return atomic_load_explicit(&w->value, memory_order_acquire);
}

/* Is there room for the next message: in the ring, or in the outbox of a remote connection
 * (whose lane's own writes never occupy it)? */
static int has_room(const hb_inst_t *in, hb_conn_t *cn)
{
    uint32_t slots = (uint32_t)in->plan->slots;
    if (cn->remote)
        return load(&cn->queued) - load(&cn->drained) < slots;
    return cn->count - load(&hb_ring(in, cn)->taken) < slots;
}

static int has_message(const hb_inst_t *in, hb_conn_t *cn)
{
    return load(&hb_ring(in, cn)->sent) != cn->count;
}

/* The next message is in the ring: for a remote connection, read from the socket now if not.
 * 1 yes, 0 not yet, -1 the connection broke (the call's failure recorded). */
static int arrived(hb_lane_t *lc, hb_conn_t *cn)
{
    hb_inst_t *in = lc->call->in;
    char why[256];

    if (has_message(in, cn) || !cn->remote)
        return has_message(in, cn);
    if (hb_net_pull(in, cn, why, sizeof(why)) != 0)
        return hb_fail(lc, ACC_ERR_TIMEOUT, "waiting for message %u: %s", cn->count, why);
    return has_message(in, cn);
}

/* Ring rank r's doorbell: something it may wait for has happened. */
static void ring_bell(const hb_inst_t *in, int r)
{
    hb_word_t *bell = hb_bell(in, r);
    if (bell)
        hb_raise(bell);
}

/* Where the next outgoing message is built: the ring's slot, or the outbox's. */
static hb_slot_t *outgoing(hb_lane_t *lc, hb_conn_t *cn)
{
    hb_inst_t *in = lc->call->in;
    return cn->remote ? hb_outbox_slot(in, cn, load(&cn->queued)) : hb_slot(in, cn, cn->count);
}

/* Hand the filled slot on: to the receiver through the ring (and its doorbell), or to the
 * socket (host_net.c). */
static void commit(hb_lane_t *lc, hb_conn_t *cn)
{
    hb_inst_t *in = lc->call->in;
    cn->count++;
    if (cn->remote) {
        hb_net_post(in, cn);
        return;
    }
    hb_raise(&hb_ring(in, cn)->sent);
    ring_bell(in, cn->to);
}

/* The message taken: its slot free again for the sender (its doorbell, or for a remote sender
 * the receiving thread, which sleeps on the count). */
static void release(hb_lane_t *lc, hb_conn_t *cn)
{
    hb_inst_t *in = lc->call->in;
    cn->count++;
    hb_raise(&hb_ring(in, cn)->taken);
    if (!cn->remote)
        ring_bell(in, cn->from);
}

/* Fill a slot with chunks ref of this rank's buffers; the data's bytes in *bytes. */
static int fill(hb_lane_t *lc, hb_conn_t *cn, hb_slot_t *s, acc_ref_t ref, uint64_t *bytes)
{
    hb_inst_t *in = lc->call->in;
    unsigned char *d = slot_data(cn, s);
    uint64_t n, off = 0, room = cn->slot_bytes - hb_slot_header(cn->maxcnt);
    uint32_t t;

    if (ref.cnt > cn->maxcnt)
        return hb_fail(lc, ACC_ERR_INTERNAL, "sends %u chunks on a connection laid out for %u",
                       ref.cnt, cn->maxcnt);
    s->nchunks = ref.cnt;
    s->sig = lc->call->sig;
    for (t = 0; t < ref.cnt; t++) {
        const unsigned char *src = src_chunk(lc, in->rank, ref, t, &n);
        if (!src)
            return -1;
        if (off + n * in->es > room)
            return hb_fail(lc, ACC_ERR_INTERNAL, "a message outgrows its slot of %llu bytes",
                           (unsigned long long)room);
        memcpy(d + off, src, (size_t)(n * in->es));
        s->lens[t] = n;
        off += n * in->es;
    }
    *bytes = off;
    return 0;
}

static int send_ref(hb_lane_t *lc, uint32_t ci, acc_ref_t ref)
{
    hb_conn_t *cn = &lc->call->in->conns[ci];
    uint64_t bytes = 0;
    if (fill(lc, cn, outgoing(lc, cn), ref, &bytes) != 0)
        return -1;
    commit(lc, cn);
    return 0;
}

/* dst = message, or dst = src (+) message. */
static int land(hb_lane_t *lc, hb_conn_t *cn, hb_slot_t *s, int with_src)
{
    hb_call_t *call = lc->call;
    hb_inst_t *in = call->in;
    const acc_op_t *op = lc->op;
    const unsigned char *m = slot_data(cn, s);
    uint64_t off = 0, n;
    uint32_t t;

    if (s->sig != call->sig)
        return calls_differ(lc, cn->from);
    if (s->nchunks != op->dst.cnt)
        return hb_fail(lc, ACC_ERR_INVALID, "receives %u chunks but the matching send carried %u",
                       op->dst.cnt, s->nchunks);
    for (t = 0; t < s->nchunks; t++) {
        const unsigned char *src = NULL;
        unsigned char *d;
        n = s->lens[t];
        if (with_src && !(src = src_like(lc, t, n)))
            return -1;
        if (!(d = dst_chunk(lc, in->rank, op->dst, t, n)))
            return -1;
        if (with_src)
            hx_reduce2_div(call->dt, call->op, d, src, m + off, (size_t)n, divisor(lc));
        else
            memcpy(d, m + off, (size_t)(n * in->es));
        off += n * in->es;
    }
    return 0;
}

/* RECV_REDUCE_SEND: the message (+) src straight into the outgoing slot. */
static int recv_reduce_send(hb_lane_t *lc, uint32_t k)
{
    hb_call_t *call = lc->call;
    hb_inst_t *in = call->in;
    const acc_op_t *op = lc->op;
    hb_conn_t *ci = &in->conns[in->in_conn[k]], *co = &in->conns[in->out_conn[k]];
    hb_slot_t *s = hb_slot(in, ci, ci->count), *o = outgoing(lc, co);
    uint64_t off = 0, n;
    uint32_t t;

    if (s->sig != call->sig)
        return calls_differ(lc, ci->from);
    if (s->nchunks != op->src.cnt || s->nchunks > co->maxcnt)
        return hb_fail(lc, ACC_ERR_INVALID, "receives %u chunks to reduce with %u", s->nchunks,
                       op->src.cnt);
    o->nchunks = s->nchunks;
    o->sig = call->sig;
    for (t = 0; t < s->nchunks; t++) {
        const unsigned char *src = src_like(lc, t, s->lens[t]);
        if (!src)
            return -1;
        n = s->lens[t];
        hx_reduce2_div(call->dt, call->op, slot_data(co, o) + off, src, slot_data(ci, s) + off,
                       (size_t)n, divisor(lc));
        o->lens[t] = n;
        off += n * in->es;
    }
    release(lc, ci);
    commit(lc, co);
    return 0;
}

/* ---- local and peer memory -------------------------------------------------------------- */

/* dst at rank rd = src at rank rs (COPY, PUT, GET). */
static int move(hb_lane_t *lc, int rs, acc_ref_t src, int rd, acc_ref_t dst)
{
    size_t es = lc->call->in->es;
    uint64_t n;
    uint32_t t;
    if (src.cnt != dst.cnt)
        return hb_fail(lc, ACC_ERR_INVALID, "copies %u chunks into %u", src.cnt, dst.cnt);
    for (t = 0; t < src.cnt; t++) {
        const unsigned char *s = src_chunk(lc, rs, src, t, &n);
        unsigned char *d = s ? dst_chunk(lc, rd, dst, t, n) : NULL;
        if (!d)
            return -1;
        memmove(d, s, (size_t)(n * es)); /* in place a chunk may be copied onto itself */
    }
    return 0;
}

/* dst = dst (+) src (REDUCE), or dst = (+) of src at every rank of the peer list. */
static int reduce_many(hb_lane_t *lc)
{
    hb_call_t *call = lc->call;
    const acc_op_t *op = lc->op;
    const acc_plan_t *p = call->in->plan;
    int me = call->in->rank;
    uint32_t t, j, nsrc = op->code == ACC_OP_REDUCE ? 2 : op->npeers;
    uint64_t n = 0, nj;

    if (op->src.cnt != op->dst.cnt)
        return hb_fail(lc, ACC_ERR_INVALID, "reduces %u chunks into %u", op->src.cnt, op->dst.cnt);
    for (t = 0; t < op->src.cnt; t++) {
        unsigned char *d;
        for (j = 0; j < nsrc; j++) {
            int r = op->code == ACC_OP_REDUCE ? me : (int)p->peer_pool[op->peers_off + j];
            acc_ref_t ref = (op->code == ACC_OP_REDUCE && j == 0) ? op->dst : op->src;
            if (!(lc->ptrs[j] = src_chunk(lc, r, ref, t, &nj)))
                return -1;
            if (j == 0)
                n = nj;
            else if (nj != n)
                return hb_fail(lc, ACC_ERR_INVALID,
                               "reduces chunks of %llu and %llu elements (%s chunk %u at rank %d)",
                               (unsigned long long)n, (unsigned long long)nj,
                               acc_buf_name((acc_bufid_t)ref.buf), ref.off + t, r);
        }
        if (!(d = dst_chunk(lc, me, op->dst, t, n)))
            return -1;
        hx_reduce_many_div(call->dt, call->op, d, lc->ptrs, nsrc, (size_t)n, divisor(lc));
    }
    return 0;
}

static hb_word_t *counter(const hb_inst_t *in, uint32_t ci)
{
    const hb_ctr_t *ct = &in->ctrs[ci];
    return (hb_word_t *)(in->seg[ct->to] + ct->off);
}

static const hb_ctr_t *ctr_of(const hb_lane_t *lc)
{
    const hb_inst_t *in = lc->call->in;
    return &in->ctrs[in->ctr[in->lane_first[lc->lane] + lc->k]];
}

static uint32_t wait_target(const hb_lane_t *lc)
{
    return (uint32_t)(lc->call->in->calls * ctr_of(lc)->per_call + lc->op->value);
}

int hb_op_ready(hb_lane_t *lc)
{
    hb_inst_t *in = lc->call->in;
    uint32_t k = in->lane_first[lc->lane] + lc->k;

    switch (lc->op->code) {
    case ACC_OP_SEND:
        return has_room(in, &in->conns[in->out_conn[k]]);
    case ACC_OP_RECV:
    case ACC_OP_RECV_REDUCE_COPY:
        return arrived(lc, &in->conns[in->in_conn[k]]);
    case ACC_OP_RECV_COPY_SEND:
    case ACC_OP_RECV_REDUCE_SEND:
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        if (!has_room(in, &in->conns[in->out_conn[k]]))
            return 0;
        return arrived(lc, &in->conns[in->in_conn[k]]);
    case ACC_OP_WAIT:
        return hb_reached(load(counter(in, in->ctr[k])), wait_target(lc));
    default:
        return 1;
    }
}

int hb_op_wait_on(hb_lane_t *lc)
{
    hb_inst_t *in = lc->call->in;
    uint32_t k = in->lane_first[lc->lane] + lc->k;
    hb_conn_t *ci = in->in_conn[k] != UINT32_MAX ? &in->conns[in->in_conn[k]] : NULL;
    hb_conn_t *co = in->out_conn[k] != UINT32_MAX ? &in->conns[in->out_conn[k]] : NULL;

    if (co && !has_room(in, co))
        return co->remote ? HB_WAIT_EVENT : HB_WAIT_BELL;
    if (ci && !has_message(in, ci))
        return ci->remote ? ci->fd[hb_net_short_rail(in, ci)] : HB_WAIT_BELL;
    return HB_WAIT_BELL;
}

int hb_op_wait_text(hb_lane_t *lc, char *buf, size_t n)
{
    hb_inst_t *in = lc->call->in;
    uint32_t k = in->lane_first[lc->lane] + lc->k;
    const acc_op_t *op = lc->op;
    const hb_conn_t *cn;

    if (op->code == ACC_OP_WAIT) {
        snprintf(buf, n, "signal %u of rank %d on slot %u", op->value, op->peer, op->slot);
        return op->peer;
    }
    if (in->in_conn[k] != UINT32_MAX && !has_message(in, &in->conns[in->in_conn[k]])) {
        const hb_state_t *st = lc->call->comm ? lc->call->comm->be_state : NULL;
        int r;
        cn = &in->conns[in->in_conn[k]];
        snprintf(buf, n, "message %u from rank %d on lane %d", cn->count, cn->from, cn->lane);
        /* Over several links, which one is short names the link to look at. */
        if (cn->remote && cn->nrails > 1 && st && (r = hb_net_short_rail(in, cn)) >= 0 &&
            strlen(buf) + 1 < n)
            snprintf(buf + strlen(buf), n - strlen(buf),
                     " (its part on rail %d of %d, interface %s, has not all arrived)", r,
                     cn->nrails, st->rail_if[r].name);
        return cn->from;
    }
    if (in->out_conn[k] != UINT32_MAX) {
        cn = &in->conns[in->out_conn[k]];
        snprintf(buf, n,
                 "room on the connection to rank %d (lane %d): rank %d has not taken "
                 "message %u",
                 cn->to, cn->lane, cn->to, cn->count - (uint32_t)in->plan->slots);
        return cn->to;
    }
    snprintf(buf, n, "nothing (the operation was ready)");
    return -1;
}

int hb_run_op(hb_lane_t *lc)
{
    hb_call_t *call = lc->call;
    hb_inst_t *in = call->in;
    const acc_op_t *op = lc->op;
    uint32_t k = in->lane_first[lc->lane] + lc->k;
    hb_conn_t *cn;

    switch (op->code) {
    case ACC_OP_SEND:
        return send_ref(lc, in->out_conn[k], op->src);
    case ACC_OP_RECV:
    case ACC_OP_RECV_COPY_SEND:
    case ACC_OP_RECV_REDUCE_COPY:
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        cn = &in->conns[in->in_conn[k]];
        if (land(lc, cn, hb_slot(in, cn, cn->count),
                 op->code == ACC_OP_RECV_REDUCE_COPY || op->code == ACC_OP_RECV_REDUCE_COPY_SEND) !=
            0)
            return -1;
        release(lc, cn);
        if (op->code == ACC_OP_RECV_COPY_SEND || op->code == ACC_OP_RECV_REDUCE_COPY_SEND)
            return send_ref(lc, in->out_conn[k], op->dst);
        return 0;
    case ACC_OP_RECV_REDUCE_SEND:
        return recv_reduce_send(lc, k);
    case ACC_OP_COPY:
        return move(lc, in->rank, op->src, in->rank, op->dst);
    case ACC_OP_PUT:
        return move(lc, in->rank, op->src, op->peer, op->dst);
    case ACC_OP_GET:
        return move(lc, op->peer, op->src, in->rank, op->dst);
    case ACC_OP_REDUCE:
    case ACC_OP_REDUCE_PEERS:
        return reduce_many(lc);
    case ACC_OP_SIGNAL:
        hb_raise(counter(in, in->ctr[k]));
        ring_bell(in, op->peer);
        return 0;
    case ACC_OP_WAIT:
        /* The counter is there (it was ready): the peer's memory is this call's to read now,
         * if the peer runs this call. */
        return same_call_as(lc, op->peer);
    default:
        return 0; /* NOP */
    }
}
