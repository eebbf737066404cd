/*
 * The host backend between nodes: a TCP connection per remote (sender, receiver, lane).
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
 * where the receiving lane checks the signature against its own call's.
 */
#include "host_internal.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define CONN_MAGIC 0x61636372u /* "accr" */

/* What a sender says first on a new connection. */
typedef struct {
    uint32_t magic;
    int32_t inst;
    uint32_t conn;
    uint32_t pad;
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

/* Outbox to socket: every message the lane queued, from where its own write stopped; then the
 * slot is free again, which the lane hears through its doorbell and the instance's eventfd. */
static void *sender_main(void *arg)
{
    net_arg_t a = *(net_arg_t *)arg;
    hb_inst_t *in = a.in;
    hb_conn_t *cn = a.cn;
    const uint64_t one = 1;

    acc_mem_free(arg);
    for (;;) {
        uint32_t d = atomic_load(&cn->drained.value), q = atomic_load(&cn->queued.value);
        const unsigned char *s;
        uint64_t off;

        if (d == q) {
            if (__atomic_load_n(&in->stop, __ATOMIC_ACQUIRE))
                return NULL;
            hb_sleep(&cn->queued, q, 100000000L);
            continue;
        }
        /* The lane wrote tx_off before it queued the message, and writes it again only once the
         * outbox is empty: it is this thread's until then. */
        s = (const unsigned char *)hb_outbox_slot(in, cn, d);
        off = cn->tx_off;
        cn->tx_off = 0;
        if (net_send(cn->fd, s + off, (size_t)(wire_bytes(in, cn, (const hb_slot_t *)s) - off), 0,
                     &in->stop) != ACC_OK)
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
    const hb_slot_t *s = hb_outbox_slot(in, cn, q);
    uint64_t bytes = wire_bytes(in, cn, s);

    if (atomic_load(&cn->drained.value) == q) {
        /* Nothing queued: the thread is idle and the socket is the lane's. */
        ssize_t w = send(cn->fd, s, (size_t)bytes, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w == (ssize_t)bytes)
            return;
        /* The rest, and errors, go to the thread, whose send says what happened. */
        cn->tx_off = w > 0 ? (uint64_t)w : 0;
    }
    hb_raise(&cn->queued);
}

int hb_net_pull(hb_inst_t *in, hb_conn_t *cn, char *why, size_t n)
{
    hb_ring_t *ring = hb_ring(in, cn);
    uint64_t head = hb_slot_header(cn->maxcnt);
    uint32_t slots = (uint32_t)in->plan->slots;

    for (;;) {
        uint32_t got = atomic_load(&ring->sent.value);
        hb_slot_t *s;
        uint64_t want = head;
        ssize_t r;

        if (got - atomic_load(&ring->taken.value) >= slots)
            return 0; /* no room: the lane takes a message first */
        s = hb_slot(in, cn, got);
        if (cn->rx_off >= head) {
            if (s->nchunks > cn->maxcnt || (want = wire_bytes(in, cn, s)) > cn->slot_bytes) {
                snprintf(why, n,
                         "rank %d sent a message of %u chunks and %llu bytes on lane %d, more "
                         "than its slot holds (%u chunks, %llu bytes)",
                         cn->from, s->nchunks, (unsigned long long)want, cn->lane, cn->maxcnt,
                         (unsigned long long)cn->slot_bytes);
                return -1;
            }
            if (cn->rx_off == want) {
                cn->rx_off = 0;
                hb_raise(&ring->sent);
                continue;
            }
        }
        r = recv(cn->fd, (unsigned char *)s + cn->rx_off, (size_t)(want - cn->rx_off),
                 MSG_DONTWAIT);
        if (r > 0) {
            cn->rx_off += (uint64_t)r;
            continue;
        }
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (r < 0 && errno == EINTR)
            continue;
        snprintf(why, n,
                 "rank %d closed the connection of lane %d (%s): it may have exited or died",
                 cn->from, cn->lane, r == 0 ? "end of stream" : strerror(errno));
        return -1;
    }
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
    uint32_t i, expect = 0, senders = 0;
    acc_status_t st;

    for (i = 0; i < in->nconns; i++) {
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
        conn_hello_t h = {CONN_MAGIC, in->id, i, 0, {0}};
        if (!cn->remote || cn->from != in->rank)
            continue;
        memcpy(h.tag, c->shm_tag, sizeof(h.tag));
        if ((st = net_connect(boot_peer_addr(c->boot, cn->to), deadline, &c->abort, &cn->fd)) !=
                ACC_OK ||
            (st = net_send(cn->fd, &h, sizeof(h), deadline, &c->abort)) != ACC_OK)
            return acc_error_prefix(st, "connecting to rank %d (lane %d): ", cn->to, cn->lane);
        if ((st = start_thread(in, cn)) != ACC_OK)
            return st;
    }
    while (expect > 0) {
        conn_hello_t h;
        int fd = -1;
        if ((st = net_accept(boot_listen_fd(c->boot), deadline, &c->abort, &fd)) != ACC_OK)
            return acc_error_prefix(st, "waiting for %u connections from other nodes: ", expect);
        if (net_recv(fd, &h, sizeof(h), deadline, &c->abort) != ACC_OK || h.magic != CONN_MAGIC ||
            h.inst != in->id || memcmp(h.tag, c->shm_tag, sizeof(h.tag)) != 0 ||
            h.conn >= in->nconns || in->conns[h.conn].to != in->rank || !in->conns[h.conn].remote ||
            in->conns[h.conn].fd >= 0) {
            net_close(&fd); /* not one we expect */
            continue;
        }
        in->conns[h.conn].fd = fd;
        expect--;
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
        net_close(&in->conns[i].fd);
    net_close(&in->evfd);
}
