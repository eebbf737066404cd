/*
 * kernel_emu.h - run generated kernel modules without a GPU: the module's source is compiled
 * as host C++ (the system's c++) behind a shim that defines what CUDA would (qualifiers,
 * uint4, thread and block indices, __syncthreads as a barrier of the block's threads, the
 * block's shared variables, atomics, release/acquire as C++ atomics, LL lines as two 8-byte
 * atomic halves), every CUDA thread becomes a host thread (blockDim.x of them per block, 1 or
 * a few instead of up to 512), and the executor's own layout and launch arguments
 * (gx_create_host / gx_args) drive it in host memory.  So the generated code, the parameter
 * rows, the staging and counter layout, the inter-block protocols (Simple and LL) and the
 * barriers within a block run for real; emu_compare checks a module against the host executor.
 * Header-only, for tests.
 */
#ifndef KERNEL_EMU_H
#define KERNEL_EMU_H

#include "acc_compiler.h"
#include "acc_kernels.h"
#include "acc_test.h"
#include "gpu_exec.h"
#include "host_reduce.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

static const char emu_head[] =
    "#define ACC_HOST_SHIM 1\n"
    "#include <pthread.h>\n#include <sched.h>\n#include <string.h>\n#include <time.h>\n"
    "#define __device__\n#define __forceinline__ inline\n"
    "#define __noinline__ __attribute__((noinline))\n#define __global__\n"
    "#define __launch_bounds__(...)\n#define __grid_constant__\n"
    "#define __shared__ static thread_local\n"
    "struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };\n"
    "struct acc_dim3 { unsigned x, y, z; };\n"
    "static thread_local acc_dim3 threadIdx, blockIdx, gridDim, blockDim;\n"
    /* A block: its threads' barrier and its shared variables (sh_epoch, sh_abort). */
    "struct acc_shim_block { pthread_barrier_t bar; unsigned shared[8]; };\n"
    "static thread_local acc_shim_block *acc_shim_blk;\n"
    "static inline void __syncthreads() { pthread_barrier_wait(&acc_shim_blk->bar); }\n"
    "#define ACC_BLOCK_SHARED(type, name)"
    " type &name = *(type *)&acc_shim_blk->shared[(#name)[3] == 'e' ? 0 : 4]\n"
    "static inline unsigned atomicCAS(unsigned *p, unsigned c, unsigned v)\n"
    "{ __atomic_compare_exchange_n(p, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);"
    " return c; }\n"
    "static inline unsigned atomicExch(unsigned *p, unsigned v)\n"
    "{ return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }\n"
    "static inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }\n"
    "static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }\n"
    "static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }\n"
    /* Every poll yields: dozens of spinning blocks share two cores.  The scope of a release or
     * an acquire is the GPU's business: every host thread sees one memory. */
    "static inline unsigned acc_ld_acquire(const unsigned *p, int)\n"
    "{ sched_yield(); return __atomic_load_n(p, __ATOMIC_ACQUIRE); }\n"
    "static inline void acc_st_release(unsigned *p, unsigned v, int)\n"
    "{ __atomic_store_n(p, v, __ATOMIC_RELEASE); }\n"
    "static inline void acc_add_release(unsigned *p, unsigned v, int)\n"
    "{ __atomic_fetch_add(p, v, __ATOMIC_RELEASE); }\n"
    /* LL lines as the GPU writes them: each 8-byte half {data, flag} whole, in no particular
     * order and with no ordering against anything else (relaxed), the halves in the layout
     * of the GPU's {data, flag, data, flag}. */
    "static inline void acc_ll_store(unsigned char *p, unsigned long long v, unsigned flag)\n"
    "{ unsigned long long *w = (unsigned long long *)p, f = (unsigned long long)flag << 32;\n"
    "  __atomic_store_n(w + 1, (v >> 32) | f, __ATOMIC_RELAXED);\n"
    "  __atomic_store_n(w, (v & 0xffffffffull) | f, __ATOMIC_RELAXED); }\n"
    "static inline int acc_ll_load(const unsigned char *p, unsigned flag, unsigned long long *v,\n"
    "                              unsigned *seen)\n"
    "{ const unsigned long long *w = (const unsigned long long *)p;\n"
    "  unsigned long long a = __atomic_load_n(w, __ATOMIC_RELAXED);\n"
    "  unsigned long long b = __atomic_load_n(w + 1, __ATOMIC_RELAXED);\n"
    "  *v = (a & 0xffffffffull) | b << 32;\n"
    "  *seen = (unsigned)(a >> 32) != flag ? (unsigned)(a >> 32) : (unsigned)(b >> 32);\n"
    "  if ((unsigned)(a >> 32) == flag && (unsigned)(b >> 32) == flag) return 1;\n"
    "  sched_yield(); return 0; }\n"
    "static inline unsigned long long acc_now()\n"
    "{ timespec t; clock_gettime(CLOCK_MONOTONIC, &t);"
    " return (unsigned long long)t.tv_sec * 1000000000ull + t.tv_nsec; }\n"
    /* IEEE binary16 conversions, round to nearest even (what cvt.rn.f16.f32 does). */
    "static inline float acc_shim_half_to_float(unsigned short h)\n"
    "{ unsigned s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, x; float f;\n"
    "  if (e == 0x1f) x = s | 0x7f800000u | (m << 13);\n"
    "  else if (e == 0) { f = (float)m * (1.0f / 16777216.0f); return s ? -f : f; }\n"
    "  else x = s | ((e + 112) << 23) | (m << 13);\n"
    "  memcpy(&f, &x, 4); return f; }\n"
    "static inline unsigned short acc_shim_float_to_half(float f)\n"
    "{ unsigned x, s, e, m, h, rem, half; int ex, sh; memcpy(&x, &f, 4);\n"
    "  s = (x >> 16) & 0x8000; e = (x >> 23) & 0xff; m = x & 0x7fffff;\n"
    "  if (e == 0xff) return (unsigned short)(s | 0x7c00 | (m ? 0x200 | (m >> 13) : 0));\n"
    "  ex = (int)e - 112; if (ex >= 31) return (unsigned short)(s | 0x7c00);\n"
    "  if (ex <= 0) { if (ex < -10) return (unsigned short)s; m |= 0x800000; sh = 14 - ex;\n"
    "    h = m >> sh; rem = m & ((1u << sh) - 1); half = 1u << (sh - 1);\n"
    "    if (rem > half || (rem == half && (h & 1))) h++; return (unsigned short)(s | h); }\n"
    "  h = ((unsigned)ex << 10) | (m >> 13); rem = m & 0x1fff;\n"
    "  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++; return (unsigned short)(s | h); }\n";

