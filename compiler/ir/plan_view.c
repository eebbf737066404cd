/* A rank's view of a plan (acc_plan.h): its own programs, the edges into the ranks near it and
 * the flags of its operations that complete a reduction, worked out here from the whole plan.
 * cplan_view.c makes the same view from the binary class form without the other programs. */
#include "plan_internal.h"

#include <stdlib.h>
#include <string.h>

void acc_plan_view_destroy(acc_plan_view_t *v)
{
    if (!v)
        return;
    acc_mem_free(v->near);
    acc_mem_free(v->edges);
    acc_mem_free(v->final);
    acc_mem_free(v);
}

static int edge_cmp(const void *a, const void *b)
{
    const acc_plan_edge_t *x = a, *y = b;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    if (x->sig != y->sig)
        return x->sig < y->sig ? -1 : 1;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->chan != y->chan)
        return x->chan < y->chan ? -1 : 1;
    return 0;
}

static int rank_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

void plan_view_finish(acc_plan_view_t *v)
{
    uint32_t i, n = 0;

    if (v->nedges)
        qsort(v->edges, v->nedges, sizeof(*v->edges), edge_cmp);
    for (i = 0; i < v->nedges; i++) {
        acc_plan_edge_t *e = &v->edges[i];
        if (n && edge_cmp(&v->edges[n - 1], e) == 0) {
            acc_plan_edge_t *m = &v->edges[n - 1];
            if (e->maxcnt > m->maxcnt)
                m->maxcnt = e->maxcnt;
            m->count += e->count;
        } else {
            v->edges[n++] = *e;
        }
    }
    v->nedges = n;
    if (v->nnear)
        qsort(v->near, v->nnear, sizeof(*v->near), rank_cmp);
}

/* Add r to the near ranks unless it is there: a rank's operations name few peers, each many
 * times (a ring's program names two, thousands of times). */
