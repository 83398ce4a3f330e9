/* Dropout's generator and keep-test, written once for the C kernel (dropout.c, which explains
 * the generator) and the CUDA kernel (cuda/dropout.cu): the same integer arithmetic on the
 * same (seed, i), so devices "cpu" and "cuda" drop exactly the same elements. */
#ifndef TG_DROPOUT_MATH_H
#define TG_DROPOUT_MATH_H
#include <math.h>
#include <stdint.h>
#include "tg_fn.h"

/* The top 53 bits of output i of the SplitMix64 stream `seed`: u * 2^53. */
TG_FN uint64_t tg_dropout_bits(uint64_t seed, uint64_t i) {
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return z >> 11;
}

/* u >= p compared in integers: u = k * 2^-53 >= p  <=>  k >= p * 2^53  <=>  k >= ceil(p *
 * 2^53), all exact (p * 2^53 only changes p's exponent). The same decision as the python
 * device's u >= p, without converting k to a double per element: baseline x86-64 has no
 * instruction for an unsigned 64-bit integer to double, and the compiler's sequence for it
 * would slow the whole kernel down. */
TG_FN uint64_t tg_dropout_threshold(double p) {
    return (uint64_t)ceil(p * 0x1p53);
}

/* whether element i is kept: 1 or 0 */
TG_FN int tg_dropout_keep(uint64_t seed, uint64_t i, uint64_t threshold) {
    return tg_dropout_bits(seed, i) >= threshold;
}
#endif
