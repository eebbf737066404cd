/*
 * The bootstrap's own collectives, over the star of connections through rank 0: allgather,
 * broadcast, barrier, in the same order on every rank.  Every frame carries the step number,
 * so that ranks that call them in different orders fail with a message instead of reading the
 * wrong bytes.
 *
 * A star through rank 0 costs O(ranks) at rank 0 per collective; they are few and small (a few
 * per communicator and per new plan), so the simplicity is worth it.
 */
#include "boot_internal.h"

#include <string.h>

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
    char one = 1, *all = acc_mem_alloc((size_t)b->nranks);
    acc_status_t st;
    if (!all)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a barrier");
    st = boot_allgather(b, &one, 1, all);
    acc_mem_free(all);
    return st;
}

void boot_set_wait(rt_boot_t *b, int wait_ms)
{
    b->wait_ms = wait_ms;
}
