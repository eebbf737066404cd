/* acc_plan_verify: the header and every operation checked on their own (fields, bounds, peers),
 * the buffer layout of one mode (out of place, or in place with the aliasing of acc_plan.h), then
 * symbolic execution (plan_verify_sim.c) with happens-before checks (plan_verify_order.c), and
 * finally the postcondition of the collective on every output chunk. */
#include "plan_verify_internal.h"

#include <string.h>

/* Fields an operation uses; every other field must hold its "unused" value (acc_op_init), so that
 * a plan means one thing and its text form can say all of it. */
enum { U_PEER = 1, U_PEER2 = 2, U_SRC = 4, U_DST = 8, U_SLOT = 16, U_VALUE = 32, U_PEERS = 64 };

static unsigned op_uses(unsigned code)
{
    switch (code) {
    case ACC_OP_SEND:
        return U_PEER | U_SRC;
    case ACC_OP_RECV:
        return U_PEER | U_DST;
    case ACC_OP_RECV_REDUCE_COPY:
        return U_PEER | U_SRC | U_DST;
    case ACC_OP_RECV_COPY_SEND:
        return U_PEER | U_PEER2 | U_DST;
    case ACC_OP_RECV_REDUCE_SEND:
        return U_PEER | U_PEER2 | U_SRC;
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        return U_PEER | U_PEER2 | U_SRC | U_DST;
    case ACC_OP_COPY:
    case ACC_OP_REDUCE:
        return U_SRC | U_DST;
    case ACC_OP_PUT:
    case ACC_OP_GET:
        return U_PEER | U_SRC | U_DST;
    case ACC_OP_REDUCE_PEERS:
        return U_SRC | U_DST | U_PEERS;
    case ACC_OP_SIGNAL:
        return U_PEER | U_SLOT;
    case ACC_OP_WAIT:
        return U_PEER | U_SLOT | U_VALUE;
    default:
        return 0;
    }
}

static int op_reduces(unsigned code)
{
    return code == ACC_OP_RECV_REDUCE_COPY || code == ACC_OP_RECV_REDUCE_SEND ||
           code == ACC_OP_RECV_REDUCE_COPY_SEND || code == ACC_OP_REDUCE ||
           code == ACC_OP_REDUCE_PEERS;
}

/* ---- header ----------------------------------------------------------------------------- */

