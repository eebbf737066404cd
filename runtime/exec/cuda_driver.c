/*
 * The CUDA driver API, opened with dlopen("libcuda.so.1") the first time a GPU function is
 * called.  Linking libcuda would make every acc binary fail to start on a machine without a
 * driver (and the toolkit's stub returns CUDA_ERROR_STUB_LIBRARY at run time; reference/05
 * §3.4), so the few entry points acc uses are declared here with the driver's own types and
 * looked up by their versioned names (cuda.h maps cuMemAlloc to cuMemAlloc_v2, and so on).
 * Every failure keeps the driver's error name and text.
 */
#include "gpu_exec.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent, *CUgraph, *CUgraphExec;

enum {
    CUDA_ERROR_STUB_LIBRARY = 34,
    CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    CUDA_ERROR_NO_DEVICE = 100,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_STREAM_NON_BLOCKING = 1,
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1,
    CU_MEMHOSTALLOC_PORTABLE = 1,
    CU_MEMHOSTALLOC_DEVICEMAP = 2,
    CU_STREAM_CAPTURE_STATUS_NONE = 0,
};

/* CUipcMemHandle: 64 opaque bytes. */
typedef struct {
    char reserved[64];
} CUipcMemHandle;

/* The entry points: name, the symbol it has in libcuda.so.1, the driver's CUDA version that
 * first has it (CUDA_VERSION's form: 11040 is 11.4), an older symbol of the same signature to
 * use on drivers that lack it (NULL: none, the entry point is required), parameters (all
 * return CUresult).  Every required entry point is in every driver of CUDA 11.4 and newer, and
 * so in every driver NCCL 2.28 to 2.32 runs on (CUDA 12.0, R525, and newer); the newer ones
 * fall back.  Versioned names are what cuda.h maps the plain ones to. */
