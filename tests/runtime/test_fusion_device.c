/*
 * The fusion engine on the cuda backend.  Without a GPU: the source of its conversions compiles
 * with NVRTC for sm_80 and sm_90 with the entry points the engine looks up, and, built as host
 * C++ (the system's c++), rounds every fp16 and bf16 value and a sweep of fp32 values exactly as
 * the host executor does, so the two backends give the same bits; its control messages travel
 * on a host-backend duplicate even of a communicator whose own calls would not carry them.  On
 * a GPU (label gpu; every case there skips itself without one): two rank processes sharing
 * device 0 reduce gradients in device memory on 1 to 3 streams to what one allreduce per
 * tensor gives, bit for bit, and with fp16/bf16 compression to the host's rounding of every
 * step, bit for bit (two ranks: each element is one sum of two 16-bit values, rounded once);
 * a time-driven policy (rank 0 sends the bucket ranges), unmarked gradients and the caller's
 * own buffers the same way.
 */
#include "acc_fusion.h"
#include "comm_util.h"
#include "fusion_internal.h"
#include "fusion_util.h"
#include "ranks.h"

#include <dlfcn.h>

/* ---- without a GPU ---------------------------------------------------------------------- */

ACC_TEST(conversions_compile_with_nvrtc_for_sm_80_and_sm_90)
{
    static const char *const archs[] = {"sm_80", "sm_90"};
    if (!acc_nvrtc_available())
        ACC_SKIP("acc was built without NVRTC");
    for (size_t i = 0; i < 2; i++) {
        void *cubin = NULL;
        size_t size = 0;
        char *log = NULL;
        CHECK_OK(acc_nvrtc_compile(fu_device_source(), "acc_fusion_convert.cu", archs[i], &cubin,
                                   &size, &log));
        /* The names the engine asks the module for, as extern "C" leaves them (NUL included:
         * the whole symbol, not a prefix of a mangled one). */
        CHECK_MSG(memmem(cubin, size, "acc_fusion_narrow", 18) != NULL, "%s: no acc_fusion_narrow",
                  archs[i]);
        CHECK_MSG(memmem(cubin, size, "acc_fusion_widen", 17) != NULL, "%s: no acc_fusion_widen",
                  archs[i]);
        CHECK_MSG(!log || !strstr(log, "warning"), "%s: NVRTC warns: %s", archs[i], log);
        acc_mem_free(cubin);
        acc_mem_free(log);
    }
}

/* What CUDA defines that the source uses, for the host: one thread covers the grid, since the
 * kernels step through their elements by the grid's size. */
static const char host_shim[] =
    "#include <string.h>\n"
    "#define __device__\n#define __forceinline__ inline\n#define __global__\n"
    "struct acc_dim3 { unsigned x, y, z; };\n"
    "static const acc_dim3 threadIdx = {0, 0, 0}, blockIdx = {0, 0, 0};\n"
    "static const acc_dim3 gridDim = {1, 1, 1}, blockDim = {1, 1, 1};\n"
    "static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }\n"
    "static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; "
    "}\n";

typedef void (*narrow_fn)(uint16_t *dst, const float *src, uint64_t n, float scale, uint32_t bf16);
typedef void (*widen_fn)(float *dst, const uint16_t *src, uint64_t n, uint32_t bf16);

static void *build_on_host(void)
{
    const char *base = acc_test_tmp("fusion_convert_host");
    char src[600], lib[600], cmd[1400];
    void *h;
    FILE *f;

    CHECK_MSG(strlen(base) < 500, "scratch path too long: %s", base);
    snprintf(src, sizeof(src), "%.500s.cc", base);
    snprintf(lib, sizeof(lib), "%.500s.so", base);
    CHECK_MSG((f = fopen(src, "w")) != NULL, "cannot write %s", src);
    fputs(host_shim, f);
    fputs(fu_device_source(), f);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "c++ -std=c++17 -O1 -fPIC -shared -w -o '%s' '%s' 2>&1", lib, src);
    CHECK_MSG(system(cmd) == 0, "host build of the conversions failed (%s)", cmd);
    CHECK_MSG((h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) != NULL, "dlopen %s: %s", lib, dlerror());
    remove(lib);
    remove(src);
    return h;
}