/* nexec: the ranks that run (a quotient keeps their chunks only). */
static acc_status_t check_header(const acc_plan_t *p, uint64_t nexec)
{
    uint64_t n, in, out;
    int rooted;

    if (p->coll < 0 || p->coll >= ACC_COLL_COUNT)
        return acc_error_set(ACC_ERR_VERIFY, "plan: unknown collective %d", (int)p->coll);
    if (p->nranks < 1 || p->nlanes < 1 || !p->progs)
        return acc_error_set(ACC_ERR_VERIFY, "plan: %d ranks x %d lanes is not a plan", p->nranks,
                             p->nlanes);
    if (p->nranks > PV_MAX_RANKS)
        return acc_error_set(ACC_ERR_RANGE,
                             "plan: %d ranks is more than the verifier handles "
                             "(%d)",
                             p->nranks, PV_MAX_RANKS);
    if (p->slots < 1)
        return acc_error_set(ACC_ERR_VERIFY,
                             "plan: slots is %d; a connection needs at least "
                             "one message slot",
                             p->slots);
    if (p->proto < 0 || p->proto >= ACC_PROTO_COUNT)
        return acc_error_set(ACC_ERR_VERIFY, "plan: unknown protocol %d", (int)p->proto);
    rooted = p->coll == ACC_COLL_BROADCAST || p->coll == ACC_COLL_REDUCE;
    if (rooted && (p->root < 0 || p->root >= p->nranks))
        return acc_error_set(ACC_ERR_VERIFY, "plan: %s needs a root in 0..%d, not %d",
                             acc_coll_name(p->coll), p->nranks - 1, p->root);
    if (!rooted && p->root != -1)
        return acc_error_set(ACC_ERR_VERIFY, "plan: root is %d but %s has no root (use -1)",
                             p->root, acc_coll_name(p->coll));
    n = (uint64_t)p->nranks;
    in = p->in_chunks;
    out = p->out_chunks;
    switch (p->coll) {
    case ACC_COLL_ALLGATHER:
        if (in < 1 || out != n * in)
            return acc_error_set(ACC_ERR_VERIFY,
                                 "plan: allgather needs out_chunks = nranks x "
                                 "in_chunks (%llu x %llu), has %llu",
                                 (unsigned long long)n, (unsigned long long)in,
                                 (unsigned long long)out);
        break;
    case ACC_COLL_REDUCE_SCATTER:
        if (out < 1 || in != n * out)
            return acc_error_set(ACC_ERR_VERIFY,
                                 "plan: reduce_scatter needs in_chunks = nranks "
                                 "x out_chunks (%llu x %llu), has %llu",
                                 (unsigned long long)n, (unsigned long long)out,
                                 (unsigned long long)in);
        break;
    case ACC_COLL_ALLTOALL:
        if (in < n || in != out || in % n)
            return acc_error_set(ACC_ERR_VERIFY,
                                 "plan: alltoall needs in_chunks = out_chunks, "
                                 "a multiple of nranks %llu; has %llu and %llu",
                                 (unsigned long long)n, (unsigned long long)in,
                                 (unsigned long long)out);
        break;
    default:
        if (in < 1 || in != out)
            return acc_error_set(ACC_ERR_VERIFY,
                                 "plan: %s needs in_chunks = out_chunks >= 1, "
                                 "has %llu and %llu",
                                 acc_coll_name(p->coll), (unsigned long long)in,
                                 (unsigned long long)out);
        break;
    }
    if (nexec * (in + out + p->scratch_chunks) > PV_MAX_LOCATIONS)
        return acc_error_set(ACC_ERR_RANGE,
                             "plan: %llu ranks x (%llu + %llu + %u) chunks is "
                             "more than the verifier handles (%u chunk locations)",
                             (unsigned long long)nexec, (unsigned long long)in,
                             (unsigned long long)out, p->scratch_chunks, PV_MAX_LOCATIONS);
    return ACC_OK;
}

/* ---- layout --------------------------------------------------------------------------------- */

/* Map logical buffers to physical storage for the mode (acc_plan.h, "In place"). */
static void setup_layout(pv_t *v)
{
    const acc_plan_t *p = v->plan;
    int b;
    for (b = 0; b < ACC_BUF_COUNT; b++) {
        v->pmap[b] = (uint8_t)b;
        v->pshift[b] = 0;
    }
    v->psize[ACC_BUF_IN] = p->in_chunks;
    v->psize[ACC_BUF_OUT] = p->out_chunks;
    v->psize[ACC_BUF_SCRATCH] = p->scratch_chunks;
    if (v->inplace) {
        switch (p->coll) {
        case ACC_COLL_ALLGATHER:
            v->pmap[ACC_BUF_IN] = ACC_BUF_OUT;
            v->pshift[ACC_BUF_IN] = p->in_chunks;
            v->psize[ACC_BUF_IN] = 0;
            break;
        case ACC_COLL_REDUCE_SCATTER:
            v->pmap[ACC_BUF_OUT] = ACC_BUF_IN;
            v->pshift[ACC_BUF_OUT] = p->out_chunks;
            v->psize[ACC_BUF_OUT] = 0;
            break;
        default:
            v->pmap[ACC_BUF_IN] = ACC_BUF_OUT;
            v->psize[ACC_BUF_IN] = 0;
            break;
        }
    }
    v->pbase[ACC_BUF_IN] = 0;
    v->pbase[ACC_BUF_OUT] = v->psize[ACC_BUF_IN];
    v->pbase[ACC_BUF_SCRATCH] = v->psize[ACC_BUF_IN] + v->psize[ACC_BUF_OUT];
    v->rank_locs = v->pbase[ACC_BUF_SCRATCH] + v->psize[ACC_BUF_SCRATCH];
}

static uint32_t buf_chunks(const acc_plan_t *p, unsigned buf)
{
    return buf == ACC_BUF_IN    ? p->in_chunks
           : buf == ACC_BUF_OUT ? p->out_chunks
                                : p->scratch_chunks;
}

