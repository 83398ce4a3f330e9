/* One SIMD micro-kernel, written once for every vector width (included by gemm_kernels.c
 * with AVX2 and AVX-512 intrinsics, for float and double). The includer defines:
 *
 *   KERNEL       the function's name          TARGET   its __attribute__((target(...)))
 *   T, VEC       element and vector types     VLEN     elements per vector
 *   MR, NR       register block (NR a multiple of VLEN)
 *   VZERO() VLOAD(p) VLOADU(p) VSTOREU(p, v) VBCAST(p) VFMA(a, b, c) VADD(a, b)
 *
 * The tile of c lives in MR x NR/VLEN vector registers for the whole k loop: each step
 * loads one row of the B panel (NR/VLEN vectors), then for each of the MR rows broadcasts
 * one element of the A panel and does NR/VLEN fused multiply-adds. Nothing else touches
 * memory until the write-back, where the tile is added to c (when accumulating) and the
 * bias row is added (on the first pass over k): the fused bias costs no extra pass.
 * The arrays below are indexed by constants only, so the compiler keeps them in registers.
 */
#define COLS (NR / VLEN)

TARGET static void KERNEL(i64 kc, const T *restrict a, const T *restrict b, T *restrict c,
                          i64 ldc, const T *restrict bias, int accumulate) {
    VEC acc[MR][COLS];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int j = 0; j < COLS; j++) acc[r][j] = VZERO();
    for (int r = 0; r < MR; r++)                /* the write-back will need c: fetch it now */
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);

#pragma GCC unroll 4
    for (i64 p = 0; p < kc; p++) {
        VEC bv[COLS];
#pragma GCC unroll 4
        for (int j = 0; j < COLS; j++) bv[j] = VLOAD(b + j * VLEN);
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
            VEC ar = VBCAST(a + r);
#pragma GCC unroll 4
        for (int j = 0; j < COLS; j++) acc[r][j] = VFMA(ar, bv[j], acc[r][j]);
        }
        a += MR;
        b += NR;
    }

#pragma GCC unroll 16
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int j = 0; j < COLS; j++) {
            VEC v = acc[r][j];
            if (accumulate) v = VADD(v, VLOADU(c + r * ldc + j * VLEN));
            if (bias) v = VADD(v, VLOADU(bias + j * VLEN));
            VSTOREU(c + r * ldc + j * VLEN, v);
        }
}

#undef COLS
