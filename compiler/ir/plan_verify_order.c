/* Happens-before for the verifier.
 *
 * Two accesses to one chunk conflict when at least one writes it; the plan is correct in every
 * execution only if every conflicting pair is ordered.  The order is program order within a lane,
 * explicit dependencies, and signal -> the wait that observes it, transitively.  Messages order
 * no memory accesses of their own (acc_plan.h: peer memory is ordered only by signal/wait), and a
 * message only writes memory of its receiver's lane.
 *
 * Scale: only threads of ranks that share memory or counters can order or touch one chunk, so
 * ranks are put in groups (union-find over put/get/reduce_peers/signal/wait peers) and vector
 * clocks run over the threads of one group: a message-passing plan of 1024 ranks has 1024 groups
 * of one rank, a peer-memory step inside nodes of 8 has groups of 8.  An order that only arises
 * through a chain across other groups is not seen; the verifier then reports an unordered pair
 * that an explicit dependency would order, which is conservative, never wrong.
 *
 * Each rank also has a "start" thread preceding all its lanes: the initial contents of its
 * memory are written by it, so another rank may touch that memory only after a signal from the
 * rank (issued once it has started the collective), and every access by another rank must
 * precede the end of the rank's last lane (a rank returns only when nobody still uses its
 * buffers). */
#include "plan_verify_internal.h"

#include <string.h>

/* Budget for vector clocks and snapshots, in 32-bit words (512 MiB). */
#define PV_MAX_CLOCK_WORDS (1ull << 27)

static uint32_t find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void unite(uint32_t *parent, uint32_t a, uint32_t b)
{
    a = find(parent, a);
    b = find(parent, b);
    if (a != b)
        parent[a > b ? a : b] = a < b ? a : b;
}

static uint32_t dim(const pv_t *v, int rank)
{
    return v->order.gsize[v->order.gid[rank]] * v->order.stride;
}

static uint32_t tidx(const pv_t *v, int rank, int lane)
{
    return v->order.gpos[rank] * v->order.stride + (uint32_t)lane;
}

static uint64_t dep_key(const pv_t *v, int rank, int lane, uint32_t op)
{
    return ((uint64_t)((uint32_t)rank * (uint32_t)v->nlanes + (uint32_t)lane) << 32) | op;
}

static acc_status_t nomem(void)
{
    return acc_error_set(ACC_ERR_NOMEM, "out of memory verifying a plan");
}

static acc_status_t make_groups(pv_t *v)
{
    pv_order_t *o = &v->order;
    const acc_plan_t *p = v->plan;
    uint32_t n = (uint32_t)v->nexec, r, g, *parent, *fill = NULL;
    size_t t;
    acc_status_t st = ACC_OK;

    parent = acc_mem_alloc(n * sizeof(uint32_t));
    o->gid = acc_mem_alloc(n * sizeof(uint32_t));
    o->gpos = acc_mem_alloc(n * sizeof(uint32_t));
    o->members = acc_mem_alloc(n * sizeof(uint32_t));
    if (!parent || !o->gid || !o->gpos || !o->members) {
        st = nomem();
        goto out;
    }
    for (r = 0; r < n; r++)
        parent[r] = r;
    for (t = 0; t < (size_t)n * v->nlanes; t++) {
        const acc_lane_prog_t *prog = &p->progs[t];
        uint32_t i, k;
        r = (uint32_t)(t / v->nlanes);
        for (i = 0; i < prog->nops; i++) {
            const acc_op_t *op = &prog->ops[i];
            if (op->code == ACC_OP_PUT || op->code == ACC_OP_GET || op->code == ACC_OP_SIGNAL ||
                op->code == ACC_OP_WAIT)
                unite(parent, r, (uint32_t)op->peer);
            else if (op->code == ACC_OP_REDUCE_PEERS)
                for (k = 0; k < op->npeers; k++)
                    unite(parent, r, p->peer_pool[op->peers_off + k]);
        }
    }
    /* Number the groups by their smallest rank; members in rank order. */
    o->ngroups = 0;
    for (r = 0; r < n; r++)
        if (find(parent, r) == r)
            o->gid[r] = o->ngroups++;
    o->gsize = acc_mem_calloc(o->ngroups, sizeof(uint32_t));
    o->gfirst = acc_mem_calloc(o->ngroups + 1, sizeof(uint32_t));
    fill = acc_mem_calloc(o->ngroups, sizeof(uint32_t));
    if (!o->gsize || !o->gfirst || !fill) {
        st = nomem();
        goto out;
    }
    for (r = 0; r < n; r++) {
        o->gid[r] = o->gid[find(parent, r)];
        o->gsize[o->gid[r]]++;
    }
    for (g = 0; g < o->ngroups; g++)
        o->gfirst[g + 1] = o->gfirst[g] + o->gsize[g];
    for (r = 0; r < n; r++) {
        g = o->gid[r];
        o->gpos[r] = fill[g]++;
        o->members[o->gfirst[g] + o->gpos[r]] = r;
    }
out:
    acc_mem_free(parent);
    acc_mem_free(fill);
    return st;
}

