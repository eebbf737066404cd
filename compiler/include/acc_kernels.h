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
 * of the plan's ranks: blockIdx.y plus rank0 is the rank, blockIdx.x the lane and the copy.  Ranks
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
 * Protocols.  A plan's protocol (plan->proto) decides how its messages travel.  Simple: a
 * message is staged whole, then its connection's counter is released; the receiver acquires it
 * and reads.  LL: every 8 bytes of a message carry 4 bytes of data and 4 of flag (the message's
 * number), written as 16-byte stores; a receiver's thread polls its own lines and has the data
 * the moment both flags are there, with no fence, counter or barrier between (NCCL's and
 * MSCCL++'s LL; twice the bytes, for the least latency).  LL128 has no kernel here (see
 * acc_kernel_supports).  Counters and flags are released and acquired at each connection's
 * scope (ACC_KF_SYS: system scope for peers on other GPUs; GPU scope otherwise, which is
 * cheaper), and a block runs as many threads as its slice of the data needs (acc_kthreads).
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

/* Is there a kernel for this plan with this protocol?  Simple: always.  LL: when the plan passes
 * messages (the flags ride in them; a plan of peer-memory operations only has no message to
 * carry them, and its kernel is Simple's).  LL128: never - it relies on NVLink delivering each
 * 128-byte warp store whole, which the PTX memory model does not promise, and no CPU emulation
 * can check it; Simple and LL cover its sizes.  ACC_ERR_UNSUPPORTED says why; the selection
 * only chooses what this accepts. */
acc_status_t acc_kernel_supports(const acc_plan_t *plan, acc_proto_t proto);

/* Generate the module for a plan (which must have passed acc_plan_verify; structurally broken
 * plans are refused, never crash), a data type and a reduction, with the plan's protocol (a
 * protocol acc_kernel_supports refuses is refused here with its reason).  Collectives that only
 * move data ignore `op` and depend on the element size only, so their half and bfloat16 modules
 * are the same source (and the same cache entry). */
acc_status_t acc_kernel_generate(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op,
                                 acc_kernel_t **out);
void acc_kernel_destroy(acc_kernel_t *k);
/* The CUDA C++ source (NUL-terminated; *len optional). */
const char *acc_kernel_source(const acc_kernel_t *k, size_t *len);
/* A file-name-safe name: "allreduce_ring_n8_float_sum"; LL modules "allreduce_ring_ll_n8_...". */
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
/* Compile source to a CUBIN for arch ("sm_90").  *cubin is taken (acc_mem_free).  On failure the
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

/* ---- the modules of a set of plans ----------------------------------------------------------
 * What an image build does with plans (compiler/codegen/kbuild.c): every module a plan needs,
 * one per data type and reduction asked for (acc_kbuild_variants), its source written into a
 * directory when asked, and compiled through a kernel cache for every architecture asked for.
 * acc_db_build runs the plans its selection tables name through it and stores what it hands
 * back; acc-compile --emit-cuda/--arch runs any plans.  Modules of one plan that share a source
 * (the half and bfloat16 modules of a collective that only moves data) are written and
 * compiled once and handed back once per type. */

#define ACC_KBUILD_MAX_ARCHS    16
#define ACC_KBUILD_ARCH_MAX     16 /* bytes of an architecture's name, NUL included */
#define ACC_KBUILD_MAX_VARIANTS (ACC_DT_COUNT * ACC_RED_COUNT)

typedef struct {
    acc_dtype_t types[ACC_DT_COUNT]; /* the modules' data types, each once, in this order */
    size_t ntypes;
    acc_redop_t ops[ACC_RED_COUNT]; /* their reductions, each once */
    size_t nops;
    char archs[ACC_KBUILD_MAX_ARCHS][ACC_KBUILD_ARCH_MAX]; /* "sm_90"; none: nothing compiled */
    size_t narchs;
    /* Write DIR/<acc_kernel_name>.cu for every module (DIR is created when missing, its parent
     * is not); NULL: no sources are written.  Borrowed. */
    const char *source_dir;
    /* Borrowed; NULL: acc_kcache_create(NULL), made when architectures are given. */
    acc_kcache_t *cache;
} acc_kbuild_opts_t;

/* The types of training (fp32 master weights, fp16 and bf16 gradients), sum, no architecture,
 * no source directory, the default cache. */
void acc_kbuild_opts_init(acc_kbuild_opts_t *opts);
/* ACC_ERR_INVALID naming the field for an empty list, a value listed twice or out of range; an
 * architecture NVRTC cannot build for, or any architecture without NVRTC, gives
 * acc_nvrtc_check_arch's error. */
acc_status_t acc_kbuild_opts_check(const acc_kbuild_opts_t *opts);

/* The (type, reduction) of each module of a plan of coll: every type with every reduction when
 * coll reduces, else every type with ACC_RED_SUM (its modules ignore the reduction).  Returns
 * how many. */
