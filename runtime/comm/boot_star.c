/*
 * The bootstrap's own collectives, over the star of connections through rank 0: allgather,
 * broadcast, barrier, vote, gather and fetch, in the same order on every rank.  Every frame
 * carries the step number, so that ranks that call them in different orders fail with a
 * message instead of reading the wrong bytes.
 *
 * A star through rank 0 costs O(ranks) messages at rank 0 per collective.  What each sends is
 * what keeps it O(N) in bytes there: a vote or a gather brings rank 0 one small record per rank
 * and sends each one verdict, where an allgather sends every rank all N records (O(N^2) bytes at
 * rank 0), so the set-up and the join use only the former (docs/scale.md).
 */
#include "boot_internal.h"

#include <stddef.h>
#include <string.h>

typedef struct {
    uint32_t seq;
    uint32_t bytes;
} frame_t;

static int star_fd(const rt_boot_t *b, int peer)
{
    return b->rank == 0 ? b->fds[peer] : b->fds[0];
}

static acc_status_t send_frame(rt_boot_t *b, int peer, const void *data, size_t bytes,
                               double deadline)
{
    frame_t f = {b->seq, (uint32_t)bytes};
    int fd = star_fd(b, peer);
    acc_status_t st = net_send(fd, &f, sizeof(f), deadline, b->abort_flag);
    if (st == ACC_OK && bytes)
        st = net_send(fd, data, bytes, deadline, b->abort_flag);
    if (st != ACC_OK)
        acc_error_prefix(st, "bootstrap step %u, rank %d sending to rank %d: ", b->seq, b->rank,
                         b->rank == 0 ? peer : 0);
    else
        boot_count(&b->traffic, 1, sizeof(f) + bytes);
    return st;
}

/* A frame of exactly `bytes` (got NULL), or of at most `bytes` (its length in *got). */
static acc_status_t recv_frame_upto(rt_boot_t *b, int peer, void *data, size_t bytes, size_t *got,
                                    double deadline)
{
    frame_t f;
    acc_status_t st = net_recv(star_fd(b, peer), &f, sizeof(f), deadline, b->abort_flag);
    if (st == ACC_OK && (f.seq != b->seq || (got ? f.bytes > bytes : f.bytes != bytes)))
        st = acc_error_set(ACC_ERR_INTERNAL,
                           "bootstrap step %u: rank %d sent step %u of %u bytes where %s%zu were "
                           "due (the ranks called acc in different orders)",
                           b->seq, b->rank == 0 ? peer : 0, f.seq, f.bytes, got ? "at most " : "",
                           bytes);
    else if (st == ACC_OK && f.bytes)
        st = net_recv(star_fd(b, peer), data, f.bytes, deadline, b->abort_flag);
    if (st == ACC_OK) {
        boot_count(&b->traffic, 0, sizeof(f) + f.bytes);
        if (got)
            *got = f.bytes;
    }
    if (st != ACC_OK && st != ACC_ERR_INTERNAL)
        acc_error_prefix(st, "bootstrap step %u, rank %d waiting for rank %d: ", b->seq, b->rank,
                         b->rank == 0 ? peer : 0);
    return st;
}

static acc_status_t recv_frame(rt_boot_t *b, int peer, void *data, size_t bytes, double deadline)
{
    return recv_frame_upto(b, peer, data, bytes, NULL, deadline);
}

/* The allgather; ranks other than 0 wait for the result until result_deadline. */
static acc_status_t allgather(rt_boot_t *b, const void *mine, size_t bytes, void *all,
                              double deadline, double result_deadline)
{
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
            st = recv_frame(b, 0, all, (size_t)b->nranks * bytes, result_deadline);
    }
    b->seq++;
    return st;
}

acc_status_t boot_allgather(rt_boot_t *b, const void *mine, size_t bytes, void *all)
{
    double deadline = boot_deadline(b->wait_ms);
    return allgather(b, mine, bytes, all, deadline, deadline);
}

acc_status_t boot_allgather_final(rt_boot_t *b, const void *mine, size_t bytes, void *all)
{
    /* Rank 0 has every rank's part, or has given up, within one timeout of arriving; a rank
     * that sent its part has seen rank 0 at the step before, so twice the timeout is enough
     * for rank 0's answer unless rank 0 stopped, and then its closed connection ends the wait
     * sooner. */
    return allgather(b, mine, bytes, all, boot_deadline(b->wait_ms),
                     boot_deadline(b->wait_ms > 0 ? 2 * b->wait_ms : 0));
}

acc_status_t boot_bcast(rt_boot_t *b, void *buf, size_t bytes, int root)
{
    double deadline = boot_deadline(b->wait_ms);
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
    boot_vote_t v, verdict;
    boot_vote_init(&v, ACC_OK);
    return boot_vote(b, &v, &verdict);
}

void boot_vote_init(boot_vote_t *v, acc_status_t status)
{
    memset(v, 0, offsetof(boot_vote_t, text));
    v->status = status;
    v->rank = -1;
    v->text[0] = '\0';
}

/* A vote on the wire: its text only when it fails. */
static size_t vote_bytes(const boot_vote_t *v)
{
    return offsetof(boot_vote_t, text) + (v->status != ACC_OK ? strlen(v->text) + 1 : 0);
}