acc_status_t pv_order_setup(pv_t *v)
{
    pv_order_t *o = &v->order;
    const acc_plan_t *p = v->plan;
    uint64_t words = 0, snap_words = 0;
    size_t t, nthr = (size_t)v->nexec * v->nlanes;
    uint32_t c, i;
    acc_status_t st;
    int r, l;

    o->stride = (uint32_t)v->nlanes + 1;
    if ((st = make_groups(v)) != ACC_OK)
        return st;
    for (r = 0; r < v->nexec; r++)
        words += (uint64_t)v->nlanes * dim(v, r);
    /* Snapshots: one per operation another lane depends on, one per signal. */
    for (t = 0; t < nthr; t++) {
        const acc_lane_prog_t *prog = &p->progs[t];
        r = (int)(t / v->nlanes);
        for (i = 0; i < prog->nops; i++) {
            const acc_op_t *op = &prog->ops[i];
            uint64_t key;
            if (op->dep_lane < 0 || op->dep_lane == (int)(t % v->nlanes))
                continue;
            key = dep_key(v, r, op->dep_lane, (uint32_t)op->dep_op);
            if (pv_map_get(&o->dep_snap, key) != PV_NONE)
                continue;
            if ((st = pv_map_put(&o->dep_snap, key, (uint32_t)snap_words)) != ACC_OK)
                return st;
            snap_words += dim(v, r);
        }
    }
    for (c = 0; c < v->nctrs; c++) {
        pv_counter_t *ct = &v->ctrs[c];
        ct->snap = (uint32_t)(snap_words < PV_NONE ? snap_words : 0);
        snap_words += (uint64_t)ct->nsig * dim(v, ct->from);
    }
    if (words + snap_words > PV_MAX_CLOCK_WORDS)
        return acc_error_set(ACC_ERR_RANGE,
                             "plan: ordering its %d ranks' memory accesses needs "
                             "%llu MiB of vector clocks, more than the verifier allows (%llu MiB); "
                             "groups of ranks linked by signal/wait or peer memory are too large",
                             v->nranks, (unsigned long long)((words + snap_words) >> 18),
                             (unsigned long long)(PV_MAX_CLOCK_WORDS >> 18));
    o->vc = acc_mem_alloc((nthr ? nthr : 1) * sizeof(uint32_t *));
    o->vc_pool = acc_mem_calloc(words ? (size_t)words : 1, sizeof(uint32_t));
    o->snaps = acc_mem_calloc(snap_words ? (size_t)snap_words : 1, sizeof(uint32_t));
    if (!o->vc || !o->vc_pool || !o->snaps)
        return nomem();
    o->nsnaps_words = (size_t)snap_words;
    words = 0;
    for (r = 0; r < v->nexec; r++)
        for (l = 0; l < v->nlanes; l++) {
            uint32_t *vc = o->vc_pool + words;
            o->vc[(size_t)r * v->nlanes + l] = vc;
            vc[tidx(v, r, v->nlanes)] = 1; /* every lane follows its rank's start */
            words += dim(v, r);
        }
    return ACC_OK;
}