/* fp32 values the narrowing is tried on: the whole range in steps, each with the fp16 and the
 * bf16 tie nearest it, and the edges (NaNs with payloads, signalling or not, infinities,
 * subnormals, the largest fp16 and the tie above it, the tie between 0 and fp16's smallest). */
static const uint32_t specials[] = {0x7f800001u, 0xff800001u, 0x7fc00000u, 0xffffffffu,
                                    0x7fbfffffu, 0x7f800000u, 0xff800000u, 0x00000001u,
                                    0x80000000u, 0x00000000u, 0x477fe000u, 0x477ff000u,
                                    0x33000000u, 0x33000001u, 0x387fc000u, 0xb87fe000u};
#define NSTEPS   (1u << 20)
#define NSPECIAL (sizeof(specials) / sizeof(specials[0]))
#define NSAMPLES (3 * NSTEPS + NSPECIAL)

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static void samples(float *x)
{
    for (uint32_t k = 0; k < NSTEPS; k++) {
        uint32_t u = k * 4099u, bits[3] = {u, (u & ~0x1fffu) | 0x1000u, (u & ~0xffffu) | 0x8000u};
        memcpy(&x[3 * k], bits, sizeof(bits));
    }
    memcpy(&x[3 * NSTEPS], specials, sizeof(specials));
}

ACC_TEST(conversions_round_as_the_host_executor)
{
    static const float scales[] = {1.0f, 0.5f, 1.0f / 3.0f};
    uint16_t *h = malloc(65536 * sizeof(uint16_t)), *got = malloc(NSAMPLES * sizeof(uint16_t));
    float *wide = malloc(65536 * sizeof(float)), *x = malloc(NSAMPLES * sizeof(float));
    narrow_fn narrow;
    widen_fn widen;
    void *lib;

    if (system("c++ --version > /dev/null 2>&1") != 0)
        ACC_SKIP("no host C++ compiler to build the conversions with");
    CHECK(h && got && wide && x);
    lib = build_on_host();
    *(void **)&narrow = dlsym(lib, "acc_fusion_narrow");
    *(void **)&widen = dlsym(lib, "acc_fusion_widen");
    CHECK(narrow && widen);
    for (uint32_t v = 0; v < 65536; v++)
        h[v] = (uint16_t)v;
    for (uint32_t bf16 = 0; bf16 < 2; bf16++) {
        widen(wide, h, 65536, bf16);
        for (uint32_t v = 0; v < 65536; v++) {
            float want = bf16 ? hx_bf16_to_float(h[v]) : hx_half_to_float(h[v]);
            CHECK_MSG(memcmp(&wide[v], &want, sizeof(float)) == 0,
                      "%s %04x widens to %08x, on the host to %08x", bf16 ? "bf16" : "fp16", v,
                      bits_of(wide[v]), bits_of(want));
        }
    }
    samples(x);
    for (size_t s = 0; s < sizeof(scales) / sizeof(scales[0]); s++)
        for (uint32_t bf16 = 0; bf16 < 2; bf16++) {
            narrow(got, x, NSAMPLES, scales[s], bf16);
            for (size_t i = 0; i < NSAMPLES; i++) {
                float v = x[i] * scales[s];
                uint16_t want = bf16 ? hx_float_to_bf16(v) : hx_float_to_half(v);
                CHECK_MSG(got[i] == want, "%08x x %g narrows to %s %04x, on the host to %04x",
                          bits_of(x[i]), (double)scales[s], bf16 ? "bf16" : "fp16", got[i], want);
            }
        }
    dlclose(lib);
    free(h);
    free(got);
    free(wide);
    free(x);
}

/* A communicator whose calls are handed back to the caller (as the drop-in NCCL's are) and its
 * host-backend duplicate, which the engine sends its decisions on: the duplicate carries them. */
