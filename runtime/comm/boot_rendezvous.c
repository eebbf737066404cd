/*
 * The rendezvous: where the ranks of a new communicator meet.  It takes one hello per rank
 * (the nonce of the id, the rank, the rank count, the rank's listening address and timeout),
 * refuses what does not fit (another count, a rank taken twice, a stranger), and once every
 * rank has arrived answers each with rank 0's listening address (rank 0 hears the others' on
 * the star: O(N) bytes at the rendezvous, where a table for every rank was O(N^2)).
 *
 * It never waits longer than the ranks do: a thread's rendezvous gives up its first hello's
 * timeout after that hello arrived (before any hello, the timeout of the process that made the
 * id), rank 0's when rank 0's own deadline passes.  Giving up, it tells every rank that
 * arrived which ranks did not, so that all of them fail at once with the same message instead
 * of each waiting out its own timeout, and it closes its socket: the thread and its port never
 * outlive that.
 */
#include "boot_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/random.h>

static void refuse(int fd, acc_status_t why, const char *fmt, ...) ACC_PRINTF(3, 4);

/* Answer a rank with why it is refused: the status it fails with, and the text. */
static void refuse(int fd, acc_status_t why, const char *fmt, ...)
{
    answer_t ans;
    va_list ap;
    memset(&ans, 0, sizeof(ans));
    ans.status = why;
    va_start(ap, fmt);
    vsnprintf(ans.text, sizeof(ans.text), fmt, ap);
    va_end(ap);
    net_send(fd, &ans, sizeof(ans), acc_now_s() + 1, NULL);
}

void boot_missing_text(const int *fds, int from, int nranks, char *buf, size_t n)
{
    int shown = 0, missing = 0, len = 0;
    buf[0] = '\0';
    for (int r = from; r < nranks; r++)
        missing += fds[r] < 0;
    for (int r = from; r < nranks && len >= 0 && (size_t)len < n; r++) {
        if (fds[r] >= 0)
            continue;
        if (shown == 8) {
            len += snprintf(buf + len, n - (size_t)len, " and %d more", missing - shown);
            break;
        }
        len += snprintf(buf + len, n - (size_t)len, "%s%d",
                        shown == 0             ? (missing > 1 ? "ranks " : "rank ")
                        : shown == missing - 1 ? " and "
                                               : ", ",
                        r);
        shown++;
    }
}

/* Take one connection: keep it when its hello is right, refuse it otherwise.  1 when a new rank
 * arrived, 0 for a connection refused or not ours, < 0 on failure. */
static int take_hello(rendezvous_t *rv, int fd)
{
    hello_t h;
    if (net_recv(fd, &h, sizeof(h), acc_now_s() + 5, rv->abort_flag) != ACC_OK ||
        h.magic != HELLO_MAGIC || memcmp(h.nonce, rv->nonce, BOOT_NONCE_BYTES) != 0 ||
        h.addr_len == 0 || h.addr_len > sizeof(h.addr)) {
        net_close(&fd); /* not one of ours: a port scanner, or a rank of another communicator */
        return 0;
    }
    boot_count(rv->traffic, 0, sizeof(h));
    if (!rv->nranks && h.nranks >= 1 && h.nranks <= (1 << 20)) {
        rv->nranks = h.nranks;
        rv->fds = acc_mem_alloc((size_t)h.nranks * sizeof(int));
        rv->hellos = acc_mem_calloc((size_t)h.nranks, sizeof(hello_t));
        if (!rv->fds || !rv->hellos) {
            net_close(&fd);
            acc_error_set(ACC_ERR_NOMEM, "out of memory for the rendezvous");
            return -1;
        }
        for (int r = 0; r < h.nranks; r++)
            rv->fds[r] = -1;
    }
    if (h.nranks != rv->nranks) {
        refuse(fd, ACC_ERR_INVALID, "this rank said nranks %d, the first rank to arrive %d",
               h.nranks, rv->nranks);
    } else if (h.rank < 0 || h.rank >= rv->nranks || rv->fds[h.rank] >= 0) {
        refuse(fd, ACC_ERR_INVALID,
               "rank %d is out of range or already taken (nranks %d): two communicators are "
               "being made with one id at the same time",
               h.rank, rv->nranks);
    } else {
        rv->fds[h.rank] = fd;
        rv->hellos[h.rank] = h;
        if (rv->from_first_hello) {
            rv->from_first_hello = 0;
            rv->deadline = boot_deadline(h.timeout_ms);
        }
        return 1;
    }
    net_close(&fd);
    return 0;
}

/* Tell every rank that arrived why the rendezvous gave up. */
static void refuse_arrived(rendezvous_t *rv, acc_status_t st, const char *why)
{
    for (int r = 0; rv->fds && r < rv->nranks; r++)
        if (rv->fds[r] >= 0)
            refuse(rv->fds[r], st, "%s", why);
}

