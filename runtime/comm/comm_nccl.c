/*
 * A communicator over one the job already has: NCCL tells the rank and the size, and carries
 * acc's unique id from rank 0 to the others (a broadcast of its 128 bytes), after which the
 * ranks join as acc_comm_init_rank's do.  The id travels in device memory when this process
 * has a GPU (real NCCL reads only device memory), in host memory otherwise (an NCCL of the
 * host, as the tests' stand-in is).
 */
#include "rt_internal.h"

#include "nccl/nccl_lib.h"

#include <string.h>

/* Broadcast the id from rank 0 through NCCL, in the memory NCCL can read. */
static acc_status_t share_id(const nccl_lib_t *lib, nccl_comm_t nc, acc_unique_id_t *id)
{
    int dev = -1;
    void *buf = NULL;
    nccl_result_t rc;
    acc_status_t st;

    if (lib->comm_cu_device(nc, &dev) == 0 && dev >= 0 && acc_cuda_init(dev) == ACC_OK) {
        if ((st = acc_cuda_malloc(sizeof(*id), &buf)) != ACC_OK ||
            (st = acc_cuda_htod(buf, id, sizeof(*id))) != ACC_OK)
            goto out;
        if ((rc = lib->broadcast(buf, buf, sizeof(*id), NCCL_INT8, 0, nc, NULL)) != 0) {
            st = nccl_fail(lib, rc, "ncclBroadcast of acc's unique id");
            goto out;
        }
        if ((st = acc_cuda_stream_sync(NULL)) == ACC_OK)
            st = acc_cuda_dtoh(id, buf, sizeof(*id));
    out:
        acc_cuda_free(buf);
        return st;
    }
    if ((rc = lib->broadcast(id, id, sizeof(*id), NCCL_INT8, 0, nc, NULL)) != 0)
        return nccl_fail(lib, rc, "ncclBroadcast of acc's unique id");
    return ACC_OK;
}

acc_status_t acc_comm_from_nccl(acc_comm_t **out, void *nccl_comm, const acc_comm_opts_t *opts)
{
    const nccl_lib_t *lib;
    acc_unique_id_t id;
    int rank = -1, nranks = 0;
    nccl_result_t rc;
    acc_status_t st;

    if (!out || !nccl_comm)
        return acc_error_set(ACC_ERR_INVALID, "acc_comm_from_nccl: NULL argument");
    *out = NULL;
    if ((st = nccl_lib_open(&lib)) != ACC_OK)
        return acc_error_prefix(st, "acc_comm_from_nccl: ");
    if ((rc = lib->comm_user_rank(nccl_comm, &rank)) != 0 ||
        (rc = lib->comm_count(nccl_comm, &nranks)) != 0)
        return nccl_fail(lib, rc, "acc_comm_from_nccl: asking the NCCL communicator its rank");
    memset(&id, 0, sizeof(id));
    if (rank == 0 && (st = acc_get_unique_id(&id)) != ACC_OK)
        return st;
    if ((st = share_id(lib, nccl_comm, &id)) != ACC_OK)
        return acc_error_prefix(st, "acc_comm_from_nccl, rank %d: ", rank);
    if ((st = acc_comm_init_rank(out, nranks, &id, rank, opts)) != ACC_OK)
        return st;
    (*out)->nccl = nccl_comm;
    return ACC_OK;
}
