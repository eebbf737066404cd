/* The plan object: names of the IR's enums, building, copying, comparing, chunk arithmetic. */
#include "plan_internal.h"

#include <stdarg.h>
#include <string.h>

static const char *const coll_names[ACC_COLL_COUNT] = {"allreduce", "allgather", "reduce_scatter",
                                                       "broadcast", "reduce",    "alltoall"};
static const char *const proto_names[ACC_PROTO_COUNT] = {"Simple", "LL", "LL128"};
static const char *const op_names[ACC_OP_COUNT] = {
#define ACC_OP_STR(name, str) str,
    ACC_OP_MAP(ACC_OP_STR)
#undef ACC_OP_STR
};
static const char *const buf_names[ACC_BUF_COUNT] = {"in", "out", "scratch"};

const char *acc_coll_name(acc_coll_t c)
{
    return (c >= 0 && c < ACC_COLL_COUNT) ? coll_names[c] : "?";
}

/* Compare ignoring case, '_' and '-', so that "reduce-scatter", "reducescatter" and
 * "ReduceScatter" all name one collective (MSCCL files use both spellings). */
static int loose_eq(const char *a, const char *b)
{
    for (;;) {
        while (*a == '_' || *a == '-')
            a++;
        while (*b == '_' || *b == '-')
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        if ((*a | 0x20) != (*b | 0x20))
            return 0;
        a++;
        b++;
    }
}

acc_status_t acc_coll_parse(const char *s, acc_coll_t *out)
{
    int i;
    for (i = 0; s && i < ACC_COLL_COUNT; i++) {
        if (loose_eq(s, coll_names[i])) {
            *out = (acc_coll_t)i;
            return ACC_OK;
        }
    }
    if (s && (loose_eq(s, "all_reduce") || loose_eq(s, "all_gather"))) {
        *out = loose_eq(s, "all_reduce") ? ACC_COLL_ALLREDUCE : ACC_COLL_ALLGATHER;
        return ACC_OK;
    }
    if (s && loose_eq(s, "all_to_all")) {
        *out = ACC_COLL_ALLTOALL;
        return ACC_OK;
    }
    return acc_error_set(ACC_ERR_INVALID,
                         "unknown collective '%s' (allreduce, allgather, "
                         "reduce_scatter, broadcast, reduce, alltoall)",
                         s ? s : "");
}

const char *acc_proto_name(acc_proto_t p)
{
    return (p >= 0 && p < ACC_PROTO_COUNT) ? proto_names[p] : "?";
}

acc_status_t acc_proto_parse(const char *s, acc_proto_t *out)
{
    int i;
    for (i = 0; s && i < ACC_PROTO_COUNT; i++) {
        if (acc_str_ieq(s, proto_names[i])) {
            *out = (acc_proto_t)i;
            return ACC_OK;
        }
    }
    return acc_error_set(ACC_ERR_INVALID, "unknown protocol '%s' (Simple, LL, LL128)", s ? s : "");
}

const char *acc_op_name(acc_opcode_t code)
{
    return (code < ACC_OP_COUNT) ? op_names[code] : "?";
}

acc_status_t acc_op_parse(const char *s, acc_opcode_t *out)
{
    int i;
    for (i = 0; s && i < ACC_OP_COUNT; i++) {
        if (strcmp(s, op_names[i]) == 0) {
            *out = (acc_opcode_t)i;
            return ACC_OK;
        }
    }
    return acc_error_set(ACC_ERR_INVALID, "unknown operation '%s'", s ? s : "");
}

const char *acc_buf_name(acc_bufid_t b)
{
    return (b < ACC_BUF_COUNT) ? buf_names[b] : "?";
}

int acc_op_send_peer(const acc_op_t *op)
{
    switch ((acc_opcode_t)op->code) {
    case ACC_OP_SEND:
        return op->peer;
    case ACC_OP_RECV_COPY_SEND:
    case ACC_OP_RECV_REDUCE_SEND:
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        return op->peer2;
    default:
        return -1;
    }
}

int acc_op_recv_peer(const acc_op_t *op)
{
    switch ((acc_opcode_t)op->code) {
    case ACC_OP_RECV:
    case ACC_OP_RECV_REDUCE_COPY:
    case ACC_OP_RECV_COPY_SEND:
    case ACC_OP_RECV_REDUCE_SEND:
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        return op->peer;
    default:
        return -1;
    }
}

