/*
 * The fixed parts of every generated module, kept here as CUDA C++ strings so that acc needs
 * no file at run time: the type section that fixes a module's element type and reduction,
 * the header (what the host hands the kernel, counters with release/acquire, the device
 * library's interface) and the entry points.  The device library itself (chunk geometry,
 * the data mover, message passing and peer-memory steps) is in codegen_library.c.
 *
 * A module is compiled in two parts (codegen.c): the library, which depends only on the
 * type section and is therefore built once per element type and reduction and shared by
 * every plan, and the plan's part (constants, entry points, lane programs), which is small;
 * the two are linked.  The whole module, the two parts in one file, is what --emit-cuda
 * writes and what the host tests compile.
 */
#include "codegen_internal.h"

/* clang-format off */
/* The header: types, what the host hands the kernel, counters, and the device library's
 * interface (its declarations and the operation macros the lane programs use). */
static const char header[] =
    "/* ==== the header: what every part of a module shares ============================== */\n"
    "/* Nothing is included: NVRTC has no C library, and the few types and fences needed\n"
    " * are written out here, which also keeps every compile short. */\n"
    "typedef unsigned char u8;\n"
    "typedef unsigned short u16;\n"
    "typedef unsigned int u32;\n"
    "typedef unsigned long long u64;\n"
    "\n"
    "enum { ACC_IN = 0, ACC_OUT = 1, ACC_SCRATCH = 2 };\n"
    "enum { ACC_KW_MSG = 1, ACC_KW_SPACE, ACC_KW_SIGNAL, ACC_KW_DEP };\n"
    "enum { ACC_F_SYS = 1 }; /* a connection's or counter's flags: the other end is another GPU */\n"
    "#define ACC_VEC (16 / ACC_ES)\n"
    "\n"
    "/* What the host hands the kernel (codegen_internal.h has the same structures). */\n"
    "struct acc_rank_t {\n"
    "    u8 *buf[2];       /* in, out of ranks beyond ACC_ARG_RANKS */\n"
    "    u8 *scratch;      /* scratch chunks, scratch_cap elements apart */\n"
    "    u32 *scratch_len; /* [copy][chunk]: elements last written into each scratch chunk */\n"
    "    u32 *progress;    /* [lane][copy]: marks of completed dependency targets */\n"
    "    u32 *epoch;       /* [lane][copy]: launches this block has run */\n"
    "};\n"
    "struct acc_conn_t {\n"
    "    u8 *stage;  /* [copy][slot]: chunk lengths, then the chunks' slices */\n"
    "    u32 *sent;  /* [copy]: messages sent (the receiver waits on it) */\n"
    "    u32 *acked; /* [copy]: messages received (the sender waits on it) */\n"
    "    u32 msgs;   /* messages per launch */\n"
    "    u32 maxcnt; /* chunks of the largest message */\n"
    "    u32 flags;  /* ACC_F_SYS */\n"
    "    u32 pad;\n"
    "};\n"
    "struct acc_ctr_t {\n"
    "    u32 *val;       /* [copy] */\n"
    "    u32 per_launch; /* signals per launch */\n"
    "    u32 flags;      /* ACC_F_SYS */\n"
    "};\n"
    "struct acc_args_t {\n"
    "    const acc_rank_t *ranks;\n"
    "    const acc_conn_t *conns;\n"
    "    const acc_ctr_t *ctrs;\n"
    "    const u32 *params; /* [rank][param_stride]: the rank's class, then its parameters */\n"
    "    u32 *status;       /* 0, or the first failure */\n"
    "    u64 elems_in, elems_out;\n"
    "    u64 scratch_cap;\n"
    "    u64 slice_bytes;\n"
    "    u64 timeout_ns;\n"
    "    u32 copies, kmax, param_stride;\n"
    "    u32 rank0;          /* the rank of blockIdx.y == 0: a launch may hold a range of ranks */\n"
    "    u32 slots;          /* message slots per connection */\n"
    "    u32 chunks[3];      /* chunks of the in, out and scratch buffers */\n"
    "    u8 *io[2][ACC_ARG_RANKS];\n"
    "};\n"
    "static_assert(sizeof(acc_rank_t) == 48 && sizeof(acc_conn_t) == 40 &&\n"
    "                  sizeof(acc_ctr_t) == 16,\n"
    "              \"tables must match the host's layout\");\n"
    "static_assert(sizeof(acc_args_t) == 112 + 16 * ACC_ARG_RANKS,\n"
    "              \"arguments must match the host's\");\n"
    "\n"
    "/* One thread block: its rank, lane, copy and launch number. */\n"
    "struct acc_ctx_t {\n"
    "    const acc_args_t *a;\n"
    "    volatile int *abort; /* shared: a wait of this block gave up */\n"
    "    u64 t0;              /* when the block started (ns) */\n"
    "    int rank, lane, copy;\n"
    "    u32 epoch; /* 1 for the first launch, and so on (wrapping) */\n"
    "};\n"
    "\n"
    "/* ---- counters -----------------------------------------------------------------------\n"
    " * The idiom of CUTLASS's semaphores and vLLM's barriers: all threads finish their\n"
    " * accesses, __syncthreads(), then thread 0 publishes with a release; the other side's\n"
    " * thread 0 spins on an acquire load, then __syncthreads() lets its block read.  At system\n"
    " * scope where the other end is another GPU (sys != 0), else at GPU scope: a system-scope\n"
    " * release waits until the block's writes are visible to every GPU and the host, which\n"
    " * costs about twice the hand-off (0.78 against 0.45 us on an H200). */\n"
    "#ifndef ACC_HOST_SHIM /* tests compile modules as host C++ with their own versions */\n"
    "__device__ __forceinline__ u32 acc_ld_acquire(const u32 *p, int sys)\n"
    "{\n"
    "    u32 v;\n"
    "    if (sys)\n"
    "        asm volatile(\"ld.acquire.sys.u32 %0, [%1];\" : \"=r\"(v) : \"l\"(p) : \"memory\");\n"
    "    else\n"
    "        asm volatile(\"ld.acquire.gpu.u32 %0, [%1];\" : \"=r\"(v) : \"l\"(p) : \"memory\");\n"
    "    return v;\n"
    "}\n"
    "__device__ __forceinline__ void acc_st_release(u32 *p, u32 v, int sys)\n"
    "{\n"
    "    if (sys)\n"
    "        asm volatile(\"st.release.sys.u32 [%0], %1;\" : : \"l\"(p), \"r\"(v) : \"memory\");\n"
    "    else\n"
    "        asm volatile(\"st.release.gpu.u32 [%0], %1;\" : : \"l\"(p), \"r\"(v) : \"memory\");\n"
    "}\n"
    "__device__ __forceinline__ void acc_add_release(u32 *p, u32 v, int sys)\n"
    "{\n"
    "    if (sys)\n"
    "        asm volatile(\"red.release.sys.add.u32 [%0], %1;\" : : \"l\"(p), \"r\"(v) : \"memory\");\n"
    "    else\n"
    "        asm volatile(\"red.release.gpu.add.u32 [%0], %1;\" : : \"l\"(p), \"r\"(v) : \"memory\");\n"
    "}\n"
    "/* LL lines: 16 bytes {data, flag, data, flag}, stored and loaded whole.  The hardware\n"
    " * writes every aligned 8 bytes at once, so a line whose two flags are the expected one\n"
    " * holds that message's 8 bytes of data (NCCL's LL, MSCCL++'s LL16 packets).  Volatile:\n"
    " * the receiver polls, so neither side may cache or merge the accesses. */\n"
    "__device__ __forceinline__ void acc_ll_store(u8 *p, u64 v, u32 flag)\n"
    "{\n"
    "    asm volatile(\"st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};\"\n"
    "                 : : \"l\"(p), \"r\"((u32)v), \"r\"(flag), \"r\"((u32)(v >> 32)), \"r\"(flag)\n"
    "                 : \"memory\");\n"
    "}\n"
    "/* 1 when both flags of the line are `flag` (*v its data); else *seen is a flag it has. */\n"
    "__device__ __forceinline__ int acc_ll_load(const u8 *p, u32 flag, u64 *v, u32 *seen)\n"
    "{\n"
    "    u32 a, f1, b, f2;\n"
    "    asm volatile(\"ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];\"\n"
    "                 : \"=r\"(a), \"=r\"(f1), \"=r\"(b), \"=r\"(f2) : \"l\"(p) : \"memory\");\n"
    "    *v = (u64)a | (u64)b << 32;\n"
    "    *seen = f1 != flag ? f1 : f2;\n"
    "    return f1 == flag && f2 == flag;\n"
    "}\n"
    "__device__ __forceinline__ u64 acc_now(void)\n"
    "{\n"
    "    u64 t;\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
    "    return t;\n"
    "}\n"
    "#endif\n"
    "\n"
    "/* ---- the device library's interface ------------------------------------------------\n"
    " * The functions below are defined once per data type and reduction in the device library\n"
    " * (the second part of this file), which is compiled once and linked with every plan's\n"
    " * code; the plan's lane programs call them through the operation macros. */\n"
    "enum { ACC_S_IN = 1, ACC_S_OUT = 2, ACC_S_DSRC = 4 };\n"
    "/* An operation's fixed parts in one word: flags, source and destination buffers (-1:\n"
    " * none), chunk count. */\n"
    "#define ACC_SHAPE(f, sb, db, cnt)                                                         \\\n"
    "    ((u32)(f) | (u32)((sb) + 1) << 3 | (u32)((db) + 1) << 5 | (u32)(cnt) << 8)\n"
    "__device__ __noinline__ int acc_step(acc_ctx_t &c, int opi, u32 shape, u32 cin, u32 jin,\n"
    "                                     u32 soff, u32 doff, u32 cout, u32 jout);\n"
    "__device__ __noinline__ int acc_step_ll(acc_ctx_t &c, int opi, u32 shape, u32 cin, u32 jin,\n"
    "                                        u32 soff, u32 doff, u32 cout, u32 jout);\n"
    "/* The operations of the plan, as the generated lanes call them (buffers ACC_IN, ACC_OUT,\n"
    " * ACC_SCRATCH; offsets and counts in chunks; j is the message's number on its connection in\n"
    " * this launch).  Message passing goes through ACC_STEP, the plan's protocol: acc_step\n"
    " * (Simple) or acc_step_ll (LL). */\n"
    "#define acc_send(c, opi, cout, jout, sb, soff, cnt)                                       \\\n"
    "    ACC_STEP(c, opi, ACC_SHAPE(ACC_S_OUT, sb, -1, cnt), 0, 0, soff, 0, cout, jout)\n"
    "#define acc_recv(c, opi, cin, jin, db, doff, cnt)                                         \\\n"
    "    ACC_STEP(c, opi, ACC_SHAPE(ACC_S_IN, -1, db, cnt), cin, jin, 0, doff, 0, 0)\n"
    "#define acc_rrc(c, opi, cin, jin, sb, soff, db, doff, cnt)                                \\\n"
    "    ACC_STEP(c, opi, ACC_SHAPE(ACC_S_IN, sb, db, cnt), cin, jin, soff, doff, 0, 0)\n"
    "#define acc_rcs(c, opi, cin, jin, db, doff, cout, jout, cnt)                              \\\n"
    "    ACC_STEP(c, opi, ACC_SHAPE(ACC_S_IN | ACC_S_OUT, -1, db, cnt), cin, jin, 0, doff,     \\\n"
    "             cout, jout)\n"
    "#define acc_rrs(c, opi, cin, jin, sb, soff, cout, jout, cnt)                              \\\n"
    "    ACC_STEP(c, opi, ACC_SHAPE(ACC_S_IN | ACC_S_OUT, sb, -1, cnt), cin, jin, soff, 0,     \\\n"
    "             cout, jout)\n"
    "#define acc_rrcs(c, opi, cin, jin, sb, soff, db, doff, cout, jout, cnt)                   \\\n"
    "    ACC_STEP(c, opi, ACC_SHAPE(ACC_S_IN | ACC_S_OUT, sb, db, cnt), cin, jin, soff, doff,  \\\n"
    "             cout, jout)\n"
    "#define acc_copy(c, opi, sb, soff, db, doff, cnt)                                         \\\n"
    "    acc_step(c, opi, ACC_SHAPE(0, sb, db, cnt), 0, 0, soff, doff, 0, 0)\n"
    "#define acc_reduce(c, opi, sb, soff, db, doff, cnt)                                       \\\n"
    "    acc_step(c, opi, ACC_SHAPE(ACC_S_DSRC, sb, db, cnt), 0, 0, soff, doff, 0, 0)\n"
    "\n"
    "/* np | sb | db | cnt, as ACC_SHAPE; np up to ACC_MAXSRC. */\n"
    "#define ACC_PSHAPE(np, sb, db, cnt)                                                       \\\n"
    "    ((u32)(np) | (u32)((sb) + 1) << 7 | (u32)((db) + 1) << 9 | (u32)(cnt) << 11)\n"
    "__device__ __noinline__ int acc_peers(acc_ctx_t &c, int opi, u32 shape, const u32 *from,\n"
    "                                      int rd, u32 soff, u32 doff);\n"
    "__device__ __forceinline__ int acc_put(acc_ctx_t &c, int opi, u32 peer, int sb, u32 soff,\n"
    "                                       int db, u32 doff, u32 cnt)\n"
    "{\n"
    "    u32 me = (u32)c.rank;\n"
    "    return acc_peers(c, opi, ACC_PSHAPE(1, sb, db, cnt), &me, (int)peer, soff, doff);\n"
    "}\n"
    "__device__ __forceinline__ int acc_get(acc_ctx_t &c, int opi, u32 peer, int sb, u32 soff,\n"
    "                                       int db, u32 doff, u32 cnt)\n"
    "{\n"
    "    return acc_peers(c, opi, ACC_PSHAPE(1, sb, db, cnt), &peer, c.rank, soff, doff);\n"
    "}\n"
    "#define acc_reduce_peers(c, opi, peers, np, sb, soff, db, doff, cnt)                      \\\n"
    "    acc_peers(c, opi, ACC_PSHAPE(np, sb, db, cnt), peers, (c).rank, soff, doff)\n"
    "__device__ __noinline__ int acc_signal(acc_ctx_t &c, int opi, u32 ctr);\n"
    "__device__ __noinline__ int acc_wait(acc_ctx_t &c, int opi, u32 ctr, u32 value);\n"
    "__device__ __noinline__ int acc_dep(acc_ctx_t &c, int opi, int lane, u32 op, u32 nops);\n"
    "__device__ __noinline__ void acc_done(acc_ctx_t &c, int opi, u32 nops);\n";

