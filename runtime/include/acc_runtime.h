/*
 * acc_runtime.h - running plans: the host executor (every rank a thread, real buffers: the
 * reference the kernels are checked against), the sequential reference and its checks, a
 * minimal CUDA driver layer opened at run time, and the single-GPU executor that runs all ranks
 * of a plan's kernel module on one device.
 *
 * Conventions (errors, ownership, threads) as in acc_common.h, and:
 *
 * Running without a GPU.  The CUDA driver (libcuda.so.1) is opened with dlopen() the first time
 *   a GPU function is called, never at load time, so every binary starts on a machine without
 *   a driver or a GPU; the GPU functions then return ACC_ERR_NO_DEVICE with the reason (no
 *   driver, no device, driver too old).
 * Threads.  An executor and the CUDA objects below are used by one thread at a time; the driver
 *   layer itself is safe to use from any thread (it is opened once, under a lock).  The host
 *   executor runs its own threads and returns when they have all finished.
 */
#ifndef ACC_RUNTIME_H
#define ACC_RUNTIME_H

#include "acc_kernels.h"
#include "acc_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the host executor ------------------------------------------------------------------ */

/* Run a plan with plan->nranks ranks as threads over real buffers.  in[r] / out[r] are rank r's
 * input and output buffers sized per acc_plan_buf_elems (ignored where the collective has none,
 * e.g. non-root inputs of broadcast); with inplace, in[] is ignored and the input is read from
 * out[] as described in acc_plan.h.  AVG divides the sum by nranks once, at the end.  The plan
 * must have passed acc_plan_verify. */
acc_status_t acc_host_exec(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op, uint64_t count,
                           void *const *in, void *const *out, int inplace);

/* ---- the sequential reference ---------------------------------------------------------- */
/* What tests and acc-bench compare results with. */
typedef enum {
    ACC_FILL_EXACT = 0, /* values whose reductions are exact in every type and order */
    ACC_FILL_RANDOM,    /* values in [-1, 1) (floats) or full-range (int32): rounding shows */
} acc_fill_t;

/* Element e of rank r's input in the deterministic pattern of (seed, mode, op), already
 * rounded to the type. */
long double acc_host_value(acc_dtype_t dt, acc_redop_t op, acc_fill_t mode, uint32_t seed, int rank,
                           uint64_t e);
/* Prepare the buffers of a call as acc_host_exec takes them: every rank's input filled with the
 * pattern, every byte of output that is not also input poisoned (0xA5), so that a result
 * left over from an earlier run cannot pass for a new one. */
void acc_host_prepare(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op, acc_fill_t mode,
                      uint32_t seed, uint64_t count, void *const *in, void *const *out,
                      int inplace);

/* Count the output elements of a call that differ from the postcondition computed sequentially
 * from the fill pattern by more than the documented bound (host_check.c).  out[r] as given to
 * acc_host_exec (with inplace, the aliasing buffer).  *worst receives the largest error seen
 * in units of the bound (0 when exact; > 1 means wrong); optional. */
uint64_t acc_host_check(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op, acc_fill_t mode,
                        uint32_t seed, uint64_t count, void *const *out, int inplace,
                        double *worst);

/* ---- the CUDA driver, opened at first use ----------------------------------------------- */

typedef struct acc_cuda_stream *acc_cuda_stream_t; /* NULL: the legacy default stream */
typedef struct acc_cuda_event *acc_cuda_event_t;
typedef struct acc_cuda_graph acc_cuda_graph_t;

typedef struct {
    char name[96];
    int sm;       /* 90 for compute capability 9.0 */
    int sm_count; /* multiprocessors */
    uint64_t mem_bytes;
    int driver_version; /* 13000 for CUDA 13.0 */
} acc_cuda_info_t;

/* Open the driver, initialise it and make device's primary context current on this thread.
 * ACC_ERR_NO_DEVICE when there is no usable GPU, saying why. */
