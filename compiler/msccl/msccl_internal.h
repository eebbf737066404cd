/*
 * msccl_internal.h - the MSCCL algorithm file as read from XML, before it becomes a plan.
 * msccl_import.c reads and checks the elements (every complaint names the file, the line, the
 * element and the attribute); msccl_lanes.c gives the thread blocks lanes, and msccl_build.c
 * turns their steps into the plan's operations and verifies it.  Internal to acc.
 */
#ifndef ACC_MSCCL_INTERNAL_H
#define ACC_MSCCL_INTERNAL_H

#include "acc_plan.h"

/* What a step type uses. */
enum { MS_SRC = 1, MS_DST = 2, MS_SENDS = 4, MS_RECVS = 8 };

typedef struct {
    uint8_t code;       /* acc_opcode_t */
    uint8_t uses;       /* MS_* */
    acc_ref_t src, dst; /* in the file's buffers (i/o/s = ACC_BUF_IN/OUT/SCRATCH) */
    int depid, deps;    /* thread block and step position waited for; -1 none */
    int hasdep;
    int line;
    int keep; /* becomes an operation (chain nops of acc's own files do not) */
    /* Where it was placed: operations [head_first, head] of lane head_lane are the step, or its
     * receiving half when a fused step is split over two lanes, with the nops that carry its
     * extra dependencies; [tail_first, tail] of tail_lane is the sending half (else the same as
     * head).  The step's own dependency sits on `head`; steps that wait for it wait for `tail`. */
    int head_lane, tail_lane;
    uint32_t head_first, head, tail_first, tail;
} ms_step_t;

typedef struct {
    int id, send, recv, chan;
    int hint_lane; /* acc_lane attribute, -1 when absent */
    int line;
    ms_step_t *steps;
    int nsteps;
    /* Lanes (msccl_lanes.c): of its sending and receiving connections (-1 without sending or
     * receiving steps), and its first one, where local steps before any connection step go. */
    int lane_send, lane_recv, lane;
    uint32_t tmp; /* scratch chunks for the split rrs steps (msccl_build.c) */
} ms_tb_t;

typedef struct {
    int id, line;
    uint32_t i_chunks, o_chunks, s_chunks;
    ms_tb_t *tbs; /* indexed by tb id */
    int ntbs;
} ms_gpu_t;

typedef struct {
    const char *file; /* for messages */
    int line;         /* of <algo> */
    char name[128];
    acc_coll_t coll;
    acc_proto_t proto;
    int ngpus, nchannels, nchunksperloop;
    int inplace, outofplace;
    int root;
    long long min_bytes, max_bytes;
    char extra[160]; /* nthreads=.. redop=.. maxcount=.. nthreadblocks=.. as found */
    /* acc's own attributes, written by acc_plan_export_msccl */
    int hints; /* every <tb> has acc_lane and <algo> has acc_nlanes */
    char acc_algo[ACC_PLAN_NAME_MAX];
    char acc_params[ACC_PLAN_PARAMS_MAX];
    int has_acc_algo, has_acc_params;
    int acc_slots, acc_nlanes;
    ms_gpu_t *gpus; /* indexed by gpu id */
} ms_algo_t;

void ms_algo_free(ms_algo_t *a);
/* Every thread block's lanes; *nlanes receives the plan's lane count. */
acc_status_t ms_assign_lanes(ms_algo_t *a, int *nlanes);
/* Thread blocks to lanes, steps to operations, and the plan; then acc_plan_verify, with the
 * verifier's finding traced back to the file's gpu, thread block, step and line. */
acc_status_t ms_build_plan(ms_algo_t *a, acc_plan_t **out);
/* "FILE:LINE: message" as an ACC_ERR_PARSE. */
acc_status_t ms_fail(const ms_algo_t *a, int line, const char *fmt, ...) ACC_PRINTF(3, 4);

#endif
