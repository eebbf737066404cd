/*
 * The fusion engine's memory on the cuda backend: the pack buffer and the streams' staging in
 * device memory of the communicator's GPU, copies and zeros queued on the engine's CUDA
 * streams (its queues), and the conversions of compression as two small kernels.
 *
 * The kernels are one source, generated here, compiled by NVRTC through the kernel cache for
 * the GPU's architecture the first time a configuration compresses, and loaded as a module of
 * the engine's.  They round exactly as the host executor does (host_reduce.c: to nearest, ties
 * to even, NaN kept a quiet NaN, subnormals kept), with the same integer arithmetic written
 * out, so that a job gives the same bits on either backend: CUDA's own conversions
 * (cuda_fp16.h) would need the toolkit's include path at run time, and the hardware's need not
 * keep a NaN's payload as the host's does.
 */
#include "fusion_internal.h"

#include "exec/gpu_exec.h"

#include <string.h>

struct fu_device {
    int device;    /* the communicator's GPU */
    char arch[16]; /* "sm_90" */
    void *module;  /* the conversions, once prepared */
    void *narrow;  /* fp32 -> fp16/bf16 */
    void *widen;   /* fp16/bf16 -> fp32 */
};

/* Threads per block of the conversions, and blocks at most: a grid-stride loop covers the
 * rest, and 1024 blocks of 256 threads fill every multiprocessor of the GPUs acc targets. */
#define CONVERT_THREADS 256
#define CONVERT_BLOCKS  1024

/* The kernels.  The narrowing multiplies by the scale before rounding, as the host does, but
 * leaves a NaN alone: a GPU returns its canonical NaN for NaN x scale where the host keeps the
 * operand, and the conversion keeps a NaN's payload. */
/* clang-format off */
static const char source[] =
    "/* acc's fusion engine: fp32 <-> fp16/bf16 for compression, rounded as acc's host\n"
    " * executor rounds (runtime/exec/host_reduce.c). */\n"
    "typedef unsigned short u16;\n"
    "typedef unsigned int u32;\n"
    "typedef unsigned long long u64;\n"
    "\n"
    "__device__ __forceinline__ u16 to_half(float f)\n"
    "{\n"
    "    u32 x = __float_as_uint(f), sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu;\n"
    "    u32 man = x & 0x7fffffu, h, rem, halfway;\n"
    "    int e = (int)exp - 127 + 15, shift;\n"
    "    if (exp == 0xffu) /* inf stays inf; NaN stays a quiet NaN */\n"
    "        return (u16)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));\n"
    "    if (e >= 31)\n"
    "        return (u16)(sign | 0x7c00u);\n"
    "    if (e <= 0) {\n"
    "        /* a subnormal result; below 2^-25 it rounds to zero */\n"
    "        if (e < -10)\n"
    "            return (u16)sign;\n"
    "        man |= 0x800000u;\n"
    "        shift = 14 - e;\n"
    "        h = man >> shift;\n"
    "        rem = man & ((1u << shift) - 1u);\n"
    "        halfway = 1u << (shift - 1);\n"
    "        if (rem > halfway || (rem == halfway && (h & 1u)))\n"
    "            h++;\n"
    "        return (u16)(sign | h);\n"
    "    }\n"
    "    h = ((u32)e << 10) | (man >> 13);\n"
    "    rem = man & 0x1fffu;\n"
    "    /* a carry out of the mantissa bumps the exponent, up to infinity */\n"
    "    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))\n"
    "        h++;\n"
    "    return (u16)(sign | h);\n"
    "}\n"
    "\n"
    "__device__ __forceinline__ u16 to_bf16(float f)\n"
    "{\n"
    "    u32 x = __float_as_uint(f);\n"
    "    if ((x & 0x7fffffffu) > 0x7f800000u)\n"
    "        return (u16)((x >> 16) | 0x40u);\n"
    "    x += 0x7fffu + ((x >> 16) & 1u);\n"
    "    return (u16)(x >> 16);\n"
    "}\n"
    "\n"
    "__device__ __forceinline__ float from_half(u16 v)\n"
    "{\n"
    "    u32 h = v, sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;\n"
    "    if (exp == 0x1fu)\n"
    "        return __uint_as_float(sign | 0x7f800000u | (man << 13));\n"
    "    if (exp == 0u) {\n"
    "        /* zero or subnormal: man x 2^-24 (0x33800000) is exact in fp32 */\n"
    "        float f = (float)man * __uint_as_float(0x33800000u);\n"
    "        return sign ? -f : f;\n"
    "    }\n"
    "    return __uint_as_float(sign | ((exp + 112u) << 23) | (man << 13));\n"
    "}\n"
    "\n"
    "__device__ __forceinline__ float from_bf16(u16 v)\n"
    "{\n"
    "    return __uint_as_float((u32)v << 16);\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void acc_fusion_narrow(u16 *dst, const float *src, u64 n, float scale,\n"
    "                                              u32 bf16)\n"
    "{\n"
    "    u64 step = (u64)gridDim.x * blockDim.x;\n"
    "    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {\n"
    "        float v = src[i];\n"
    "        if (v == v)\n"
    "            v *= scale;\n"
    "        dst[i] = bf16 ? to_bf16(v) : to_half(v);\n"
    "    }\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void acc_fusion_widen(float *dst, const u16 *src, u64 n, u32 bf16)\n"
    "{\n"
    "    u64 step = (u64)gridDim.x * blockDim.x;\n"
    "    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)\n"
    "        dst[i] = bf16 ? from_bf16(src[i]) : from_half(src[i]);\n"
    "}\n";
