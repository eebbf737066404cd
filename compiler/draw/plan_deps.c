/*
 * A plan's operations as a dependency graph, for its timeline and critical path.
 *
 * An operation waits for at most three others: the previous one of its lane (lanes run in
 * order), its explicit dependency on another lane of its rank, and on its peer either the send
 * whose message it receives (sends and receives of two ranks on one lane match in FIFO order,
 * schedules/FORMAT.md) or, for a wait, the signal that brings its counter to the value it waits
 * for.  The signals of one counter are taken in lane order; where that could order them
 * against time (a plan whose lanes signal one counter in turn) the steps are counted again
 * without them, so a picture never loops.
 */
#include "draw_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int from, to, key; /* key: lane for messages, slot for signals */
    uint32_t value;    /* a wait's */
    uint64_t op;
} end_t;

static int cmp_end(const void *pa, const void *pb)
{
    const end_t *a = pa, *b = pb;
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    if (a->to != b->to)
        return a->to < b->to ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->op < b->op ? -1 : a->op > b->op;
}

/* Each receive's send: both lists sorted by (from, to, lane, operation), zipped per key. */
static void match_messages(draw_deps_t *d, end_t *snd, size_t ns, end_t *rcv, size_t nr)
{
    size_t i = 0, j = 0;

    qsort(snd, ns, sizeof(end_t), cmp_end);
    qsort(rcv, nr, sizeof(end_t), cmp_end);
    while (i < ns && j < nr) {
        int c = cmp_end(&(end_t){snd[i].from, snd[i].to, snd[i].key, 0, 0},
                        &(end_t){rcv[j].from, rcv[j].to, rcv[j].key, 0, 0});
        if (c == 0)
            d->pred[3 * rcv[j++].op + 2] = (int64_t)snd[i++].op;
        else if (c < 0)
            i++;
        else
            j++;
    }
}

/* Each wait's signal: the value-th of its counter's signals in lane order. */
static void match_signals(draw_deps_t *d, end_t *sig, size_t ns, end_t *wt, size_t nw)
{
    size_t j, first;

    qsort(sig, ns, sizeof(end_t), cmp_end);
    for (j = 0; j < nw; j++) {
        size_t lo = 0, hi = ns;
        uint32_t v = wt[j].value;
        while (lo < hi) { /* first signal of the counter (from, to, slot) */
            size_t m = (lo + hi) / 2;
            if (cmp_end(&sig[m], &(end_t){wt[j].from, wt[j].to, wt[j].key, 0, 0}) < 0)
                lo = m + 1;
            else
                hi = m;
        }
        first = lo;
        if (v >= 1 && first + v - 1 < ns && sig[first + v - 1].from == wt[j].from &&
            sig[first + v - 1].to == wt[j].to && sig[first + v - 1].key == wt[j].key)
            d->pred[3 * wt[j].op + 2] = (int64_t)sig[first + v - 1].op;
    }
}

acc_status_t draw_deps_build(const acc_plan_t *plan, draw_deps_t *d)
{
    size_t t, k, ns = 0, nr = 0, ng = 0, nw = 0;
    int nl = plan->nlanes;
    end_t *snd = NULL, *rcv = NULL, *sig = NULL, *wt = NULL;
    acc_status_t st = ACC_OK;

    memset(d, 0, sizeof(*d));
    d->plan = plan;
    d->nth = (size_t)plan->nranks * (size_t)nl;
    d->nops = acc_plan_op_count(plan);
    d->off = acc_mem_calloc(d->nth + 1, sizeof(uint64_t));
    d->pred = acc_mem_calloc(3 * d->nops + 1, sizeof(int64_t));
    d->t = acc_mem_calloc(2 * d->nops + 1, sizeof(double));
    d->crit = acc_mem_calloc(d->nops + 1, 1);
    d->wait = acc_mem_calloc(d->nops + 1, 1);
    snd = acc_mem_calloc(d->nops + 1, sizeof(end_t));
    rcv = acc_mem_calloc(d->nops + 1, sizeof(end_t));
    sig = acc_mem_calloc(d->nops + 1, sizeof(end_t));
    wt = acc_mem_calloc(d->nops + 1, sizeof(end_t));
    if (!d->off || !d->pred || !d->t || !d->crit || !d->wait || !snd || !rcv || !sig || !wt) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for the picture of %zu operations",
                           d->nops);
        goto out;
    }
    for (t = 0; t < d->nth; t++)
        d->off[t + 1] = d->off[t] + plan->progs[t].nops;
    for (t = 0; t < d->nth; t++) {
        int rank = (int)(t / (size_t)nl), lane = (int)(t % (size_t)nl);
        for (k = 0; k < plan->progs[t].nops; k++) {
            const acc_op_t *op = &plan->progs[t].ops[k];
            uint64_t i = d->off[t] + k;
            int to = acc_op_send_peer(op);
            d->pred[3 * i] = k > 0 ? (int64_t)i - 1 : -1;
            d->pred[3 * i + 1] =
                op->dep_lane >= 0
                    ? (int64_t)(d->off[(size_t)rank * (size_t)nl + (size_t)op->dep_lane] +
                                (uint64_t)op->dep_op)
                    : -1;
            d->pred[3 * i + 2] = -1;
            if (to >= 0)
                snd[ns++] = (end_t){rank, to, lane, 0, i};
            if (acc_op_recv_peer(op) >= 0)
                rcv[nr++] = (end_t){op->peer, rank, lane, 0, i};
            if (op->code == ACC_OP_SIGNAL)
                sig[ng++] = (end_t){rank, op->peer, op->slot, 0, i};
            if (op->code == ACC_OP_WAIT) {
                wt[nw++] = (end_t){op->peer, rank, op->slot, op->value, i};
                d->wait[i] = 1;
            }
        }
    }
    match_messages(d, snd, ns, rcv, nr);
    match_signals(d, sig, ng, wt, nw);
