/*
 * The sequential reference for host execution: deterministic inputs, and a check of every output
 * element against the collective's postcondition computed one element at a time.
 *
 * Error bound for floating-point sums.  Every plan combines the n contributions of an element
 * in some order with n - 1 binary reductions, each rounded once to the storage type T (fp16 and
 * bf16 are widened to fp32, combined, and rounded back; the fp32 rounding adds u32 << u_T, and
 * eps_T = 2 u_T covers both).  Every partial result is bounded by S = sum |x_i|, so
 *     |computed - exact| <= (n - 1) * eps_T * S + n * tiny_T
 * where eps_T is the machine epsilon of T (2^-23 fp32, 2^-10 fp16, 2^-7 bf16, 2^-52 fp64) and
 * tiny_T its smallest subnormal (absolute rounding below the normal range).  AVG divides the
 * computed sum by n once more: the bound above divided by n, plus eps_T * |result|.  PROD: each
 * step multiplies the relative error by (1 + eps_T), so ((1 + eps_T)^(n-1) - 1) * prod |x_i|.
 * MIN, MAX and every data movement are exact; int32 sums and products wrap, exactly.
 *
 * ACC_FILL_EXACT chooses inputs whose reductions are exact in every order (small integers; ±1,
 * 2 and 1/2 for products), and then the check allows no difference at all.
 */
#include "host_reduce.h"

#include <math.h>
#include <string.h>

typedef struct {
    acc_dtype_t dt;
    acc_redop_t op;
    acc_fill_t mode;
    uint32_t seed;
    int n;
    long double eps, tiny;
} ctx_t;

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static long double round_to(acc_dtype_t dt, long double v)
{
    unsigned char tmp[8];
    hx_store(dt, tmp, 0, v);
    return hx_load(dt, tmp, 0);
}

long double acc_host_value(acc_dtype_t dt, acc_redop_t op, acc_fill_t mode, uint32_t seed, int rank,
                           uint64_t e)
{
    uint64_t h = mix(mix(((uint64_t)seed << 32) ^ (uint64_t)(uint32_t)rank) ^ e);
    long double unit = (long double)(h >> 11) / 9007199254740992.0L; /* [0, 1) */
    long double v;

    if (dt == ACC_DT_I32) {
        /* products of odd numbers stay odd, so they never wrap to a telling-nothing 0 */
        if (op == ACC_RED_PROD)
            return (long double)(2 * (int)(h % 4) - 3);
        return (long double)(int32_t)(uint32_t)h;
    }
    if (mode == ACC_FILL_EXACT) {
        switch (op) {
        case ACC_RED_PROD: {
            /* per element the 2s and 1/2s alternate over ranks: |product| stays near 1 */
            uint64_t k = ((uint64_t)(uint32_t)rank + e) % 4;
            v = k == 0 ? 2.0L : k == 2 ? 0.5L : 1.0L;
            if ((h >> 40) & 1)
                v = -v;
            break;
        }
        case ACC_RED_MIN:
        case ACC_RED_MAX:
            v = (long double)((int)(h % 201) - 100);
            break;
        default:
            v = (long double)((int)(h % 7) - 3);
            break; /* |sum| <= 192: exact in bf16 */
        }
    } else {
        v = op == ACC_RED_PROD ? 0.9L + 0.2L * unit : 2.0L * unit - 1.0L;
    }
    return round_to(dt, v);
}

/* Collectives that only move data see one pattern whatever the reduction asked for. */
static acc_redop_t pattern_op(acc_coll_t coll, acc_redop_t op)
{
    return acc_coll_reduces(coll) ? op : ACC_RED_SUM;
}

static void fill(acc_dtype_t dt, acc_redop_t op, acc_fill_t mode, uint32_t seed, int rank,
                 void *buf, uint64_t elems)
{
    uint64_t e;
    for (e = 0; e < elems; e++)
        hx_store(dt, buf, (size_t)e, acc_host_value(dt, op, mode, seed, rank, e));
}

