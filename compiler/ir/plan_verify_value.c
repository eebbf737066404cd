/* The verifier's symbolic values: which ranks' contributions to one input chunk a chunk of memory
 * holds, as sets of rank intervals; and a small 64-bit-keyed hash map. */
#include "plan_verify_internal.h"

#include <string.h>

/* Record layout in the arena, at offset id - 1: [chunk, nint, lo0, hi0, lo1, hi1, ...].
 * Single contributions (every input chunk at the start: a million of them for 1024 ranks) are
 * not stored: their id is PV_SINGLE | (chunk * nranks + rank), which fits since the verifier
 * takes at most 2^28 chunk locations. */
#define PV_SINGLE 0x80000000u

static const uint32_t *rec(const pv_values_t *vs, uint32_t id)
{
    return vs->arena + (id - 1);
}

/* The record of any value; singles are spelled out in buf. */
static const uint32_t *view(const pv_values_t *vs, uint32_t id, uint32_t buf[4])
{
    uint32_t x;
    if (!(id & PV_SINGLE))
        return rec(vs, id);
    x = id & ~PV_SINGLE;
    buf[0] = x / vs->nranks;
    buf[1] = 1;
    buf[2] = x % vs->nranks;
    buf[3] = buf[2] + 1;
    return buf;
}

/* Append the record r of `words` words; returns its id or PV_NONE when out of memory.  Records
 * are not shared: equal sets made by different reductions get different ids.  Hash-consing them
 * cost a cache miss per reduction in a table of millions, for nothing: values are only compared
 * at the end, by content. */
static uint32_t append(pv_values_t *vs, const uint32_t *r, uint32_t words)
{
    size_t need = vs->len + words;
    uint32_t id;
    void *p;

    if (need >= PV_SINGLE - 1)
        return PV_NONE;
    p = vs->arena;
    if (acc_array_reserve(&p, &vs->cap, need, sizeof(uint32_t)) != ACC_OK)
        return PV_NONE;
    vs->arena = p;
    memcpy(vs->arena + vs->len, r, (size_t)words * sizeof(uint32_t));
    id = (uint32_t)vs->len + 1;
    vs->len = need;
    return id;
}

void pv_values_free(pv_values_t *vs)
{
    acc_mem_free(vs->arena);
    acc_mem_free(vs->tmp);
    memset(vs, 0, sizeof(*vs));
}

uint32_t pv_value_single(pv_values_t *vs, uint32_t chunk, uint32_t rank)
{
    uint64_t x = (uint64_t)chunk * vs->nranks + rank;
    uint32_t r[4] = {chunk, 1, rank, rank + 1};
    /* A quotient of a large plan has more chunks x ranks than an id holds: a record then. */
    return x < PV_SINGLE ? PV_SINGLE | (uint32_t)x : append(vs, r, 4);
}

uint32_t pv_value_xored(pv_values_t *vs, uint32_t id, uint32_t chunk, uint32_t t)
{
    uint32_t buf[4], n, i, k = 0, *out, *tmp, m = 0;
    const uint32_t *r;
    size_t cap;
    void *p;

    if (!id)
        return 0;
    r = view(vs, id, buf);
    n = r[1];
    if (n == 1 && r[3] == r[2] + 1)
        return pv_value_single(vs, chunk, r[2] ^ t);
    /* Each interval as aligned blocks of powers of two, which XOR moves whole. */
    cap = 2 + 2 * (size_t)n * 64;
    p = vs->tmp;
    if (acc_array_reserve(&p, &vs->tmp_cap, cap, sizeof(uint32_t)) != ACC_OK)
        return PV_NONE;
    vs->tmp = p;
    r = view(vs, id, buf);
    out = vs->tmp + 2;
    for (i = 0; i < n; i++) {
        uint32_t lo = r[2 + 2 * i], hi = r[3 + 2 * i];
        while (lo < hi) {
            uint32_t size = lo ? lo & -lo : 0x80000000u;
            while (lo + (uint64_t)size > hi)
                size >>= 1;
            out[2 * k] = lo ^ (t & ~(size - 1));
            out[2 * k + 1] = out[2 * k] + size;
            k++;
            lo += size;
        }
    }
    /* Sorted by start (insertion: few blocks), then merged where they touch. */
    for (i = 1; i < k; i++) {
        uint32_t a = out[2 * i], b = out[2 * i + 1], j = i;
        for (; j > 0 && out[2 * (j - 1)] > a; j--) {
            out[2 * j] = out[2 * (j - 1)];
            out[2 * j + 1] = out[2 * (j - 1) + 1];
        }
        out[2 * j] = a;
        out[2 * j + 1] = b;
    }
    if (!(tmp = acc_mem_alloc((size_t)2 * (k ? k : 1) * sizeof(uint32_t))))
        return PV_NONE;
    for (i = 0; i < k; i++) {
        if (m && out[2 * i] == tmp[2 * m - 1]) {
            tmp[2 * m - 1] = out[2 * i + 1];
            continue;
        }
        tmp[2 * m] = out[2 * i];
        tmp[2 * m + 1] = out[2 * i + 1];
        m++;
    }
    memcpy(out, tmp, (size_t)2 * m * sizeof(uint32_t));
    acc_mem_free(tmp);
    vs->tmp[0] = chunk;
    vs->tmp[1] = m;
    return append(vs, vs->tmp, 2 + 2 * m);
}

