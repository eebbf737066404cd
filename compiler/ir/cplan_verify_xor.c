/*
 * Halving and doubling in class form proven on one rank (acc_cplan.h, "Proof by class").  A
 * class plan whose peers are by XOR is rank 0's program moved by XOR wherever plan_verify_xor's
 * check says so; that check reads every rank's operations once, and here each rank's are made
 * at its point as they are asked for, so the proof holds one rank's program at a time: ranks 0
 * and 2^k (which give the chunk masks) and the rank being checked.  The explicit plan is never
 * built.  Time grows with ranks x operations per rank, memory with log2(ranks) programs.
 */
#include "cplan_internal.h"
#include "cplan_verify_internal.h"

#include <string.h>

typedef struct {
    const acc_cplan_t *cp;
    acc_lane_prog_t prog;
} xor_ctx_t;

/* Rank r's program on lane: its class's operations at its point. */
static const acc_lane_prog_t *class_prog(void *ctx, uint32_t r, int lane)
{
    xor_ctx_t *x = ctx;
    const acc_cclass_t *k = &x->cp->lanes[lane].classes[0];
    cplan_at_t at;
    if (k->nops > x->prog.cap) {
        acc_op_t *grown = acc_mem_realloc_array(x->prog.ops, k->nops, sizeof(acc_op_t));
        if (!grown) {
            acc_error_set(ACC_ERR_NOMEM, "out of memory for a rank's program");
            return NULL;
        }
        x->prog.ops = grown;
        x->prog.cap = k->nops;
    }
    cplan_at(x->cp, acc_cplan_point(x->cp, lane, (int)r), &at);
    for (uint32_t i = 0; i < k->nops; i++)
        x->prog.ops[i] = cplan_op_at(x->cp, lane, &at, &k->ops[i]);
    x->prog.nops = k->nops;
    return &x->prog;
}

/* The plan with the programs of rank 0 and ranks 2^k only. */
static acc_status_t probe_plan(const acc_cplan_t *cp, acc_plan_t **out)
{
    acc_plan_t *p = NULL;
    acc_status_t st;

    if ((st = cplan_new_plan(cp, &p)) != ACC_OK)
        return st;
    for (int r = 0; r < cp->nranks && st == ACC_OK; r = r ? 2 * r : 1)
        for (int lane = 0; lane < cp->nlanes && st == ACC_OK; lane++) {
            const acc_cclass_t *k = &cp->lanes[lane].classes[0];
            cplan_at_t at;
            cplan_at(cp, acc_cplan_point(cp, lane, r), &at);
            for (uint32_t i = 0; i < k->nops && st == ACC_OK; i++) {
                acc_op_t op = cplan_op_at(cp, lane, &at, &k->ops[i]);
                st = acc_plan_add(p, r, lane, &op, NULL);
            }
        }
    if (st != ACC_OK) {
        acc_plan_destroy(p);
        return st;
    }
    *out = p;
    return ACC_OK;
}

acc_status_t cv_prove_xor(const acc_cplan_t *cp, char *why, size_t cap, int *applies)
{
    xor_ctx_t x = {cp, {NULL, 0, 0}};
    acc_plan_t *p = NULL;
    acc_status_t st;

    *applies = 0;
    if (!cplan_xor_shaped(cp, why, cap))
        return ACC_OK;
    if ((st = probe_plan(cp, &p)) != ACC_OK)
        return st;
    st = plan_verify_xor_by(p, class_prog, &x, applies, why, cap);
    acc_mem_free(x.prog.ops);
    acc_plan_destroy(p);
    return st;
}
