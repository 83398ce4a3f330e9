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
 * a sum of rows of Kt, a loop gcc vectorizes. x is read row by row, in the order it lies
 * in memory (faster than column by column). */
TG_INLINE void FN(att_pack)(const T *x, i64 row, i64 n, i64 cols, T *kt) {
    for (i64 j = 0; j < n; j++)
        for (i64 p = 0; p < cols; p++) kt[p * ATT_BK + j] = x[j * row + p];
    for (i64 p = 0; p < cols; p++)
        for (i64 j = n; j < ATT_BK; j++) kt[p * ATT_BK + j] = 0;
}

/* c (rows, n) = (accumulate ? c : 0) + a (rows, k) @ b (k, n), the staircase of a causal
 * tile skipped: attention_tile_t.h's att_mm, the copy of the current SIMD level (simd.h),
 * the level of the block copy that calls it. */
static void FN(att_mm)(i64 rows, i64 n, i64 k, const T *a, i64 a_row, i64 a_p, const T *b,
                       i64 ldb, T *c, i64 ldc, int accumulate, i64 cols_from, i64 k_to,
                       i64 k_from) {
#define ATT_MM(level) TG_CAT(FN(att_mm), level)(rows, n, k, a, a_row, a_p, b, ldb, c, ldc, \
                                                 accumulate, cols_from, k_to, k_from)
    switch (*tg_simd_current) {
#if TG_SIMD_LEVELS > 1
    case TG_SIMD_AVX512: ATT_MM(_avx512); return;
    case TG_SIMD_AVX2: ATT_MM(_avx2); return;
#endif
    default: ATT_MM(_generic); return;
    }
#undef ATT_MM
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
            #pragma omp simd reduction(+:sum)       /* summed in any order: in vectors */
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
