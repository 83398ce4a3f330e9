/* Matmul variants for one element type T (included by matmul.c for float and double). */

/* Every row of out (m x n) set to bias, or to zeros: where the accumulating loops start. */
static void FN(start_rows)(i64 m, i64 n, const T *bias, T *out) {
    if (bias == NULL) {
        memset(out, 0, sizeof(T) * m * n);
        return;
    }
    for (i64 i = 0; i < m; i++) memcpy(out + i * n, bias, sizeof(T) * n);
}

static void FN(naive)(i64 m, i64 n, i64 k, const T *a, i64 sa_i, i64 sa_p,
                      const T *b, i64 sb_p, i64 sb_j, const T *bias, T *out) {
    for (i64 i = 0; i < m; i++)
        for (i64 j = 0; j < n; j++) {
            T acc = bias ? bias[j] : 0;
            for (i64 p = 0; p < k; p++) acc += a[i * sa_i + p * sa_p] * b[p * sb_p + j * sb_j];
            out[i * n + j] = acc;
        }
}

static void FN(reordered)(i64 m, i64 n, i64 k, const T *a, i64 sa_i, i64 sa_p,
                          const T *b, i64 sb_p, i64 sb_j, const T *bias, T *out) {
    FN(start_rows)(m, n, bias, out);
    for (i64 i = 0; i < m; i++)
        for (i64 p = 0; p < k; p++) {
            T aip = a[i * sa_i + p * sa_p];
            for (i64 j = 0; j < n; j++) out[i * n + j] += aip * b[p * sb_p + j * sb_j];
        }
}

static void FN(blocked)(i64 m, i64 n, i64 k, const T *a, i64 sa_i, i64 sa_p,
                        const T *b, i64 sb_p, i64 sb_j, const T *bias, T *out) {
    FN(start_rows)(m, n, bias, out);
    for (i64 i0 = 0; i0 < m; i0 += TILE)
        for (i64 p0 = 0; p0 < k; p0 += TILE)
            for (i64 j0 = 0; j0 < n; j0 += TILE) {
                i64 i1 = i0 + TILE < m ? i0 + TILE : m;
                i64 p1 = p0 + TILE < k ? p0 + TILE : k;
                i64 j1 = j0 + TILE < n ? j0 + TILE : n;
                for (i64 i = i0; i < i1; i++)
                    for (i64 p = p0; p < p1; p++) {
                        T aip = a[i * sa_i + p * sa_p];
                        for (i64 j = j0; j < j1; j++) out[i * n + j] += aip * b[p * sb_p + j * sb_j];
                    }
            }
}

#ifdef TG_HAVE_CBLAS
/* 1 when the system BLAS computed out = a @ b (+ bias: out starts as the bias rows, and
 * BLAS adds to it, beta = 1); 0 when it cannot read the operands. */
static int FN(blas)(i64 m, i64 n, i64 k, const T *a, i64 sa_i, i64 sa_p,
                    const T *b, i64 sb_p, i64 sb_j, const T *bias, T *out) {
    i64 lda, ldb;
    int ta = blas_layout(m, k, sa_i, sa_p, &lda), tb = blas_layout(k, n, sb_p, sb_j, &ldb);
    if (ta < 0 || tb < 0 || m == 0 || n == 0 || k == 0) return 0;
    if (bias) FN(start_rows)(m, n, bias, out);
    GEMM(ROW_MAJOR, ta, tb, (int)m, (int)n, (int)k, 1, a, (int)lda, b, (int)ldb, bias ? 1 : 0,
         out, (int)n);
    return 1;
}
#endif

void FN(tg_matmul)(int variant, i64 batch, const i64 *a_base, const i64 *b_base,
                   i64 m, i64 n, i64 k, const T *a, i64 sa_i, i64 sa_p,
                   const T *b, i64 sb_p, i64 sb_j, const T *bias, T *out) {
    if (variant == 4) {                 /* TinyBLAS spreads the batch over threads itself */
        FN(tg_gemm)(batch, a_base, b_base, m, n, k, a, sa_i, sa_p, b, sb_p, sb_j, bias, out);
        return;
    }
    for (i64 t = 0; t < batch; t++) {
        const T *at = a + a_base[t], *bt = b + b_base[t];
        T *ot = out + t * m * n;
        if (variant == 0) FN(naive)(m, n, k, at, sa_i, sa_p, bt, sb_p, sb_j, bias, ot);
        else if (variant == 1) FN(reordered)(m, n, k, at, sa_i, sa_p, bt, sb_p, sb_j, bias, ot);
        else if (variant == 2) FN(blocked)(m, n, k, at, sa_i, sa_p, bt, sb_p, sb_j, bias, ot);
#ifdef TG_HAVE_CBLAS
        else if (FN(blas)(m, n, k, at, sa_i, sa_p, bt, sb_p, sb_j, bias, ot)) continue;
#endif
        else FN(tg_gemm)(1, a_base + t, b_base + t, m, n, k, a, sa_i, sa_p, b, sb_p, sb_j, bias, ot);
    }
}