static const char emu_tail[] =
    "\nextern \"C\" void *acc_emu_block_new(unsigned threads)\n"
    "{\n"
    "    acc_shim_block *b = new acc_shim_block();\n"
    "    pthread_barrier_init(&b->bar, 0, threads);\n"
    "    return b;\n"
    "}\n"
    "extern \"C\" void acc_emu_block_free(void *b)\n"
    "{\n"
    "    pthread_barrier_destroy(&((acc_shim_block *)b)->bar);\n"
    "    delete (acc_shim_block *)b;\n"
    "}\n"
    "extern \"C\" void acc_emu_thread(const void *args, void *block, unsigned threads,\n"
    "                               unsigned tid, unsigned bx, unsigned by, unsigned gx,\n"
    "                               unsigned gy, int avg)\n"
    "{\n"
    "    acc_shim_blk = (acc_shim_block *)block;\n"
    "    threadIdx = {tid, 0, 0};\n    blockIdx = {bx, by, 0};\n    gridDim = {gx, gy, 1};\n"
    "    blockDim = {threads, 1, 1};\n"
    "#if ACC_AVG\n    if (avg) { acc_avg(*(const acc_args_t *)args); return; }\n#endif\n"
    "    acc_kernel(*(const acc_args_t *)args);\n"
    "}\n";

