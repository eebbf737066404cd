/*
 * gpu_exec.h - what the single-GPU executor shares with the driver layer and with the tests that
 * run its layout without a GPU.  Internal to runtime/.
 */
#ifndef ACC_GPU_EXEC_H
#define ACC_GPU_EXEC_H

#include "acc_runtime.h"

/* ---- the executor's pieces (gpu_exec.c) --------------------------------------------------- */

/* An executor laid out in host memory that loads no module: the arguments it builds drive a
 * module compiled as host C++ with a test shim (ACC_HOST_SHIM), each block a thread.  The
 * tests use it to run the very code and layout of the GPU path on machines without one. */
acc_status_t gx_create_host(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op,
                            uint64_t max_count, const acc_gpu_opts_t *opts, acc_gpu_exec_t **out);
/* The error a launch's status words describe (acc_kargs_t.status, nonzero first word), with
 * the executor's counters reset so that it can be used again. */
acc_status_t gx_failure(acc_gpu_exec_t *x, const uint32_t *status);
/* The arguments of one launch of acc_kernel (and of acc_avg, for AVG), and its grid:
 * *gx = lanes x copies blocks by *gy = ranks.  Buffers as in acc_gpu_exec_launch. */
acc_status_t gx_args(acc_gpu_exec_t *x, uint64_t count, void *const *in, void *const *out,
                     int inplace, acc_kargs_t *a, unsigned *gx, unsigned *gy);

/* ---- the driver, for the executor (cuda_driver.c) --------------------------------------- */

acc_status_t rt_cuda_module_load(const void *cubin, void **module);
void rt_cuda_module_unload(void *module);
acc_status_t rt_cuda_module_function(void *module, const char *name, void **fn);
acc_status_t rt_cuda_occupancy(void *fn, int threads, int *blocks_per_sm);
/* A grid of gx x gy blocks of `threads` threads; args as cuLaunchKernel's kernelParams. */
acc_status_t rt_cuda_launch(void *fn, unsigned gx, unsigned gy, unsigned threads, void **args,
                            acc_cuda_stream_t s);

/* ---- the layout both the single-GPU executor and the cuda backend use (gpu_exec.c) ----- */

/* The largest input or output chunk for count elements. */
uint64_t gx_max_chunk(const acc_plan_t *p, uint64_t count);
/* Bytes of the largest slice copy of `copies` takes of a chunk of cap elements. */
uint64_t gx_slice_bytes(size_t es, uint64_t cap, int copies);
/* Staging bytes of a connection: its slots in every copy, for any copy count up to kmax. */
uint64_t gx_stage_bytes(int slots, size_t es, const acc_kconn_t *c, uint64_t cap, int kmax);
/* Thread blocks per lane for a call of count elements. */
int gx_copies_for(uint64_t count, size_t es, int nlanes, int kmax);
/* The failure a launch's status words describe, in words (ACC_ERR_INTERNAL). */
acc_status_t gx_describe_failure(const acc_plan_t *p, const acc_kernel_t *k, const uint32_t *w,
                                 double timeout_s);

/* ---- more of the driver, for the cuda backend and the fusion engine (cuda_driver.c) ------- */
#define RT_CUDA_IPC_BYTES 64
acc_status_t rt_cuda_ipc_get(void *dev_ptr, unsigned char handle[RT_CUDA_IPC_BYTES]);
acc_status_t rt_cuda_ipc_open(const unsigned char handle[RT_CUDA_IPC_BYTES], void **dev_ptr);
void rt_cuda_ipc_close(void *dev_ptr);
/* Pinned host memory the device reads and writes: *host for the host, *dev for kernels. */
acc_status_t rt_cuda_host_alloc(size_t bytes, void **host, void **dev);
void rt_cuda_host_free(void *host);
acc_status_t rt_cuda_device_count(int *n);
/* Set bytes of device memory to byte, queued on s (the fusion engine's zeros). */
acc_status_t rt_cuda_memset_async(void *dst, int byte, size_t bytes, acc_cuda_stream_t s);
/* Wait for everything the current context has queued, on every stream. */
acc_status_t rt_cuda_sync_all(void);
/* Is s capturing into a graph now? */
acc_status_t rt_cuda_capturing(acc_cuda_stream_t s, int *capturing);

#endif
