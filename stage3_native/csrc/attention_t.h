/* Attention kernels for one element type T (included by attention.c for float and double;
 * the formulas and the layout are described there). */

/* An operand read in place, (bh, rows, cols): head b's row r starts at at + base[b] + r * row. */
typedef struct {
    const T *at;
    const i64 *base;
    i64 row;
} FN(AttOperand);
#define OPERAND FN(AttOperand)
#define HEAD(x, b) ((x).at + (x).base[b])

/* ---- variant 0, naive: one query row at a time, every sum in double ------------------- */

/* A head's q . k for query i and key j, scaled. */
static double FN(att_score)(const AttentionShape *g, const T *q, const T *k) {
    double dot = 0;
    for (i64 p = 0; p < g->d; p++) dot += (double)q[p] * (double)k[p];
    return g->scale * dot;
}

/* Returns 1 when out of memory for the row of dv sums, else 0. */
static int FN(attention_naive)(const AttentionShape *g, OPERAND q, OPERAND k, OPERAND v, i64 heads,
                               T *out, T *lse) {
    double *acc = malloc((size_t)g->dv * sizeof(double));
    if (!acc) return 1;
    for (i64 b = 0; b < g->bh; b++)
        for (i64 i = 0; i < g->t; i++) {
            const T *qi = HEAD(q, b) + i * q.row;
            i64 n = att_visible(g, i);
            double m = -INFINITY, sum = 0;
            for (i64 j = 0; j < n; j++) {                       /* pass 1: the max */
                double x = FN(att_score)(g, qi, HEAD(k, b) + j * k.row);
                m = x > m ? x : m;
            }
            for (i64 c = 0; c < g->dv; c++) acc[c] = 0;
            for (i64 j = 0; j < n; j++) {                       /* pass 2: e^(x - m), times v */
                double e = exp(FN(att_score)(g, qi, HEAD(k, b) + j * k.row) - m);
                const T *vj = HEAD(v, b) + j * v.row;
                sum += e;
                for (i64 c = 0; c < g->dv; c++) acc[c] += e * (double)vj[c];
            }
            T *o = out + att_at(b, heads, g->t, g->dv) + i * heads * g->dv;
            for (i64 c = 0; c < g->dv; c++) o[c] = (T)(acc[c] / sum);
            lse[b * g->t + i] = (T)(m + log(sum));
        }
    free(acc);
    return 0;
}

/* Returns 1 when out of memory for the head's sums, else 0. */
static int FN(attention_backward_naive)(const AttentionShape *g, OPERAND q, OPERAND k, OPERAND v,
                                        OPERAND out, OPERAND dout, const T *lse, i64 heads, T *dq,
                                        T *dk, T *dv) {
    i64 d = g->d, nv = g->dv;
    double *sums = calloc((size_t)(d + g->s * (d + nv)), sizeof(double));
    if (!sums) return 1;
    double *dqi = sums, *dks = sums + d, *dvs = dks + g->s * d;
    for (i64 b = 0; b < g->bh; b++) {
        memset(dks, 0, (size_t)(g->s * (d + nv)) * sizeof(double));
        for (i64 i = 0; i < g->t; i++) {
            const T *qi = HEAD(q, b) + i * q.row, *doi = HEAD(dout, b) + i * dout.row;
            const T *oi = HEAD(out, b) + i * out.row;
            double D = 0, l = (double)lse[b * g->t + i];
            for (i64 c = 0; c < nv; c++) D += (double)doi[c] * (double)oi[c];
            for (i64 p = 0; p < d; p++) dqi[p] = 0;
            for (i64 j = 0, n = att_visible(g, i); j < n; j++) {
                const T *kj = HEAD(k, b) + j * k.row, *vj = HEAD(v, b) + j * v.row;
                double p_ij = exp(FN(att_score)(g, qi, kj) - l), dp = 0;
                for (i64 c = 0; c < nv; c++) {
                    dp += (double)doi[c] * (double)vj[c];
                    dvs[j * nv + c] += p_ij * (double)doi[c];
                }
                double ds = g->scale * p_ij * (dp - D);
                for (i64 p = 0; p < d; p++) {
                    dqi[p] += ds * (double)kj[p];
                    dks[j * d + p] += ds * (double)qi[p];
                }
            }
            T *dqr = dq + att_at(b, heads, g->t, d) + i * heads * d;
            for (i64 p = 0; p < d; p++) dqr[p] = (T)dqi[p];
        }
        for (i64 j = 0; j < g->s; j++) {
            T *dkr = dk + att_at(b, heads, g->s, d) + j * heads * d;
            T *dvr = dv + att_at(b, heads, g->s, nv) + j * heads * nv;
            for (i64 p = 0; p < d; p++) dkr[p] = (T)dks[j * d + p];
            for (i64 c = 0; c < nv; c++) dvr[c] = (T)dvs[j * nv + c];
        }
    }
    free(sums);
    return 0;
}

