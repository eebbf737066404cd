/*
 * cuda_internal.h - the cuda backend: one GPU per process, acc's kernels for the sizes its
 * tables give acc, NCCL for the rest.  Internal to runtime/cuda/.
 *
 * Instances.  As on the host backend, a plan runs through an instance made collectively on
 * first use (and remade when a call outgrows it), here per (plan, data type, reduction), since
 * each has its own kernel module.  The module is the database's CUBIN for this GPU's
 * architecture when the database has one built from the source generated now, else NVRTC's
 * (through the kernel cache).  Each rank owns one device allocation per instance, exported to
 * the ranks of its node through CUDA IPC, holding what its peers touch: the counters and
 * staging buffers of the connections it receives on, the signal counters raised towards it,
 * its scratch and scratch lengths, its dependency marks and launch counts, and for plans with
 * peer-memory operations its input and output (the caller's buffers are copied in and out on
 * the stream, since peers read and write there).  Every rank computes every allocation's
 * layout from the plan, so only the IPC handles travel.  Each process then builds the kernel's
 * tables with the addresses as mapped in it, and launches only its own rank's blocks
 * (rank0 = its rank): lanes x copies blocks, which must all be resident, together with those
 * of any other rank sharing the GPU (the copies are chosen so).
 *
 * Errors inside a launch.  The kernel's waits give up after ACC_TIMEOUT_MS and leave status
 * words in pinned host memory, which the next call and acc_comm_get_async_error read without
 * synchronising; such a failure breaks the communicator.
 *
 * What this version does not do: steps between nodes inside a plan (plans whose connections
 * or peer memory cross nodes are left to NCCL).
 */
#ifndef ACC_CUDA_INTERNAL_H
#define ACC_CUDA_INTERNAL_H

#include "rt_internal.h"

#include "exec/gpu_exec.h"
#include "nccl/nccl_lib.h"

/* Byte offsets in one rank's allocation. */
typedef struct {
    uint64_t scratch_len; /* u32 [kmax][scratch chunks] */
    uint64_t progress;    /* u32 [lanes][kmax] */
    uint64_t epoch;       /* u32 [lanes][kmax] */
    uint64_t scratch;     /* scratch chunks, scratch_cap elements apart */
    uint64_t in, out;     /* staged plans only */
    uint64_t bytes;
} cb_layout_t;

typedef struct {
    const acc_plan_t *plan;
    int rank; /* this process's */
    acc_kernel_t *kernel;
    acc_dtype_t dt;
    acc_redop_t op;
    size_t es;
    uint64_t cap, scratch_cap;
    int kmax, staged;
    cb_layout_t *layouts; /* per rank */
    uint64_t *conn_off;   /* per connection, in the receiver's allocation: sent[kmax],
                             acked[kmax], then the staging buffer at conn_stage */
    uint64_t *conn_stage;
    uint64_t *ctr_off;   /* per signal counter, in the receiver's: val[kmax] */
    unsigned char **seg; /* per rank, as mapped in this process; NULL off this node */
    void *module, *fn, *fn_avg;
    void *tables;
    uint64_t d_ranks, d_conns, d_ctrs, d_params;
    uint32_t *status; /* pinned: the kernel's status words, read without synchronising */
    void *d_status;
    void *tmp_in; /* in-place calls of plans that cannot run in place: a copy of the input */
} cb_inst_t;

typedef struct cb_state {
    int device;
    acc_cuda_info_t info;
    char arch[16];
    char compiler[32]; /* "nvrtc 13.0": the database's kernels were built by it */
    int sharers;       /* ranks on this GPU */
    int *gpu_of;       /* per rank: the first rank on its GPU (same host and device) */
    const nccl_lib_t *nccl;
    void *ncomm;
    int own_ncomm;
    acc_kcache_t *cache;
    cb_inst_t **insts;
    size_t ninsts, insts_cap;
    struct cb_state *parked_next; /* aborted, waiting for a synchronisation (cuda_backend.c) */
} cb_state_t;

/* ---- instances (cuda_inst.c) ---- */
acc_status_t cb_inst_create(acc_comm_t *c, cb_state_t *s, const acc_plan_t *plan, acc_dtype_t dt,
                            acc_redop_t op, uint64_t cap, cb_inst_t **out);
void cb_inst_destroy(cb_inst_t *in);
/* The failure a launch of the instance left, or ACC_OK. */
acc_status_t cb_inst_status(const cb_inst_t *in, int timeout_ms);

/* ---- NCCL (cuda_nccl.c) ---- */
/* The backend's NCCL communicator: the one acc_comm_from_nccl was given, else one made with
 * the ranks (when NCCL opens everywhere and no two ranks share a GPU, which NCCL refuses). */
acc_status_t cb_nccl_setup(acc_comm_t *c, cb_state_t *s);
void cb_nccl_teardown(cb_state_t *s, int abort);
acc_status_t cb_nccl_call(acc_comm_t *c, cb_state_t *s, const rt_call_t *k);

#endif
