/*
 * Code generation, the emitting half: the device function of one class of lane programs
 * (lanes of any ranks that run the same sequence of operation shapes).  It is straight-line
 * code, one call per operation of the plan, except that a run of operations of the same shape
 * becomes a loop.  Every operand (chunk offset, peer, connection, message number, counter,
 * wait value, dependency) is written as
 *   - a constant, when it is the same for every member of the class (and, in a loop, every
 *     iteration);
 *   - an affine expression of the loop counter j, when it is the same for every member and
 *     steps evenly (message numbers, operation indices);
 *   - prm[i] or prm[i] + b * j, one parameter per member, when only its start differs
 *     between members (a ring's connections);
 *   - prm[i + j], a parameter per member and iteration, otherwise (a ring's chunk offsets).
 * So what is constant across the class stays a compile-time constant, and a class of any
 * size compiles to the same code.
 */
#include "codegen_internal.h"

#include <string.h>

/* Operand columns. */
enum { C_SOFF, C_DOFF, C_PEER, C_CIN, C_JIN, C_COUT, C_JOUT, C_CTR, C_VALUE, C_DEP, C_NFIX };
#define MAX_COLS (C_NFIX + 64)
#define EXPR_LEN 48

typedef struct {
    const cg_t *g;
    const int *progs; /* the class's members, rank * nlanes + lane */
    int m;
    uint32_t *cols; /* parameter columns, m values each */
    uint32_t nparams;
    size_t cols_cap; /* in columns */
    uint32_t *vals;  /* m x run length values of one operand */
    size_t vals_cap;
    uint64_t *shash; /* single parameters so far (hash of their column, and index), so that */
    uint32_t *sidx;  /* an operand equal to an earlier one for every member reuses it */
    size_t nsingle, single_cap;
} em_t;

static uint32_t value(const cg_t *g, int pi, uint32_t k, int col)
{
    const acc_op_t *op = &g->p->progs[pi].ops[k];
    size_t i = g->first[pi] + k;
    switch (col) {
    case C_SOFF:
        return op->src.off;
    case C_DOFF:
        return op->dst.off;
    case C_PEER:
        return (uint32_t)op->peer;
    case C_CIN:
        return g->cin[i];
    case C_JIN:
        return g->jin[i];
    case C_COUT:
        return g->cout[i];
    case C_JOUT:
        return g->jout[i];
    case C_CTR:
        return g->ctr[i];
    case C_VALUE:
        return op->value;
    case C_DEP:
        return (uint32_t)op->dep_op;
    default:
        return g->p->peer_pool[op->peers_off + (uint32_t)(col - C_NFIX)];
    }
}

/* The operand columns of an operation, in the order its call takes them. */
static int columns(const acc_op_t *op, int *cols)
{
    int n = 0;
    uint32_t j;
    switch (op->code) {
    case ACC_OP_SEND:
        cols[n++] = C_COUT;
        cols[n++] = C_JOUT;
        cols[n++] = C_SOFF;
        break;
    case ACC_OP_RECV:
        cols[n++] = C_CIN;
        cols[n++] = C_JIN;
        cols[n++] = C_DOFF;
        break;
    case ACC_OP_RECV_REDUCE_COPY:
        cols[n++] = C_CIN;
        cols[n++] = C_JIN;
        cols[n++] = C_SOFF;
        cols[n++] = C_DOFF;
        break;
    case ACC_OP_RECV_COPY_SEND:
        cols[n++] = C_CIN;
        cols[n++] = C_JIN;
        cols[n++] = C_DOFF;
        cols[n++] = C_COUT;
        cols[n++] = C_JOUT;
        break;
    case ACC_OP_RECV_REDUCE_SEND:
        cols[n++] = C_CIN;
        cols[n++] = C_JIN;
        cols[n++] = C_SOFF;
        cols[n++] = C_COUT;
        cols[n++] = C_JOUT;
        break;
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        cols[n++] = C_CIN;
        cols[n++] = C_JIN;
        cols[n++] = C_SOFF;
        cols[n++] = C_DOFF;
        cols[n++] = C_COUT;
        cols[n++] = C_JOUT;
        break;
    case ACC_OP_COPY:
    case ACC_OP_REDUCE:
        cols[n++] = C_SOFF;
        cols[n++] = C_DOFF;
        break;
    case ACC_OP_PUT:
    case ACC_OP_GET:
        cols[n++] = C_PEER;
        cols[n++] = C_SOFF;
        cols[n++] = C_DOFF;
        break;
    case ACC_OP_REDUCE_PEERS:
        cols[n++] = C_SOFF;
        cols[n++] = C_DOFF;
        for (j = 0; j < op->npeers; j++)
            cols[n++] = C_NFIX + (int)j;
        break;
    case ACC_OP_SIGNAL:
        cols[n++] = C_CTR;
        break;
    case ACC_OP_WAIT:
        cols[n++] = C_CTR;
        cols[n++] = C_VALUE;
        break;
    default:
        break;
    }
    if (op->dep_lane >= 0)
        cols[n++] = C_DEP;
    return n;
}