/* The entry points, after the plan's constants: acc_kernel and, for AVG, acc_avg. */
static const char entry[] =
    "/* ---- the entry point --------------------------------------------------------------\n"
    " * blockIdx.y + rank0 is the rank, blockIdx.x = lane * copies + copy.  Each block counts its\n"
    " * launches in device memory (not in an argument), so that a CUDA graph replaying one\n"
    " * launch still moves every counter on. */\n"
    "__device__ void acc_run(acc_ctx_t &c, const u32 *prm); /* generated below */\n"
    "#ifndef ACC_HOST_SHIM\n"
    "#define ACC_BLOCK_SHARED(type, name) __shared__ type name\n"
    "#endif\n"
    "\n"
    "/* Two blocks per multiprocessor (at most 64 registers a thread): the data mover does not\n"
    " * spill at that, and twice the blocks can be resident at once.  ACC_THREADS is the most a\n"
    " * block has; a launch may give it fewer (blockDim.x), as its slices need. */\n"
    "extern \"C\" __global__ void __launch_bounds__(ACC_THREADS, 2)\n"
    "    acc_kernel(const __grid_constant__ acc_args_t a)\n"
    "{\n"
    "    ACC_BLOCK_SHARED(u32, sh_epoch);\n"
    "    ACC_BLOCK_SHARED(int, sh_abort);\n"
    "    acc_ctx_t c;\n"
    "    c.a = &a;\n"
    "    c.rank = (int)(blockIdx.y + a.rank0);\n"
    "    c.lane = (int)(blockIdx.x / a.copies);\n"
    "    c.copy = (int)(blockIdx.x % a.copies);\n"
    "    u32 *ep = a.ranks[c.rank].epoch + (u64)c.lane * a.kmax + c.copy;\n"
    "    if (threadIdx.x == 0) {\n"
    "        sh_epoch = *ep + 1u;\n"
    "        sh_abort = 0;\n"
    "    }\n"
    "    __syncthreads();\n"
    "    c.epoch = sh_epoch;\n"
    "    c.abort = &sh_abort;\n"
    "    c.t0 = acc_now();\n"
    "    acc_run(c, a.params + ((u64)c.rank * ACC_NLANES + c.lane) * a.param_stride);\n"
    "    __syncthreads();\n"
    "    if (threadIdx.x == 0)\n"
    "        *ep = c.epoch;\n"
    "}\n"
    "\n"
    "#if ACC_AVG\n"
    "/* The average: the sum divided by the rank count once, on every output the collective\n"
    " * defines, after the plan has run (a launch of its own, so that every write of every\n"
    " * rank has landed). */\n"
    "extern \"C\" __global__ void __launch_bounds__(ACC_THREADS)\n"
    "    acc_avg(const __grid_constant__ acc_args_t a)\n"
    "{\n"
    "    int r = (int)(blockIdx.y + a.rank0);\n"
    "    if (ACC_ROOT >= 0 && r != ACC_ROOT)\n"
    "        return;\n"
    "    acc_t *o = (acc_t *)(r < ACC_ARG_RANKS ? a.io[ACC_OUT][r] : a.ranks[r].buf[ACC_OUT]);\n"
    "    u64 step = (u64)gridDim.x * blockDim.x;\n"
    "    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < a.elems_out; i += step)\n"
    "        o[i] = acc_narrow(acc_divide(acc_widen(o[i])));\n"
    "}\n"
    "#endif\n"
    "/* ==== end of the prelude ======================================================= */\n";
