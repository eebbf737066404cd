/*
 * The bootstrap: how the ranks of a communicator find each other (the collectives they then
 * run among themselves are in boot_star.c, the rendezvous in boot_rendezvous.c).
 *
 * The unique id names a rendezvous: an address and a random nonce.  Either a thread of the
 * process that made the id serves it (acc_get_unique_id, NCCL's way), or rank 0 serves it
 * itself at a well-known HOST:PORT (acc_unique_id_from_string, the launchers' MASTER_ADDR
 * way).  Every rank opens a listening socket of its own, connects to the rendezvous and sends
 * a hello: the nonce, its rank, the rank count, its listening address and its timeout.  The
 * rendezvous checks them (same count, each rank once) and answers every rank with rank 0's
 * listening address.  Then every rank but 0 holds one connection to rank 0 - the star the
 * bootstrap's collectives run over - and the listening sockets take the host backend's
 * connections between nodes.  Rank 0 alone knows every rank's address (from the hellos); the
 * others ask it for those of the peers they connect to (boot_fetch_addrs), so that no step
 * sends any rank N addresses (docs/scale.md).
 *
 * Ids and their lives.  A thread's rendezvous listens before anyone can know its id, and serves
 * one communicator: a rank refused at its address knows at once that the id was used already
 * (or its process is gone) and fails without waiting.  Rank 0 holds a well-known HOST:PORT only
 * for the rendezvous and listens for its peers on a port of its own, so the same HOST:PORT can
 * serve one communicator after another (a launcher's MASTER_PORT), and a second rank 0 at the
 * same time fails at once (the port is taken).
 */
#include "boot_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

double boot_deadline(int timeout_ms)
{
    return timeout_ms > 0 ? acc_now_s() + timeout_ms / 1e3 : 0;
}

static acc_status_t parse_id(const acc_unique_id_t *id, boot_id_t *out)
{
    memcpy(out, id->internal, sizeof(*out));
    if (memcmp(out->magic, ID_MAGIC, sizeof(ID_MAGIC)) != 0 ||
        (out->mode != MODE_THREAD && out->mode != MODE_RANK0) || out->addr_len == 0 ||
        out->addr_len > sizeof(out->addr))
        return acc_error_set(ACC_ERR_INVALID,
                             "the unique id is not one acc_get_unique_id or "
                             "acc_unique_id_from_string made (were its 128 bytes passed whole?)");
    return ACC_OK;
}

static void id_addr(const boot_id_t *id, net_addr_t *a)
{
    memset(a, 0, sizeof(*a));
    memcpy(&a->ss, id->addr, id->addr_len);
    a->len = id->addr_len;
}

static void hello_addr(const hello_t *h, net_addr_t *a)
{
    memset(a, 0, sizeof(*a));
    memcpy(&a->ss, h->addr, h->addr_len);
    a->len = h->addr_len;
}

/* The first bytes of the SHA-256 of text. */
static acc_status_t text_nonce(const char *text, uint8_t nonce[BOOT_NONCE_BYTES])
{
    acc_sha256_t *h = NULL;
    uint8_t digest[ACC_SHA256_LEN];
    acc_status_t st = acc_sha256_create(&h);
    if (st == ACC_OK) {
        acc_sha256_update(h, text, strlen(text));
        st = acc_sha256_final(h, digest);
    }
    acc_sha256_destroy(h);
    if (st == ACC_OK)
        memcpy(nonce, digest, BOOT_NONCE_BYTES);
    return st;
}

/* ---- ids ------------------------------------------------------------------------------- */

/* The address other machines reach this one at, for an id nobody has reached yet: the first
 * interface ACC_SOCKET_IFNAME names; else the host name's address unless it is a loopback (in
 * containers the host name often resolves to 127.0.0.1, which other nodes cannot reach); else
 * the first interface that is up and not a loopback; else the loopback (one machine).  Later
 * rendezvous of the same ranks never come here (boot_root_start_near). */
static acc_status_t host_addr(net_addr_t *a)
{
    const char *ifname = acc_setting_str(ACC_SETTING_SOCKET_IFNAME);
    char host[256];

    if (ifname[0]) {
        net_if_t ifs[NET_MAX_IFS];
        int n;
        acc_status_t st = net_interfaces("ACC_SOCKET_IFNAME", ifname, ifs, NET_MAX_IFS, &n);
        if (st == ACC_OK)
            *a = ifs[0].addr;
        return st;
    }
    if (gethostname(host, sizeof(host)) == 0 && net_resolve(host, "0", a) == ACC_OK &&
        !net_is_loopback(a))
        return ACC_OK;
    if (net_interface_addr(a))
        return ACC_OK;
    return net_resolve("127.0.0.1", "0", a);
}