/* Out of place, a broadcast's non-root inputs and a reduce's non-root outputs may be NULL
 * (NCCL's convention), so no operation may touch them. */
static int buf_absent(const pv_t *v, int rank, unsigned buf)
{
    const acc_plan_t *p = v->plan;
    if (v->inplace || rank == p->root)
        return 0;
    return (p->coll == ACC_COLL_BROADCAST && buf == ACC_BUF_IN) ||
           (p->coll == ACC_COLL_REDUCE && buf == ACC_BUF_OUT);
}

/* ---- one operation on its own -------------------------------------------------------------- */

static acc_status_t check_ref(const pv_t *v, int rank, int lane, uint32_t i, const char *what,
                              acc_ref_t ref, int at, int write)
{
    acc_buf_t b;
    acc_status_t st;
    uint32_t size;
    int bad;

    if (ref.buf >= ACC_BUF_COUNT)
        return pv_fail(v, rank, lane, i, "%s names buffer %u (in, out or scratch expected)", what,
                       ref.buf);
    size = buf_chunks(v->plan, ref.buf);
    bad = ref.cnt == 0 || (uint64_t)ref.off + ref.cnt > size || buf_absent(v, at, ref.buf) ||
          (write && ref.buf == ACC_BUF_IN && !v->inplace);
    if (!bad)
        return ACC_OK;
    acc_buf_init(&b);
    pv_describe_ref(ref, &b);
    if (ref.cnt == 0)
        st = pv_fail(v, rank, lane, i, "%s %s is an empty chunk range", what, b.data ? b.data : "");
    else if ((uint64_t)ref.off + ref.cnt > size)
        st = pv_fail(v, rank, lane, i, "%s %s is out of bounds: %s has %u chunks", what,
                     b.data ? b.data : "", acc_buf_name((acc_bufid_t)ref.buf), size);
    else if (buf_absent(v, at, ref.buf))
        st = pv_fail(v, rank, lane, i,
                     "%s %s of rank %d: out of place, %s's non-root %s "
                     "buffer may not exist",
                     what, b.data ? b.data : "", at, acc_coll_name(v->plan->coll),
                     acc_buf_name((acc_bufid_t)ref.buf));
    else
        st = pv_fail(v, rank, lane, i,
                     "%s %s writes the input buffer, which a collective must "
                     "leave unchanged out of place",
                     what, b.data ? b.data : "");
    acc_buf_free(&b);
    return st;
}

static acc_status_t check_peer(const pv_t *v, int rank, int lane, uint32_t i, const char *what,
                               int peer, int self_ok)
{
    if (peer < 0 || peer >= v->nranks)
        return pv_fail(v, rank, lane, i, "%s %d is not a rank (0..%d)", what, peer, v->nranks - 1);
    if (peer == rank && !self_ok)
        return pv_fail(v, rank, lane, i, "%s is the rank itself (use copy for local data)", what);
    return ACC_OK;
}

/* Source and destination of one local operation must be the same chunks or disjoint ones: a
 * partial overlap would make the result depend on the order chunks are processed in. */
static acc_status_t check_overlap(const pv_t *v, int rank, int lane, uint32_t i, const acc_op_t *o)
{
    uint64_t s0, d0;
    if (v->pmap[o->src.buf] != v->pmap[o->dst.buf])
        return ACC_OK;
    s0 = o->src.off + (uint64_t)rank * v->pshift[o->src.buf];
    d0 = o->dst.off + (uint64_t)rank * v->pshift[o->dst.buf];
    if (s0 == d0 && o->src.cnt == o->dst.cnt)
        return ACC_OK;
    if (s0 < d0 + o->dst.cnt && d0 < s0 + o->src.cnt)
        return pv_fail(v, rank, lane, i, "src and dst overlap in part%s",
                       v->inplace ? " (in place, where in and out alias)" : "");
    return ACC_OK;
}

