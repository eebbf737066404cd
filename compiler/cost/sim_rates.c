/*
 * Flows and their max-min fair rates.
 *
 * A flow uses each of its resources with a weight (bytes of that resource per byte of the
 * flow) and is capped at its lane's rate.  The fair allocation is found by progressive filling:
 * every unfrozen flow's rate rises together; a resource saturates when its capacity minus what
 * frozen flows use, divided by the weights of the unfrozen flows on it, is reached, and freezes
 * those flows; a flow reaching its cap freezes alone.
 *
 * Only contended resources can bind: a resource whose flows, all at their caps, fit in it
 * (demand <= capacity) never saturates before every flow on it is frozen by its cap or by
 * another resource.  So after every batch of events the computation starts from the flows that
 * were started, and from the flows of contended resources that lost a flow, and spreads only
 * through contended resources: its cost is the size of the coupled component, not of the
 * plan, and flows that share nothing contended get their cap at once.
 */
#include "sim_internal.h"

#include <math.h>
#include <string.h>

#define REL_EPS 1e-9

static int contended(const sim_res_t *r)
{
    return r->demand > r->cap * (1.0 + REL_EPS);
}

static acc_status_t push_u32(uint32_t **arr, uint32_t *n, uint32_t *cap, uint32_t v)
{
    if (*n == *cap) {
        size_t c = *cap;
        void *p = *arr;
        if (acc_array_reserve(&p, &c, (size_t)*n + 1, sizeof(uint32_t)) != ACC_OK)
            return acc_error_set(ACC_ERR_NOMEM, "out of memory in the simulator's rate lists");
        *arr = p;
        *cap = (uint32_t)c;
    }
    (*arr)[(*n)++] = v;
    return ACC_OK;
}

static acc_status_t mark_dirty(acc_sim_t *sim, uint32_t r)
{
    if (sim->res[r].dirty)
        return ACC_OK;
    sim->res[r].dirty = 1;
    return push_u32(&sim->dirty_res, &sim->ndirty, &sim->dirty_cap, r);
}

acc_status_t sim_flow_start(acc_sim_t *sim, const uint32_t *res, const float *w, uint32_t nres,
                            double bytes, double cap, uint32_t *out)
{
    uint32_t fi, k;
    sim_flow_t *f;

    if (sim->flow_free != SIM_NONE) {
        fi = sim->flow_free;
        sim->flow_free = sim->flows[fi].conn;
    } else {
        if (sim->nflows == sim->flows_cap) {
            size_t c = sim->flows_cap;
            void *p = sim->flows;
            if (acc_array_reserve(&p, &c, (size_t)sim->nflows + 1, sizeof(sim_flow_t)) != ACC_OK)
                return acc_error_set(ACC_ERR_NOMEM, "out of memory for %u simulated flows",
                                     sim->nflows + 1);
            sim->flows = p;
            sim->flows_cap = (uint32_t)c;
        }
        fi = sim->nflows++;
        sim->flows[fi].version = 0;
    }
    f = &sim->flows[fi];
    f->rem = bytes;
    f->bytes = bytes;
    f->t0 = sim->now;
    f->rate = 0;
    f->cap = cap;
    f->nres = nres;
    f->thread = SIM_NONE;
    f->conn = f->seq = SIM_NONE;
    f->kind = SIM_FLOW_OP;
    f->active = 1;
    f->queued = 0;
    f->fresh = 1;
    for (k = 0; k < nres; k++) {
        sim_res_t *r = &sim->res[res[k]];
        uint32_t slot = fi * SIM_FLOW_MAXRES + k;
        f->r[k].res = res[k];
        f->r[k].w = w[k];
        f->r[k].prev = SIM_NONE;
        f->r[k].next = r->head;
        if (r->head != SIM_NONE)
            sim->flows[r->head / SIM_FLOW_MAXRES].r[r->head % SIM_FLOW_MAXRES].prev = slot;
        r->head = slot;
        r->nflows++;
        r->demand += cap * w[k];
    }
    sim->transfers++;
    *out = fi;
    return ACC_OK;
}

