/*
 * The host backend between nodes: a TCP connection per remote (sender, receiver, lane), or
 * with several rails (host_rails.c) one per rail, each message striped across them.
 *
 * The calling thread does the socket work itself whenever it can, since every hand-off to
 * another thread costs a wake-up, which on a busy machine is most of a small message's time.
 * A lane sends a message straight from its outbox slot when the connection has nothing queued
 * (one send(); the slot is free again at once); only what the socket did not take then goes to
 * the connection's thread, which writes the rest and every later message until the outbox is
 * empty again.  A lane that waits for a message reads it from the socket into the ring itself,
 * as the bytes arrive (host_data.c asks here when a remote ring is empty), and a thread that
 * has nothing to do sleeps in poll() on the sockets it waits for (host_lanes.c).  Nothing reads
 * a socket between calls: the kernel's buffers and the sender's outbox hold what arrives early,
 * and every rank enters the same calls in the same order, so it is read in its turn.
 *
 * On the wire a message is its slot as laid out in memory: the header of hb_slot_header(maxcnt)
 * bytes (chunk count, the sender's call signature, maxcnt chunk lengths), then the data, so the
 * sender writes one contiguous range and the receiver reads it into the same layout in the ring,
 * where the receiving lane checks the signature against its own call's.  Across several rails
 * the range is cut into equal stripes, one per socket (stripe()); rail 0's begins with the
 * header, so the receiver reads that first and then every stripe as its socket delivers it,
 * and a message is in once every stripe is.  The sender's thread writes all stripes at once
 * (net_send_parts), so that no link idles while another drains.
 */
#include "host_internal.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define CONN_MAGIC 0x61636372u /* "accr" */

/* Messages shorter than this per rail go on fewer rails, so that small ones keep one socket's
 * latency (one send, one wake-up).  32 KiB take a quarter of a millisecond at 1 Gbit/s, where a
 * second link saves little beside a call's fixed costs; chosen so, not tuned. */
#define RAIL_MIN_BYTES (32u << 10)

/* What a sender says first on each socket of a new connection. */
typedef struct {
    uint32_t magic;
    int32_t inst;
    int32_t from; /* the connection: its sender, and its lane (the receiver is the listener) */
    uint32_t lane;
    uint32_t rail;
    char tag[20];
} conn_hello_t;

typedef struct {
    hb_inst_t *in;
    hb_conn_t *cn;
} net_arg_t;

/* Bytes of a message as it travels: its slot's header and data. */
static uint64_t wire_bytes(const hb_inst_t *in, const hb_conn_t *cn, const hb_slot_t *s)
{
    uint64_t bytes = hb_slot_header(cn->maxcnt);
    for (uint32_t t = 0; t < s->nchunks && t < cn->maxcnt; t++)
        bytes += s->lens[t] * in->es;
    return bytes;
}

/* The part of a message of `bytes` (header and data) that rail r carries: [*off, *off + *len).
 * Equal stripes, 64-byte aligned, on as many rails as get RAIL_MIN_BYTES each; rail 0's starts
 * with the header, where the receiver learns the message's size and so the other stripes. */
static void stripe(const hb_conn_t *cn, uint64_t bytes, int r, uint64_t *off, uint64_t *len)
{
    uint64_t head = hb_slot_header(cn->maxcnt), k = bytes / RAIL_MIN_BYTES, a, b;
    if (k > (uint64_t)cn->nrails)
        k = (uint64_t)cn->nrails;
    if (k < 1)
        k = 1;
    while (k > 1 && bytes / k < head)
        k--;
    if ((uint64_t)r >= k) {
        *off = bytes;
        *len = 0;
        return;
    }
    a = r == 0 ? 0 : (bytes * (uint64_t)r / k) & ~(uint64_t)63;
    b = (uint64_t)r + 1 == k ? bytes : (bytes * (uint64_t)(r + 1) / k) & ~(uint64_t)63;
    *off = a;
    *len = b - a;
}

/* Outbox to sockets: every message the lane queued, from where its own writes stopped; then
 * the slot is free again, which the lane hears through its doorbell and the instance's eventfd. */
