/*
 * host_reduce.h - typed element arithmetic of the host executor and of the sequential reference.
 * Internal to runtime/ (not installed).
 *
 * Half types are stored as uint16_t: fp16 is IEEE binary16, bf16 the upper half of a binary32.
 * Loads widen exactly; stores round to nearest, ties to even, and keep NaN a NaN.  A reduce step
 * on fp16/bf16 widens both operands to fp32, combines them there and rounds once on store.
 * Integer sums and products wrap modulo 2^32, as two's-complement hardware (and NCCL) does.
 */
#ifndef ACC_HOST_REDUCE_H
#define ACC_HOST_REDUCE_H

#include "acc_runtime.h"

float hx_half_to_float(uint16_t h);
uint16_t hx_float_to_half(float f);
float hx_bf16_to_float(uint16_t h);
uint16_t hx_float_to_bf16(float f);

/* Element i of a typed buffer as a long double (exact for every type), and the store of a
 * value rounded to the type (integers: truncated toward zero, then wrapped). */
long double hx_load(acc_dtype_t dt, const void *buf, size_t i);
void hx_store(acc_dtype_t dt, void *buf, size_t i, long double v);

/* dst[i] = a[i] (op) b[i] for i < n; dst may alias a or b.  AVG combines as SUM. */
void hx_reduce2(acc_dtype_t dt, acc_redop_t op, void *dst, const void *a, const void *b, size_t n);
/* dst[i] = (op) over k of srcs[k][i], accumulated in fp32 for the half types and rounded once;
 * dst may alias any source.  nsrc >= 1. */
void hx_reduce_many(acc_dtype_t dt, acc_redop_t op, void *dst, const void *const *srcs, size_t nsrc,
                    size_t n);
/* The AVG epilogue: buf[i] /= nranks (fp32 for the half types; integers truncate toward 0). */
void hx_divide(acc_dtype_t dt, void *buf, size_t n, int nranks);
/* hx_reduce2 and hx_reduce_many followed by hx_divide(divisor) of what they store (divisor 1:
 * none), block by block while the block is in the cache: the same bits as the two passes. */
void hx_reduce2_div(acc_dtype_t dt, acc_redop_t op, void *dst, const void *a, const void *b,
                    size_t n, int divisor);
void hx_reduce_many_div(acc_dtype_t dt, acc_redop_t op, void *dst, const void *const *srcs,
                        size_t nsrc, size_t n, int divisor);

/* ---- vector kernels (host_simd.c) ----
 * Blocks of conversions and fp32 arithmetic with the CPU's vector instructions, giving exactly
 * the bits of the scalar functions above (host_simd.c says how).  Level 0 is the scalar loops,
 * 1 AVX2 with F16C, 2 AVX-512 (F, BW, VL). */
typedef struct {
    const char *name;
    void (*half_to_float)(float *f, const uint16_t *h, size_t n);
    void (*float_to_half)(uint16_t *h, const float *f, size_t n);
    void (*bf16_to_float)(float *f, const uint16_t *h, size_t n);
    void (*float_to_bf16)(uint16_t *h, const float *f, size_t n);
    /* d[i] = a[i] (op) b[i], as the scalar loop of that reduction; d may alias a or b */
    void (*reduce_f32)(acc_redop_t op, float *d, const float *a, const float *b, size_t n);
    /* d[i] /= k (divide) or d[i] *= k */
    void (*scale_f32)(float *d, size_t n, float k, int divide);
} hx_simd_t;

/* The kernels of one level, NULL when this CPU lacks it (tests); the best there is. */
const hx_simd_t *hx_simd_level(int level);
const hx_simd_t *hx_simd(void);

#endif
