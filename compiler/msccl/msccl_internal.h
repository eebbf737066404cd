/*
 * msccl_internal.h - the MSCCL algorithm file as read from XML, before it becomes a plan.
 * msccl_import.c reads and checks the elements (every complaint names the file, the line, the
 * element and the attribute); msccl_lanes.c maps thread blocks to lanes and builds the plan.
 * Internal to acc.
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
    int keep;    /* becomes an operation (chain nops of acc's own files do not) */
    uint32_t op; /* its operation index in the lane, once placed */
} ms_step_t;

typedef struct {
    int id, send, recv, chan;
    int hint_lane; /* acc_lane attribute, -1 when absent */
    int line;
    ms_step_t *steps;
    int nsteps;
    int lane; /* assigned lane */
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
/* Thread blocks to lanes, steps to operations, and the plan; then acc_plan_verify, with the
 * verifier's finding traced back to the file's gpu, thread block, step and line. */
acc_status_t ms_build_plan(ms_algo_t *a, acc_plan_t **out);

#endif