static acc_status_t check_op(const pv_t *v, int rank, int lane, uint32_t i, uint64_t *work)
{
    const acc_plan_t *p = v->plan;
    const acc_op_t *o = pv_op(v, rank, lane, i);
    unsigned u = o->code < ACC_OP_COUNT ? op_uses(o->code) : 0;
    acc_status_t st;
    uint32_t k;

    if (o->code >= ACC_OP_COUNT)
        return acc_error_set(ACC_ERR_VERIFY, "rank %d lane %d op %u: unknown operation code %u",
                             rank, lane, i, o->code);
    if (!(u & U_PEER) && o->peer != -1)
        return pv_fail(v, rank, lane, i, "peer is %d but %s has no peer", o->peer,
                       acc_op_name((acc_opcode_t)o->code));
    if (!(u & U_PEER2) && o->peer2 != -1)
        return pv_fail(v, rank, lane, i, "peer2 is %d but %s forwards nothing", o->peer2,
                       acc_op_name((acc_opcode_t)o->code));
    if (!(u & U_SRC) && (o->src.buf || o->src.off || o->src.cnt))
        return pv_fail(v, rank, lane, i, "src is set but %s does not use it",
                       acc_op_name((acc_opcode_t)o->code));
    if (!(u & U_DST) && (o->dst.buf || o->dst.off || o->dst.cnt))
        return pv_fail(v, rank, lane, i, "dst is set but %s does not use it",
                       acc_op_name((acc_opcode_t)o->code));
    if ((!(u & U_SLOT) && o->slot) || (!(u & U_VALUE) && o->value) || (!(u & U_PEERS) && o->npeers))
        return pv_fail(v, rank, lane, i, "%s is set but %s does not use it",
                       !(u & U_SLOT) && o->slot     ? "slot"
                       : !(u & U_VALUE) && o->value ? "value"
                                                    : "peers",
                       acc_op_name((acc_opcode_t)o->code));
    if (op_reduces(o->code) && !acc_coll_reduces(p->coll))
        return pv_fail(v, rank, lane, i, "%s does not reduce, so no operation may combine values",
                       acc_coll_name(p->coll));
    if ((u & U_PEER) && (st = check_peer(v, rank, lane, i, "peer", o->peer,
                                         o->code == ACC_OP_SIGNAL || o->code == ACC_OP_WAIT)))
        return st;
    if ((u & U_PEER2) && (st = check_peer(v, rank, lane, i, "peer2", o->peer2, 0)))
        return st;
    /* A quotient shares memory and counters inside its period only (the caller checked). */
    if (v->quot && o->peer >= v->nexec &&
        (o->code == ACC_OP_PUT || o->code == ACC_OP_GET || o->code == ACC_OP_SIGNAL ||
         o->code == ACC_OP_WAIT))
        return pv_fail(v, rank, lane, i, "peer %d is outside the quotient's %d ranks", o->peer,
                       v->nexec);
    if (o->dep_lane != -1 || o->dep_op != -1) {
        if (o->dep_lane < 0 || o->dep_lane >= v->nlanes || o->dep_op < 0 ||
            (uint32_t)o->dep_op >= p->progs[(size_t)rank * v->nlanes + o->dep_lane].nops)
            return pv_fail(v, rank, lane, i, "depends on lane %d op %d, which does not exist",
                           o->dep_lane, o->dep_op);
        if (o->dep_lane == lane)
            return pv_fail(v, rank, lane, i,
                           "depends on op %d of its own lane; a dependency "
                           "names another lane (program order already orders its own)",
                           o->dep_op);
    }
    if (u & U_SRC) {
        int at = o->code == ACC_OP_GET ? o->peer : rank;
        if ((st = check_ref(v, rank, lane, i, "src", o->src, at, 0)) != ACC_OK)
            return st;
        *work += o->src.cnt;
    }
    if (u & U_DST) {
        int at = o->code == ACC_OP_PUT ? o->peer : rank;
        if ((st = check_ref(v, rank, lane, i, "dst", o->dst, at, 1)) != ACC_OK)
            return st;
        *work += o->dst.cnt;
    }
    if ((u & U_SRC) && (u & U_DST) && o->src.cnt != o->dst.cnt)
        return pv_fail(v, rank, lane, i, "src has %u chunks but dst %u", o->src.cnt, o->dst.cnt);
    if ((u & U_SRC) && (u & U_DST) && o->code != ACC_OP_PUT && o->code != ACC_OP_GET &&
        o->code != ACC_OP_REDUCE_PEERS && (st = check_overlap(v, rank, lane, i, o)) != ACC_OK)
        return st;
    if (u & U_PEERS) {
        if (o->npeers == 0 || (uint64_t)o->peers_off + o->npeers > p->npeer_pool)
            return pv_fail(v, rank, lane, i,
                           "peer list of %u ranks at %u is outside the plan's "
                           "pool of %u",
                           o->npeers, o->peers_off, p->npeer_pool);
        for (k = 0; k < o->npeers; k++) {
            uint32_t r = p->peer_pool[o->peers_off + k], j;
            if (r >= (uint32_t)v->nexec)
                return pv_fail(v, rank, lane, i, "peer list names %u, which is not a rank", r);
            for (j = 0; j < k; j++)
                if (p->peer_pool[o->peers_off + j] == r)
                    return pv_fail(v, rank, lane, i, "peer list names rank %u twice", r);
            if (buf_absent(v, (int)r, o->src.buf))
                return pv_fail(v, rank, lane, i,
                               "reads %s of rank %u, which may not exist out "
                               "of place",
                               acc_buf_name((acc_bufid_t)o->src.buf), r);
        }
        *work += (uint64_t)o->src.cnt * o->npeers;
    }
    return ACC_OK;
}

