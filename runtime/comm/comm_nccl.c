/*
 * A communicator over one the job already has: NCCL tells the rank and the size, and carries
 * acc's unique id from rank 0 to the others (a broadcast of its bytes and a check word), after
 * which the ranks join as acc_comm_init_rank's do.
 *
 * The broadcast is the one step a rank cannot leave out: NCCL has no timeout, so a rank that
 * skipped it would leave its peers waiting in NCCL for ever.  So every rank takes part whatever
 * went wrong before - rank 0 without an id broadcasts an invalid one, a rank without acc's CUDA
 * driver uses device memory NCCL allocates (ncclMemAlloc) - and what went wrong shows after it:
 * an id whose check word does not match fails every rank alike; a rank that cannot read the id
 * fails alone, and its peers give up in acc's bootstrap after ACC_TIMEOUT_MS.  The id travels in
 * device memory when the NCCL communicator is on a GPU (NCCL reads only device memory there),
 * in host memory only for an NCCL of the host (the tests' stand-in).
 *
 * rt_nccl_agree is the other small collective acc makes through NCCL: whether every rank holds
 * the same digest (the drop-in's vote on what its tables say, before any rank may join).
 */
#include "rt_internal.h"

#include "exec/gpu_exec.h"
#include "nccl/nccl_lib.h"

#include <string.h>
#include <unistd.h>

#define NCCL_IN_PROGRESS 7 /* ncclInProgress: a non-blocking communicator queued the call */

typedef struct {
    acc_unique_id_t id;
    uint64_t check; /* acc_fnv1a64 of id, xor MAGIC: anything else is no id */
} id_msg_t;

static const uint64_t MAGIC = 0x6163632d69642d31ull; /* "acc-id-1" */

static uint64_t check_of(const acc_unique_id_t *id)
{
    return acc_fnv1a64(id, sizeof(*id)) ^ MAGIC;
}

/* A non-blocking communicator's call is queued when its async error leaves ncclInProgress. */
static nccl_result_t settled(const nccl_lib_t *lib, nccl_comm_t nc, nccl_result_t rc)
{
    nccl_result_t state = rc;
    while (rc == NCCL_IN_PROGRESS && state == NCCL_IN_PROGRESS) {
        if (lib->comm_get_async_error(nc, &state) != 0)
            return rc;
        if (state == NCCL_IN_PROGRESS)
            usleep(100);
    }
    return rc == NCCL_IN_PROGRESS ? state : rc;
}

/* One small NCCL collective over the bytes of msg, made by `call` on buf (msg's copy in the
 * memory NCCL reads). */
typedef nccl_result_t (*small_call_t)(const nccl_lib_t *lib, nccl_comm_t nc, void *buf, size_t n);

/* ... from device memory: acc's own when its CUDA driver works here, NCCL's otherwise (then
 * this rank cannot write or read the bytes, and only takes part). */
static acc_status_t small_on_gpu(const nccl_lib_t *lib, nccl_comm_t nc, int dev, void *msg,
                                 size_t n, small_call_t call, const char *what)
{
    void *buf = NULL;
    int own = acc_cuda_init(dev) == ACC_OK && acc_cuda_malloc(n, &buf) == ACC_OK;
    acc_status_t st = ACC_OK;
    char why[512] = "";
    nccl_result_t rc;

    if (!own) {
        snprintf(why, sizeof(why), "%s", acc_error_message());
        if (!lib->mem_alloc || lib->mem_alloc(&buf, n) != 0)
            return acc_error_set(ACC_ERR_NO_DEVICE,
                                 "no device memory on GPU %d for %s (acc's CUDA driver: %s; and "
                                 "NCCL allocates none)",
                                 dev, what, why);
    }
    if (own && (st = acc_cuda_htod(buf, msg, n)) != ACC_OK)
        memset(msg, 0, n); /* the collective goes on all the same */
    rc = settled(lib, nc, call(lib, nc, buf, n));
    if (rc != 0)
        st = nccl_fail(lib, rc, what);
    else if (own && (st = acc_cuda_stream_sync(NULL)) == ACC_OK)
        st = acc_cuda_dtoh(msg, buf, n);
    if (own)
        acc_cuda_free(buf);
    else
        lib->mem_free(buf);
    if (st == ACC_OK && !own)
        return acc_error_set(ACC_ERR_NO_DEVICE, "acc's CUDA driver on GPU %d: %s", dev, why);
    return st;
}