void pv_order_free(pv_t *v)
{
    pv_order_t *o = &v->order;
    uint32_t i;
    acc_mem_free(o->gid);
    acc_mem_free(o->gpos);
    acc_mem_free(o->gsize);
    acc_mem_free(o->gfirst);
    acc_mem_free(o->members);
    acc_mem_free(o->vc);
    acc_mem_free(o->vc_pool);
    acc_mem_free(o->snaps);
    pv_map_free(&o->dep_snap);
    for (i = 0; i < o->nrsets; i++)
        acc_mem_free(o->rsets[i].e);
    acc_mem_free(o->rsets);
    memset(o, 0, sizeof(*o));
}

void pv_order_init_loc(const pv_t *v, int rank, pv_loc_t *loc)
{
    loc->wthr = v->order.gpos[rank] * v->order.stride + (uint32_t)v->nlanes;
    loc->wclk = 1;
    loc->rthr = PV_NONE;
    loc->rclk = 0;
    loc->rset = 0;
}

static uint32_t *clock_of(const pv_t *v, int rank, int lane)
{
    return v->order.vc[(size_t)rank * v->nlanes + lane];
}

static void join(uint32_t *dst, const uint32_t *src, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        if (src[i] > dst[i])
            dst[i] = src[i];
}

void pv_order_begin(pv_t *v, int rank, int lane, uint32_t op)
{
    clock_of(v, rank, lane)[tidx(v, rank, lane)] = op + 1;
}

void pv_order_dep(pv_t *v, int rank, int lane, int dep_lane, uint32_t dep_op)
{
    uint32_t off = pv_map_get(&v->order.dep_snap, dep_key(v, rank, dep_lane, dep_op));
    if (off != PV_NONE)
        join(clock_of(v, rank, lane), v->order.snaps + off, dim(v, rank));
}

acc_status_t pv_order_end(pv_t *v, int rank, int lane, uint32_t op)
{
    uint32_t off;
    if (!v->order.dep_snap.count)
        return ACC_OK;
    off = pv_map_get(&v->order.dep_snap, dep_key(v, rank, lane, op));
    if (off != PV_NONE)
        memcpy(v->order.snaps + off, clock_of(v, rank, lane), dim(v, rank) * sizeof(uint32_t));
    return ACC_OK;
}

void pv_order_signal(pv_t *v, int rank, int lane, uint32_t c)
{
    pv_counter_t *ct = &v->ctrs[c];
    uint32_t d = dim(v, rank);
    if (ct->value >= ct->nsig)
        return;
    memcpy(v->order.snaps + ct->snap + (size_t)ct->value * d, clock_of(v, rank, lane),
           d * sizeof(uint32_t));
    ct->snap_lane[ct->value] = (uint32_t)lane;
}

/* A wait that sees the counter at `value` knows that, of each signalling lane L, at least
 * value - (signals by all other lanes) signals have arrived: it joins the clock of the last of
 * those.  With one signalling lane that is simply the value-th signal. */
void pv_order_wait(pv_t *v, int rank, int lane, uint32_t c, uint32_t value)
{
    pv_counter_t *ct = &v->ctrs[c];
    uint32_t d = dim(v, ct->from), *vc = clock_of(v, rank, lane);
    int l;

    if (!value)
        return;
    if (!ct->lane_nsig) {
        join(vc, v->order.snaps + ct->snap + (size_t)(value - 1) * d, d);
        return;
    }
    for (l = 0; l < v->nlanes; l++) {
        int64_t need = (int64_t)value - (int64_t)(ct->nsig - ct->lane_nsig[l]);
        uint32_t a, seen = 0;
        if (need < 1 || !ct->lane_nsig[l])
            continue;
        for (a = 0; a < ct->value && a < ct->nsig; a++)
            if (ct->snap_lane[a] == (uint32_t)l && ++seen == (uint32_t)need) {
                join(vc, v->order.snaps + ct->snap + (size_t)a * d, d);
                break;
            }
    }
}

