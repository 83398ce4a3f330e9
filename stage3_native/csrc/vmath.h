/* exp, tanh and Phi (GELU's) of a float, written so that gcc vectorizes a loop calling them:
 * the elementary functions of the C kernels' float32 formulas (elementwise_math.h).
 *
 * libm's expf is a function call per element, which no compiler vectorizes without
 * -ffast-math. These are straight-line code with no branch and no table lookup: a
 * vectorized loop computes 8 of them (AVX2) at once, with the same instructions. Accuracy:
 * within 1 ulp of the exact e^x over the float range, measured against a double exp
 * (tests/test_stage3_elementwise.py); sigmoid and tanh within 2-3 ulp. float64 tensors keep
 * libm's exp: a double polynomial would need twice the terms for its 53 bits.
 *
 * The method (Cody and Waite; the coefficients are Cephes's expf):
 *   e^x = 2^n * e^r  with n = round(x / ln 2) and r = x - n ln 2, so |r| <= ln(2)/2;
 *   e^r by a polynomial, accurate on that small interval;
 *   2^n by writing n + 127 into a float's exponent bits.
 * ln 2 is split into a part with few significant bits (n * LN2_HI is exact) and the rest,
 * so r keeps its accuracy although it is the difference of two nearly equal numbers.
 */
#ifndef TG_VMATH_H
#define TG_VMATH_H
#include <math.h>
#include <stdint.h>
#include "simd.h"

TG_INLINE float tg_expf(float x) {
    /* Beyond these, e^x is inf (above 88.72) or 0 (below -103.97, half the smallest
     * subnormal). Clamping keeps 2^n representable; the result still overflows to inf
     * or rounds to 0 as it should. NaN passes both tests and comes out NaN. */
    x = x > 89.0f ? 89.0f : x;
    x = x < -104.0f ? -104.0f : x;
    /* Round x / ln 2 to an integer without a conversion instruction: adding 1.5 * 2^23
     * leaves no bits for a fraction, so the float addition rounds, and n sits in the low
     * bits of the sum. */
    const float shift = 0x1.8p23f;
    float t = x * 1.44269504088896341f + shift;
    float n = t - shift;
    int32_t ni = (int32_t)(tg_float_bits(t) - tg_float_bits(shift));
    float r = x - n * 0.693359375f;          /* LN2_HI: 9 significant bits */
    r = r - n * -2.12194440e-4f;             /* LN2_LO = ln 2 - LN2_HI */
    float p = ((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r
                + 4.1665795894e-2f) * r + 1.6666665459e-1f) * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    /* 2^n in two factors, 2^(n/2) * 2^(n - n/2): n runs from -150 to 128, and one factor
     * alone would leave the exponent range at both ends (subnormal results, and inf). */
    int32_t n1 = ni >> 1, n2 = ni - n1;
    float s1 = tg_bits_float((uint32_t)(n1 + 127) << 23);
    float s2 = tg_bits_float((uint32_t)(n2 + 127) << 23);
    return p * s1 * s2;
}

/* tanh |x| = (1 - e) / (1 + e) with e = e^(-2|x|). Near 0, 1 - e cancels (tanh x ~ x
 * loses its relative accuracy), so there an odd polynomial takes over (Cephes's tanhf). */
TG_INLINE float tg_tanhf(float x) {
    float a = x < 0 ? -x : x;
    float e = tg_expf(-2.0f * a);
    float big = (1.0f - e) / (1.0f + e);
    big = x < 0 ? -big : big;
    float z = x * x;
    float small = x * (1.0f + ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z
                                + 1.33314422036e-1f) * z - 3.33332819422e-1f) * z);   /* keeps tanh(-0) = -0 */
    return a < 0.625f ? small : big;
}
/* Phi(x), the standard normal distribution function, erfc(-x / sqrt 2) / 2: GELU's
 * x * Phi(x). erfc(z) for z >= 0 is t e^(-z^2 + P(t)) with t = 1 / (1 + z/2) and P a
 * Chebyshev fit of degree 9 (Numerical Recipes' erfcc: relative error below 1.2e-7 for
 * every z), so it vectorizes like tg_expf. For x < 0 the tail itself is the result, which
 * keeps its relative accuracy far out; for x >= 0 it is 1 - the tail. */
TG_INLINE float tg_phif(float x) {
    float z = (x < 0 ? -x : x) * 0.70710678118654752f;
    float t = 1.0f / (1.0f + 0.5f * z);
    float half_x2 = 0.5f * x * x;           /* z^2 from x: one rounding fewer than z * z */
    float p = -1.26551223f + t * (1.00002368f + t * (0.37409196f + t * (0.09678418f
              + t * (-0.18628806f + t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f
              + t * (-0.82215223f + t * 0.17087277f))))))));
    float tail = 0.5f * t * tg_expf(p - half_x2);            /* Phi(-|x|) */
    return x < 0 ? tail : 1.0f - tail;
}

/* The largest of x[0:n] (-inf for none), written so that gcc vectorizes it: TG_MAX_LANES
 * independent running maxima (one variable carried through the loop would not vectorize),
 * combined at the end. Softmax and the chunked cross-entropy start each row with it. */
#define TG_MAX_LANES 16
TG_INLINE float tg_max_f32(int64_t n, const float *x) {
    float lane[TG_MAX_LANES];
    for (int l = 0; l < TG_MAX_LANES; l++) lane[l] = -INFINITY;
    int64_t body = n / TG_MAX_LANES * TG_MAX_LANES;
    for (int64_t i = 0; i < body; i += TG_MAX_LANES)
        for (int l = 0; l < TG_MAX_LANES; l++) lane[l] = x[i + l] > lane[l] ? x[i + l] : lane[l];
    float m = -INFINITY;
    for (int l = 0; l < TG_MAX_LANES; l++) m = lane[l] > m ? lane[l] : m;
    for (int64_t i = body; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}

#endif
