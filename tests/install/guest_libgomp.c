/*
 * libacc.so as a guest in a process that loaded libgomp first, as PyTorch does (and numpy
 * built with OpenMP, and every -fopenmp program): libgomp exports the OpenACC API, whose names
 * start with acc_ too.  The program is linked with libgomp ahead of libacc, so that libgomp
 * comes first in the loader's search order, checks that it does and that libgomp's OpenACC
 * answers, and then runs four ranks of communicators and the fusion engine through libacc.so.
 *
 * It also defines libacc's own allocation and error functions itself, each of which stops the
 * program when called: libacc's calls to its own functions must bind inside libacc
 * (-Bsymbolic-functions), never to a definition that another object of the process put first.
 * The program itself never calls them.
 *
 * Exit status 0 when every rank reduced right; the message says what went wrong otherwise.
 * The ctest install.libgomp_first (tests/CMakeLists.txt).
 */
#include "acc.h"

#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NRANKS 4
#define COUNT  3001

static void interposed(const char *name)
{
    fprintf(stderr,
            "guest_libgomp: libacc called the program's %s instead of its own: libacc's calls "
            "to its own functions do not bind inside it (link it with -Bsymbolic-functions)\n",
            name);
    abort();
}

/* Definitions that come before libacc.so's in the search order. */
void *acc_mem_alloc(size_t size)
{
    (void)size;
    interposed("acc_mem_alloc");
    return NULL;
}

void *acc_mem_calloc(size_t count, size_t size)
{
    (void)count;
    (void)size;
    interposed("acc_mem_calloc");
    return NULL;
}

void acc_mem_free(void *ptr)
{
    (void)ptr;
    interposed("acc_mem_free");
}

acc_status_t acc_error_set(acc_status_t st, const char *fmt, ...)
{
    (void)st;
    (void)fmt;
    interposed("acc_error_set");
    return ACC_ERR_INTERNAL;
}

static int fail(int rank, const char *what)
{
    fprintf(stderr, "guest_libgomp: rank %d: %s: %s\n", rank, what, acc_error_message());
    return 1;
}

/* Rank r's value of element e in round k: multiples of 1/4 below 256, exact in every sum. */
static float value(int r, size_t e, int k)
{
    return (float)((int)((r * 131 + e * 7 + (size_t)k * 17) % 1024)) / 4.0f;
}

static float mean(size_t e, int k)
{
    float s = 0;
    for (int r = 0; r < NRANKS; r++)
        s += value(r, e, k);
    return s / NRANKS;
}