/* ... in the memory NCCL can read: device memory when the communicator is on a GPU. */
static acc_status_t small_collective(const nccl_lib_t *lib, nccl_comm_t nc, void *msg, size_t n,
                                     small_call_t call, const char *what)
{
    int dev = -1;
    nccl_result_t rc;

    if (lib->comm_cu_device(nc, &dev) == 0 && dev >= 0)
        return small_on_gpu(lib, nc, dev, msg, n, call, what);
    rc = settled(lib, nc, call(lib, nc, msg, n));
    return rc != 0 ? nccl_fail(lib, rc, what) : ACC_OK;
}

static nccl_result_t bcast_bytes(const nccl_lib_t *lib, nccl_comm_t nc, void *buf, size_t n)
{
    return lib->broadcast(buf, buf, n, NCCL_INT8, 0, nc, NULL);
}

/* The minimum of int32 words: with each word's complement beside it, the maximum too. */
static nccl_result_t min_words(const nccl_lib_t *lib, nccl_comm_t nc, void *buf, size_t n)
{
    return lib->all_reduce(buf, buf, n / sizeof(int32_t), NCCL_INT32, NCCL_MIN, nc, NULL);
}

acc_status_t rt_nccl_agree(void *nccl_comm, uint64_t digest, int *same)
{
    const nccl_lib_t *lib;
    /* The digest's halves and their complements: min(~x) = ~max(x), so one minimum over the
     * four words says whether the smallest and the largest digest are the same. */
    int32_t w[4] = {(int32_t)(uint32_t)digest, (int32_t)(uint32_t)(digest >> 32),
                    (int32_t) ~(uint32_t)digest, (int32_t) ~(uint32_t)(digest >> 32)};
    acc_status_t st;

    *same = 0;
    if ((st = nccl_lib_open(&lib)) != ACC_OK)
        return st;
    if ((st = small_collective(lib, nccl_comm, w, sizeof(w), min_words,
                               "ncclAllReduce of acc's digest")) != ACC_OK)
        return st;
    *same = w[0] == ~w[2] && w[1] == ~w[3] && (uint32_t)w[0] == (uint32_t)digest &&
            (uint32_t)w[1] == (uint32_t)(digest >> 32);
    return ACC_OK;
}

acc_status_t acc_comm_from_nccl(acc_comm_t **out, void *nccl_comm, const acc_comm_opts_t *opts)
{
    const nccl_lib_t *lib;
    id_msg_t msg;
    acc_status_t st;
    char why[512] = "";
    int rank = -1, nranks = 0;
    nccl_result_t rc;

    if (!out || !nccl_comm)
        return acc_error_set(ACC_ERR_INVALID, "acc_comm_from_nccl: NULL argument");
    *out = NULL;
    if ((st = nccl_lib_open(&lib)) != ACC_OK)
        return acc_error_prefix(st, "acc_comm_from_nccl: ");
    if ((rc = lib->comm_user_rank(nccl_comm, &rank)) != 0 ||
        (rc = lib->comm_count(nccl_comm, &nranks)) != 0)
        return nccl_fail(lib, rc, "acc_comm_from_nccl: asking the NCCL communicator its rank");
    memset(&msg, 0, sizeof(msg));
    if (rank == 0 && acc_get_unique_id(&msg.id) == ACC_OK)
        msg.check = check_of(&msg.id);
    else if (rank == 0)
        snprintf(why, sizeof(why), ": %s", acc_error_message());
    if ((st = small_collective(lib, nccl_comm, &msg, sizeof(msg), bcast_bytes,
                               "ncclBroadcast of acc's unique id")) != ACC_OK)
        return acc_error_prefix(st, "acc_comm_from_nccl, rank %d: ", rank);
    if (msg.check != check_of(&msg.id))
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "acc_comm_from_nccl, rank %d: rank 0 could not make or send acc's "
                             "unique id%s",
                             rank, why);
    if ((st = acc_comm_init_rank(out, nranks, &msg.id, rank, opts)) != ACC_OK)
        return st;
    (*out)->nccl = nccl_comm;
    return ACC_OK;
}