static int host_duplicate(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_opts_t o;
    acc_comm_t *c = NULL, *ctl = NULL;
    int32_t v[2] = {rank + 10, 7};
    (void)arg;

    acc_comm_opts_init(&o);
    o.backend = ACC_BACKEND_HOST;
    o.external_fallback = 1;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, &o));
    CHECK_INT(rt_cuda_comm_device(c), -1);
    /* No tables: every call is the fallback's, which this communicator does not run. */
    CHECK_ERR(acc_broadcast(v, v, 2, ACC_DT_I32, 0, c, NULL), ACC_NO_DATA);
    CHECK_OK(comm_dup_host(c, &ctl));
    CHECK_INT(acc_comm_backend(ctl), ACC_BACKEND_HOST);
    CHECK_OK(acc_broadcast(v, v, 2, ACC_DT_I32, 0, ctl, NULL));
    CHECK_INT(v[0], 10);
    CHECK_INT(v[1], 7);
    CHECK_OK(acc_comm_destroy(ctl));
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(control_messages_on_a_host_duplicate)
{
    setenv("ACC_DB", "/nonexistent/acc.db", 1);
    setenv("ACC_TOPO", "gpus=2", 1);
    setenv("ACC_LOG_LEVEL", "error", 1);
    ranks_run(2, host_duplicate, NULL, 60);
}

/* ---- on a GPU: two ranks sharing device 0 ------------------------------------------------ */

#define NRANKS 2

/* Sizes around the fusion sizes, runs of small ones, and types compression leaves alone. */
static const struct {
    uint64_t count;
    acc_dtype_t dt;
} grads[] = {
    {1000, ACC_DT_F32},  {1, ACC_DT_F32},   {257, ACC_DT_F32}, {100, ACC_DT_F64},
    {65536, ACC_DT_F32}, {999, ACC_DT_F16}, {3, ACC_DT_F32},   {12, ACC_DT_I32},
    {70000, ACC_DT_F32}, {17, ACC_DT_F32},
};
#define NGRADS (sizeof(grads) / sizeof(grads[0]))

typedef struct {
    void *dev[NGRADS];  /* what the engine reduces */
    void *ref[NGRADS];  /* the reference's device buffers */
    void *host[NGRADS]; /* what the engine gave */
    void *want[NGRADS]; /* what it should have given */
} gpu_grads_t;

static size_t grad_bytes(size_t t)
{
    return (size_t)(grads[t].count * acc_dtype_size(grads[t].dt));
}

static void gpu_alloc(gpu_grads_t *g)
{
    for (size_t t = 0; t < NGRADS; t++) {
        CHECK_OK(acc_cuda_malloc(grad_bytes(t), &g->dev[t]));
        CHECK_OK(acc_cuda_malloc(grad_bytes(t), &g->ref[t]));
        CHECK((g->host[t] = malloc(grad_bytes(t))) && (g->want[t] = malloc(grad_bytes(t))));
    }
}

static void gpu_free(gpu_grads_t *g)
{
    for (size_t t = 0; t < NGRADS; t++) {
        acc_cuda_free(g->dev[t]);
        acc_cuda_free(g->ref[t]);
        free(g->host[t]);
        free(g->want[t]);
    }
}

/* Rank r's compressed fp32 element, widened: its value scaled by 1/ranks, rounded to 16 bits. */
static float sent(int bf16, uint32_t seed, int r, size_t t, uint64_t e)
{
    float v = (float)grad_value(0, seed, r, t, e) * (float)(1.0 / NRANKS);
    return bf16 ? hx_bf16_to_float(hx_float_to_bf16(v)) : hx_half_to_float(hx_float_to_half(v));
}

/* What a compressed fp32 element becomes: the two ranks' 16-bit values summed in fp32 (one
 * addition, which no order changes, signed zeros included) and rounded once, widened back. */
static float compressed(acc_compress_t comp, uint32_t seed, size_t t, uint64_t e)
{
    int bf16 = comp == ACC_COMPRESS_BF16;
    float sum = sent(bf16, seed, 0, t, e) + sent(bf16, seed, 1, t, e);
    return bf16 ? hx_bf16_to_float(hx_float_to_bf16(sum)) : hx_half_to_float(hx_float_to_half(sum));
}

/* This rank's inputs in g->dev, and in g->want what the engine must give: one allreduce per
 * tensor (the mean) of the same inputs, or for compressed fp32 tensors the host's rounding. */
