/* Between the two forms: a class plan's expansion into the explicit plan it means, and an
 * explicit plan's degenerate class form (one class per rank). */
#include "cplan_internal.h"

#include <string.h>

acc_status_t cplan_new_plan(const acc_cplan_t *cp, acc_plan_t **out)
{
    acc_plan_t hdr;
    acc_status_t st = acc_plan_create(cp->coll, cp->nranks, cp->nlanes, cp->in_chunks,
                                      cp->out_chunks, cp->scratch_chunks, out);
    if (st == ACC_OK) {
        cplan_header(cp, &hdr);
        plan_copy_header(*out, &hdr);
    }
    return st;
}

acc_op_t cplan_op_at(const acc_cplan_t *cp, int lane, const cplan_at_t *at, const acc_cop_t *c)
{
    acc_op_t op = acc_op_init((acc_opcode_t)c->code);
    op.slot = c->slot;
    op.peer = cplan_peer_at(cp, lane, at, &c->peer);
    op.peer2 = cplan_peer_at(cp, lane, at, &c->peer2);
    op.src = cplan_ref_at(cp, lane, at, &c->src);
    op.dst = cplan_ref_at(cp, lane, at, &c->dst);
    op.value = c->value;
    op.peers_off = c->peers_off;
    op.npeers = c->npeers;
    op.dep_lane = c->dep_lane;
    op.dep_op = c->dep_op;
    return op;
}

void cplan_rowpool_free(cplan_rowpool_t *rows)
{
    acc_mem_free(rows->off);
    acc_mem_free(rows->ranks);
    memset(rows, 0, sizeof(*rows));
}

acc_status_t cplan_op_pool(const acc_cplan_t *cp, int lane, const cplan_at_t *at,
                           const acc_cop_t *c, acc_plan_t *p, cplan_rowpool_t *rows, acc_op_t *op)
{
    cplan_rowpool_t own = {NULL, NULL, -1, -1}, *rp = rows ? rows : &own;
    int dim = c->peer.v[0];
    uint32_t row;
    acc_status_t st = ACC_OK;

    *op = cplan_op_at(cp, lane, at, c);
    if (c->peer.kind != ACC_CPEER_ROW)
        return ACC_OK;
    row = at->point - (uint32_t)at->x[dim] * at->step[dim];
    if (!rp->ranks) {
        if (!(rp->ranks = acc_mem_alloc((size_t)cp->nranks * sizeof(uint32_t))))
            return acc_error_set(ACC_ERR_NOMEM, "out of memory for a row of peers");
    }
    if (rows && (rp->lane != lane || rp->dim != dim || !rp->off)) {
        acc_mem_free(rp->off);
        if (!(rp->off = acc_mem_calloc((size_t)cp->nranks, sizeof(uint32_t))))
            return acc_error_set(ACC_ERR_NOMEM, "out of memory for rows of peers");
        rp->lane = lane;
        rp->dim = dim;
    }
    if (rows && rp->off[row]) {
        op->peers_off = rp->off[row] - 1;
    } else {
        cplan_row_ranks(cp, lane, at, dim, rp->ranks);
        st = acc_plan_add_peers(p, rp->ranks, (uint32_t)cp->dims[dim], &op->peers_off);
        if (st == ACC_OK && rows)
            rp->off[row] = op->peers_off + 1;
    }
    op->npeers = (uint32_t)cp->dims[dim];
    if (!rows)
        cplan_rowpool_free(&own);
    return st;
}

acc_status_t cplan_class_map(const acc_cplan_t *cp, int lane, uint32_t *cls)
{
    const acc_clane_t *ln = &cp->lanes[lane];
    uint32_t c, p;
    uint64_t i;

    for (p = 0; p < (uint32_t)cp->nranks; p++)
        cls[p] = UINT32_MAX;
    for (c = 0; c < ln->nclasses; c++) {
        for (i = 0; i < cplan_box_volume(cp, &ln->classes[c]); i++) {
            p = cplan_box_point(cp, &ln->classes[c], i);
            if (cls[p] != UINT32_MAX)
                return acc_error_set(ACC_ERR_INVALID,
                                     "class plan: lane %d's point %u is in two classes", lane, p);
            cls[p] = c;
        }
    }
    for (p = 0; p < (uint32_t)cp->nranks; p++)
        if (cls[p] == UINT32_MAX)
            return acc_error_set(ACC_ERR_INVALID,
                                 "class plan: lane %d's point %u (rank %d) is in no class", lane, p,
                                 acc_cplan_rank(cp, lane, p));
    return ACC_OK;
}

