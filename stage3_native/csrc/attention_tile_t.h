/* The attention blocks' tile product for one element type T and one SIMD level (included by
 * attention.c once per level, for float and double; attention_t.h's blocks call the copy of
 * the current level). The includer defines
 *
 *   ATT_LEVEL    the copy's suffix (_generic, _avx2, _avx512): FN(att_mm) ## ATT_LEVEL
 *   ATT_TARGET   its __attribute__((target(...))), or nothing for the baseline
 *   ATT_BYTES    the level's vector register width in bytes (16, 32, 64)
 *
 * The vectors must be the level's own width: gcc splits a wider one into several registers
 * per operation, and beyond the register file it splits through the stack.
 */
#define V TG_CAT(FN(att_vec), ATT_LEVEL)
#define LANES ((i64)(sizeof(V) / sizeof(T)))
typedef T V __attribute__((vector_size(ATT_BYTES)));

/* (macros, not functions: a function returning a vector has an ABI of its own); the first
 * `lanes` elements, the others of v zero */
#define ATT_LOAD(v, p, lanes) ((v) = (V){0}, memcpy(&(v), (p), (size_t)(lanes) * sizeof(T)))
#define ATT_STORE(p, v, lanes) memcpy((p), &(v), (size_t)(lanes) * sizeof(T))

/* c (R, C vectors) = (accumulate ? c : 0) + a (R, k0 .. k1) @ b (k0 .. k1, C vectors): a's
 * element (r, p) at a[r * a_row + p * a_p] (a transposed tile is just other strides), b's
 * (p, x) at b[p * ldb + x], c's (r, x) at c[r * ldc + x]. The R x C block of c stays in
 * vector registers for the whole loop over k, which per step loads one row of b and
 * broadcasts one element of a per row, as TinyBLAS's micro-kernel does (gemm_simd_t.h):
 * without it every step would load and store the rows of c. ATT_R = 4 rows of 2 vectors
 * are 8 accumulators, about as many independent FMAs as a core keeps in flight (2 units,
 * 4 or 5 cycles each); with b's row and the broadcast, 11 registers: SSE's and AVX2's 16
 * hold them, as do AVX-512's and NEON's 32. The last of the C vectors may hold only W
 * lanes (half a vector: a head of 8 floats with AVX-512), the rest zero. R, C and W are
 * constants wherever this is inlined, so the unused registers and instructions drop out. */
ATT_TARGET TG_INLINE void TG_CAT(FN(att_kernel), ATT_LEVEL)(int R, int C, int W, i64 k0, i64 k1,
                                                          const T *a, i64 a_row, i64 a_p,
                                                          const T *b, i64 ldb, T *c, i64 ldc,
                                                          int accumulate) {
    V acc[ATT_R][2], bv[2];
    #pragma GCC unroll 4
    for (int r = 0; r < R; r++)
        #pragma GCC unroll 2
        for (int j = 0; j < C; j++) acc[r][j] = (V){0};
    for (i64 p = k0; p < k1; p++) {
        #pragma GCC unroll 2
        for (int j = 0; j < C; j++) ATT_LOAD(bv[j], b + p * ldb + j * LANES, j == C - 1 ? W : LANES);
        #pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            T ar = a[r * a_row + p * a_p];
            #pragma GCC unroll 2
            for (int j = 0; j < C; j++) acc[r][j] += ar * bv[j];
        }
    }
    /* (Every loop runs to its bound, R or C: a `break` before x's and y's declarations
     * would leave their block early, which AddressSanitizer reports as a use after scope.) */
    #pragma GCC unroll 4
    for (int r = 0; r < R; r++)
        #pragma GCC unroll 2
        for (int j = 0; j < C; j++) {
            V x = acc[r][j], y;
            int lanes = j == C - 1 ? W : LANES;
            if (accumulate) {
                ATT_LOAD(y, c + r * ldc + j * LANES, lanes);
                x += y;
            }
            ATT_STORE(c + r * ldc + j * LANES, x, lanes);
        }
}

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
#define KERNEL TG_CAT(FN(att_kernel), ATT_LEVEL)
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
            if (R == ATT_R) KERNEL(ATT_R, 2, LANES, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
            else KERNEL(1, 2, LANES, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
        }
        for (; x + LANES <= cols; x += LANES) {
            if (R == ATT_R) KERNEL(ATT_R, 1, LANES, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
            else KERNEL(1, 1, LANES, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
        }
        if (x + LANES / 2 <= cols) {                       /* half a vector */
            if (R == ATT_R) KERNEL(ATT_R, 1, LANES / 2, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
            else KERNEL(1, 1, LANES / 2, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
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
#undef KERNEL
}

#undef V
#undef LANES
#undef ATT_LOAD
#undef ATT_STORE
