/*
 * codegen_internal.h - what code generation, the cache and the GPU executor share: the
 * generated module's tables (connections, counters, parameter rows) and the layout of the
 * structures the host hands the kernel, which the generated source repeats field for field
 * (and checks with static_assert).  Internal to acc.
 */
#ifndef ACC_CODEGEN_INTERNAL_H
#define ACC_CODEGEN_INTERNAL_H

#include "acc_kernels.h"

/* Bumped whenever the generated code changes meaning, so that cached CUBINs of an older
 * generator are never taken for new ones (the version is in every source's first line). */
#define ACC_CODEGEN_VERSION 2

/* Threads per block; every block moves 16-byte vectors, 4 in flight per thread for copies. */
#define ACC_KTHREADS 512
/* In and out pointers of this many ranks travel in the launch arguments (the rest would come
 * from the rank table); the single-GPU executor hosts at most this many ranks. */
#define ACC_KARG_RANKS ACC_GPU_MAX_RANKS

/* A connection (sender, receiver, lane) and how it is used per launch. */
typedef struct {
    int from, to, lane;
    uint32_t msgs;   /* messages per launch */
    uint32_t maxcnt; /* chunks of its largest message */
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

typedef struct {
    uint64_t stage; /* [copy][slot] of slot bytes */
    uint64_t sent;  /* u32 [kmax] */
    uint64_t acked; /* u32 [kmax] */
    uint32_t msgs, maxcnt;
} acc_kconn_dev_t;

typedef struct {
    uint64_t val; /* u32 [kmax] */
    uint32_t per_launch, pad;
} acc_kctr_dev_t;

typedef struct {
    uint64_t ranks, conns, ctrs, params, status;
    uint64_t elems_in, elems_out;
    uint64_t scratch_cap; /* elements between scratch chunks (a multiple of 16 bytes) */
    uint64_t slice_bytes; /* bytes per chunk in a message slot (a multiple of 16) */
    uint64_t timeout_ns;  /* 0: wait for ever */
    uint32_t copies, kmax, param_stride, pad;
    uint32_t slots;     /* message slots per connection */
    uint32_t chunks[3]; /* chunks of the in, out and scratch buffers */
    uint64_t io[2][ACC_KARG_RANKS];
} acc_kargs_t;

_Static_assert(sizeof(acc_krank_t) == 48, "acc_krank_t layout");
_Static_assert(sizeof(acc_kconn_dev_t) == 32, "acc_kconn_dev_t layout");
_Static_assert(sizeof(acc_kctr_dev_t) == 16, "acc_kctr_dev_t layout");
_Static_assert(sizeof(acc_kargs_t) == 112 + 16 * ACC_KARG_RANKS, "acc_kargs_t layout");

/* Status words a failed launch leaves (acc_kargs_t.status): [0] the kind of wait that gave up
 * (ACC_KW_*), then rank, lane, copy, operation, the connection / counter / lane it waited
 * on, the value it wanted and the value it saw. */
enum { ACC_KW_MSG = 1, ACC_KW_SPACE, ACC_KW_SIGNAL, ACC_KW_DEP };
#define ACC_KSTATUS_WORDS 16

/* Bytes of the header of a message slot: the length of each chunk, rounded to 16 bytes. */
static inline uint64_t acc_kslot_header(uint32_t maxcnt)
{
    return ((uint64_t)maxcnt * 4u + 15u) & ~(uint64_t)15u;
}

/* Elements of the largest slice copy k of `copies` takes of a chunk of n elements (whole
 * 16-byte vectors of `vec` elements). */
static inline uint64_t acc_kslice(uint64_t n, uint32_t copies, uint32_t vec)
{
    uint64_t s = (n + copies - 1) / copies;
    return (s + vec - 1) / vec * vec;
}

/* ---- codegen pieces (codegen_*.c) --------------------------------------------------------- */

/* The fixed parts of a module (codegen_prelude.c, codegen_library.c): the type section for a
 * data type and reduction, the header, the device library's definitions, the plan's AVG
 * constants and the entry points.  A library is (type section, header, library); a plan's
 * part is (type section, header, plan constants, AVG, entry points, programs). */
void acc_cg_types(acc_buf_t *out, acc_dtype_t dt, acc_redop_t op, int reduces);
void acc_cg_header(acc_buf_t *out);
void acc_cg_library(acc_buf_t *out);
void acc_cg_average(acc_buf_t *out, acc_redop_t op, int reduces, int nranks);
void acc_cg_entry(acc_buf_t *out);

/* What the analysis (codegen.c) hands the emitter (codegen_emit.c): per operation of the
 * plan, indexed by first[rank * nlanes + lane] + k, the connections it receives from and
 * sends on with the message's number on each in a launch, its signal counter, and whether
 * another lane depends on it. */
typedef struct {
    const acc_plan_t *p;
    acc_kernel_t *k;
    size_t *first; /* nranks x nlanes + 1 */
    uint32_t *cin, *jin, *cout, *jout, *ctr;
    uint8_t *publish;
    /* Lane programs (rank, lane), numbered rank * nlanes + lane, sorted into classes of the
     * same shape: prog_class per program, the members of each class one class after the
     * other in members[first[c] .. first[c + 1]).  Programs without operations are in no
     * class (-1). */
    int *prog_class;
    int *members;
    int *member_first;
    int nclasses;
} acc_cg_t;

static inline const acc_op_t *acc_cg_op(const acc_cg_t *g, int rank, int lane, uint32_t k)
{
    return &g->p->progs[rank * g->p->nlanes + lane].ops[k];
}

/* Operations ia and ib (indices as above) have the same shape: what the code of a class
 * fixes, as opposed to what comes from its parameters.  (Programs also need equal lengths
 * and equal lengths of the lanes they depend on; see codegen.c.) */
static inline int acc_cg_same_shape(const acc_cg_t *g, size_t ia, const acc_op_t *a, size_t ib,
                                    const acc_op_t *b)
{
    return a->code == b->code && a->src.buf == b->src.buf && a->src.cnt == b->src.cnt &&
           a->dst.buf == b->dst.buf && a->dst.cnt == b->dst.cnt && a->npeers == b->npeers &&
           a->dep_lane == b->dep_lane && g->publish[ia] == g->publish[ib];
}

/* Append the device function of program class c to out.  The values that differ between
 * the class's m programs become parameters: *nparams of them, in *cols (taken) column by
 * column, cols[j * m + i] being parameter j of the class's i-th member. */
acc_status_t acc_cg_emit_class(const acc_cg_t *g, int c, acc_buf_t *out, uint32_t **cols,
                               uint32_t *nparams);

/* ---- the executor's pieces (gpu_exec.c) -------------------------------------------------- */

/* An executor laid out in host memory that loads no module: the arguments it builds drive a
 * module compiled as host C++ with a test shim (ACC_HOST_SHIM), each block a thread.  The
 * tests use it to run the very code and layout of the GPU path on machines without one. */
acc_status_t acc_gpu_exec_create_host(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op,
                                      uint64_t max_count, const acc_gpu_opts_t *opts,
                                      acc_gpu_exec_t **out);
/* The error a launch's status words describe (acc_kargs_t.status, nonzero first word), with
 * the executor's counters reset so that it can be used again. */
acc_status_t acc_gpu_exec_failure(acc_gpu_exec_t *x, const uint32_t *status);
/* The arguments of one launch of acc_kernel (and of acc_avg, for AVG), and its grid:
 * *gx = lanes x copies blocks by *gy = ranks.  Buffers as in acc_gpu_exec_launch. */
acc_status_t acc_gpu_exec_args(acc_gpu_exec_t *x, uint64_t count, void *const *in, void *const *out,
                               int inplace, acc_kargs_t *a, unsigned *gx, unsigned *gy);

/* ---- the driver, for the executor (cuda_driver.c) --------------------------------------- */

acc_status_t acc_cuda_module_load(const void *cubin, void **module);
void acc_cuda_module_unload(void *module);
acc_status_t acc_cuda_module_function(void *module, const char *name, void **fn);
acc_status_t acc_cuda_occupancy(void *fn, int threads, int *blocks_per_sm);
/* A grid of gx x gy blocks of `threads` threads; args as cuLaunchKernel's kernelParams. */
acc_status_t acc_cuda_launch(void *fn, unsigned gx, unsigned gy, unsigned threads, void **args,
                             acc_cuda_stream_t s);

#endif
