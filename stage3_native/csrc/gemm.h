/* TinyBLAS's internals, shared by gemm.c (the packed driver), gemm_kernels.c (the
 * micro-kernels, one per instruction set) and matmul.c (which calls the driver as its
 * variant 4, "tinyblas"). Not part of the cffi interface: tracegrad.h has the public part.
 */
#ifndef TG_GEMM_H
#define TG_GEMM_H
#include "tracegrad.h"

/* The SIMD kernels need x86-64 and GCC or Clang (target attributes, __builtin_cpu_supports);
 * -DTG_GEMM_PORTABLE leaves them out, as on any other machine (to test that build). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(TG_GEMM_PORTABLE)
#define TG_GEMM_X86 1
#endif

/* The largest register block of any micro-kernel (avx512's 14 x 32): edge tiles go through
 * a temporary tile of this size. */
#define TG_GEMM_MAX_MR 14
#define TG_GEMM_MAX_NR 32

/* Packing buffers have this many elements of slack at the end: a SIMD packer may store a
 * whole vector where fewer values are due (the next store overwrites the rest). */
#define TG_GEMM_PACK_SLACK 16

/* A micro-kernel computes one mr x nr tile of c from a packed micro-panel of A (kc steps of
 * mr values) and one of B (kc steps of nr values, 64-byte aligned):
 *     c = (accumulate ? c : 0) + a_panel @ b_panel + (bias ? bias[0:nr] on every row : 0)
 * c has row stride ldc. run_rows does the same for the first `rows` rows of the tile only
 * (the bottom edge). A GemmKernel bundles them with the block sizes that suit it (see the
 * comment at the top of gemm.c) and, optionally, a SIMD packing routine.
 *
 * Packing a panel is the same job for A and B: `lanes` rows of A (columns of B), padded
 * with zeros to `width` = mr (nr), kc steps along k:
 *     dst[p * width + l] = x[p * s_step + l * s_lane]
 * for A: s_step = sa_p, s_lane = sa_i; for B: s_step = sb_p, s_lane = sb_j. A SIMD packer
 * returns 0 for strides it does not handle, and gemm_t.h's portable loop does it. */
#define TG_GEMM_TYPES(T, S) \
    typedef void (*MicroKernel_##S)(i64 kc, const T *a, const T *b, T *c, i64 ldc, \
                                    const T *bias, int accumulate); \
    typedef int (*PackPanel_##S)(int width, int lanes, i64 kc, const T *x, i64 s_step, \
                                 i64 s_lane, T *dst); \
    typedef void (*MicroKernelRows_##S)(int rows, i64 kc, const T *a, const T *b, T *c, \
                                        i64 ldc, const T *bias, int accumulate); \
    typedef struct { \
        const char *name; \
        int mr, nr;          /* register block: rows of A, columns of B per call */ \
        i64 mc, kc, nc;      /* cache blocks: rows of A, depth, columns of B */ \
        MicroKernel_##S run; \
        MicroKernelRows_##S run_rows;    /* the first rows (< mr) only; NULL: none */ \
        PackPanel_##S pack;  /* NULL: gemm_t.h's portable packing only */ \
    } GemmKernel_##S; \
    const GemmKernel_##S *tg_gemm_kernel_##S(void); \
    void tg_gemm_##S(i64 batch, const i64 *a_base, const i64 *b_base, i64 m, i64 n, i64 k, \
                     const T *a, i64 sa_i, i64 sa_p, const T *b, i64 sb_p, i64 sb_j, \
                     const T *bias, T *out);
TG_GEMM_TYPES(float, f32)
TG_GEMM_TYPES(double, f64)

#endif
