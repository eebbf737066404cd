/*
 * A stub libcuda.so.1 with the symbol set of a CUDA 12.2 driver (R535), as far as acc uses it:
 * the entry points acc's driver loader looks up (runtime/exec/cuda_driver.c) under the names a
 * 12.2 driver exports - cuEventElapsedTime but not cuEventElapsedTime_v2, which came with 12.8
 * - and cuDriverGetVersion answering 12020.  One device, whose "device memory" is host memory,
 * so that the stand-in NCCL (host memory) can take it; modules do not load (no GPU to run
 * them), so acc's kernels never run here and acc falls back to NCCL for every call it would
 * launch.  For the tests it exports, beside the driver's API:
 *   stub_cuda_busy(+1/-1)   a kernel of NCCL's starts / ends: while one runs, every
 *                           synchronisation and cuMemFree waits, as on a real device;
 *   stub_cuda_is_device(p)  whether p lies in memory cuMemAlloc handed out;
 *   stub_cuda_bytes()       device memory allocated now;
 *   stub_cuda_capture(on)   every stream reports capturing into a graph (on) or not.
 * STUB_CUDA_LOG names a file that receives one line per synchronisation and per free, for tests
 * that check what acc waited for.  Built with STUB_CUDA_11_2 it is a CUDA 11.2 driver instead
 * (R460), which lacks cuGraphInstantiateWithFlags (11.4): older than acc needs.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
static int busy, capturing;
static size_t allocated;

typedef struct block {
    char *p;
    size_t n;
    struct block *next;
} block_t;
static block_t *blocks;

static void note(const char *what)
{
    const char *path = getenv("STUB_CUDA_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) {
        fprintf(f, "%s\n", what);
        fclose(f);
    }
}

/* What a synchronisation does on a device with a kernel that has not finished: wait. */
static void wait_idle(const char *what)
{
    note(what);
    pthread_mutex_lock(&lock);
    while (busy > 0)
        pthread_cond_wait(&idle, &lock);
    pthread_mutex_unlock(&lock);
}

/* ---- for the tests ---------------------------------------------------------------------- */

EXPORT void stub_cuda_busy(int delta);
EXPORT int stub_cuda_is_device(const void *p);
EXPORT size_t stub_cuda_bytes(void);
EXPORT void stub_cuda_capture(int on);

void stub_cuda_busy(int delta)
{
    pthread_mutex_lock(&lock);
    busy += delta;
    if (busy <= 0)
        pthread_cond_broadcast(&idle);
    pthread_mutex_unlock(&lock);
}

int stub_cuda_is_device(const void *p)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    for (block_t *b = blocks; b && !found; b = b->next)
        found = (const char *)p >= b->p && (const char *)p < b->p + b->n;
    pthread_mutex_unlock(&lock);
    return found;
}

size_t stub_cuda_bytes(void)
{
    size_t n;
    pthread_mutex_lock(&lock);
    n = allocated;
    pthread_mutex_unlock(&lock);
    return n;
}

void stub_cuda_capture(int on)
{
    pthread_mutex_lock(&lock);
    capturing = on;
    pthread_mutex_unlock(&lock);
}

/* ---- the driver's API ------------------------------------------------------------------- */

#define API(name, params)                                                                          \
    EXPORT CUresult name params;                                                                   \
    CUresult name params

API(cuInit, (unsigned flags))
{
    (void)flags;
    return CUDA_SUCCESS;
}

API(cuDriverGetVersion, (int *v))
{
#ifdef STUB_CUDA_11_2
    *v = 11020;
#else
    *v = 12020;
#endif
    return CUDA_SUCCESS;
}

API(cuGetErrorName, (CUresult r, const char **s))
{
    *s = r == CUDA_ERROR_NO_BINARY_FOR_GPU ? "CUDA_ERROR_NO_BINARY_FOR_GPU" : "CUDA_ERROR_STUB";
    return CUDA_SUCCESS;
}