/* ---- per-chunk access history ----------------------------------------------------------- */

static void describe_thread_op(const pv_t *v, int owner, uint32_t thr, uint32_t clk, acc_buf_t *b)
{
    const pv_order_t *o = &v->order;
    uint32_t g = o->gid[owner];
    int r = (int)o->members[o->gfirst[g] + thr / o->stride];
    uint32_t lane = thr % o->stride;
    if (lane == (uint32_t)v->nlanes)
        acc_buf_printf(b, "rank %d's start of the collective", r);
    else
        pv_describe_op(v, r, (int)lane, clk - 1, b);
}

static acc_status_t conflict(const pv_t *v, int rank, int lane, uint32_t op, int at, uint8_t buf,
                             uint32_t k, int write, uint32_t thr, uint32_t clk, int other_writes)
{
    const pv_order_t *o = &v->order;
    acc_buf_t b;
    acc_status_t st;
    int start = thr % o->stride == (uint32_t)v->nlanes;

    acc_buf_init(&b);
    if (start) {
        acc_buf_printf(&b,
                       "%s %s[%u] of rank %d before rank %d is known to have started the "
                       "collective: wait for a signal from rank %d first",
                       write ? "writes" : "reads", acc_buf_name((acc_bufid_t)buf), k, at, at, at);
    } else {
        acc_buf_printf(&b, "%s %s[%u] of rank %d, which ", write ? "writes" : "reads",
                       acc_buf_name((acc_bufid_t)buf), k, at);
        describe_thread_op(v, at, thr, clk, &b);
        acc_buf_printf(&b,
                       " also %s, and nothing orders the two (program order, a dependency "
                       "or a signal/wait)",
                       other_writes ? "writes" : "reads");
    }
    st = pv_fail(v, rank, lane, op, "%s", b.data ? b.data : "unordered access");
    acc_buf_free(&b);
    return st;
}

static int hb(const uint32_t *vc, uint32_t thr, uint32_t clk)
{
    return vc[thr] >= clk;
}

static acc_status_t add_read(pv_t *v, pv_loc_t *l, uint32_t t, uint32_t clk)
{
    pv_order_t *o = &v->order;
    pv_rset_t *rs;
    void *p;
    size_t cap;

    if (l->rthr == PV_NONE) {
        l->rthr = t;
        l->rclk = clk;
        return ACC_OK;
    }
    if (!l->rset) {
        if (o->nrsets == o->rsets_cap) {
            cap = o->rsets_cap;
            p = o->rsets;
            if (acc_array_reserve(&p, &cap, (size_t)o->nrsets + 1, sizeof(pv_rset_t)) != ACC_OK ||
                cap >= PV_NONE)
                return nomem();
            o->rsets = p;
            o->rsets_cap = (uint32_t)cap;
        }
        memset(&o->rsets[o->nrsets], 0, sizeof(pv_rset_t));
        l->rset = ++o->nrsets;
    }
    rs = &o->rsets[l->rset - 1];
    cap = rs->cap;
    p = rs->e;
    if (acc_array_reserve(&p, &cap, 2 * ((size_t)rs->n + 1), sizeof(uint32_t)) != ACC_OK)
        return nomem();
    rs->e = p;
    rs->cap = (uint32_t)cap;
    rs->e[2 * rs->n] = t;
    rs->e[2 * rs->n + 1] = clk;
    rs->n++;
    return ACC_OK;
}

