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

acc_status_t acc_plan_view_finish(acc_plan_view_t *v)
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
    for (i = n = 0; i < v->nnear; i++)
        if (!n || v->near[n - 1] != v->near[i])
            v->near[n++] = v->near[i];
    v->nnear = n;
    return ACC_OK;
}

/* Chunks of the message an operation sends. */
static uint32_t send_chunks(const acc_op_t *op)
{
    return op->code == ACC_OP_SEND || op->code == ACC_OP_RECV_REDUCE_SEND ? op->src.cnt
                                                                          : op->dst.cnt;
}

typedef struct {
    acc_plan_view_t *v;
    size_t ecap, ncap;
    uint8_t *is_near; /* per rank */
} view_build_t;

static acc_status_t add_near(view_build_t *b, int32_t r)
{
    acc_plan_view_t *v = b->v;
    if (r < 0 || b->is_near[r])
        return ACC_OK;
    if (acc_array_reserve((void **)&v->near, &b->ncap, v->nnear + 1, sizeof(int32_t)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a rank's view");
    b->is_near[r] = 1;
    v->near[v->nnear++] = r;
    return ACC_OK;
}

static acc_status_t add_edge(view_build_t *b, const acc_plan_edge_t *e)
{
    acc_plan_view_t *v = b->v;
    if (acc_array_reserve((void **)&v->edges, &b->ecap, v->nedges + 1, sizeof(*e)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a rank's view");
    v->edges[v->nedges++] = *e;
    return ACC_OK;
}

/* Every rank an operation of `rank` reaches, in either direction. */
static acc_status_t near_of(view_build_t *b, const acc_plan_t *p, int rank)
{
    acc_status_t st = add_near(b, rank);
    for (int l = 0; l < p->nlanes && st == ACC_OK; l++) {
        const acc_lane_prog_t *prog = &p->progs[(size_t)rank * p->nlanes + l];
        for (uint32_t k = 0; k < prog->nops && st == ACC_OK; k++) {
            const acc_op_t *op = &prog->ops[k];
            if ((st = add_near(b, op->peer)) == ACC_OK)
                st = add_near(b, op->peer2);
            if (op->code == ACC_OP_REDUCE_PEERS)
                for (uint32_t i = 0; i < op->npeers && st == ACC_OK; i++)
                    st = add_near(b, (int32_t)p->peer_pool[op->peers_off + i]);
        }
    }
    return st;
}

static int peer_op(uint8_t code)
{
    return code == ACC_OP_PUT || code == ACC_OP_GET || code == ACC_OP_REDUCE_PEERS;
}

/* Every edge into a near rank, and whether any rank touches a peer's memory. */
static acc_status_t edges_of(view_build_t *b, const acc_plan_t *p)
{
    acc_status_t st = ACC_OK;
    for (int r = 0; r < p->nranks && st == ACC_OK; r++)
        for (int l = 0; l < p->nlanes && st == ACC_OK; l++) {
            const acc_lane_prog_t *prog = &p->progs[(size_t)r * p->nlanes + l];
            for (uint32_t k = 0; k < prog->nops && st == ACC_OK; k++) {
                const acc_op_t *op = &prog->ops[k];
                int to = acc_op_send_peer(op);
                if (peer_op(op->code))
                    b->v->staged = 1;
                if (to >= 0 && b->is_near[to]) {
                    acc_plan_edge_t e = {0, r, to, (uint32_t)l, send_chunks(op), 1};
                    st = add_edge(b, &e);
                } else if (op->code == ACC_OP_SIGNAL && op->peer >= 0 && b->is_near[op->peer]) {
                    acc_plan_edge_t e = {1, r, op->peer, op->slot, 0, 1};
                    st = add_edge(b, &e);
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

acc_status_t acc_plan_view_shell(const acc_plan_t *hdr, int rank, acc_plan_t **out)
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
    acc_status_t st = acc_plan_view_shell(p, rank, &v);
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
    view_build_t b;
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
    memset(&b, 0, sizeof(b));
    b.v = v->view;
    if (!(b.is_near = acc_mem_calloc((size_t)p->nranks, 1)))
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for a rank's view");
    if (st == ACC_OK && (st = near_of(&b, p, rank)) == ACC_OK && (st = edges_of(&b, p)) == ACC_OK &&
        (st = finals_of(b.v, p)) == ACC_OK)
        st = acc_plan_view_finish(b.v);
    acc_mem_free(b.is_near);
    if (st != ACC_OK) {
        acc_plan_destroy(v);
        return st;
    }
    *out = v;
    return ACC_OK;
}