/* Room for `more` parameter columns; returns the first new one. */
static acc_status_t new_params(em_t *e, uint32_t more, uint32_t *first)
{
    if (e->nparams + more > e->cols_cap) {
        size_t cap = e->cols_cap ? e->cols_cap : 16;
        void *p;
        while (cap < e->nparams + more)
            cap *= 2;
        p = acc_mem_realloc_array(e->cols, cap * (size_t)e->m, sizeof(uint32_t));
        if (!p)
            return acc_error_set(ACC_ERR_NOMEM, "codegen: out of memory for parameters");
        e->cols = p;
        e->cols_cap = cap;
    }
    *first = e->nparams;
    e->nparams += more;
    return ACC_OK;
}

/* "a + b * j" for wrapping 32-bit arithmetic, written with a minus for a negative step and
 * without the parts that are zero or one. */
static void affine(char *s, size_t n, const char *a, uint32_t b)
{
    uint32_t mag = b < 0x80000000u ? b : 0u - b;
    char step[24];
    if (mag == 1)
        snprintf(step, sizeof(step), "j");
    else
        snprintf(step, sizeof(step), "%uu * j", mag);
    if (b == 0)
        snprintf(s, n, "%s", a);
    else if (strcmp(a, "0u") == 0 && b < 0x80000000u)
        snprintf(s, n, "%s", step);
    else
        snprintf(s, n, "(%s %c %s)", a, b < 0x80000000u ? '+' : '-', step);
}

/* A parameter holding value `first` of every member's run (vals, stride len): an existing
 * one with the same column, else a new one. */
static acc_status_t single_param(em_t *e, uint32_t len, uint32_t *index)
{
    uint64_t h = 1469598103934665603ull;
    size_t k;
    int i;
    acc_status_t st;

    for (i = 0; i < e->m; i++)
        h = (h ^ e->vals[(size_t)i * len]) * 1099511628211ull;
    for (k = 0; k < e->nsingle; k++) {
        const uint32_t *col = e->cols + (size_t)e->sidx[k] * e->m;
        if (e->shash[k] != h)
            continue;
        for (i = 0; i < e->m && col[i] == e->vals[(size_t)i * len]; i++)
            ;
        if (i == e->m) {
            *index = e->sidx[k];
            return ACC_OK;
        }
    }
    if (e->nsingle == e->single_cap) {
        size_t cap = e->single_cap ? 2 * e->single_cap : 64;
        void *a = acc_mem_realloc_array(e->shash, cap, sizeof(uint64_t));
        void *b = a ? acc_mem_realloc_array(e->sidx, cap, sizeof(uint32_t)) : NULL;
        if (a)
            e->shash = a;
        if (!b)
            return acc_error_set(ACC_ERR_NOMEM, "codegen: out of memory for parameters");
        e->sidx = b;
        e->single_cap = cap;
    }
    if ((st = new_params(e, 1, index)) != ACC_OK)
        return st;
    for (i = 0; i < e->m; i++)
        e->cols[(size_t)*index * e->m + i] = e->vals[(size_t)i * len];
    e->shash[e->nsingle] = h;
    e->sidx[e->nsingle++] = *index;
    return ACC_OK;
}

/* Does every rank's sequence step by the same b?  (Any single value does, with b = 0.) */
static int common_step(const uint32_t *v, int m, uint32_t len, uint32_t *b)
{
    int i;
    uint32_t j;
    *b = len > 1 ? v[1] - v[0] : 0;
    for (i = 0; i < m; i++)
        for (j = 1; j < len; j++)
            if (v[(size_t)i * len + j] - v[(size_t)i * len + j - 1] != *b)
                return 0;
    return 1;
}

