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

#endif
