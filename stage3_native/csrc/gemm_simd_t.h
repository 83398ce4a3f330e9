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
 * Defines KERNEL (a whole tile) and KERNEL_rows (the first rows of a tile, for the bottom
 * edge); MR may be at most 14.
 */
#define COLS (NR / VLEN)
#define CONCAT(a, b) a##b
#define NAMED(a, b) CONCAT(a, b)

/* The first `rows` rows of the tile (rows <= MR): a constant wherever this is inlined, so
 * the compiler drops the unused rows' registers and instructions. */
TARGET static inline __attribute__((always_inline)) void NAMED(KERNEL, _body)(
        int rows, i64 kc, const T *restrict a, const T *restrict b, T *restrict c, i64 ldc,
        const T *restrict bias, int accumulate) {
    VEC acc[MR][COLS];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int j = 0; j < COLS; j++) acc[r][j] = VZERO();
    for (int r = 0; r < rows; r++)              /* the write-back will need c: fetch it now */
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);

#pragma GCC unroll 4
    for (i64 p = 0; p < kc; p++) {
        VEC bv[COLS];
#pragma GCC unroll 4
        for (int j = 0; j < COLS; j++) bv[j] = VLOAD(b + j * VLEN);
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
            if (r >= rows) break;
            VEC ar = VBCAST(a + r);
#pragma GCC unroll 4
            for (int j = 0; j < COLS; j++) acc[r][j] = VFMA(ar, bv[j], acc[r][j]);
        }
        a += MR;
        b += NR;
    }

#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        if (r >= rows) break;
#pragma GCC unroll 4
        for (int j = 0; j < COLS; j++) {
            VEC v = acc[r][j];
            if (accumulate) v = VADD(v, VLOADU(c + r * ldc + j * VLEN));
            if (bias) v = VADD(v, VLOADU(bias + j * VLEN));
            VSTOREU(c + r * ldc + j * VLEN, v);
        }
    }
}

/* The whole MR x NR tile: the kernel every full tile runs. */
TARGET static void KERNEL(i64 kc, const T *restrict a, const T *restrict b, T *restrict c,
                          i64 ldc, const T *restrict bias, int accumulate) {
    NAMED(KERNEL, _body)(MR, kc, a, b, c, ldc, bias, accumulate);
}

/* A tile on the bottom edge (rows < MR, all NR columns): only the rows that exist are
 * computed and written, straight into c. One compiled copy per row count. */
TARGET static void NAMED(KERNEL, _rows)(int rows, i64 kc, const T *restrict a,
                                        const T *restrict b, T *restrict c, i64 ldc,
                                        const T *restrict bias, int accumulate) {
#define ROWS_CASE(n) case n: NAMED(KERNEL, _body)(n, kc, a, b, c, ldc, bias, accumulate); return;
    switch (rows) {
        ROWS_CASE(1) ROWS_CASE(2) ROWS_CASE(3) ROWS_CASE(4) ROWS_CASE(5)
#if MR > 6
        ROWS_CASE(6) ROWS_CASE(7) ROWS_CASE(8) ROWS_CASE(9) ROWS_CASE(10) ROWS_CASE(11)
        ROWS_CASE(12) ROWS_CASE(13)
#endif
    default: NAMED(KERNEL, _body)(MR, kc, a, b, c, ldc, bias, accumulate);
    }
#undef ROWS_CASE
}

#undef COLS
#undef CONCAT
#undef NAMED
/* The parameters, so that the next instantiation can define them afresh (TARGET is
 * shared by an instruction set's two types: gemm_kernels.c undefines it). */
#undef T
#undef VEC
#undef VLEN
#undef MR
#undef NR
#undef KERNEL
#undef VZERO
#undef VLOAD
#undef VLOADU
#undef VSTOREU
#undef VBCAST
#undef VFMA
#undef VADD
