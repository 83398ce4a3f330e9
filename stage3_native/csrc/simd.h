/* SIMD without intrinsics, on any x86-64 (the performance chapter).
 *
 * The kernels are plain C loops, one per op, that gcc vectorizes at -O3: it turns
 * out[i] = a[i] + b[i] into instructions that each add 4, 8 or 16 floats, depending on the
 * widest vector the target has: SSE2 (128-bit) on every x86-64, AVX2 (256-bit, with fused
 * multiply-add) on most machines since 2013, AVX-512 on some servers. Compiling for the
 * build machine (-march=native) would make a library that crashes on an older CPU, so
 * TG_SIMD asks gcc for several copies of a function instead: one per instruction set
 * (x86-64-v3 is AVX2 + FMA, x86-64-v4 adds AVX-512), and a resolver that picks the best
 * one the running CPU supports, once, when the library is loaded.
 *
 * Elsewhere (another compiler, ARM, no glibc for the resolver) TG_SIMD is empty: one copy,
 * vectorized for the baseline instruction set (NEON on 64-bit ARM).
 */
#ifndef TG_SIMD_H
#define TG_SIMD_H
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#define TG_SIMD __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TG_SIMD
#endif

/* A helper of a TG_SIMD function must be inlined into each copy, to be compiled for that
 * copy's instruction set: one called as a function would run its baseline version. */
#ifdef __GNUC__
#define TG_INLINE static inline __attribute__((always_inline))
#else
#define TG_INLINE static inline
#endif

/* A float's bits as an integer and back (memcpy is how C says it; gcc emits no copy). */
TG_INLINE uint32_t tg_float_bits(float x) { uint32_t u; memcpy(&u, &x, sizeof u); return u; }
TG_INLINE float tg_bits_float(uint32_t u) { float x; memcpy(&x, &u, sizeof x); return x; }
#endif
