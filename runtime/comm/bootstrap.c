/*
 * The bootstrap: how the ranks of a communicator find each other, and the small collectives
 * they run among themselves (agreeing on tables, exchanging shared-memory names and addresses).
 *
 * The unique id names a rendezvous: an address and a random nonce.  Either a thread of the
 * process that made the id serves it (acc_get_unique_id, NCCL's way), or rank 0 serves it
 * itself at a well-known HOST:PORT (acc_unique_id_from_string, the launchers' MASTER_ADDR
 * way).  Every rank opens a listening socket of its own, connects to the rendezvous and sends
 * a hello: the nonce, its rank, the rank count and its listening address.  The rendezvous
 * checks them (same count, each rank once) and answers every rank with the table of listening
 * addresses.  Then every rank but 0 holds one connection to rank 0 - the star the collectives
 * below run over - and the listening sockets take the host backend's connections between nodes.
 *
 * A star through rank 0 costs O(ranks) at rank 0 per collective; they are few and small
 * (a few per communicator and per new plan), so the simplicity is worth it.
 */
#include "rt_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define ID_MAGIC    "accid01"
#define HELLO_MAGIC 0x61636368u /* "acch" */
enum { MODE_THREAD = 1, MODE_RANK0 = 2 };

/* The id's bytes: magic, mode, nonce, and the rendezvous address. */
typedef struct {
    char magic[8];
    uint32_t mode;
    uint32_t addr_len;
    uint8_t nonce[BOOT_NONCE_BYTES];
    uint8_t addr[sizeof(struct sockaddr_storage) > 96 ? 96 : sizeof(struct sockaddr_storage)];
} id_t_;

_Static_assert(sizeof(id_t_) <= ACC_UNIQUE_ID_BYTES, "the id must fit in acc_unique_id_t");

typedef struct {
    uint32_t magic;
    int32_t rank, nranks;
    uint32_t addr_len;
    uint8_t nonce[BOOT_NONCE_BYTES];
    uint8_t addr[96];
} hello_t;

/* The rendezvous' answer: 0, or why this rank was refused (then the text). */
typedef struct {
    int32_t status;
    char text[188];
} answer_t;

struct rt_boot {
    int rank, nranks, timeout_ms;
    const volatile int *abort_flag;
    uint8_t nonce[BOOT_NONCE_BYTES];
    int listen_fd;
    int *fds; /* rank 0: a connection to every rank (fds[0] unused); others: fds[0] to rank 0 */
    net_addr_t *addrs;
    uint32_t seq; /* collectives so far, to catch ranks that call them out of order */
};

static double deadline_of(int timeout_ms)
{
    return timeout_ms > 0 ? acc_now_s() + timeout_ms / 1e3 : 0;
}

static acc_status_t parse_id(const acc_unique_id_t *id, id_t_ *out)
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

static void id_addr(const id_t_ *id, net_addr_t *a)
{
    memset(a, 0, sizeof(*a));
    memcpy(&a->ss, id->addr, id->addr_len);
    a->len = id->addr_len;
}

