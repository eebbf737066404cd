/*
 * Code generation, what a plan must be for a kernel to exist: structurally sound (what would
 * make the generated code index out of bounds is refused, never compiled), and with a protocol
 * acc has a kernel for (acc_kernel_supports).  A plan that passed acc_plan_verify passes the
 * first; the selection asks the second before it simulates a protocol.
 */
#include "codegen_internal.h"

static int uses_src(uint8_t code)
{
    return code == ACC_OP_SEND || code == ACC_OP_RECV_REDUCE_COPY ||
           code == ACC_OP_RECV_REDUCE_SEND || code == ACC_OP_RECV_REDUCE_COPY_SEND ||
           code == ACC_OP_COPY || code == ACC_OP_REDUCE || code == ACC_OP_PUT ||
           code == ACC_OP_GET || code == ACC_OP_REDUCE_PEERS;
}

static int uses_dst(uint8_t code)
{
    return code == ACC_OP_RECV || code == ACC_OP_RECV_REDUCE_COPY ||
           code == ACC_OP_RECV_COPY_SEND || code == ACC_OP_RECV_REDUCE_COPY_SEND ||
           code == ACC_OP_COPY || code == ACC_OP_REDUCE || code == ACC_OP_PUT ||
           code == ACC_OP_GET || code == ACC_OP_REDUCE_PEERS;
}

static int ref_ok(const acc_plan_t *p, acc_ref_t r)
{
    uint32_t lim = r.buf == ACC_BUF_IN    ? p->in_chunks
                   : r.buf == ACC_BUF_OUT ? p->out_chunks
                                          : p->scratch_chunks;
    return r.buf < ACC_BUF_COUNT && r.cnt > 0 && (uint64_t)r.off + r.cnt <= lim;
}

/* What would make the generated code index out of bounds; a verified plan passes. */
static acc_status_t check_op(const acc_plan_t *p, int r, int l, uint32_t k, const acc_op_t *op)
{
    const char *bad = NULL;
    uint32_t j;

    if (op->code >= ACC_OP_COUNT)
        bad = "unknown operation code";
    else if (uses_src(op->code) && !ref_ok(p, op->src))
        bad = "source chunks empty or outside the buffer";
    else if (uses_dst(op->code) && !ref_ok(p, op->dst))
        bad = "destination chunks empty or outside the buffer";
    else if (uses_src(op->code) && uses_dst(op->code) && op->src.cnt != op->dst.cnt)
        bad = "source and destination have different chunk counts";
    else if ((cg_receives(op->code) || op->code == ACC_OP_SEND || op->code == ACC_OP_PUT ||
              op->code == ACC_OP_GET || op->code == ACC_OP_SIGNAL || op->code == ACC_OP_WAIT) &&
             (op->peer < 0 || op->peer >= p->nranks))
        bad = "peer outside the ranks";
    else if (cg_sends(op->code) && op->code != ACC_OP_SEND &&
             (op->peer2 < 0 || op->peer2 >= p->nranks))
        bad = "forwarding peer outside the ranks";
    else if (op->dep_lane >= 0 &&
             (op->dep_lane >= p->nlanes || op->dep_lane == l || op->dep_op < 0 ||
              (uint32_t)op->dep_op >= acc_plan_prog(p, r, op->dep_lane)->nops))
        bad = "dependency on an operation that does not exist";
    else if (op->code == ACC_OP_REDUCE_PEERS &&
             (op->npeers == 0 || (uint64_t)op->peers_off + op->npeers > p->npeer_pool))
        bad = "peer list outside the plan's pool";
    else if (op->code == ACC_OP_REDUCE_PEERS && op->npeers > CG_MAXSRC)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "codegen: rank %d lane %d operation %u reduces over %u ranks; "
                             "generated kernels combine at most %d",
                             r, l, k, op->npeers, CG_MAXSRC);
    for (j = 0; !bad && op->code == ACC_OP_REDUCE_PEERS && j < op->npeers; j++)
        if (p->peer_pool[op->peers_off + j] >= (uint32_t)p->nranks)
            bad = "peer list names a rank outside the plan";
    if (bad)
        return acc_error_set(ACC_ERR_INVALID, "codegen: rank %d lane %d operation %u (%s): %s", r,
                             l, k, acc_op_name((acc_opcode_t)op->code), bad);
    return ACC_OK;
}