typedef void *(*emu_block_new_fn)(unsigned threads);
typedef void (*emu_block_free_fn)(void *block);
typedef void (*emu_thread_fn)(const void *args, void *block, unsigned threads, unsigned tid,
                              unsigned bx, unsigned by, unsigned gx, unsigned gy, int avg);

typedef struct {
    void *lib;
    unsigned threads; /* CUDA threads per block */
    emu_block_new_fn block_new;
    emu_block_free_fn block_free;
    emu_thread_fn thread;
} emu_t;

/* Is there a host C++ compiler to build modules with? */
static inline int emu_available(void)
{
    return system("c++ --version > /dev/null 2>&1") == 0;
}

/* Compile k's source for the host, with `threads` CUDA threads per block, and load it. */
static inline void emu_build(emu_t *e, const acc_kernel_t *k, const char *tag, unsigned threads)
{
    char src[600], lib[600], cmd[1400];
    const char *text = acc_kernel_source(k, NULL), *at;
    FILE *f;

    const char *base = acc_test_tmp(tag);
    CHECK_MSG(strlen(base) < 500, "scratch path too long: %s", base);
    snprintf(src, sizeof(src), "%.500s.cc", base);
    snprintf(lib, sizeof(lib), "%.500s.so", base);
    f = fopen(src, "w");
    CHECK_MSG(f != NULL, "cannot write %s", src);
    fputs(emu_head, f);
    /* A few threads per block instead of 512: as many host threads as CUDA threads. */
    at = strstr(text, "#define ACC_THREADS 512\n");
    CHECK_MSG(at != NULL, "the module does not define ACC_THREADS 512");
    fwrite(text, 1, (size_t)(at - text), f);
    fprintf(f, "#define ACC_THREADS %u\n", threads);
    fputs(at + strlen("#define ACC_THREADS 512\n"), f);
    fputs(emu_tail, f);
    fclose(f);
    snprintf(cmd, sizeof(cmd),
             "c++ -std=c++17 -O1 -fno-strict-aliasing -fPIC -shared -w -o '%s' '%s' 2>&1", lib,
             src);
    CHECK_MSG(system(cmd) == 0, "host build of %s failed (%s)", acc_kernel_name(k), cmd);
    e->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(e->lib != NULL, "dlopen %s: %s", lib, dlerror());
    *(void **)&e->block_new = dlsym(e->lib, "acc_emu_block_new");
    *(void **)&e->block_free = dlsym(e->lib, "acc_emu_block_free");
    *(void **)&e->thread = dlsym(e->lib, "acc_emu_thread");
    CHECK(e->block_new && e->block_free && e->thread);
    e->threads = threads;
    remove(lib);
    remove(src);
}

static inline void emu_free(emu_t *e)
{
    if (e->lib)
        dlclose(e->lib);
    e->lib = NULL;
}

typedef struct {
    const emu_t *e;
    const acc_kargs_t *a;
    void *block;
    unsigned tid, bx, by, gx, gy;
    int avg;
} emu_job_t;

static inline void *emu_thread(void *arg)
{
    emu_job_t *j = arg;
    j->e->thread(j->a, j->block, j->e->threads, j->tid, j->bx, j->by, j->gx, j->gy, j->avg);
    return NULL;
}