acc_status_t acc_cuda_init(int device);
acc_status_t acc_cuda_info(int device, acc_cuda_info_t *out);
/* Device memory; pointers are device addresses, never dereferenced on the host. */
acc_status_t acc_cuda_malloc(size_t bytes, void **out);
void acc_cuda_free(void *ptr);
acc_status_t acc_cuda_memset(void *dst, int byte, size_t bytes);
acc_status_t acc_cuda_htod(void *dst, const void *src, size_t bytes);
acc_status_t acc_cuda_dtoh(void *dst, const void *src, size_t bytes);
acc_status_t acc_cuda_dtod_async(void *dst, const void *src, size_t bytes, acc_cuda_stream_t s);
acc_status_t acc_cuda_stream_create(acc_cuda_stream_t *out);
void acc_cuda_stream_destroy(acc_cuda_stream_t s);
acc_status_t acc_cuda_stream_sync(acc_cuda_stream_t s);
acc_status_t acc_cuda_event_create(acc_cuda_event_t *out);
void acc_cuda_event_destroy(acc_cuda_event_t e);
acc_status_t acc_cuda_event_record(acc_cuda_event_t e, acc_cuda_stream_t s);
/* Milliseconds from a to b, both recorded and complete. */
acc_status_t acc_cuda_event_ms(acc_cuda_event_t a, acc_cuda_event_t b, float *ms);
/* Record what is launched on s (which must not be the default stream) between begin and end
 * into an executable graph. */
acc_status_t acc_cuda_capture_begin(acc_cuda_stream_t s);
acc_status_t acc_cuda_capture_end(acc_cuda_stream_t s, acc_cuda_graph_t **out);
acc_status_t acc_cuda_graph_launch(acc_cuda_graph_t *g, acc_cuda_stream_t s);
void acc_cuda_graph_destroy(acc_cuda_graph_t *g);

/* ---- the single-GPU executor ------------------------------------------------------------ */

/* All ranks of a plan emulated on one GPU: each rank's buffers live on the device, one launch
 * holds every rank's thread blocks (which must all be resident at once; the executor checks
 * the occupancy and refuses plans that do not fit, rather than risk a hang), peer-memory
 * operations read and write the other ranks' buffers, and messages pass through staging
 * buffers per connection.  At most ACC_GPU_MAX_RANKS ranks. */
#define ACC_GPU_MAX_RANKS ACC_KARG_RANKS

typedef struct acc_gpu_exec acc_gpu_exec_t;

typedef struct {
    int device;          /* CUDA device ordinal */
    int copies;          /* thread blocks per lane; 0: chosen per call from the size */
    double timeout_s;    /* a wait inside a launch gives up (and is reported) after this;
                            0: 20 s; negative: never */
    acc_kcache_t *cache; /* borrowed; NULL: a memory cache of the executor's own */
} acc_gpu_opts_t;

/* Compile (through the cache), load and lay out everything for calls of up to max_count
 * elements.  opts may be NULL (all defaults). */
acc_status_t acc_gpu_exec_create(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op,
                                 uint64_t max_count, const acc_gpu_opts_t *opts,
                                 acc_gpu_exec_t **out);
void acc_gpu_exec_destroy(acc_gpu_exec_t *x);
/* Enqueue one call on stream s (captured into a graph when s is capturing).  in[r] and out[r]
 * are device buffers laid out as acc_host_exec takes host buffers (in place: out[r] only, the
 * larger of the two).  A failure inside the launch shows in acc_gpu_exec_check. */
acc_status_t acc_gpu_exec_launch(acc_gpu_exec_t *x, uint64_t count, void *const *in,
                                 void *const *out, int inplace, acc_cuda_stream_t s);
/* Wait for s and report the first failure of any launch since the last check (which wait
 * gave up, at which rank, lane and operation); a failure also resets the executor's counters
 * so that it can be used again. */
acc_status_t acc_gpu_exec_check(acc_gpu_exec_t *x, acc_cuda_stream_t s);
/* One synchronous call on host buffers, with acc_host_exec's arguments: copy in, launch,
 * check, copy out. */
acc_status_t acc_gpu_exec_host(acc_gpu_exec_t *x, uint64_t count, void *const *in, void *const *out,
                               int inplace);
/* The thread blocks per lane a call of count elements uses, and how many blocks the device
 * holds at once for this kernel. */
int acc_gpu_exec_copies(const acc_gpu_exec_t *x, uint64_t count);
int acc_gpu_exec_capacity(const acc_gpu_exec_t *x);
const acc_kernel_t *acc_gpu_exec_kernel(const acc_gpu_exec_t *x);

#ifdef __cplusplus
}
#endif
#endif /* ACC_RUNTIME_H */