typedef struct {
    acc_dtype_t dtype;
    acc_redop_t redop;
} acc_kvariant_t;
size_t acc_kbuild_variants(const acc_kbuild_opts_t *opts, acc_coll_t coll,
                           acc_kvariant_t out[ACC_KBUILD_MAX_VARIANTS]);

/* One module, as acc_kbuild_plan hands it to its callback; everything is borrowed for the
 * call, except the CUBINs, which live as long as the cache. */
typedef struct {
    const acc_plan_t *plan;
    acc_dtype_t dtype;
    acc_redop_t redop;
    const acc_kernel_t *kernel;
    const void *cubin[ACC_KBUILD_MAX_ARCHS]; /* one per opts.archs, in that order */
    size_t cubin_size[ACC_KBUILD_MAX_ARCHS];
} acc_kmodule_t;
typedef acc_status_t (*acc_kbuild_fn)(void *ctx, const acc_kmodule_t *module);

/* What a build has done so far. */
typedef struct {
    size_t plans;      /* plans given to acc_kbuild_plan */
    size_t modules;    /* modules made: one per plan and variant */
    size_t sources;    /* distinct sources among them: written and compiled once each */
    size_t cubins;     /* CUBINs asked of the cache: sources x architectures */
    size_t built;      /* of those, linked now (not found in the cache) */
    uint64_t compiles; /* NVRTC compilations run for them (plans' parts, device libraries) */
    double compile_s;  /* wall time in NVRTC and the linker */
    double seconds;    /* wall time in acc_kbuild_plan, callbacks included */
} acc_kbuild_stats_t;

typedef struct acc_kbuild acc_kbuild_t;

/* Check opts (acc_kbuild_opts_check), create the source directory and, with architectures, the
 * cache.  opts is copied; what it points to is borrowed and must outlive the build. */
acc_status_t acc_kbuild_create(const acc_kbuild_opts_t *opts, acc_kbuild_t **out);
void acc_kbuild_destroy(acc_kbuild_t *b);
/* Every module of a verified plan; fn (optional) is called once per module, and an error it
 * returns stops the build with that error. */
acc_status_t acc_kbuild_plan(acc_kbuild_t *b, const acc_plan_t *plan, acc_kbuild_fn fn, void *ctx);
void acc_kbuild_stats(const acc_kbuild_t *b, acc_kbuild_stats_t *out);
/* "nvrtc 13.0", the compiler version the CUBINs are built with; "" without architectures. */
const char *acc_kbuild_compiler(const acc_kbuild_t *b);

/* ---- the launch ABI -------------------------------------------------------------------- */
/* What a launcher (the executors of runtime/) needs of a module and hands its kernel.  The
 * generated source repeats the device structures field for field and checks their sizes with
 * static_assert, so a change here is a change of ACC_CODEGEN_VERSION.  A module's fields are
 * read-only to everyone but the generator. */

/* Threads per block, at most: every block moves 16-byte vectors, 4 in flight per thread for
 * copies.  A launch runs as few as its slices need (acc_kthreads), whole warps, at least one. */
#define ACC_KTHREADS     512
#define ACC_KTHREADS_MIN 32
/* In and out pointers of this many ranks travel in the launch arguments (the rest would come
 * from the rank table). */
#define ACC_KARG_RANKS 64

/* A connection (sender, receiver, lane) and how it is used per launch. */
typedef struct {
    int from, to, lane;
    uint32_t msgs;     /* messages per launch */
    uint32_t maxcnt;   /* chunks of its largest message */
    acc_proto_t proto; /* how its messages travel: the plan's protocol */
} acc_kconn_t;

/* A signal counter (from -> to, slot). */
typedef struct {
    int from, to;
    uint32_t slot;
    uint32_t per_launch; /* signals per launch */
} acc_kctr_t;

struct acc_kernel {
    char *text; /* the whole module */
    size_t len;
    char *lib_text; /* its parts: the device library and the plan's part */
    char *plan_text;
    char name[128];
    char lib_name[64];
    acc_coll_t coll;
    int nranks, nlanes, root, slots, reduces;
    acc_dtype_t dt;
    acc_redop_t op;
    acc_proto_t proto;
    uint32_t chunks[ACC_BUF_COUNT];
    int nclasses;          /* rank classes: ranks whose lanes all share code */
    int *rank_class;       /* per rank */
    int nprogs;            /* lane programs: device functions of the module */
    uint32_t param_stride; /* per (rank, lane): [0] its program, then its parameters */
    uint32_t *params;      /* nranks x nlanes x param_stride */
    acc_kconn_t *conns;
    uint32_t nconns;
    acc_kctr_t *ctrs;
    uint32_t nctrs;
    uint32_t *lane_ops; /* nranks x nlanes: operations per lane, for reports */
};

/* ---- what the host hands the kernel (device addresses as 64-bit integers) ---------------- */