#define DRIVER_MAP(X)                                                                              \
    X(cuInit, "cuInit", 2000, NULL, (unsigned))                                                    \
    X(cuDriverGetVersion, "cuDriverGetVersion", 2020, NULL, (int *))                               \
    X(cuGetErrorName, "cuGetErrorName", 6000, NULL, (CUresult, const char **))                     \
    X(cuGetErrorString, "cuGetErrorString", 6000, NULL, (CUresult, const char **))                 \
    X(cuDeviceGetCount, "cuDeviceGetCount", 2000, NULL, (int *))                                   \
    X(cuDeviceGet, "cuDeviceGet", 2000, NULL, (CUdevice *, int))                                   \
    X(cuDeviceGetName, "cuDeviceGetName", 2000, NULL, (char *, int, CUdevice))                     \
    X(cuDeviceGetAttribute, "cuDeviceGetAttribute", 2000, NULL, (int *, int, CUdevice))            \
    X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", 3020, NULL, (size_t *, CUdevice))                   \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000, NULL, (CUcontext *, CUdevice))   \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", 4000, NULL, (CUcontext))                                 \
    X(cuMemAlloc, "cuMemAlloc_v2", 3020, NULL, (CUdeviceptr *, size_t))                            \
    X(cuMemFree, "cuMemFree_v2", 3020, NULL, (CUdeviceptr))                                        \
    X(cuMemsetD8, "cuMemsetD8_v2", 3020, NULL, (CUdeviceptr, unsigned char, size_t))               \
    X(cuMemsetD8Async, "cuMemsetD8Async", 3020, NULL,                                              \
      (CUdeviceptr, unsigned char, size_t, CUstream))                                              \
    X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", 3020, NULL, (CUdeviceptr, const void *, size_t))            \
    X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", 3020, NULL, (void *, CUdeviceptr, size_t))                  \
    X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", 3020, NULL,                                       \
      (CUdeviceptr, CUdeviceptr, size_t, CUstream))                                                \
    X(cuStreamCreate, "cuStreamCreate", 2000, NULL, (CUstream *, unsigned))                        \
    X(cuStreamDestroy, "cuStreamDestroy_v2", 4000, NULL, (CUstream))                               \
    X(cuStreamSynchronize, "cuStreamSynchronize", 2000, NULL, (CUstream))                          \
    X(cuEventCreate, "cuEventCreate", 2000, NULL, (CUevent *, unsigned))                           \
    X(cuEventDestroy, "cuEventDestroy_v2", 4000, NULL, (CUevent))                                  \
    X(cuEventRecord, "cuEventRecord", 2000, NULL, (CUevent, CUstream))                             \
    X(cuEventElapsedTime, "cuEventElapsedTime_v2", 12080, "cuEventElapsedTime",                    \
      (float *, CUevent, CUevent))                                                                 \
    X(cuModuleLoadData, "cuModuleLoadData", 2000, NULL, (CUmodule *, const void *))                \
    X(cuModuleUnload, "cuModuleUnload", 2000, NULL, (CUmodule))                                    \
    X(cuModuleGetFunction, "cuModuleGetFunction", 2000, NULL,                                      \
      (CUfunction *, CUmodule, const char *))                                                      \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor",  \
      6050, NULL, (int *, CUfunction, int, size_t))                                                \
    X(cuLaunchKernel, "cuLaunchKernel", 4000, NULL,                                                \
      (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, \
       void **, void **))                                                                          \
    X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", 10010, NULL, (CUstream, int))               \
    X(cuStreamEndCapture, "cuStreamEndCapture", 10000, NULL, (CUstream, CUgraph *))                \
    X(cuGraphInstantiate, "cuGraphInstantiateWithFlags", 11040, NULL,                              \
      (CUgraphExec *, CUgraph, unsigned long long))                                                \
    X(cuGraphLaunch, "cuGraphLaunch", 10000, NULL, (CUgraphExec, CUstream))                        \
    X(cuGraphExecDestroy, "cuGraphExecDestroy", 10000, NULL, (CUgraphExec))                        \
    X(cuGraphDestroy, "cuGraphDestroy", 10000, NULL, (CUgraph))                                    \
    X(cuIpcGetMemHandle, "cuIpcGetMemHandle", 4010, NULL, (CUipcMemHandle *, CUdeviceptr))         \
    X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2", 11000, NULL,                                    \
      (CUdeviceptr *, CUipcMemHandle, unsigned))                                                   \
    X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", 4010, NULL, (CUdeviceptr))                       \
    X(cuMemHostAlloc, "cuMemHostAlloc", 2020, NULL, (void **, size_t, unsigned))                   \
    X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", 3020, NULL,                       \
      (CUdeviceptr *, void *, unsigned))                                                           \
    X(cuMemFreeHost, "cuMemFreeHost", 2000, NULL, (void *))                                        \
    X(cuStreamIsCapturing, "cuStreamIsCapturing", 10000, NULL, (CUstream, int *))                  \
    X(cuCtxSynchronize, "cuCtxSynchronize", 2000, NULL, (void))

static struct {
#define DRIVER_FIELD(name, sym, since, older, params) CUresult(*name) params;
    DRIVER_MAP(DRIVER_FIELD)
#undef DRIVER_FIELD
} cu;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static acc_status_t open_status = ACC_ERR_NO_DEVICE;
static char open_error[512];

/* sym, else the older symbol of the same signature when there is one. */
static void *lookup(void *h, const char *sym, const char *older)
{
    void *f = dlsym(h, sym);
    return f || !older ? f : dlsym(h, older);
}

