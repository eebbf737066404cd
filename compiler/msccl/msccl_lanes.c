/*
 * MSCCL algorithm XML -> plan: thread blocks to lanes, steps to operations, verification.
 *
 * Connections.  MSCCL connects (sender, receiver, channel); acc connects (sender, receiver,
 * lane), and a lane is one sequential program on every rank.  So the thread block sending from
 * gpu a to gpu b on channel c and the one receiving it on gpu b must get the same lane.  Those
 * "same lane" links join thread blocks into groups; a group may hold at most one thread block
 * per gpu (two would have to run as one sequential program), and groups that share no gpu may
 * share a lane: lanes are given greedily, the lowest free on every gpu of the group, groups
 * taken in order of their first thread block.  Files written by acc_plan_export_msccl carry the
 * lanes themselves (acc_lane), and then thread blocks of one lane are concatenated in id order
 * (see msccl_export.c for that mapping).
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

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LANES 1024

typedef struct {
    ms_algo_t *a;
    uint32_t cin, cout; /* chunks of input and output per rank */
    int inplace_only;
    uint32_t scratch_home; /* reduce-scatter in place only: scratch chunks used as home */
    int nlanes;
} build_t;

static acc_status_t fail(const ms_algo_t *a, int line, const char *fmt, ...) ACC_PRINTF(3, 4);