typedef struct {
    uint64_t buf[2];      /* in, out of ranks beyond the launch arguments' */
    uint64_t scratch;     /* scratch chunks, scratch_cap elements apart */
    uint64_t scratch_len; /* u32 [kmax][scratch chunks] */
    uint64_t progress;    /* u32 [lanes][kmax] */
    uint64_t epoch;       /* u32 [lanes][kmax] */
} acc_krank_t;

/* Flags of a connection or counter: release and acquire at system scope, because the other
 * end runs on another GPU.  Without it, GPU scope: both ends on this device (the single-GPU
 * executor's ranks, or ranks sharing a GPU), where a system-scope fence only costs time. */
#define ACC_KF_SYS 1u

typedef struct {
    uint64_t stage; /* [copy][slot] of acc_kslot_bytes */
    uint64_t sent;  /* u32 [kmax] */
    uint64_t acked; /* u32 [kmax] */
    uint32_t msgs, maxcnt;
    uint32_t flags, pad; /* ACC_KF_* */
} acc_kconn_dev_t;

typedef struct {
    uint64_t val; /* u32 [kmax] */
    uint32_t per_launch;
    uint32_t flags; /* ACC_KF_* */
} acc_kctr_dev_t;

typedef struct {
    uint64_t ranks, conns, ctrs, params, status;
    uint64_t elems_in, elems_out;
    uint64_t scratch_cap; /* elements between scratch chunks (a multiple of 16 bytes) */
    uint64_t slice_bytes; /* bytes per chunk in a message slot (a multiple of 16) */
    uint64_t timeout_ns;  /* 0: wait for ever */
    uint32_t copies, kmax, param_stride;
    uint32_t rank0;     /* the rank of blockIdx.y == 0: one rank per process launches its own */
    uint32_t slots;     /* message slots per connection */
    uint32_t chunks[3]; /* chunks of the in, out and scratch buffers */
    uint64_t io[2][ACC_KARG_RANKS];
} acc_kargs_t;

_Static_assert(sizeof(acc_krank_t) == 48, "acc_krank_t layout");
_Static_assert(sizeof(acc_kconn_dev_t) == 40, "acc_kconn_dev_t layout");
_Static_assert(sizeof(acc_kctr_dev_t) == 16, "acc_kctr_dev_t layout");
_Static_assert(sizeof(acc_kargs_t) == 112 + 16 * ACC_KARG_RANKS, "acc_kargs_t layout");

/* Status words a failed launch leaves (acc_kargs_t.status): [0] the kind of wait that gave up
 * (ACC_KW_*), then rank, lane, copy, operation, the connection / counter / lane it waited
 * on, the value it wanted and the value it saw. */
enum { ACC_KW_MSG = 1, ACC_KW_SPACE, ACC_KW_SIGNAL, ACC_KW_DEP };
#define ACC_KSTATUS_WORDS 16

/* Bytes of the header of a Simple message slot: the length of each chunk, rounded to 16
 * bytes. */
static inline uint64_t acc_kslot_header(uint32_t maxcnt)
{
    return ((uint64_t)maxcnt * 4u + 15u) & ~(uint64_t)15u;
}

/* Bytes of one message slot of a connection whose largest message has maxcnt chunks, each
 * slice of a chunk taking slice_bytes (a multiple of 16) in a Simple message.  Simple: the
 * header, then the slices.  LL: per chunk a 16-byte header line (its length and the flag),
 * then its lines, 16 bytes for every 8 of data. */
static inline uint64_t acc_kslot_bytes(acc_proto_t proto, uint32_t maxcnt, uint64_t slice_bytes)
{
    if (proto == ACC_PROTO_LL)
        return (uint64_t)maxcnt * (16u + 2u * slice_bytes);
    return acc_kslot_header(maxcnt) + (uint64_t)maxcnt * slice_bytes;
}

/* Threads a block of a kernel of this protocol needs for slices of slice_bytes: one per 16-byte
 * vector (Simple) or per 8-byte LL line, in whole warps, from ACC_KTHREADS_MIN to ACC_KTHREADS.
 * Fewer threads make every barrier of a step and the launch itself cheaper; small messages
 * need no more. */
static inline unsigned acc_kthreads(acc_proto_t proto, uint64_t slice_bytes)
{
    uint64_t per = proto == ACC_PROTO_LL ? 8u : 16u, t = (slice_bytes + per - 1) / per;
    t = (t + 31u) / 32u * 32u;
    return t < ACC_KTHREADS_MIN ? ACC_KTHREADS_MIN : t > ACC_KTHREADS ? ACC_KTHREADS : (unsigned)t;
}

/* Elements of the largest slice copy k of `copies` takes of a chunk of n elements (whole
 * 16-byte vectors of `vec` elements). */
static inline uint64_t acc_kslice(uint64_t n, uint32_t copies, uint32_t vec)
{
    uint64_t s = (n + copies - 1) / copies;
    return (s + vec - 1) / vec * vec;
}

#ifdef __cplusplus
}
#endif
#endif /* ACC_KERNELS_H */
