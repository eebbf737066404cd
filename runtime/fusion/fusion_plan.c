/*
 * Where buckets end, and the pack buffer they live in.
 *
 * The pack buffer holds every registered gradient in registration order, in the type it
 * travels in, so a bucket (a run of consecutive gradients of one type) is one contiguous
 * range that a stream all-reduces in place.  Packing is therefore the same whatever the
 * buckets turn out to be, and only their ends depend on the policy:
 *   acc      as many gradients as fit in the fusion size (a larger one alone); a bucket starts
 *            once its last gradient is packed, since the sizes are known in advance; with a
 *            cycle, an open bucket whose first gradient has waited that long starts with what
 *            it has (the rest begins the next bucket);
 *   DDP      a bucket closes once it reaches its cap (first_bytes for the first of the
 *            iteration, fusion_bytes after), overshooting by at most one gradient; buckets
 *            start in order when complete (reducer.cpp, compute_bucket_assignment_by_size);
 *   none     a bucket per gradient;
 *   Horovod, negotiate  what every rank has ready, agreed in rounds (fusion_negotiate.c).
 * acc's timeout is checked whenever the main thread is in the engine (each gradient marked
 * ready, and the end of the iteration), not by a timer of its own.
 */
#include "fusion_internal.h"

#include <string.h>

static uint64_t grad_bytes(const fu_grad_t *g)
{
    return g->count * acc_dtype_size(g->dt);
}

acc_status_t fu_layout(acc_fusion_t *f)
{
    size_t off = 0, i;
    void *p = NULL;
    acc_status_t st;

    for (i = 0; i < f->ngrads; i++) {
        fu_grad_t *g = &f->grads[i];
        g->wire = acc_compress_dtype(f->cfg.compress, g->dt);
        if (i == 0 || g->dt != f->grads[i - 1].dt)
            off = (off + FU_PACK_ALIGN - 1) / FU_PACK_ALIGN * FU_PACK_ALIGN;
        g->offset = off;
        off += (size_t)(g->count * acc_dtype_size(g->wire));
    }
    /* Negotiated buckets pack gradients in the order taken, each aligned. */
    if (f->negotiated)
        off += f->ngrads * (FU_PACK_ALIGN - 1);
    f->pack_bytes = off;
    if (off > f->pack_cap) {
        /* Between iterations: what the old buffer held is spent. */
        f->mem->free(f->pack);
        f->pack = NULL;
        f->pack_cap = 0;
        if ((st = f->mem->alloc(off, &p)) != ACC_OK)
            return acc_error_prefix(st, "fusion engine: a pack buffer of %zu bytes: ", off);
        f->pack = p;
        f->pack_cap = off;
    }
    return ACC_OK;
}

acc_status_t fu_pack(acc_fusion_t *f, fu_grad_t *g, int zero, acc_cuda_stream_t q)
{
    unsigned char *dst = f->pack + g->offset;
    int compressed = g->wire != g->dt;

    if (!g->count)
        return ACC_OK; /* nothing to pack, and perhaps no buffer */
    if (zero)
        return f->mem->zero(dst, (size_t)(g->count * acc_dtype_size(g->wire)), q);
    return f->mem->convert(f, dst, g->wire, g->user, g->dt, g->count,
                           compressed && f->opts.average ? 1.0 / f->nranks : 1.0, q);
}

/* ---- bucket ends ---- */

/* acc: from first, the gradients of its type that fit in `cap` bytes (at least one), not
 * beyond `limit`. */
static size_t fit_end(const acc_fusion_t *f, size_t first, uint64_t cap, size_t limit)
{
    uint64_t bytes = grad_bytes(&f->grads[first]);
    size_t j = first + 1;
    while (j < limit && f->grads[j].dt == f->grads[first].dt &&
           bytes + grad_bytes(&f->grads[j]) <= cap)
        bytes += grad_bytes(&f->grads[j++]);
    return j;
}

/* DDP: from first, gradients of its type until the bucket reaches cap. */
static size_t cap_end(const acc_fusion_t *f, size_t first, uint64_t cap)
{
    uint64_t bytes = 0;
    size_t j = first;
    while (j < f->ngrads && f->grads[j].dt == f->grads[first].dt && bytes < cap)
        bytes += grad_bytes(&f->grads[j++]);
    return j;
}

void fu_launch(acc_fusion_t *f, size_t first, size_t last)
{
    fu_bucket_t b;
    memset(&b, 0, sizeof(b));
    b.first = (int32_t)first;
    b.last = (int32_t)last;
    if (fu_stream_push(f, (int)(f->launched % (uint64_t)f->cfg.streams), &b) != ACC_OK)
        return; /* recorded in f->error */
    f->launched++;
    f->next_first = last;
}

/* The end of the bucket starting at next_first under a size-driven policy. */
static size_t static_end(const acc_fusion_t *f)
{
    const acc_tune_config_t *c = &f->cfg;
    if (c->policy == ACC_FUSION_NONE)
        return f->next_first + 1;
    if (c->policy == ACC_FUSION_DDP)
        return cap_end(f, f->next_first,
                       f->launched == 0 && c->first_bytes ? c->first_bytes : c->fusion_bytes);
    return fit_end(f, f->next_first, c->fusion_bytes, f->ngrads);
}

void fu_plan_end(acc_fusion_t *f)
{
    fu_bucket_t mark;
    memset(&mark, 0, sizeof(mark));
    mark.first = mark.last = -1;
    for (int s = 0; s < f->cfg.streams; s++)
        fu_stream_push(f, s, &mark);
}

void fu_plan(acc_fusion_t *f, int end, double now)
{
    const acc_tune_config_t *c = &f->cfg;

    /* Negotiated buckets are the negotiator's to queue, its end too. */
    if ((f->directed && f->rank != 0) || f->negotiated)
        return;
    while (f->next_first < f->ngrads && f->error == ACC_OK) {
        size_t e = static_end(f);
        if (e <= f->prefix)
            fu_launch(f, f->next_first, e);
        else if (c->policy == ACC_FUSION_ACC && c->cycle_ms > 0 && f->prefix > f->next_first &&
                 now - f->grads[f->next_first].ready_s >= c->cycle_ms / 1e3)
            fu_launch(f, f->next_first, f->prefix);
        else
            break;
    }
    if (end)
        fu_plan_end(f);
}
