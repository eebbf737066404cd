/*
 * The host executor's vector kernels (host_simd.c) against its scalar reference, bit for bit,
 * at every level this CPU has: every one of the 65536 half and bf16 values widened; floats
 * narrowed at every rounding edge (each value of the 16-bit type, its neighbours, the midpoints
 * to the next one and theirs, which decide ties to even) and at millions of random bit
 * patterns, NaN payloads, infinities, subnormals and zeros of both signs; the fp32 reductions
 * and scaling; odd lengths for the tails.  A level the CPU lacks is skipped, said once.
 */
#include "acc_test.h"
#include "exec/host_reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    return x;
}

static float of_bits(uint32_t x)
{
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* xorshift: the same patterns on every run */
static uint32_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 16);
}

/* The levels to check: the vector ones this CPU has. */
static int levels(const hx_simd_t **out)
{
    int n = 0;
    for (int l = 1; l <= 2; l++) {
        const hx_simd_t *s = hx_simd_level(l);
        if (s)
            out[n++] = s;
        else
            printf("level %d: not on this CPU, skipped\n", l);
    }
    return n;
}

ACC_TEST(widening_every_16_bit_value)
{
    const hx_simd_t *ref = hx_simd_level(0), *lv[2];
    int nl = levels(lv);
    uint16_t *h = malloc(65536 * 2);
    float *want = malloc(65536 * 4), *got = malloc(65536 * 4);

    for (uint32_t i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    for (int bf = 0; bf < 2; bf++) {
        (bf ? ref->bf16_to_float : ref->half_to_float)(want, h, 65536);
        for (uint32_t i = 0; i < 65536; i++) /* the reference is the documented function */
            CHECK(bits(want[i]) == bits(bf ? hx_bf16_to_float(h[i]) : hx_half_to_float(h[i])));
        for (int l = 0; l < nl; l++) {
            memset(got, 0xa5, 65536 * 4);
            (bf ? lv[l]->bf16_to_float : lv[l]->half_to_float)(got, h, 65536);
            for (uint32_t i = 0; i < 65536; i++)
                CHECK_MSG(bits(got[i]) == bits(want[i]), "%s %s of %04x: %08x, the reference %08x",
                          lv[l]->name, bf ? "bf16" : "half", i, bits(got[i]), bits(want[i]));
        }
    }
    free(h);
    free(want);
    free(got);
}

/* Floats at the rounding edges of the 16-bit type (bf: bf16, else half), then random ones. */
static size_t edge_floats(int bf, float *f, size_t cap)
{
    const hx_simd_t *ref = hx_simd_level(0);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    size_t n = 0;
    for (uint32_t i = 0; i < 65536 && n + 12 <= cap; i++) {
        uint16_t h = (uint16_t)i, h2 = (uint16_t)(i + 1);
        float a, b;
        (bf ? ref->bf16_to_float : ref->half_to_float)(&a, &h, 1);
        (bf ? ref->bf16_to_float : ref->half_to_float)(&b, &h2, 1);
        uint32_t x = bits(a);
        for (int d = -2; d <= 2; d++)
            f[n++] = of_bits(x + (uint32_t)d); /* the value and its float neighbours */
        if (isfinite(a) && isfinite(b) && (h & 0x7fff) != 0x7fff) {
            uint32_t mid = bits((float)(((double)a + (double)b) / 2)); /* a tie */
            for (int d = -2; d <= 2; d++)
                f[n++] = of_bits(mid + (uint32_t)d);
        }
    }
    /* NaN payloads of both signs, every exponent, subnormals, zeros, infinities */
    for (uint32_t m = 1; m < (1u << 23) && n + 2 <= cap; m = m * 3 + 1) {
        f[n++] = of_bits(0x7f800000u | m);
        f[n++] = of_bits(0xff800000u | m);
    }
    for (uint32_t e = 0; e < 256 && n + 4 <= cap; e++)
        for (int k = 0; k < 4; k++)
            f[n++] = of_bits((e << 23) | (next_rand(&seed) & 0x807fffffu));
    if (n + 4 <= cap) {
        f[n++] = 0.0f;
        f[n++] = -0.0f;
        f[n++] = INFINITY;
        f[n++] = -INFINITY;
    }
    while (n < cap)
        f[n++] = of_bits(next_rand(&seed) ^ (next_rand(&seed) << 16));
    return n;
}

ACC_TEST(narrowing_at_every_rounding_edge_and_random_floats)
{
    const size_t cap = (size_t)1 << 22;
    const hx_simd_t *ref = hx_simd_level(0), *lv[2];
    int nl = levels(lv);
    float *f = malloc(cap * 4);
    uint16_t *want = malloc(cap * 2), *got = malloc(cap * 2);

    for (int bf = 0; bf < 2; bf++) {
        size_t n = edge_floats(bf, f, cap);
        (bf ? ref->float_to_bf16 : ref->float_to_half)(want, f, n);
        for (size_t i = 0; i < n; i += 4099)
            CHECK(want[i] == (bf ? hx_float_to_bf16(f[i]) : hx_float_to_half(f[i])));
        for (int l = 0; l < nl; l++) {
            memset(got, 0x5a, n * 2);
            (bf ? lv[l]->float_to_bf16 : lv[l]->float_to_half)(got, f, n);
            for (size_t i = 0; i < n; i++)
                CHECK_MSG(got[i] == want[i], "%s %s of %08x: %04x, the reference %04x", lv[l]->name,
                          bf ? "bf16" : "half", bits(f[i]), got[i], want[i]);
        }
    }
    free(f);
    free(want);
    free(got);
}

ACC_TEST(fp32_reductions_scaling_and_tails)
{
    const size_t n = 100003;
    const hx_simd_t *ref = hx_simd_level(0), *lv[2];
    int nl = levels(lv);
    float *a = malloc(n * 4), *b = malloc(n * 4), *want = malloc(n * 4), *got = malloc(n * 4);
    uint64_t seed = 7;
    const float ks[] = {0.25f, 3.0f, 7.0f};

    for (size_t i = 0; i < n; i++) {
        /* mostly ordinary values, some NaNs, infinities, zeros of both signs, subnormals */
        uint32_t r = next_rand(&seed);
        a[i] = (float)((int32_t)next_rand(&seed)) / 65536.0f;
        b[i] = r % 97 == 0   ? NAN
               : r % 89 == 0 ? -INFINITY
               : r % 83 == 0 ? -0.0f
               : r % 79 == 0 ? of_bits(next_rand(&seed) & 0x807fffffu)
                             : (float)((int32_t)next_rand(&seed)) / 4096.0f;
        if (r % 71 == 0)
            a[i] = of_bits(0x7f800001u | (next_rand(&seed) & 0x3fffff)); /* a signalling NaN */
    }
    for (int l = 0; l < nl; l++) {
        for (int op = 0; op < ACC_RED_COUNT; op++) {
            if (op == ACC_RED_AVG)
                continue;
            for (size_t len = 0; len < 40; len++) { /* every tail */
                ref->reduce_f32((acc_redop_t)op, want, a + len, b, len);
                lv[l]->reduce_f32((acc_redop_t)op, got, a + len, b, len);
                CHECK(memcmp(want, got, len * 4) == 0);
            }
            ref->reduce_f32((acc_redop_t)op, want, a, b, n);
            lv[l]->reduce_f32((acc_redop_t)op, got, a, b, n);
            for (size_t i = 0; i < n; i++)
                CHECK_MSG(bits(got[i]) == bits(want[i]), "%s %s of %08x, %08x: %08x, not %08x",
                          lv[l]->name, acc_redop_name((acc_redop_t)op), bits(a[i]), bits(b[i]),
                          bits(got[i]), bits(want[i]));
            /* in place, as the executor calls it */
            memcpy(got, a, n * 4);
            lv[l]->reduce_f32((acc_redop_t)op, got, got, b, n);
            CHECK(memcmp(want, got, n * 4) == 0);
        }
        for (size_t k = 0; k < sizeof(ks) / sizeof(ks[0]); k++)
            for (int divide = 0; divide < 2; divide++) {
                memcpy(want, b, n * 4);
                memcpy(got, b, n * 4);
                ref->scale_f32(want, n - (size_t)l, ks[k], divide);
                lv[l]->scale_f32(got, n - (size_t)l, ks[k], divide);
                CHECK(memcmp(want, got, n * 4) == 0);
            }
    }
    free(a);
    free(b);
    free(want);
    free(got);
}

/* The 16-bit reduction end to end, as the backend runs it (the best level): widened, added in
 * fp32 and rounded once, the bits of the scalar loops (level 0) composed the same way, averaged
 * too.  (Which NaN a sum of two NaNs keeps is the compiler's choice of operand order, so the
 * reference is the scalar loop the executor had, not a C expression of its own.) */
ACC_TEST(sixteen_bit_reduction_as_the_reference)
{
    const size_t n = 70001;
    const hx_simd_t *ref = hx_simd_level(0);
    uint16_t *a = malloc(n * 2), *b = malloc(n * 2), *d = malloc(n * 2), *want = malloc(n * 2);
    float *fa = malloc(n * 4), *fb = malloc(n * 4);
    uint64_t seed = 11;

    printf("vector kernels in use: %s\n", hx_simd()->name);
    for (int bf = 0; bf < 2; bf++) {
        acc_dtype_t dt = bf ? ACC_DT_BF16 : ACC_DT_F16;
        void (*widen)(float *, const uint16_t *, size_t) =
            bf ? ref->bf16_to_float : ref->half_to_float;
        void (*narrow)(uint16_t *, const float *, size_t) =
            bf ? ref->float_to_bf16 : ref->float_to_half;
        for (size_t i = 0; i < n; i++) {
            a[i] = (uint16_t)next_rand(&seed);
            b[i] = (uint16_t)next_rand(&seed);
        }
        widen(fa, a, n);
        widen(fb, b, n);
        ref->reduce_f32(ACC_RED_SUM, fa, fa, fb, n);
        narrow(want, fa, n);
        hx_reduce2(dt, ACC_RED_SUM, d, a, b, n);
        for (size_t i = 0; i < n; i++)
            CHECK_MSG(d[i] == want[i], "%s %04x + %04x: %04x, the reference %04x",
                      acc_dtype_name(dt), a[i], b[i], d[i], want[i]);
        widen(fa, want, n); /* the average: the stored sum divided, rounded again */
        ref->scale_f32(fa, n, 3.0f, 1);
        narrow(want, fa, n);
        hx_reduce2_div(dt, ACC_RED_SUM, d, a, b, n, 3);
        CHECK(memcmp(d, want, n * 2) == 0);
    }
    free(a);
    free(b);
    free(d);
    free(want);
    free(fa);
    free(fb);
}

/* The public conversion the fusion engine packs with: the reference's bits, a scale applied in
 * fp32 before the cast, and a clear refusal of what it does not convert. */
ACC_TEST(host_convert_as_the_engine_packs)
{
    const size_t n = 5003;
    float *f = malloc(n * 4), *back = malloc(n * 4);
    uint16_t *h = malloc(n * 2);
    uint64_t seed = 5;
    const float k = 1.0f / 3.0f;

    for (size_t i = 0; i < n; i++)
        f[i] = of_bits(next_rand(&seed) ^ (next_rand(&seed) << 16));
    for (int bf = 0; bf < 2; bf++) {
        acc_dtype_t dt = bf ? ACC_DT_BF16 : ACC_DT_F16;
        CHECK_OK(acc_host_convert(h, dt, f, ACC_DT_F32, n, k));
        for (size_t i = 0; i < n; i++)
            CHECK(h[i] == (bf ? hx_float_to_bf16(f[i] * k) : hx_float_to_half(f[i] * k)));
        CHECK_OK(acc_host_convert(back, ACC_DT_F32, h, dt, n, 1.0));
        for (size_t i = 0; i < n; i++)
            CHECK(bits(back[i]) == bits(bf ? hx_bf16_to_float(h[i]) : hx_half_to_float(h[i])));
    }
    CHECK_OK(acc_host_convert(back, ACC_DT_F32, f, ACC_DT_F32, n, 1.0));
    CHECK(memcmp(back, f, n * 4) == 0);
    CHECK_ERR(acc_host_convert(back, ACC_DT_F64, f, ACC_DT_F32, n, 1.0), ACC_ERR_INVALID);
    CHECK_MSG_HAS("float to double");
    CHECK_ERR(acc_host_convert(back, ACC_DT_F32, h, ACC_DT_F16, n, 0.5), ACC_ERR_INVALID);
    free(f);
    free(back);
    free(h);
}
