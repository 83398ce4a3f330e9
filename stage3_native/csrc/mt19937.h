/* Python's random.Random in C: the Mersenne Twister MT19937 (Matsumoto and Nishimura, 1998)
 * and the draws Python makes from it, written once for the C kernels (mt19937.c) and the
 * CUDA ones (cuda/mt19937.cu). Given the state Python's generator is in (getstate()), they
 * give bit for bit the numbers Python would, and leave the state Python would be in after
 * them, which the generator takes back (setstate) to go on from there: the random factories
 * (stage2_tensor/factories.py) give the same numbers on every device, and as fast as C.
 *
 * The generator, as CPython's Modules/_randommodule.c has it: 624 words of 32 bits and a
 * position. Each output is the word at the position, "tempered" (a few shifts and masks);
 * once all 624 are used (position 624), all are regenerated at once (the "twist") and the
 * position starts over. A state is Python's getstate()[1]: the 624 words, then the
 * position, as 625 uint32_t; the declaration (stage2_tensor/kernels/random.py) checks the
 * position is 0 to 624 before any call.
 *
 * The draws, as Lib/random.py and _randommodule.c make them:
 *   random()          (a * 2^26 + b) / 2^53, a the top 27 bits of one output, b the top
 *                     26 of the next: 53 random bits, uniform on [0, 1)
 *   uniform(lo, hi)   lo + (hi - lo) * random()
 *   gauss(mu, sigma)  Box-Muller: x = random() * 2 pi, g = sqrt(-2 log(1 - random())),
 *                     z = cos(x) g, and sin(x) g is kept (gauss_next: the spare) for the
 *                     next call, which returns it without drawing; mu + z * sigma
 *   getrandbits(k)    k <= 32: the top k bits of one output; up to 64: one output the low
 *                     32 bits, the top k - 32 of the next the high ones
 *   randrange(lo, hi) lo + r, r below n = hi - lo: getrandbits(k), k n's bit length, drawn
 *                     again while r >= n
 * log, sqrt, cos and sin are the C math library's, which Python's math module calls.
 *
 * Each output is the next step of one state, so a draw cannot start before the one before
 * it ends: the kernels run on one thread (CUDA's too, on the host). Twisting all 624
 * words at a time makes that fast enough: a word costs a few integer operations. */
#ifndef TG_MT19937_H
#define TG_MT19937_H
#include <math.h>
#include <stdint.h>

#define TG_MT_WORDS 624                 /* N, the words of the state */
#define TG_MT_SHIFT 397                 /* M, how far ahead the twist reads */

/* Regenerate the 624 words: word k becomes word k + 397 (mod 624, already new where it
 * wrapped around) xored with the top bit of word k and the low 31 of word k + 1, shifted
 * right once, and with the constant A where the low bit was 1. CPython writes the loop in
 * three parts, to avoid the modulo; these are the same words. */
static inline void tg_mt_twist(uint32_t *mt) {
    for (int k = 0; k < TG_MT_WORDS; k++) {
        uint32_t y = (mt[k] & 0x80000000u) | (mt[(k + 1) % TG_MT_WORDS] & 0x7fffffffu);
        mt[k] = mt[(k + TG_MT_SHIFT) % TG_MT_WORDS] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
}

/* The next output: CPython's genrand_uint32. state[624] is the position. */
static inline uint32_t tg_mt_next(uint32_t *state) {
    if (state[TG_MT_WORDS] >= TG_MT_WORDS) {
        tg_mt_twist(state);
        state[TG_MT_WORDS] = 0;
    }
    uint32_t y = state[state[TG_MT_WORDS]++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* random(): CPython's genrand_res53 (a * 2^26 + b is exact in a double) */
static inline double tg_mt_random(uint32_t *state) {
    uint32_t a = tg_mt_next(state) >> 5;
    uint32_t b = tg_mt_next(state) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

/* gauss(0, 1)'s z; spare[0] says whether spare[1] holds gauss_next (1) or not (0) */
static inline double tg_mt_gauss(uint32_t *state, double *spare) {
    if (spare[0] != 0) {
        spare[0] = 0;
        return spare[1];
    }
    double x2pi = tg_mt_random(state) * 6.283185307179586;     /* math.tau */
    double g2rad = sqrt(-2.0 * log(1.0 - tg_mt_random(state)));
    spare[0] = 1;
    spare[1] = sin(x2pi) * g2rad;
    return cos(x2pi) * g2rad;
}

/* a + b * x, x = random() (distribution 0: uniform(a, hi) with b = hi - a) or gauss's z
 * (1: gauss(a, b), whose z * b is the same product). The product is rounded before the
 * sum, as Python computes it: a compiler may contract a + b * x into one fused
 * multiply-add, rounded once, which could change the last bit (gcc does by default where
 * the CPU has one); it cannot through the volatile. */
static inline double tg_mt_draw(uint32_t *state, double *spare, int distribution, double a, double b) {
    volatile double product = b * (distribution ? tg_mt_gauss(state, spare) : tg_mt_random(state));
    return a + product;
}

/* getrandbits(k), 1 <= k <= 64 */
static inline uint64_t tg_mt_bits(uint32_t *state, int k) {
    if (k <= 32)
        return tg_mt_next(state) >> (32 - k);
    uint64_t low = tg_mt_next(state);
    return low | (uint64_t)(tg_mt_next(state) >> (64 - k)) << 32;
}

/* the number of bits of n (n >= 1): k of randrange's getrandbits(k) */
static inline int tg_mt_bit_length(uint64_t n) {
    int k = 0;
    for (; n; n >>= 1)
        k++;
    return k;
}

/* randrange(low, low + width)'s r: below width (>= 1), k its bit length */
static inline uint64_t tg_mt_below(uint32_t *state, uint64_t width, int k) {
    uint64_t r = tg_mt_bits(state, k);
    while (r >= width)
        r = tg_mt_bits(state, k);
    return r;
}
#endif
