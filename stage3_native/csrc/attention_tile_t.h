/* The attention blocks' tile product for one element type T and one SIMD level (included by
 * attention.c once per level, for float and double; attention_t.h's blocks call the copy of
 * the current level, att_mm). The includer defines
 *
 *   ATT_LEVEL    the copy's suffix (_generic, _avx2, _avx512): FN(att_mm) ## ATT_LEVEL
 *   ATT_TARGET   its __attribute__((target(...))), or nothing for the baseline
 *   ATT_BYTES    the level's vector register width in bytes (16, 32, 64)
 *   ATT_HALF     half of it: the width of a tail's vectors
 *
 * Vectors must be the level's own width: gcc splits a wider one into several registers per
 * operation, and beyond the register file it splits them through the stack.
 */
#define KERNEL TG_CAT(FN(att_kernel), TG_CAT(_, ATT_BYTES))   /* attention_kernel_t.h */
#define HALF TG_CAT(FN(att_kernel), TG_CAT(_, ATT_HALF))
#define LANES ((i64)(ATT_BYTES / sizeof(T)))

/* c (rows, n) = (accumulate ? c : 0) + a (rows, k) @ b (k, n), strides as att_kernel's, in
 * blocks of ATT_R rows by two vectors of columns. Under the causal mask a tile on the
 * diagonal is half empty: entry (r, x) of c, or term p of its sum, is 0 or never read
 * outside a staircase, and what lies outside it is skipped, a block of rows at a time.
 * Row r needs columns x < r + cols_from (the scores of the keys query r sees), terms
 * p < r + k_to (the keys it sees) and p >= r + k_from (key r is seen by the queries from
 * r + k_from on, when the rows are keys); ATT_ALL: no limit. Entries of c left out are not
 * written. One function per level, called from every product of the blocks: inlined at
 * each, its unrolled kernels would be compiled seven times over. */
ATT_TARGET __attribute__((noinline)) static void TG_CAT(FN(att_mm), ATT_LEVEL)(
        i64 rows, i64 n, i64 k, const T *a, i64 a_row, i64 a_p, const T *b, i64 ldb, T *c,
        i64 ldc, int accumulate, i64 cols_from, i64 k_to, i64 k_from) {
    for (i64 r = 0; r < rows;) {
        int R = rows - r >= ATT_R ? ATT_R : 1;
        i64 last = r + R - 1, cols = last + cols_from, k1 = last + k_to, k0 = r + k_from;
        if (cols < n)                   /* whole vectors: b's columns are zero beyond its keys */
            cols = (cols + LANES - 1) / LANES * LANES;
        cols = cols < n ? cols : n;
        k1 = k1 < k ? k1 : k;
        k0 = k0 > 0 ? k0 : 0;
        const T *ar = a + r * a_row;
        T *cr = c + r * ldc;
        i64 x = 0;
        for (; x + 2 * LANES <= cols; x += 2 * LANES) {
            if (R == ATT_R) KERNEL(ATT_R, 2, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
            else KERNEL(1, 2, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
        }
        if (x + LANES <= cols) {
            if (R == ATT_R) KERNEL(ATT_R, 1, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
            else KERNEL(1, 1, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
            x += LANES;
        }
        if (x + LANES / 2 <= cols) {                       /* half a vector (a head of 8 floats with AVX-512) */
            if (R == ATT_R) HALF(ATT_R, 1, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
            else HALF(1, 1, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
            x += LANES / 2;
        }
        for (i64 i = 0; i < R && x < cols; i++) {         /* columns short of that: in place */
            T *ci = cr + i * ldc;
            if (!accumulate)
                for (i64 y = x; y < cols; y++) ci[y] = 0;
            for (i64 p = k0; p < k1; p++) {
                T ap = ar[i * a_row + p * a_p];
                const T *bp = b + p * ldb;
                #pragma omp simd
                for (i64 y = x; y < cols; y++) ci[y] += ap * bp[y];
            }
        }
        r += R;
    }
}

#undef KERNEL
#undef HALF
#undef LANES