/* Run every thread of every block of the grid at once, each on a host thread of its own. */
static inline void emu_grid(const emu_t *e, const acc_kargs_t *a, unsigned gx, unsigned gy, int avg)
{
    size_t nb = (size_t)gx * gy, n = nb * e->threads, i;
    pthread_t *t = calloc(n, sizeof(pthread_t));
    emu_job_t *jobs = calloc(n, sizeof(emu_job_t));
    void **blocks = calloc(nb, sizeof(void *));
    pthread_attr_t attr;
    CHECK(t && jobs && blocks);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (i = 0; i < nb; i++)
        CHECK((blocks[i] = e->block_new(e->threads)) != NULL);
    for (i = 0; i < n; i++) {
        size_t b = i / e->threads;
        jobs[i] = (emu_job_t){
            e,  a,  blocks[b], (unsigned)(i % e->threads), (unsigned)(b % gx), (unsigned)(b / gx),
            gx, gy, avg};
        CHECK(pthread_create(&t[i], &attr, emu_thread, &jobs[i]) == 0);
    }
    for (i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    for (i = 0; i < nb; i++)
        e->block_free(blocks[i]);
    pthread_attr_destroy(&attr);
    free(t);
    free(jobs);
    free(blocks);
}

/* One call through the emulated kernel, with acc_host_exec's arguments (host buffers are
 * the "device" buffers here).  Fails the test with the kernel's own report if a wait gave
 * up. */
static inline void emu_call(const emu_t *e, acc_gpu_exec_t *x, uint64_t count, void *const *in,
                            void *const *out, int inplace)
{
    acc_kargs_t a;
    unsigned gx, gy;
    const uint32_t *status;

    CHECK_OK(gx_args(x, count, in, out, inplace, &a, &gx, &gy));
    status = (const uint32_t *)(uintptr_t)a.status;
    emu_grid(e, &a, gx, gy, 0);
    CHECK_MSG(status[0] == 0,
              "emulated kernel gave up: kind %u at rank %u lane %u copy %u op %u (index %u, "
              "wanted %u, saw %u)",
              status[0], status[1], status[2], status[3], status[4], status[5], status[6],
              status[7]);
    if (acc_gpu_exec_kernel(x)->op == ACC_RED_AVG && acc_gpu_exec_kernel(x)->reduces)
        emu_grid(e, &a, 1, gy, 1);
}

/* ---- comparing with the host executor ---------------------------------------------------- */

/* Which output elements the postcondition defines: [*first, *first + *n) of out[r]. */
static inline int defined_out(const acc_plan_t *p, int r, uint64_t count, int inplace,
                              uint64_t *first, uint64_t *n)
{
    *first = 0;
    *n = acc_plan_buf_elems(p, ACC_BUF_OUT, count);
    if (p->coll == ACC_COLL_REDUCE && r != p->root)
        return 0;
    if (inplace && p->coll == ACC_COLL_REDUCE_SCATTER)
        *first = (uint64_t)r * count;
    return 1;
}

typedef struct {
    void **in, **out;
} bufs_t;

static inline void bufs_alloc(bufs_t *b, const acc_plan_t *p, size_t bytes)
{
    int r;
    b->in = calloc((size_t)p->nranks, sizeof(void *));
    b->out = calloc((size_t)p->nranks, sizeof(void *));
    CHECK(b->in && b->out);
    for (r = 0; r < p->nranks; r++) {
        b->in[r] = calloc(1, bytes + 16);
        b->out[r] = calloc(1, bytes + 16);
        CHECK(b->in[r] && b->out[r]);
    }
}

static inline void bufs_free(bufs_t *b, const acc_plan_t *p)
{
    int r;
    for (r = 0; r < p->nranks; r++) {
        free(b->in[r]);
        free(b->out[r]);
    }
    free(b->in);
    free(b->out);
}

/* Run p through the emulated module (copies blocks per lane of `threads` threads) and the
 * host executor on the same inputs, and compare every defined output byte. */
static inline void emu_compare(const acc_plan_t *p, acc_dtype_t dt, acc_redop_t op, int copies,
                               unsigned threads, const char *label)
{
    static const uint64_t counts[] = {1, 13, 1000, 4099};
    const uint64_t max_count = 4099;
    size_t es = acc_dtype_size(dt), big;
    acc_kernel_t *k = NULL;
    acc_gpu_exec_t *x = NULL;
    acc_gpu_opts_t o;
    bufs_t h, g;
    emu_t e = {0};
    size_t c;
    int mode, r;

    big = (size_t)(acc_plan_buf_elems(p, ACC_BUF_IN, max_count) >
                           acc_plan_buf_elems(p, ACC_BUF_OUT, max_count)
                       ? acc_plan_buf_elems(p, ACC_BUF_IN, max_count)
                       : acc_plan_buf_elems(p, ACC_BUF_OUT, max_count)) *
          es;
    CHECK_MSG(acc_kernel_generate(p, dt, op, &k) == ACC_OK, "%s: %s", label, acc_error_message());
    emu_build(&e, k, acc_kernel_name(k), threads);
    memset(&o, 0, sizeof(o));
    o.copies = copies;
    CHECK_OK(gx_create_host(p, dt, op, max_count, &o, &x));
    bufs_alloc(&h, p, big);
    bufs_alloc(&g, p, big);
    for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        for (mode = 0; mode <= p->inplace; mode++) {
            uint32_t seed = (uint32_t)(c * 7 + (size_t)mode);
            acc_host_prepare(p, dt, op, ACC_FILL_RANDOM, seed, counts[c], h.in, h.out, mode);
            acc_host_prepare(p, dt, op, ACC_FILL_RANDOM, seed, counts[c], g.in, g.out, mode);
            CHECK_MSG(acc_host_exec(p, dt, op, counts[c], h.in, h.out, mode) == ACC_OK, "%s: %s",
                      label, acc_error_message());
            emu_call(&e, x, counts[c], g.in, g.out, mode);
            for (r = 0; r < p->nranks; r++) {
                uint64_t first, n, i;
                const unsigned char *a, *b;
                if (!defined_out(p, r, counts[c], mode, &first, &n))
                    continue;
                a = (const unsigned char *)h.out[r] + first * es;
                b = (const unsigned char *)g.out[r] + first * es;
                if (memcmp(a, b, n * es) == 0)
                    continue;
                for (i = 0; i < n && memcmp(a + i * es, b + i * es, es) == 0; i++)
                    ;
                acc_test_fail(__FILE__, __LINE__,
                              "%s %s %s, %d blocks per lane of %u threads, count %llu%s: rank %d "
                              "element %llu is %Lg, the host executor has %Lg",
                              label, acc_dtype_name(dt), acc_redop_name(op), copies, threads,
                              (unsigned long long)counts[c], mode ? " in place" : "", r,
                              (unsigned long long)(first + i),
                              hx_load(dt, g.out[r], (size_t)(first + i)),
                              hx_load(dt, h.out[r], (size_t)(first + i)));
            }
        }
    }
    bufs_free(&h, p);
    bufs_free(&g, p);
    acc_gpu_exec_destroy(x);
    emu_free(&e);
    acc_kernel_destroy(k);
}