static acc_status_t root_start_at(const net_addr_t *at, int wait_ms, acc_unique_id_t *out)
{
    boot_id_t id;
    acc_status_t st = rendezvous_start_thread(at, wait_ms, &id);
    if (st != ACC_OK)
        return st;
    memset(out, 0, sizeof(*out));
    memcpy(out->internal, &id, sizeof(id));
    return ACC_OK;
}

acc_status_t boot_root_start(int wait_ms, acc_unique_id_t *out)
{
    net_addr_t a;
    acc_status_t st = host_addr(&a);
    if (st != ACC_OK)
        return st;
    return root_start_at(&a, wait_ms, out);
}

acc_status_t boot_root_start_near(const rt_boot_t *b, acc_unique_id_t *out)
{
    /* Rank 0's listening address is on the interface where every peer has connected to it
     * already (the star, or the well-known HOST:PORT), so a rendezvous there is one they can
     * reach. */
    return root_start_at(&b->addrs[0], b->timeout_ms, out);
}

acc_status_t boot_id_from_string(const char *host_port, acc_unique_id_t *out)
{
    char host[256];
    const char *colon;
    net_addr_t a;
    boot_id_t id;
    acc_status_t st;
    int64_t port;

    colon = host_port ? strrchr(host_port, ':') : NULL;
    if (!colon || colon == host_port || (size_t)(colon - host_port) >= sizeof(host) ||
        acc_parse_int64(colon + 1, &port) != ACC_OK || port < 1 || port > 65535)
        return acc_error_set(ACC_ERR_INVALID, "'%s' is not HOST:PORT with a port from 1 to 65535",
                             host_port ? host_port : "(null)");
    memcpy(host, host_port, (size_t)(colon - host_port));
    host[colon - host_port] = '\0';
    if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [v6 address] */
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    if ((st = net_resolve(host, colon + 1, &a)) != ACC_OK)
        return st;
    memset(&id, 0, sizeof(id));
    memcpy(id.magic, ID_MAGIC, sizeof(ID_MAGIC));
    id.mode = MODE_RANK0;
    /* Every rank derives the id from the same text, so the nonce is the text's hash. */
    if ((st = text_nonce(host_port, id.nonce)) != ACC_OK)
        return st;
    id.addr_len = a.len;
    memcpy(id.addr, &a.ss, a.len);
    memset(out, 0, sizeof(*out));
    memcpy(out->internal, &id, sizeof(id));
    return ACC_OK;
}

/* ---- joining ---------------------------------------------------------------------------- */

static void make_hello(const rt_boot_t *b, hello_t *h)
{
    const net_addr_t *mine = &b->addrs[b->rank];
    memset(h, 0, sizeof(*h));
    h->magic = HELLO_MAGIC;
    h->rank = b->rank;
    h->nranks = b->nranks;
    h->timeout_ms = b->timeout_ms;
    memcpy(h->nonce, b->nonce, BOOT_NONCE_BYTES);
    h->addr_len = mine->len;
    memcpy(h->addr, &mine->ss, mine->len);
}

static acc_status_t send_hello(rt_boot_t *b, int fd, double deadline)
{
    hello_t h;
    make_hello(b, &h);
    boot_count(&b->traffic, 1, sizeof(h));
    return net_send(fd, &h, sizeof(h), deadline, b->abort_flag);
}

void boot_count(boot_traffic_t *t, int sent, size_t bytes)
{
    if (!t)
        return;
    if (sent) {
        t->msgs_sent++;
        t->bytes_sent += bytes;
    } else {
        t->msgs_recv++;
        t->bytes_recv += bytes;
    }
}

/* Read the rendezvous' answer and rank 0's address.  The rendezvous gives up when the ranks'
 * timeout has passed since the first of them arrived and then says why; waiting a little
 * longer than that hears its reason rather than a bare timeout. */
