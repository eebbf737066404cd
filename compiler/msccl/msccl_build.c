/*
 * MSCCL algorithm XML -> plan, second half: steps to operations, and verification.
 *
 * Operations.  msccl_lanes.c has given each thread block the lanes of its connections.  A step
 * goes to the lane of the connection it uses, a local step (cpy, re, nop) to the lane of the step
 * before it.  A fused step whose receiving and sending connections got different lanes is split
 * in two: rcs into recv + send of the received chunks, rrcs into rrc + send, and rrs, which keeps
 * nothing, into an rrc into scratch chunks of its thread block (added after the file's scratch)
 * + send of those.  The block stays one sequential program, as MSCCL runs it: an operation that
 * follows one of its block on another lane depends on that one.  An operation names one
 * dependency, so where it needs more (that one, the step's depid/deps, the prologue below) nops
 * placed before it on its lane carry all but the last, which is always the step's own.
 *
 * Buffers.  An algorithm usable out of place maps i/o/s to the plan's in/out/scratch as they
 * are.  One usable only in place (inplace="1" outofplace="0": i and o alias) runs on one home
 * buffer holding the aliased data: the output (allreduce, allgather, alltoall, broadcast,
 * reduce) or, for reduce-scatter, a scratch area as large as the input, since acc's output is
 * the smaller buffer.  A prologue copies the input into its place in the home buffer before
 * any lane starts, and for reduce-scatter an epilogue copies the rank's block out.  In place the
 * prologue copies a chunk onto itself; out of place it makes the file's in-place program correct
 * there too, which every acc plan must be.
 */
#include "msccl_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    ms_algo_t *a;
    uint32_t cin, cout; /* chunks of input and output per rank */
    int inplace_only;
    uint32_t scratch_home; /* reduce-scatter in place only: scratch chunks used as home */
    uint32_t scratch_tmp;  /* first scratch chunk after the file's: split rrs steps */
    int nlanes;
} build_t;

/* ---- chunk counts ------------------------------------------------------------------------- */

/* Elements of input and output per unit of count (acc_plan_buf_elems with count 1). */
static void multipliers(acc_coll_t c, uint32_t n, uint32_t *min, uint32_t *mout)
{
    *min = (c == ACC_COLL_REDUCE_SCATTER || c == ACC_COLL_ALLTOALL) ? n : 1;
    *mout = (c == ACC_COLL_ALLGATHER || c == ACC_COLL_ALLTOALL) ? n : 1;
}

/* MSCCL cuts every buffer into chunks of one size (buffer bytes / nchunksperloop of the larger
 * buffer); acc cuts each buffer into its own number of chunks.  The two agree when the chunk
 * counts are in the ratio of the buffer sizes. */
static acc_status_t chunk_counts(build_t *b)
{
    ms_algo_t *a = b->a;
    const ms_gpu_t *g0 = &a->gpus[0];
    uint32_t min, mout, n = (uint32_t)a->ngpus, big;
    uint64_t cin = g0->i_chunks, cout = g0->o_chunks;
    int g;

    for (g = 1; g < a->ngpus; g++)
        if (a->gpus[g].i_chunks != g0->i_chunks || a->gpus[g].o_chunks != g0->o_chunks)
            return ms_fail(a, a->gpus[g].line,
                           "gpu %d has i_chunks=%u o_chunks=%u but gpu 0 has "
                           "%u and %u: acc needs one buffer layout on every rank",
                           g, a->gpus[g].i_chunks, a->gpus[g].o_chunks, g0->i_chunks, g0->o_chunks);
    multipliers(a->coll, n, &min, &mout);
    if (!cin && !cout)
        return ms_fail(a, g0->line, "gpu 0 has i_chunks=0 and o_chunks=0: no buffer to work on");
    /* an unused buffer (0 chunks, usual in place) has the size the collective gives it */
    if (!cin)
        cin = cout * min / mout;
    if (!cout)
        cout = cin * mout / min;
    if (!cin || !cout || cin * mout != cout * min || cin > UINT32_MAX / 2 || cout > UINT32_MAX / 2)
        return ms_fail(a, g0->line,
                       "i_chunks=%u and o_chunks=%u make chunks of different sizes for "
                       "%s of %d gpus (the output holds %u times the input's elements)",
                       g0->i_chunks, g0->o_chunks, acc_coll_name(a->coll), a->ngpus,
                       mout / (min < mout ? min : mout));
    big = (uint32_t)(min > mout ? cin : cout);
    if ((uint32_t)a->nchunksperloop != big)
        return ms_fail(a, a->line,
                       "nchunksperloop=\"%d\" but the %s buffer has %u chunks: MSCCL "
                       "cuts every buffer into chunks of (its largest buffer / nchunksperloop)",
                       a->nchunksperloop, min > mout ? "input" : "output", big);
    b->cin = (uint32_t)cin;
    b->cout = (uint32_t)cout;
    return ACC_OK;
}