static acc_status_t fail(const ms_algo_t *a, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return acc_error_set(ACC_ERR_PARSE, "%s:%d: %s", a->file, line, msg);
}

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
            return fail(a, a->gpus[g].line,
                        "gpu %d has i_chunks=%u o_chunks=%u but gpu 0 has "
                        "%u and %u: acc needs one buffer layout on every rank",
                        g, a->gpus[g].i_chunks, a->gpus[g].o_chunks, g0->i_chunks, g0->o_chunks);
    multipliers(a->coll, n, &min, &mout);
    if (!cin && !cout)
        return fail(a, g0->line, "gpu 0 has i_chunks=0 and o_chunks=0: no buffer to work on");
    /* an unused buffer (0 chunks, usual in place) has the size the collective gives it */
    if (!cin)
        cin = cout * min / mout;
    if (!cout)
        cout = cin * mout / min;
    if (!cin || !cout || cin * mout != cout * min || cin > UINT32_MAX / 2 || cout > UINT32_MAX / 2)
        return fail(a, g0->line,
                    "i_chunks=%u and o_chunks=%u make chunks of different sizes for "
                    "%s of %d gpus (the output holds %u times the input's elements)",
                    g0->i_chunks, g0->o_chunks, acc_coll_name(a->coll), a->ngpus,
                    mout / (min < mout ? min : mout));
    big = (uint32_t)(min > mout ? cin : cout);
    if ((uint32_t)a->nchunksperloop != big)
        return fail(a, a->line,
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
        return fail(a, s->line,
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

/* ---- lanes -------------------------------------------------------------------------------- */

static int tb_sends(const ms_tb_t *t)
{
    int k;
    for (k = 0; k < t->nsteps; k++)
        if (t->steps[k].uses & MS_SENDS)
            return 1;
    return 0;
}

static int tb_recvs(const ms_tb_t *t)
{
    int k;
    for (k = 0; k < t->nsteps; k++)
        if (t->steps[k].uses & MS_RECVS)
            return 1;
    return 0;
}

typedef struct {
    uint64_t key; /* (from, to, channel) */
    uint32_t tb;  /* global thread block index */
    int sender;
} end_t;

static int cmp_end(const void *x, const void *y)
{
    const end_t *p = x, *q = y;
    if (p->key != q->key)
        return p->key < q->key ? -1 : 1;
    return p->sender - q->sender;
}

static uint32_t find(uint32_t *parent, uint32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

typedef struct {
    uint32_t root, tb;
    int gpu;
} member_t;

static int cmp_member(const void *x, const void *y)
{
    const member_t *p = x, *q = y;
    if (p->root != q->root)
        return p->root < q->root ? -1 : 1;
    if (p->gpu != q->gpu)
        return p->gpu - q->gpu;
    return p->tb < q->tb ? -1 : p->tb > q->tb;
}

/* Generic files: link each sending thread block to its receiver, then colour the groups. */
static acc_status_t assign_lanes(build_t *b, ms_tb_t **tbs, const int *gpu_of, uint32_t total)
{
    ms_algo_t *a = b->a;
    end_t *ends = acc_calloc(2 * (size_t)total + 1, sizeof(end_t));
    uint32_t *parent = acc_calloc((size_t)total + 1, sizeof(uint32_t));
    member_t *mem = acc_calloc((size_t)total + 1, sizeof(member_t));
    uint32_t *start = acc_calloc((size_t)total + 1, sizeof(uint32_t));
    unsigned char *used = acc_calloc((size_t)a->ngpus, MAX_LANES);
    size_t nends = 0, i, j;
    uint64_t n = (uint64_t)a->ngpus;
    acc_status_t st = ACC_OK;

    if (!ends || !parent || !mem || !start || !used) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory mapping %s to lanes", a->file);
        goto out;
    }
    for (i = 0; i < total; i++) {
        const ms_tb_t *t = tbs[i];
        parent[i] = (uint32_t)i;
        if (t->send >= 0 && tb_sends(t))
            ends[nends++] =
                (end_t){((uint64_t)gpu_of[i] * n + (uint64_t)t->send) * 1024 + (uint64_t)t->chan,
                        (uint32_t)i, 1};
        if (t->recv >= 0 && tb_recvs(t))
            ends[nends++] =
                (end_t){((uint64_t)t->recv * n + (uint64_t)gpu_of[i]) * 1024 + (uint64_t)t->chan,
                        (uint32_t)i, 0};
    }
    qsort(ends, nends, sizeof(end_t), cmp_end);
    for (i = 0; i < nends; i = j) {
        const end_t *e = &ends[i];
        int from = (int)(e->key / 1024 / n), to = (int)(e->key / 1024 % n);
        int chan = (int)(e->key % 1024);
        size_t nr = 0, ns;
        for (j = i; j < nends && ends[j].key == e->key; j++)
            nr += !ends[j].sender;
        ns = j - i - nr;
        if (nr == 1 && ns == 1) {
            uint32_t x = find(parent, ends[i].tb), y = find(parent, ends[i + 1].tb);
            parent[x < y ? y : x] = x < y ? x : y;
            continue;
        }
        if (nr > 1 || ns > 1) {
            size_t d = nr > 1 ? i : i + nr; /* the first two of the duplicated side */
            const ms_tb_t *t1 = tbs[ends[d].tb], *t2 = tbs[ends[d + 1].tb];
            st =
                fail(a, t2->line,
                     "gpu %d tb %d and tb %d (line %d) both %s gpu %d on channel "
                     "%d: MSCCL connects (sender, receiver, channel) once, so their order "
                     "would be undefined",
                     gpu_of[ends[d + 1].tb], t1->id, t2->id, t1->line,
                     ends[d].sender ? "send to" : "receive from", ends[d].sender ? to : from, chan);
        } else if (ns) {
            st = fail(a, tbs[e->tb]->line,
                      "gpu %d tb %d sends to gpu %d on channel %d, but no "
                      "<tb> of gpu %d has recv=\"%d\" chan=\"%d\" with receiving steps",
                      from, tbs[e->tb]->id, to, chan, to, from, chan);
        } else {
            st = fail(a, tbs[e->tb]->line,
                      "gpu %d tb %d receives from gpu %d on channel %d, but "
                      "no <tb> of gpu %d has send=\"%d\" chan=\"%d\" with sending steps",
                      to, tbs[e->tb]->id, from, chan, from, to, chan);
        }
        goto out;
    }
    for (i = 0; i < total; i++)
        mem[i] = (member_t){find(parent, (uint32_t)i), (uint32_t)i, gpu_of[i]};
    qsort(mem, total, sizeof(member_t), cmp_member);
    for (i = 0; i < total; i = j) {
        for (j = i + 1; j < total && mem[j].root == mem[i].root; j++)
            if (mem[j].gpu == mem[j - 1].gpu) {
                const ms_tb_t *t1 = tbs[mem[j - 1].tb], *t2 = tbs[mem[j].tb];
                st = fail(a, t2->line,
                          "gpu %d tb %d and tb %d (line %d) are linked through "
                          "the connections of their peers on the same channels, so they would "
                          "have to run as one lane; give one of them another channel",
                          mem[j].gpu, t1->id, t2->id, t1->line);
                goto out;
            }
        start[mem[i].root] = (uint32_t)i; /* groups by root; the root is its first block */
    }
    /* groups in order of their first thread block: that block is the root (union by min) */
    for (i = 0; i < total; i++) {
        uint32_t k, lane;
        if (find(parent, (uint32_t)i) != i)
            continue;
        for (lane = 0; lane < MAX_LANES; lane++) {
            for (k = start[i]; k < total && mem[k].root == i; k++)
                if (used[(size_t)mem[k].gpu * MAX_LANES + lane])
                    break;
            if (k == total || mem[k].root != i)
                break;
        }
        if (lane == MAX_LANES) {
            st = fail(a, tbs[i]->line, "the thread blocks need more than %d lanes", MAX_LANES);
            goto out;
        }
        for (k = start[i]; k < total && mem[k].root == i; k++) {
            used[(size_t)mem[k].gpu * MAX_LANES + lane] = 1;
            tbs[mem[k].tb]->lane = (int)lane;
        }
        if ((int)lane + 1 > b->nlanes)
            b->nlanes = (int)lane + 1;
    }
out:
    acc_free(ends);
    acc_free(parent);
    acc_free(mem);
    acc_free(start);
    acc_free(used);
    return st;
}

/* Files from acc_plan_export_msccl: lanes as written; a dependency on the block's own lane is
 * the chain that keeps the lane's order across its thread blocks, implied here by lane order. */
static acc_status_t hinted_lanes(build_t *b)
{
    ms_algo_t *a = b->a;
    int g, t, k;
    b->nlanes = a->acc_nlanes;
    for (g = 0; g < a->ngpus; g++)
        for (t = 0; t < a->gpus[g].ntbs; t++) {
            ms_tb_t *tb = &a->gpus[g].tbs[t];
            if (tb->hint_lane >= a->acc_nlanes)
                return fail(a, tb->line,
                            "<tb acc_lane=\"%d\">: the algorithm has "
                            "acc_nlanes=\"%d\"",
                            tb->hint_lane, a->acc_nlanes);
            tb->lane = tb->hint_lane;
        }
    for (g = 0; g < a->ngpus; g++)
        for (t = 0; t < a->gpus[g].ntbs; t++) {
            ms_tb_t *tb = &a->gpus[g].tbs[t];
            for (k = 0; k < tb->nsteps; k++) {
                ms_step_t *s = &tb->steps[k];
                if (s->depid < 0 || a->gpus[g].tbs[s->depid].lane != tb->lane)
                    continue;
                if (s->depid > t)
                    return fail(a, s->line,
                                "gpu %d tb %d waits for tb %d of the same lane "
                                "(acc_lane=\"%d\"), which comes later in it",
                                g, t, s->depid, tb->lane);
                if (s->code == ACC_OP_NOP)
                    s->keep = 0;
                s->depid = s->deps = -1;
            }
        }
    return ACC_OK;
}

static acc_status_t lanes(build_t *b)
{
    ms_algo_t *a = b->a;
    uint32_t total = 0, i = 0;
    ms_tb_t **tbs;
    int *gpu_of, g, t, hinted = 0;
    acc_status_t st;

    for (g = 0; g < a->ngpus; g++) {
        total += (uint32_t)a->gpus[g].ntbs;
        for (t = 0; t < a->gpus[g].ntbs; t++)
            hinted += a->gpus[g].tbs[t].hint_lane >= 0;
    }
    b->nlanes = 1;
    if (hinted && (hinted != (int)total || a->acc_nlanes < 1))
        return fail(a, a->line,
                    "%d of %u thread blocks have acc_lane%s: give every <tb> an "
                    "acc_lane and <algo> acc_nlanes, or none of them",
                    hinted, total, a->acc_nlanes < 1 ? " but <algo> has no acc_nlanes" : "");
    if (hinted || (a->acc_nlanes > 0 && !total))
        return hinted_lanes(b);
    tbs = acc_calloc((size_t)total + 1, sizeof(*tbs));
    gpu_of = acc_calloc((size_t)total + 1, sizeof(int));
    if (!tbs || !gpu_of) {
        acc_free(tbs);
        acc_free(gpu_of);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory mapping %s to lanes", a->file);
    }
    for (g = 0; g < a->ngpus; g++)
        for (t = 0; t < a->gpus[g].ntbs; t++) {
            gpu_of[i] = g;
            tbs[i++] = &a->gpus[g].tbs[t];
        }
    st = assign_lanes(b, tbs, gpu_of, total);
    acc_free(tbs);
    acc_free(gpu_of);
    return st;
}

/* ---- the plan ------------------------------------------------------------------------------ */

static acc_status_t add_op(acc_plan_t *p, int r, int l, acc_op_t op)
{
    return acc_plan_add(p, r, l, &op, NULL);
}

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

static acc_status_t build_rank(const build_t *b, acc_plan_t *p, int r)
{
    const ms_algo_t *a = b->a;
    const ms_gpu_t *g = &a->gpus[r];
    int l, t, k, pro = has_prologue(b, r);
    acc_status_t st = ACC_OK;

    if (pro) {
        acc_ref_t home;
        ms_step_t s;
        acc_op_t o = acc_op_init(ACC_OP_COPY);
        memset(&s, 0, sizeof(s));
        s.line = a->line;
        map_ref(b, r, &s, "src", acc_ref(ACC_BUF_IN, 0, b->cin), &home);
        o.src = acc_ref(ACC_BUF_IN, 0, b->cin);
        o.dst = home;
        if ((st = add_op(p, r, 0, o)) != ACC_OK)
            return st;
    }
    for (l = 0; l < b->nlanes; l++) {
        int first = 1;
        for (t = 0; t < g->ntbs; t++) {
            ms_tb_t *tb = &g->tbs[t];
            if (tb->lane != l)
                continue;
            for (k = 0; k < tb->nsteps; k++) {
                ms_step_t *s = &tb->steps[k];
                acc_op_t o = acc_op_init((acc_opcode_t)s->code);
                s->op = acc_plan_prog(p, r, l)->nops;
                if (!s->keep)
                    continue;
                if (first && pro && l > 0) {
                    if ((st = add_op(p, r, l, dep_nop(0, 0))) != ACC_OK)
                        return st;
                    s->op++;
                }
                first = 0;
                if ((s->uses & MS_SRC) && (st = map_ref(b, r, s, "src", s->src, &o.src)) != ACC_OK)
                    return st;
                if ((s->uses & MS_DST) && (st = map_ref(b, r, s, "dst", s->dst, &o.dst)) != ACC_OK)
                    return st;
                if (s->uses & MS_RECVS)
                    o.peer = tb->recv;
                if (s->uses & MS_SENDS)
                    *((s->uses & MS_RECVS) ? &o.peer2 : &o.peer) = tb->send;
                if ((st = add_op(p, r, l, o)) != ACC_OK)
                    return st;
            }
        }
    }
    if (b->inplace_only && a->coll == ACC_COLL_REDUCE_SCATTER) {
        acc_op_t o = acc_op_init(ACC_OP_COPY);
        for (l = 1; l < b->nlanes; l++) {
            uint32_t n = acc_plan_prog(p, r, l)->nops;
            if (n && (st = add_op(p, r, 0, dep_nop(l, n - 1))) != ACC_OK)
                return st;
        }
        o.src = acc_ref(ACC_BUF_SCRATCH, (uint32_t)r * b->cout, b->cout);
        o.dst = acc_ref(ACC_BUF_OUT, 0, b->cout);
        st = add_op(p, r, 0, o);
    }
    return st;
}

/* Second pass: dependencies, now that every step has its operation index. */
static void set_deps(const build_t *b, acc_plan_t *p, int r)
{
    const ms_gpu_t *g = &b->a->gpus[r];
    int t, k;
    for (t = 0; t < g->ntbs; t++)
        for (k = 0; k < g->tbs[t].nsteps; k++) {
            const ms_step_t *s = &g->tbs[t].steps[k];
            const ms_tb_t *d;
            const ms_step_t *ds;
            acc_op_t *o;
            if (!s->keep || s->depid < 0)
                continue;
            d = &g->tbs[s->depid];
            ds = &d->steps[s->deps];
            o = &acc_plan_prog(p, r, g->tbs[t].lane)->ops[s->op];
            /* a dropped chain step stands for the operation before it */
            if (!ds->keep && ds->op == 0)
                continue;
            o->dep_lane = d->lane;
            o->dep_op = (int32_t)(ds->keep ? ds->op : ds->op - 1);
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
            if (s->keep && a->gpus[r].tbs[t].lane == l && s->op == op)
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
    uint32_t scratch = 0;
    acc_status_t st;
    int r;

    memset(&b, 0, sizeof(b));
    b.a = a;
    b.inplace_only = !a->outofplace;
    if ((st = chunk_counts(&b)) != ACC_OK || (st = lanes(&b)) != ACC_OK)
        return st;
    for (r = 0; r < a->ngpus; r++)
        if (a->gpus[r].s_chunks > scratch)
            scratch = a->gpus[r].s_chunks;
    if (b.inplace_only && a->coll == ACC_COLL_REDUCE_SCATTER) {
        b.scratch_home = b.cin;
        scratch += b.cin;
    }
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