out:
    acc_mem_free(snd);
    acc_mem_free(rcv);
    acc_mem_free(sig);
    acc_mem_free(wt);
    if (st != ACC_OK)
        draw_deps_free(d);
    return st;
}

/* Kahn's order over the predecessors; the operations ordered, or fewer where a cycle stops it. */
static size_t kahn(draw_deps_t *d, int with_peer, uint32_t *indeg, uint64_t *succ_off,
                   uint64_t *succ, uint64_t *queue)
{
    size_t i, head = 0, tail = 0;
    int p;

    memset(indeg, 0, d->nops * sizeof(uint32_t));
    memset(succ_off, 0, (d->nops + 1) * sizeof(uint64_t));
    for (i = 0; i < d->nops; i++)
        for (p = 0; p < (with_peer ? 3 : 2); p++)
            if (d->pred[3 * i + (size_t)p] >= 0) {
                indeg[i]++;
                succ_off[d->pred[3 * i + (size_t)p] + 1]++;
            }
    for (i = 0; i < d->nops; i++)
        succ_off[i + 1] += succ_off[i];
    {
        uint64_t *fill = queue; /* borrowed as the fill pointers until the queue starts */
        memcpy(fill, succ_off, d->nops * sizeof(uint64_t));
        for (i = 0; i < d->nops; i++)
            for (p = 0; p < (with_peer ? 3 : 2); p++)
                if (d->pred[3 * i + (size_t)p] >= 0)
                    succ[fill[d->pred[3 * i + (size_t)p]]++] = i;
    }
    for (i = 0; i < d->nops; i++) {
        d->t[2 * i] = 0;
        if (!indeg[i])
            queue[tail++] = i;
    }
    while (head < tail) {
        uint64_t u = queue[head++], s;
        d->t[2 * u + 1] = d->t[2 * u] + 1;
        for (s = succ_off[u]; s < succ_off[u + 1]; s++) {
            uint64_t v = succ[s];
            if (d->t[2 * v] < d->t[2 * u + 1])
                d->t[2 * v] = d->t[2 * u + 1];
            if (--indeg[v] == 0)
                queue[tail++] = v;
        }
    }
    return tail;
}

acc_status_t draw_deps_steps(draw_deps_t *d)
{
    uint32_t *indeg = acc_mem_calloc(d->nops + 1, sizeof(uint32_t));
    uint64_t *succ_off = acc_mem_calloc(d->nops + 2, sizeof(uint64_t));
    uint64_t *succ = acc_mem_calloc(3 * d->nops + 1, sizeof(uint64_t));
    uint64_t *queue = acc_mem_calloc(d->nops + 1, sizeof(uint64_t));
    acc_status_t st = ACC_OK;
    size_t i;

    if (!indeg || !succ_off || !succ || !queue) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for the steps of %zu operations", d->nops);
    } else if (kahn(d, 1, indeg, succ_off, succ, queue) < d->nops) {
        /* Signals matched in lane order against time: count without them. */
        for (i = 0; i < d->nops; i++)
            if (d->wait[i])
                d->pred[3 * i + 2] = -1;
        if (kahn(d, 1, indeg, succ_off, succ, queue) < d->nops)
            kahn(d, 0, indeg, succ_off, succ, queue);
    }
    d->simulated = 0;
    d->end = 0;
    for (i = 0; i < d->nops; i++)
        if (d->t[2 * i + 1] > d->end)
            d->end = d->t[2 * i + 1];
    acc_mem_free(indeg);
    acc_mem_free(succ_off);
    acc_mem_free(succ);
    acc_mem_free(queue);
    return st;
}

void draw_deps_critical(draw_deps_t *d)
{
    size_t i, last = 0, guard;
    int64_t u;

    d->ncrit = 0;
    if (!d->nops)
        return;
    memset(d->crit, 0, d->nops);
    for (i = 1; i < d->nops; i++)
        if (d->t[2 * i + 1] > d->t[2 * last + 1])
            last = i;
    /* Back through the predecessor that ended last; a predecessor always ends no later than
     * its successor starts, so the walk only goes back in time (the guard is for a plan the
     * simulator priced with overlapping ends). */
    for (u = (int64_t)last, guard = 0; u >= 0 && !d->crit[u] && guard <= d->nops; guard++) {
        int64_t best = -1;
        int p;
        d->crit[u] = 1;
        d->ncrit++;
        /* Ties go to the peer's operation, then the other lane's: what another rank or lane
         * holds up is what the picture is for (a lane's own order is always there). */
        for (p = 2; p >= 0; p--) {
            int64_t q = d->pred[3 * (size_t)u + (size_t)p];
            if (q >= 0 && (best < 0 || d->t[2 * (size_t)q + 1] > d->t[2 * (size_t)best + 1]))
                best = q;
        }
        u = best;
    }
}

void draw_deps_free(draw_deps_t *d)
{
    acc_mem_free(d->off);
    acc_mem_free(d->pred);
    acc_mem_free(d->t);
    acc_mem_free(d->crit);
    acc_mem_free(d->wait);
    memset(d, 0, sizeof(*d));
}
