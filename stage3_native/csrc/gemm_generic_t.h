/* The portable micro-kernel for one element type T (included by gemm_kernels.c for float
 * and double): plain C, for machines without the SIMD kernels (or when forced with
 * TRACEGRAD_GEMM_KERNEL=generic). Same contract as the SIMD ones (see gemm.h); the compiler
 * vectorizes the inner loop with whatever the baseline instruction set offers. */
#define GENERIC_MR 4
#define GENERIC_NR 8

static void FN(generic_kernel)(i64 kc, const T *restrict a, const T *restrict b, T *restrict c,
                               i64 ldc, const T *restrict bias, int accumulate) {
    T acc[GENERIC_MR][GENERIC_NR] = {{0}};
    for (i64 p = 0; p < kc; p++) {
        for (int r = 0; r < GENERIC_MR; r++)
            for (int j = 0; j < GENERIC_NR; j++) acc[r][j] += a[r] * b[j];
        a += GENERIC_MR;
        b += GENERIC_NR;
    }
    for (int r = 0; r < GENERIC_MR; r++)
        for (int j = 0; j < GENERIC_NR; j++) {
            T v = acc[r][j];
            if (accumulate) v += c[r * ldc + j];
            if (bias) v += bias[j];
            c[r * ldc + j] = v;
        }
}
