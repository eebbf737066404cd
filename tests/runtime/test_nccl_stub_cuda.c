/*
 * The drop-in on "GPU" communicators, with a stub CUDA driver of the CUDA 12.2 symbol set
 * (tests/runtime/stub_cuda/: one device whose memory is host memory, no kernels, and a way to
 * make a kernel of NCCL's hang) on LD_LIBRARY_PATH and the stand-in NCCL saying its
 * communicators are on GPU 0:
 *   - acc's CUDA driver loads without cuEventElapsedTime_v2 (12.8), so the join works there, and
 *     acc's id travels in device memory, never host memory;
 *   - ncclCommAbort returns at once while a kernel of NCCL's hangs, with acc's cuda backend
 *     joined: acc's part never waits for the device (its device memory is parked until a later
 *     synchronisation), and with acc off;
 *   - joining is never attempted while the stream is captured into a graph;
 *   - suspend gives acc's device memory back.
 */
#include "acc_compiler.h"
#include "cuda_internal.h"
#include "dropin_util.h"

#include <pthread.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ABORT_SECONDS 30.0
#else
#define ABORT_SECONDS 1.0
#endif

/* The stub's helpers (the stub, not a real driver, is libcuda.so.1 here). */
static void *stub(const char *name)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), *f;
    CHECK_MSG(h != NULL, "%s", dlerror());
    f = dlsym(h, name);
    CHECK_MSG(f != NULL, "libcuda.so.1 is not the tests' stub (no %s)", name);
    return f;
}

static void gpu_env(const char *name, const char *db)
{
    env(name, db);
    setenv("FAKE_NCCL_DEVICE", "0", 1);
}

/* ---- the join ----------------------------------------------------------------------------- */

static int join_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    ncclComm_t c = init(rank);
    call_t big = {ACC_COLL_ALLREDUCE, 4096, 0, 51, NULL, NULL};
    (void)nranks;
    (void)unused;
    (void)arg;
    call_ok(big, c, rank); /* joins; acc's kernel cannot load here, so NCCL runs it */
    call_ok(big, c, rank);
    CHECK_INT(joins(rank), 1);
    CHECK_INT(lines(rank, "nccl", "ncclBroadcast from host memory"), 0);
    CHECK_INT(lines(rank, "log", "acc could not join"), 0);
    CHECK_INT(lines(rank, "log", "NCCL runs all its calls"), 0);
    if (rank == 0)
        CHECK_INT(lines(rank, "log", "communicator of 4 ranks uses the tables of"), 1);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    return 0;
}

ACC_TEST(the_join_works_with_a_cuda_12_2_driver)
{
    stub("stub_cuda_bytes");
    CHECK(stub("cuEventElapsedTime") != NULL);
    CHECK(dlsym(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD), "cuEventElapsedTime_v2") == NULL);
    gpu_env("stub_join", db_path("stub_join"));
    setenv("ACC_LOG_LEVEL", "info", 1);
    load_api();
    run_ranks(join_rank);
}

/* ---- a table of two nodes ----------------------------------------------------------------- */

/* Every call of acc's two-node ranges reaches NCCL, acc never joins for them, and no log says
 * that acc's plan "cannot run here" (dropin_util.h). */
ACC_TEST(on_gpus_a_two_node_tables_acc_ranges_go_to_nccl)
{
    run_two_nodes_case("stub_two_nodes", gpu_env, 1);
}

/* ---- abort -------------------------------------------------------------------------------- */

typedef struct {
    ncclComm_t comm;
    float buf[100];
    ncclResult_t rc;
} hung_t;

static void *hung_call(void *arg)
{
    hung_t *h = arg;
    h->rc = api.AllReduce(h->buf, h->buf, 100, ncclFloat32, ncclSum, h->comm, NULL);
    return NULL;
}

/* NCCL's all-reduce of 100 elements hangs on the device (FAKE_NCCL_HANG_COUNT): every
 * synchronisation of the stub waits for it, as a real device's would. */
