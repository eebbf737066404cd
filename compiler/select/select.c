/* The selection table: sorted, non-overlapping byte ranges, merging and look-up. */
#include "acc_select.h"

#include <string.h>

static const char *const source_names[ACC_SELECT_SOURCE_COUNT] = {"model", "measured", "user"};

const char *acc_select_source_name(acc_select_source_t s)
{
    return (s >= 0 && s < ACC_SELECT_SOURCE_COUNT) ? source_names[s] : "?";
}

acc_status_t acc_select_source_parse(const char *s, acc_select_source_t *out)
{
    int i;
    for (i = 0; s && i < ACC_SELECT_SOURCE_COUNT; i++) {
        if (strcmp(s, source_names[i]) == 0) {
            *out = (acc_select_source_t)i;
            return ACC_OK;
        }
    }
    return acc_error_set(ACC_ERR_INVALID, "unknown selection source '%s' (model, measured, user)",
                         s ? s : "");
}

acc_status_t acc_select_create(acc_coll_t coll, const char *topo_fingerprint,
                               acc_select_table_t **out)
{
    acc_select_table_t *t;
    if (coll < 0 || coll >= ACC_COLL_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "unknown collective %d", (int)coll);
    t = acc_mem_calloc(1, sizeof(*t));
    if (!t)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory creating a selection table");
    t->coll = coll;
    snprintf(t->topo_fingerprint, sizeof(t->topo_fingerprint), "%s",
             topo_fingerprint ? topo_fingerprint : "");
    *out = t;
    return ACC_OK;
}

void acc_select_destroy(acc_select_table_t *t)
{
    if (!t)
        return;
    acc_mem_free(t->entries);
    acc_mem_free(t);
}

/* The first of n sorted ranges whose max_bytes >= nbytes.  Both kinds of table keep their
 * ranges in an array of structs: first_max points at the first one's max_bytes and stride is
 * the struct's size, so that one search serves both. */
static size_t range_lower_bound(const uint64_t *first_max, size_t stride, size_t n, uint64_t nbytes)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (*(const uint64_t *)((const char *)first_max + mid * stride) < nbytes)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t lower_bound(const acc_select_table_t *t, uint64_t nbytes)
{
    return t->n ? range_lower_bound(&t->entries[0].max_bytes, sizeof(t->entries[0]), t->n, nbytes)
                : 0;
}

