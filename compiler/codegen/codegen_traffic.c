/*
 * Memory traffic of a plan: what a roofline of the single-GPU emulation counts.  Every
 * operand an operation reads is read once and every destination written once; a message is
 * written into its staging slot by the sender and read from it by the receiver.
 *
 * Chunk sizes come from the cutting rule for input and output chunks; a scratch chunk is
 * counted at the average output chunk size (scratch chunks hold output-sized data), so the
 * figure is exact up to one element per scratch access.
 */
#include "acc_kernels.h"

static uint64_t ref_elems(const acc_plan_t *p, acc_ref_t r, uint64_t ein, uint64_t eout)
{
    uint64_t total = 0, first, n;
    uint32_t t;
    if (r.buf == ACC_BUF_SCRATCH)
        return (uint64_t)r.cnt * (p->out_chunks ? eout / p->out_chunks : 0);
    for (t = 0; t < r.cnt; t++) {
        acc_chunk_range(r.buf == ACC_BUF_IN ? ein : eout,
                        r.buf == ACC_BUF_IN ? p->in_chunks : p->out_chunks, r.off + t, &first, &n);
        total += n;
    }
    return total;
}

void acc_kernel_traffic(const acc_plan_t *plan, acc_dtype_t dt, uint64_t count, uint64_t *read,
                        uint64_t *written)
{
    uint64_t ein = acc_plan_buf_elems(plan, ACC_BUF_IN, count);
    uint64_t eout = acc_plan_buf_elems(plan, ACC_BUF_OUT, count), rd = 0, wr = 0;
    size_t i;
    uint32_t k;

    for (i = 0; i < (size_t)plan->nranks * plan->nlanes; i++) {
        const acc_lane_prog_t *prog = &plan->progs[i];
        for (k = 0; k < prog->nops; k++) {
            const acc_op_t *op = &prog->ops[k];
            /* Elements of the operation: its source's, else its destination's. */
            uint64_t n = op->src.cnt ? ref_elems(plan, op->src, ein, eout)
                                     : ref_elems(plan, op->dst, ein, eout);
            switch (op->code) {
            case ACC_OP_SEND:
            case ACC_OP_RECV:
            case ACC_OP_COPY:
            case ACC_OP_PUT:
            case ACC_OP_GET:
                rd += n;
                wr += n;
                break;
            case ACC_OP_RECV_REDUCE_COPY:
            case ACC_OP_RECV_REDUCE_SEND:
            case ACC_OP_REDUCE:
                rd += 2 * n;
                wr += n;
                break;
            case ACC_OP_RECV_COPY_SEND:
                rd += n;
                wr += 2 * n;
                break;
            case ACC_OP_RECV_REDUCE_COPY_SEND:
                rd += 2 * n;
                wr += 2 * n;
                break;
            case ACC_OP_REDUCE_PEERS:
                rd += (uint64_t)op->npeers * n;
                wr += n;
                break;
            default:
                break;
            }
        }
    }
    *read = rd * acc_dtype_size(dt);
    *written = wr * acc_dtype_size(dt);
}