/* A step's reference in the file's buffers -> the plan's, checked against the file's sizes. */
static acc_status_t map_ref(const build_t *b, int rank, const ms_step_t *s, const char *which,
                            acc_ref_t in, acc_ref_t *out)
{
    const ms_algo_t *a = b->a;
    uint64_t lim = in.buf == ACC_BUF_IN    ? b->cin
                   : in.buf == ACC_BUF_OUT ? b->cout
                                           : a->gpus[rank].s_chunks;
    static const char *const names[] = {"i", "o", "s"};
    acc_coll_t c = a->coll;

    if ((uint64_t)in.off + in.cnt > lim)
        return ms_fail(a, s->line,
                       "gpu %d: %sbuf=\"%s\" %soff=\"%u\" cnt=\"%u\" reaches chunk %llu "
                       "of a buffer of %llu chunks",
                       rank, which, names[in.buf], which, in.off, in.cnt,
                       (unsigned long long)in.off + in.cnt - 1, (unsigned long long)lim);
    *out = in;
    if (!b->inplace_only)
        return ACC_OK;
    if (c == ACC_COLL_REDUCE_SCATTER) {
        out->buf = ACC_BUF_SCRATCH;
        if (in.buf == ACC_BUF_OUT)
            out->off += (uint32_t)rank * b->cout;
        else if (in.buf == ACC_BUF_SCRATCH)
            out->off += b->scratch_home;
    } else if (in.buf != ACC_BUF_SCRATCH) {
        out->buf = ACC_BUF_OUT;
        if (c == ACC_COLL_ALLGATHER && in.buf == ACC_BUF_IN)
            out->off += (uint32_t)rank * b->cin;
    }
    return ACC_OK;
}

/* ---- the plan ------------------------------------------------------------------------------ */

static acc_op_t dep_nop(int lane, uint32_t op)
{
    acc_op_t o = acc_op_init(ACC_OP_NOP);
    o.dep_lane = lane;
    o.dep_op = (int32_t)op;
    return o;
}

/* Rank r's prologue (in place only): the input into its place in the home buffer. */
static int has_prologue(const build_t *b, int r)
{
    return b->inplace_only && (b->a->coll != ACC_COLL_BROADCAST || r == b->a->root);
}

/* Does the step receive on one lane and send on another? */
static int splits(const ms_tb_t *tb, const ms_step_t *s)
{
    return (s->uses & MS_RECVS) && (s->uses & MS_SENDS) && tb->lane_recv != tb->lane_send;
}

/* Scratch for the split rrs steps: each thread block gets as many chunks as its largest one
 * needs, reused from step to step, since the block runs them one after another.  *most
 * receives the most any rank needs. */
