/*
 * codegen_internal.h - what the pieces of code generation share (the module's layout and the
 * launch ABI are in acc_kernels.h).  Internal to the codegen stage.
 */
#ifndef ACC_CODEGEN_INTERNAL_H
#define ACC_CODEGEN_INTERNAL_H

#include "acc_kernels.h"

/* Bumped whenever the generated code changes meaning, so that cached CUBINs of an older
 * generator are never taken for new ones (the version is in every source's first line). */
#define ACC_CODEGEN_VERSION 4

/* The most sources one reduction of a generated kernel combines (ACC_MAXSRC of the kernel
 * library, whose reduce routine keeps their pointers in registers): a one-step reduction over
 * more ranks than this, such as a two-shot allreduce over the 72 GPUs of a GB200 NVL72 rack, has
 * no kernel. */
#define CG_MAXSRC  64
#define CG_STR_(x) #x
#define CG_STR(x)  CG_STR_(x)

/* ---- codegen pieces (codegen_*.c) --------------------------------------------------------- */

/* Operations that receive a message, and that send one (the fused forms do both). */
static inline int cg_receives(uint8_t code)
{
    return code >= ACC_OP_RECV && code <= ACC_OP_RECV_REDUCE_COPY_SEND;
}

static inline int cg_sends(uint8_t code)
{
    return code == ACC_OP_SEND || code == ACC_OP_RECV_COPY_SEND ||
           code == ACC_OP_RECV_REDUCE_SEND || code == ACC_OP_RECV_REDUCE_COPY_SEND;
}

/* What would make the generated code index out of bounds (codegen_check.c); a verified plan
 * passes. */
acc_status_t cg_check_plan(const acc_plan_t *p);

/* The fixed parts of a module (codegen_prelude.c, codegen_library.c): the type section for a
 * data type and reduction, the header, the device library's definitions, the plan's AVG
 * constants and the entry points.  A library is (type section, header, library); a plan's
 * part is (type section, header, plan constants, AVG, entry points, programs). */
void cg_types(acc_buf_t *out, acc_dtype_t dt, acc_redop_t op, int reduces);
void cg_header(acc_buf_t *out);
void cg_library(acc_buf_t *out);
void cg_average(acc_buf_t *out, acc_redop_t op, int reduces, int nranks);
void cg_entry(acc_buf_t *out);

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
} cg_t;

static inline const acc_op_t *cg_op(const cg_t *g, int rank, int lane, uint32_t k)
{
    return &g->p->progs[rank * g->p->nlanes + lane].ops[k];
}

/* Operations ia and ib (indices as above) have the same shape: what the code of a class
 * fixes, as opposed to what comes from its parameters.  (Programs also need equal lengths
 * and equal lengths of the lanes they depend on; see codegen.c.) */
static inline int cg_same_shape(const cg_t *g, size_t ia, const acc_op_t *a, size_t ib,
                                const acc_op_t *b)
{
    return a->code == b->code && a->src.buf == b->src.buf && a->src.cnt == b->src.cnt &&
           a->dst.buf == b->dst.buf && a->dst.cnt == b->dst.cnt && a->npeers == b->npeers &&
           a->dep_lane == b->dep_lane && g->publish[ia] == g->publish[ib];
}

/* Append the device function of program class c to out.  The values that differ between
 * the class's m programs become parameters: *nparams of them, in *cols (taken) column by
 * column, cols[j * m + i] being parameter j of the class's i-th member. */
acc_status_t cg_emit_class(const cg_t *g, int c, acc_buf_t *out, uint32_t **cols,
                           uint32_t *nparams);

#endif