/* Does the plan pass messages?  (LL's flags ride in them.) */
static int passes_messages(const acc_plan_t *p)
{
    size_t i;
    uint32_t k;
    for (i = 0; i < (size_t)p->nranks * (size_t)p->nlanes; i++)
        for (k = 0; k < p->progs[i].nops; k++)
            if (cg_sends(p->progs[i].ops[k].code))
                return 1;
    return 0;
}

/* The widest reduction of the plan: the most ranks one operation combines. */
static uint32_t widest_reduction(const acc_plan_t *p)
{
    size_t i;
    uint32_t k, most = 0;
    for (i = 0; i < (size_t)p->nranks * (size_t)p->nlanes; i++)
        for (k = 0; k < p->progs[i].nops; k++)
            if (p->progs[i].ops[k].code == ACC_OP_REDUCE_PEERS && p->progs[i].ops[k].npeers > most)
                most = p->progs[i].ops[k].npeers;
    return most;
}

acc_status_t acc_kernel_supports(const acc_plan_t *plan, acc_proto_t proto)
{
    uint32_t widest;
    if (!plan)
        return acc_error_set(ACC_ERR_INVALID, "codegen: no plan");
    if ((widest = widest_reduction(plan)) > CG_MAXSRC)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "codegen: %s %s reduces over %u ranks in one operation; generated "
                             "kernels combine at most %d",
                             acc_coll_name(plan->coll), plan->algo, widest, CG_MAXSRC);
    switch (proto) {
    case ACC_PROTO_SIMPLE:
        return ACC_OK;
    case ACC_PROTO_LL:
        if (passes_messages(plan))
            return ACC_OK;
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "codegen: %s %s passes no messages, so LL has nothing to carry its "
                             "flags in; its kernel is Simple's (proto: Simple)",
                             acc_coll_name(plan->coll), plan->algo);
    case ACC_PROTO_LL128:
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "codegen: %s %s asks for LL128, which acc generates no kernel for: it "
                             "relies on NVLink delivering each 128-byte warp store whole, which "
                             "the PTX memory model does not promise; use Simple or LL (acc-compile "
                             "--proto)",
                             acc_coll_name(plan->coll), plan->algo);
    default:
        return acc_error_set(ACC_ERR_INVALID, "codegen: unknown protocol %d", (int)proto);
    }
}

acc_status_t cg_check_plan(const acc_plan_t *p)
{
    int r, l;
    uint32_t k;
    acc_status_t st;

    if (p->nranks < 1 || p->nlanes < 1 || p->in_chunks < 1 || p->out_chunks < 1 || p->slots < 1)
        return acc_error_set(ACC_ERR_INVALID,
                             "codegen: plan '%s' has %d ranks, %d lanes, %u/%u chunks and %d "
                             "slots; each must be at least 1",
                             p->algo, p->nranks, p->nlanes, p->in_chunks, p->out_chunks, p->slots);
    if ((p->coll == ACC_COLL_BROADCAST || p->coll == ACC_COLL_REDUCE) &&
        (p->root < 0 || p->root >= p->nranks))
        return acc_error_set(ACC_ERR_INVALID, "codegen: %s plan has root %d of %d ranks",
                             acc_coll_name(p->coll), p->root, p->nranks);
    for (r = 0; r < p->nranks; r++)
        for (l = 0; l < p->nlanes; l++) {
            const acc_lane_prog_t *prog = acc_plan_prog(p, r, l);
            for (k = 0; k < prog->nops; k++)
                if ((st = check_op(p, r, l, k, &prog->ops[k])) != ACC_OK)
                    return st;
        }
    return ACC_OK;
}