/* fn(plan, label) for every algorithm of coll that applies to topo with default arguments and
 * has a kernel with protocol proto, but the one named `only` when it is given (and then that
 * one alone when `alone`); returns how many.  Skips the case without a host C++ compiler. */
static inline int emu_algorithms(const char *topo, acc_coll_t coll, acc_proto_t proto,
                                 void (*fn)(const acc_plan_t *p, const char *label),
                                 const char *name, int alone)
{
    acc_topo_t *t = NULL;
    size_t n, i;
    const acc_algo_t *const *list = acc_algo_list(&n);
    acc_algo_args_t args;
    char label[160];
    int ran = 0;

    if (!emu_available())
        ACC_SKIP("no host C++ compiler (c++) to build emulated kernels with");
    CHECK_OK(acc_topo_load(topo, &t));
    memset(&args, 0, sizeof(args));
    args.proto = proto;
    for (i = 0; i < n; i++) {
        acc_plan_t *p = NULL;
        if (list[i]->coll != coll || list[i]->supports(t, NULL) != ACC_OK ||
            (name && (strcmp(list[i]->name, name) == 0) != alone))
            continue;
        CHECK_OK(acc_algo_generate(list[i], t, &args, &p));
        if (acc_kernel_supports(p, proto) == ACC_OK) {
            snprintf(label, sizeof(label), "%s%s %s on %s", proto == ACC_PROTO_LL ? "LL " : "",
                     acc_coll_name(coll), p->algo, topo);
            fn(p, label);
            ran++;
        }
        acc_plan_destroy(p);
    }
    acc_error_clear();
    acc_topo_destroy(t);
    return ran;
}

static inline int emu_each_algorithm(const char *topo, acc_coll_t coll, acc_proto_t proto,
                                     void (*fn)(const acc_plan_t *p, const char *label))
{
    return emu_algorithms(topo, coll, proto, fn, NULL, 0);
}

#endif