acc_status_t acc_cplan_expand(const acc_cplan_t *cp, acc_plan_t **out)
{
    acc_plan_t *p = NULL;
    uint32_t *cls_of = NULL;
    cplan_rowpool_t rows = {NULL, NULL, -1, -1};
    uint64_t ops = acc_cplan_op_count(cp), i;
    char what[160];
    acc_status_t st;
    uint32_t c, k;
    int lane;

    *out = NULL;
    snprintf(what, sizeof(what), "the explicit form of %s %s on %d ranks (%llu operations)",
             acc_coll_name(cp->coll), cp->algo, cp->nranks, (unsigned long long)ops);
    /* The plan's own operations; what reads them afterwards (the verifier, the simulator)
     * checks its own need (algo_check_memory's floor counts both before generating). */
    if ((st = acc_mem_check(ops * sizeof(acc_op_t), what,
                            "the class form is proven and counted without it (acc-compile "
                            "without --emit-plan, --export-msccl or --draw); write plans of "
                            "this size for fewer ranks")) != ACC_OK)
        return st;
    if ((st = cplan_new_plan(cp, &p)) != ACC_OK)
        return st;
    if (cp->npeer_pool && (st = acc_plan_add_peers(p, cp->peer_pool, cp->npeer_pool, &c)) != ACC_OK)
        goto out;
    if (!(cls_of = acc_mem_alloc((size_t)cp->nranks * sizeof(uint32_t)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory expanding a class plan");
        goto out;
    }
    for (lane = 0; lane < cp->nlanes && st == ACC_OK; lane++) {
        const acc_clane_t *ln = &cp->lanes[lane];
        /* Every point in exactly one class: a point in none would silently run nothing. */
        if ((st = cplan_class_map(cp, lane, cls_of)) != ACC_OK)
            break;
        for (c = 0; c < ln->nclasses && st == ACC_OK; c++) {
            const acc_cclass_t *cls = &ln->classes[c];
            for (i = 0; i < cplan_box_volume(cp, cls) && st == ACC_OK; i++) {
                uint32_t pt = cplan_box_point(cp, cls, i);
                int rank = acc_cplan_rank(cp, lane, pt);
                cplan_at_t at;
                cplan_at(cp, pt, &at);
                for (k = 0; k < cls->nops && st == ACC_OK; k++) {
                    acc_op_t op;
                    if ((st = cplan_op_pool(cp, lane, &at, &cls->ops[k], p, &rows, &op)) == ACC_OK)
                        st = acc_plan_add(p, rank, lane, &op, NULL);
                }
            }
        }
    }
out:
    acc_mem_free(cls_of);
    cplan_rowpool_free(&rows);
    if (st != ACC_OK) {
        acc_plan_destroy(p);
        return st;
    }
    *out = p;
    return ACC_OK;
}

static acc_cpeer_t abs_peer(int32_t rank)
{
    acc_cpeer_t q;
    memset(&q, 0, sizeof(q));
    q.kind = rank == -1 ? ACC_CPEER_NONE : ACC_CPEER_ABS;
    q.v[0] = rank;
    return q;
}

acc_status_t acc_cplan_from_plan(const acc_plan_t *p, acc_cplan_t **out)
{
    acc_cplan_t *cp = NULL;
    int32_t dims[1] = {p->nranks};
    acc_status_t st;
    uint32_t i, c;
    int r, l;

    *out = NULL;
    if ((st = acc_cplan_create(p->coll, 1, dims, p->nlanes, p->in_chunks, p->out_chunks,
                               p->scratch_chunks, &cp)) != ACC_OK)
        return st;
    cp->root = p->root;
    memcpy(cp->algo, p->algo, sizeof(cp->algo));
    memcpy(cp->params, p->params, sizeof(cp->params));
    cp->slots = p->slots;
    cp->proto = p->proto;
    cp->inplace = p->inplace;
    if (p->npeer_pool) {
        if (!(cp->peer_pool = acc_mem_alloc((size_t)p->npeer_pool * sizeof(uint32_t)))) {
            st = acc_error_set(ACC_ERR_NOMEM, "out of memory converting a plan");
            goto out;
        }
        memcpy(cp->peer_pool, p->peer_pool, (size_t)p->npeer_pool * sizeof(uint32_t));
        cp->npeer_pool = cp->peer_pool_cap = p->npeer_pool;
    }
    for (l = 0; l < p->nlanes && st == ACC_OK; l++) {
        for (r = 0; r < p->nranks && st == ACC_OK; r++) {
            const acc_lane_prog_t *prog = &p->progs[(size_t)r * p->nlanes + l];
            int32_t lo[1] = {r}, hi[1] = {r + 1};
            if ((st = acc_cplan_add_class(cp, l, lo, hi, &c)) != ACC_OK)
                break;
            for (i = 0; i < prog->nops && st == ACC_OK; i++) {
                const acc_op_t *o = &prog->ops[i];
                acc_cop_t op = acc_cop_init((acc_opcode_t)o->code);
                op.slot = o->slot;
                op.peer = abs_peer(o->peer);
                op.peer2 = abs_peer(o->peer2);
                op.src = acc_cref_const((acc_bufid_t)o->src.buf, o->src.off, o->src.cnt);
                op.dst = acc_cref_const((acc_bufid_t)o->dst.buf, o->dst.off, o->dst.cnt);
                op.value = o->value;
                op.peers_off = o->peers_off;
                op.npeers = o->npeers;
                op.dep_lane = o->dep_lane;
                op.dep_op = o->dep_op;
                st = acc_cplan_add(cp, l, c, &op);
            }
        }
    }
out:
    if (st != ACC_OK) {
        acc_cplan_destroy(cp);
        return st;
    }
    *out = cp;
    return ACC_OK;
}