/* clang-format on */

void cg_header(acc_buf_t *out)
{
    acc_buf_append(out, header, sizeof(header) - 1);
}

void cg_entry(acc_buf_t *out)
{
    acc_buf_append(out, entry, sizeof(entry) - 1);
}

/* Element type, accumulator and conversions.  Half types are stored as raw 16-bit words and
 * widened to float exactly; fp16 is rounded back by the hardware's round-to-nearest-even
 * conversion, bfloat16 by the same integer rounding the host executor uses (host_reduce.c),
 * so both executors round every value identically. */
static const char *const type_text[ACC_DT_COUNT] = {
    /* float */
    "typedef float acc_t;\n"
    "typedef float acc_acc_t;\n"
    "__device__ __forceinline__ acc_acc_t acc_widen(acc_t x) { return x; }\n"
    "__device__ __forceinline__ acc_t acc_narrow(acc_acc_t x) { return x; }\n",
    /* half */
    "typedef unsigned short acc_t; /* IEEE binary16 bits */\n"
    "typedef float acc_acc_t;\n"
    "#ifdef ACC_HOST_SHIM\n"
    "#define acc_widen acc_shim_half_to_float\n"
    "#define acc_narrow acc_shim_float_to_half\n"
    "#else\n"
    "__device__ __forceinline__ acc_acc_t acc_widen(acc_t x)\n"
    "{\n"
    "    float f;\n"
    "    asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(x));\n"
    "    return f;\n"
    "}\n"
    "__device__ __forceinline__ acc_t acc_narrow(acc_acc_t x)\n"
    "{\n"
    "    unsigned short h;\n"
    "    asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(x));\n"
    "    return h;\n"
    "}\n"
    "#endif\n",
    /* bfloat16 */
    "typedef unsigned short acc_t; /* the upper half of a binary32 */\n"
    "typedef float acc_acc_t;\n"
    "__device__ __forceinline__ acc_acc_t acc_widen(acc_t x)\n"
    "{\n"
    "    return __uint_as_float((unsigned)x << 16);\n"
    "}\n"
    "__device__ __forceinline__ acc_t acc_narrow(acc_acc_t x)\n"
    "{\n"
    "    unsigned b = __float_as_uint(x);\n"
    "    if ((b & 0x7fffffffu) > 0x7f800000u) /* NaN stays a quiet NaN */\n"
    "        return (acc_t)((b >> 16) | 0x40u);\n"
    "    b += 0x7fffu + ((b >> 16) & 1u); /* to nearest, ties to even */\n"
    "    return (acc_t)(b >> 16);\n"
    "}\n",
    /* double */
    "typedef double acc_t;\n"
    "typedef double acc_acc_t;\n"
    "__device__ __forceinline__ acc_acc_t acc_widen(acc_t x) { return x; }\n"
    "__device__ __forceinline__ acc_t acc_narrow(acc_acc_t x) { return x; }\n",
    /* int32 */
    "typedef int acc_t;\n"
    "typedef int acc_acc_t;\n"
    "__device__ __forceinline__ acc_acc_t acc_widen(acc_t x) { return x; }\n"
    "__device__ __forceinline__ acc_t acc_narrow(acc_acc_t x) { return x; }\n",
};