static void abort_during_hang(ncclComm_t c, int rank)
{
    hung_t h = {c, {0}, ncclSuccess};
    pthread_t t;
    double t0, took;
    CHECK(pthread_create(&t, NULL, hung_call, &h) == 0);
    while (lines(rank, "nccl", "hung count=100") == 0)
        usleep(10000);
    t0 = acc_now_s();
    CHECK_INT(api.CommAbort(c), ncclSuccess);
    took = since(t0);
    printf("rank %d: ncclCommAbort returned after %.3f s\n", rank, took);
    CHECK_MSG(took < ABORT_SECONDS, "ncclCommAbort took %.3f s", took);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK_INT(h.rc, ncclRemoteError);
}

static int abort_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    ncclComm_t c = init(rank);
    call_t big = {ACC_COLL_ALLREDUCE, 4096, 0, 52, NULL, NULL};
    int acc_on = *(const int *)arg;
    (void)nranks;
    (void)unused;
    call_ok(big, c, rank);
    CHECK_INT(joins(rank), acc_on);
    abort_during_hang(c, rank);
    return 0;
}

ACC_TEST(abort_returns_at_once_while_nccls_kernel_hangs_acc_on)
{
    int acc_on = 1;
    gpu_env("stub_abort_on", db_path("stub_abort_on"));
    setenv("FAKE_NCCL_HANG_COUNT", "100", 1);
    load_api();
    run_ranks_n(DROPIN_NRANKS, abort_rank, &acc_on);
}

ACC_TEST(abort_returns_at_once_while_nccls_kernel_hangs_acc_off)
{
    int acc_on = 0;
    gpu_env("stub_abort_off", db_path("stub_abort_off"));
    setenv("ACC_DISABLE", "1", 1);
    setenv("FAKE_NCCL_HANG_COUNT", "100", 1);
    load_api();
    run_ranks_n(DROPIN_NRANKS, abort_rank, &acc_on);
}

/* The cuda backend's own abort, on a state holding device memory: it returns while a kernel
 * hangs, the memory stays allocated (a launch may still touch it), and the next
 * synchronisation - rt_cuda_reclaim, which ncclCommSuspend runs - gives it back. */
typedef struct {
    cb_state_t *s;
    int done;
} destroy_t;

static void *destroy_aborting(void *arg)
{
    destroy_t *d = arg;
    acc_comm_t dummy;
    memset(&dummy, 0, sizeof(dummy));
    rt_cuda_backend.destroy(&dummy, d->s, 1);
    __atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

ACC_TEST(the_cuda_backends_abort_never_waits_for_the_device)
{
    void (*busy)(int) = (void (*)(int))stub("stub_cuda_busy");
    size_t (*bytes)(void) = (size_t(*)(void))stub("stub_cuda_bytes");
    const acc_algo_t *ring = acc_algo_find(ACC_COLL_ALLREDUCE, "ring");
    acc_algo_args_t args;
    acc_topo_t *topo = NULL;
    acc_plan_t *plan = NULL;
    cb_state_t *s = acc_mem_calloc(1, sizeof(*s));
    cb_inst_t *in = acc_mem_calloc(1, sizeof(*in));
    destroy_t d = {s, 0};
    pthread_t t;
    double t0;

    CHECK(ring && s && in);
    CHECK_OK(acc_topo_load("gpus=2", &topo));
    memset(&args, 0, sizeof(args));
    CHECK_OK(acc_algo_generate(ring, topo, &args, &plan));
    CHECK_OK(acc_cuda_init(0));
    in->plan = plan;
    CHECK((in->seg = acc_mem_calloc(2, sizeof(unsigned char *))) != NULL);
    CHECK_OK(acc_cuda_malloc(1u << 20, (void **)&in->seg[0]));
    CHECK_OK(acc_cuda_malloc(4096, &in->tables));
    CHECK((s->insts = acc_mem_calloc(1, sizeof(cb_inst_t *))) != NULL);
    s->insts[0] = in;
    s->ninsts = 1;
    CHECK_INT(bytes(), (1u << 20) + 4096);

    busy(1); /* a kernel of NCCL's hangs */
    CHECK(pthread_create(&t, NULL, destroy_aborting, &d) == 0);
    t0 = acc_now_s();
    while (!__atomic_load_n(&d.done, __ATOMIC_ACQUIRE) && since(t0) < 20)
        usleep(1000);
    CHECK_MSG(__atomic_load_n(&d.done, __ATOMIC_ACQUIRE),
              "the cuda backend's abort waited for the device");
    CHECK(pthread_join(t, NULL) == 0);
    CHECK_INT(bytes(), (1u << 20) + 4096); /* parked */
    busy(-1);                              /* NCCL's abort ended its kernel */
    rt_cuda_reclaim();
    CHECK_INT(bytes(), 0);
    acc_plan_destroy(plan);
    acc_topo_destroy(topo);
}

/* ---- a driver older than acc needs ------------------------------------------------------ */

/* CUDA 11.2 (the stub built as one, for the cases named *old_driver*): acc's driver says what
 * it lacks and what acc needs; on a GPU communicator every rank still takes part in the ranks'
 * vote before any join (an all-reduce from device memory NCCL allocates, never host memory),
 * all of them fall back at once without joining, and the calls are NCCL's, exact. */
static int old_driver_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    ncclComm_t c = init(rank);
    call_t big = {ACC_COLL_ALLREDUCE, 4096, 0, 54, NULL, NULL};
    (void)nranks;
    (void)unused;
    (void)arg;
    call_ok(big, c, rank);
    call_ok(big, c, rank);
    CHECK_INT(joins(rank), 0);
    CHECK_INT(lines(rank, "nccl", "ncclMemAlloc size=16"), 1);
    CHECK_INT(lines(rank, "nccl", "from host memory"), 0);
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, big.count), 2);
    if (rank == 0)
        CHECK_INT(lines(rank, "log",
                        "the ranks could not compare their tables (acc's CUDA driver on GPU 0: "
                        "the CUDA driver (CUDA 11.2) lacks cuGraphInstantiateWithFlags, "
                        "which drivers of CUDA 11.4 and newer have"),
                  1);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    return 0;
}