static acc_status_t check_ops(const pv_t *v)
{
    uint64_t work = 0;
    int r, l;
    uint32_t i;
    acc_status_t st;
    for (r = 0; r < v->nexec; r++)
        for (l = 0; l < v->nlanes; l++) {
            const acc_lane_prog_t *prog = &v->plan->progs[(size_t)r * v->nlanes + l];
            if (prog->nops && !prog->ops)
                return acc_error_set(ACC_ERR_VERIFY,
                                     "rank %d lane %d: %u operations without "
                                     "storage",
                                     r, l, prog->nops);
            for (i = 0; i < prog->nops; i++)
                if ((st = check_op(v, r, l, i, &work)) != ACC_OK)
                    return st;
        }
    if (work > PV_MAX_WORK)
        return acc_error_set(ACC_ERR_RANGE,
                             "plan: its operations touch %llu chunks in all, "
                             "more than the verifier handles (%llu)",
                             (unsigned long long)work, (unsigned long long)PV_MAX_WORK);
    return ACC_OK;
}

/* ---- initial state and postcondition ---------------------------------------------------- */

static acc_status_t init_locations(pv_t *v)
{
    const acc_plan_t *p = v->plan;
    size_t total = (size_t)v->nexec * v->rank_locs;
    char what[96];
    acc_status_t st;
    int r;
    uint32_t i;

    /* The largest allocation of a proof, made first: a plan too large for the machine is
     * refused before anything else is (the values grow later, within the budget). */
    snprintf(what, sizeof(what), "verifying %s on %d ranks (%zu chunk locations)", p->algo,
             v->nranks, total);
    if ((st = acc_mem_check((uint64_t)total * sizeof(pv_loc_t), what,
                            "prove plans of this size on a machine with more memory, or fewer "
                            "ranks; rings and hier with --inner ring --outer ring are proven "
                            "by class without it")) !=
        ACC_OK)
        return st;
    v->locs = acc_mem_alloc((total ? total : 1) * sizeof(pv_loc_t));
    if (!v->locs)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory verifying a plan of %d ranks",
                             v->nranks);
    for (r = 0; r < v->nexec; r++) {
        for (i = 0; i < v->rank_locs; i++) {
            pv_loc_t *l = &v->locs[(size_t)r * v->rank_locs + i];
            l->val = 0;
            pv_order_init_loc(v, r, l);
        }
        if (p->coll == ACC_COLL_BROADCAST && r != p->root)
            continue;
        for (i = 0; i < p->in_chunks; i++) {
            uint32_t val = pv_value_single(&v->values, i, (uint32_t)r);
            if (val == PV_NONE)
                return acc_error_set(ACC_ERR_NOMEM, "out of memory verifying a plan");
            pv_loc(v, r, ACC_BUF_IN, i)->val = val;
        }
    }
    return ACC_OK;
}