/* clang-format on */

const char *fu_device_source(void)
{
    return source;
}

static acc_status_t dev_open(acc_fusion_t *f)
{
    acc_cuda_info_t info;
    fu_device_t *d;
    acc_status_t st;

    if (!(d = acc_mem_calloc(1, sizeof(*d))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a fusion engine");
    f->dev = d;
    d->device = rt_cuda_comm_device(f->comm);
    if ((st = acc_cuda_init(d->device)) != ACC_OK ||
        (st = acc_cuda_info(d->device, &info)) != ACC_OK ||
        (st = acc_cuda_stream_create(&f->q)) != ACC_OK)
        return acc_error_prefix(st, "fusion engine on GPU %d: ", d->device);
    snprintf(d->arch, sizeof(d->arch), "sm_%d", info.sm);
    return ACC_OK;
}

static void dev_close(acc_fusion_t *f)
{
    if (!f->dev)
        return;
    acc_cuda_stream_destroy(f->q);
    f->q = NULL;
    rt_cuda_module_unload(f->dev->module);
    acc_mem_free(f->dev);
    f->dev = NULL;
}

/* Compile (through the kernel cache: once per machine) and load the conversions. */
static acc_status_t dev_prepare(acc_fusion_t *f)
{
    fu_device_t *d = f->dev;
    acc_kcache_t *cache = NULL;
    const void *cubin = NULL;
    size_t size = 0;
    acc_status_t st;

    if (d->module)
        return ACC_OK;
    if (!acc_nvrtc_available())
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "fusion engine: compression on the cuda backend converts with a "
                             "kernel NVRTC compiles, and acc was built without NVRTC; rebuild "
                             "with the CUDA toolkit (cmake -DACC_WITH_CUDA=ON) or compress none");
    if ((st = acc_kcache_create(NULL, &cache)) != ACC_OK ||
        (st = acc_kcache_cubin(cache, source, "acc_fusion_convert.cu", d->arch, &cubin, &size)) !=
            ACC_OK ||
        (st = rt_cuda_module_load(cubin, &d->module)) != ACC_OK)
        goto out;
    if ((st = rt_cuda_module_function(d->module, "acc_fusion_narrow", &d->narrow)) != ACC_OK ||
        (st = rt_cuda_module_function(d->module, "acc_fusion_widen", &d->widen)) != ACC_OK) {
        rt_cuda_module_unload(d->module);
        d->module = d->narrow = d->widen = NULL;
    }
out:
    /* The driver keeps its own copy of a loaded module's image. */
    acc_kcache_destroy(cache);
    if (st != ACC_OK)
        acc_error_prefix(st, "fusion engine: the conversions of compression for %s: ", d->arch);
    return st;
}

static acc_status_t dev_enter(const acc_fusion_t *f)
{
    acc_status_t st = acc_cuda_init(f->dev->device);
    return st == ACC_OK ? ACC_OK
                        : acc_error_prefix(st, "fusion engine on GPU %d: ", f->dev->device);
}

/* Zeroed, as the host's.  The memset is queued on the legacy default stream, which the
 * engine's queues (non-blocking streams) do not wait for: it is waited for here. */
static acc_status_t dev_alloc(size_t bytes, void **out)
{
    acc_status_t st;
    if ((st = acc_cuda_malloc(bytes, out)) != ACC_OK)
        return st;
    if (bytes == 0 || ((st = rt_cuda_memset_async(*out, 0, bytes, NULL)) == ACC_OK &&
                       (st = acc_cuda_stream_sync(NULL)) == ACC_OK))
        return ACC_OK;
    acc_cuda_free(*out);
    *out = NULL;
    return st;
}

static acc_status_t dev_zero(void *dst, size_t bytes, acc_cuda_stream_t q)
{
    return bytes ? rt_cuda_memset_async(dst, 0, bytes, q) : ACC_OK;
}

/* n elements through a conversion kernel (narrow: with scale and its float argument). */
static acc_status_t launch(void *fn, void *dst, const void *src, uint64_t n, float *scale,
                           uint32_t bf16, acc_cuda_stream_t q)
{
    void *narrow_args[] = {&dst, &src, &n, scale, &bf16};
    void *widen_args[] = {&dst, &src, &n, &bf16};
    uint64_t blocks = (n + CONVERT_THREADS - 1) / CONVERT_THREADS;
    return rt_cuda_launch(fn, (unsigned)(blocks < CONVERT_BLOCKS ? blocks : CONVERT_BLOCKS), 1,
                          CONVERT_THREADS, scale ? narrow_args : widen_args, q);
}

static acc_status_t dev_convert(const acc_fusion_t *f, void *dst, acc_dtype_t to, const void *src,
                                acc_dtype_t from, uint64_t n, double scale, acc_cuda_stream_t q)
{
    const fu_device_t *d = f->dev;
    int half_to = to == ACC_DT_F16 || to == ACC_DT_BF16;
    int half_from = from == ACC_DT_F16 || from == ACC_DT_BF16;
    float k = (float)scale;

    if (n == 0)
        return ACC_OK;
    if (to == from && scale == 1.0)
        return acc_cuda_dtod_async(dst, src, (size_t)(n * acc_dtype_size(to)), q);
    if (!((from == ACC_DT_F32 && half_to) || (half_from && to == ACC_DT_F32 && scale == 1.0)))
        return acc_error_set(ACC_ERR_INTERNAL,
                             "fusion engine: no conversion from %s to %s with scale %g on the GPU",
                             acc_dtype_name(from), acc_dtype_name(to), scale);
    if (!d->module)
        return acc_error_set(ACC_ERR_INTERNAL,
                             "fusion engine: a conversion before the conversions were prepared");
    if (from == ACC_DT_F32)
        return launch(d->narrow, dst, src, n, &k, to == ACC_DT_BF16, q);
    return launch(d->widen, dst, src, n, NULL, from == ACC_DT_BF16, q);
}

const fu_mem_t fu_device_mem = {
    .open = dev_open,
    .close = dev_close,
    .prepare = dev_prepare,
    .enter = dev_enter,
    .queue_create = acc_cuda_stream_create,
    .queue_destroy = acc_cuda_stream_destroy,
    .alloc = dev_alloc,
    .free = acc_cuda_free,
    .zero = dev_zero,
    .convert = dev_convert,
    .sync = acc_cuda_stream_sync,
};