static acc_status_t tmp_scratch(const build_t *b, uint32_t *most)
{
    const ms_algo_t *a = b->a;
    int r, t, k;
    *most = 0;
    for (r = 0; r < a->ngpus; r++) {
        uint64_t off = 0;
        for (t = 0; t < a->gpus[r].ntbs; t++) {
            ms_tb_t *tb = &a->gpus[r].tbs[t];
            uint32_t need = 0;
            tb->tmp = (uint32_t)off;
            for (k = 0; k < tb->nsteps; k++)
                if (tb->steps[k].code == ACC_OP_RECV_REDUCE_SEND && splits(tb, &tb->steps[k]) &&
                    tb->steps[k].src.cnt > need)
                    need = tb->steps[k].src.cnt;
            off += need;
            if (off > UINT32_MAX - b->scratch_tmp)
                return ms_fail(a, tb->line,
                               "gpu %d needs more than %u scratch chunks for its split rrs "
                               "steps",
                               r, UINT32_MAX - b->scratch_tmp);
        }
        if (off > *most)
            *most = (uint32_t)off;
    }
    return ACC_OK;
}

/* A split fused step: o becomes the receiving half, which keeps what it received (an rrs in
 * its block's scratch chunks), and *send the sending half, which sends what o kept. */
static void split(const build_t *b, const ms_tb_t *tb, acc_op_t *o, acc_op_t *send)
{
    *send = acc_op_init(ACC_OP_SEND);
    send->peer = o->peer2;
    o->peer2 = -1;
    if (o->code == ACC_OP_RECV_REDUCE_SEND)
        o->dst = acc_ref(ACC_BUF_SCRATCH, b->scratch_tmp + tb->tmp, o->src.cnt);
    o->code = o->code == ACC_OP_RECV_COPY_SEND ? ACC_OP_RECV : ACC_OP_RECV_REDUCE_COPY;
    send->src = o->dst;
}

/* An operation waited for: operation `op` of lane `lane`; lane -1 for none. */
typedef struct {
    int lane;
    uint32_t op;
} at_t;

/* Append o to lane l of rank r after what it waits for beyond its lane's order: the prologue
 * (on its lane's first operation) and *prev, the operation before it in its thread block when
 * that is on another lane.  With `later`, o's own dependency is the step's depid/deps, set by
 * set_deps, and nops carry the others; else o carries the last of them.  *first and *index
 * receive the positions of the first operation placed and of o. */
static acc_status_t place(const build_t *b, acc_plan_t *p, int r, int l, acc_op_t o,
                          const at_t *prev, int later, uint32_t *first, uint32_t *index)
{
    at_t deps[2];
    int n = 0, i;
    acc_status_t st = ACC_OK;

    *first = acc_plan_prog(p, r, l)->nops;
    if (has_prologue(b, r) && l > 0 && *first == 0)
        deps[n++] = (at_t){0, 0};
    if (prev->lane >= 0 && prev->lane != l)
        deps[n++] = *prev;
    for (i = 0; i < n - !later && st == ACC_OK; i++) {
        acc_op_t nop = dep_nop(deps[i].lane, deps[i].op);
        st = acc_plan_add(p, r, l, &nop, NULL);
    }
    if (n && !later) {
        o.dep_lane = deps[n - 1].lane;
        o.dep_op = (int32_t)deps[n - 1].op;
    }
    if (st == ACC_OK)
        st = acc_plan_add(p, r, l, &o, index);
    return st;
}

/* Step s of thread block tb of rank r as operations; *prev is the block's last operation. */
static acc_status_t place_step(const build_t *b, acc_plan_t *p, int r, const ms_tb_t *tb,
                               ms_step_t *s, at_t *prev)
{
    acc_op_t o = acc_op_init((acc_opcode_t)s->code), send;
    int l = (s->uses & MS_RECVS)   ? tb->lane_recv
            : (s->uses & MS_SENDS) ? tb->lane_send
            : prev->lane >= 0      ? prev->lane
                                   : tb->lane;
    int cut = splits(tb, s);
    acc_status_t st;

    s->head_lane = s->tail_lane = l;
    if (!s->keep) { /* a dropped chain step stands for the operation before it */
        s->head_first = s->head = s->tail_first = s->tail = acc_plan_prog(p, r, l)->nops;
        return ACC_OK;
    }
    if ((s->uses & MS_SRC) && (st = map_ref(b, r, s, "src", s->src, &o.src)) != ACC_OK)
        return st;
    if ((s->uses & MS_DST) && (st = map_ref(b, r, s, "dst", s->dst, &o.dst)) != ACC_OK)
        return st;
    if (s->uses & MS_RECVS)
        o.peer = tb->recv;
    if (s->uses & MS_SENDS)
        *((s->uses & MS_RECVS) ? &o.peer2 : &o.peer) = tb->send;
    if (cut)
        split(b, tb, &o, &send);
    if ((st = place(b, p, r, l, o, prev, s->depid >= 0, &s->head_first, &s->head)) != ACC_OK)
        return st;
    *prev = (at_t){l, s->head};
    s->tail_first = s->head_first;
    s->tail = s->head;
    if (!cut)
        return ACC_OK;
    s->tail_lane = tb->lane_send;
    st = place(b, p, r, s->tail_lane, send, prev, 0, &s->tail_first, &s->tail);
    *prev = (at_t){s->tail_lane, s->tail};
    return st;
}

