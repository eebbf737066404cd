/*
 * The cuda backend's NCCL: the communicator every size the tables give NCCL goes to.  Made
 * collectively, and only where it can work everywhere: NCCL opens on every rank and no two
 * ranks share a GPU (NCCL refuses duplicate GPUs).  Without it, acc's ring kernels serve those
 * sizes, reported as the ring fallback.
 */
#include "cuda_internal.h"

#include <string.h>

/* Go on without NCCL, saying why once (rank 0). */
static acc_status_t without_nccl(acc_comm_t *c, cb_state_t *s)
{
    if (c->rank == 0)
        ACC_INFO(RUNTIME,
                 "cuda backend without NCCL (%s): acc's ring serves the sizes the tables "
                 "give NCCL",
                 acc_error_message());
    s->nccl = NULL;
    return ACC_OK;
}

acc_status_t cb_nccl_setup(acc_comm_t *c, cb_state_t *s)
{
    nccl_id_t id;
    nccl_result_t rc;
    acc_status_t st, opened;

    opened = nccl_lib_open(&s->nccl);
    if (c->nccl) {
        /* acc_comm_from_nccl: the job's own communicator serves the fallback. */
        s->ncomm = c->nccl;
        return opened;
    }
    if (comm_agree(c, opened, "opening NCCL") != ACC_OK)
        return without_nccl(c, s);
    if (comm_agree(c,
                   s->sharers > 1 ? acc_error_set(ACC_ERR_UNSUPPORTED,
                                                  "%d ranks share GPU %d, which NCCL refuses",
                                                  s->sharers, s->device)
                                  : ACC_OK,
                   "NCCL's GPUs") != ACC_OK)
        return without_nccl(c, s);
    memset(&id, 0, sizeof(id));
    st = ACC_OK;
    if (c->rank == 0 && (rc = s->nccl->get_unique_id(&id)) != 0)
        st = nccl_fail(s->nccl, rc, "ncclGetUniqueId");
    if ((st = comm_agree(c, st, "NCCL's unique id")) != ACC_OK ||
        (st = boot_bcast(c->boot, &id, sizeof(id), 0)) != ACC_OK)
        return st;
    if ((rc = s->nccl->comm_init_rank(&s->ncomm, c->nranks, id, c->rank)) != 0)
        st = nccl_fail(s->nccl, rc, "ncclCommInitRank");
    if ((st = comm_agree(c, st, "creating the NCCL communicator")) != ACC_OK)
        return st;
    s->own_ncomm = 1;
    return ACC_OK;
}

void cb_nccl_teardown(cb_state_t *s, int abort)
{
    if (s->own_ncomm && s->ncomm) {
        if (abort)
            s->nccl->comm_abort(s->ncomm);
        else
            s->nccl->comm_destroy(s->ncomm);
    }
    s->ncomm = NULL;
}

acc_status_t cb_nccl_call(acc_comm_t *c, cb_state_t *s, const rt_call_t *k)
{
    const nccl_lib_t *l = s->nccl;
    int t = nccl_dtype(k->dt), op = nccl_redop(k->op);
    nccl_result_t rc;
    (void)c;

    if (!l || !s->ncomm)
        return acc_error_set(ACC_ERR_UNSUPPORTED, "no NCCL communicator");
    switch (k->coll) {
    case ACC_COLL_ALLREDUCE:
        rc = l->all_reduce(k->send, k->recv, k->count, t, op, s->ncomm, k->stream);
        break;
    case ACC_COLL_ALLGATHER:
        rc = l->all_gather(k->send, k->recv, k->count, t, s->ncomm, k->stream);
        break;
    case ACC_COLL_REDUCE_SCATTER:
        rc = l->reduce_scatter(k->send, k->recv, k->count, t, op, s->ncomm, k->stream);
        break;
    case ACC_COLL_BROADCAST:
        rc = l->broadcast(k->send, k->recv, k->count, t, k->root, s->ncomm, k->stream);
        break;
    case ACC_COLL_REDUCE:
        rc = l->reduce(k->send, k->recv, k->count, t, op, k->root, s->ncomm, k->stream);
        break;
    default:
        return acc_error_set(ACC_ERR_UNSUPPORTED, "NCCL has no %s", acc_coll_name(k->coll));
    }
    if (rc != 0)
        return nccl_fail(l, rc, acc_coll_name(k->coll));
    return ACC_OK;
}