static acc_status_t new_nonce(uint8_t nonce[BOOT_NONCE_BYTES])
{
    if (getrandom(nonce, BOOT_NONCE_BYTES, 0) != BOOT_NONCE_BYTES)
        return acc_error_set(ACC_ERR_SYSTEM, "getrandom: %s", strerror(errno));
    return ACC_OK;
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

/* ---- the rendezvous --------------------------------------------------------------------- */

typedef struct {
    int listen_fd;
    int nranks; /* 0 until the first hello */
    uint8_t nonce[BOOT_NONCE_BYTES];
    int *fds; /* per rank, -1 until it arrives */
    hello_t *hellos;
    double deadline;
    const volatile int *abort_flag;
} rendezvous_t;

static void refuse(int fd, const char *fmt, ...) ACC_PRINTF(2, 3);

static void refuse(int fd, const char *fmt, ...)
{
    answer_t ans;
    va_list ap;
    memset(&ans, 0, sizeof(ans));
    ans.status = -1;
    va_start(ap, fmt);
    vsnprintf(ans.text, sizeof(ans.text), fmt, ap);
    va_end(ap);
    net_send(fd, &ans, sizeof(ans), acc_now_s() + 1, NULL);
}

/* Take one connection: keep it when its hello is right, refuse it otherwise.  1 when a new rank
 * arrived, 0 for a connection refused or not ours, < 0 on failure. */
static int take_hello(rendezvous_t *rv, int fd)
{
    hello_t h;
    if (net_recv(fd, &h, sizeof(h), acc_now_s() + 5, rv->abort_flag) != ACC_OK ||
        h.magic != HELLO_MAGIC || memcmp(h.nonce, rv->nonce, BOOT_NONCE_BYTES) != 0) {
        close(fd); /* not one of ours: a port scanner, or a rank of another communicator */
        return 0;
    }
    if (!rv->nranks && h.nranks >= 1 && h.nranks <= (1 << 20)) {
        rv->nranks = h.nranks;
        rv->fds = acc_mem_alloc((size_t)h.nranks * sizeof(int));
        rv->hellos = acc_mem_calloc((size_t)h.nranks, sizeof(hello_t));
        if (!rv->fds || !rv->hellos) {
            close(fd);
            acc_error_set(ACC_ERR_NOMEM, "out of memory for the rendezvous");
            return -1;
        }
        for (int r = 0; r < h.nranks; r++)
            rv->fds[r] = -1;
    }
    if (h.nranks != rv->nranks) {
        refuse(fd, "this rank said nranks %d, the first rank to arrive %d", h.nranks, rv->nranks);
    } else if (h.rank < 0 || h.rank >= rv->nranks || rv->fds[h.rank] >= 0) {
        refuse(fd, "rank %d is out of range or already taken (nranks %d)", h.rank, rv->nranks);
    } else {
        rv->fds[h.rank] = fd;
        rv->hellos[h.rank] = h;
        return 1;
    }
    close(fd);
    return 0;
}

/* Wait for every rank (the caller's own hello counts when it is rank 0 and serves), then
 * answer each with the address table.  Connections stay open in rv->fds. */
static acc_status_t rendezvous_run(rendezvous_t *rv, int arrived)
{
    acc_status_t st;
    while (!rv->nranks || arrived < rv->nranks) {
        int fd, got;
        if ((st = net_accept(rv->listen_fd, rv->deadline, rv->abort_flag, &fd)) != ACC_OK)
            return acc_error_prefix(st, "bootstrap rendezvous (%d of %d ranks arrived): ", arrived,
                                    rv->nranks);
        if ((got = take_hello(rv, fd)) < 0)
            return ACC_ERR_NOMEM;
        arrived += got;
    }
    for (int r = 0; r < rv->nranks; r++) {
        answer_t ans;
        if (rv->fds[r] < 0)
            continue; /* the serving rank 0 itself */
        memset(&ans, 0, sizeof(ans));
        if ((st = net_send(rv->fds[r], &ans, sizeof(ans), rv->deadline, rv->abort_flag)) !=
                ACC_OK ||
            (st = net_send(rv->fds[r], rv->hellos, (size_t)rv->nranks * sizeof(hello_t),
                           rv->deadline, rv->abort_flag)) != ACC_OK)
            return acc_error_prefix(st, "bootstrap rendezvous, answering rank %d: ", r);
    }
    return ACC_OK;
}

static void rendezvous_free(rendezvous_t *rv)
{
    for (int r = 0; rv->fds && r < rv->nranks; r++)
        net_close(&rv->fds[r]);
    acc_mem_free(rv->fds);
    acc_mem_free(rv->hellos);
    net_close(&rv->listen_fd);
}

/* The thread acc_get_unique_id starts: serve one rendezvous, then close everything.  It gives
 * up after an hour without every rank (a job that never started its ranks). */
static void *root_main(void *arg)
{
    rendezvous_t *rv = arg;
    if (rendezvous_run(rv, 0) != ACC_OK)
        ACC_WARN(RUNTIME, "bootstrap rendezvous gave up: %s", acc_error_message());
    rendezvous_free(rv);
    acc_mem_free(rv);
    return NULL;
}

/* The address other machines reach this one at, for an id nobody has reached yet: the host
 * name's, else the loopback.  In containers the host name often resolves to 127.0.0.1, which
 * other nodes cannot reach: launchers across nodes name an address (acc_unique_id_from_string),
 * and later rendezvous of the same ranks never come here (boot_root_start_near). */
static void host_addr(net_addr_t *a)
{
    char host[256];
    if (gethostname(host, sizeof(host)) != 0 || net_resolve(host, "0", a) != ACC_OK)
        net_resolve("127.0.0.1", "0", a);
}

/* A rendezvous thread listening at `at` (its port ignored: the kernel picks one). */
static acc_status_t root_start_at(const net_addr_t *at, acc_unique_id_t *out)
{
    rendezvous_t *rv = acc_mem_calloc(1, sizeof(*rv));
    net_addr_t a = *at, bound;
    id_t_ id;
    pthread_t tid;
    acc_status_t st;

    if (!rv)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the rendezvous");
    rv->listen_fd = -1;
    net_set_port(&a, 0);
    if ((st = new_nonce(rv->nonce)) != ACC_OK ||
        (st = net_listen(&a, &rv->listen_fd, &bound)) != ACC_OK)
        goto out;
    rv->deadline = acc_now_s() + 3600;
    memset(&id, 0, sizeof(id));
    memcpy(id.magic, ID_MAGIC, sizeof(ID_MAGIC));
    id.mode = MODE_THREAD;
    memcpy(id.nonce, rv->nonce, BOOT_NONCE_BYTES);
    id.addr_len = bound.len;
    memcpy(id.addr, &bound.ss, bound.len);
    if (pthread_create(&tid, NULL, root_main, rv) != 0) {
        st = acc_error_set(ACC_ERR_SYSTEM, "cannot start the rendezvous thread");
        goto out;
    }
    pthread_detach(tid);
    memset(out, 0, sizeof(*out));
    memcpy(out->internal, &id, sizeof(id));
    return ACC_OK;
out:
    rendezvous_free(rv);
    acc_mem_free(rv);
    return st;
}

acc_status_t boot_root_start(acc_unique_id_t *out)
{
    net_addr_t a;
    host_addr(&a);
    return root_start_at(&a, out);
}

acc_status_t boot_root_start_near(const rt_boot_t *b, acc_unique_id_t *out)
{
    /* Rank 0's listening address is where every peer has connected to it already (the star,
     * or the well-known HOST:PORT), so a rendezvous on its interface is one they can reach. */
    return root_start_at(&b->addrs[0], out);
}

acc_status_t boot_id_from_string(const char *host_port, acc_unique_id_t *out)
{
    char host[256];
    const char *colon;
    net_addr_t a;
    id_t_ id;
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

static acc_status_t send_hello(rt_boot_t *b, int fd, double deadline)
{
    hello_t h;
    net_addr_t mine = b->addrs[b->rank];
    memset(&h, 0, sizeof(h));
    h.magic = HELLO_MAGIC;
    h.rank = b->rank;
    h.nranks = b->nranks;
    memcpy(h.nonce, b->nonce, BOOT_NONCE_BYTES);
    h.addr_len = mine.len;
    memcpy(h.addr, &mine.ss, mine.len);
    return net_send(fd, &h, sizeof(h), deadline, b->abort_flag);
}

/* Read the rendezvous' answer and the address table. */
static acc_status_t read_table(rt_boot_t *b, int fd, double deadline)
{
    answer_t ans;
    hello_t *all = NULL;
    acc_status_t st;

    if ((st = net_recv(fd, &ans, sizeof(ans), deadline, b->abort_flag)) != ACC_OK)
        return acc_error_prefix(st, "bootstrap, waiting for the other ranks: ");
    if (ans.status != 0) {
        ans.text[sizeof(ans.text) - 1] = '\0';
        return acc_error_set(ACC_ERR_INVALID, "the rendezvous refused rank %d: %s", b->rank,
                             ans.text);
    }
    if (!(all = acc_mem_alloc((size_t)b->nranks * sizeof(hello_t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the bootstrap");
    if ((st = net_recv(fd, all, (size_t)b->nranks * sizeof(hello_t), deadline, b->abort_flag)) ==
        ACC_OK)
        for (int r = 0; r < b->nranks; r++) {
            memset(&b->addrs[r], 0, sizeof(net_addr_t));
            memcpy(&b->addrs[r].ss, all[r].addr, all[r].addr_len);
            b->addrs[r].len = all[r].addr_len;
        }
    acc_mem_free(all);
    return st;
}

/* Rank 0 of an id from HOST:PORT: serve the rendezvous on the well-known address. */
static acc_status_t join_serving(rt_boot_t *b, const id_t_ *id, double deadline)
{
    rendezvous_t rv;
    net_addr_t a;
    acc_status_t st;

    memset(&rv, 0, sizeof(rv));
    id_addr(id, &a);
    if ((st = net_listen(&a, &rv.listen_fd, &b->addrs[0])) != ACC_OK)
        return acc_error_prefix(st, "rank 0 serving the rendezvous: ");
    memcpy(rv.nonce, b->nonce, BOOT_NONCE_BYTES);
    rv.nranks = b->nranks;
    rv.deadline = deadline;
    rv.abort_flag = b->abort_flag;
    rv.fds = acc_mem_alloc((size_t)b->nranks * sizeof(int));
    rv.hellos = acc_mem_calloc((size_t)b->nranks, sizeof(hello_t));
    if (!rv.fds || !rv.hellos) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for the rendezvous");
        goto out;
    }
    for (int r = 0; r < b->nranks; r++)
        rv.fds[r] = -1;
    rv.hellos[0].addr_len = b->addrs[0].len;
    memcpy(rv.hellos[0].addr, &b->addrs[0].ss, b->addrs[0].len);
    if ((st = rendezvous_run(&rv, 1)) != ACC_OK)
        goto out;
    for (int r = 0; r < b->nranks; r++) {
        memset(&b->addrs[r], 0, sizeof(net_addr_t));
        memcpy(&b->addrs[r].ss, rv.hellos[r].addr, rv.hellos[r].addr_len);
        b->addrs[r].len = rv.hellos[r].addr_len;
        b->fds[r] = rv.fds[r]; /* the rendezvous' connections are the star */
        rv.fds[r] = -1;
    }
    b->listen_fd = rv.listen_fd;
    rv.listen_fd = -1;
out:
    rendezvous_free(&rv);
    return st;
}

/* Any other rank: listen on the interface that reaches the rendezvous, say hello, read the
 * table.  With a rendezvous thread, rank 0 then takes the others' connections for the star. */
static acc_status_t join_client(rt_boot_t *b, const id_t_ *id, double deadline)
{
    net_addr_t a;
    int fd = -1;
    acc_status_t st;

    id_addr(id, &a);
    if ((st = net_connect(&a, deadline, b->abort_flag, &fd)) != ACC_OK)
        return acc_error_prefix(st, "rank %d joining the bootstrap rendezvous: ", b->rank);
    if ((st = net_local_addr(fd, &b->addrs[b->rank])) != ACC_OK)
        goto out;
    net_set_port(&b->addrs[b->rank], 0);
    if ((st = net_listen(&b->addrs[b->rank], &b->listen_fd, &b->addrs[b->rank])) != ACC_OK ||
        (st = send_hello(b, fd, deadline)) != ACC_OK ||
        (st = read_table(b, fd, deadline)) != ACC_OK)
        goto out;
    if (id->mode == MODE_RANK0) {
        b->fds[0] = fd; /* rank 0 served: this is the star's connection already */
        fd = -1;
    } else if (b->rank == 0) {
        for (int got = 1; got < b->nranks;) {
            hello_t h;
            int c;
            if ((st = net_accept(b->listen_fd, deadline, b->abort_flag, &c)) != ACC_OK)
                goto out;
            if (net_recv(c, &h, sizeof(h), deadline, b->abort_flag) != ACC_OK ||
                h.magic != HELLO_MAGIC || memcmp(h.nonce, b->nonce, BOOT_NONCE_BYTES) != 0 ||
                h.rank <= 0 || h.rank >= b->nranks || b->fds[h.rank] >= 0) {
                close(c);
                continue;
            }
            b->fds[h.rank] = c;
            got++;
        }
    } else {
        if ((st = net_connect(&b->addrs[0], deadline, b->abort_flag, &b->fds[0])) != ACC_OK ||
            (st = send_hello(b, b->fds[0], deadline)) != ACC_OK)
            goto out;
    }
out:
    net_close(&fd);
    if (st != ACC_OK)
        acc_error_prefix(st, "bootstrap of rank %d of %d: ", b->rank, b->nranks);
    return st;
}

acc_status_t boot_create(const acc_unique_id_t *uid, int rank, int nranks, int timeout_ms,
                         const volatile int *abort_flag, rt_boot_t **out)
{
    rt_boot_t *b;
    id_t_ id;
    acc_status_t st;
    double deadline = deadline_of(timeout_ms);

    *out = NULL;
    if ((st = parse_id(uid, &id)) != ACC_OK)
        return st;
    if (!(b = acc_mem_calloc(1, sizeof(*b))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the bootstrap");
    b->rank = rank;
    b->nranks = nranks;
    b->timeout_ms = timeout_ms;
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

/* ---- collectives over the star ------------------------------------------------------------ */

typedef struct {
    uint32_t seq;
    uint32_t bytes;
} frame_t;

static acc_status_t send_frame(rt_boot_t *b, int peer, const void *data, size_t bytes,
                               double deadline)
{
    frame_t f = {b->seq, (uint32_t)bytes};
    int fd = b->rank == 0 ? b->fds[peer] : b->fds[0];
    acc_status_t st = net_send(fd, &f, sizeof(f), deadline, b->abort_flag);
    if (st == ACC_OK && bytes)
        st = net_send(fd, data, bytes, deadline, b->abort_flag);
    if (st != ACC_OK)
        acc_error_prefix(st, "bootstrap step %u, rank %d sending to rank %d: ", b->seq, b->rank,
                         b->rank == 0 ? peer : 0);
    return st;
}

static acc_status_t recv_frame(rt_boot_t *b, int peer, void *data, size_t bytes, double deadline)
{
    frame_t f;
    int fd = b->rank == 0 ? b->fds[peer] : b->fds[0];
    acc_status_t st = net_recv(fd, &f, sizeof(f), deadline, b->abort_flag);
    if (st == ACC_OK && (f.seq != b->seq || f.bytes != bytes))
        st = acc_error_set(ACC_ERR_INTERNAL,
                           "bootstrap step %u: rank %d sent step %u of %u bytes where %zu were "
                           "due (the ranks called acc in different orders)",
                           b->seq, b->rank == 0 ? peer : 0, f.seq, f.bytes, bytes);
    else if (st == ACC_OK && bytes)
        st = net_recv(fd, data, bytes, deadline, b->abort_flag);
    if (st != ACC_OK && st != ACC_ERR_INTERNAL)
        acc_error_prefix(st, "bootstrap step %u, rank %d waiting for rank %d: ", b->seq, b->rank,
                         b->rank == 0 ? peer : 0);
    return st;
}

acc_status_t boot_allgather(rt_boot_t *b, const void *mine, size_t bytes, void *all)
{
    double deadline = deadline_of(b->timeout_ms);
    acc_status_t st = ACC_OK;
    int r;

    memcpy((char *)all + (size_t)b->rank * bytes, mine, bytes);
    if (b->rank == 0) {
        for (r = 1; r < b->nranks && st == ACC_OK; r++)
            st = recv_frame(b, r, (char *)all + (size_t)r * bytes, bytes, deadline);
        for (r = 1; r < b->nranks && st == ACC_OK; r++)
            st = send_frame(b, r, all, (size_t)b->nranks * bytes, deadline);
    } else {
        st = send_frame(b, 0, mine, bytes, deadline);
        if (st == ACC_OK)
            st = recv_frame(b, 0, all, (size_t)b->nranks * bytes, deadline);
    }
    b->seq++;
    return st;
}

acc_status_t boot_bcast(rt_boot_t *b, void *buf, size_t bytes, int root)
{
    double deadline = deadline_of(b->timeout_ms);
    acc_status_t st = ACC_OK;
    int r;

    if (b->rank == 0) {
        if (root != 0)
            st = recv_frame(b, root, buf, bytes, deadline);
        for (r = 1; r < b->nranks && st == ACC_OK; r++)
            if (r != root)
                st = send_frame(b, r, buf, bytes, deadline);
    } else if (b->rank == root) {
        st = send_frame(b, 0, buf, bytes, deadline);
    } else {
        st = recv_frame(b, 0, buf, bytes, deadline);
    }
    b->seq++;
    return st;
}

acc_status_t boot_barrier(rt_boot_t *b)
{
    char one = 1, *all = acc_mem_alloc((size_t)b->nranks);
    acc_status_t st;
    if (!all)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a barrier");
    st = boot_allgather(b, &one, 1, all);
    acc_mem_free(all);
    return st;
}

const net_addr_t *boot_peer_addr(const rt_boot_t *b, int rank)
{
    return &b->addrs[rank];
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