void acc_host_prepare(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op, acc_fill_t mode,
                      uint32_t seed, uint64_t count, void *const *in, void *const *out, int inplace)
{
    size_t es = acc_dtype_size(dt);
    uint64_t ein = acc_plan_buf_elems(plan, ACC_BUF_IN, count);
    uint64_t eout = acc_plan_buf_elems(plan, ACC_BUF_OUT, count);
    int r;

    op = pattern_op(plan->coll, op);
    for (r = 0; r < plan->nranks; r++) {
        unsigned char *o = out ? out[r] : NULL;
        if (inplace) {
            if (!o)
                continue;
            memset(o, 0xa5, (size_t)((ein > eout ? ein : eout) * es));
            if (plan->coll == ACC_COLL_ALLGATHER)
                o += (size_t)((uint64_t)r * count * es);
            fill(dt, op, mode, seed, r, o, ein);
        } else {
            if (o)
                memset(o, 0xa5, (size_t)(eout * es));
            if (in && in[r])
                fill(dt, op, mode, seed, r, in[r], ein);
        }
    }
}

/* The reduction over ranks of input element e (or, with row >= 0, element row x count + e),
 * and the bound on how far a correct plan may be from it. */
static long double expect_reduce(const ctx_t *c, uint64_t e, long double *bound)
{
    long double v, sum = 0, abs_sum = 0, prod = 1, abs_prod = 1, best = 0;
    uint32_t isum = 0, iprod = 1;
    int s;

    for (s = 0; s < c->n; s++) {
        v = acc_host_value(c->dt, c->op, c->mode, c->seed, s, e);
        if (c->dt == ACC_DT_I32) {
            isum += (uint32_t)(int32_t)v;
            iprod *= (uint32_t)(int32_t)v;
        }
        sum += v;
        abs_sum += fabsl(v);
        prod *= v;
        abs_prod *= fabsl(v);
        if (s == 0 || (c->op == ACC_RED_MIN && v < best) || (c->op == ACC_RED_MAX && v > best))
            best = v;
    }
    *bound = 0;
    if (c->op == ACC_RED_MIN || c->op == ACC_RED_MAX)
        return best;
    if (c->dt == ACC_DT_I32) {
        if (c->op == ACC_RED_PROD)
            return (long double)(int32_t)iprod;
        if (c->op == ACC_RED_AVG)
            return (long double)((int32_t)isum / c->n);
        return (long double)(int32_t)isum;
    }
    if (c->op == ACC_RED_PROD) {
        if (c->mode != ACC_FILL_EXACT)
            *bound = (powl(1 + c->eps, c->n - 1) - 1) * abs_prod + c->n * c->tiny;
        return prod;
    }
    if (c->op == ACC_RED_AVG) {
        long double q;
        if (c->mode != ACC_FILL_EXACT) {
            q = sum / c->n;
            *bound = (c->n - 1) * c->eps * abs_sum / c->n + c->eps * fabsl(q) + c->n * c->tiny;
            return q;
        }
        /* the executor's own rounding of an exact sum: divide in fp32 (fp64 for double) */
        if (c->dt == ACC_DT_F64)
            return (long double)((double)sum / (double)c->n);
        return round_to(c->dt, (long double)((float)round_to(c->dt, sum) / (float)c->n));
    }
    if (c->mode != ACC_FILL_EXACT)
        *bound = (c->n - 1) * c->eps * abs_sum + c->n * c->tiny;
    return sum;
}

/* One output element against its expected value. */
static int compare(const ctx_t *c, const void *buf, uint64_t i, long double want, long double bound,
                   double *worst)
{
    long double got = hx_load(c->dt, buf, (size_t)i), err = fabsl(got - want);
    double ratio;
    if (got != got)
        err = INFINITY;
    if (err == 0)
        return 0;
    ratio = bound > 0 ? (double)(err / bound) : INFINITY;
    if (ratio > *worst)
        *worst = ratio;
    return err > bound;
}

/* Where rank r's output starts (in place, reduce_scatter's result sits inside the input). */
static const unsigned char *out_base(const acc_plan_t *plan, void *const *out, int r,
                                     uint64_t count, size_t es, int inplace)
{
    const unsigned char *o = out[r];
    if (o && inplace && plan->coll == ACC_COLL_REDUCE_SCATTER)
        o += (size_t)((uint64_t)r * count * es);
    return o;
}

