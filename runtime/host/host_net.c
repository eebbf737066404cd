/*
 * The host backend between nodes: a TCP connection per remote (sender, receiver, lane), a
 * thread per sending end that writes the outbox to the socket, and one per receiving end that
 * moves messages from the socket into the ring as slots free up.
 * On the wire a message is its chunk count (32 bits), the sender's call signature (32 bits),
 * its chunk lengths (64 bits each) and its data.
 */
#include "host_internal.h"

#include <string.h>

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

/* Socket to ring: message n goes into its slot once the receiver has taken message
 * n - slots, then the receiver's doorbell rings. */
static void *receiver_main(void *arg)
{
    net_arg_t a = *(net_arg_t *)arg;
    hb_inst_t *in = a.in;
    hb_conn_t *cn = a.cn;
    hb_ring_t *ring = hb_ring(in, cn);
    uint32_t slots = (uint32_t)in->plan->slots, n = 0;

    acc_mem_free(arg);
    for (;; n++) {
        hb_slot_t *s;
        uint64_t bytes = 0;
        uint32_t head[2], t;

        while (n >= slots && !hb_reached(atomic_load(&ring->taken.value), n - slots + 1)) {
            if (__atomic_load_n(&in->stop, __ATOMIC_ACQUIRE))
                return NULL;
            hb_sleep(&ring->taken, atomic_load(&ring->taken.value), 100000000L);
        }
        s = hb_slot(in, cn, n);
        if (net_recv(cn->fd, head, sizeof(head), 0, &in->stop) != ACC_OK)
            break; /* stopped, or the sender went away: the receiving lane's timeout says so */
        if (head[0] > cn->maxcnt ||
            net_recv(cn->fd, s->lens, (size_t)head[0] * sizeof(uint64_t), 0, &in->stop) != ACC_OK)
            break;
        for (t = 0; t < head[0]; t++)
            bytes += s->lens[t] * in->es;
        if (bytes > cn->slot_bytes - hb_slot_header(cn->maxcnt)) {
            ACC_ERROR(RUNTIME,
                      "host backend: rank %d sent a message of %llu bytes on lane %d, "
                      "more than its slot holds; the connection is closed",
                      cn->from, (unsigned long long)bytes, cn->lane);
            break;
        }
        s->nchunks = head[0];
        s->sig = head[1];
        if (net_recv(cn->fd, (unsigned char *)s + hb_slot_header(cn->maxcnt), (size_t)bytes, 0,
                     &in->stop) != ACC_OK)
            break;
        hb_raise(&ring->sent);
        hb_raise(hb_bell(in, cn->to));
    }
    return NULL;
}

/* Outbox to socket: message n once the lane has queued it; then the sender's doorbell rings,
 * since its slot is free again. */
static void *sender_main(void *arg)
{
    net_arg_t a = *(net_arg_t *)arg;
    hb_inst_t *in = a.in;
    hb_conn_t *cn = a.cn;
    uint32_t n = 0;

    acc_mem_free(arg);
    for (;; n++) {
        const hb_slot_t *s;
        uint64_t bytes = 0;
        uint32_t head[2];

        while (!hb_reached(atomic_load(&cn->queued.value), n + 1)) {
            if (__atomic_load_n(&in->stop, __ATOMIC_ACQUIRE))
                return NULL;
            hb_sleep(&cn->queued, atomic_load(&cn->queued.value), 100000000L);
        }
        s = hb_outbox_slot(in, cn, n);
        head[0] = s->nchunks;
        head[1] = s->sig;
        for (uint32_t t = 0; t < s->nchunks; t++)
            bytes += s->lens[t] * in->es;
        if (net_send(cn->fd, head, sizeof(head), 0, &in->stop) != ACC_OK ||
            net_send(cn->fd, s->lens, (size_t)s->nchunks * sizeof(uint64_t), 0, &in->stop) !=
                ACC_OK ||
            net_send(cn->fd, (const unsigned char *)s + hb_slot_header(cn->maxcnt), (size_t)bytes,
                     0, &in->stop) != ACC_OK)
            break; /* stopped, or the receiver went away: the lane's timeout says so */
        hb_raise(&cn->drained);
        hb_raise(hb_bell(in, cn->from));
    }
    return NULL;
}

static acc_status_t start_thread(hb_inst_t *in, hb_conn_t *cn, void *(*fn)(void *))
{
    net_arg_t *a = acc_mem_alloc(sizeof(*a));
    if (!a)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    a->in = in;
    a->cn = cn;
    if (pthread_create(&in->net_threads[in->nnet], NULL, fn, a) != 0) {
        acc_mem_free(a);
        return acc_error_set(ACC_ERR_SYSTEM, "cannot start a thread for a connection");
    }
    in->nnet++;
    return ACC_OK;
}

acc_status_t hb_net_connect(acc_comm_t *c, hb_inst_t *in)
{
    double deadline = c->timeout_ms > 0 ? acc_now_s() + c->timeout_ms / 1e3 : 0;
    uint32_t i, expect = 0;
    acc_status_t st;

    uint32_t threads = 0;
    for (i = 0; i < in->nconns; i++) {
        expect += in->conns[i].remote && in->conns[i].to == in->rank;
        threads +=
            in->conns[i].remote && (in->conns[i].to == in->rank || in->conns[i].from == in->rank);
    }
    if (threads && !(in->net_threads = acc_mem_calloc(threads, sizeof(pthread_t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
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
        if ((st = start_thread(in, cn, sender_main)) != ACC_OK)
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
        if ((st = start_thread(in, &in->conns[h.conn], receiver_main)) != ACC_OK)
            return st;
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
}