int acc_coll_reduces(acc_coll_t c)
{
    return c == ACC_COLL_ALLREDUCE || c == ACC_COLL_REDUCE_SCATTER || c == ACC_COLL_REDUCE;
}

acc_status_t acc_plan_create(acc_coll_t coll, int nranks, int nlanes, uint32_t in_chunks,
                             uint32_t out_chunks, uint32_t scratch_chunks, acc_plan_t **out)
{
    acc_plan_t *p;

    if (coll < 0 || coll >= ACC_COLL_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "unknown collective %d", (int)coll);
    if (nranks < 1 || nlanes < 1 || nlanes > 1024 || (uint64_t)nranks * nlanes > (1u << 26))
        return acc_error_set(ACC_ERR_INVALID, "plan of %d ranks x %d lanes is out of range", nranks,
                             nlanes);
    p = acc_mem_calloc(1, sizeof(*p));
    if (!p || !(p->progs = acc_mem_calloc((size_t)nranks * nlanes, sizeof(acc_lane_prog_t)))) {
        acc_mem_free(p);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory creating a plan of %d ranks", nranks);
    }
    p->coll = coll;
    p->nranks = nranks;
    p->nlanes = nlanes;
    p->root = -1;
    p->in_chunks = in_chunks;
    p->out_chunks = out_chunks;
    p->scratch_chunks = scratch_chunks;
    p->slots = 8;
    p->proto = ACC_PROTO_SIMPLE;
    *out = p;
    return ACC_OK;
}

void acc_plan_destroy(acc_plan_t *plan)
{
    size_t i;
    if (!plan)
        return;
    /* A view holds its rank's programs alone. */
    if (plan->progs)
        for (i = 0; i < (size_t)(plan->view ? 1 : plan->nranks) * plan->nlanes; i++)
            acc_mem_free(plan->progs[i].ops);
    acc_mem_free(plan->progs);
    acc_mem_free(plan->peer_pool);
    acc_plan_view_destroy(plan->view);
    acc_mem_free(plan);
}

acc_status_t acc_plan_clone(const acc_plan_t *plan, acc_plan_t **out)
{
    acc_plan_t *c;
    size_t i, n = (size_t)plan->nranks * plan->nlanes;
    acc_status_t st;

    if (plan->view)
        return acc_error_set(ACC_ERR_INVALID, "copying rank %d's view of %s: only whole plans",
                             plan->view->rank, plan->algo);
    st = acc_plan_create(plan->coll, plan->nranks, plan->nlanes, plan->in_chunks, plan->out_chunks,
                         plan->scratch_chunks, &c);
    if (st != ACC_OK)
        return st;
    plan_copy_header(c, plan);
    c->period = plan->period;
    c->period_xor = plan->period_xor;
    for (i = 0; i < n; i++) {
        const acc_lane_prog_t *src = &plan->progs[i];
        if (!src->nops)
            continue;
        c->progs[i].ops = acc_mem_realloc_array(NULL, src->nops, sizeof(acc_op_t));
        if (!c->progs[i].ops) {
            acc_plan_destroy(c);
            return acc_error_set(ACC_ERR_NOMEM, "out of memory copying a plan");
        }
        memcpy(c->progs[i].ops, src->ops, src->nops * sizeof(acc_op_t));
        c->progs[i].nops = c->progs[i].cap = src->nops;
    }
    if (plan->npeer_pool) {
        c->peer_pool = acc_mem_realloc_array(NULL, plan->npeer_pool, sizeof(uint32_t));
        if (!c->peer_pool) {
            acc_plan_destroy(c);
            return acc_error_set(ACC_ERR_NOMEM, "out of memory copying a plan");
        }
        memcpy(c->peer_pool, plan->peer_pool, plan->npeer_pool * sizeof(uint32_t));
        c->npeer_pool = c->peer_pool_cap = plan->npeer_pool;
    }
    *out = c;
    return ACC_OK;
}

