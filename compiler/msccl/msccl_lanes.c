/*
 * MSCCL algorithm XML -> plan, first half: thread blocks to lanes.
 *
 * MSCCL runs every thread block as a sequential program of its own, and connects gpus per
 * (sender, receiver, channel); acc connects (sender, receiver, lane), a lane being one
 * sequential program per rank.  So every MSCCL connection gets an acc lane, the same at both of
 * its ends, and on each rank a lane carries the operations of one thread block only: two blocks
 * on one lane would have to run as one program, which can deadlock where MSCCL runs them side by
 * side.  A block's steps then go to the lanes of the connections they use (msccl_build.c keeps
 * the block's order across its lanes with dependencies).
 *
 * Finding the lanes.  A block has a sending port where it has steps that send and a receiving
 * port where it has steps that receive; a connection ties the sender's sending port to the
 * receiver's receiving port, and those two must share a lane.  Block by block in file order, a
 * block's two ports are then joined into one group when the group still holds at most one block
 * per gpu: such a block runs its fused steps (rcs, rrs, rrcs) as they are, while the fused steps
 * of a block whose ports stay apart (its peer has, say, one block to send to it and another to
 * receive from it on that channel) are split in two.  Last, the groups, in order of their first
 * block, each take the lowest lane that no other block uses on any of their gpus.  A file
 * whose connections link at most one block per gpu gets one lane per block, as it always has.
 *
 * A group holds at most one block per gpu and a block at most two ports, so a group has at most
 * 2 x ngpus ports; checking a join walks both groups, at most 4 x ngpus steps per block.
 *
 * Files written by acc_plan_export_msccl carry the lanes themselves (acc_lane), and then thread
 * blocks of one lane are concatenated in id order (see msccl_export.c for that mapping).
 */
#include "msccl_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LANES 1024
#define NONE      UINT32_MAX

/* Ports: 2t is block t's sending port (or the block itself, when it has neither port, so that
 * every block gets a lane), 2t + 1 its receiving port. */
typedef struct {
    ms_algo_t *a;
    ms_tb_t **tbs; /* every thread block, gpu by gpu */
    int *gpu_of;
    uint32_t total;        /* thread blocks */
    uint32_t *parent;      /* union-find over ports, the root of a group its smallest port */
    uint32_t *next, *last; /* each group's ports as a list, from its root */
    unsigned char *present;
    uint32_t *mark, *mark_tb, gen; /* per gpu: the block a group has there, in round gen */
    int *lane;                     /* per group root */
} ports_t;

/* Does the block have a port in direction dir (MS_SENDS or MS_RECVS): steps that send to its
 * send= peer, or that receive from its recv= peer? */
static int has_port(const ms_tb_t *t, int dir)
{
    int k, peer = dir == MS_SENDS ? t->send : t->recv;
    for (k = 0; peer >= 0 && k < t->nsteps; k++)
        if (t->steps[k].uses & dir)
            return 1;
    return 0;
}