/* What out_r[k] must hold: input chunk *chunk of rank *src (reducing collectives: of every rank).
 * 0 when the collective puts no requirement on that chunk. */
static int expected(const acc_plan_t *p, int r, uint32_t k, uint32_t *chunk, uint32_t *src)
{
    uint32_t n = (uint32_t)p->nranks, c;
    *src = 0;
    switch (p->coll) {
    case ACC_COLL_ALLREDUCE:
        *chunk = k;
        return 1;
    case ACC_COLL_ALLGATHER:
        c = p->in_chunks;
        *src = k / c;
        *chunk = k % c;
        return 1;
    case ACC_COLL_REDUCE_SCATTER:
        *chunk = (uint32_t)r * p->out_chunks + k;
        return 1;
    case ACC_COLL_BROADCAST:
        *src = (uint32_t)p->root;
        *chunk = k;
        return 1;
    case ACC_COLL_REDUCE:
        *chunk = k;
        return r == p->root;
    case ACC_COLL_ALLTOALL:
        c = p->in_chunks / n;
        *src = k / c;
        *chunk = (uint32_t)r * c + k % c;
        return 1;
    default:
        return 0;
    }
}

static acc_status_t check_post(pv_t *v)
{
    const acc_plan_t *p = v->plan;
    int reduces = acc_coll_reduces(p->coll), r;
    uint32_t k, chunk, src, bad = 0;
    acc_status_t st = ACC_OK;
    acc_buf_t b;

    acc_buf_init(&b);
    for (r = 0; r < v->nexec; r++) {
        for (k = 0; k < p->out_chunks; k++) {
            pv_loc_t *l = pv_loc(v, r, ACC_BUF_OUT, k);
            int ok;
            if (!expected(p, r, k, &chunk, &src))
                continue;
            ok = l->val && pv_value_chunk(&v->values, l->val) == chunk &&
                 (reduces ? pv_value_is_all(&v->values, l->val, (uint32_t)v->nranks)
                          : pv_value_is_single(&v->values, l->val, src));
            if (ok || bad++)
                continue;
            /* Lead with the operation that wrote the chunk last, where there is one. */
            if (l->val && l->wthr != PV_NONE && l->wthr % v->order.stride < (uint32_t)v->nlanes) {
                uint32_t g = v->order.gid[r], stride = v->order.stride;
                uint32_t wr = v->order.members[v->order.gfirst[g] + l->wthr / stride];
                pv_describe_op(v, (int)wr, (int)(l->wthr % stride), l->wclk - 1, &b);
                acc_buf_printf(&b, ": chunk out[%u] of rank %d ", k, r);
            } else {
                acc_buf_printf(&b, "rank %d: chunk out[%u] ", r, k);
            }
            if (reduces)
                acc_buf_printf(&b, "expects the sum of in[%u] over ranks 0-%d, holds ", chunk,
                               v->nranks - 1);
            else
                acc_buf_printf(&b, "expects in[%u] of rank %u, holds ", chunk, src);
            pv_describe_value(v, l->val, &b);
        }
    }
    if (bad) {
        if (bad > 1)
            acc_buf_printf(&b, " (%u wrong output chunks in all)", bad);
        st = acc_error_set(ACC_ERR_VERIFY, "%s", b.data ? b.data : "wrong output");
    }
    acc_buf_free(&b);
    return st;
}

/* ---- entry points ----------------------------------------------------------------------- */