acc_lane_prog_t *acc_plan_prog(const acc_plan_t *plan, int rank, int lane)
{
    static const acc_lane_prog_t none; /* another rank's, in a view: empty (acc_plan_add
                                        * refuses views) */
    if (rank < 0 || rank >= plan->nranks || lane < 0 || lane >= plan->nlanes)
        return NULL;
    if (plan->view)
        return rank == plan->view->rank ? &plan->progs[lane] : (acc_lane_prog_t *)&none;
    return &plan->progs[(size_t)rank * plan->nlanes + lane];
}

acc_op_t acc_op_init(acc_opcode_t code)
{
    acc_op_t op;
    memset(&op, 0, sizeof(op));
    op.code = (uint8_t)code;
    op.peer = op.peer2 = -1;
    op.dep_lane = op.dep_op = -1;
    return op;
}

/* plan_op_limit's cap on this thread's acc_plan_add calls, and the count since it was set. */
static _Thread_local uint64_t op_limit, op_count;

void plan_op_limit(uint64_t limit)
{
    op_limit = limit;
    op_count = 0;
}

acc_status_t plan_locations_within(int nranks, uint32_t in_chunks, uint32_t out_chunks,
                                   uint32_t scratch_chunks, uint64_t max)
{
    uint64_t locations = (uint64_t)nranks * ((uint64_t)in_chunks + out_chunks + scratch_chunks);
    if (!max || locations <= max)
        return ACC_OK;
    return acc_error_set(ACC_ERR_RANGE,
                         "its proof rank by rank would track %d ranks x (%u + %u + %u) chunks, "
                         "%.3g locations, more than the %.3g allowed here",
                         nranks, in_chunks, out_chunks, scratch_chunks, (double)locations,
                         (double)max);
}

acc_status_t acc_plan_add(acc_plan_t *plan, int rank, int lane, const acc_op_t *op, uint32_t *index)
{
    acc_lane_prog_t *prog = acc_plan_prog(plan, rank, lane);
    size_t cap;
    void *p;

    if (plan->view)
        return acc_error_set(ACC_ERR_INVALID, "rank %d's view of %s is read-only", plan->view->rank,
                             plan->algo);

    if (!prog)
        return acc_error_set(ACC_ERR_INVALID,
                             "rank %d lane %d outside a plan of %d ranks x %d "
                             "lanes",
                             rank, lane, plan->nranks, plan->nlanes);
    if (op_limit && ++op_count > op_limit)
        return acc_error_set(ACC_ERR_RANGE,
                             "its plan passed %llu operations, more than are built rank by rank "
                             "here",
                             (unsigned long long)op_limit);
    cap = prog->cap;
    p = prog->ops;
    if (acc_array_reserve(&p, &cap, (size_t)prog->nops + 1, sizeof(acc_op_t)) != ACC_OK ||
        cap > UINT32_MAX)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory adding an operation");
    prog->ops = p;
    prog->cap = (uint32_t)cap;
    prog->ops[prog->nops] = *op;
    if (index)
        *index = prog->nops;
    prog->nops++;
    return ACC_OK;
}

acc_status_t acc_plan_add_peers(acc_plan_t *plan, const uint32_t *ranks, uint32_t n, uint32_t *off)
{
    size_t cap = plan->peer_pool_cap;
    void *p = plan->peer_pool;
    if (acc_array_reserve(&p, &cap, (size_t)plan->npeer_pool + n, sizeof(uint32_t)) != ACC_OK ||
        cap > UINT32_MAX)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory adding a peer list");
    plan->peer_pool = p;
    plan->peer_pool_cap = (uint32_t)cap;
    memcpy(plan->peer_pool + plan->npeer_pool, ranks, n * sizeof(uint32_t));
    *off = plan->npeer_pool;
    plan->npeer_pool += n;
    return ACC_OK;
}

acc_status_t acc_plan_send(acc_plan_t *p, int rank, int lane, int peer, acc_ref_t src)
{
    acc_op_t op = acc_op_init(ACC_OP_SEND);
    op.peer = peer;
    op.src = src;
    return acc_plan_add(p, rank, lane, &op, NULL);
}

acc_status_t acc_plan_recv(acc_plan_t *p, int rank, int lane, int peer, acc_ref_t dst)
{
    acc_op_t op = acc_op_init(ACC_OP_RECV);
    op.peer = peer;
    op.dst = dst;
    return acc_plan_add(p, rank, lane, &op, NULL);
}