static const long double eps_of[ACC_DT_COUNT] = {0x1p-23L, 0x1p-10L, 0x1p-7L, 0x1p-52L, 0};
static const long double tiny_of[ACC_DT_COUNT] = {0x1p-149L, 0x1p-24L, 0x1p-133L, 0x1p-1074L, 0};

/* Wrong elements of rank r's output o (count as the API counts it). */
static uint64_t check_one(const ctx_t *c, acc_coll_t coll, int root, int r, uint64_t count,
                          const void *o, double *w)
{
    uint64_t wrong = 0, e, s;
    long double want, bound = 0;

    if (coll == ACC_COLL_REDUCE && r != root)
        return 0;
    if (!o)
        return count * (coll == ACC_COLL_ALLGATHER ? (uint64_t)c->n : 1); /* all missing */
    switch (coll) {
    case ACC_COLL_ALLREDUCE:
    case ACC_COLL_REDUCE:
        for (e = 0; e < count; e++) {
            want = expect_reduce(c, e, &bound);
            wrong += (uint64_t)compare(c, o, e, want, bound, w);
        }
        break;
    case ACC_COLL_REDUCE_SCATTER:
        for (e = 0; e < count; e++) {
            want = expect_reduce(c, (uint64_t)r * count + e, &bound);
            wrong += (uint64_t)compare(c, o, e, want, bound, w);
        }
        break;
    case ACC_COLL_ALLGATHER:
    case ACC_COLL_ALLTOALL:
        for (s = 0; s < (uint64_t)c->n; s++)
            for (e = 0; e < count; e++) {
                uint64_t src = coll == ACC_COLL_ALLGATHER ? e : (uint64_t)r * count + e;
                want = acc_host_value(c->dt, c->op, c->mode, c->seed, (int)s, src);
                wrong += (uint64_t)compare(c, o, s * count + e, want, 0, w);
            }
        break;
    default: /* broadcast */
        for (e = 0; e < count; e++) {
            want = acc_host_value(c->dt, c->op, c->mode, c->seed, root, e);
            wrong += (uint64_t)compare(c, o, e, want, 0, w);
        }
        break;
    }
    return wrong;
}

uint64_t acc_host_check(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op, acc_fill_t mode,
                        uint32_t seed, uint64_t count, void *const *out, int inplace, double *worst)
{
    ctx_t c = {dt, pattern_op(plan->coll, op), mode, seed, plan->nranks, eps_of[dt], tiny_of[dt]};
    size_t es = acc_dtype_size(dt);
    uint64_t wrong = 0;
    double w = 0;

    for (int r = 0; r < plan->nranks; r++)
        wrong += check_one(&c, plan->coll, plan->root, r, count,
                           out_base(plan, out, r, count, es, inplace), &w);
    if (worst)
        *worst = w;
    return wrong;
}

void acc_host_fill_rank(acc_coll_t coll, int nranks, int rank, acc_dtype_t dt, acc_redop_t op,
                        acc_fill_t mode, uint32_t seed, uint64_t count, void *in)
{
    uint64_t elems =
        count *
        (coll == ACC_COLL_REDUCE_SCATTER || coll == ACC_COLL_ALLTOALL ? (uint64_t)nranks : 1);
    if (in)
        fill(dt, pattern_op(coll, op), mode, seed, rank, in, elems);
}

uint64_t acc_host_check_rank(acc_coll_t coll, int nranks, int root, int rank, acc_dtype_t dt,
                             acc_redop_t op, acc_fill_t mode, uint32_t seed, uint64_t count,
                             const void *out, double *worst)
{
    ctx_t c = {dt, pattern_op(coll, op), mode, seed, nranks, eps_of[dt], tiny_of[dt]};
    double w = 0;
    uint64_t wrong = check_one(&c, coll, root, rank, count, out, &w);
    if (worst)
        *worst = w;
    return wrong;
}