API(cuGetErrorString, (CUresult r, const char **s))
{
    (void)r;
    *s = "the stub CUDA driver of acc's tests cannot do this";
    return CUDA_SUCCESS;
}

API(cuDeviceGetCount, (int *n))
{
    *n = 1;
    return CUDA_SUCCESS;
}

API(cuDeviceGet, (int *dev, int ordinal))
{
    *dev = ordinal;
    return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API(cuDeviceGetName, (char *name, int len, int dev))
{
    (void)dev;
    snprintf(name, (size_t)len, "acc stub device");
    return CUDA_SUCCESS;
}

/* Compute capability 1.0: no compiler builds kernels for it, so acc gives up on its own kernels
 * at once (and falls back) instead of compiling them. */
API(cuDeviceGetAttribute, (int *v, int attr, int dev))
{
    (void)dev;
    *v = attr == 75 ? 1 : attr == 76 ? 0 : attr == 16 ? 132 : 0;
    return CUDA_SUCCESS;
}

API(cuDeviceTotalMem_v2, (size_t * bytes, int dev))
{
    (void)dev;
    *bytes = (size_t)80 << 30;
    return CUDA_SUCCESS;
}

API(cuDevicePrimaryCtxRetain, (void **ctx, int dev))
{
    (void)dev;
    *ctx = (void *)&lock;
    return CUDA_SUCCESS;
}

API(cuCtxSetCurrent, (void *ctx))
{
    (void)ctx;
    return CUDA_SUCCESS;
}

API(cuMemAlloc_v2, (CUdeviceptr * p, size_t n))
{
    block_t *b = malloc(sizeof(*b));
    char *mem = malloc(n ? n : 1);
    if (!b || !mem) {
        free(b);
        free(mem);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    b->p = mem;
    b->n = n;
    pthread_mutex_lock(&lock);
    b->next = blocks;
    blocks = b;
    allocated += n;
    pthread_mutex_unlock(&lock);
    *p = (CUdeviceptr)(uintptr_t)mem;
    return CUDA_SUCCESS;
}

/* cuMemFree synchronises the device. */
API(cuMemFree_v2, (CUdeviceptr p))
{
    block_t **at, *b = NULL;
    wait_idle("cuMemFree");
    pthread_mutex_lock(&lock);
    for (at = &blocks; *at && !b; at = &(*at)->next)
        if ((*at)->p == (char *)(uintptr_t)p) {
            b = *at;
            *at = b->next;
            allocated -= b->n;
            break;
        }
    pthread_mutex_unlock(&lock);
    if (!b)
        return CUDA_ERROR_INVALID_VALUE;
    free(b->p);
    free(b);
    return CUDA_SUCCESS;
}

API(cuMemsetD8_v2, (CUdeviceptr p, unsigned char v, size_t n))
{
    memset((void *)(uintptr_t)p, v, n);
    return CUDA_SUCCESS;
}

API(cuMemsetD8Async, (CUdeviceptr p, unsigned char v, size_t n, void *s))
{
    (void)s;
    memset((void *)(uintptr_t)p, v, n);
    return CUDA_SUCCESS;
}

API(cuMemcpyHtoD_v2, (CUdeviceptr d, const void *s, size_t n))
{
    memcpy((void *)(uintptr_t)d, s, n);
    return CUDA_SUCCESS;
}

API(cuMemcpyDtoH_v2, (void *d, CUdeviceptr s, size_t n))
{
    memcpy(d, (const void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}

API(cuMemcpyDtoDAsync_v2, (CUdeviceptr d, CUdeviceptr s, size_t n, void *st))
{
    (void)st;
    memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}

API(cuStreamCreate, (void **s, unsigned flags))
{
    (void)flags;
    *s = malloc(1);
    return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

API(cuStreamDestroy_v2, (void *s))
{
    free(s);
    return CUDA_SUCCESS;
}

API(cuStreamSynchronize, (void *s))
{
    (void)s;
    wait_idle("cuStreamSynchronize");
    return CUDA_SUCCESS;
}

API(cuEventCreate, (void **e, unsigned flags))
{
    (void)flags;
    *e = malloc(1);
    return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

API(cuEventDestroy_v2, (void *e))
{
    free(e);
    return CUDA_SUCCESS;
}

API(cuEventRecord, (void *e, void *s))
{
    (void)e, (void)s;
    return CUDA_SUCCESS;
}

/* CUDA 12.2 has this one only; cuEventElapsedTime_v2 came with 12.8. */
API(cuEventElapsedTime, (float *ms, void *a, void *b))
{
    (void)a, (void)b;
    *ms = 0;
    return CUDA_SUCCESS;
}

API(cuModuleLoadData, (void **m, const void *image))
{
    (void)m, (void)image;
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
}

API(cuModuleUnload, (void *m))
{
    (void)m;
    return CUDA_SUCCESS;
}

API(cuModuleGetFunction, (void **f, void *m, const char *name))
{
    (void)f, (void)m, (void)name;
    return CUDA_ERROR_NOT_SUPPORTED;
}

API(cuOccupancyMaxActiveBlocksPerMultiprocessor, (int *n, void *f, int threads, size_t smem))
{
    (void)f, (void)threads, (void)smem;
    *n = 0;
    return CUDA_ERROR_NOT_SUPPORTED;
}

API(cuLaunchKernel, (void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                     unsigned bz, unsigned smem, void *s, void **args, void **extra))
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem, (void)s;
    (void)args, (void)extra;
    return CUDA_ERROR_NOT_SUPPORTED;
}

API(cuStreamBeginCapture_v2, (void *s, int mode))
{
    (void)s, (void)mode;
    return CUDA_ERROR_NOT_SUPPORTED;
}

API(cuStreamEndCapture, (void *s, void **g))
{
    (void)s, (void)g;
    return CUDA_ERROR_NOT_SUPPORTED;
}

#ifndef STUB_CUDA_11_2
API(cuGraphInstantiateWithFlags, (void **e, void *g, unsigned long long flags))
{
    (void)e, (void)g, (void)flags;
    return CUDA_ERROR_NOT_SUPPORTED;
}
#endif

API(cuGraphLaunch, (void *e, void *s))
{
    (void)e, (void)s;
    return CUDA_ERROR_NOT_SUPPORTED;
}

API(cuGraphExecDestroy, (void *e))
{
    (void)e;
    return CUDA_SUCCESS;
}

API(cuGraphDestroy, (void *g))
{
    (void)g;
    return CUDA_SUCCESS;
}

API(cuIpcGetMemHandle, (void *handle, CUdeviceptr p))
{
    (void)handle, (void)p;
    return CUDA_ERROR_NOT_SUPPORTED;
}

API(cuIpcOpenMemHandle_v2, (CUdeviceptr * p, char handle[64], unsigned flags))
{
    (void)p, (void)handle, (void)flags;
    return CUDA_ERROR_NOT_SUPPORTED;
}

API(cuIpcCloseMemHandle, (CUdeviceptr p))
{
    (void)p;
    return CUDA_SUCCESS;
}

API(cuMemHostAlloc, (void **p, size_t n, unsigned flags))
{
    (void)flags;
    *p = calloc(1, n ? n : 1);
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

API(cuMemHostGetDevicePointer_v2, (CUdeviceptr * d, void *p, unsigned flags))
{
    (void)flags;
    *d = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

API(cuMemFreeHost, (void *p))
{
    free(p);
    return CUDA_SUCCESS;
}

API(cuStreamIsCapturing, (void *s, int *status))
{
    (void)s;
    pthread_mutex_lock(&lock);
    *status = capturing;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

API(cuCtxSynchronize, (void))
{
    wait_idle("cuCtxSynchronize");
    return CUDA_SUCCESS;
}
