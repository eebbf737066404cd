/* Typed element arithmetic of the host executor: the half-type conversions and the reduction
 * kernels (see host_reduce.h for the rounding rules). */
#include "host_reduce.h"

#include <math.h>
#include <string.h>

/* Elements handled per block when a kernel widens half types to fp32: small enough to stay in
 * L1 and on the 256 KiB stacks of the executor's threads. */
#define BLOCK 256

/* ---- half types ------------------------------------------------------------------------- */

float hx_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, x;
    float f;
    if (exp == 0x1f) {
        x = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        /* zero or subnormal: man x 2^-24 is exact in fp32 */
        f = ldexpf((float)man, -24);
        return sign ? -f : f;
    } else {
        x = sign | ((exp + 112) << 23) | (man << 13);
    }
    memcpy(&f, &x, sizeof(f));
    return f;
}

uint16_t hx_float_to_half(float f)
{
    uint32_t x, sign, exp, man, h, rem, halfway;
    int e, shift;

    memcpy(&x, &f, sizeof(x));
    sign = (x >> 16) & 0x8000;
    exp = (x >> 23) & 0xff;
    man = x & 0x7fffff;
    if (exp == 0xff) /* inf stays inf; NaN stays a (quiet) NaN */
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
    e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        /* subnormal result: value / 2^-24 = (1.man) >> (14 - e); below 2^-25 rounds to 0 */
        if (e < -10)
            return (uint16_t)sign;
        man |= 0x800000;
        shift = 14 - e;
        h = man >> shift;
        rem = man & ((1u << shift) - 1);
        halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    h = ((uint32_t)e << 10) | (man >> 13);
    rem = man & 0x1fff;
    /* a carry out of the mantissa correctly bumps the exponent, up to infinity */
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return (uint16_t)(sign | h);
}

float hx_bf16_to_float(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, sizeof(f));
    return f;
}

uint16_t hx_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* ---- element access for the reference -------------------------------------------------- */

long double hx_load(acc_dtype_t dt, const void *buf, size_t i)
{
    switch (dt) {
    case ACC_DT_F32:
        return ((const float *)buf)[i];
    case ACC_DT_F16:
        return hx_half_to_float(((const uint16_t *)buf)[i]);
    case ACC_DT_BF16:
        return hx_bf16_to_float(((const uint16_t *)buf)[i]);
    case ACC_DT_F64:
        return ((const double *)buf)[i];
    default:
        return ((const int32_t *)buf)[i];
    }
}

void hx_store(acc_dtype_t dt, void *buf, size_t i, long double v)
{
    switch (dt) {
    case ACC_DT_F32:
        ((float *)buf)[i] = (float)v;
        break;
    case ACC_DT_F16:
        ((uint16_t *)buf)[i] = hx_float_to_half((float)v);
        break;
    case ACC_DT_BF16:
        ((uint16_t *)buf)[i] = hx_float_to_bf16((float)v);
        break;
    case ACC_DT_F64:
        ((double *)buf)[i] = (double)v;
        break;
    default:
        ((int32_t *)buf)[i] = (int32_t)(uint32_t)(uint64_t)(int64_t)v;
        break;
    }
}

/* ---- kernels ------------------------------------------------------------------------------ */

/* fp32 arithmetic goes to the vector kernels, which give the scalar loop's bits. */
static void red_f32(acc_redop_t op, float *d, const float *a, const float *b, size_t n)
{
    hx_simd()->reduce_f32(op, d, a, b, n);
}

static void red_f64(acc_redop_t op, double *d, const double *a, const double *b, size_t n)
{
    size_t i;
    switch (op) {
    case ACC_RED_PROD:
        for (i = 0; i < n; i++)
            d[i] = a[i] * b[i];
        break;
    case ACC_RED_MIN:
        for (i = 0; i < n; i++)
            d[i] = b[i] < a[i] ? b[i] : a[i];
        break;
    case ACC_RED_MAX:
        for (i = 0; i < n; i++)
            d[i] = b[i] > a[i] ? b[i] : a[i];
        break;
    default:
        for (i = 0; i < n; i++)
            d[i] = a[i] + b[i];
        break;
    }
}

/* Integer sums and products in uint32_t: wrapping is defined there, and the bits equal those of
 * two's-complement int32 arithmetic. */
