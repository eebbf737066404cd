/*
 * The host executor's hot loops with the CPU's vector instructions, chosen once at run time:
 * AVX-512 (F, BW, VL) where present, else AVX2 with F16C, else the scalar loops of
 * host_reduce.c.  Every kernel gives exactly the scalar reference's bits (host_reduce.h):
 *
 *   half -> float   vcvtph2ps is exact, but quiets a signalling NaN (sets bit 22) where the
 *                   reference keeps the payload as it is, so NaN lanes take the reference's
 *                   bits (sign, all-ones exponent, mantissa << 13), computed in integers;
 *   float -> half   vcvtps2ph with the rounding in the instruction (nearest, ties to even; the
 *                   MXCSR is not read), which rounds, overflows to infinity, makes subnormals
 *                   and keeps a NaN a NaN (quiet, payload truncated) exactly as the reference;
 *   bf16 <-> float  integer shifts and adds, the reference's own arithmetic lane by lane (the
 *                   AVX-512 BF16 conversion flushes subnormals, so it is not used);
 *   fp32 +,*,min,max  the IEEE operations of the scalar loop; min and max keep its operand
 *                   order, b < a ? b : a, which is what minps(b, a) computes, NaNs included;
 *                   a sum or product of two NaNs is a's, quieted, in both (which one the
 *                   hardware keeps depends on the operand order a compiler picks, so both say
 *                   it explicitly);
 *   scale           d *= k, or d /= k where the quotient is wanted (x / 2^j equals x * 2^-j,
 *                   so host_reduce.c multiplies only by powers of two).
 * tests/runtime/test_host_simd.c checks each level against the scalar loops bit for bit: all
 * 65536 half values, millions of random floats, the edges of rounding.
 */
#include "host_reduce.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HX_X86 1
#include <immintrin.h>
#include <cpuid.h>
#endif

/* ---- the scalar loops, the reference and the fallback ----------------------------------- */

static void s_h2f(float *f, const uint16_t *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        f[i] = hx_half_to_float(h[i]);
}

static void s_f2h(uint16_t *h, const float *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h[i] = hx_float_to_half(f[i]);
}

static void s_b2f(float *f, const uint16_t *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        f[i] = hx_bf16_to_float(h[i]);
}

static void s_f2b(uint16_t *h, const float *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h[i] = hx_float_to_bf16(f[i]);
}

/* a, quieted (a NaN's payload kept, its quiet bit set). */
static float quieted(float a)
{
    uint32_t x;
    memcpy(&x, &a, 4);
    x |= 0x00400000u;
    memcpy(&a, &x, 4);
    return a;
}

static void s_red(acc_redop_t op, float *d, const float *a, const float *b, size_t n)
{
    size_t i;
    switch (op) {
    case ACC_RED_PROD:
        for (i = 0; i < n; i++)
            d[i] = a[i] != a[i] ? quieted(a[i]) : a[i] * b[i];
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
            d[i] = a[i] != a[i] ? quieted(a[i]) : a[i] + b[i];
        break;
    }
}

static void s_scale(float *d, size_t n, float k, int divide)
{
    size_t i;
    if (divide)
        for (i = 0; i < n; i++)
            d[i] /= k;
    else
        for (i = 0; i < n; i++)
            d[i] *= k;
}

static const hx_simd_t scalar = {"scalar", s_h2f, s_f2h, s_b2f, s_f2b, s_red, s_scale};

#ifdef HX_X86
/* ---- AVX2 and F16C ------------------------------------------------------------------------ */

#define T2 __attribute__((target("avx2,f16c")))

/* The reference's bits for NaN halves (sign, exponent all ones, mantissa << 13), else what the
 * instruction made. */
T2 static __m256 fix_nan_h2f(__m256 f, __m128i h)
{
    __m256i w = _mm256_cvtepu16_epi32(h);
    __m256i e = _mm256_and_si256(w, _mm256_set1_epi32(0x7c00));
    __m256i m = _mm256_and_si256(w, _mm256_set1_epi32(0x3ff));
    __m256i nan = _mm256_andnot_si256(_mm256_cmpeq_epi32(m, _mm256_setzero_si256()),
                                      _mm256_cmpeq_epi32(e, _mm256_set1_epi32(0x7c00)));
    __m256i ref = _mm256_or_si256(
        _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x8000)), 16),
                        _mm256_set1_epi32(0x7f800000)),
        _mm256_slli_epi32(m, 13));
    return _mm256_blendv_ps(f, _mm256_castsi256_ps(ref), _mm256_castsi256_ps(nan));
}

T2 static void a2_h2f(float *f, const uint16_t *h, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i x = _mm_loadu_si128((const __m128i *)(h + i));
        _mm256_storeu_ps(f + i, fix_nan_h2f(_mm256_cvtph_ps(x), x));
    }
    s_h2f(f + i, h + i, n - i);
}

T2 static void a2_f2h(uint16_t *h, const float *f, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(h + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT));
    s_f2h(h + i, f + i, n - i);
}

T2 static void a2_b2f(float *f, const uint16_t *h, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(h + i)));
        _mm256_storeu_si256((__m256i *)(f + i), _mm256_slli_epi32(w, 16));
    }
    s_b2f(f + i, h + i, n - i);
}

/* hx_float_to_bf16 on 8 lanes: NaN -> (x >> 16) | 0x40, else (x + 0x7fff + ((x >> 16) & 1)) >> 16,
 * as 32-bit lanes. */