static acc_status_t build_rank(const build_t *b, acc_plan_t *p, int r)
{
    const ms_algo_t *a = b->a;
    const ms_gpu_t *g = &a->gpus[r];
    int l, t, k;
    acc_status_t st = ACC_OK;

    if (has_prologue(b, r)) {
        acc_ref_t home;
        ms_step_t s;
        memset(&s, 0, sizeof(s));
        s.line = a->line;
        map_ref(b, r, &s, "src", acc_ref(ACC_BUF_IN, 0, b->cin), &home);
        if ((st = acc_plan_copy(p, r, 0, acc_ref(ACC_BUF_IN, 0, b->cin), home)) != ACC_OK)
            return st;
    }
    for (t = 0; t < g->ntbs; t++) {
        at_t prev = {-1, 0};
        for (k = 0; k < g->tbs[t].nsteps; k++)
            if ((st = place_step(b, p, r, &g->tbs[t], &g->tbs[t].steps[k], &prev)) != ACC_OK)
                return st;
    }
    if (b->inplace_only && a->coll == ACC_COLL_REDUCE_SCATTER) {
        for (l = 1; l < b->nlanes; l++) {
            uint32_t n = acc_plan_prog(p, r, l)->nops;
            acc_op_t o;
            if (!n)
                continue;
            o = dep_nop(l, n - 1);
            if ((st = acc_plan_add(p, r, 0, &o, NULL)) != ACC_OK)
                return st;
        }
        st = acc_plan_copy(p, r, 0, acc_ref(ACC_BUF_SCRATCH, (uint32_t)r * b->cout, b->cout),
                           acc_ref(ACC_BUF_OUT, 0, b->cout));
    }
    return st;
}

/* Second pass: each step's own dependency, now that every step has its operations. */
static void set_deps(const build_t *b, acc_plan_t *p, int r)
{
    const ms_gpu_t *g = &b->a->gpus[r];
    int t, k;
    for (t = 0; t < g->ntbs; t++)
        for (k = 0; k < g->tbs[t].nsteps; k++) {
            const ms_step_t *s = &g->tbs[t].steps[k], *ds;
            acc_op_t *o;
            if (!s->keep || s->depid < 0)
                continue;
            ds = &g->tbs[s->depid].steps[s->deps];
            o = &acc_plan_prog(p, r, s->head_lane)->ops[s->head];
            /* a dropped chain step stands for the operation before it */
            if (!ds->keep && ds->tail == 0)
                continue;
            o->dep_lane = ds->tail_lane;
            o->dep_op = (int32_t)(ds->keep ? ds->tail : ds->tail - 1);
        }
}

