/*
 * TCP sockets for the bootstrap and for the host backend's steps between nodes: listening,
 * connecting until a deadline, and whole-buffer sends and receives that give up at a deadline
 * or when the communicator is aborted.  Every failure names the peer and what was being done.
 * (The machine's own interfaces and addresses are in net_if.c.)
 *
 * Forks.  A process that forks after making a communicator (PyTorch's DataLoader workers) must
 * not leave its sockets open in the child: a listening socket held by a child keeps accepting
 * connections into a backlog nobody serves after the parent is gone, and a connection held by
 * a child hides the parent's death from its peers (they see no end of file).  Close-on-exec
 * does not help a fork without exec, so every socket acc makes is recorded here, and a child
 * closes them all as it starts (pthread_atfork); the fork count lets a communicator tell that
 * it was made by another process (net_forks).
 */
#include "rt_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A poll slice: how often a blocked socket call looks at the abort flag. */
#define SLICE_MS 100

/* ---- the sockets acc owns, which a forked child closes ------------------------------------- */

static pthread_mutex_t owned_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t owned_once = PTHREAD_ONCE_INIT;
static unsigned char *owned; /* per descriptor: 1 when it is one of acc's sockets */
static size_t owned_cap;
unsigned net_fork_count;

static void before_fork(void)
{
    pthread_mutex_lock(&owned_lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&owned_lock);
}

/* The child's only thread is the one that forked, which holds the lock (before_fork). */
static void after_fork_child(void)
{
    for (size_t fd = 0; fd < owned_cap; fd++)
        if (owned[fd]) {
            close((int)fd);
            owned[fd] = 0;
        }
    __atomic_add_fetch(&net_fork_count, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&owned_lock);
}