static void gpu_reference(acc_comm_t *c, gpu_grads_t *g, acc_compress_t comp, uint32_t seed)
{
    int me = acc_comm_rank(c);
    for (size_t t = 0; t < NGRADS; t++) {
        grad_fill(g->host[t], grads[t].dt, grads[t].count, comp == ACC_COMPRESS_NONE, seed, me, t);
        CHECK_OK(acc_cuda_htod(g->dev[t], g->host[t], grad_bytes(t)));
        CHECK_OK(acc_cuda_htod(g->ref[t], g->host[t], grad_bytes(t)));
        CHECK_OK(acc_allreduce(g->ref[t], g->ref[t], (size_t)grads[t].count, grads[t].dt,
                               ACC_RED_AVG, c, NULL));
    }
    /* The engine reads the gradients on streams of its own: they must be there first. */
    CHECK_OK(acc_cuda_stream_sync(NULL));
    for (size_t t = 0; t < NGRADS; t++) {
        CHECK_OK(acc_cuda_dtoh(g->want[t], g->ref[t], grad_bytes(t)));
        for (uint64_t e = 0;
             comp != ACC_COMPRESS_NONE && grads[t].dt == ACC_DT_F32 && e < grads[t].count; e++)
            ((float *)g->want[t])[e] = compressed(comp, seed, t, e);
    }
}

static void gpu_compare(gpu_grads_t *g, const char *what)
{
    for (size_t t = 0; t < NGRADS; t++) {
        size_t es = acc_dtype_size(grads[t].dt), e = 0;
        CHECK_OK(acc_cuda_dtoh(g->host[t], g->dev[t], grad_bytes(t)));
        while (e < grads[t].count &&
               memcmp((char *)g->host[t] + e * es, (char *)g->want[t] + e * es, es) == 0)
            e++;
        CHECK_MSG(e == grads[t].count, "%s: gradient %zu (%s) differs first at element %zu", what,
                  t, acc_dtype_name(grads[t].dt), e);
    }
}

static acc_comm_t *gpu_join(int rank, int nranks, const acc_unique_id_t *id)
{
    acc_comm_opts_t o;
    acc_comm_t *c = NULL;
    acc_comm_opts_init(&o);
    o.device = 0; /* every rank on the one GPU; ACC_BACKEND says cuda */
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, &o));
    CHECK_INT(acc_comm_backend(c), ACC_BACKEND_CUDA);
    return c;
}

static int gpu_registered(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    static const struct {
        uint64_t fusion;
        int streams;
        acc_compress_t comp;
    } runs[] = {
        {1u << 10, 1, ACC_COMPRESS_NONE},  {64u << 10, 3, ACC_COMPRESS_NONE},
        {4u << 20, 2, ACC_COMPRESS_NONE},  {1u << 10, 2, ACC_COMPRESS_FP16},
        {64u << 10, 3, ACC_COMPRESS_FP16}, {4u << 20, 1, ACC_COMPRESS_BF16},
        {64u << 10, 2, ACC_COMPRESS_BF16},
    };
    acc_comm_t *c = gpu_join(rank, nranks, id);
    acc_fusion_t *f = NULL;
    acc_fusion_opts_t o;
    acc_tune_config_t cfg;
    gpu_grads_t g;
    uint32_t seed = 1;
    char what[160];
    (void)arg;

    gpu_alloc(&g);
    acc_fusion_opts_init(&o);
    acc_tune_config_acc(&cfg, runs[0].fusion, 1, ACC_TUNE_ALGO_AUTO);
    o.config = &cfg;
    CHECK_OK(acc_fusion_create(c, &o, &f));
    for (size_t t = 0; t < NGRADS; t++)
        CHECK_OK(acc_fusion_register(f, g.dev[t], (size_t)grads[t].count, grads[t].dt, NULL));
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        acc_tune_config_acc(&cfg, runs[i].fusion, runs[i].streams, ACC_TUNE_ALGO_AUTO);
        cfg.compress = runs[i].comp;
        CHECK_OK(acc_fusion_set_config(f, &cfg));
        snprintf(what, sizeof(what), "rank %d, fusion %llu, %d streams, %s", rank,
                 (unsigned long long)runs[i].fusion, runs[i].streams,
                 acc_compress_name(runs[i].comp));
        /* Twice, in both orders: what the first left behind must not pass for the second. */
        for (int backwards = 0; backwards < 2; backwards++) {
            gpu_reference(c, &g, cfg.compress, seed++);
            for (size_t k = 0; k < NGRADS; k++)
                CHECK_OK(acc_fusion_ready(f, (int)(backwards ? NGRADS - 1 - k : k)));
            CHECK_OK(acc_fusion_wait(f));
            gpu_compare(&g, what);
        }
    }
    /* Horovod's cycle: rank 0 sends each stream its bucket ranges (host memory, on the
     * stream's host-backend duplicate); compressed. */
    acc_tune_config_horovod(&cfg);
    cfg.fusion_bytes = 64u << 10;
    cfg.cycle_ms = 0.2;
    cfg.streams = 2;
    cfg.compress = ACC_COMPRESS_FP16;
    CHECK_OK(acc_fusion_set_config(f, &cfg));
    gpu_reference(c, &g, cfg.compress, seed);
    for (size_t t = 0; t < NGRADS; t++) {
        acc_sleep_until(acc_now_s() + 1e-4);
        CHECK_OK(acc_fusion_ready(f, (int)t));
    }
    CHECK_OK(acc_fusion_wait(f));
    snprintf(what, sizeof(what), "rank %d, Horovod's cycle, fp16", rank);
    gpu_compare(&g, what);
    /* Only gradient 0 marked: every other one is zero on every rank, and so is its mean. */
    gpu_reference(c, &g, cfg.compress, ++seed);
    for (size_t t = 1; t < NGRADS; t++)
        memset(g.want[t], 0, grad_bytes(t));
    CHECK_OK(acc_fusion_ready(f, 0));
    CHECK_OK(acc_fusion_wait(f));
    snprintf(what, sizeof(what), "rank %d, one gradient marked", rank);
    gpu_compare(&g, what);
    CHECK_OK(acc_fusion_destroy(f));
    gpu_free(&g);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