acc_status_t acc_plan_copy(acc_plan_t *p, int rank, int lane, acc_ref_t src, acc_ref_t dst)
{
    acc_op_t op = acc_op_init(ACC_OP_COPY);
    op.src = src;
    op.dst = dst;
    return acc_plan_add(p, rank, lane, &op, NULL);
}

acc_status_t acc_plan_set_params(acc_plan_t *p, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(p->params, sizeof(p->params), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(p->params))
        return acc_error_set(ACC_ERR_RANGE, "plan parameters longer than %d characters",
                             ACC_PLAN_PARAMS_MAX - 1);
    return ACC_OK;
}

size_t acc_plan_op_count(const acc_plan_t *plan)
{
    size_t i, n = 0;
    for (i = 0; i < (size_t)plan->nranks * plan->nlanes; i++)
        n += plan->progs[i].nops;
    return n;
}

static int ref_eq(const acc_ref_t *a, const acc_ref_t *b)
{
    return a->buf == b->buf && a->off == b->off && a->cnt == b->cnt;
}

static int op_eq(const acc_plan_t *pa, const acc_op_t *a, const acc_plan_t *pb, const acc_op_t *b)
{
    if (a->code != b->code || a->slot != b->slot || a->peer != b->peer || a->peer2 != b->peer2 ||
        !ref_eq(&a->src, &b->src) || !ref_eq(&a->dst, &b->dst) || a->value != b->value ||
        a->npeers != b->npeers || a->dep_lane != b->dep_lane || a->dep_op != b->dep_op)
        return 0;
    return a->npeers == 0 || memcmp(pa->peer_pool + a->peers_off, pb->peer_pool + b->peers_off,
                                    a->npeers * sizeof(uint32_t)) == 0;
}

int acc_plan_equal(const acc_plan_t *a, const acc_plan_t *b)
{
    size_t i, n;
    uint32_t k;
    if (a->coll != b->coll || a->nranks != b->nranks || a->nlanes != b->nlanes ||
        a->root != b->root || strcmp(a->algo, b->algo) != 0 || strcmp(a->params, b->params) ||
        a->in_chunks != b->in_chunks || a->out_chunks != b->out_chunks ||
        a->scratch_chunks != b->scratch_chunks || a->slots != b->slots || a->proto != b->proto ||
        a->inplace != b->inplace)
        return 0;
    n = (size_t)a->nranks * a->nlanes;
    for (i = 0; i < n; i++) {
        if (a->progs[i].nops != b->progs[i].nops)
            return 0;
        for (k = 0; k < a->progs[i].nops; k++)
            if (!op_eq(a, &a->progs[i].ops[k], b, &b->progs[i].ops[k]))
                return 0;
    }
    return 1;
}

void acc_chunk_range(uint64_t elems, uint32_t k, uint32_t i, uint64_t *first, uint64_t *n)
{
    /* floor(i * elems / k) without overflow for elems < 2^64 / 2^32 */
    uint64_t lo = k ? (uint64_t)(((unsigned __int128)i * elems) / k) : 0;
    uint64_t hi = k ? (uint64_t)(((unsigned __int128)(i + 1) * elems) / k) : 0;
    *first = lo;
    *n = hi - lo;
}

uint64_t acc_plan_buf_elems(const acc_plan_t *plan, acc_bufid_t buf, uint64_t count)
{
    uint64_t n = (uint64_t)plan->nranks;
    switch (plan->coll) {
    case ACC_COLL_ALLGATHER:
        return buf == ACC_BUF_IN ? count : count * n;
    case ACC_COLL_REDUCE_SCATTER:
        return buf == ACC_BUF_IN ? count * n : count;
    case ACC_COLL_ALLTOALL:
        return count * n;
    default:
        return count;
    }
}

void plan_copy_header(acc_plan_t *dst, const acc_plan_t *src)
{
    dst->root = src->root;
    memcpy(dst->algo, src->algo, sizeof(dst->algo));
    memcpy(dst->params, src->params, sizeof(dst->params));
    dst->slots = src->slots;
    dst->proto = src->proto;
    dst->inplace = src->inplace;
}
