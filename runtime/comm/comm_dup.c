/*
 * A second communicator over the same ranks: rank 0 makes a fresh unique id (its rendezvous on
 * the interface the peers reached rank 0 at) and broadcasts it over the parent's bootstrap,
 * then every rank joins it with the parent's options, as acc_comm_init_rank does.  Several
 * communicators let one process run collectives on several threads at once (the fusion
 * engine's streams), which one communicator never allows.  A host-backend duplicate
 * (comm_dup_host) carries small control messages in host memory beside a communicator of any
 * backend.
 */
#include "rt_internal.h"

#include <string.h>

/* What rank 0 sends: the id, or why it has none (the others must not wait for a rendezvous
 * nobody serves). */
typedef struct {
    int32_t status;
    acc_unique_id_t id;
} dup_msg_t;

/* The duplicate, with comm entered: opts NULL for comm's own. */
static acc_status_t dup_entered(acc_comm_t *comm, const acc_comm_opts_t *opts, acc_comm_t **out)
{
    dup_msg_t msg;
    acc_status_t st;

    if (comm_error(comm) != ACC_OK)
        return acc_error_set(comm_error(comm), "acc_comm_dup: the communicator is broken: %s",
                             comm->error_msg);
    memset(&msg, 0, sizeof(msg));
    /* The rendezvous listens where the peers reach rank 0 already: the host name may resolve
     * to an address they cannot reach (a loopback, in containers). */
    if (comm->rank == 0)
        msg.status = boot_root_start_near(comm->boot, &msg.id);
    if ((st = boot_bcast(comm->boot, &msg, sizeof(msg), 0)) != ACC_OK)
        return comm_break(comm, acc_error_prefix(st, "rank %d: acc_comm_dup: ", comm->rank));
    if (msg.status != ACC_OK)
        return acc_error_set((acc_status_t)msg.status,
                             "rank %d: acc_comm_dup: rank 0 could not serve a rendezvous (%s); "
                             "see rank 0's log",
                             comm->rank, acc_status_name((acc_status_t)msg.status));
    return comm_init(out, comm->nranks, &msg.id, comm->rank, opts ? opts : &comm->opts, 1);
}

/* A duplicate of comm made with opts (NULL: comm's own, or a changed copy of them). */
static acc_status_t dup_with(acc_comm_t *comm, const acc_comm_opts_t *opts, acc_comm_t **out)
{
    acc_status_t st;

    if ((st = comm_begin_call(comm, "acc_comm_dup")) != ACC_OK)
        return st;
    st = dup_entered(comm, opts, out);
    comm_end_call(comm);
    return st;
}

acc_status_t acc_comm_dup(acc_comm_t *comm, acc_comm_t **out)
{
    if (!out)
        return acc_error_set(ACC_ERR_INVALID, "acc_comm_dup: out is NULL");
    *out = NULL;
    return dup_with(comm, NULL, out);
}

acc_status_t comm_dup_host(acc_comm_t *comm, acc_comm_t **out)
{
    acc_comm_opts_t o;
    acc_status_t st;
    if (!out)
        return acc_error_set(ACC_ERR_INVALID, "comm_dup_host: out is NULL");
    *out = NULL;
    if ((st = comm_enter(comm, "comm_dup_host")) != ACC_OK)
        return st;
    o = comm->opts;
    comm_leave(comm);
    o.backend = ACC_BACKEND_HOST;
    /* Its calls are the layer's own, which the host backend serves whole (its fallback is
     * acc's ring plan), never a caller's NCCL. */
    o.external_fallback = 0;
    return dup_with(comm, &o, out);
}
