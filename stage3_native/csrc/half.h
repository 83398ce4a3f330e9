/* float16 and bfloat16 <-> float32, one element at a time: the portable path (chapter 1,
 * "Half precision"; half.c has the bulk conversions and the CPU's own instructions).
 *
 * A half is stored as its 16 bits (uint16_t). float16 is IEEE binary16: sign, 5 exponent
 * bits (bias 15), 10 mantissa bits; bfloat16 is float32's upper half: sign, 8 exponent bits,
 * 7 mantissa bits. Widening to float32 is exact. Narrowing rounds to nearest, ties to even,
 * as the hardware does; overflow gives inf, NaN stays NaN (quieted, as F16C's vcvtps2ph
 * leaves it; bfloat16's NaN is 0x7FC0, as PyTorch's), subnormals are kept, not flushed.
 * Plain C on the bits, written once for csrc/ and for cuda/ (host and device code).
 */
#ifndef TG_HALF_H
#define TG_HALF_H
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define TG_HALF_FN static inline __host__ __device__
#else
#define TG_HALF_FN static inline
#endif

TG_HALF_FN uint32_t tg_half_bits_of(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }
TG_HALF_FN float tg_half_float_of(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }

TG_HALF_FN float tg_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f)                      /* inf, or NaN made quiet (F16C's vcvtph2ps does so) */
        return tg_half_float_of(sign | 0x7f800000 | (m << 13) | (m ? 0x400000 : 0));
    if (e == 0) {                       /* zero or subnormal: m * 2^-24, exact in float32 */
        float v = (float)m * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return tg_half_float_of(sign | ((e + 112) << 23) | (m << 13));     /* rebias 15 -> 127 */
}

TG_HALF_FN uint16_t tg_f32_to_f16(float f) {
    uint32_t x = tg_half_bits_of(f), sign = (x >> 16) & 0x8000, ax = x & 0x7fffffff;
    if (ax > 0x7f800000)                /* NaN: quiet, the top of its payload kept */
        return (uint16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff));
    if (ax >= 0x477ff000)               /* 65520 and beyond (inf too) round to inf */
        return (uint16_t)(sign | 0x7c00);
    if (ax < 0x38800000) {              /* below 2^-14: a subnormal half or zero. Adding
                                         * 0.5 puts the bits to keep where 0.5's ulp, 2^-24,
                                         * is, and the float add rounds to nearest even */
        float sum = tg_half_float_of(ax) + 0.5f;
        return (uint16_t)(sign | (tg_half_bits_of(sum) - 0x3f000000));
    }
    /* normal: rebias the exponent (127 -> 15) and round the 13 bits dropped, ties to even
     * (a carry into the exponent is the right next binade) */
    uint32_t odd = (ax >> 13) & 1;
    return (uint16_t)(sign | ((ax - 0x38000000 + 0xfff + odd) >> 13));
}

TG_HALF_FN float tg_bf16_to_f32(uint16_t h) { return tg_half_float_of((uint32_t)h << 16); }

TG_HALF_FN uint16_t tg_f32_to_bf16(float f) {
    uint32_t x = tg_half_bits_of(f);
    if ((x & 0x7fffffff) > 0x7f800000)
        return 0x7fc0;
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);  /* to nearest even; may give inf */
}
#endif