/* ---- variant 1, blocked: tiles of ATT_BQ queries by ATT_BK keys ------------------------ */

/* Kt (cols, ATT_BK) = the transpose of rows j0 .. j0 + n - 1 of x (cols values each, `row`
 * apart), zero beyond n: a tile's keys (or values) as columns, so that a row of scores is
 * a sum of rows of Kt, a loop gcc vectorizes. */
TG_INLINE void FN(att_pack)(const T *x, i64 row, i64 n, i64 cols, T *kt) {
    for (i64 p = 0; p < cols; p++) {
        T *dst = kt + p * ATT_BK;
        for (i64 j = 0; j < n; j++) dst[j] = x[j * row + p];
        for (i64 j = n; j < ATT_BK; j++) dst[j] = 0;
    }
}

/* The tiles' products, c (rows, n) = (accumulate ? c : 0) + a (rows, k) @ b (k, n): a's
 * element (r, p) at a[r * a_row + p * a_p] (a transposed tile is just other strides), b's
 * (p, x) at b[p * ldb + x], c's (r, x) at c[r * ldc + x]. A block of ATT_R rows by two
 * vectors of columns stays in vector registers (V, 64 bytes: one AVX-512 register, two
 * AVX2 ones) for the whole loop over k, which per step loads one row of b and broadcasts
 * one element of a per row, as TinyBLAS's micro-kernel does (gemm_simd_t.h): without it
 * every step would load and store the rows of c. The last of the C vectors may hold only
 * W lanes (half a vector: a head of 8 floats), the rest zero. R, C and W are constants
 * wherever this is inlined, so the unused registers and instructions drop out. */
#define V FN(att_vec)
#define LANES ((i64)(sizeof(V) / sizeof(T)))
/* (macros, not functions: a function returning a 64-byte vector has an ABI of its own);
 * the first `lanes` elements, the others of v zero */
#define ATT_LOAD(v, p, lanes) ((v) = (V){0}, memcpy(&(v), (p), (size_t)(lanes) * sizeof(T)))
#define ATT_STORE(p, v, lanes) memcpy((p), &(v), (size_t)(lanes) * sizeof(T))

