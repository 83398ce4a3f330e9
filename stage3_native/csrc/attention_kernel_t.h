/* The tile products' micro-kernel for one element type T and one vector width, ATT_BYTES
 * (included by attention.c for 8, 16, 32 and 64 bytes, for float and double). Always
 * inlined, it is compiled for the instruction set of the function it lands in: each SIMD
 * level's att_mm (attention_tile_t.h) calls the one of its register width, and for a tail
 * of half as many columns the one of half that width.
 */
#define V TG_CAT(FN(att_vec), TG_CAT(_, ATT_BYTES))
#define LANES ((i64)(sizeof(V) / sizeof(T)))
typedef T V __attribute__((vector_size(ATT_BYTES)));   /* GCC's vectors: operators act lane by lane */

/* c (R, C vectors) = (accumulate ? c : 0) + a (R, k0 .. k1) @ b (k0 .. k1, C vectors): a's
 * element (r, p) at a[r * a_row + p * a_p] (a transposed tile is just other strides), b's
 * (p, x) at b[p * ldb + x], c's (r, x) at c[r * ldc + x]. The R x C block of c stays in
 * vector registers for the whole loop over k, which per step loads one row of b and
 * broadcasts one element of a per row, as TinyBLAS's micro-kernel does (gemm_simd_t.h):
 * without it every step would load and store the rows of c. ATT_R = 4 rows of 2 vectors
 * are 8 accumulators, about as many independent FMAs as a core keeps in flight (2 units,
 * 4 or 5 cycles each); with b's row and the broadcast, 11 registers: SSE's and AVX2's 16
 * hold them, as do AVX-512's and NEON's 32. R and C are constants wherever this is
 * inlined, so the unused registers and instructions drop out. Vectors are loaded and
 * stored whole, with memcpy (any alignment; gcc emits one instruction): a vector in part
 * would go through the stack. */
TG_INLINE void TG_CAT(FN(att_kernel), TG_CAT(_, ATT_BYTES))(int R, int C, i64 k0, i64 k1, const T *a,
                                                            i64 a_row, i64 a_p, const T *b, i64 ldb,
                                                            T *c, i64 ldc, int accumulate) {
    V acc[ATT_R][2], bv[2];
    #pragma GCC unroll 4
    for (int r = 0; r < R; r++)
        #pragma GCC unroll 2
        for (int j = 0; j < C; j++) acc[r][j] = (V){0};
    for (i64 p = k0; p < k1; p++) {
        #pragma GCC unroll 2
        for (int j = 0; j < C; j++) memcpy(&bv[j], b + p * ldb + j * LANES, sizeof(V));
        #pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            T ar = a[r * a_row + p * a_p];
            #pragma GCC unroll 2
            for (int j = 0; j < C; j++) acc[r][j] += ar * bv[j];
        }
    }
    /* Every loop runs to its bound, R or C, with no `break` out of the block of x and y
     * before their declarations: gcc's AddressSanitizer marks them out of scope again on
     * such an exit, and where x is held in a register (the AVX-512 double copy) it takes
     * that second mark for a write to x after its scope ended and plants a
     * stack-use-after-scope report there (make sanitize). */
    #pragma GCC unroll 4
    for (int r = 0; r < R; r++)
        #pragma GCC unroll 2
        for (int j = 0; j < C; j++) {
            V x = acc[r][j], y;
            if (accumulate) {
                memcpy(&y, c + r * ldc + j * LANES, sizeof(V));
                x += y;
            }
            memcpy(c + r * ldc + j * LANES, &x, sizeof(V));
        }
}

#undef V
#undef LANES