acc_status_t rendezvous_run(rendezvous_t *rv, int arrived)
{
    char where[96], missing[160], why[400];
    acc_status_t st;

    net_addr_text(&rv->where, where, sizeof(where));
    while (!rv->nranks || arrived < rv->nranks) {
        int fd, got;
        if ((st = net_accept(rv->listen_fd, rv->deadline, rv->abort_flag, &fd)) != ACC_OK) {
            if (!rv->nranks) {
                snprintf(why, sizeof(why), "no rank reached the bootstrap rendezvous at %s", where);
            } else {
                /* The serving rank 0 counts as arrived without a connection of its own. */
                boot_missing_text(rv->fds, rv->serving_rank0 ? 1 : 0, rv->nranks, missing,
                                  sizeof(missing));
                snprintf(why, sizeof(why),
                         "%s of %d never reached the bootstrap rendezvous at %s (%d arrived; "
                         "were all ranks started, with this id?)",
                         missing, rv->nranks, where, arrived);
            }
            refuse_arrived(rv, st, why);
            return acc_error_prefix(st, "%s: ", why);
        }
        if ((got = take_hello(rv, fd)) < 0) {
            refuse_arrived(rv, ACC_ERR_NOMEM, "the rendezvous ran out of memory");
            return ACC_ERR_NOMEM;
        }
        arrived += got;
    }
    for (int r = 0; r < rv->nranks; r++) {
        answer_t ans;
        if (rv->fds[r] < 0)
            continue; /* the serving rank 0 itself */
        memset(&ans, 0, sizeof(ans));
        if ((st = net_send(rv->fds[r], &ans, sizeof(ans), rv->deadline, rv->abort_flag)) !=
                ACC_OK ||
            (st = net_send(rv->fds[r], &rv->hellos[0], sizeof(hello_t), rv->deadline,
                           rv->abort_flag)) != ACC_OK)
            return acc_error_prefix(st, "bootstrap rendezvous at %s, answering rank %d: ", where,
                                    r);
        boot_count(rv->traffic, 1, sizeof(ans) + sizeof(hello_t));
    }
    return ACC_OK;
}

void rendezvous_free(rendezvous_t *rv)
{
    for (int r = 0; rv->fds && r < rv->nranks; r++)
        net_close(&rv->fds[r]);
    acc_mem_free(rv->fds);
    acc_mem_free(rv->hellos);
    rv->fds = NULL;
    rv->hellos = NULL;
    net_close(&rv->listen_fd);
}

/* The thread acc_get_unique_id starts: serve one rendezvous, then close everything. */
static void *rendezvous_main(void *arg)
{
    rendezvous_t *rv = arg;
    if (rendezvous_run(rv, 0) != ACC_OK)
        ACC_WARN(RUNTIME, "bootstrap rendezvous gave up: %s", acc_error_message());
    rendezvous_free(rv);
    acc_mem_free(rv);
    return NULL;
}

static acc_status_t new_nonce(uint8_t nonce[BOOT_NONCE_BYTES])
{
    if (getrandom(nonce, BOOT_NONCE_BYTES, 0) != BOOT_NONCE_BYTES)
        return acc_error_set(ACC_ERR_SYSTEM, "getrandom: %s", strerror(errno));
    return ACC_OK;
}

acc_status_t rendezvous_start_thread(const net_addr_t *at, int wait_ms, boot_id_t *id)
{
    rendezvous_t *rv = acc_mem_calloc(1, sizeof(*rv));
    net_addr_t a = *at;
    pthread_t tid;
    acc_status_t st;

    if (!rv)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the rendezvous");
    rv->listen_fd = -1;
    net_set_port(&a, 0);
    if ((st = new_nonce(rv->nonce)) != ACC_OK ||
        (st = net_listen(&a, &rv->listen_fd, &rv->where)) != ACC_OK)
        goto out;
    rv->deadline = boot_deadline(wait_ms);
    rv->from_first_hello = 1;
    memset(id, 0, sizeof(*id));
    memcpy(id->magic, ID_MAGIC, sizeof(ID_MAGIC));
    id->mode = MODE_THREAD;
    memcpy(id->nonce, rv->nonce, BOOT_NONCE_BYTES);
    id->addr_len = rv->where.len;
    memcpy(id->addr, &rv->where.ss, rv->where.len);
    if (pthread_create(&tid, NULL, rendezvous_main, rv) != 0) {
        st = acc_error_set(ACC_ERR_SYSTEM, "cannot start the rendezvous thread");
        goto out;
    }
    pthread_detach(tid);
    return ACC_OK;
out:
    rendezvous_free(rv);
    acc_mem_free(rv);
    return st;
}