uint32_t pv_value_moved(pv_values_t *vs, uint32_t id, uint32_t chunk, uint32_t shift)
{
    uint32_t buf[4], n, i, k = 0, first = 0, *out;
    const uint32_t *r;
    void *p;

    if (!id) /* nothing written moves as nothing */
        return 0;
    r = view(vs, id, buf);
    n = r[1];
    if (n == 1 && r[3] == r[2] + 1)
        return pv_value_single(vs, chunk, (r[2] + shift) % vs->nranks);
    p = vs->tmp;
    if (acc_array_reserve(&p, &vs->tmp_cap, 2 + 2 * ((size_t)n + 1), sizeof(uint32_t)) != ACC_OK)
        return PV_NONE;
    vs->tmp = p;
    r = view(vs, id, buf); /* the arena does not move here, but read again after the reserve */
    out = vs->tmp + 2;
    /* Intervals moved stay sorted but for the one that wraps past the last rank, which splits
     * into a head (to the end) and a tail (from rank 0) that lead the list. */
    for (i = 0; i < n; i++) {
        uint32_t lo = (r[2 + 2 * i] + shift) % vs->nranks, len = r[3 + 2 * i] - r[2 + 2 * i];
        if (lo + (uint64_t)len > vs->nranks) {
            out[2 * k] = lo;
            out[2 * k + 1] = vs->nranks;
            k++;
            out[2 * k] = 0;
            out[2 * k + 1] = lo + len - vs->nranks;
            k++;
        } else {
            out[2 * k] = lo;
            out[2 * k + 1] = lo + len;
            k++;
        }
    }
    /* Rotate so that the lowest interval is first, then merge neighbours that touch. */
    for (i = 1; i < k; i++)
        if (out[2 * i] < out[2 * first])
            first = i;
    {
        uint32_t *tmp = acc_mem_alloc((size_t)2 * k * sizeof(uint32_t)), m = 0;
        if (!tmp)
            return PV_NONE;
        for (i = 0; i < k; i++) {
            uint32_t j = (first + i) % k, lo = out[2 * j], hi = out[2 * j + 1];
            if (m && lo == tmp[2 * m - 1]) {
                tmp[2 * m - 1] = hi;
                continue;
            }
            tmp[2 * m] = lo;
            tmp[2 * m + 1] = hi;
            m++;
        }
        memcpy(out, tmp, (size_t)2 * m * sizeof(uint32_t));
        acc_mem_free(tmp);
        k = m;
    }
    vs->tmp[0] = chunk;
    vs->tmp[1] = k;
    return append(vs, vs->tmp, 2 + 2 * k);
}

uint32_t pv_value_union(pv_values_t *vs, uint32_t a, uint32_t b, int *overlap)
{
    const uint32_t *ra, *rb;
    uint32_t na, nb, i = 0, j = 0, n = 0, *out, ba[4], bb[4];
    size_t need;
    void *p;

    *overlap = 0;
    ra = view(vs, a, ba);
    rb = view(vs, b, bb);
    na = ra[1];
    nb = rb[1];
    need = 2 + 2 * ((size_t)na + nb);
    p = vs->tmp;
    if (acc_array_reserve(&p, &vs->tmp_cap, need, sizeof(uint32_t)) != ACC_OK)
        return PV_NONE;
    vs->tmp = p;
    /* The arena may move while interning, but ra / rb are read before that. */
    out = vs->tmp + 2;
    while (i < na || j < nb) {
        uint32_t lo, hi;
        if (j >= nb || (i < na && ra[2 + 2 * i] < rb[2 + 2 * j])) {
            lo = ra[2 + 2 * i];
            hi = ra[3 + 2 * i];
            i++;
        } else {
            lo = rb[2 + 2 * j];
            hi = rb[3 + 2 * j];
            j++;
        }
        if (n && lo < out[2 * n - 1]) {
            *overlap = 1;
            return 0;
        }
        if (n && lo == out[2 * n - 1]) {
            out[2 * n - 1] = hi; /* adjacent intervals merge: the form stays canonical */
        } else {
            out[2 * n] = lo;
            out[2 * n + 1] = hi;
            n++;
        }
    }
    vs->tmp[0] = ra[0];
    vs->tmp[1] = n;
    return append(vs, vs->tmp, 2 + 2 * n);
}