T2 static __m256i f2b8(__m256i x)
{
    __m256i abs = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
    /* unsigned abs > 0x7f800000, as a signed compare: abs is below 2^31 */
    __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));
    __m256i hi = _mm256_srli_epi32(x, 16);
    __m256i odd = _mm256_and_si256(hi, _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), odd), 16);
    __m256i q = _mm256_or_si256(hi, _mm256_set1_epi32(0x40));
    return _mm256_blendv_epi8(r, q, nan);
}

T2 static void a2_f2b(uint16_t *h, const float *f, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i lo = f2b8(_mm256_loadu_si256((const __m256i *)(f + i)));
        __m256i hi = f2b8(_mm256_loadu_si256((const __m256i *)(f + i + 8)));
        /* packus works within 128-bit halves: reorder the quadwords after */
        __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xd8);
        _mm256_storeu_si256((__m256i *)(h + i), p);
    }
    s_f2b(h + i, f + i, n - i);
}

/* z, but a's own NaN (quieted) where a is one. */
T2 static __m256 a_nan_first(__m256 a, __m256 z)
{
    __m256 q = _mm256_or_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x00400000)));
    return _mm256_blendv_ps(z, q, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}

T2 static void a2_red(acc_redop_t op, float *d, const float *a, const float *b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(a + i), y = _mm256_loadu_ps(b + i), z;
        switch (op) {
        case ACC_RED_PROD:
            z = a_nan_first(x, _mm256_mul_ps(x, y));
            break;
        case ACC_RED_MIN:
            z = _mm256_min_ps(y, x);
            break;
        case ACC_RED_MAX:
            z = _mm256_max_ps(y, x);
            break;
        default:
            z = a_nan_first(x, _mm256_add_ps(x, y));
            break;
        }
        _mm256_storeu_ps(d + i, z);
    }
    s_red(op, d + i, a + i, b + i, n - i);
}

T2 static void a2_scale(float *d, size_t n, float k, int divide)
{
    __m256 kk = _mm256_set1_ps(k);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(d + i);
        _mm256_storeu_ps(d + i, divide ? _mm256_div_ps(x, kk) : _mm256_mul_ps(x, kk));
    }
    s_scale(d + i, n - i, k, divide);
}

static const hx_simd_t avx2 = {"avx2+f16c", a2_h2f, a2_f2h, a2_b2f, a2_f2b, a2_red, a2_scale};

/* ---- AVX-512 ------------------------------------------------------------------------------ */

#define T5 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,f16c")))

T5 static void a5_h2f(float *f, const uint16_t *h, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(h + i));
        __m512 r = _mm512_cvtph_ps(x);
        __m512i w = _mm512_cvtepu16_epi32(x);
        __m512i m = _mm512_and_si512(w, _mm512_set1_epi32(0x3ff));
        __mmask16 nan = _mm512_cmpeq_epi32_mask(_mm512_and_si512(w, _mm512_set1_epi32(0x7c00)),
                                                _mm512_set1_epi32(0x7c00)) &
                        _mm512_test_epi32_mask(m, m);
        __m512i ref = _mm512_or_si512(
            _mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x8000)), 16),
                            _mm512_set1_epi32(0x7f800000)),
            _mm512_slli_epi32(m, 13));
        _mm512_storeu_ps(f + i, _mm512_mask_blend_ps(nan, r, _mm512_castsi512_ps(ref)));
    }
    a2_h2f(f + i, h + i, n - i);
}

T5 static void a5_f2h(uint16_t *h, const float *f, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(h + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT));
    a2_f2h(h + i, f + i, n - i);
}

T5 static void a5_b2f(float *f, const uint16_t *h, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(h + i)));
        _mm512_storeu_si512((void *)(f + i), _mm512_slli_epi32(w, 16));
    }
    a2_b2f(f + i, h + i, n - i);
}

T5 static void a5_f2b(uint16_t *h, const float *f, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i x = _mm512_loadu_si512((const void *)(f + i));
        __m512i abs = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
        __mmask16 nan = _mm512_cmpgt_epu32_mask(abs, _mm512_set1_epi32(0x7f800000));
        __m512i hi = _mm512_srli_epi32(x, 16);
        __m512i r =
            _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)),
                                               _mm512_and_si512(hi, _mm512_set1_epi32(1))),
                              16);
        r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
        _mm256_storeu_si256((__m256i *)(h + i), _mm512_cvtepi32_epi16(r));
    }
    a2_f2b(h + i, f + i, n - i);
}

/* fp32 arithmetic is bound by memory at the sizes that matter, where 512-bit operations add
 * nothing to 256-bit ones: the AVX2 loops serve both levels. */
static const hx_simd_t avx512 = {"avx512", a5_h2f, a5_f2h, a5_b2f, a5_f2b, a2_red, a2_scale};
#endif

#ifdef HX_X86
/* F16C (CPUID leaf 1, ECX bit 29): asked of the CPU itself, as clang's __builtin_cpu_supports
 * does not know the name. */
static int has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#endif

const hx_simd_t *hx_simd_level(int level)
{
    if (level == 0)
        return &scalar;
#ifdef HX_X86
    __builtin_cpu_init();
    if (level == 1 && __builtin_cpu_supports("avx2") && has_f16c())
        return &avx2;
    if (level == 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") && has_f16c())
        return &avx512;
#endif
    return NULL;
}

const hx_simd_t *hx_simd(void)
{
    /* Chosen once, the best this CPU has; first callers racing store the same pointer. */
    static const hx_simd_t *_Atomic chosen;
    const hx_simd_t *s = chosen;
    for (int level = 2; !s; level--)
        s = hx_simd_level(level);
    chosen = s;
    return s;
}