/* Write operand `col` of ops [k, k + len) of the class's programs as an expression. */
static acc_status_t operand(em_t *e, uint32_t k, uint32_t len, int col, char *expr)
{
    size_t need = (size_t)e->m * len;
    uint32_t b, first = 0, j;
    int i, same = 1;
    char base[EXPR_LEN];
    acc_status_t st;

    if (need > e->vals_cap) {
        void *p = acc_mem_realloc_array(e->vals, need, sizeof(uint32_t));
        if (!p)
            return acc_error_set(ACC_ERR_NOMEM, "codegen: out of memory");
        e->vals = p;
        e->vals_cap = need;
    }
    for (i = 0; i < e->m; i++)
        for (j = 0; j < len; j++) {
            uint32_t v = value(e->g, e->progs[i], k + j, col);
            e->vals[(size_t)i * len + j] = v;
            same &= v == e->vals[j];
        }
    if (common_step(e->vals, same ? 1 : e->m, len, &b)) {
        if (same) {
            snprintf(base, sizeof(base), "%uu", e->vals[0]);
            affine(expr, EXPR_LEN, base, b);
            return ACC_OK;
        }
        if ((st = single_param(e, len, &first)) != ACC_OK)
            return st;
        snprintf(base, sizeof(base), "prm[%u]", first + 1);
        affine(expr, EXPR_LEN, base, b);
        return ACC_OK;
    }
    /* Irregular: a parameter per iteration (the same for every rank when `same`). */
    if ((st = new_params(e, len, &first)) != ACC_OK)
        return st;
    for (i = 0; i < e->m; i++)
        for (j = 0; j < len; j++)
            e->cols[(size_t)(first + j) * e->m + i] = e->vals[(size_t)i * len + j];
    snprintf(expr, EXPR_LEN, "prm[%u + j]", first + 1);
    return ACC_OK;
}

static const char *buf_macro(uint8_t b)
{
    return b == ACC_BUF_IN ? "ACC_IN" : b == ACC_BUF_OUT ? "ACC_OUT" : "ACC_SCRATCH";
}

static void ref_text(char *s, size_t n, acc_ref_t r)
{
    if (r.cnt == 1)
        snprintf(s, n, "%s[%u]", acc_buf_name((acc_bufid_t)r.buf), r.off);
    else
        snprintf(s, n, "%s[%u:%u]", acc_buf_name((acc_bufid_t)r.buf), r.off, r.off + r.cnt);
}

/* What an operation does, in the plan's words, for the comments. */
static void describe(acc_buf_t *b, const acc_plan_t *p, const acc_op_t *op)
{
    char s[40], d[40];
    uint32_t j;
    ref_text(s, sizeof(s), op->src);
    ref_text(d, sizeof(d), op->dst);
    switch (op->code) {
    case ACC_OP_SEND:
        acc_buf_printf(b, "send %s to %d", s, op->peer);
        break;
    case ACC_OP_RECV:
        acc_buf_printf(b, "%s = message from %d", d, op->peer);
        break;
    case ACC_OP_RECV_REDUCE_COPY:
        acc_buf_printf(b, "%s = %s (+) message from %d", d, s, op->peer);
        break;
    case ACC_OP_RECV_COPY_SEND:
        acc_buf_printf(b, "%s = message from %d, sent on to %d", d, op->peer, op->peer2);
        break;
    case ACC_OP_RECV_REDUCE_SEND:
        acc_buf_printf(b, "send %s (+) message from %d on to %d", s, op->peer, op->peer2);
        break;
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        acc_buf_printf(b, "%s = %s (+) message from %d, sent on to %d", d, s, op->peer, op->peer2);
        break;
    case ACC_OP_COPY:
        acc_buf_printf(b, "%s = %s", d, s);
        break;
    case ACC_OP_REDUCE:
        acc_buf_printf(b, "%s = %s (+) %s", d, d, s);
        break;
    case ACC_OP_PUT:
        acc_buf_printf(b, "%s of %d = %s", d, op->peer, s);
        break;
    case ACC_OP_GET:
        acc_buf_printf(b, "%s = %s of %d", d, s, op->peer);
        break;
    case ACC_OP_REDUCE_PEERS:
        acc_buf_printf(b, "%s = (+) %s of ranks ", d, s);
        for (j = 0; j < op->npeers && j < 8; j++)
            acc_buf_printf(b, "%s%u", j ? "," : "", p->peer_pool[op->peers_off + j]);
        if (op->npeers > 8)
            acc_buf_puts(b, ",...");
        break;
    case ACC_OP_SIGNAL:
        acc_buf_printf(b, "signal %d on slot %u", op->peer, op->slot);
        break;
    case ACC_OP_WAIT:
        acc_buf_printf(b, "wait for %u signals of %d on slot %u", op->value, op->peer, op->slot);
        break;
    default:
        acc_buf_puts(b, "nop");
        break;
    }
    if (op->dep_lane >= 0)
        acc_buf_printf(b, ", after lane %d op %d", op->dep_lane, op->dep_op);
}