static void red_i32(acc_redop_t op, int32_t *d, const int32_t *a, const int32_t *b, size_t n)
{
    size_t i;
    switch (op) {
    case ACC_RED_PROD:
        for (i = 0; i < n; i++)
            d[i] = (int32_t)((uint32_t)a[i] * (uint32_t)b[i]);
        break;
    case ACC_RED_MIN:
        for (i = 0; i < n; i++)
            d[i] = b[i] < a[i] ? b[i] : a[i];
        break;
    case ACC_RED_MAX:
        for (i = 0; i < n; i++)
            d[i] = b[i] > a[i] ? b[i] : a[i];
        break;
    default:
        for (i = 0; i < n; i++)
            d[i] = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
        break;
    }
}

static void widen(acc_dtype_t dt, float *f, const uint16_t *h, size_t n)
{
    if (dt == ACC_DT_F16)
        hx_simd()->half_to_float(f, h, n);
    else
        hx_simd()->bf16_to_float(f, h, n);
}

static void narrow(acc_dtype_t dt, uint16_t *h, const float *f, size_t n)
{
    if (dt == ACC_DT_F16)
        hx_simd()->float_to_half(h, f, n);
    else
        hx_simd()->float_to_bf16(h, f, n);
}

/* x / 2^j is x * 2^-j exactly (the same real number, rounded the same way), and a multiply is
 * several times cheaper than a divide: powers of two multiply. */
