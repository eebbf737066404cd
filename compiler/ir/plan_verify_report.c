/* How the verifier says what it found: operations, chunk ranges and symbolic values in words,
 * and the failure that names them.  The stages of the verifier (plan_verify.c,
 * plan_verify_order.c, plan_verify_sim.c) all report through here. */
#include "plan_verify_internal.h"

#include <stdarg.h>

void pv_describe_ref(acc_ref_t ref, acc_buf_t *b)
{
    if (ref.cnt == 1)
        acc_buf_printf(b, "%s[%u]", acc_buf_name((acc_bufid_t)ref.buf), ref.off);
    else
        acc_buf_printf(b, "%s[%u:%llu]", acc_buf_name((acc_bufid_t)ref.buf), ref.off,
                       (unsigned long long)ref.off + ref.cnt);
}

static void describe_code(const acc_op_t *o, acc_buf_t *b)
{
    acc_buf_puts(b, acc_op_name((acc_opcode_t)o->code));
    switch (o->code) {
    case ACC_OP_SEND:
    case ACC_OP_PUT:
        acc_buf_printf(b, " to %d", o->peer);
        break;
    case ACC_OP_RECV:
    case ACC_OP_RECV_REDUCE_COPY:
    case ACC_OP_GET:
        acc_buf_printf(b, " from %d", o->peer);
        break;
    case ACC_OP_RECV_COPY_SEND:
    case ACC_OP_RECV_REDUCE_SEND:
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        acc_buf_printf(b, " from %d to %d", o->peer, o->peer2);
        break;
    case ACC_OP_SIGNAL:
        acc_buf_printf(b, " to %d slot %u", o->peer, o->slot);
        break;
    case ACC_OP_WAIT:
        acc_buf_printf(b, " for %d slot %u >= %u", o->peer, o->slot, o->value);
        break;
    default:
        break;
    }
}

void pv_describe_op(const pv_t *v, int rank, int lane, uint32_t op, acc_buf_t *b)
{
    acc_buf_printf(b, "rank %d lane %d op %u (", rank, lane, op);
    describe_code(pv_op(v, rank, lane, op), b);
    acc_buf_puts(b, ")");
}

acc_status_t pv_fail(const pv_t *v, int rank, int lane, uint32_t op, const char *fmt, ...)
{
    acc_buf_t b;
    va_list ap;
    acc_status_t st;

    acc_buf_init(&b);
    pv_describe_op(v, rank, lane, op, &b);
    acc_buf_puts(&b, ": ");
    va_start(ap, fmt);
    acc_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    st = acc_error_set(ACC_ERR_VERIFY, "%s", b.data ? b.data : "verification failed");
    acc_buf_free(&b);
    return st;
}

void pv_describe_value(const pv_t *v, uint32_t val, acc_buf_t *b)
{
    if (!val) {
        acc_buf_puts(b, "nothing (never written)");
        return;
    }
    if (acc_coll_reduces(v->plan->coll)) {
        acc_buf_printf(b, "the sum of in[%u] over ranks ", pv_value_chunk(&v->values, val));
        pv_value_ranks(&v->values, val, b);
    } else {
        acc_buf_printf(b, "in[%u] of rank %u", pv_value_chunk(&v->values, val),
                       pv_value_first_rank(&v->values, val));
    }
}