static acc_status_t recv_vote(rt_boot_t *b, int peer, boot_vote_t *v, double deadline)
{
    size_t got = 0;
    acc_status_t st = recv_frame_upto(b, peer, v, sizeof(*v), &got, deadline);
    if (st == ACC_OK && got < offsetof(boot_vote_t, text))
        st = acc_error_set(ACC_ERR_INTERNAL, "bootstrap step %u: a vote of %zu bytes from rank %d",
                           b->seq, got, b->rank == 0 ? peer : 0);
    if (st == ACC_OK)
        v->text[got > offsetof(boot_vote_t, text) ? got - offsetof(boot_vote_t, text) - 1 : 0] =
            '\0';
    return st;
}

static acc_status_t vote(rt_boot_t *b, const boot_vote_t *mine, boot_vote_t *verdict,
                         double deadline, double result_deadline)
{
    acc_status_t st = ACC_OK;
    boot_vote_t *v = NULL;

    *verdict = *mine;
    verdict->rank = mine->status != ACC_OK ? b->rank : -1;
    if (b->rank == 0) {
        if (!(v = acc_mem_alloc(sizeof(*v))))
            st = acc_error_set(ACC_ERR_NOMEM, "out of memory for a vote");
        /* Ranks ascend, so a tie in order keeps the least rank. */
        for (int r = 1; r < b->nranks && st == ACC_OK; r++)
            if ((st = recv_vote(b, r, v, deadline)) == ACC_OK && v->status != ACC_OK &&
                (verdict->status == ACC_OK || v->order < verdict->order)) {
                *verdict = *v;
                verdict->rank = r;
            }
        if (verdict->status == ACC_OK)
            boot_vote_init(verdict, ACC_OK);
        for (int r = 1; r < b->nranks && st == ACC_OK; r++)
            st = send_frame(b, r, verdict, vote_bytes(verdict), deadline);
    } else {
        st = send_frame(b, 0, mine, vote_bytes(mine), deadline);
        if (st == ACC_OK)
            st = recv_vote(b, 0, verdict, result_deadline);
    }
    acc_mem_free(v);
    b->seq++;
    return st;
}

acc_status_t boot_vote(rt_boot_t *b, const boot_vote_t *mine, boot_vote_t *verdict)
{
    double deadline = boot_deadline(b->wait_ms);
    return vote(b, mine, verdict, deadline, deadline);
}

acc_status_t boot_vote_final(rt_boot_t *b, const boot_vote_t *mine, boot_vote_t *verdict)
{
    /* As boot_allgather_final: twice the timeout for rank 0's answer. */
    return vote(b, mine, verdict, boot_deadline(b->wait_ms),
                boot_deadline(b->wait_ms > 0 ? 2 * b->wait_ms : 0));
}

acc_status_t boot_gather(rt_boot_t *b, const void *mine, size_t bytes, void *all)
{
    double deadline = boot_deadline(b->wait_ms);
    acc_status_t st = ACC_OK;

    if (b->rank == 0) {
        memcpy(all, mine, bytes);
        for (int r = 1; r < b->nranks && st == ACC_OK; r++)
            st = recv_frame(b, r, (char *)all + (size_t)r * bytes, bytes, deadline);
    } else {
        st = send_frame(b, 0, mine, bytes, deadline);
    }
    b->seq++;
    return st;
}

/* Rank 0's side of a fetch: each rank's list of wants, answered with those records. */
static acc_status_t serve_fetch(rt_boot_t *b, const void *table, size_t rec, double deadline)
{
    int *want = acc_mem_alloc((size_t)b->nranks * sizeof(int));
    char *reply = acc_mem_alloc((size_t)b->nranks * rec);
    acc_status_t st = want && reply ? ACC_OK : acc_error_set(ACC_ERR_NOMEM, "out of memory");

    for (int r = 1; r < b->nranks && st == ACC_OK; r++) {
        size_t got = 0, n;
        if ((st = recv_frame_upto(b, r, want, (size_t)b->nranks * sizeof(int), &got, deadline)) !=
            ACC_OK)
            break;
        n = got / sizeof(int);
        for (size_t i = 0; i < n && st == ACC_OK; i++)
            if (want[i] < 0 || want[i] >= b->nranks)
                st = acc_error_set(ACC_ERR_INTERNAL, "bootstrap step %u: rank %d asked for rank %d",
                                   b->seq, r, want[i]);
            else
                memcpy(reply + i * rec, (const char *)table + (size_t)want[i] * rec, rec);
        if (st == ACC_OK)
            st = send_frame(b, r, reply, n * rec, deadline);
    }
    acc_mem_free(want);
    acc_mem_free(reply);
    return st;
}

acc_status_t boot_fetch(rt_boot_t *b, void *table, size_t rec, const int *want, int n)
{
    double deadline = boot_deadline(b->wait_ms);
    char *got = NULL;
    acc_status_t st;

    if (b->rank == 0) {
        st = serve_fetch(b, table, rec, deadline);
    } else if (!(got = acc_mem_alloc((size_t)n * rec + 1))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory");
    } else if ((st = send_frame(b, 0, want, (size_t)n * sizeof(int), deadline)) == ACC_OK &&
               (st = recv_frame(b, 0, got, (size_t)n * rec, deadline)) == ACC_OK) {
        for (int i = 0; i < n; i++)
            memcpy((char *)table + (size_t)want[i] * rec, got + (size_t)i * rec, rec);
    }
    acc_mem_free(got);
    b->seq++;
    return st;
}

void boot_set_wait(rt_boot_t *b, int wait_ms)
{
    b->wait_ms = wait_ms;
}