static int pow2(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

static void divide_f32(float *f, size_t n, int nranks)
{
    if (pow2(nranks))
        hx_simd()->scale_f32(f, n, 1.0f / (float)nranks, 0);
    else
        hx_simd()->scale_f32(f, n, (float)nranks, 1);
}

/* The AVG epilogue of one block of fp32 sums of a half type, as if they had been stored and
 * then divided: rounded to the type, widened, divided, rounded again (hx_divide's bits). */
static void narrow_divided(acc_dtype_t dt, uint16_t *h, float *f, size_t m, int divisor)
{
    if (divisor > 1) {
        narrow(dt, h, f, m);
        widen(dt, f, h, m);
        divide_f32(f, m, divisor);
    }
    narrow(dt, h, f, m);
}

void hx_reduce2_div(acc_dtype_t dt, acc_redop_t op, void *dst, const void *a, const void *b,
                    size_t n, int divisor)
{
    float fa[BLOCK], fb[BLOCK];
    size_t es = acc_dtype_size(dt), i, m;

    for (i = 0; i < n; i += m) {
        unsigned char *d = (unsigned char *)dst + i * es;
        const unsigned char *pa = (const unsigned char *)a + i * es;
        const unsigned char *pb = (const unsigned char *)b + i * es;
        m = n - i < BLOCK ? n - i : BLOCK;
        switch (dt) {
        case ACC_DT_F32:
            red_f32(op, (float *)d, (const float *)pa, (const float *)pb, m);
            break;
        case ACC_DT_F64:
            red_f64(op, (double *)d, (const double *)pa, (const double *)pb, m);
            break;
        case ACC_DT_I32:
            red_i32(op, (int32_t *)d, (const int32_t *)pa, (const int32_t *)pb, m);
            break;
        default:
            widen(dt, fa, (const uint16_t *)(const void *)pa, m);
            widen(dt, fb, (const uint16_t *)(const void *)pb, m);
            red_f32(op, fa, fa, fb, m);
            narrow_divided(dt, (uint16_t *)(void *)d, fa, m, divisor);
            continue;
        }
        /* The block is still in the cache: the average costs no pass of its own. */
        if (divisor > 1)
            hx_divide(dt, d, m, divisor);
    }
}

void hx_reduce2(acc_dtype_t dt, acc_redop_t op, void *dst, const void *a, const void *b, size_t n)
{
    hx_reduce2_div(dt, op, dst, a, b, n, 1);
}

void hx_reduce_many(acc_dtype_t dt, acc_redop_t op, void *dst, const void *const *srcs, size_t nsrc,
                    size_t n)
{
    hx_reduce_many_div(dt, op, dst, srcs, nsrc, n, 1);
}

void hx_reduce_many_div(acc_dtype_t dt, acc_redop_t op, void *dst, const void *const *srcs,
                        size_t nsrc, size_t n, int divisor)
{
    /* One block of every source is read before the block of dst is written, so dst may be one
     * of the sources. */
    union {
        float f[BLOCK];
        double d[BLOCK];
        int32_t i[BLOCK];
    } acc, tmp;
    size_t es = acc_dtype_size(dt), i, k, m;

    for (i = 0; i < n; i += m) {
        m = n - i < BLOCK ? n - i : BLOCK;
        for (k = 0; k < nsrc; k++) {
            const unsigned char *s = (const unsigned char *)srcs[k] + i * es;
            switch (dt) {
            case ACC_DT_F32:
                memcpy(k ? tmp.f : acc.f, s, m * es);
                if (k)
                    red_f32(op, acc.f, acc.f, tmp.f, m);
                break;
            case ACC_DT_F64:
                memcpy(k ? tmp.d : acc.d, s, m * es);
                if (k)
                    red_f64(op, acc.d, acc.d, tmp.d, m);
                break;
            case ACC_DT_I32:
                memcpy(k ? tmp.i : acc.i, s, m * es);
                if (k)
                    red_i32(op, acc.i, acc.i, tmp.i, m);
                break;
            default:
                widen(dt, k ? tmp.f : acc.f, (const uint16_t *)(const void *)s, m);
                if (k)
                    red_f32(op, acc.f, acc.f, tmp.f, m);
                break;
            }
        }
        if (dt == ACC_DT_F16 || dt == ACC_DT_BF16) {
            narrow_divided(dt, (uint16_t *)dst + i, acc.f, m, divisor);
            continue;
        }
        if (divisor > 1)
            hx_divide(dt, &acc, m, divisor);
        memcpy((unsigned char *)dst + i * es, &acc, m * es);
    }
}

void hx_divide(acc_dtype_t dt, void *buf, size_t n, int nranks)
{
    size_t i;
    switch (dt) {
    case ACC_DT_F32:
        divide_f32(buf, n, nranks);
        break;
    case ACC_DT_F64:
        for (i = 0; i < n; i++)
            ((double *)buf)[i] /= (double)nranks;
        break;
    case ACC_DT_I32:
        /* C division truncates toward zero, as NCCL's integer average does */
        for (i = 0; i < n; i++)
            ((int32_t *)buf)[i] /= nranks;
        break;
    default: {
        float f[BLOCK];
        size_t m;
        for (i = 0; i < n; i += m) {
            m = n - i < BLOCK ? n - i : BLOCK;
            widen(dt, f, (uint16_t *)buf + i, m);
            divide_f32(f, m, nranks);
            narrow(dt, (uint16_t *)buf + i, f, m);
        }
        break;
    }
    }
}

/* Elements scaled at a time before a compressing cast: a buffer in L1. */
#define CONVERT_BLOCK 1024

acc_status_t acc_host_convert(void *dst, acc_dtype_t to, const void *src, acc_dtype_t from,
                              size_t n, double scale)
{
    int half_to = to == ACC_DT_F16 || to == ACC_DT_BF16;
    int half_from = from == ACC_DT_F16 || from == ACC_DT_BF16;

    if (to == from && scale == 1.0 && (unsigned)to < ACC_DT_COUNT) {
        memcpy(dst, src, n * acc_dtype_size(to));
        return ACC_OK;
    }
    if (from == ACC_DT_F32 && half_to) {
        /* s[i] * k rounds in fp32 first, as the reference does: a scaled block is multiplied
         * in a small buffer */
        const float *s = src, *block;
        uint16_t *d = dst;
        float k = (float)scale, tmp[CONVERT_BLOCK];
        size_t i, m;
        for (i = 0; i < n; i += m) {
            m = n - i < CONVERT_BLOCK ? n - i : CONVERT_BLOCK;
            block = s + i;
            if (k != 1.0f) {
                memcpy(tmp, s + i, m * sizeof(float));
                hx_simd()->scale_f32(tmp, m, k, 0);
                block = tmp;
            }
            narrow(to, d + i, block, m);
        }
        return ACC_OK;
    }
    if (to == ACC_DT_F32 && half_from && scale == 1.0) {
        widen(from, dst, src, n);
        return ACC_OK;
    }
    return acc_error_set(ACC_ERR_INVALID,
                         "acc_host_convert: %s to %s (scale %g): only copies, fp32 to fp16 or bf16 "
                         "(scaled), and back",
                         acc_dtype_name(from), acc_dtype_name(to), scale);
}
