/* Matmul variants for one element type T (included by matmul.c for float and double). */

static void FN(naive)(i64 m, i64 n, i64 k, const T *a, i64 sa_i, i64 sa_p,
                      const T *b, i64 sb_p, i64 sb_j, T *out) {
    for (i64 i = 0; i < m; i++)
        for (i64 j = 0; j < n; j++) {
            T acc = 0;
            for (i64 p = 0; p < k; p++) acc += a[i * sa_i + p * sa_p] * b[p * sb_p + j * sb_j];
            out[i * n + j] = acc;
        }
}

static void FN(reordered)(i64 m, i64 n, i64 k, const T *a, i64 sa_i, i64 sa_p,
                          const T *b, i64 sb_p, i64 sb_j, T *out) {
    memset(out, 0, sizeof(T) * m * n);
    for (i64 i = 0; i < m; i++)
        for (i64 p = 0; p < k; p++) {
            T aip = a[i * sa_i + p * sa_p];
            for (i64 j = 0; j < n; j++) out[i * n + j] += aip * b[p * sb_p + j * sb_j];
        }
}

static void FN(blocked)(i64 m, i64 n, i64 k, const T *a, i64 sa_i, i64 sa_p,
                        const T *b, i64 sb_p, i64 sb_j, T *out) {
    memset(out, 0, sizeof(T) * m * n);
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

void FN(tg_matmul)(int variant, i64 batch, const i64 *a_base, const i64 *b_base,
                   i64 m, i64 n, i64 k, const T *a, i64 sa_i, i64 sa_p,
                   const T *b, i64 sb_p, i64 sb_j, T *out) {
    for (i64 t = 0; t < batch; t++) {
        const T *at = a + a_base[t], *bt = b + b_base[t];
        T *ot = out + t * m * n;
        if (variant == 0) FN(naive)(m, n, k, at, sa_i, sa_p, bt, sb_p, sb_j, ot);
        else if (variant == 1) FN(reordered)(m, n, k, at, sa_i, sa_p, bt, sb_p, sb_j, ot);
        else FN(blocked)(m, n, k, at, sa_i, sa_p, bt, sb_p, sb_j, ot);
    }
}