static int rank_main(int rank, const acc_unique_id_t *id)
{
    static float grads[3][COUNT];
    static const size_t counts[3] = {COUNT, 17, 1000};
    acc_comm_opts_t copts;
    acc_fusion_opts_t fopts;
    acc_tune_config_t config;
    acc_comm_t *comm = NULL;
    acc_fusion_t *f = NULL;
    float *buf = grads[0];
    int idx[3];

    acc_comm_opts_init(&copts);
    copts.backend = ACC_BACKEND_HOST;
    copts.topo = "gpus=4";
    copts.db = "/nonexistent/acc.db";
    if (acc_comm_init_rank(&comm, NRANKS, id, rank, &copts) != ACC_OK)
        return fail(rank, "acc_comm_init_rank");
    for (size_t e = 0; e < COUNT; e++)
        buf[e] = value(rank, e, 0);
    if (acc_allreduce(buf, buf, COUNT, ACC_DT_F32, ACC_RED_SUM, comm, NULL) != ACC_OK)
        return fail(rank, "acc_allreduce");
    for (size_t e = 0; e < COUNT; e++)
        if (buf[e] != mean(e, 0) * NRANKS) {
            fprintf(stderr, "guest_libgomp: rank %d: allreduce element %zu is %g, not %g\n", rank,
                    e, buf[e], mean(e, 0) * NRANKS);
            return 1;
        }

    /* The fusion engine: three gradients on two streams, two iterations. */
    acc_tune_config_acc(&config, 4096, 2, ACC_TUNE_ALGO_AUTO);
    acc_fusion_opts_init(&fopts);
    fopts.config = &config;
    if (acc_fusion_create(comm, &fopts, &f) != ACC_OK)
        return fail(rank, "acc_fusion_create");
    for (int g = 0; g < 3; g++)
        if (acc_fusion_register(f, grads[g], counts[g], ACC_DT_F32, &idx[g]) != ACC_OK)
            return fail(rank, "acc_fusion_register");
    for (int k = 1; k <= 2; k++) {
        for (int g = 0; g < 3; g++)
            for (size_t e = 0; e < counts[g]; e++)
                grads[g][e] = value(rank, e + (size_t)g, k);
        for (int g = 2; g >= 0; g--)
            if (acc_fusion_ready(f, idx[g]) != ACC_OK)
                return fail(rank, "acc_fusion_ready");
        if (acc_fusion_wait(f) != ACC_OK)
            return fail(rank, "acc_fusion_wait");
        for (int g = 0; g < 3; g++)
            for (size_t e = 0; e < counts[g]; e++)
                if (grads[g][e] != mean(e + (size_t)g, k)) {
                    fprintf(stderr,
                            "guest_libgomp: rank %d: iteration %d, gradient %d element %zu is "
                            "%g, not the mean %g\n",
                            rank, k, g, e, grads[g][e], mean(e + (size_t)g, k));
                    return 1;
                }
    }
    if (acc_fusion_destroy(f) != ACC_OK)
        return fail(rank, "acc_fusion_destroy");
    if (acc_comm_destroy(comm) != ACC_OK)
        return fail(rank, "acc_comm_destroy");
    return 0;
}

/* The position of each library in the loader's search order. */
typedef struct {
    int index, gomp, acc;
} order_t;

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    order_t *o = data;
    (void)size;
    if (strstr(info->dlpi_name, "/libgomp.so") && o->gomp < 0)
        o->gomp = o->index;
    if (strstr(info->dlpi_name, "/libacc.so") && o->acc < 0)
        o->acc = o->index;
    o->index++;
    return 0;
}

int main(void)
{
    order_t order = {0, -1, -1};
    int (*get_num_devices)(int);
    acc_unique_id_t id;
    pid_t pid[NRANKS];
    int bad = 0;

    setenv("ACC_LOG_LEVEL", "error", 1);
    dl_iterate_phdr(visit, &order);
    if (order.gomp < 0 || order.acc < 0 || order.gomp > order.acc) {
        fprintf(stderr,
                "guest_libgomp: libgomp must be loaded before libacc.so (positions %d and %d in "
                "the search order); the test proves nothing otherwise\n",
                order.gomp, order.acc);
        return 1;
    }
    /* libgomp's OpenACC is live in this process: acc_get_num_devices(acc_device_host) is 1. */
    get_num_devices = (int (*)(int))dlsym(RTLD_DEFAULT, "acc_get_num_devices");
    if (!get_num_devices || get_num_devices(2) != 1) {
        fprintf(stderr, "guest_libgomp: libgomp's acc_get_num_devices does not answer\n");
        return 1;
    }
    if (acc_unique_id_local(&id) != ACC_OK)
        return fail(-1, "acc_unique_id_local");
    fflush(NULL);
    for (int r = 0; r < NRANKS; r++) {
        pid[r] = fork();
        if (pid[r] < 0) {
            perror("guest_libgomp: fork");
            return 1;
        }
        if (pid[r] == 0) {
            alarm(120); /* a rank that hangs ends */
            _exit(rank_main(r, &id));
        }
    }
    for (int r = 0; r < NRANKS; r++) {
        int status;
        if (waitpid(pid[r], &status, 0) != pid[r] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "guest_libgomp: rank %d ended with status 0x%x\n", r, status);
            bad++;
        }
    }
    if (bad)
        return 1;
    printf("4 ranks: allreduce and the fusion engine through libacc.so, loaded after libgomp "
           "(%d acc_get_num_devices(host)): right\n",
           get_num_devices(2));
    return 0;
}