uint32_t pv_value_chunk(const pv_values_t *vs, uint32_t id)
{
    uint32_t buf[4];
    return view(vs, id, buf)[0];
}

uint32_t pv_value_common(const pv_values_t *vs, uint32_t a, uint32_t b)
{
    uint32_t i, j, ba[4], bb[4];
    const uint32_t *ra = view(vs, a, ba), *rb = view(vs, b, bb);
    for (i = 0; i < ra[1]; i++)
        for (j = 0; j < rb[1]; j++) {
            uint32_t lo = ra[2 + 2 * i] > rb[2 + 2 * j] ? ra[2 + 2 * i] : rb[2 + 2 * j];
            uint32_t hi = ra[3 + 2 * i] < rb[3 + 2 * j] ? ra[3 + 2 * i] : rb[3 + 2 * j];
            if (lo < hi)
                return lo;
        }
    return PV_NONE;
}

int pv_value_is_single(const pv_values_t *vs, uint32_t id, uint32_t rank)
{
    uint32_t buf[4];
    const uint32_t *r = view(vs, id, buf);
    return r[1] == 1 && r[2] == rank && r[3] == rank + 1;
}

int pv_value_is_all(const pv_values_t *vs, uint32_t id, uint32_t nranks)
{
    uint32_t buf[4];
    const uint32_t *r = view(vs, id, buf);
    return r[1] == 1 && r[2] == 0 && r[3] == nranks;
}

uint32_t pv_value_first_rank(const pv_values_t *vs, uint32_t id)
{
    uint32_t buf[4];
    return view(vs, id, buf)[2];
}

void pv_value_ranks(const pv_values_t *vs, uint32_t id, acc_buf_t *b)
{
    uint32_t buf[4];
    const uint32_t *r = view(vs, id, buf);
    uint32_t i, n = r[1];
    acc_buf_puts(b, "{");
    for (i = 0; i < n; i++) {
        uint32_t lo = r[2 + 2 * i], hi = r[3 + 2 * i];
        if (i == 4 && n > 6) {
            acc_buf_printf(b, ",... (%u ranges)", n - 5);
            i = n - 1;
            lo = r[2 + 2 * i];
            hi = r[3 + 2 * i];
        }
        acc_buf_printf(b, "%s%u", i ? "," : "", lo);
        if (hi - lo == 2)
            acc_buf_printf(b, ",%u", lo + 1);
        else if (hi - lo > 2)
            acc_buf_printf(b, "-%u", hi - 1);
    }
    acc_buf_puts(b, "}");
}

/* ---- map ------------------------------------------------------------------------------------ */

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

void pv_map_free(pv_map_t *m)
{
    acc_mem_free(m->keys);
    acc_mem_free(m->vals);
    memset(m, 0, sizeof(*m));
}

uint32_t pv_map_get(const pv_map_t *m, uint64_t key)
{
    size_t h;
    if (!m->cap)
        return PV_NONE;
    for (h = slot_of(key, m->cap); m->vals[h] != PV_NONE; h = (h + 1) & (m->cap - 1))
        if (m->keys[h] == key)
            return m->vals[h];
    return PV_NONE;
}

acc_status_t pv_map_put(pv_map_t *m, uint64_t key, uint32_t val)
{
    size_t h;
    if ((m->count + 1) * 2 > m->cap) {
        size_t i, ncap = m->cap ? m->cap * 2 : 64;
        uint64_t *nk = acc_mem_alloc(ncap * sizeof(uint64_t));
        uint32_t *nv = acc_mem_alloc(ncap * sizeof(uint32_t));
        if (!nk || !nv) {
            acc_mem_free(nk);
            acc_mem_free(nv);
            return acc_error_set(ACC_ERR_NOMEM, "out of memory verifying a plan");
        }
        memset(nv, 0xff, ncap * sizeof(uint32_t));
        for (i = 0; i < m->cap; i++) {
            if (m->vals[i] == PV_NONE)
                continue;
            for (h = slot_of(m->keys[i], ncap); nv[h] != PV_NONE; h = (h + 1) & (ncap - 1))
                ;
            nk[h] = m->keys[i];
            nv[h] = m->vals[i];
        }
        acc_mem_free(m->keys);
        acc_mem_free(m->vals);
        m->keys = nk;
        m->vals = nv;
        m->cap = ncap;
    }
    for (h = slot_of(key, m->cap); m->vals[h] != PV_NONE; h = (h + 1) & (m->cap - 1)) {
        if (m->keys[h] == key) {
            m->vals[h] = val;
            return ACC_OK;
        }
    }
    m->keys[h] = key;
    m->vals[h] = val;
    m->count++;
    return ACC_OK;
}