/* The call of one operation (ex: its operands in columns() order). */
static void call(acc_buf_t *b, const acc_op_t *op, const char *opi, char (*ex)[EXPR_LEN],
                 const char *ind)
{
    uint32_t cnt = op->src.cnt ? op->src.cnt : op->dst.cnt, j;
    const char *sb = buf_macro(op->src.buf), *db = buf_macro(op->dst.buf);

    switch (op->code) {
    case ACC_OP_SEND:
        acc_buf_printf(b, "%sif (!acc_send(c, %s, %s, %s, %s, %s, %uu))\n", ind, opi, ex[0], ex[1],
                       sb, ex[2], cnt);
        break;
    case ACC_OP_RECV:
        acc_buf_printf(b, "%sif (!acc_recv(c, %s, %s, %s, %s, %s, %uu))\n", ind, opi, ex[0], ex[1],
                       db, ex[2], cnt);
        break;
    case ACC_OP_RECV_REDUCE_COPY:
        acc_buf_printf(b, "%sif (!acc_rrc(c, %s, %s, %s, %s, %s, %s, %s, %uu))\n", ind, opi, ex[0],
                       ex[1], sb, ex[2], db, ex[3], cnt);
        break;
    case ACC_OP_RECV_COPY_SEND:
        acc_buf_printf(b, "%sif (!acc_rcs(c, %s, %s, %s, %s, %s, %s, %s, %uu))\n", ind, opi, ex[0],
                       ex[1], db, ex[2], ex[3], ex[4], cnt);
        break;
    case ACC_OP_RECV_REDUCE_SEND:
        acc_buf_printf(b, "%sif (!acc_rrs(c, %s, %s, %s, %s, %s, %s, %s, %uu))\n", ind, opi, ex[0],
                       ex[1], sb, ex[2], ex[3], ex[4], cnt);
        break;
    case ACC_OP_RECV_REDUCE_COPY_SEND:
        acc_buf_printf(b, "%sif (!acc_rrcs(c, %s, %s, %s, %s, %s, %s, %s, %s, %s, %uu))\n", ind,
                       opi, ex[0], ex[1], sb, ex[2], db, ex[3], ex[4], ex[5], cnt);
        break;
    case ACC_OP_COPY:
    case ACC_OP_REDUCE:
        acc_buf_printf(b, "%sif (!acc_%s(c, %s, %s, %s, %s, %s, %uu))\n", ind,
                       op->code == ACC_OP_COPY ? "copy" : "reduce", opi, sb, ex[0], db, ex[1], cnt);
        break;
    case ACC_OP_PUT:
    case ACC_OP_GET:
        acc_buf_printf(b, "%sif (!acc_%s(c, %s, %s, %s, %s, %s, %s, %uu))\n", ind,
                       op->code == ACC_OP_PUT ? "put" : "get", opi, ex[0], sb, ex[1], db, ex[2],
                       cnt);
        break;
    case ACC_OP_REDUCE_PEERS:
        acc_buf_printf(b, "%s{\n%s    const u32 pl[%u] = {", ind, ind, op->npeers);
        for (j = 0; j < op->npeers; j++)
            acc_buf_printf(b, "%s%s", j ? ", " : "", ex[2 + j]);
        acc_buf_printf(b,
                       "};\n%s    if (!acc_reduce_peers(c, %s, pl, %u, %s, %s, %s, %s, %uu))\n"
                       "%s        return;\n%s}\n",
                       ind, opi, op->npeers, sb, ex[0], db, ex[1], cnt, ind, ind);
        return;
    case ACC_OP_SIGNAL:
        acc_buf_printf(b, "%sif (!acc_signal(c, %s, %s))\n", ind, opi, ex[0]);
        break;
    case ACC_OP_WAIT:
        acc_buf_printf(b, "%sif (!acc_wait(c, %s, %s, %s))\n", ind, opi, ex[0], ex[1]);
        break;
    default:
        return; /* a nop carries only its dependency */
    }
    acc_buf_printf(b, "%s    return;\n", ind);
}