/* The message for a driver without a required entry point: what it has, what acc needs. */
static void missing(void *h, const char *sym, int since)
{
    CUresult (*get_version)(int *) = (CUresult(*)(int *))dlsym(h, "cuDriverGetVersion");
    int v = 0;
    char has[64] = "an unknown CUDA version";
    if (get_version && get_version(&v) == 0 && v > 0)
        snprintf(has, sizeof(has), "CUDA %d.%d", v / 1000, v % 1000 / 10);
    snprintf(open_error, sizeof(open_error),
             "the CUDA driver (%s) lacks %s, which drivers of CUDA %d.%d and newer have; acc "
             "needs a driver of CUDA 11.4 or newer (every driver NCCL 2.28 and later runs on)",
             has, sym, since / 1000, since % 1000 / 10);
}

static void open_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    CUresult r;
    if (!h) {
        snprintf(open_error, sizeof(open_error),
                 "no CUDA driver: dlopen(\"libcuda.so.1\") failed (%s); GPU work needs an NVIDIA "
                 "driver",
                 dlerror());
        return;
    }
#define DRIVER_LOAD(name, sym, since, older, params)                                               \
    if (!(*(void **)&cu.name = lookup(h, sym, older))) {                                           \
        missing(h, sym, since);                                                                    \
        return;                                                                                    \
    }
    DRIVER_MAP(DRIVER_LOAD)
#undef DRIVER_LOAD
    r = cu.cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE)
        snprintf(open_error, sizeof(open_error), "no CUDA GPU: the driver sees no device");
    else if (r == CUDA_ERROR_STUB_LIBRARY)
        snprintf(open_error, sizeof(open_error),
                 "no CUDA driver: libcuda.so.1 is the toolkit's stub library, not a driver");
    else if (r == CUDA_ERROR_INSUFFICIENT_DRIVER)
        snprintf(open_error, sizeof(open_error),
                 "the CUDA driver is older than the CUDA runtime it was asked for");
    else if (r != 0)
        snprintf(open_error, sizeof(open_error), "cuInit failed with CUDA error %d", r);
    else
        open_status = ACC_OK;
}

static acc_status_t driver(void)
{
    pthread_once(&once, open_driver);
    if (open_status != ACC_OK)
        return acc_error_set(ACC_ERR_NO_DEVICE, "%s", open_error);
    return ACC_OK;
}

/* A driver error as an acc error: what failed, the driver's name and text for the code. */
static acc_status_t fail(CUresult r, const char *what)
{
    const char *name = NULL, *text = NULL;
    cu.cuGetErrorName(r, &name);
    cu.cuGetErrorString(r, &text);
    return acc_error_set(ACC_ERR_CUDA, "%s failed: %s (%d): %s", what, name ? name : "?", r,
                         text ? text : "unknown error");
}

#define CALL(expr, what)                                                                           \
    do {                                                                                           \
        CUresult r_ = (expr);                                                                      \
        if (r_ != 0)                                                                               \
            return fail(r_, what);                                                                 \
    } while (0)

static CUdeviceptr dptr(const void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}