static void *sender_main(void *arg)
{
    net_arg_t a = *(net_arg_t *)arg;
    hb_inst_t *in = a.in;
    hb_conn_t *cn = a.cn;
    const uint64_t one = 1;

    acc_mem_free(arg);
    for (;;) {
        uint32_t d = atomic_load(&cn->drained.value), q = atomic_load(&cn->queued.value);
        const void *part[HB_MAX_RAILS];
        size_t len[HB_MAX_RAILS];
        const unsigned char *s;
        uint64_t bytes;

        if (d == q) {
            if (__atomic_load_n(&in->stop, __ATOMIC_ACQUIRE))
                return NULL;
            hb_sleep(&cn->queued, q, 100000000L);
            continue;
        }
        /* The lane wrote tx_off before it queued the message, and writes it again only once the
         * outbox is empty: it is this thread's until then. */
        s = (const unsigned char *)hb_outbox_slot(in, cn, d);
        bytes = wire_bytes(in, cn, (const hb_slot_t *)s);
        for (int r = 0; r < cn->nrails; r++) {
            uint64_t off, n;
            stripe(cn, bytes, r, &off, &n);
            part[r] = s + off + cn->tx_off[r];
            len[r] = (size_t)(n - cn->tx_off[r]);
            cn->tx_off[r] = 0;
        }
        if (net_send_parts(cn->fd, part, len, cn->nrails, 0, &in->stop) != ACC_OK)
            return NULL; /* stopped, or the receiver went away: the lanes' waits say so */
        hb_raise(&cn->drained);
        hb_raise(hb_bell(in, cn->from));
        if (write(in->evfd, &one, sizeof(one)) < 0) {
            /* an eventfd's counter cannot overflow here: the lane reads it whenever it wakes */
        }
    }
}