TG_INLINE void FN(att_kernel)(int R, int C, int W, i64 k0, i64 k1, const T *a, i64 a_row,
                              i64 a_p, const T *b, i64 ldb, T *c, i64 ldc, int accumulate) {
    V acc[ATT_R][2], bv[2];
    #pragma GCC unroll 4
    for (int r = 0; r < ATT_R; r++)
        #pragma GCC unroll 2
        for (int j = 0; j < 2; j++) acc[r][j] = (V){0};
    for (i64 p = k0; p < k1; p++) {
        #pragma GCC unroll 2
        for (int j = 0; j < 2; j++)
            if (j < C) ATT_LOAD(bv[j], b + p * ldb + j * LANES, j == C - 1 ? W : LANES);
        #pragma GCC unroll 4
        for (int r = 0; r < ATT_R; r++) {
            if (r >= R) break;
            T ar = a[r * a_row + p * a_p];
            #pragma GCC unroll 2
            for (int j = 0; j < 2; j++)
                if (j < C) acc[r][j] += ar * bv[j];
        }
    }
    #pragma GCC unroll 4
    for (int r = 0; r < ATT_R; r++) {
        if (r >= R) break;
        /* j < C, not `if (j >= C) break;` inside: that break would leave the block of x
         * and y before their declarations, and gcc's AddressSanitizer marks them out of
         * scope again on the way out. Where x is held in a register (the AVX-512 double
         * copy), gcc takes that second mark for a write to x after its scope ended and
         * plants a stack-use-after-scope report there (make sanitize). */
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
}

/* Under the causal mask a tile on the diagonal is half empty: entry (r, x) of c, or term p
 * of its sum, is 0 or never read outside a staircase, and att_mm skips what lies outside
 * it, a block of rows at a time. Row r needs columns x < r + cols_from (the scores of the
 * keys query r sees), terms p < r + k_to (the keys it sees) and p >= r + k_from (key r is
 * seen by the queries from r + k_from on, when the rows are keys); ATT_ALL: no limit.
 * Entries of c left out are not written. */
#define ATT_ALL ((i64)1 << 60)

TG_INLINE void FN(att_mm)(i64 rows, i64 n, i64 k, const T *a, i64 a_row, i64 a_p, const T *b,
                          i64 ldb, T *c, i64 ldc, int accumulate, i64 cols_from, i64 k_to,
                          i64 k_from) {
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
            if (R == ATT_R) FN(att_kernel)(ATT_R, 2, LANES, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
            else FN(att_kernel)(1, 2, LANES, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
        }
        for (; x + LANES <= cols; x += LANES) {
            if (R == ATT_R) FN(att_kernel)(ATT_R, 1, LANES, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
            else FN(att_kernel)(1, 1, LANES, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
        }
        if (x + LANES / 2 <= cols) {                       /* half a vector */
            if (R == ATT_R) FN(att_kernel)(ATT_R, 1, LANES / 2, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
            else FN(att_kernel)(1, 1, LANES / 2, k0, k1, ar, a_row, a_p, b + x, ldb, cr + x, ldc, accumulate);
            x += LANES / 2;
        }
        for (i64 i = 0; i < R && x < cols; i++) {         /* columns short of a vector (a */
            T *ci = cr + i * ldc;                          /* head of 8 floats): in place */
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

/* Row i of a tile of scores (n keys) to its weights e^(x - top) where query i sees the key
 * (the first `seen`), 0 beyond (and all 0 when it sees none): the products that follow then
 * run over whole tiles. Returns their sum. */
TG_INLINE T FN(att_weights)(T *x, i64 seen, i64 n, T top) {
    T sum = 0;
    seen = seen < 0 ? 0 : seen;
    #pragma omp simd reduction(+:sum)
    for (i64 j = 0; j < seen; j++) {
        x[j] = FN(att_exp)(x[j] - top);
        sum += x[j];
    }
    for (i64 j = seen; j < n; j++) x[j] = 0;
    return sum;
}

/* One block of queries i0 .. i0 + rows - 1 of head b, over every key it sees. scratch:
 * ATT_BQ * (d + dv + ATT_BK + 2) + d * ATT_BK elements. */
TG_SIMD(void, FN(attention_block),
        (const AttentionShape *g, const T *q, i64 q_row, const T *k, i64 k_row, const T *v,
         i64 v_row, i64 i0, i64 rows, T *out, i64 out_row, T *lse, T *scratch),
        (g, q, q_row, k, k_row, v, v_row, i0, rows, out, out_row, lse, scratch)) {
    i64 d = g->d, nv = g->dv;
    T *qs = scratch, *acc = qs + ATT_BQ * d, *st = acc + ATT_BQ * nv, *m = st + ATT_BQ * ATT_BK;
    T *l = m + ATT_BQ, *kt = l + ATT_BQ;
    T scale = (T)g->scale;
    for (i64 i = 0; i < rows; i++) {
        for (i64 p = 0; p < d; p++) qs[i * d + p] = q[(i0 + i) * q_row + p] * scale;
        for (i64 c = 0; c < nv; c++) acc[i * nv + c] = 0;
        m[i] = -INFINITY;
        l[i] = 0;
    }
    i64 keys = att_visible(g, i0 + rows - 1);          /* the block's last query sees the most */
    for (i64 j0 = 0; j0 < keys; j0 += ATT_BK) {
        i64 n = keys - j0 < ATT_BK ? keys - j0 : ATT_BK;
        FN(att_pack)(k + j0 * k_row, k_row, n, d, kt);
        i64 stair = g->causal ? i0 + g->offset + 1 - j0 : ATT_ALL;   /* query r sees keys < r + stair */
        FN(att_mm)(rows, ATT_BK, d, qs, d, 1, kt, ATT_BK, st, ATT_BK, 0, stair, ATT_ALL, -ATT_ALL);
        for (i64 i = 0; i < rows; i++) {
            i64 seen = att_visible(g, i0 + i) - j0;     /* keys of this tile query i sees */
            seen = seen < n ? seen : n;
            T *si = st + i * ATT_BK, *ai = acc + i * nv;
            if (seen <= 0) {
                FN(att_weights)(si, 0, n, 0);
                continue;
            }
            T top = m[i];
            #pragma omp simd reduction(max:top)
            for (i64 j = 0; j < seen; j++) top = si[j] > top ? si[j] : top;
            T alpha = FN(att_exp)(m[i] - top);          /* rescales what came before */
            l[i] = l[i] * alpha + FN(att_weights)(si, seen, n, top);
            m[i] = top;
            #pragma omp simd
            for (i64 c = 0; c < nv; c++) ai[c] *= alpha;
        }
        FN(att_mm)(rows, nv, n, st, ATT_BK, 1, v + j0 * v_row, v_row, acc, nv, 1,   /* += p v */
                   ATT_ALL, stair, -ATT_ALL);
    }
    for (i64 i = 0; i < rows; i++) {
        T inv = 1 / l[i];
        for (i64 c = 0; c < nv; c++) out[(i0 + i) * out_row + c] = acc[i * nv + c] * inv;
        lse[i0 + i] = (T)((double)m[i] + log((double)l[i]));
    }
}

static int FN(attention_blocked)(const AttentionShape *g, OPERAND q, OPERAND k, OPERAND v, i64 heads,
                                 T *out, T *lse) {
    i64 blocks = (g->t + ATT_BQ - 1) / ATT_BQ, items = g->bh * blocks;
    size_t scratch = (size_t)(ATT_BQ * (g->d + g->dv + ATT_BK + 2) + g->d * ATT_BK);
    int failed = 0;
    #pragma omp parallel if (g->bh * g->t * g->s * (g->d + g->dv) >= 16 * TG_PARALLEL_MIN)
    {
        T *buffer = malloc(scratch * sizeof(T));
        if (!buffer) {
            #pragma omp atomic write
            failed = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (i64 it = 0; it < items; it++) {
            if (!buffer) continue;
            i64 b = it % g->bh, qb = blocks - 1 - it / g->bh;   /* the heaviest blocks first */
            i64 i0 = qb * ATT_BQ, rows = g->t - i0 < ATT_BQ ? g->t - i0 : ATT_BQ;
            FN(attention_block)(g, HEAD(q, b), q.row, HEAD(k, b), k.row, HEAD(v, b), v.row, i0, rows, out + att_at(b, heads, g->t, g->dv), heads * g->dv,
                                lse + b * g->t, buffer);
        }
        free(buffer);
    }
    return failed;
}

/* One head's gradients: dq (t, d), dk (s, d), dv (s, dv) of head b, query block by query
 * block. dk and dv are accumulated in place (zeroed first). scratch: ATT_BQ * (2 d + dv + 2
 * ATT_BK + 2) + (d + dv) * ATT_BK elements. */
TG_SIMD(void, FN(attention_backward_head),
        (const AttentionShape *g, const T *q, i64 q_row, const T *k, i64 k_row, const T *v,
         i64 v_row, const T *out, i64 o_row, const T *lse, const T *dout, i64 do_row, T *dq,
         T *dk, T *dv, i64 heads, T *scratch),
        (g, q, q_row, k, k_row, v, v_row, out, o_row, lse, dout, do_row, dq, dk, dv, heads, scratch)) {
    i64 d = g->d, nv = g->dv;
    T *qs = scratch, *dos = qs + ATT_BQ * d, *dqs = dos + ATT_BQ * nv, *st = dqs + ATT_BQ * d;
    T *dp = st + ATT_BQ * ATT_BK, *dd = dp + ATT_BQ * ATT_BK, *ls = dd + ATT_BQ;
    T *kt = ls + ATT_BQ, *vt = kt + d * ATT_BK;
    T scale = (T)g->scale;
    i64 dq_row = heads * d, dk_row = heads * d, dv_row = heads * nv;   /* as out's rows */
    for (i64 j = 0; j < g->s; j++) {
        memset(dk + j * dk_row, 0, (size_t)d * sizeof(T));
        memset(dv + j * dv_row, 0, (size_t)nv * sizeof(T));
    }
    for (i64 i0 = 0; i0 < g->t; i0 += ATT_BQ) {
        i64 rows = g->t - i0 < ATT_BQ ? g->t - i0 : ATT_BQ;
        for (i64 i = 0; i < rows; i++) {
            const T *doi = dout + (i0 + i) * do_row, *oi = out + (i0 + i) * o_row;
            T sum = 0;
            for (i64 c = 0; c < nv; c++) {
                dos[i * nv + c] = doi[c];
                sum += doi[c] * oi[c];
            }
            dd[i] = sum;                                  /* D_i = sum_j p_ij dp_ij */
            ls[i] = lse[i0 + i];
            for (i64 p = 0; p < d; p++) {
                qs[i * d + p] = q[(i0 + i) * q_row + p] * scale;
                dqs[i * d + p] = 0;
            }
        }
        i64 keys = att_visible(g, i0 + rows - 1);
        for (i64 j0 = 0; j0 < keys; j0 += ATT_BK) {
            i64 n = keys - j0 < ATT_BK ? keys - j0 : ATT_BK;
            FN(att_pack)(k + j0 * k_row, k_row, n, d, kt);
            FN(att_pack)(v + j0 * v_row, v_row, n, nv, vt);
            i64 stair = g->causal ? i0 + g->offset + 1 - j0 : ATT_ALL;   /* as in the forward */
            FN(att_mm)(rows, ATT_BK, d, qs, d, 1, kt, ATT_BK, st, ATT_BK, 0,        /* the scores, again */
                       stair, ATT_ALL, -ATT_ALL);
            FN(att_mm)(rows, ATT_BK, nv, dos, nv, 1, vt, ATT_BK, dp, ATT_BK, 0,     /* dp_ij = dout_i . v_j */
                       stair, ATT_ALL, -ATT_ALL);
            for (i64 i = 0; i < rows; i++) {
                i64 seen = att_visible(g, i0 + i) - j0;
                seen = seen < n ? seen : n;
                T *pi = st + i * ATT_BK, *dsi = dp + i * ATT_BK, di = dd[i];
                FN(att_weights)(pi, seen, n, ls[i]);        /* p_ij = e^(x_ij - lse_i) */
                #pragma omp simd
                for (i64 j = 0; j < seen; j++) dsi[j] = pi[j] * (dsi[j] - di);
                for (i64 j = seen > 0 ? seen : 0; j < n; j++) dsi[j] = 0;   /* (dp there was not computed) */
            }
            /* dv_j += sum_i p_ij dout_i, dk_j += sum_i ds_ij (scale q_i): the tiles transposed */
            i64 seen_from = g->causal ? 1 - stair : -ATT_ALL;   /* key r is seen by queries >= r + this */
            FN(att_mm)(n, nv, rows, st, 1, ATT_BK, dos, nv, dv + j0 * dv_row, dv_row, 1, ATT_ALL, ATT_ALL,
                       seen_from);
            FN(att_mm)(n, d, rows, dp, 1, ATT_BK, qs, d, dk + j0 * dk_row, dk_row, 1, ATT_ALL, ATT_ALL,
                       seen_from);
            FN(att_mm)(rows, d, n, dp, ATT_BK, 1, k + j0 * k_row, k_row, dqs, d, 1,   /* dq_i / scale */
                       ATT_ALL, stair, -ATT_ALL);
        }
        for (i64 i = 0; i < rows; i++)
            for (i64 p = 0; p < d; p++) dq[(i0 + i) * dq_row + p] = dqs[i * d + p] * scale;
    }
}

static int FN(attention_backward_blocked)(const AttentionShape *g, OPERAND q, OPERAND k,
                                          OPERAND v, OPERAND out, OPERAND dout, const T *lse,
                                          i64 heads, T *dq, T *dk, T *dv) {
    size_t scratch = (size_t)(ATT_BQ * (2 * g->d + g->dv + 2 * ATT_BK + 2) + (g->d + g->dv) * ATT_BK);
    int failed = 0;
    #pragma omp parallel if (g->bh > 1 && g->bh * g->t * g->s * (g->d + g->dv) >= 16 * TG_PARALLEL_MIN)
    {
        T *buffer = malloc(scratch * sizeof(T));
        if (!buffer) {
            #pragma omp atomic write
            failed = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (i64 b = 0; b < g->bh; b++) {
            if (!buffer) continue;
            FN(attention_backward_head)(g, HEAD(q, b), q.row, HEAD(k, b), k.row, HEAD(v, b), v.row,
                                        HEAD(out, b), out.row, lse + b * g->t, HEAD(dout, b),
                                        dout.row, dq + att_at(b, heads, g->t, g->d),
                                        dk + att_at(b, heads, g->s, g->d),
                                        dv + att_at(b, heads, g->s, g->dv), heads, buffer);
        }
        free(buffer);
    }
    return failed;
}

#undef V
#undef LANES
#undef ATT_LOAD
#undef ATT_STORE
#undef ATT_ALL

/* ---- the dispatch: variant 0 naive, 1 blocked --------------------------------------------- */

int FN(tg_attention)(int variant, i64 bh, i64 t, i64 s, i64 d, i64 ev, const T *q,
                     const i64 *q_base, i64 q_row, const T *k, const i64 *k_base, i64 k_row,
                     const T *v, const i64 *v_base, i64 v_row, int causal, i64 offset,
                     double scale, i64 heads, T *out, T *lse) {
    AttentionShape g = {bh, t, s, d, ev, causal, offset, scale};
    OPERAND Q = {q, q_base, q_row}, K = {k, k_base, k_row}, V = {v, v_base, v_row};
    return (variant == 0 ? FN(attention_naive) : FN(attention_blocked))(&g, Q, K, V, heads, out, lse);
}

int FN(tg_attention_backward)(int variant, i64 bh, i64 t, i64 s, i64 d, i64 ev, const T *q,
                              const i64 *q_base, i64 q_row, const T *k, const i64 *k_base,
                              i64 k_row, const T *v, const i64 *v_base, i64 v_row, const T *out,
                              const i64 *o_base, i64 o_row, const T *lse, const T *dout,
                              const i64 *do_base, i64 do_row, int causal, i64 offset,
                              double scale, i64 heads, T *dq, T *dk, T *dv) {
    AttentionShape g = {bh, t, s, d, ev, causal, offset, scale};
    OPERAND Q = {q, q_base, q_row}, K = {k, k_base, k_row}, V = {v, v_base, v_row};
    OPERAND O = {out, o_base, o_row}, DO = {dout, do_base, do_row};
    return (variant == 0 ? FN(attention_backward_naive) : FN(attention_backward_blocked))(
        &g, Q, K, V, O, DO, lse, heads, dq, dk, dv);
}

#undef OPERAND
#undef HEAD