acc_status_t pv_order_access(pv_t *v, int rank, int lane, uint32_t op, int at, uint8_t buf,
                             uint32_t k, int write)
{
    pv_loc_t *l = pv_loc(v, at, buf, k);
    const uint32_t *vc = clock_of(v, rank, lane);
    uint32_t t = tidx(v, rank, lane), clk = op + 1, i, j;
    pv_rset_t *rs = l->rset ? &v->order.rsets[l->rset - 1] : NULL;

    if (!hb(vc, l->wthr, l->wclk))
        return conflict(v, rank, lane, op, at, buf, k, write, l->wthr, l->wclk, 1);
    if (write) {
        if (l->rthr != PV_NONE && !hb(vc, l->rthr, l->rclk))
            return conflict(v, rank, lane, op, at, buf, k, 1, l->rthr, l->rclk, 0);
        for (i = 0; rs && i < rs->n; i++)
            if (!hb(vc, rs->e[2 * i], rs->e[2 * i + 1]))
                return conflict(v, rank, lane, op, at, buf, k, 1, rs->e[2 * i], rs->e[2 * i + 1],
                                0);
        l->wthr = t;
        l->wclk = clk;
        l->rthr = PV_NONE;
        if (rs)
            rs->n = 0;
        return ACC_OK;
    }
    /* A read supersedes the reads that precede it: a later write ordered after it is ordered
     * after them too. */
    if (l->rthr != PV_NONE && hb(vc, l->rthr, l->rclk))
        l->rthr = PV_NONE;
    for (i = j = 0; rs && i < rs->n; i++) {
        if (hb(vc, rs->e[2 * i], rs->e[2 * i + 1]))
            continue;
        rs->e[2 * j] = rs->e[2 * i];
        rs->e[2 * j + 1] = rs->e[2 * i + 1];
        j++;
    }
    if (rs)
        rs->n = j;
    return add_read(v, l, t, clk);
}

/* ---- end of the collective -------------------------------------------------------------- */

static acc_status_t late(const pv_t *v, int owner, uint32_t idx, uint32_t thr, uint32_t clk,
                         int write)
{
    acc_buf_t b;
    acc_status_t st;
    uint32_t s = 0, k;
    while (s + 1 < ACC_BUF_COUNT && idx >= v->pbase[s + 1])
        s++;
    k = idx - v->pbase[s];
    acc_buf_init(&b);
    describe_thread_op(v, owner, thr, clk, &b);
    st = acc_error_set(ACC_ERR_VERIFY,
                       "%s: %s %s[%u] of rank %d, but rank %d may finish the "
                       "collective before that (it waits for no signal issued after the access)",
                       b.data ? b.data : "", write ? "writes" : "reads",
                       acc_buf_name((acc_bufid_t)s), k, owner, owner);
    acc_buf_free(&b);
    return st;
}

acc_status_t pv_order_finish(pv_t *v)
{
    pv_order_t *o = &v->order;
    uint32_t *end = NULL, i, d, mine_lo;
    acc_status_t st = ACC_OK;
    int r, l;

    for (r = 0; r < v->nexec && st == ACC_OK; r++) {
        if (o->gsize[o->gid[r]] < 2)
            continue;
        d = dim(v, r);
        acc_mem_free(end);
        if (!(end = acc_mem_calloc(d, sizeof(uint32_t))))
            return nomem();
        for (l = 0; l < v->nlanes; l++)
            join(end, clock_of(v, r, l), d);
        mine_lo = o->gpos[r] * o->stride;
        for (i = 0; i < v->rank_locs && st == ACC_OK; i++) {
            const pv_loc_t *loc = &v->locs[(size_t)r * v->rank_locs + i];
            const pv_rset_t *rs = loc->rset ? &o->rsets[loc->rset - 1] : NULL;
            uint32_t j;
            if ((loc->wthr < mine_lo || loc->wthr >= mine_lo + o->stride) &&
                !hb(end, loc->wthr, loc->wclk))
                st = late(v, r, i, loc->wthr, loc->wclk, 1);
            else if (loc->rthr != PV_NONE &&
                     (loc->rthr < mine_lo || loc->rthr >= mine_lo + o->stride) &&
                     !hb(end, loc->rthr, loc->rclk))
                st = late(v, r, i, loc->rthr, loc->rclk, 0);
            for (j = 0; rs && j < rs->n && st == ACC_OK; j++)
                if ((rs->e[2 * j] < mine_lo || rs->e[2 * j] >= mine_lo + o->stride) &&
                    !hb(end, rs->e[2 * j], rs->e[2 * j + 1]))
                    st = late(v, r, i, rs->e[2 * j], rs->e[2 * j + 1], 0);
        }
    }
    acc_mem_free(end);
    return st;
}
