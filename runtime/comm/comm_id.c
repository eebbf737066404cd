/*
 * An id for ranks that a launcher forks on one machine.  acc_get_unique_id serves the
 * rendezvous on a thread of the launcher; a fork while that thread holds a lock (the
 * allocator's: the sanitizers' allocators of GCC 12 do not guard against it) leaves the child
 * that lock held for ever, and its first allocation hangs.  Here rank 0 serves the rendezvous
 * itself, as with acc_unique_id_from_string, on a loopback port that was free a moment ago,
 * so the launcher runs no thread of acc's when it forks.
 */
#include "rt_internal.h"

#include <netinet/in.h>

acc_status_t acc_unique_id_local(acc_unique_id_t *id)
{
    net_addr_t any, bound;
    char text[32];
    int fd = -1;
    unsigned port;
    acc_status_t st;

    if (!id)
        return acc_error_set(ACC_ERR_INVALID, "acc_unique_id_local: id is NULL");
    if ((st = net_resolve("127.0.0.1", "0", &any)) != ACC_OK ||
        (st = net_listen(&any, &fd, &bound)) != ACC_OK)
        return acc_error_prefix(st, "acc_unique_id_local: finding a free port: ");
    port = ntohs(((const struct sockaddr_in *)&bound.ss)->sin_port);
    net_close(&fd);
    snprintf(text, sizeof(text), "127.0.0.1:%u", port);
    return boot_id_from_string(text, id);
}