/* The binary reduction a (+) b: `a` is what has been accumulated so far, b the next
 * operand, exactly as the host executor orders them (MIN keeps a on ties).  Integer sums and
 * products wrap, computed unsigned where wrapping is defined. */
static const char *red_text(acc_dtype_t dt, acc_redop_t op)
{
    int integer = dt == ACC_DT_I32;
    switch (op) {
    case ACC_RED_PROD:
        return integer ? "return (int)((unsigned)a * (unsigned)b);" : "return a * b;";
    case ACC_RED_MIN:
        return "return b < a ? b : a;";
    case ACC_RED_MAX:
        return "return b > a ? b : a;";
    default:
        return integer ? "return (int)((unsigned)a + (unsigned)b);" : "return a + b;";
    }
}

void cg_types(acc_buf_t *out, acc_dtype_t dt, acc_redop_t op, int reduces)
{
    static const char *const raw[9] = {NULL, NULL, "unsigned short",    NULL, "unsigned", NULL,
                                       NULL, NULL, "unsigned long long"};
    size_t es = acc_dtype_size(dt);

    acc_buf_printf(out,
                   "#define ACC_THREADS %d\n#define ACC_ARG_RANKS %d\n#define ACC_ES %zu\n"
                   "#define ACC_REDUCES %d\n",
                   ACC_KTHREADS, ACC_KARG_RANKS, es, reduces);
    if (!reduces) {
        /* Only data moves: the element size is all that matters, so that the modules of
         * types of one size are the same source. */
        acc_buf_printf(out,
                       "typedef %s acc_t; /* %zu-byte elements, moved, never combined */\n"
                       "typedef acc_t acc_acc_t;\n"
                       "__device__ __forceinline__ acc_acc_t acc_widen(acc_t x) { return x; }\n"
                       "__device__ __forceinline__ acc_t acc_narrow(acc_acc_t x) { return x; }\n"
                       "__device__ __forceinline__ acc_acc_t acc_red(acc_acc_t a, acc_acc_t b) "
                       "{ return a; }\n",
                       raw[es], es);
        return;
    }
    /* AVG sums (the division is the plan's, below), so its library is SUM's. */
    acc_buf_puts(out, type_text[dt]);
    acc_buf_printf(out,
                   "__device__ __forceinline__ acc_acc_t acc_red(acc_acc_t a, acc_acc_t b)\n"
                   "{\n    %s\n}\n",
                   red_text(dt, op));
}

void cg_average(acc_buf_t *out, acc_redop_t op, int reduces, int nranks)
{
    int avg = reduces && op == ACC_RED_AVG;
    acc_buf_printf(out, "#define ACC_AVG %d\n", avg);
    if (avg)
        acc_buf_printf(out,
                       "__device__ __forceinline__ acc_acc_t acc_divide(acc_acc_t x)\n"
                       "{\n    return x / (acc_acc_t)%d; /* integers: toward zero, as C */\n}\n",
                       nranks);
}
