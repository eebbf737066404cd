/*
 * nccl_loop - one rank of a small NCCL job, as a training job uses NCCL: the library found the
 * way the dynamic linker finds it for a program that links NCCL (libnccl.so.2 in the global
 * scope, so that an LD_PRELOADed drop-in comes first), one GPU per rank, all-reduces of the
 * given sizes in a loop on device memory, every result checked.  The GPU tests of
 * test_nccl_gpu.c start it, with NCCL_TUNER_PLUGIN or LD_PRELOAD set.
 *
 *     nccl_loop RANK NRANKS IDFILE ITERATIONS BYTES...
 *
 * Rank 0 writes NCCL's unique id to IDFILE; the others wait for it.  Prints which library's
 * ncclAllReduce it called, how long the first call took (a drop-in joins there: bench/join.sh)
 * and "ok" when every result was right; exit status 0 only then.
 * NCCL_LOOP_LIBRARY names the NCCL to load (default libnccl.so.2); NCCL_LOOP_HOST=1 puts the
 * buffers in host memory, for the tests' stand-in NCCL on machines without a GPU.
 * NCCL_LOOP_ABORT_MS=N runs the loop on a thread and calls ncclCommAbort from the main thread
 * after N ms, as a watchdog does; it prints "abort took S s" and "ok" when the abort returned
 * and the loop stopped.
 */
#include "acc_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct nccl_id {
    char internal[128];
};

typedef int (*get_id_fn)(struct nccl_id *id);
typedef int (*init_fn)(void **comm, int nranks, struct nccl_id id, int rank);
typedef int (*allreduce_fn)(const void *, void *, size_t, int, int, void *, void *);
typedef int (*destroy_fn)(void *comm);

enum { NCCL_FLOAT32 = 7, NCCL_SUM = 0 };

static void *need(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    if (!f) {
        fprintf(stderr, "nccl_loop: no %s: %s\n", name, dlerror());
        exit(2);
    }
    return f;
}

static int share_id(int rank, const char *path, get_id_fn get_id, struct nccl_id *id)
{
    char tmp[4096];
    FILE *f;
    if (rank == 0) {
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        if (get_id(id) != 0 || !(f = fopen(tmp, "wb")) || fwrite(id, sizeof(*id), 1, f) != 1 ||
            fclose(f) != 0 || rename(tmp, path) != 0)
            return -1;
        return 0;
    }
    for (int tries = 0; tries < 6000; tries++) {
        if ((f = fopen(path, "rb"))) {
            size_t got = fread(id, sizeof(*id), 1, f);
            fclose(f);
            if (got == 1)
                return 0;
        }
        usleep(10000);
    }
    return -1;
}

static int fail(const char *what)
{
    fprintf(stderr, "nccl_loop: %s: %s\n", what, acc_error_message());
    return -1;
}

static int on_host;

/* One all-reduce of bytes (on device memory, unless on_host): element i of rank r is
 * r + 1 + i % 7. */
