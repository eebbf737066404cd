/*
 * host_reduce.h - typed element arithmetic of the host executor, and the sequential reference
 * that tests and acc-bench compare its results with.  Internal to acc (not installed).
 *
 * Half types are stored as uint16_t: fp16 is IEEE binary16, bf16 the upper half of a binary32.
 * Loads widen exactly; stores round to nearest, ties to even, and keep NaN a NaN.  A reduce step
 * on fp16/bf16 widens both operands to fp32, combines them there and rounds once on store.
 * Integer sums and products wrap modulo 2^32, as two's-complement hardware (and NCCL) does.
 */
#ifndef ACC_HOST_REDUCE_H
#define ACC_HOST_REDUCE_H

#include "acc_plan.h"

float acc_half_to_float(uint16_t h);
uint16_t acc_float_to_half(float f);
float acc_bf16_to_float(uint16_t h);
uint16_t acc_float_to_bf16(float f);

/* Element i of a typed buffer as a long double (exact for every type), and the store of a
 * value rounded to the type (integers: truncated toward zero, then wrapped). */
long double acc_host_load(acc_dtype_t dt, const void *buf, size_t i);
void acc_host_store(acc_dtype_t dt, void *buf, size_t i, long double v);

/* dst[i] = a[i] (op) b[i] for i < n; dst may alias a or b.  AVG combines as SUM. */
void acc_host_reduce2(acc_dtype_t dt, acc_redop_t op, void *dst, const void *a, const void *b,
                      size_t n);
/* dst[i] = (op) over k of srcs[k][i], accumulated in fp32 for the half types and rounded once;
 * dst may alias any source.  nsrc >= 1. */
void acc_host_reduce_many(acc_dtype_t dt, acc_redop_t op, void *dst, const void *const *srcs,
                          size_t nsrc, size_t n);
/* The AVG epilogue: buf[i] /= nranks (fp32 for the half types; integers truncate toward 0). */
void acc_host_divide(acc_dtype_t dt, void *buf, size_t n, int nranks);

/* ---- the sequential reference ------------------------------------------------------------ */
typedef enum {
    ACC_FILL_EXACT = 0, /* values whose reductions are exact in every type and order */
    ACC_FILL_RANDOM,    /* values in [-1, 1) (floats) or full-range (int32): rounding shows */
} acc_fill_t;

/* Element e of rank r's input in the deterministic pattern of (seed, mode, op), already
 * rounded to the type. */
long double acc_host_value(acc_dtype_t dt, acc_redop_t op, acc_fill_t mode, uint32_t seed, int rank,
                           uint64_t e);
/* Prepare the buffers of a call as acc_host_exec takes them: every rank's input filled with the
 * pattern, every byte of output that is not also input poisoned (0xA5), so that a result
 * left over from an earlier run cannot pass for a new one. */
void acc_host_prepare(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op, acc_fill_t mode,
                      uint32_t seed, uint64_t count, void *const *in, void *const *out,
                      int inplace);

/* Count the output elements of a call that differ from the postcondition computed sequentially
 * from the fill pattern by more than the documented bound (host_check.c).  out[r] as given to
 * acc_host_exec (with inplace, the aliasing buffer).  *worst receives the largest error seen
 * in units of the bound (0 when exact; > 1 means wrong); optional. */
uint64_t acc_host_check(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op, acc_fill_t mode,
                        uint32_t seed, uint64_t count, void *const *out, int inplace,
                        double *worst);

#endif