ACC_TEST(an_old_driver_is_named_and_every_rank_falls_back)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    acc_status_t st;
    CHECK(h && dlsym(h, "stub_cuda_bytes") && !dlsym(h, "cuGraphInstantiateWithFlags"));
    st = acc_cuda_init(0);
    CHECK_INT(st, ACC_ERR_NO_DEVICE);
    CHECK_MSG_HAS("the CUDA driver (CUDA 11.2) lacks cuGraphInstantiateWithFlags");
    CHECK_MSG_HAS("acc needs a driver of CUDA 11.4 or newer");
    gpu_env("stub_old_driver", db_path("stub_old_driver"));
    setenv("ACC_TIMEOUT_MS", "30000", 1); /* nothing may wait for it */
    load_api();
    run_ranks(old_driver_rank);
}

/* ---- capture, suspend ----------------------------------------------------------------- */

static int capture_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    void (*capture)(int) = (void (*)(int))stub("stub_cuda_capture");
    ncclComm_t c = init(rank);
    call_t big = {ACC_COLL_ALLREDUCE, 4096, 0, 53, NULL, NULL};
    char log[512];
    (void)nranks;
    (void)unused;
    (void)arg;
    /* Captured into a graph: NCCL captures the call, acc does not join (a join allocates and
     * synchronises). */
    capture(1);
    call_ok(big, c, rank);
    CHECK_INT(joins(rank), 0);
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, big.count), 1);
    capture(0);
    call_ok(big, c, rank);
    CHECK_INT(joins(rank), 1);
    /* Suspend: acc stops and gives its device memory back, which takes a synchronisation
     * once acc's part is released (NCCL's own suspend frees memory, which synchronises too). */
    snprintf(log, sizeof(log), "%s", rank_file(rank, "cuda"));
    unlink(log);
    setenv("STUB_CUDA_LOG", log, 1);
    CHECK_INT(api.CommSuspend(c, NCCL_SUSPEND_MEM), ncclSuccess);
    unsetenv("STUB_CUDA_LOG");
    CHECK_INT(lines(rank, "cuda", "cuCtxSynchronize"), 1);
    CHECK_INT(api.CommResume(c), ncclSuccess);
    call_ok(big, c, rank);
    CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, big.count), 3);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    return 0;
}

ACC_TEST(no_join_while_capturing_and_suspend_gives_memory_back)
{
    gpu_env("stub_capture", db_path("stub_capture"));
    load_api();
    run_ranks(capture_rank);
}
