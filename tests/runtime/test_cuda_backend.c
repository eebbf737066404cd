/*
 * The cuda backend, on a GPU: 2 and 4 rank processes sharing one device (CUDA IPC works within
 * a device; the GPU script starts MPS where it can, else the kernels time-slice), every
 * collective against the reference in fp32, fp16 and bf16, in place and out of place; a call
 * captured into a CUDA graph and replayed; and the NCCL fallback at one rank with the real
 * NCCL.  Every case skips itself without a GPU.  The parent never touches CUDA (a forked
 * child could not use it then): it asks a child whether there is a GPU.
 */
#include "acc_db.h"
#include "comm_util.h"
#include "ranks.h"

#define TIMEOUT_MS 60000

static acc_comm_t *join(int rank, int nranks, const acc_unique_id_t *id)
{
    acc_comm_opts_t o;
    acc_comm_t *c;
    acc_comm_opts_init(&o);
    o.backend = ACC_BACKEND_CUDA;
    o.device = 0; /* every rank on the one GPU */
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, &o));
    CHECK_INT(acc_comm_backend(c), ACC_BACKEND_CUDA);
    return c;
}

/* One call on device buffers, checked on the host. */
static void device_call(acc_comm_t *c, const call_t *k, acc_stream_t stream)
{
    int n = acc_comm_size(c), me = acc_comm_rank(c);
    size_t es = acc_dtype_size(k->dt);
    uint64_t ein = k->count * (k->coll == ACC_COLL_REDUCE_SCATTER ? (uint64_t)n : 1);
    uint64_t eout = k->count * (k->coll == ACC_COLL_ALLGATHER ? (uint64_t)n : 1);
    uint64_t big = (ein > eout ? ein : eout) * es;
    unsigned char *h = malloc(big), *out = malloc(big);
    void *da = NULL, *db = NULL, *din, *dout;
    uint64_t wrong;

    CHECK(h && out);
    CHECK_OK(acc_cuda_malloc(big, &da));
    CHECK_OK(acc_cuda_malloc(big, &db));
    memset(h, 0xa5, big);
    acc_host_fill_rank(k->coll, n, me, k->dt, k->op, ACC_FILL_EXACT, k->seed, k->count,
                       h + (k->inplace && k->coll == ACC_COLL_ALLGATHER ? me * k->count * es : 0));
    CHECK_OK(acc_cuda_htod(da, h, big));
    din = da;
    dout = k->inplace ? da : db;
    if (k->inplace && k->coll == ACC_COLL_ALLGATHER)
        din = (unsigned char *)da + me * k->count * es;
    if (k->inplace && k->coll == ACC_COLL_REDUCE_SCATTER)
        dout = (unsigned char *)da + me * k->count * es;
    switch (k->coll) {
    case ACC_COLL_ALLREDUCE:
        CHECK_OK(acc_allreduce(din, dout, k->count, k->dt, k->op, c, stream));
        break;
    case ACC_COLL_ALLGATHER:
        CHECK_OK(acc_allgather(din, dout, k->count, k->dt, c, stream));
        break;
    case ACC_COLL_REDUCE_SCATTER:
        CHECK_OK(acc_reduce_scatter(din, dout, k->count, k->dt, k->op, c, stream));
        break;
    case ACC_COLL_BROADCAST:
        CHECK_OK(acc_broadcast(din, dout, k->count, k->dt, k->root, c, stream));
        break;
    default:
        CHECK_OK(acc_reduce(din, dout, k->count, k->dt, k->op, k->root, c, stream));
        break;
    }
    CHECK_OK(acc_cuda_stream_sync(stream));
    CHECK_OK(acc_cuda_dtoh(out, dout, eout * es));
    wrong = acc_host_check_rank(k->coll, n, k->root, me, k->dt, k->op, ACC_FILL_EXACT, k->seed,
                                k->count, out, NULL);
    CHECK_MSG(wrong == 0, "rank %d: %s %s %s count %llu%s: %llu wrong", me, acc_coll_name(k->coll),
              acc_dtype_name(k->dt), acc_redop_name(k->op), (unsigned long long)k->count,
              k->inplace ? " in place" : "", (unsigned long long)wrong);
    acc_cuda_free(da);
    acc_cuda_free(db);
    free(h);
    free(out);
}

