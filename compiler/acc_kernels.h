/*
 * acc_kernels.h - CUDA kernels from plans: code generation, NVRTC compilation to CUBIN, the
 * kernel cache, a minimal CUDA driver layer opened at run time, and the single-GPU executor
 * that runs all ranks of a plan on one device.
 *
 * Conventions (errors, ownership, threads) as in acc_common.h, and:
 *
 * Building without CUDA.  Code generation and the cache's bookkeeping need nothing from CUDA.
 *   Compilation needs NVRTC at build time (ACC_HAVE_NVRTC, from the top-level ACC_WITH_CUDA);
 *   without it acc_nvrtc_compile() and everything that compiles return ACC_ERR_UNSUPPORTED
 *   saying so.
 * Running without a GPU.  The CUDA driver (libcuda.so.1) is opened with dlopen() the first time
 *   a GPU function is called, never at load time, so every binary starts on a machine without
 *   a driver or a GPU; the GPU functions then return ACC_ERR_NO_DEVICE with the reason (no
 *   driver, no device, driver too old).  NVRTC needs no GPU: CUBINs for any architecture it
 *   knows are built anywhere.
 * Threads.  NVRTC compilations may run concurrently.  A kernel cache, an executor and the CUDA
 *   objects below are used by one thread at a time; the driver layer itself is safe to use
 *   from any thread (it is opened once, under a lock).
 *
 * Kernels.  acc_kernel_generate() turns a verified plan, a data type and a reduction into one
 * CUDA C++ source file (a "kernel module") with one entry point, acc_kernel, that runs any set
 * of the plan's ranks: blockIdx.y is the rank, blockIdx.x the lane and the copy (below).  Ranks
 * whose programs differ only in peers, connections and chunk offsets form a class and share the
 * code of one device function; what differs between them comes from each rank's row of a
 * parameter table, what is the same stays a compile-time constant, and runs of identical
 * operations become loops.  So a 1024-rank ring is one class, not 1024.  Every lane of a rank
 * runs on `copies` thread blocks, copy k handling slice k of every chunk (slices of whole
 * 16-byte vectors, a function of the chunk's length only): the copies run the whole plan side
 * by side, each on its own positions of every buffer, with their own counters, so they never
 * wait for one another.  Connections are staging buffers of plan->slots messages with
 * sent/received counters; signal counters, dependency marks and message counters only grow
 * (each launch starts where the previous one ended, counted in device memory), so nothing is
 * ever reset between calls and a CUDA graph can replay a launch as often as it likes.  Data
 * moves in 16-byte vectors wherever all operands share an alignment; half types are summed in
 * fp32 and rounded once per operation, as the host executor does, so results match it bit for
 * bit.
 * Compilation.  The code every plan runs (the data mover, message passing, peer memory) is a
 * device library that depends only on the data type and reduction: it is compiled once per
 * type, reduction and architecture and linked (nvJitLink) with each plan's small part, so a
 * new plan costs a fraction of compiling the whole module.  The whole module, both parts in
 * one source, is what acc_kernel_source() gives and what the cache keys linked CUBINs by.
 */
#ifndef ACC_KERNELS_H
#define ACC_KERNELS_H

#include "acc_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- code generation ------------------------------------------------------------------- */

typedef struct acc_kernel acc_kernel_t;

/* Generate the module for a plan (which must have passed acc_plan_verify; structurally broken
 * plans are refused, never crash), a data type and a reduction.  Collectives that only move
 * data ignore `op` and depend on the element size only, so their half and bfloat16 modules
 * are the same source (and the same cache entry). */
acc_status_t acc_kernel_generate(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op,
                                 acc_kernel_t **out);
void acc_kernel_destroy(acc_kernel_t *k);
/* The CUDA C++ source (NUL-terminated; *len optional). */
const char *acc_kernel_source(const acc_kernel_t *k, size_t *len);
/* A file-name-safe name: "allreduce_ring_n8_float_sum". */
const char *acc_kernel_name(const acc_kernel_t *k);
/* The module in its two compilation units: the device library (the data mover and the
 * message-passing and peer-memory steps; its source depends only on the data type and
 * reduction, so every plan of one type shares it, and it is compiled once) and the plan's part
 * (its constants, entry points and lane programs).  Each compiles on its own as relocatable
 * code; linked, they are the whole module (acc_kcache_kernel).  The library's name:
 * "library_float_sum", "library_32bit". */
const char *acc_kernel_library_source(const acc_kernel_t *k);
const char *acc_kernel_library_name(const acc_kernel_t *k);
const char *acc_kernel_plan_source(const acc_kernel_t *k);
/* Rank classes (ranks whose lanes all run shared code), the class of one rank, and the lane
 * programs: the device functions of the module (lanes of one shape share one, across ranks
 * and lanes, so a ring of any size and lane count has one). */