static acc_status_t read_table(rt_boot_t *b, int fd, double deadline)
{
    answer_t ans;
    hello_t h0;
    double wait = deadline > 0 ? deadline + (b->timeout_ms > 5000 ? 5.0 : b->timeout_ms / 1e3) : 0;
    acc_status_t st;

    if ((st = net_recv(fd, &ans, sizeof(ans), wait, b->abort_flag)) != ACC_OK)
        return acc_error_prefix(st, "bootstrap, waiting for the other ranks: ");
    if (ans.status != 0) {
        ans.text[sizeof(ans.text) - 1] = '\0';
        return acc_error_set(ans.status < 0 ? (acc_status_t)ans.status : ACC_ERR_INVALID,
                             "the rendezvous refused rank %d: %s", b->rank, ans.text);
    }
    if ((st = net_recv(fd, &h0, sizeof(h0), wait, b->abort_flag)) != ACC_OK)
        return acc_error_prefix(st, "bootstrap, reading rank 0's address: ");
    boot_count(&b->traffic, 0, sizeof(ans) + sizeof(h0));
    if (h0.rank != 0 || h0.addr_len == 0 || h0.addr_len > sizeof(h0.addr))
        return acc_error_set(ACC_ERR_INTERNAL, "the rendezvous sent no address of rank 0");
    if (b->rank != 0)
        hello_addr(&h0, &b->addrs[0]);
    return ACC_OK;
}

/* This rank's listening socket, on the interface of `near` (a local address). */
static acc_status_t listen_near(rt_boot_t *b, const net_addr_t *near)
{
    net_addr_t a = *near;
    net_set_port(&a, 0);
    return net_listen(&a, &b->listen_fd, &b->addrs[b->rank]);
}

/* Rank 0 of an id from HOST:PORT: serve the rendezvous on the well-known address, which it
 * gives back as soon as every rank has its answer. */
static acc_status_t join_serving(rt_boot_t *b, const boot_id_t *id, double deadline)
{
    rendezvous_t rv;
    acc_status_t st;

    memset(&rv, 0, sizeof(rv));
    rv.listen_fd = -1;
    id_addr(id, &rv.where);
    if ((st = net_listen(&rv.where, &rv.listen_fd, &rv.where)) != ACC_OK)
        return acc_error_prefix(st, "rank 0 serving the rendezvous: ");
    if ((st = listen_near(b, &rv.where)) != ACC_OK)
        goto out;
    memcpy(rv.nonce, b->nonce, BOOT_NONCE_BYTES);
    rv.nranks = b->nranks;
    rv.deadline = deadline;
    rv.serving_rank0 = 1;
    rv.abort_flag = b->abort_flag;
    rv.traffic = &b->traffic;
    rv.fds = acc_mem_alloc((size_t)b->nranks * sizeof(int));
    rv.hellos = acc_mem_calloc((size_t)b->nranks, sizeof(hello_t));
    if (!rv.fds || !rv.hellos) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for the rendezvous");
        goto out;
    }
    for (int r = 0; r < b->nranks; r++)
        rv.fds[r] = -1;
    make_hello(b, &rv.hellos[0]);
    if ((st = rendezvous_run(&rv, 1)) != ACC_OK)
        goto out;
    for (int r = 0; r < b->nranks; r++) {
        hello_addr(&rv.hellos[r], &b->addrs[r]);
        b->fds[r] = rv.fds[r]; /* the rendezvous' connections are the star */
        rv.fds[r] = -1;
    }
out:
    rendezvous_free(&rv);
    return st;
}

/* Rank 0 with a rendezvous thread: take the others' connections for the star. */
static acc_status_t take_star(rt_boot_t *b, double deadline)
{
    char missing[160];
    acc_status_t st;

    for (int got = 1; got < b->nranks;) {
        hello_t h;
        int c = -1;
        if ((st = net_accept(b->listen_fd, deadline, b->abort_flag, &c)) != ACC_OK) {
            boot_missing_text(b->fds, 1, b->nranks, missing, sizeof(missing));
            return acc_error_prefix(st,
                                    "%s never connected to rank 0 after the rendezvous: ", missing);
        }
        if (net_recv(c, &h, sizeof(h), deadline, b->abort_flag) != ACC_OK ||
            h.magic != HELLO_MAGIC || memcmp(h.nonce, b->nonce, BOOT_NONCE_BYTES) != 0 ||
            h.rank <= 0 || h.rank >= b->nranks || b->fds[h.rank] >= 0) {
            net_close(&c);
            continue;
        }
        boot_count(&b->traffic, 0, sizeof(h));
        hello_addr(&h, &b->addrs[h.rank]);
        b->fds[h.rank] = c;
        got++;
    }
    return ACC_OK;
}

/* Any other rank: listen on the interface that reaches the rendezvous, say hello, read rank
 * 0's address.  With a rendezvous thread, rank 0 then takes the others' connections for the
 * star. */
