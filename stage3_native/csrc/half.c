/* Bulk float16 / bfloat16 <-> float32 conversion (chapter 1, "Half precision"): what a cast
 * of a contiguous tensor runs (copy.c), on the CPU's own instructions where it has them.
 *
 * Two paths give the same bits (tests/test_stage2_half.py checks all 65536 halves and a
 * sweep of float32 values, on the paths this CPU runs):
 *
 *   portable  half.h's bit code, one element at a time, on any CPU
 *   simd      float16: F16C's vcvtps2ph / vcvtph2ps, 8 elements per instruction (x86-64
 *             since 2012). bfloat16: AVX-512 BF16's vcvtneps2bf16, 16 per instruction, on
 *             the CPUs that have it (Cooper Lake, Sapphire Rapids, Zen 4). That instruction
 *             flushes subnormal inputs to zero and keeps a NaN's payload, where PyTorch keeps
 *             subnormals and stores 0x7FC0: the lanes holding either are redone with the
 *             portable rounding, in AVX-512 integer code. Widening bfloat16 is a shift.
 *
 * Chosen at run time as simd.c chooses its levels: __builtin_cpu_supports asks the CPU,
 * and the SIMD copy of a function is compiled for its instructions only (target
 * attributes), so the library still runs on a CPU without them. tg_half_use switches
 * (tests run both paths); elsewhere than x86-64 gcc there is only the portable path.
 */
#include "half.h"
#include "tracegrad.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 \
    && !defined(TG_SIMD_PORTABLE)
#define TG_HALF_SIMD 1
#include <immintrin.h>
#endif

enum { F16 = 5, BF16 = 6 };             /* the dtype codes (tracegrad.h) */

static int use_simd = 1;                /* the simd path wherever the CPU has it */

int tg_half_has_simd(int dtype) {
#ifdef TG_HALF_SIMD
    __builtin_cpu_init();
    if (dtype == F16)
        return __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
    if (dtype == BF16)
        return __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw")
               && __builtin_cpu_supports("avx512vl");
#endif
    (void)dtype;
    return 0;
}

int tg_half_use(int simd) { use_simd = simd != 0; return use_simd; }

int tg_half_simd(int dtype) { return use_simd && tg_half_has_simd(dtype); }

/* ---- portable ------------------------------------------------------------------------- */
static void narrow_portable(int dtype, i64 n, const float *x, uint16_t *out) {
    if (dtype == F16)
        for (i64 i = 0; i < n; i++) out[i] = tg_f32_to_f16(x[i]);
    else
        for (i64 i = 0; i < n; i++) out[i] = tg_f32_to_bf16(x[i]);
}

static void widen_portable(int dtype, i64 n, const uint16_t *x, float *out) {
    if (dtype == F16)
        for (i64 i = 0; i < n; i++) out[i] = tg_f16_to_f32(x[i]);
    else
        for (i64 i = 0; i < n; i++) out[i] = tg_bf16_to_f32(x[i]);
}

#ifdef TG_HALF_SIMD
/* ---- F16C ----------------------------------------------------------------------------- */
__attribute__((target("f16c,avx"))) static void narrow_f16c(i64 n, const float *x, uint16_t *out) {
    i64 i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(out + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    narrow_portable(F16, n - i, x + i, out + i);
}

__attribute__((target("f16c,avx"))) static void widen_f16c(i64 n, const uint16_t *x, float *out) {
    i64 i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
    widen_portable(F16, n - i, x + i, out + i);
}

/* ---- AVX-512 BF16 --------------------------------------------------------------------- */
#define BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

BF16_TARGET static void narrow_bf16(i64 n, const float *x, uint16_t *out) {
    const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    const __m512i smallest = _mm512_set1_epi32(0x00800000), zero = _mm512_setzero_si512();
    i64 i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
        __m256i h = (__m256i)_mm512_cvtneps_pbh(v);
        __m512i u = _mm512_castps_si512(v), a = _mm512_and_si512(u, abs_mask);
        __mmask16 nan = _mm512_cmpgt_epu32_mask(a, inf);
        __mmask16 sub = _mm512_cmplt_epu32_mask(a, smallest) & _mm512_cmpneq_epu32_mask(a, zero);
        if (nan | sub) {                /* rare: the portable rounding for those lanes */
            __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
            __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, odd),
                                                           _mm512_set1_epi32(0x7fff)), 16);
            r = _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32(0x7fc0));
            h = _mm256_mask_mov_epi16(h, nan | sub, _mm512_cvtepi32_epi16(r));
        }
        _mm256_storeu_si256((__m256i *)(out + i), h);
    }
    narrow_portable(BF16, n - i, x + i, out + i);
}

BF16_TARGET static void widen_bf16(i64 n, const uint16_t *x, float *out) {
    i64 i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(x + i)));
        _mm512_storeu_si512(out + i, _mm512_slli_epi32(w, 16));
    }
    widen_portable(BF16, n - i, x + i, out + i);
}
#endif

/* ---- the dispatch: specialized first, the portable path for everything else ---------- */
void tg_half_narrow(int dtype, i64 n, const float *x, uint16_t *out) {
#ifdef TG_HALF_SIMD
    if (tg_half_simd(dtype)) {
        if (dtype == F16) narrow_f16c(n, x, out); else narrow_bf16(n, x, out);
        return;
    }
#endif
    narrow_portable(dtype, n, x, out);
}

void tg_half_widen(int dtype, i64 n, const uint16_t *x, float *out) {
#ifdef TG_HALF_SIMD
    if (tg_half_simd(dtype)) {
        if (dtype == F16) widen_f16c(n, x, out); else widen_bf16(n, x, out);
        return;
    }
#endif
    widen_portable(dtype, n, x, out);
}