static acc_status_t header(const build_t *b, acc_plan_t *p)
{
    const ms_algo_t *a = b->a;
    p->root = a->coll == ACC_COLL_BROADCAST || a->coll == ACC_COLL_REDUCE
                  ? (a->root >= 0 ? a->root : 0)
                  : -1;
    if (a->root < 0 && p->root == 0)
        ACC_INFO(COMPILER, "%s: %s without a root attribute: root 0 assumed", a->file,
                 acc_coll_name(a->coll));
    snprintf(p->algo, sizeof(p->algo), "%s", a->has_acc_algo ? a->acc_algo : "msccl");
    p->proto = a->proto;
    p->slots = a->acc_slots > 0 ? a->acc_slots : 8;
    p->inplace = a->inplace;
    if (a->has_acc_params)
        return acc_plan_set_params(p, "%s", a->acc_params);
    return acc_plan_set_params(p, "name=%.64s minBytes=%lld maxBytes=%lld%s%s", a->name,
                               a->min_bytes, a->max_bytes, a->extra,
                               b->inplace_only ? " inplace_only=1" : "");
}

/* The verifier speaks of ranks, lanes and operations; say which thread block and step of the
 * file that is. */
static acc_status_t explain(const build_t *b)
{
    const ms_algo_t *a = b->a;
    const char *msg = acc_error_message(), *at = msg;
    char copy[1024];
    int r, l, t, k;
    unsigned op;

    snprintf(copy, sizeof(copy), "%s", msg);
    while ((at = strstr(at, "rank ")) != NULL) {
        if (sscanf(at, "rank %d lane %d op %u", &r, &l, &op) == 3 && r >= 0 && r < a->ngpus)
            break;
        at++;
    }
    if (!at)
        return acc_error_set(ACC_ERR_VERIFY, "%s: the algorithm does not verify: %s", a->file,
                             copy);
    for (t = 0; t < a->gpus[r].ntbs; t++)
        for (k = 0; k < a->gpus[r].tbs[t].nsteps; k++) {
            const ms_step_t *s = &a->gpus[r].tbs[t].steps[k];
            if (s->keep && ((l == s->head_lane && op >= s->head_first && op <= s->head) ||
                            (l == s->tail_lane && op >= s->tail_first && op <= s->tail)))
                return acc_error_set(ACC_ERR_VERIFY,
                                     "%s:%d: gpu %d <tb id=\"%d\"> <step "
                                     "s=\"%d\"> does not verify (as plan rank %d lane %d op "
                                     "%u): %s",
                                     a->file, s->line, r, t, k, r, l, op, copy);
        }
    return acc_error_set(ACC_ERR_VERIFY,
                         "%s: the algorithm does not verify (rank %d lane %d op "
                         "%u is one acc adds to run an in-place-only algorithm out of place): %s",
                         a->file, r, l, op, copy);
}

acc_status_t ms_build_plan(ms_algo_t *a, acc_plan_t **out)
{
    build_t b;
    acc_plan_t *p = NULL;
    uint32_t scratch = 0, tmp;
    acc_status_t st;
    int r;

    memset(&b, 0, sizeof(b));
    b.a = a;
    b.inplace_only = !a->outofplace;
    if ((st = chunk_counts(&b)) != ACC_OK || (st = ms_assign_lanes(a, &b.nlanes)) != ACC_OK)
        return st;
    for (r = 0; r < a->ngpus; r++)
        if (a->gpus[r].s_chunks > scratch)
            scratch = a->gpus[r].s_chunks;
    if (b.inplace_only && a->coll == ACC_COLL_REDUCE_SCATTER) {
        b.scratch_home = b.cin;
        scratch += b.cin;
    }
    b.scratch_tmp = scratch;
    if ((st = tmp_scratch(&b, &tmp)) != ACC_OK)
        return st;
    scratch += tmp;
    st = acc_plan_create(a->coll, a->ngpus, b.nlanes, b.cin, b.cout, scratch, &p);
    if (st == ACC_OK)
        st = header(&b, p);
    for (r = 0; st == ACC_OK && r < a->ngpus; r++)
        st = build_rank(&b, p, r);
    if (st != ACC_OK)
        goto out;
    for (r = 0; r < a->ngpus; r++)
        set_deps(&b, p, r);
    if (acc_plan_verify(p) != ACC_OK) {
        st = explain(&b);
        goto out;
    }
    *out = p;
    p = NULL;
out:
    acc_plan_destroy(p);
    return st;
}
