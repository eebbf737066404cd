/*
 * A communicator made from an NCCL communicator the job already has (acc_comm_from_nccl): with
 * the stand-in NCCL of the tests (NCCL's API over the host backend), the rank, the size and
 * collectives come out right, and an NCCL acc cannot open is a clear error.
 */
#include "comm_util.h"
#include "ranks.h"

#include <dlfcn.h>

struct nccl_id {
    char internal[128];
};

typedef int (*init_fn)(void **comm, int nranks, struct nccl_id id, int rank);
typedef int (*destroy_fn)(void *comm);

static void *stand_in(void)
{
    void *h = dlopen(ACC_STAND_IN_NCCL, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(h != NULL, "%s", dlerror());
    return h;
}

static int from_nccl(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    const struct nccl_id *nid = arg;
    void *h = stand_in(), *nc = NULL;
    init_fn init = (init_fn)dlsym(h, "ncclCommInitRank");
    destroy_fn destroy = (destroy_fn)dlsym(h, "ncclCommDestroy");
    acc_comm_t *c;
    (void)unused;
    CHECK(init && destroy);
    CHECK_INT(init(&nc, nranks, *nid, rank), 0);
    CHECK_OK(acc_comm_from_nccl(&c, nc, NULL));
    CHECK_INT(acc_comm_rank(c), rank);
    CHECK_INT(acc_comm_size(c), nranks);
    for (int coll = 0; coll < 5; coll++) {
        call_t k = {(acc_coll_t)coll, ACC_DT_F32, ACC_RED_SUM, 1001, 0, nranks - 1, 5};
        call_ok(c, &k);
    }
    CHECK_OK(acc_comm_destroy(c));
    CHECK_INT(destroy(nc), 0);
    return 0;
}

ACC_TEST(communicator_from_an_nccl_communicator)
{
    struct nccl_id nid;
    acc_unique_id_t aid;
    setenv("ACC_NCCL_LIBRARY", ACC_STAND_IN_NCCL, 1);
    setenv("ACC_TOPO", "gpus=3", 1);
    setenv("ACC_DB", "/nonexistent/acc.db", 1);
    setenv("ACC_LOG_LEVEL", "error", 1);
    /* The stand-in's NCCL id is an acc id; one rank 0 serves, so that the parent runs no
     * rendezvous thread while it forks (ranks.h says why). */
    CHECK_OK(acc_unique_id_local(&aid));
    memcpy(&nid, &aid, sizeof(nid));
    ranks_run(3, from_nccl, &nid, 120);
}

ACC_TEST(an_nccl_that_cannot_be_opened_is_named)
{
    acc_comm_t *c = NULL;
    int dummy;
    setenv("ACC_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
    CHECK_ERR(acc_comm_from_nccl(&c, &dummy, NULL), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("/nonexistent/libnccl.so.2");
    CHECK_MSG_HAS("ACC_NCCL_LIBRARY");
    CHECK(c == NULL);
}
