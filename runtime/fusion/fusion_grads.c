/*
 * The gradients every rank registered must be the same list: a bucket is a range of the pack
 * buffer, and every rank all-reduces the same ranges, so a rank that registered A then B where
 * another registered B then A would have A summed with B, silently, every iteration (same total
 * size), or fail alone at the first bucket while the others wait out their timeout (different
 * sizes).  Before the first iteration the ranks compare a digest of their lists; where they
 * differ, rank 0's list travels to the others, and every rank fails with the first difference
 * the first rank that has one found.  Gradients of the same size and type registered in a
 * different order cannot be told apart: nothing of them but their size and type is known.
 */
#include "fusion_internal.h"

#include <string.h>

typedef struct {
    uint64_t count;
    int32_t dt, pad;
} grad_desc_t;

/* A digest of the list: its length, then each gradient's size and type. */
static uint64_t list_digest(const acc_fusion_t *f)
{
    uint64_t h = acc_fnv1a64(&f->ngrads, sizeof(f->ngrads));
    for (size_t i = 0; i < f->ngrads; i++) {
        grad_desc_t d = {f->grads[i].count, (int32_t)f->grads[i].dt, 0};
        h ^= acc_fnv1a64(&d, sizeof(d)) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    }
    return h;
}

/* This rank's first difference from rank 0's list (theirs), as an error; ACC_OK for none. */
static acc_status_t first_difference(const acc_fusion_t *f, const grad_desc_t *theirs, uint64_t n)
{
    static const char *const fix = "every rank must register the same gradients, in the same "
                                   "order, with the same sizes and types";
    for (size_t i = 0; i < f->ngrads && i < n; i++) {
        const fu_grad_t *g = &f->grads[i];
        if (g->count != theirs[i].count || (int32_t)g->dt != theirs[i].dt)
            return acc_error_set(ACC_ERR_INVALID,
                                 "fusion engine: gradient %zu is %llu elements of %s on rank %d "
                                 "and %llu elements of %s on rank 0; %s",
                                 i, (unsigned long long)g->count, acc_dtype_name(g->dt), f->rank,
                                 (unsigned long long)theirs[i].count,
                                 acc_dtype_name((acc_dtype_t)theirs[i].dt), fix);
    }
    if (f->ngrads != n)
        return acc_error_set(ACC_ERR_INVALID,
                             "fusion engine: rank %d registered %zu gradients and rank 0 %llu "
                             "(the first %llu agree); %s",
                             f->rank, f->ngrads, (unsigned long long)n,
                             (unsigned long long)(f->ngrads < n ? f->ngrads : n), fix);
    return ACC_OK;
}

/* The comparison, on f->ctl entered; *agreed when the ranks got as far as agreeing. */
static acc_status_t compare(acc_fusion_t *f, rt_boot_t *b, int *agreed)
{
    uint64_t mine = list_digest(f), root = mine, n = f->ngrads;
    grad_desc_t *list = NULL;
    boot_vote_t *v = acc_mem_alloc(2 * sizeof(boot_vote_t));
    acc_status_t st;

    if (!v)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory comparing the gradients");
    /* Rank 0's digest to every rank and one vote back (no rank is sent every rank's). */
    boot_vote_init(&v[0], ACC_OK);
    if ((st = boot_bcast(b, &root, sizeof(root), 0)) != ACC_OK)
        goto out;
    v[0].status = mine == root ? ACC_OK : ACC_ERR_INVALID;
    if ((st = boot_vote(b, &v[0], &v[1])) != ACC_OK)
        goto out;
    *agreed = v[1].status == ACC_OK;
    if (*agreed)
        goto out;
    /* They differ somewhere: rank 0's list to everyone, and each finds its first difference. */
    if ((st = boot_bcast(b, &n, sizeof(n), 0)) != ACC_OK)
        goto out;
    if (!(list = acc_mem_calloc((size_t)n + 1, sizeof(grad_desc_t)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory comparing the gradients");
        goto out;
    }
    for (size_t i = 0; f->rank == 0 && i < f->ngrads; i++)
        list[i] = (grad_desc_t){f->grads[i].count, (int32_t)f->grads[i].dt, 0};
    if ((st = boot_bcast(b, list, (size_t)n * sizeof(grad_desc_t), 0)) != ACC_OK)
        goto out;
    st = comm_agree(f->ctl, first_difference(f, list, n), "checking the registered gradients");
    *agreed = comm_error(f->ctl) == ACC_OK;
out:
    acc_mem_free(list);
    acc_mem_free(v);
    return st;
}

acc_status_t fu_agree_grads(acc_fusion_t *f)
{
    acc_status_t st;
    int agreed = 0;
    if ((st = comm_begin_call(f->ctl, "the fusion engine's first iteration")) != ACC_OK)
        return st;
    st = compare(f, f->ctl->boot, &agreed);
    /* An exchange that failed leaves the ranks' steps apart: nothing more can travel there. */
    if (st != ACC_OK && !agreed)
        comm_break(f->ctl, st);
    comm_end_call(f->ctl);
    return st;
}