acc_status_t acc_cuda_init(int device)
{
    CUdevice dev;
    CUcontext ctx;
    int n = 0;
    acc_status_t st = driver();
    if (st != ACC_OK)
        return st;
    CALL(cu.cuDeviceGetCount(&n), "cuDeviceGetCount");
    if (device < 0 || device >= n)
        return acc_error_set(ACC_ERR_NO_DEVICE, "no CUDA device %d: the driver sees %d", device, n);
    CALL(cu.cuDeviceGet(&dev, device), "cuDeviceGet");
    /* The primary context is shared with the CUDA runtime and other libraries in the process,
     * and stays for the process's lifetime (never released here). */
    CALL(cu.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    CALL(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    return ACC_OK;
}

acc_status_t acc_cuda_info(int device, acc_cuda_info_t *out)
{
    CUdevice dev;
    int major = 0, minor = 0;
    size_t mem = 0;
    acc_status_t st = driver();
    memset(out, 0, sizeof(*out));
    if (st != ACC_OK)
        return st;
    CALL(cu.cuDeviceGet(&dev, device), "cuDeviceGet");
    CALL(cu.cuDeviceGetName(out->name, (int)sizeof(out->name), dev), "cuDeviceGetName");
    CALL(cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
         "cuDeviceGetAttribute");
    CALL(cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
         "cuDeviceGetAttribute");
    CALL(cu.cuDeviceGetAttribute(&out->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
         "cuDeviceGetAttribute");
    CALL(cu.cuDeviceTotalMem(&mem, dev), "cuDeviceTotalMem");
    CALL(cu.cuDriverGetVersion(&out->driver_version), "cuDriverGetVersion");
    out->sm = major * 10 + minor;
    out->mem_bytes = mem;
    return ACC_OK;
}

acc_status_t acc_cuda_malloc(size_t bytes, void **out)
{
    CUdeviceptr p = 0;
    acc_status_t st = driver();
    *out = NULL;
    if (st != ACC_OK)
        return st;
    CALL(cu.cuMemAlloc(&p, bytes ? bytes : 16), "cuMemAlloc");
    *out = (void *)(uintptr_t)p;
    return ACC_OK;
}

void acc_cuda_free(void *ptr)
{
    if (ptr && open_status == ACC_OK)
        cu.cuMemFree(dptr(ptr));
}

acc_status_t acc_cuda_memset(void *dst, int byte, size_t bytes)
{
    acc_status_t st = driver();
    if (st != ACC_OK)
        return st;
    CALL(cu.cuMemsetD8(dptr(dst), (unsigned char)byte, bytes), "cuMemsetD8");
    return ACC_OK;
}

acc_status_t acc_cuda_htod(void *dst, const void *src, size_t bytes)
{
    acc_status_t st = driver();
    if (st != ACC_OK)
        return st;
    CALL(cu.cuMemcpyHtoD(dptr(dst), src, bytes), "cuMemcpyHtoD");
    return ACC_OK;
}

acc_status_t acc_cuda_dtoh(void *dst, const void *src, size_t bytes)
{
    acc_status_t st = driver();
    if (st != ACC_OK)
        return st;
    CALL(cu.cuMemcpyDtoH(dst, dptr(src), bytes), "cuMemcpyDtoH");
    return ACC_OK;
}

acc_status_t acc_cuda_dtod_async(void *dst, const void *src, size_t bytes, acc_cuda_stream_t s)
{
    acc_status_t st = driver();
    if (st != ACC_OK)
        return st;
    CALL(cu.cuMemcpyDtoDAsync(dptr(dst), dptr(src), bytes, (CUstream)s), "cuMemcpyDtoDAsync");
    return ACC_OK;
}

acc_status_t acc_cuda_stream_create(acc_cuda_stream_t *out)
{
    CUstream s = NULL;
    acc_status_t st = driver();
    *out = NULL;
    if (st != ACC_OK)
        return st;
    CALL(cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    *out = (acc_cuda_stream_t)s;
    return ACC_OK;
}

void acc_cuda_stream_destroy(acc_cuda_stream_t s)
{
    if (s && open_status == ACC_OK)
        cu.cuStreamDestroy((CUstream)s);
}

acc_status_t acc_cuda_stream_sync(acc_cuda_stream_t s)
{
    acc_status_t st = driver();
    if (st != ACC_OK)
        return st;
    CALL(cu.cuStreamSynchronize((CUstream)s), "cuStreamSynchronize");
    return ACC_OK;
}

acc_status_t acc_cuda_event_create(acc_cuda_event_t *out)
{
    CUevent e = NULL;
    acc_status_t st = driver();
    *out = NULL;
    if (st != ACC_OK)
        return st;
    CALL(cu.cuEventCreate(&e, 0), "cuEventCreate");
    *out = (acc_cuda_event_t)e;
    return ACC_OK;
}

void acc_cuda_event_destroy(acc_cuda_event_t e)
{
    if (e && open_status == ACC_OK)
        cu.cuEventDestroy((CUevent)e);
}

acc_status_t acc_cuda_event_record(acc_cuda_event_t e, acc_cuda_stream_t s)
{
    acc_status_t st = driver();
    if (st != ACC_OK)
        return st;
    CALL(cu.cuEventRecord((CUevent)e, (CUstream)s), "cuEventRecord");
    return ACC_OK;
}

acc_status_t acc_cuda_event_ms(acc_cuda_event_t a, acc_cuda_event_t b, float *ms)
{
    acc_status_t st = driver();
    *ms = 0;
    if (st != ACC_OK)
        return st;
    CALL(cu.cuEventElapsedTime(ms, (CUevent)a, (CUevent)b), "cuEventElapsedTime");
    return ACC_OK;
}

struct acc_cuda_graph {
    CUgraph graph;
    CUgraphExec exec;
};

acc_status_t acc_cuda_capture_begin(acc_cuda_stream_t s)
{
    acc_status_t st = driver();
    if (st != ACC_OK)
        return st;
    if (!s)
        return acc_error_set(ACC_ERR_INVALID,
                             "graph capture needs a stream of its own, not the default stream");
    CALL(cu.cuStreamBeginCapture((CUstream)s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
         "cuStreamBeginCapture");
    return ACC_OK;
}

acc_status_t acc_cuda_capture_end(acc_cuda_stream_t s, acc_cuda_graph_t **out)
{
    acc_cuda_graph_t *g;
    CUresult r;
    acc_status_t st = driver();
    *out = NULL;
    if (st != ACC_OK)
        return st;
    if (!(g = acc_mem_calloc(1, sizeof(*g))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a CUDA graph");
    if ((r = cu.cuStreamEndCapture((CUstream)s, &g->graph)) != 0) {
        acc_mem_free(g);
        return fail(r, "cuStreamEndCapture");
    }
    if ((r = cu.cuGraphInstantiate(&g->exec, g->graph, 0)) != 0) {
        st = fail(r, "cuGraphInstantiate");
        cu.cuGraphDestroy(g->graph);
        acc_mem_free(g);
        return st;
    }
    *out = g;
    return ACC_OK;
}

acc_status_t acc_cuda_graph_launch(acc_cuda_graph_t *g, acc_cuda_stream_t s)
{
    acc_status_t st = driver();
    if (st != ACC_OK)
        return st;
    CALL(cu.cuGraphLaunch(g->exec, (CUstream)s), "cuGraphLaunch");
    return ACC_OK;
}

void acc_cuda_graph_destroy(acc_cuda_graph_t *g)
{
    if (!g)
        return;
    if (open_status == ACC_OK) {
        cu.cuGraphExecDestroy(g->exec);
        cu.cuGraphDestroy(g->graph);
    }
    acc_mem_free(g);
}

/* ---- internal: modules and launches (codegen_internal.h) -------------------------------- */

acc_status_t rt_cuda_module_load(const void *cubin, void **module)
{
    CUmodule m = NULL;
    acc_status_t st = driver();
    *module = NULL;
    if (st != ACC_OK)
        return st;
    CALL(cu.cuModuleLoadData(&m, cubin), "cuModuleLoadData");
    *module = m;
    return ACC_OK;
}

void rt_cuda_module_unload(void *module)
{
    if (module && open_status == ACC_OK)
        cu.cuModuleUnload((CUmodule)module);
}

acc_status_t rt_cuda_module_function(void *module, const char *name, void **fn)
{
    CUfunction f = NULL;
    *fn = NULL;
    CALL(cu.cuModuleGetFunction(&f, (CUmodule)module, name), "cuModuleGetFunction");
    *fn = f;
    return ACC_OK;
}

acc_status_t rt_cuda_occupancy(void *fn, int threads, int *blocks_per_sm)
{
    CALL(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, (CUfunction)fn, threads, 0),
         "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    return ACC_OK;
}

acc_status_t rt_cuda_launch(void *fn, unsigned gx, unsigned gy, unsigned threads, void **args,
                            acc_cuda_stream_t s)
{
    CALL(cu.cuLaunchKernel((CUfunction)fn, gx, gy, 1, threads, 1, 1, 0, (CUstream)s, args, NULL),
         "cuLaunchKernel");
    return ACC_OK;
}

/* ---- internal: what the cuda backend adds (gpu_exec.h) ----------------------------------- */

acc_status_t rt_cuda_ipc_get(void *dev_ptr, unsigned char handle[RT_CUDA_IPC_BYTES])
{
    CUipcMemHandle h;
    acc_status_t st = driver();
    if (st != ACC_OK)
        return st;
    CALL(cu.cuIpcGetMemHandle(&h, dptr(dev_ptr)), "cuIpcGetMemHandle");
    memcpy(handle, &h, RT_CUDA_IPC_BYTES);
    return ACC_OK;
}

acc_status_t rt_cuda_ipc_open(const unsigned char handle[RT_CUDA_IPC_BYTES], void **dev_ptr)
{
    CUipcMemHandle h;
    CUdeviceptr p = 0;
    acc_status_t st = driver();
    *dev_ptr = NULL;
    if (st != ACC_OK)
        return st;
    memcpy(&h, handle, RT_CUDA_IPC_BYTES);
    CALL(cu.cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), "cuIpcOpenMemHandle");
    *dev_ptr = (void *)(uintptr_t)p;
    return ACC_OK;
}

void rt_cuda_ipc_close(void *dev_ptr)
{
    if (dev_ptr && open_status == ACC_OK)
        cu.cuIpcCloseMemHandle(dptr(dev_ptr));
}

acc_status_t rt_cuda_host_alloc(size_t bytes, void **host, void **dev)
{
    CUdeviceptr d = 0;
    CUresult r;
    acc_status_t st = driver();
    *host = *dev = NULL;
    if (st != ACC_OK)
        return st;
    CALL(cu.cuMemHostAlloc(host, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP),
         "cuMemHostAlloc");
    if ((r = cu.cuMemHostGetDevicePointer(&d, *host, 0)) != 0) {
        cu.cuMemFreeHost(*host);
        *host = NULL;
        return fail(r, "cuMemHostGetDevicePointer");
    }
    memset(*host, 0, bytes);
    *dev = (void *)(uintptr_t)d;
    return ACC_OK;
}

void rt_cuda_host_free(void *host)
{
    if (host && open_status == ACC_OK)
        cu.cuMemFreeHost(host);
}

acc_status_t rt_cuda_capturing(acc_cuda_stream_t s, int *capturing)
{
    int status = CU_STREAM_CAPTURE_STATUS_NONE;
    acc_status_t st = driver();
    *capturing = 0;
    if (st != ACC_OK)
        return st;
    CALL(cu.cuStreamIsCapturing((CUstream)s, &status), "cuStreamIsCapturing");
    *capturing = status != CU_STREAM_CAPTURE_STATUS_NONE;
    return ACC_OK;
}

acc_status_t rt_cuda_device_count(int *n)
{
    acc_status_t st = driver();
    *n = 0;
    if (st != ACC_OK)
        return st;
    CALL(cu.cuDeviceGetCount(n), "cuDeviceGetCount");
    return ACC_OK;
}

acc_status_t rt_cuda_memset_async(void *dst, int byte, size_t bytes, acc_cuda_stream_t s)
{
    acc_status_t st = driver();
    if (st != ACC_OK)
        return st;
    CALL(cu.cuMemsetD8Async(dptr(dst), (unsigned char)byte, bytes, (CUstream)s), "cuMemsetD8Async");
    return ACC_OK;
}

acc_status_t rt_cuda_sync_all(void)
{
    acc_status_t st = driver();
    if (st != ACC_OK)
        return st;
    CALL(cu.cuCtxSynchronize(), "cuCtxSynchronize");
    return ACC_OK;
}