static int one_call(allreduce_fn allreduce, void *comm, int rank, int nranks, size_t bytes)
{
    size_t n = bytes / sizeof(float), wrong = 0;
    float *host = malloc(n * sizeof(float) + 1);
    void *dev = NULL;
    int rc = -1;

    if (!host || (!on_host && acc_cuda_malloc(n * sizeof(float) + 1, &dev) != ACC_OK)) {
        fail("memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        host[i] = (float)(rank + 1 + (int)(i % 7));
    if (!on_host && acc_cuda_htod(dev, host, n * sizeof(float)) != ACC_OK) {
        fail("copying in");
        goto out;
    }
    if (allreduce(on_host ? host : dev, on_host ? host : dev, n, NCCL_FLOAT32, NCCL_SUM, comm,
                  NULL) != 0) {
        fprintf(stderr, "nccl_loop: rank %d: ncclAllReduce of %zu bytes failed\n", rank, bytes);
        goto out;
    }
    if (!on_host && (acc_cuda_stream_sync(NULL) != ACC_OK ||
                     acc_cuda_dtoh(host, dev, n * sizeof(float)) != ACC_OK)) {
        fail("copying out");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        wrong += host[i] != (float)(nranks * (nranks + 1) / 2 + nranks * (int)(i % 7));
    if (wrong)
        fprintf(stderr, "nccl_loop: rank %d: %zu bytes: %zu wrong elements\n", rank, bytes, wrong);
    rc = wrong ? -1 : 0;
out:
    acc_cuda_free(dev);
    free(host);
    return rc;
}

/* The loop a watchdog aborts: all-reduces until one fails. */
typedef struct {
    allreduce_fn allreduce;
    void *comm;
    int rank, nranks, nsizes;
    char **sizes;
    int calls;
    int stop; /* __atomic: the abort is coming; make no new call on the communicator */
} loop_t;

static void *loop(void *arg)
{
    loop_t *l = arg;
    for (;;)
        for (int a = 0; a < l->nsizes; a++, l->calls++)
            if (__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE) ||
                one_call(l->allreduce, l->comm, l->rank, l->nranks,
                         strtoull(l->sizes[a], NULL, 10)) != 0)
                return NULL;
}

static int abort_during_loop(loop_t *l, int ms)
{
    typedef int (*abort_fn)(void *comm);
    abort_fn comm_abort = (abort_fn)need("ncclCommAbort");
    pthread_t t;
    double t0;
    int rc;

    if (pthread_create(&t, NULL, loop, l) != 0)
        return 1;
    usleep((useconds_t)ms * 1000);
    __atomic_store_n(&l->stop, 1, __ATOMIC_RELEASE);
    t0 = acc_now_s();
    rc = comm_abort(l->comm);
    printf("abort took %.3f s after %d calls (ncclCommAbort returned %d)\n", acc_now_s() - t0,
           l->calls, rc);
    fflush(stdout);
    pthread_join(t, NULL);
    if (rc != 0)
        return 1;
    printf("ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *library = getenv("NCCL_LOOP_LIBRARY");
    int rank, nranks, iters;
    struct nccl_id id;
    void *comm = NULL;
    Dl_info where;
    allreduce_fn allreduce;

    if (argc < 6) {
        fprintf(stderr, "usage: nccl_loop RANK NRANKS IDFILE ITERATIONS BYTES...\n");
        return 2;
    }
    on_host = getenv("NCCL_LOOP_HOST") != NULL;
    rank = atoi(argv[1]);
    nranks = atoi(argv[2]);
    iters = atoi(argv[4]);
    /* NCCL into the global scope, where a preloaded drop-in is found first. */
    if (!dlopen(library ? library : "libnccl.so.2", RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "nccl_loop: %s\n", dlerror());
        return 2;
    }
    allreduce = (allreduce_fn)need("ncclAllReduce");
    if (dladdr((void *)allreduce, &where))
        printf("ncclAllReduce from %s\n", where.dli_fname);
    if (!on_host && acc_cuda_init(rank) != ACC_OK) {
        fail("no GPU");
        return 2;
    }
    if (share_id(rank, argv[3], (get_id_fn)need("ncclGetUniqueId"), &id) != 0 ||
        ((init_fn)need("ncclCommInitRank"))(&comm, nranks, id, rank) != 0) {
        fprintf(stderr, "nccl_loop: rank %d: no communicator\n", rank);
        return 1;
    }
    if (getenv("NCCL_LOOP_ABORT_MS")) {
        loop_t l = {allreduce, comm, rank, nranks, argc - 5, argv + 5, 0, 0};
        return abort_during_loop(&l, atoi(getenv("NCCL_LOOP_ABORT_MS")));
    }
    for (int it = 0; it < iters; it++)
        for (int a = 5; a < argc; a++) {
            double t0 = acc_now_s();
            if (one_call(allreduce, comm, rank, nranks, strtoull(argv[a], NULL, 10)) != 0)
                return 1;
            if (it == 0 && a == 5)
                printf("rank %d: first call %.4f s\n", rank, acc_now_s() - t0);
        }
    if (((destroy_fn)need("ncclCommDestroy"))(comm) != 0)
        return 1;
    printf("ok\n");
    return 0;
}