static void owned_init(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

void net_init(void)
{
    pthread_once(&owned_once, owned_init);
}

/* Record fd (with owned_lock held); on failure close it and return -1. */
static int own(int fd)
{
    if (fd < 0)
        return fd;
    if ((size_t)fd >= owned_cap) {
        size_t cap = owned_cap ? owned_cap : 256;
        unsigned char *p;
        while (cap <= (size_t)fd)
            cap *= 2;
        if (!(p = acc_mem_realloc_array(owned, cap, 1))) {
            close(fd);
            errno = ENOMEM;
            return -1;
        }
        memset(p + owned_cap, 0, cap - owned_cap);
        owned = p;
        owned_cap = cap;
    }
    owned[fd] = 1;
    return fd;
}

/* A new socket of acc's: close-on-exec, and closed in forked children. */
static int new_socket(int family, int flags)
{
    int fd;
    net_init();
    pthread_mutex_lock(&owned_lock);
    fd = own(socket(family, SOCK_STREAM | SOCK_CLOEXEC | flags, 0));
    pthread_mutex_unlock(&owned_lock);
    return fd;
}

void net_close(int *fd)
{
    if (*fd < 0)
        return;
    pthread_mutex_lock(&owned_lock);
    if ((size_t)*fd < owned_cap)
        owned[*fd] = 0;
    close(*fd);
    pthread_mutex_unlock(&owned_lock);
    *fd = -1;
}

void net_addr_text(const net_addr_t *a, char *buf, size_t n)
{
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    if (getnameinfo((const struct sockaddr *)&a->ss, a->len, host, sizeof(host), serv, sizeof(serv),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(buf, n, "(unprintable address)");
        return;
    }
    snprintf(buf, n, a->ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, serv);
}

acc_status_t net_resolve(const char *host, const char *port, net_addr_t *out)
{
    struct addrinfo hints, *res = NULL;
    int rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0 || !res)
        return acc_error_set(ACC_ERR_INVALID, "cannot resolve '%s' (port %s): %s", host, port,
                             gai_strerror(rc));
    memset(out, 0, sizeof(*out));
    memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
    out->len = (socklen_t)res->ai_addrlen;
    freeaddrinfo(res);
    return ACC_OK;
}

static void tune_socket(int fd)
{
    int one = 1;
    /* Messages are whole steps of a collective: sending them at once matters more than
     * coalescing small ones. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---- sockets ------------------------------------------------------------------------------ */

acc_status_t net_listen(const net_addr_t *bind_to, int *fd_out, net_addr_t *bound)
{
    int fd, one = 1;
    net_addr_t a = *bind_to;

    /* Non-blocking: accept never waits with the descriptors' lock held (net_accept polls). */
    fd = new_socket(a.ss.ss_family, SOCK_NONBLOCK);
    if (fd < 0)
        return acc_error_set(ACC_ERR_SYSTEM, "socket: %s", strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&a.ss, a.len) != 0 || listen(fd, 1024) != 0) {
        char text[96];
        int e = errno;
        net_addr_text(&a, text, sizeof(text));
        net_close(&fd);
        return acc_error_set(ACC_ERR_SYSTEM, "cannot listen on %s: %s%s", text, strerror(e),
                             e == EADDRINUSE ? " (another communicator is being set up at this "
                                               "address now, or another program holds the port)"
                                             : "");
    }
    a.len = sizeof(a.ss);
    getsockname(fd, (struct sockaddr *)&a.ss, &a.len);
    tune_socket(fd);
    *fd_out = fd;
    if (bound)
        *bound = a;
    return ACC_OK;
}

/* Milliseconds left until deadline (seconds on acc_now_s's clock; <= 0: no deadline). */
static int left_ms(double deadline)
{
    double left;
    if (deadline <= 0)
        return SLICE_MS;
    left = (deadline - acc_now_s()) * 1e3;
    if (left <= 0)
        return 0;
    return left < SLICE_MS ? (int)left + 1 : SLICE_MS;
}

static int aborted(const volatile int *abort_flag)
{
    return abort_flag && __atomic_load_n(abort_flag, __ATOMIC_ACQUIRE);
}

/* Connect to `to` (from `from` when given), retrying until the deadline. */
static acc_status_t connect_to(const net_addr_t *from, const net_addr_t *to, double deadline,
                               const volatile int *abort_flag, int refused_is_final, int *fd_out)
{
    char text[96];
    int fd, e = 0;

    net_addr_text(to, text, sizeof(text));
    for (;;) {
        fd = new_socket(to->ss.ss_family, 0);
        if (fd < 0)
            return acc_error_set(ACC_ERR_SYSTEM, "socket: %s", strerror(errno));
        if (from) {
            net_addr_t a = *from;
            net_set_port(&a, 0);
            if (bind(fd, (const struct sockaddr *)&a.ss, a.len) != 0) {
                char mine[96];
                e = errno;
                net_close(&fd);
                net_addr_text(&a, mine, sizeof(mine));
                return acc_error_set(ACC_ERR_SYSTEM, "cannot connect from %s: %s", mine,
                                     strerror(e));
            }
        }
        if (connect(fd, (const struct sockaddr *)&to->ss, to->len) == 0) {
            tune_socket(fd);
            *fd_out = fd;
            return ACC_OK;
        }
        e = errno;
        net_close(&fd);
        if (e == ECONNREFUSED && refused_is_final)
            return acc_error_set(ACC_ERR_NOT_FOUND, "nothing listens at %s", text);
        /* The peer may not listen yet (ranks start in any order): retry until the deadline. */
        if (e != ECONNREFUSED && e != ETIMEDOUT && e != ENETUNREACH && e != EAGAIN && e != EINTR)
            break;
        if (aborted(abort_flag))
            return acc_error_set(ACC_ERR_ABORTED, "connecting to %s: aborted", text);
        if (left_ms(deadline) == 0)
            return acc_error_set(ACC_ERR_TIMEOUT, "nobody accepted a connection at %s in time",
                                 text);
        usleep(20000);
    }
    return acc_error_set(ACC_ERR_SYSTEM, "cannot connect to %s: %s", text, strerror(e));
}

acc_status_t net_connect(const net_addr_t *to, double deadline, const volatile int *abort_flag,
                         int *fd_out)
{
    return connect_to(NULL, to, deadline, abort_flag, 0, fd_out);
}

acc_status_t net_connect_once(const net_addr_t *to, double deadline, const volatile int *abort_flag,
                              int refused_is_final, int *fd_out)
{
    return connect_to(NULL, to, deadline, abort_flag, refused_is_final, fd_out);
}

acc_status_t net_connect_from(const net_addr_t *from, const net_addr_t *to, double deadline,
                              const volatile int *abort_flag, int *fd_out)
{
    return connect_to(from, to, deadline, abort_flag, 0, fd_out);
}

acc_status_t net_accept(int listen_fd, double deadline, const volatile int *abort_flag, int *fd_out)
{
    struct pollfd p = {.fd = listen_fd, .events = POLLIN};
    for (;;) {
        int ms = left_ms(deadline), fd;
        if (aborted(abort_flag))
            return acc_error_set(ACC_ERR_ABORTED, "waiting for a connection: aborted");
        if (ms == 0)
            return acc_error_set(ACC_ERR_TIMEOUT, "no peer connected in time");
        if (poll(&p, 1, ms) <= 0)
            continue;
        pthread_mutex_lock(&owned_lock);
        fd = own(accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC));
        pthread_mutex_unlock(&owned_lock);
        if (fd >= 0) {
            /* Accepted sockets do not inherit the listener's O_NONBLOCK on Linux; every
             * transfer here passes MSG_DONTWAIT anyway. */
            tune_socket(fd);
            *fd_out = fd;
            return ACC_OK;
        }
        if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
            return acc_error_set(ACC_ERR_SYSTEM, "accept: %s", strerror(errno));
    }
}