static uint32_t find(uint32_t *parent, uint32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

/* Join the groups of ports x and y; the smaller root stays the root. */
static void join(ports_t *s, uint32_t x, uint32_t y)
{
    uint32_t rx = find(s->parent, x), ry = find(s->parent, y), lo, hi;
    if (rx == ry)
        return;
    lo = rx < ry ? rx : ry;
    hi = rx < ry ? ry : rx;
    s->parent[hi] = lo;
    s->next[s->last[lo]] = hi;
    s->last[lo] = s->last[hi];
}

/* May the groups of roots x and y become one: is there no gpu where they have different blocks? */
static int may_join(ports_t *s, uint32_t x, uint32_t y)
{
    uint32_t i;
    s->gen++;
    for (i = y; i != NONE; i = s->next[i]) {
        s->mark[s->gpu_of[i / 2]] = s->gen;
        s->mark_tb[s->gpu_of[i / 2]] = i / 2;
    }
    for (i = x; i != NONE; i = s->next[i])
        if (s->mark[s->gpu_of[i / 2]] == s->gen && s->mark_tb[s->gpu_of[i / 2]] != i / 2)
            return 0;
    return 1;
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

/* The complaint about connection ends[i .. j), which is not one sender and one receiver. */
static acc_status_t bad_connection(const ports_t *s, const end_t *ends, size_t i, size_t j)
{
    const ms_algo_t *a = s->a;
    uint64_t n = (uint64_t)a->ngpus, key = ends[i].key;
    int from = (int)(key / 1024 / n), to = (int)(key / 1024 % n), chan = (int)(key % 1024);
    size_t nr = 0, k;
    const ms_tb_t *t = s->tbs[ends[i].tb];

    for (k = i; k < j; k++)
        nr += !ends[k].sender;
    if (nr > 1 || j - i - nr > 1) {
        size_t d = nr > 1 ? i : i + nr; /* the first two of the duplicated side */
        const ms_tb_t *t1 = s->tbs[ends[d].tb], *t2 = s->tbs[ends[d + 1].tb];
        return ms_fail(a, t2->line,
                       "gpu %d tb %d and tb %d (line %d) both %s gpu %d on channel %d: MSCCL "
                       "connects (sender, receiver, channel) once, so their order would be "
                       "undefined",
                       s->gpu_of[ends[d + 1].tb], t1->id, t2->id, t1->line,
                       ends[d].sender ? "send to" : "receive from", ends[d].sender ? to : from,
                       chan);
    }
    if (!nr)
        return ms_fail(a, t->line,
                       "gpu %d tb %d sends to gpu %d on channel %d, but no <tb> of gpu %d has "
                       "recv=\"%d\" chan=\"%d\" with receiving steps",
                       from, t->id, to, chan, to, from, chan);
    return ms_fail(a, t->line,
                   "gpu %d tb %d receives from gpu %d on channel %d, but no <tb> of gpu %d has "
                   "send=\"%d\" chan=\"%d\" with sending steps",
                   to, t->id, from, chan, from, to, chan);
}

/* The ports of every block, each sending port tied to the receiving port at the other end of
 * its connection. */
static acc_status_t connect(ports_t *s)
{
    const ms_algo_t *a = s->a;
    end_t *ends = acc_mem_calloc(2 * (size_t)s->total + 1, sizeof(end_t));
    size_t nends = 0, i, j;
    uint64_t n = (uint64_t)a->ngpus;
    uint32_t t;
    acc_status_t st = ACC_OK;

    if (!ends)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory mapping %s to lanes", a->file);
    for (t = 0; t < s->total; t++) {
        const ms_tb_t *tb = s->tbs[t];
        uint64_t g = (uint64_t)s->gpu_of[t], chan = (uint64_t)tb->chan;
        if (has_port(tb, MS_SENDS))
            ends[nends++] = (end_t){(g * n + (uint64_t)tb->send) * 1024 + chan, t, 1};
        if (has_port(tb, MS_RECVS))
            ends[nends++] = (end_t){((uint64_t)tb->recv * n + g) * 1024 + chan, t, 0};
        s->present[2 * t] = has_port(tb, MS_SENDS) || !has_port(tb, MS_RECVS);
        s->present[2 * t + 1] = has_port(tb, MS_RECVS);
    }
    qsort(ends, nends, sizeof(end_t), cmp_end);
    for (i = 0; i < nends; i = j) {
        for (j = i; j < nends && ends[j].key == ends[i].key; j++)
            ;
        /* the receiver sorts first */
        if (j - i != 2 || ends[i].sender || !ends[i + 1].sender) {
            st = bad_connection(s, ends, i, j);
            break;
        }
        join(s, 2 * ends[i + 1].tb, 2 * ends[i].tb + 1);
    }
    acc_mem_free(ends);
    return st;
}

/* Each group, in order of its smallest port, takes the lowest lane free for it on all its gpus:
 * owner[gpu][lane] is the block (+ 1) using the lane there, 0 none. */
static acc_status_t colour(ports_t *s, int *nlanes)
{
    const ms_algo_t *a = s->a;
    uint32_t groups = 0, nl, p, i, lane, *owner;

    for (p = 0; p < 2 * s->total; p++)
        groups += s->present[p] && find(s->parent, p) == p;
    nl = groups < MAX_LANES ? groups : MAX_LANES;
    owner = acc_mem_calloc((size_t)a->ngpus * nl + 1, sizeof(uint32_t));
    if (!owner)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory mapping %s to lanes", a->file);
    *nlanes = 1;
    for (p = 0; p < 2 * s->total; p++) {
        if (!s->present[p] || s->parent[p] != p)
            continue;
        for (lane = 0; lane < nl; lane++) {
            for (i = p; i != NONE; i = s->next[i]) {
                uint32_t o = owner[(size_t)s->gpu_of[i / 2] * nl + lane];
                if (o && o != i / 2 + 1)
                    break;
            }
            if (i == NONE)
                break;
        }
        if (lane == nl) {
            acc_mem_free(owner);
            return ms_fail(a, s->tbs[p / 2]->line, "the thread blocks need more than %d lanes",
                           MAX_LANES);
        }
        for (i = p; i != NONE; i = s->next[i])
            owner[(size_t)s->gpu_of[i / 2] * nl + lane] = i / 2 + 1;
        s->lane[p] = (int)lane;
        if ((int)lane + 1 > *nlanes)
            *nlanes = (int)lane + 1;
    }
    acc_mem_free(owner);
    return ACC_OK;
}

/* Generic files: ports, connections, joined blocks, lanes. */
static acc_status_t generic_lanes(ports_t *s, int *nlanes)
{
    uint32_t t, np = 2 * s->total;
    acc_status_t st;

    for (t = 0; t < np; t++) {
        s->parent[t] = t;
        s->next[t] = NONE;
        s->last[t] = t;
    }
    if ((st = connect(s)) != ACC_OK)
        return st;
    for (t = 0; t < s->total; t++) {
        uint32_t x = find(s->parent, 2 * t), y = find(s->parent, 2 * t + 1);
        if (s->present[2 * t] && s->present[2 * t + 1] && x != y && may_join(s, x, y))
            join(s, x, y);
    }
    if ((st = colour(s, nlanes)) != ACC_OK)
        return st;
    for (t = 0; t < s->total; t++) {
        ms_tb_t *tb = s->tbs[t];
        int k;
        tb->lane_send = has_port(tb, MS_SENDS) ? s->lane[find(s->parent, 2 * t)] : -1;
        tb->lane_recv = has_port(tb, MS_RECVS) ? s->lane[find(s->parent, 2 * t + 1)] : -1;
        for (k = 0; k < tb->nsteps && !(tb->steps[k].uses & (MS_SENDS | MS_RECVS)); k++)
            ;
        if (k == tb->nsteps) /* no connection: the block's own group */
            tb->lane = s->lane[find(s->parent, 2 * t)];
        else
            tb->lane = (tb->steps[k].uses & MS_RECVS) ? tb->lane_recv : tb->lane_send;
    }
    return ACC_OK;
}

/* Files from acc_plan_export_msccl: lanes as written; a dependency on the block's own lane is
 * the chain that keeps the lane's order across its thread blocks, implied here by lane order. */
static acc_status_t hinted_lanes(ms_algo_t *a, int *nlanes)
{
    int g, t, k;
    *nlanes = a->acc_nlanes;
    for (g = 0; g < a->ngpus; g++)
        for (t = 0; t < a->gpus[g].ntbs; t++) {
            ms_tb_t *tb = &a->gpus[g].tbs[t];
            if (tb->hint_lane >= a->acc_nlanes)
                return ms_fail(a, tb->line,
                               "<tb acc_lane=\"%d\">: the algorithm has acc_nlanes=\"%d\"",
                               tb->hint_lane, a->acc_nlanes);
            tb->lane = tb->lane_send = tb->lane_recv = tb->hint_lane;
        }
    for (g = 0; g < a->ngpus; g++)
        for (t = 0; t < a->gpus[g].ntbs; t++) {
            ms_tb_t *tb = &a->gpus[g].tbs[t];
            for (k = 0; k < tb->nsteps; k++) {
                ms_step_t *s = &tb->steps[k];
                if (s->depid < 0 || a->gpus[g].tbs[s->depid].lane != tb->lane)
                    continue;
                if (s->depid > t)
                    return ms_fail(a, s->line,
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

acc_status_t ms_assign_lanes(ms_algo_t *a, int *nlanes)
{
    ports_t s;
    uint32_t i = 0, np;
    int g, t, hinted = 0;
    acc_status_t st;

    memset(&s, 0, sizeof(s));
    s.a = a;
    for (g = 0; g < a->ngpus; g++) {
        s.total += (uint32_t)a->gpus[g].ntbs;
        for (t = 0; t < a->gpus[g].ntbs; t++)
            hinted += a->gpus[g].tbs[t].hint_lane >= 0;
    }
    *nlanes = 1;
    if (hinted && (hinted != (int)s.total || a->acc_nlanes < 1))
        return ms_fail(a, a->line,
                       "%d of %u thread blocks have acc_lane%s: give every <tb> an acc_lane and "
                       "<algo> acc_nlanes, or none of them",
                       hinted, s.total, a->acc_nlanes < 1 ? " but <algo> has no acc_nlanes" : "");
    if (hinted || (a->acc_nlanes > 0 && !s.total))
        return hinted_lanes(a, nlanes);
    np = 2 * s.total;
    s.tbs = acc_mem_calloc((size_t)s.total + 1, sizeof(*s.tbs));
    s.gpu_of = acc_mem_calloc((size_t)s.total + 1, sizeof(int));
    s.parent = acc_mem_calloc((size_t)np + 1, sizeof(uint32_t));
    s.next = acc_mem_calloc((size_t)np + 1, sizeof(uint32_t));
    s.last = acc_mem_calloc((size_t)np + 1, sizeof(uint32_t));
    s.present = acc_mem_calloc((size_t)np + 1, 1);
    s.lane = acc_mem_calloc((size_t)np + 1, sizeof(int));
    s.mark = acc_mem_calloc((size_t)a->ngpus, sizeof(uint32_t));
    s.mark_tb = acc_mem_calloc((size_t)a->ngpus, sizeof(uint32_t));
    if (!s.tbs || !s.gpu_of || !s.parent || !s.next || !s.last || !s.present || !s.lane ||
        !s.mark || !s.mark_tb) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory mapping %s to lanes", a->file);
        goto out;
    }
    for (g = 0; g < a->ngpus; g++)
        for (t = 0; t < a->gpus[g].ntbs; t++) {
            s.gpu_of[i] = g;
            s.tbs[i++] = &a->gpus[g].tbs[t];
        }
    st = generic_lanes(&s, nlanes);
out:
    acc_mem_free(s.tbs);
    acc_mem_free(s.gpu_of);
    acc_mem_free(s.parent);
    acc_mem_free(s.next);
    acc_mem_free(s.last);
    acc_mem_free(s.present);
    acc_mem_free(s.lane);
    acc_mem_free(s.mark);
    acc_mem_free(s.mark_tb);
    return st;
}