static int every_collective(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    static const acc_dtype_t dts[] = {ACC_DT_F32, ACC_DT_F16, ACC_DT_BF16};
    static const uint64_t counts[] = {1, 1001, 1u << 20};
    acc_comm_t *c = join(rank, nranks, id);
    acc_comm_stat_t *rows;
    size_t nrows;
    uint32_t seed = 1;
    (void)arg;
    for (int coll = 0; coll < 5; coll++)
        for (size_t d = 0; d < 3; d++)
            for (size_t i = 0; i < 3; i++)
                for (int inplace = 0; inplace < 2; inplace++) {
                    call_t k = {(acc_coll_t)coll, dts[d], ACC_RED_SUM, counts[i],
                                inplace,          0,      seed++};
                    device_call(c, &k, NULL);
                }
    CHECK_OK(acc_comm_stats(c, &rows, &nrows));
    for (size_t i = 0; rank == 0 && i < nrows; i++)
        printf("%-14s [%llu, %llu] %llu calls: %s\n", acc_coll_name(rows[i].coll),
               (unsigned long long)rows[i].min_bytes, (unsigned long long)rows[i].max_bytes,
               (unsigned long long)rows[i].calls, rows[i].ran);
    acc_mem_free(rows);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

static void env(int nranks)
{
    char spec[64], *db = (char *)acc_test_tmp(nranks == 2 ? "cuda2.db" : "cuda4.db");
    snprintf(spec, sizeof(spec), "gpus=%d nvlink=18", nranks);
    build_db(db, spec);
    setenv("ACC_TOPO", spec, 1);
    setenv("ACC_DB", db, 1);
    setenv("ACC_TIMEOUT_MS", "60000", 1);
}

ACC_TEST_GPU(cuda_backend_2_ranks_one_gpu)
{
    ranks_skip_without_gpu();
    env(2);
    ranks_run(2, every_collective, NULL, 580);
}

ACC_TEST_GPU(cuda_backend_4_ranks_one_gpu)
{
    ranks_skip_without_gpu();
    env(4);
    ranks_run(4, every_collective, NULL, 580);
}

/* Captured once, replayed ten times: every replay right. */
static int graph(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c = join(rank, nranks, id);
    acc_cuda_stream_t s;
    acc_cuda_graph_t *g;
    uint64_t count = 4096;
    float *h = malloc(count * 4), *o = malloc(count * 4);
    void *d;
    (void)arg;
    CHECK_OK(acc_cuda_stream_create(&s));
    CHECK_OK(acc_cuda_malloc(count * 4, &d));
    for (uint64_t e = 0; e < count; e++)
        h[e] = (float)(rank + 1);
    CHECK_OK(acc_cuda_htod(d, h, count * 4));
    CHECK_OK(acc_allreduce(d, d, count, ACC_DT_F32, ACC_RED_MAX, c, s)); /* set-up, outside */
    CHECK_OK(acc_cuda_capture_begin(s));
    CHECK_OK(acc_allreduce(d, d, count, ACC_DT_F32, ACC_RED_MAX, c, s));
    CHECK_OK(acc_cuda_capture_end(s, &g));
    for (int i = 0; i < 10; i++) {
        CHECK_OK(acc_cuda_htod(d, h, count * 4));
        CHECK_OK(acc_cuda_graph_launch(g, s));
        CHECK_OK(acc_cuda_stream_sync(s));
        CHECK_OK(acc_cuda_dtoh(o, d, count * 4));
        for (uint64_t e = 0; e < count; e++)
            CHECK_MSG(o[e] == (float)nranks, "replay %d element %llu: %g", i, (unsigned long long)e,
                      (double)o[e]);
    }
    acc_cuda_graph_destroy(g);
    acc_cuda_free(d);
    acc_cuda_stream_destroy(s);
    CHECK_OK(acc_comm_destroy(c));
    free(h);
    free(o);
    return 0;
}

ACC_TEST_GPU(cuda_backend_graph_capture_and_replay)
{
    ranks_skip_without_gpu();
    env(2);
    ranks_run(2, graph, NULL, 300);
}

/* One rank, no database: every call goes to the real NCCL. */
static int nccl_only(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c = join(rank, nranks, id);
    acc_comm_stat_t *rows;
    size_t nrows;
    (void)arg;
    for (int coll = 0; coll < 5; coll++) {
        call_t k = {(acc_coll_t)coll, ACC_DT_F32, ACC_RED_SUM, 1001, 0, 0, 3};
        device_call(c, &k, NULL);
    }
    CHECK_OK(acc_comm_stats(c, &rows, &nrows));
    CHECK(nrows > 0);
    for (size_t i = 0; i < nrows; i++)
        CHECK_MSG(strstr(rows[i].ran, "fallback: NCCL") != NULL, "ran %s", rows[i].ran);
    acc_mem_free(rows);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST_GPU(cuda_backend_nccl_fallback_one_rank)
{
    ranks_skip_without_gpu();
    setenv("ACC_TOPO", "gpus=1", 1);
    setenv("ACC_DB", "/nonexistent/acc.db", 1);
    ranks_run(1, nccl_only, NULL, 300);
}
