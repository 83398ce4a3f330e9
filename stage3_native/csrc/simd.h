/* SIMD without intrinsics, on any x86-64 (the performance chapter).
 *
 * The kernels are plain C loops, one per op, that gcc vectorizes at -O3: it turns
 * out[i] = a[i] + b[i] into instructions that each add 4, 8 or 16 floats, depending on the
 * widest vector the target has: SSE2 (128-bit) on every x86-64, AVX2 (256-bit, with fused
 * multiply-add) on most machines since 2013, AVX-512 on some servers. Compiling for the
 * build machine (-march=native) would make a library that crashes on an older CPU, so
 * TG_SIMD compiles a function several times instead, once per SIMD level:
 *
 *   generic  the baseline x86-64 (SSE2), which every x86-64 CPU runs
 *   avx2     x86-64-v3: AVX2, FMA (a * b + c rounded once), BMI...
 *   avx512   x86-64-v4: x86-64-v3 and AVX-512 (F, BW, CD, DQ, VL)
 *
 * and calls the copy of the level chosen when the library is loaded: the widest this CPU
 * runs, unless TRACEGRAD_SIMD names a narrower one; tg_simd_use switches at run time
 * (simd.c). The levels give the same results up to rounding: with FMA, gcc contracts
 * a * b + c into one instruction where the generic copy rounds twice, so the last bits of
 * a float can differ from one level to another (tests check every level, against bounds).
 *
 * A TG_SIMD function is written as
 *
 *     TG_SIMD(void, FN(unary_row), (int op, i64 n, const T *x, T *out), (op, n, x, out)) {
 *         ... the loops ...
 *     }
 *
 * its return type, its name, its parameters and the same parameters as arguments. The
 * braces hold name_body (always inlined); name_generic, name_avx2 and name_avx512 are its
 * copies, each name_body inlined and compiled for its instruction set; name itself calls
 * the copy of the current level. The switch in TG_SIMD below is the whole dispatch.
 *
 * Elsewhere (another compiler, another architecture, gcc before 12) there is one level,
 * "generic": name is the function itself, vectorized for the baseline instruction set
 * (NEON on 64-bit ARM).
 */
#ifndef TG_SIMD_H
#define TG_SIMD_H
#include <stdint.h>
#include <string.h>
#include "tracegrad.h"

/* A helper of a TG_SIMD function must be inlined into each copy, to be compiled for that
 * copy's instruction set: one called as a function would run its baseline version. */
#ifdef __GNUC__
#define TG_INLINE static inline __attribute__((always_inline))
#else
#define TG_INLINE static inline
#endif

#define TG_CAT(a, b) TG_CAT_(a, b)        /* a ## b after expanding a: FN(x) ## _avx2 */
#define TG_CAT_(a, b) a##b

/* The levels, narrowest first (the indices behind tg_simd_current). gcc 12 is the first
 * whose __builtin_cpu_supports knows the x86-64-v3 and -v4 levels simd.c asks about;
 * -DTG_SIMD_PORTABLE makes the one-level build anywhere (to test it). */
enum { TG_SIMD_GENERIC, TG_SIMD_AVX2, TG_SIMD_AVX512 };
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 \
    && !defined(TG_SIMD_PORTABLE)
#define TG_SIMD_LEVELS 3

/* -DTG_SIMD_NO_AVX512 leaves the avx512 copy out: a fused kernel compiled for a CPU that
 * cannot run it (lazy/jit.py) saves that copy's compile time, and its level is never
 * avx512 there. */
#ifdef TG_SIMD_NO_AVX512
#define TG_SIMD_AVX512_COPY(ret, name, params, args)
#define TG_SIMD_AVX512_CALL(name) TG_CAT(name, _avx2)
#else
#define TG_SIMD_AVX512_COPY(ret, name, params, args) \
    __attribute__((target("arch=x86-64-v4"))) static ret TG_CAT(name, _avx512) params { \
        return TG_CAT(name, _body) args; \
    }
#define TG_SIMD_AVX512_CALL(name) TG_CAT(name, _avx512)
#endif

#define TG_SIMD(ret, name, params, args) \
    TG_INLINE ret TG_CAT(name, _body) params; \
    TG_SIMD_AVX512_COPY(ret, name, params, args) \
    __attribute__((target("arch=x86-64-v3"))) static ret TG_CAT(name, _avx2) params { \
        return TG_CAT(name, _body) args; \
    } \
    static ret TG_CAT(name, _generic) params { return TG_CAT(name, _body) args; } \
    static ret name params { \
        switch (*tg_simd_current) { \
        case TG_SIMD_AVX512: return TG_SIMD_AVX512_CALL(name) args; \
        case TG_SIMD_AVX2: return TG_CAT(name, _avx2) args; \
        default: return TG_CAT(name, _generic) args; \
        } \
    } \
    TG_INLINE ret TG_CAT(name, _body) params
/* (`return f(...)` of a void f, in the copies of a void function, is GNU C: this branch
 * is gcc's.) */
#else
#define TG_SIMD_LEVELS 1
#define TG_SIMD(ret, name, params, args) static ret name params
#endif

/* A float's bits as an integer and back (memcpy is how C says it; gcc emits no copy). */
TG_INLINE uint32_t tg_float_bits(float x) { uint32_t u; memcpy(&u, &x, sizeof u); return u; }
TG_INLINE float tg_bits_float(uint32_t u) { float x; memcpy(&x, &u, sizeof x); return x; }
#endif