int acc_kernel_classes(const acc_kernel_t *k);
int acc_kernel_class_of(const acc_kernel_t *k, int rank);
int acc_kernel_programs(const acc_kernel_t *k);

/* Bytes all ranks of the plan read and write in memory for one call of `count` elements:
 * every source operand read once, every destination and every message staged written once,
 * every message received read once (what a roofline of the single-GPU emulation counts). */
void acc_kernel_traffic(const acc_plan_t *plan, acc_dtype_t dt, uint64_t count, uint64_t *read,
                        uint64_t *written);

/* ---- NVRTC ------------------------------------------------------------------------------ */

/* 1 when acc was built with NVRTC. */
int acc_nvrtc_available(void);
acc_status_t acc_nvrtc_version(int *major, int *minor);
/* Is "sm_80", "sm_90", ... an architecture NVRTC can build a CUBIN for?  The error lists the
 * ones it can. */
acc_status_t acc_nvrtc_check_arch(const char *arch);
/* The options a compile uses (for cache keys), ending with arch's: whole programs, or
 * relocatable code for linking (ACC_NVRTC_RELOCATABLE). */
#define ACC_NVRTC_RELOCATABLE 1
const char *acc_nvrtc_options(int flags);
/* Compile source to a CUBIN for arch ("sm_90").  *cubin is taken (acc_free).  On failure the
 * message carries NVRTC's log (cut to what a message holds); *log, when given, receives the
 * whole log (taken; also on success, where it may hold warnings). */
acc_status_t acc_nvrtc_compile(const char *source, const char *name, const char *arch, void **cubin,
                               size_t *size, char **log);
/* The same with flags (0 or ACC_NVRTC_RELOCATABLE). */
acc_status_t acc_nvrtc_compile_ex(const char *source, const char *name, const char *arch, int flags,
                                  void **cubin, size_t *size, char **log);
/* Link n relocatable CUBINs for arch into one (nvJitLink, no GPU needed); *cubin taken.  name
 * names the result in errors. */
acc_status_t acc_nvrtc_link(const void *const *parts, const size_t *sizes, int n, const char *arch,
                            const char *name, void **cubin, size_t *size);
/* NVRTC compilations this process has run (the cache test counts them). */
uint64_t acc_nvrtc_compiles(void);

/* ---- the kernel cache ------------------------------------------------------------------- */

/* CUBINs by the SHA-256 of (source, options, architecture, NVRTC version), in memory and in a
 * directory (libraries and linked modules alike): <dir>/<key>.cubin, each file carrying its key and
 * a digest of its contents, so that a torn or foreign file is recompiled, never loaded.  The
 * directory must belong to the user and be writable by nobody else, since what it holds is run on
 * the GPU. */
typedef struct acc_kcache acc_kcache_t;

typedef struct {
    uint64_t mem_hits, disk_hits, disk_errors;
    uint64_t compiles; /* NVRTC compilations (whole programs, libraries and plans' parts) */
    uint64_t links;    /* modules linked from a library and a plan's part */
    double compile_ms; /* wall time spent in NVRTC and the linker */
} acc_kcache_stats_t;

/* dir: a directory (created if missing), "" for memory only, NULL for acc_cache_dir() (a
 * directory that cannot be used then means memory only, with a warning). */
acc_status_t acc_kcache_create(const char *dir, acc_kcache_t **out);
void acc_kcache_destroy(acc_kcache_t *c);
/* The CUBIN of a whole-program source for arch: from memory, else the directory, else NVRTC
 * (then stored in both).  *cubin is borrowed and lives as long as the cache. */
acc_status_t acc_kcache_cubin(acc_kcache_t *c, const char *source, const char *name,
                              const char *arch, const void **cubin, size_t *size);
/* The CUBIN of a kernel module for arch, keyed by the whole module's source: on a miss, its
 * device library comes from the cache (compiled once per type, reduction and architecture),
 * the plan's part is compiled, and the two are linked.  Borrowed as above. */
acc_status_t acc_kcache_kernel(acc_kcache_t *c, const acc_kernel_t *k, const char *arch,
                               const void **cubin, size_t *size);
void acc_kcache_stats(const acc_kcache_t *c, acc_kcache_stats_t *out);
/* The directory in use, or "" for memory only. */
const char *acc_kcache_dir(const acc_kcache_t *c);
/* The cache key of (source, arch) as 64 hex digits. */
acc_status_t acc_kcache_key(const char *source, const char *arch, char hex[ACC_SHA256_HEX_LEN + 1]);

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
#define ACC_GPU_MAX_RANKS 64

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
#endif /* ACC_KERNELS_H */