/* Verify in one buffer mode; finals (optional) receives the PV_FINAL_* bits per operation. */
static acc_status_t verify(const acc_plan_t *plan, int inplace, uint8_t *finals, size_t *base,
                           const plan_quot_map_t *quot)
{
    pv_t v;
    acc_status_t st;

    if (!plan)
        return acc_error_set(ACC_ERR_INVALID, "acc_plan_verify: no plan");
    if (plan->view)
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_plan_verify: rank %d's view of %s holds one rank's programs; "
                             "only a whole plan is proven",
                             plan->view->rank, plan->algo);
    if (plan->period && (!quot || plan->nranks % plan->period))
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_plan_verify: %s lists %d of its %d ranks' programs (a quotient "
                             "for the simulator); only a whole plan is proven",
                             plan->algo, plan->period, plan->nranks);
    memset(&v, 0, sizeof(v));
    v.finals = finals;
    v.final_base = base;
    v.plan = plan;
    v.inplace = inplace ? 1 : 0;
    v.nranks = plan->nranks;
    v.nexec = quot && quot->xor_mode ? 1 : plan->period ? plan->period : plan->nranks;
    v.quot = plan->period || (quot && quot->xor_mode) ? quot : NULL;
    v.nlanes = plan->nlanes;
    v.values.nranks = (uint32_t)plan->nranks;
    if ((st = check_header(plan, (uint64_t)v.nexec)) != ACC_OK)
        goto out;
    setup_layout(&v);
    if ((st = check_ops(&v)) != ACC_OK)
        goto out;
    if ((st = pv_sim_setup(&v)) != ACC_OK)
        goto out;
    if ((st = pv_order_setup(&v)) != ACC_OK)
        goto out;
    if ((st = init_locations(&v)) != ACC_OK)
        goto out;
    if ((st = pv_sim_run(&v)) != ACC_OK)
        goto out;
    if ((st = pv_order_finish(&v)) != ACC_OK)
        goto out;
    st = check_post(&v);
out:
    pv_sim_free(&v);
    pv_order_free(&v);
    pv_values_free(&v.values);
    acc_mem_free(v.locs);
    return st;
}

acc_status_t acc_plan_verify_mode(const acc_plan_t *plan, int inplace)
{
    return verify(plan, inplace, NULL, NULL, NULL);
}

acc_status_t plan_verify_quotient(const acc_plan_t *q, int inplace, const plan_quot_map_t *map)
{
    return verify(q, inplace, NULL, NULL, map);
}

acc_status_t acc_plan_final_reductions(const acc_plan_t *plan, uint8_t **flags, size_t *n)
{
    size_t total = 0, *base = NULL, i, np;
    uint8_t *f = NULL;
    acc_status_t st;

    *flags = NULL;
    *n = 0;
    if (!plan)
        return acc_error_set(ACC_ERR_INVALID, "acc_plan_final_reductions: no plan");
    np = (size_t)plan->nranks * (size_t)plan->nlanes;
    if (!(base = acc_mem_calloc(np + 1, sizeof(size_t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (i = 0; i < np; i++) {
        base[i] = total;
        total += plan->progs[i].nops;
    }
    if (!(f = acc_mem_calloc(total + 1, 1))) {
        acc_mem_free(base);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    }
    st = verify(plan, 0, f, base, NULL);
    for (i = 0; i < total && st == ACC_OK; i++) {
        if (f[i] == (PV_FINAL_ALL | PV_FINAL_PART))
            st = acc_error_set(ACC_ERR_UNSUPPORTED,
                               "%s %s: an operation completes some of its chunks' reductions "
                               "and not others",
                               acc_coll_name(plan->coll), plan->algo);
        f[i] = f[i] == PV_FINAL_ALL;
    }
    acc_mem_free(base);
    if (st != ACC_OK) {
        acc_mem_free(f);
        return st;
    }
    *flags = f;
    *n = total;
    return ACC_OK;
}

acc_status_t acc_plan_verify(const acc_plan_t *plan)
{
    acc_status_t st;
    char why[256];
    int applies = 0;

    /* Halving and doubling on many ranks: one rank's chunks instead of every rank's. */
    if (plan && plan->nranks >= PV_XOR_RANKS &&
        ((st = plan_verify_xor(plan, &applies, why, sizeof(why))) != ACC_OK || applies))
        return st;
    st = acc_plan_verify_mode(plan, 0);
    if (st != ACC_OK)
        return plan && plan->inplace ? acc_error_prefix(st, "out of place: ") : st;
    if (plan->inplace && (st = acc_plan_verify_mode(plan, 1)) != ACC_OK)
        return acc_error_prefix(st, "in place: ");
    return ACC_OK;
}