static acc_status_t add_near(acc_plan_view_t *v, size_t *cap, int32_t r)
{
    if (r < 0)
        return ACC_OK;
    for (uint32_t i = v->nnear; i-- > 0;)
        if (v->near[i] == r)
            return ACC_OK;
    if (acc_array_reserve((void **)&v->near, cap, v->nnear + 1, sizeof(int32_t)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a rank's view");
    v->near[v->nnear++] = r;
    return ACC_OK;
}

acc_status_t plan_view_near(acc_plan_t *p)
{
    acc_plan_view_t *v = p->view;
    size_t cap = 0;
    acc_status_t st = add_near(v, &cap, v->rank);
    for (int l = 0; l < p->nlanes && st == ACC_OK; l++) {
        const acc_lane_prog_t *prog = &p->progs[l];
        int32_t last[2] = {-1, -1};
        for (uint32_t i = 0; i < prog->nops && st == ACC_OK; i++) {
            const acc_op_t *op = &prog->ops[i];
            /* The same peers as the operation before: nothing to look up. */
            if (op->peer != last[0] && (st = add_near(v, &cap, op->peer)) == ACC_OK)
                last[0] = op->peer;
            if (st == ACC_OK && op->peer2 != last[1] &&
                (st = add_near(v, &cap, op->peer2)) == ACC_OK)
                last[1] = op->peer2;
            for (uint32_t j = 0; op->code == ACC_OP_REDUCE_PEERS && j < op->npeers && st == ACC_OK;
                 j++)
                st = add_near(v, &cap, (int32_t)p->peer_pool[op->peers_off + j]);
        }
    }
    return st;
}

static acc_status_t add_edge(acc_plan_view_t *v, size_t *cap, const acc_plan_edge_t *e)
{
    if (acc_array_reserve((void **)&v->edges, cap, v->nedges + 1, sizeof(*e)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a rank's view");
    v->edges[v->nedges++] = *e;
    return ACC_OK;
}

/* Every edge into a near rank (is_near: per rank), and whether any rank touches a peer's
 * memory. */
static acc_status_t edges_of(acc_plan_view_t *v, const acc_plan_t *p, const uint8_t *is_near)
{
    acc_status_t st = ACC_OK;
    size_t cap = 0;
    for (int r = 0; r < p->nranks && st == ACC_OK; r++)
        for (int l = 0; l < p->nlanes && st == ACC_OK; l++) {
            const acc_lane_prog_t *prog = &p->progs[(size_t)r * p->nlanes + l];
            for (uint32_t k = 0; k < prog->nops && st == ACC_OK; k++) {
                const acc_op_t *op = &prog->ops[k];
                int to = acc_op_send_peer(op);
                if (plan_peer_memory_op(op->code))
                    v->staged = 1;
                if (to >= 0 && is_near[to]) {
                    acc_plan_edge_t e = {
                        0, r, to, (uint32_t)l, plan_msg_chunks(op->code, op->src.cnt, op->dst.cnt),
                        1};
                    st = add_edge(v, &cap, &e);
                } else if (op->code == ACC_OP_SIGNAL && op->peer >= 0 && is_near[op->peer]) {
                    acc_plan_edge_t e = {1, r, op->peer, op->slot, 0, 1};
                    st = add_edge(v, &cap, &e);
                }
            }
        }
    return st;
}

/* This rank's flags from the whole plan's (program order over ranks). */
static acc_status_t finals_of(acc_plan_view_t *v, const acc_plan_t *p)
{
    uint8_t *all = NULL;
    size_t n = 0, first = 0, own = 0;
    acc_status_t st;

    if (!acc_coll_reduces(p->coll))
        return ACC_OK;
    if ((st = acc_plan_final_reductions(p, &all, &n)) == ACC_ERR_UNSUPPORTED)
        return ACC_OK;
    if (st != ACC_OK)
        return st;
    for (int r = 0; r < v->rank; r++)
        for (int l = 0; l < p->nlanes; l++)
            first += p->progs[(size_t)r * p->nlanes + l].nops;
    for (int l = 0; l < p->nlanes; l++)
        own += p->progs[(size_t)v->rank * p->nlanes + l].nops;
    if ((v->final = acc_mem_calloc(own + 1, 1)) && first + own <= n)
        memcpy(v->final, all + first, own);
    acc_mem_free(all);
    return v->final ? ACC_OK : acc_error_set(ACC_ERR_NOMEM, "out of memory for a rank's view");
}

acc_status_t plan_view_shell(const acc_plan_t *hdr, int rank, acc_plan_t **out)
{
    acc_plan_t *v;
    acc_status_t st = acc_plan_create(hdr->coll, 1, hdr->nlanes, hdr->in_chunks, hdr->out_chunks,
                                      hdr->scratch_chunks, &v);
    *out = NULL;
    if (st != ACC_OK)
        return st;
    v->nranks = hdr->nranks;
    plan_copy_header(v, hdr);
    if (hdr->npeer_pool) {
        uint32_t off;
        st = acc_plan_add_peers(v, hdr->peer_pool, hdr->npeer_pool, &off);
    }
    if (st == ACC_OK && !(v->view = acc_mem_calloc(1, sizeof(acc_plan_view_t))))
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for a rank's view");
    if (st != ACC_OK) {
        acc_plan_destroy(v);
        return st;
    }
    v->view->rank = rank;
    *out = v;
    return ACC_OK;
}

/* The view's plan: the header with rank's programs copied. */
static acc_status_t view_plan(const acc_plan_t *p, int rank, acc_plan_t **out)
{
    acc_plan_t *v;
    acc_status_t st = plan_view_shell(p, rank, &v);
    for (int l = 0; l < p->nlanes && st == ACC_OK; l++) {
        const acc_lane_prog_t *src = &p->progs[(size_t)rank * p->nlanes + l];
        if (!src->nops)
            continue;
        if (!(v->progs[l].ops = acc_mem_realloc_array(NULL, src->nops, sizeof(acc_op_t)))) {
            st = acc_error_set(ACC_ERR_NOMEM, "out of memory for a rank's view");
        } else {
            memcpy(v->progs[l].ops, src->ops, src->nops * sizeof(acc_op_t));
            v->progs[l].nops = v->progs[l].cap = src->nops;
        }
    }
    if (st != ACC_OK) {
        acc_plan_destroy(v);
        return st;
    }
    *out = v;
    return ACC_OK;
}

acc_status_t acc_plan_view_of(const acc_plan_t *p, int rank, acc_plan_t **out)
{
    uint8_t *is_near = NULL;
    acc_plan_t *v = NULL;
    acc_status_t st;

    *out = NULL;
    if (!p || p->view)
        return acc_error_set(ACC_ERR_INVALID, "acc_plan_view_of: %s",
                             p ? "the plan is a view already" : "no plan");
    if (rank < 0 || rank >= p->nranks)
        return acc_error_set(ACC_ERR_INVALID, "acc_plan_view_of: rank %d of a %d-rank plan", rank,
                             p->nranks);
    if ((st = view_plan(p, rank, &v)) != ACC_OK)
        return st;
    if (!(is_near = acc_mem_calloc((size_t)p->nranks, 1)))
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for a rank's view");
    if (st == ACC_OK && (st = plan_view_near(v)) == ACC_OK) {
        for (uint32_t i = 0; i < v->view->nnear; i++)
            is_near[v->view->near[i]] = 1;
        if ((st = edges_of(v->view, p, is_near)) == ACC_OK &&
            (st = finals_of(v->view, p)) == ACC_OK)
            plan_view_finish(v->view);
    }
    acc_mem_free(is_near);
    if (st != ACC_OK) {
        acc_plan_destroy(v);
        return st;
    }
    *out = v;
    return ACC_OK;
}