acc_status_t acc_select_add(acc_select_table_t *t, const acc_select_entry_t *e)
{
    size_t i;
    void *p = t->entries;

    if (e->min_bytes > e->max_bytes)
        return acc_error_set(ACC_ERR_INVALID, "selection range %llu..%llu is empty",
                             (unsigned long long)e->min_bytes, (unsigned long long)e->max_bytes);
    i = lower_bound(t, e->min_bytes);
    if (i < t->n && t->entries[i].min_bytes <= e->max_bytes)
        return acc_error_set(ACC_ERR_INVALID, "selection range %llu..%llu overlaps %llu..%llu",
                             (unsigned long long)e->min_bytes, (unsigned long long)e->max_bytes,
                             (unsigned long long)t->entries[i].min_bytes,
                             (unsigned long long)t->entries[i].max_bytes);
    if (acc_array_reserve(&p, &t->cap, t->n + 1, sizeof(*e)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory growing a selection table");
    t->entries = p;
    memmove(t->entries + i + 1, t->entries + i, (t->n - i) * sizeof(*e));
    t->entries[i] = *e;
    t->n++;
    return ACC_OK;
}

int acc_select_entry_runs_on(const acc_select_entry_t *e, acc_backend_t backend)
{
    return !e->use_nccl && backend >= 0 && backend <= ACC_BACKEND_CUDA &&
           (e->backends & (1u << backend)) != 0;
}

int acc_select_same_choice(const acc_select_entry_t *a, const acc_select_entry_t *b)
{
    return a->use_nccl == b->use_nccl && strcmp(a->algo, b->algo) == 0 &&
           strcmp(a->params, b->params) == 0 && strcmp(a->plan_hash, b->plan_hash) == 0;
}

void acc_select_merge(acc_select_table_t *t)
{
    size_t i, k = 0;
    for (i = 0; i < t->n; i++) {
        if (k > 0 && t->entries[k - 1].max_bytes + 1 == t->entries[i].min_bytes &&
            acc_select_same_choice(&t->entries[k - 1], &t->entries[i])) {
            t->entries[k - 1].max_bytes = t->entries[i].max_bytes;
            continue;
        }
        t->entries[k++] = t->entries[i];
    }
    t->n = k;
}

const acc_select_entry_t *acc_select_lookup(const acc_select_table_t *t, uint64_t nbytes)
{
    size_t i = lower_bound(t, nbytes);
    if (i < t->n && t->entries[i].min_bytes <= nbytes)
        return &t->entries[i];
    return NULL;
}

/* ---- NCCL's own choice per size ------------------------------------------------------------ */

acc_status_t acc_select_nccl_create(acc_coll_t coll, const char *topo_fingerprint,
                                    acc_select_nccl_t **out)
{
    acc_select_nccl_t *t;
    if (coll < 0 || coll >= ACC_COLL_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "unknown collective %d", (int)coll);
    if (!(t = acc_mem_calloc(1, sizeof(*t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory creating an NCCL choice table");
    t->coll = coll;
    snprintf(t->topo_fingerprint, sizeof(t->topo_fingerprint), "%s",
             topo_fingerprint ? topo_fingerprint : "");
    *out = t;
    return ACC_OK;
}

void acc_select_nccl_destroy(acc_select_nccl_t *t)
{
    if (!t)
        return;
    acc_mem_free(t->entries);
    acc_mem_free(t);
}

acc_status_t acc_select_nccl_append(acc_select_nccl_t *t, const acc_select_nccl_entry_t *e)
{
    acc_select_nccl_entry_t *last = t->n ? &t->entries[t->n - 1] : NULL;
    void *p = t->entries;

    if (e->min_bytes > e->max_bytes || (last && e->min_bytes <= last->max_bytes))
        return acc_error_set(ACC_ERR_INVALID,
                             "NCCL choice range %llu..%llu is empty or does not follow the last "
                             "one (..%llu)",
                             (unsigned long long)e->min_bytes, (unsigned long long)e->max_bytes,
                             last ? (unsigned long long)last->max_bytes : 0ull);
    if (e->algo < 0 || e->algo >= ACC_NCCL_ALGO_COUNT || e->proto < 0 ||
        e->proto >= ACC_NCCL_PROTO_COUNT || e->channels < 0 || e->source < 0 ||
        e->source >= ACC_SELECT_SOURCE_COUNT)
        return acc_error_set(ACC_ERR_INVALID,
                             "NCCL choice range %llu..%llu: algorithm %d, protocol %d, %d "
                             "channels or source %d is out of range",
                             (unsigned long long)e->min_bytes, (unsigned long long)e->max_bytes,
                             (int)e->algo, (int)e->proto, e->channels, (int)e->source);
    if (last && last->max_bytes + 1 == e->min_bytes && last->algo == e->algo &&
        last->proto == e->proto && last->channels == e->channels) {
        last->max_bytes = e->max_bytes;
        return ACC_OK;
    }
    if (acc_array_reserve(&p, &t->cap, t->n + 1, sizeof(*e)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory growing an NCCL choice table");
    t->entries = p;
    t->entries[t->n++] = *e;
    return ACC_OK;
}

const acc_select_nccl_entry_t *acc_select_nccl_lookup(const acc_select_nccl_t *t, uint64_t nbytes)
{
    size_t i;
    if (!t || !t->n)
        return NULL;
    i = range_lower_bound(&t->entries[0].max_bytes, sizeof(t->entries[0]), t->n, nbytes);
    return i < t->n && t->entries[i].min_bytes <= nbytes ? &t->entries[i] : NULL;
}