acc_status_t sim_flow_commit(acc_sim_t *sim, uint32_t fi)
{
    sim_flow_t *f = &sim->flows[fi];
    uint32_t k;

    for (k = 0; k < f->nres; k++)
        if (contended(&sim->res[f->r[k].res]))
            return push_u32(&sim->fresh, &sim->nfresh, &sim->fresh_cap, fi);
    /* Nothing it uses can saturate: it runs at its cap, and no other flow changes.  Should a
     * later flow of this batch make one of its resources contended, the computation for that
     * flow reaches this one through the resource; either way its first rate is announced
     * (sim_on_rate) only at the end of the batch, when it is final. */
    f->rate = f->cap;
    f->version++;
    if (sim_queue_push(&sim->q, sim->now + f->rem / f->rate, SIM_EV_FLOW, fi, f->version) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the simulator's events");
    return push_u32(&sim->firsts, &sim->nfirsts, &sim->firsts_cap, fi);
}

acc_status_t sim_flow_end(acc_sim_t *sim, uint32_t fi)
{
    sim_flow_t *f = &sim->flows[fi];
    acc_status_t st = ACC_OK;
    uint32_t k;

    for (k = 0; k < f->nres; k++) {
        sim_res_t *r = &sim->res[f->r[k].res];
        /* A contended resource losing a flow may free bandwidth for the others. */
        if (contended(r) && st == ACC_OK)
            st = mark_dirty(sim, f->r[k].res);
        if (f->r[k].prev != SIM_NONE)
            sim->flows[f->r[k].prev / SIM_FLOW_MAXRES].r[f->r[k].prev % SIM_FLOW_MAXRES].next =
                f->r[k].next;
        else
            r->head = f->r[k].next;
        if (f->r[k].next != SIM_NONE)
            sim->flows[f->r[k].next / SIM_FLOW_MAXRES].r[f->r[k].next % SIM_FLOW_MAXRES].prev =
                f->r[k].prev;
        r->demand = --r->nflows ? r->demand - f->cap * f->r[k].w : 0.0;
    }
    f->active = 0;
    f->version++;
    f->conn = sim->flow_free;
    sim->flow_free = fi;
    return st;
}

/* Queue a flow for this computation. */
static acc_status_t enqueue(acc_sim_t *sim, uint32_t fi)
{
    sim_flow_t *f = &sim->flows[fi];
    if (f->queued || !f->active)
        return ACC_OK;
    f->queued = 1;
    return push_u32(&sim->work, &sim->nwork, &sim->work_cap, fi);
}

/* Flows to re-rate: the fresh ones, those of dirty resources, and, transitively, every flow
 * sharing a contended resource with one of them. */
static acc_status_t collect(acc_sim_t *sim)
{
    uint32_t i, k, s;
    acc_status_t st;

    for (i = 0; i < sim->nfresh; i++)
        if ((st = enqueue(sim, sim->fresh[i])) != ACC_OK)
            return st;
    for (i = 0; i < sim->ndirty; i++) {
        sim_res_t *r = &sim->res[sim->dirty_res[i]];
        r->dirty = 0;
        for (s = r->head; s != SIM_NONE;
             s = sim->flows[s / SIM_FLOW_MAXRES].r[s % SIM_FLOW_MAXRES].next)
            if ((st = enqueue(sim, s / SIM_FLOW_MAXRES)) != ACC_OK)
                return st;
    }
    for (i = 0; i < sim->nwork; i++) {
        uint32_t fi = sim->work[i];
        for (k = 0; k < sim->flows[fi].nres; k++) {
            uint32_t ri = sim->flows[fi].r[k].res;
            sim_res_t *r = &sim->res[ri];
            if (r->seen || !contended(r))
                continue;
            r->seen = 1;
            r->rem = r->cap;
            r->wsum = 0;
            if ((st = push_u32(&sim->comp_res, &sim->ncomp_res, &sim->comp_res_cap, ri)) != ACC_OK)
                return st;
            for (s = r->head; s != SIM_NONE;
                 s = sim->flows[s / SIM_FLOW_MAXRES].r[s % SIM_FLOW_MAXRES].next)
                if ((st = enqueue(sim, s / SIM_FLOW_MAXRES)) != ACC_OK)
                    return st;
        }
    }
    return ACC_OK;
}

static acc_status_t reserve_scratch(acc_sim_t *sim, uint32_t n)
{
    uint32_t cap = sim->rates_cap * 2 > n ? sim->rates_cap * 2 : n;
    double *r;
    uint32_t *u;

    if (n <= sim->rates_cap)
        return ACC_OK;
    r = acc_mem_realloc_array(sim->rates, cap, sizeof(double));
    if (r)
        sim->rates = r;
    u = r ? acc_mem_realloc_array(sim->unf, 2 * (size_t)cap, sizeof(uint32_t)) : NULL;
    if (!u)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory computing rates of %u flows", n);
    sim->unf = u;
    sim->rates_cap = cap;
    return ACC_OK;
}

/* Progressive filling over the collected flows: rates[i] for work[i].  Flows on no contended
 * resource take their cap at once; the others rise together, level by level. */
static void fill(acc_sim_t *sim)
{
    uint32_t i, k, nunf = 0, *unf = sim->unf, *idx = sim->unf + sim->rates_cap;

    /* rem: capacity left by the frozen flows; wsum: weight of the flows still rising.  Both
     * are kept up to date as flows freeze, so a level costs a scan, not a recount. */
    for (i = 0; i < sim->ncomp_res; i++) {
        sim_res_t *r = &sim->res[sim->comp_res[i]];
        r->rem = r->cap;
        r->wsum = 0;
    }
    for (i = 0; i < sim->nwork; i++) {
        sim_flow_t *f = &sim->flows[sim->work[i]];
        f->unfrozen = 0;
        for (k = 0; k < f->nres; k++)
            if (sim->res[f->r[k].res].seen) {
                sim->res[f->r[k].res].wsum += f->r[k].w;
                f->unfrozen = 1;
            }
        sim->rates[i] = f->cap;
        if (f->unfrozen) {
            idx[nunf] = i;
            unf[nunf++] = sim->work[i];
        }
    }
    while (nunf > 0) {
        double lvl = INFINITY, thr;
        uint32_t j = 0;
        for (i = 0; i < sim->ncomp_res; i++) {
            const sim_res_t *r = &sim->res[sim->comp_res[i]];
            if (r->wsum > 1e-12 && r->rem / r->wsum < lvl)
                lvl = r->rem / r->wsum;
        }
        for (i = 0; i < nunf; i++)
            if (sim->flows[unf[i]].cap < lvl)
                lvl = sim->flows[unf[i]].cap;
        thr = lvl * (1.0 + REL_EPS) + 1e-12;
        /* Judge every flow against this round's saturated resources before any usage moves. */
        for (i = 0; i < sim->ncomp_res; i++) {
            sim_res_t *r = &sim->res[sim->comp_res[i]];
            r->sat = r->wsum > 1e-12 && r->rem / r->wsum <= thr;
        }
        for (i = 0; i < nunf; i++) {
            sim_flow_t *f = &sim->flows[unf[i]];
            int freeze = f->cap <= thr;
            for (k = 0; k < f->nres && !freeze; k++)
                freeze = sim->res[f->r[k].res].seen && sim->res[f->r[k].res].sat;
            if (!freeze) {
                unf[j] = unf[i];
                idx[j++] = idx[i];
                continue;
            }
            /* Rounding may leave a saturated resource a hair below zero: keep rates positive
             * so that every flow finishes. */
            sim->rates[idx[i]] =
                lvl < f->cap ? (lvl > f->cap * 1e-9 ? lvl : f->cap * 1e-9) : f->cap;
            f->unfrozen = 0;
            /* Its usage leaves now; this level's saturation flags were set before. */
            for (k = 0; k < f->nres; k++) {
                sim_res_t *r = &sim->res[f->r[k].res];
                if (r->seen) {
                    r->rem -= sim->rates[idx[i]] * f->r[k].w;
                    r->wsum -= f->r[k].w;
                }
            }
        }
        for (i = 0; i < sim->ncomp_res; i++)
            sim->res[sim->comp_res[i]].sat = 0;
        nunf = j;
    }
}

acc_status_t sim_rates_update(acc_sim_t *sim)
{
    acc_status_t st = ACC_OK;
    uint32_t i;

    if (sim->nfresh == 0 && sim->ndirty == 0)
        goto firsts;
    if ((st = collect(sim)) != ACC_OK || (st = reserve_scratch(sim, sim->nwork)) != ACC_OK)
        goto out;
    fill(sim);
    for (i = 0; i < sim->nwork && st == ACC_OK; i++) {
        uint32_t fi = sim->work[i];
        sim_flow_t *f = &sim->flows[fi];
        int first = f->fresh;
        f->queued = 0;
        f->fresh = 0;
        if (!first && sim->rates[i] == f->rate)
            continue;
        if (f->rate > 0) {
            f->rem -= f->rate * (sim->now - f->t0);
            if (f->rem < 0)
                f->rem = 0;
        }
        f->t0 = sim->now;
        f->rate = sim->rates[i];
        f->version++;
        st = sim_queue_push(&sim->q, sim->now + f->rem / f->rate, SIM_EV_FLOW, fi, f->version);
        if (st == ACC_OK)
            st = sim_on_rate(sim, fi, first);
    }
out:
    for (i = 0; i < sim->ncomp_res; i++)
        sim->res[sim->comp_res[i]].seen = 0;
    for (i = 0; i < sim->nwork; i++)
        sim->flows[sim->work[i]].queued = 0;
    sim->nfresh = sim->ndirty = sim->nwork = sim->ncomp_res = 0;
firsts:
    /* Flows started at their cap and not re-rated since: their first rate is final now. */
    for (i = 0; i < sim->nfirsts && st == ACC_OK; i++) {
        sim_flow_t *f = &sim->flows[sim->firsts[i]];
        if (!f->active || !f->fresh)
            continue;
        f->fresh = 0;
        st = sim_on_rate(sim, sim->firsts[i], 1);
    }
    sim->nfirsts = 0;
    return st;
}

void sim_flows_reset(acc_sim_t *sim)
{
    sim->nflows = 0;
    sim->flow_free = SIM_NONE;
    sim->nfresh = sim->ndirty = sim->nwork = sim->ncomp_res = sim->nfirsts = 0;
}