void hb_net_post(hb_inst_t *in, hb_conn_t *cn)
{
    uint32_t q = atomic_load(&cn->queued.value);
    const unsigned char *s = (const unsigned char *)hb_outbox_slot(in, cn, q);
    uint64_t bytes = wire_bytes(in, cn, (const hb_slot_t *)s);

    if (atomic_load(&cn->drained.value) == q) {
        /* Nothing queued: the thread is idle and the sockets are the lane's. */
        int done = 1;
        for (int r = 0; r < cn->nrails; r++) {
            uint64_t off, n;
            ssize_t w = 0;
            stripe(cn, bytes, r, &off, &n);
            if (n)
                w = send(cn->fd[r], s + off, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
            /* The rest, and errors, go to the thread, whose send says what happened. */
            cn->tx_off[r] = w > 0 ? (uint64_t)w : 0;
            done &= cn->tx_off[r] == n;
        }
        if (done)
            return;
    }
    hb_raise(&cn->queued);
}

/* Read rail r's part of the next message into dst until rx_off[r] reaches len: 1 when it has,
 * 0 when the socket has nothing more now, -1 with why when the connection failed. */
static int rail_read(hb_conn_t *cn, int r, unsigned char *dst, uint64_t len, char *why, size_t n)
{
    while (cn->rx_off[r] < len) {
        ssize_t got =
            recv(cn->fd[r], dst + cn->rx_off[r], (size_t)(len - cn->rx_off[r]), MSG_DONTWAIT);
        char rail[48] = "";
        if (got > 0) {
            cn->rx_off[r] += (uint64_t)got;
            continue;
        }
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (got < 0 && errno == EINTR)
            continue;
        if (cn->nrails > 1)
            snprintf(rail, sizeof(rail), ", its socket on rail %d of %d", r, cn->nrails);
        snprintf(why, n,
                 "rank %d closed the connection of lane %d%s (%s): it may have exited or died",
                 cn->from, cn->lane, rail, got == 0 ? "end of stream" : strerror(errno));
        return -1;
    }
    return 1;
}

int hb_net_pull(hb_inst_t *in, hb_conn_t *cn, char *why, size_t n)
{
    hb_ring_t *ring = hb_ring(in, cn);
    uint64_t head = hb_slot_header(cn->maxcnt);
    uint32_t slots = (uint32_t)in->plan->slots;

    for (;;) {
        uint32_t got = atomic_load(&ring->sent.value);
        unsigned char *s;
        uint64_t want;
        int complete = 1, rc;

        if (got - atomic_load(&ring->taken.value) >= slots)
            return 0; /* no room: the lane takes a message first */
        s = (unsigned char *)hb_slot(in, cn, got);
        /* The header first, on rail 0: it says how long the message is. */
        if ((rc = rail_read(cn, 0, s, head, why, n)) <= 0)
            return rc;
        if (((hb_slot_t *)s)->nchunks > cn->maxcnt ||
            (want = wire_bytes(in, cn, (hb_slot_t *)s)) > cn->slot_bytes) {
            snprintf(why, n,
                     "rank %d sent a message of %u chunks and %llu bytes on lane %d, more than "
                     "its slot holds (%u chunks, %llu bytes)",
                     cn->from, ((hb_slot_t *)s)->nchunks,
                     (unsigned long long)wire_bytes(in, cn, (hb_slot_t *)s), cn->lane, cn->maxcnt,
                     (unsigned long long)cn->slot_bytes);
            return -1;
        }
        for (int r = 0; r < cn->nrails; r++) {
            uint64_t off, len;
            stripe(cn, want, r, &off, &len);
            if ((rc = rail_read(cn, r, s + off, len, why, n)) < 0)
                return -1;
            complete &= rc;
        }
        if (!complete)
            return 0;
        memset(cn->rx_off, 0, sizeof(cn->rx_off));
        hb_raise(&ring->sent);
    }
}

int hb_net_short_rail(const hb_inst_t *in, const hb_conn_t *cn)
{
    const hb_slot_t *s;
    uint64_t bytes;

    if (cn->nrails == 1 || cn->rx_off[0] < hb_slot_header(cn->maxcnt))
        return 0;
    s = hb_slot(in, cn, atomic_load(&hb_ring(in, cn)->sent.value));
    bytes = wire_bytes(in, cn, s);
    for (int r = 0; r < cn->nrails; r++) {
        uint64_t off, len;
        stripe(cn, bytes, r, &off, &len);
        if (cn->rx_off[r] < len)
            return r;
    }
    return 0;
}

static acc_status_t start_thread(hb_inst_t *in, hb_conn_t *cn)
{
    net_arg_t *a = acc_mem_alloc(sizeof(*a));
    if (!a)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    a->in = in;
    a->cn = cn;
    if (pthread_create(&in->net_threads[in->nnet], NULL, sender_main, a) != 0) {
        acc_mem_free(a);
        return acc_error_set(ACC_ERR_SYSTEM, "cannot start a thread for a connection");
    }
    in->nnet++;
    return ACC_OK;
}

acc_status_t hb_net_connect(acc_comm_t *c, hb_inst_t *in)
{
    double deadline = c->timeout_ms > 0 ? acc_now_s() + c->timeout_ms / 1e3 : 0;
    int rails = ((const hb_state_t *)c->be_state)->nrails;
    uint32_t i, expect = 0, senders = 0;
    acc_status_t st;

    for (i = 0; i < in->nconns; i++) {
        in->conns[i].nrails = rails;
        expect += in->conns[i].remote && in->conns[i].to == in->rank;
        senders += in->conns[i].remote && in->conns[i].from == in->rank;
    }
    if (senders) {
        if (!(in->net_threads = acc_mem_calloc(senders, sizeof(pthread_t))))
            return acc_error_set(ACC_ERR_NOMEM, "out of memory");
        if ((in->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
            return acc_error_set(ACC_ERR_SYSTEM, "eventfd: %s", strerror(errno));
    }
    /* Connects complete in the peers' listening backlog, so every rank connects first and
     * accepts afterwards without waiting for one another. */
    for (i = 0; i < in->nconns; i++) {
        hb_conn_t *cn = &in->conns[i];
        if (!cn->remote || cn->from != in->rank)
            continue;
        for (int r = 0; r < rails; r++) {
            conn_hello_t h = {CONN_MAGIC, in->id, in->rank, (uint32_t)cn->lane, (uint32_t)r, {0}};
            memcpy(h.tag, c->shm_tag, sizeof(h.tag));
            if ((st = hb_rails_connect(c, cn->to, r, deadline, &cn->fd[r])) != ACC_OK ||
                (st = net_send(cn->fd[r], &h, sizeof(h), deadline, &c->abort)) != ACC_OK)
                return acc_error_prefix(st, "connecting to rank %d (lane %d): ", cn->to, cn->lane);
        }
        if ((st = start_thread(in, cn)) != ACC_OK)
            return st;
    }
    for (int r = 0; r < rails; r++)
        for (uint32_t left = expect; left > 0;) {
            conn_hello_t h;
            hb_conn_t *cn = NULL;
            uint32_t k;
            int fd = -1;
            if ((st = hb_rails_accept(c, r, deadline, &fd)) != ACC_OK)
                return acc_error_prefix(st, "waiting for %u connections from other nodes: ", left);
            if (net_recv(fd, &h, sizeof(h), deadline, &c->abort) == ACC_OK &&
                h.magic == CONN_MAGIC && h.inst == in->id &&
                memcmp(h.tag, c->shm_tag, sizeof(h.tag)) == 0 && h.rail == (uint32_t)r &&
                h.lane < INT32_MAX &&
                (k = hb_find_conn(in, h.from, in->rank, (int)h.lane)) != UINT32_MAX)
                cn = &in->conns[k];
            if (!cn || cn->to != in->rank || !cn->remote || cn->fd[r] >= 0) {
                net_close(&fd); /* not one we expect */
                continue;
            }
            cn->fd[r] = fd;
            left--;
        }
    return ACC_OK;
}

void hb_net_stop(hb_inst_t *in)
{
    __atomic_store_n(&in->stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < in->nnet; i++)
        pthread_join(in->net_threads[i], NULL);
    in->nnet = 0;
    acc_mem_free(in->net_threads);
    in->net_threads = NULL;
    for (uint32_t i = 0; i < in->nconns; i++)
        for (int r = 0; r < HB_MAX_RAILS; r++)
            net_close(&in->conns[i].fd[r]);
    net_close(&in->evfd);
}