static acc_status_t join_client(rt_boot_t *b, const boot_id_t *id, double deadline)
{
    char where[96];
    net_addr_t a, local;
    int fd = -1, thread = id->mode == MODE_THREAD;
    acc_status_t st;

    id_addr(id, &a);
    net_addr_text(&a, where, sizeof(where));
    /* A thread's rendezvous listened before its id existed: refused means it is gone. */
    if ((st = net_connect_once(&a, deadline, b->abort_flag, thread, &fd)) != ACC_OK) {
        if (st == ACC_ERR_NOT_FOUND)
            return acc_error_set(ACC_ERR_INVALID,
                                 "rank %d: nothing listens at the rendezvous %s of this id any "
                                 "more: an id from acc_get_unique_id serves one communicator "
                                 "(make a new id for each), or the process that made it has "
                                 "exited%s",
                                 b->rank, where,
                                 net_is_loopback(&a)
                                     ? "; or it was made on another machine, where it names "
                                       "the loopback (set ACC_SOCKET_IFNAME there)"
                                     : "");
        return acc_error_prefix(st, "rank %d joining the bootstrap rendezvous: ", b->rank);
    }
    if ((st = net_local_addr(fd, &local)) != ACC_OK || (st = listen_near(b, &local)) != ACC_OK ||
        (st = send_hello(b, fd, deadline)) != ACC_OK ||
        (st = read_table(b, fd, deadline)) != ACC_OK)
        goto out;
    if (!thread) {
        b->fds[0] = fd; /* rank 0 served: this is the star's connection already */
        fd = -1;
    } else if (b->rank == 0) {
        st = take_star(b, deadline);
    } else {
        /* Rank 0 listened before it said hello, so refused means rank 0 is gone. */
        if ((st = net_connect_once(&b->addrs[0], deadline, b->abort_flag, 1, &b->fds[0])) !=
                ACC_OK ||
            (st = send_hello(b, b->fds[0], deadline)) != ACC_OK)
            acc_error_prefix(st, "connecting to rank 0 after the rendezvous: ");
    }
out:
    net_close(&fd);
    return st;
}

acc_status_t boot_create(const acc_unique_id_t *uid, int rank, int nranks, int timeout_ms,
                         const volatile int *abort_flag, rt_boot_t **out)
{
    rt_boot_t *b;
    boot_id_t id;
    acc_status_t st;
    double deadline = boot_deadline(timeout_ms);

    *out = NULL;
    if ((st = parse_id(uid, &id)) != ACC_OK)
        return st;
    if (!(b = acc_mem_calloc(1, sizeof(*b))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the bootstrap");
    b->rank = rank;
    b->nranks = nranks;
    b->timeout_ms = b->wait_ms = timeout_ms;
    b->abort_flag = abort_flag;
    b->listen_fd = -1;
    memcpy(b->nonce, id.nonce, BOOT_NONCE_BYTES);
    b->fds = acc_mem_alloc((size_t)nranks * sizeof(int));
    b->addrs = acc_mem_calloc((size_t)nranks, sizeof(net_addr_t));
    if (!b->fds || !b->addrs) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for the bootstrap");
        goto out;
    }
    for (int r = 0; r < nranks; r++)
        b->fds[r] = -1;
    if (id.mode == MODE_RANK0 && rank == 0)
        st = join_serving(b, &id, deadline);
    else
        st = join_client(b, &id, deadline);
    if (st == ACC_OK)
        st = boot_barrier(b); /* everyone is connected before anyone goes on */
out:
    if (st != ACC_OK) {
        acc_error_prefix(st, "bootstrap of rank %d of %d: ", rank, nranks);
        boot_destroy(b);
        return st;
    }
    *out = b;
    return ACC_OK;
}

void boot_destroy(rt_boot_t *b)
{
    if (!b)
        return;
    for (int r = 0; b->fds && r < b->nranks; r++)
        net_close(&b->fds[r]);
    net_close(&b->listen_fd);
    acc_mem_free(b->fds);
    acc_mem_free(b->addrs);
    acc_mem_free(b);
}

const net_addr_t *boot_peer_addr(const rt_boot_t *b, int rank)
{
    return &b->addrs[rank];
}

int boot_peer_known(const rt_boot_t *b, int rank)
{
    return b->addrs[rank].len != 0;
}

acc_status_t boot_fetch_addrs(rt_boot_t *b, const int *ranks, int n)
{
    return boot_fetch(b, b->addrs, sizeof(net_addr_t), ranks, n);
}

void boot_traffic(const rt_boot_t *b, boot_traffic_t *out)
{
    *out = b->traffic;
}

int boot_listen_fd(const rt_boot_t *b)
{
    return b->listen_fd;
}

const uint8_t *boot_nonce(const rt_boot_t *b)
{
    return b->nonce;
}

int boot_timeout_ms(const rt_boot_t *b)
{
    return b->timeout_ms;
}