/* Ops [k, k + len) of the class, all of one shape: one call, or a loop of len calls. */
static acc_status_t emit_run(em_t *e, acc_buf_t *b, uint32_t k, uint32_t len)
{
    const cg_t *g = e->g;
    int rep = e->progs[0], L = g->p->nlanes, cols[MAX_COLS], n = 0, i;
    const acc_op_t *op = &g->p->progs[rep].ops[k];
    uint32_t nops = g->k->lane_ops[rep];
    char who[48];
    char ex[MAX_COLS][EXPR_LEN], opi[EXPR_LEN];
    const char *ind = len > 1 ? "        " : "    ";
    acc_status_t st;

    n = columns(op, cols);
    for (i = 0; i < n; i++)
        if ((st = operand(e, k, len, cols[i], ex[i])) != ACC_OK)
            return st;
    if (e->m > 1)
        snprintf(who, sizeof(who), "rank %d lane %d", rep / L, rep % L);
    if (len > 1) {
        acc_buf_printf(b, "    /* ops %u-%u: %u x %s; ", k, k + len - 1, len,
                       acc_op_name((acc_opcode_t)op->code));
        if (e->m > 1)
            acc_buf_printf(b, "%s's first: ", who);
        else
            acc_buf_puts(b, "the first: ");
        describe(b, g->p, op);
        acc_buf_printf(b, " */\n    for (u32 j = 0; j < %uu; ++j) {\n", len);
        snprintf(opi, sizeof(opi), "%u + j", k);
    } else {
        acc_buf_printf(b, "    /* op %u: ", k);
        if (e->m > 1)
            acc_buf_printf(b, "%s: ", who);
        describe(b, g->p, op);
        acc_buf_puts(b, " */\n");
        snprintf(opi, sizeof(opi), "%u", k);
    }
    if (op->dep_lane >= 0)
        acc_buf_printf(b, "%sif (!acc_dep(c, %s, %d, %s, %uu))\n%s    return;\n", ind, opi,
                       op->dep_lane, ex[n - 1], g->k->lane_ops[(rep / L) * L + op->dep_lane], ind);
    call(b, op, opi, ex, ind);
    if (g->publish[g->first[rep] + k])
        acc_buf_printf(b, "%sacc_done(c, %s, %uu);\n", ind, opi, nops);
    if (len > 1)
        acc_buf_puts(b, "    }\n");
    return ACC_OK;
}

static acc_status_t emit_prog(em_t *e, acc_buf_t *b, int c)
{
    const cg_t *g = e->g;
    int rep = e->progs[0];
    size_t base = g->first[rep];
    uint32_t nops = g->k->lane_ops[rep], k = 0, end;
    acc_status_t st;

    acc_buf_printf(b,
                   "\n/* program %d: %u operations, run by %d lane%s */\n"
                   "static __device__ __noinline__ void acc_p%d(acc_ctx_t &c, const u32 *prm)\n{\n",
                   c, nops, e->m, e->m == 1 ? "" : "s", c);
    while (k < nops) {
        const acc_op_t *op = &g->p->progs[rep].ops[k];
        for (end = k + 1; end < nops; end++)
            if (!cg_same_shape(g, base + k, op, base + end, &g->p->progs[rep].ops[end]))
                break;
        if ((st = emit_run(e, b, k, end - k)) != ACC_OK)
            return st;
        k = end;
    }
    acc_buf_puts(b, "}\n");
    return ACC_OK;
}

acc_status_t cg_emit_class(const cg_t *g, int c, acc_buf_t *out, uint32_t **cols, uint32_t *nparams)
{
    em_t e;
    acc_status_t st;

    memset(&e, 0, sizeof(e));
    e.g = g;
    e.progs = g->members + g->member_first[c];
    e.m = g->member_first[c + 1] - g->member_first[c];
    st = emit_prog(&e, out, c);
    acc_mem_free(e.vals);
    acc_mem_free(e.shash);
    acc_mem_free(e.sidx);
    if (st != ACC_OK) {
        acc_mem_free(e.cols);
        return st;
    }
    *cols = e.cols;
    *nparams = e.nparams;
    return ACC_OK;
}