/* Buffers the caller fused itself, in device memory, with and without compression. */
static int gpu_callers_buffers(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c = gpu_join(rank, nranks, id);
    acc_fusion_t *f = NULL;
    acc_fusion_opts_t o;
    acc_tune_config_t cfg;
    gpu_grads_t g;
    char what[96];
    (void)arg;

    gpu_alloc(&g);
    acc_fusion_opts_init(&o);
    acc_tune_config_acc(&cfg, 25u << 20, 3, ACC_TUNE_ALGO_AUTO);
    o.config = &cfg;
    CHECK_OK(acc_fusion_create(c, &o, &f));
    for (int comp = 0; comp < ACC_COMPRESS_COUNT; comp++) {
        cfg.compress = (acc_compress_t)comp;
        CHECK_OK(acc_fusion_set_config(f, &cfg));
        gpu_reference(c, &g, cfg.compress, 40u + (uint32_t)comp);
        for (size_t t = 0; t < NGRADS; t++)
            CHECK_OK(acc_fusion_reduce(f, g.dev[t], (size_t)grads[t].count, grads[t].dt));
        CHECK_OK(acc_fusion_wait(f));
        snprintf(what, sizeof(what), "rank %d, the caller's buffers, %s", rank,
                 acc_compress_name(cfg.compress));
        gpu_compare(&g, what);
    }
    CHECK_OK(acc_fusion_destroy(f));
    gpu_free(&g);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

static void gpu_env(void)
{
    const char *spec = "gpus=2 nvlink=18", *db = acc_test_tmp("fusion_cuda2.db");
    ranks_skip_without_gpu();
    build_db(db, spec);
    setenv("ACC_TOPO", spec, 1);
    setenv("ACC_DB", db, 1);
    setenv("ACC_BACKEND", "cuda", 1);
    setenv("ACC_TIMEOUT_MS", "60000", 1);
    setenv("ACC_LOG_LEVEL", "error", 1);
    fusion_env_clear();
}

ACC_TEST_GPU(cuda_engine_as_one_allreduce_per_tensor)
{
    gpu_env();
    ranks_run(NRANKS, gpu_registered, NULL, 580);
}

ACC_TEST_GPU(cuda_engine_callers_buffers)
{
    gpu_env();
    ranks_run(NRANKS, gpu_callers_buffers, NULL, 580);
}