acc_status_t net_send(int fd, const void *data, size_t len, double deadline,
                      const volatile int *abort_flag)
{
    const char *p = data;
    struct pollfd pf = {.fd = fd, .events = POLLOUT};
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return acc_error_set(errno == EPIPE || errno == ECONNRESET ? ACC_ERR_TIMEOUT
                                                                       : ACC_ERR_SYSTEM,
                                 "the peer closed the connection (%s)", strerror(errno));
        if (aborted(abort_flag))
            return acc_error_set(ACC_ERR_ABORTED, "sending: aborted");
        if (left_ms(deadline) == 0)
            return acc_error_set(ACC_ERR_TIMEOUT, "the peer took no data in time");
        poll(&pf, 1, left_ms(deadline));
    }
    return ACC_OK;
}

acc_status_t net_send_parts(const int *fds, const void *const *data, const size_t *len, int n,
                            double deadline, const volatile int *abort_flag)
{
    struct pollfd pf[NET_MAX_IFS];
    size_t done[NET_MAX_IFS] = {0};

    if (n > NET_MAX_IFS)
        return acc_error_set(ACC_ERR_INTERNAL, "%d parts, more than %d", n, NET_MAX_IFS);
    for (;;) {
        int waiting = 0;
        for (int i = 0; i < n; i++) {
            ssize_t w = 0;
            while (done[i] < len[i] &&
                   (w = send(fds[i], (const char *)data[i] + done[i], len[i] - done[i],
                             MSG_NOSIGNAL | MSG_DONTWAIT)) > 0)
                done[i] += (size_t)w;
            if (done[i] == len[i])
                continue;
            if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                return acc_error_set(
                    errno == EPIPE || errno == ECONNRESET ? ACC_ERR_TIMEOUT : ACC_ERR_SYSTEM,
                    "the peer closed connection %d of %d (%s)", i + 1, n, strerror(errno));
            pf[waiting++] = (struct pollfd){.fd = fds[i], .events = POLLOUT};
        }
        if (!waiting)
            return ACC_OK;
        if (aborted(abort_flag))
            return acc_error_set(ACC_ERR_ABORTED, "sending: aborted");
        if (left_ms(deadline) == 0)
            return acc_error_set(ACC_ERR_TIMEOUT, "the peer took no data in time");
        poll(pf, (nfds_t)waiting, left_ms(deadline));
    }
}

acc_status_t net_recv(int fd, void *data, size_t len, double deadline,
                      const volatile int *abort_flag)
{
    char *p = data;
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    while (len > 0) {
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0)
            return acc_error_set(ACC_ERR_TIMEOUT, "the peer closed the connection (it may have "
                                                  "exited or died)");
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return acc_error_set(ACC_ERR_SYSTEM, "receiving: %s", strerror(errno));
        if (aborted(abort_flag))
            return acc_error_set(ACC_ERR_ABORTED, "receiving: aborted");
        if (left_ms(deadline) == 0)
            return acc_error_set(ACC_ERR_TIMEOUT, "the peer sent nothing in time");
        poll(&pf, 1, left_ms(deadline));
    }
    return ACC_OK;
}

acc_status_t net_local_addr(int fd, net_addr_t *out)
{
    memset(out, 0, sizeof(*out));
    out->len = sizeof(out->ss);
    if (getsockname(fd, (struct sockaddr *)&out->ss, &out->len) != 0)
        return acc_error_set(ACC_ERR_SYSTEM, "getsockname: %s", strerror(errno));
    return ACC_OK;
}

void net_set_port(net_addr_t *a, unsigned port)
{
    if (a->ss.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&a->ss)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)&a->ss)->sin_port = htons((uint16_t)port);
}

int net_probe(const net_addr_t *a, int ms)
{
    struct pollfd p;
    int fd = new_socket(a->ss.ss_family, SOCK_NONBLOCK), e = 0, alive = -1;
    socklen_t len = sizeof(e);

    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)&a->ss, a->len) == 0) {
        alive = 1;
    } else if (errno == ECONNREFUSED) {
        alive = 0;
    } else if (errno == EINPROGRESS) {
        p = (struct pollfd){.fd = fd, .events = POLLOUT};
        if (poll(&p, 1, ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0)
            alive = e == 0 ? 1 : e == ECONNREFUSED ? 0 : -1;
    }
    net_close(&fd);
    return alive;
}
