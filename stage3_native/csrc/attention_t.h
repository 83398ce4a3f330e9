/* Attention kernels for one element type T (included by attention.c for float and double;
 * the formulas and the layout are described there). */

/* ---- variant 0, naive: one query row at a time, every sum in double ------------------- */

/* A head's q . k for query i and key j, scaled. */
static double FN(att_score)(const AttentionShape *g, const T *q, const T *k) {
    double dot = 0;
    for (i64 p = 0; p < g->d; p++) dot += (double)q[p] * (double)k[p];
    return g->scale * dot;
}

/* Returns 1 when out of memory for the row of dv sums, else 0. */
static int FN(attention_naive)(const AttentionShape *g, const T *q, const i64 *q_base, i64 q_row,
                               const T *k, const i64 *k_base, i64 k_row, const T *v,
                               const i64 *v_base, i64 v_row, T *out, T *lse) {
    double *acc = malloc((size_t)g->dv * sizeof(double));
    if (!acc) return 1;
    for (i64 b = 0; b < g->bh; b++)
        for (i64 i = 0; i < g->t; i++) {
            const T *qi = q + q_base[b] + i * q_row;
            i64 n = att_visible(g, i);
            double m = -INFINITY, sum = 0;
            for (i64 j = 0; j < n; j++) {                       /* pass 1: the max */
                double x = FN(att_score)(g, qi, k + k_base[b] + j * k_row);
                m = x > m ? x : m;
            }
            for (i64 c = 0; c < g->dv; c++) acc[c] = 0;
            for (i64 j = 0; j < n; j++) {                       /* pass 2: e^(x - m), times v */
                double e = exp(FN(att_score)(g, qi, k + k_base[b] + j * k_row) - m);
                const T *vj = v + v_base[b] + j * v_row;
                sum += e;
                for (i64 c = 0; c < g->dv; c++) acc[c] += e * (double)vj[c];
            }
            T *o = out + (b * g->t + i) * g->dv;
            for (i64 c = 0; c < g->dv; c++) o[c] = (T)(acc[c] / sum);
            lse[b * g->t + i] = (T)(m + log(sum));
        }
    free(acc);
    return 0;
}

/* Returns 1 when out of memory for the head's sums, else 0. */
static int FN(attention_backward_naive)(const AttentionShape *g, const T *q, const i64 *q_base,
                                        i64 q_row, const T *k, const i64 *k_base, i64 k_row,
                                        const T *v, const i64 *v_base, i64 v_row, const T *out,
                                        const T *lse, const T *dout, const i64 *do_base,
                                        i64 do_row, T *dq, T *dk, T *dv) {
    i64 d = g->d, nv = g->dv;
    double *sums = calloc((size_t)(d + g->s * (d + nv)), sizeof(double));
    if (!sums) return 1;
    double *dqi = sums, *dks = sums + d, *dvs = dks + g->s * d;
    for (i64 b = 0; b < g->bh; b++) {
        memset(dks, 0, (size_t)(g->s * (d + nv)) * sizeof(double));
        for (i64 i = 0; i < g->t; i++) {
            const T *qi = q + q_base[b] + i * q_row, *doi = dout + do_base[b] + i * do_row;
            const T *oi = out + (b * g->t + i) * nv;
            double D = 0, l = (double)lse[b * g->t + i];
            for (i64 c = 0; c < nv; c++) D += (double)doi[c] * (double)oi[c];
            for (i64 p = 0; p < d; p++) dqi[p] = 0;
            for (i64 j = 0, n = att_visible(g, i); j < n; j++) {
                const T *kj = k + k_base[b] + j * k_row, *vj = v + v_base[b] + j * v_row;
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
            for (i64 p = 0; p < d; p++) dq[(b * g->t + i) * d + p] = (T)dqi[p];
        }
        for (i64 x = 0; x < g->s * d; x++) dk[b * g->s * d + x] = (T)dks[x];
        for (i64 x = 0; x < g->s * nv; x++) dv[b * g->s * nv + x] = (T)dvs[x];
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

/* s (rows, ATT_BK) = a (rows, cols) @ kt (cols, ATT_BK): the tile's scores (or dout . v).
 * Inlined into each SIMD copy of its callers, so compiled for their instruction sets. */
TG_INLINE void FN(att_tile)(i64 rows, i64 cols, const T *a, const T *kt, T *s) {
    for (i64 i = 0; i < rows; i++) {
        T *si = s + i * ATT_BK;
        for (int j = 0; j < ATT_BK; j++) si[j] = 0;
        for (i64 p = 0; p < cols; p++) {
            T a_ip = a[i * cols + p];
            const T *kp = kt + p * ATT_BK;
            for (int j = 0; j < ATT_BK; j++) si[j] += a_ip * kp[j];
        }
    }
}

/* One block of queries i0 .. i0 + rows - 1 of head b, over every key it sees. scratch:
 * ATT_BQ * (d + dv + ATT_BK + 2) + d * ATT_BK elements. */
TG_SIMD(void, FN(attention_block),
        (const AttentionShape *g, const T *q, i64 q_row, const T *k, i64 k_row, const T *v,
         i64 v_row, i64 i0, i64 rows, T *out, T *lse, T *scratch),
        (g, q, q_row, k, k_row, v, v_row, i0, rows, out, lse, scratch)) {
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
        FN(att_tile)(rows, d, qs, kt, st);
        for (i64 i = 0; i < rows; i++) {
            i64 seen = att_visible(g, i0 + i) - j0;     /* keys of this tile query i sees */
            seen = seen < n ? seen : n;
            if (seen <= 0) continue;
            T *si = st + i * ATT_BK, *ai = acc + i * nv;
            T top = m[i];
            for (i64 j = 0; j < seen; j++) top = si[j] > top ? si[j] : top;
            T alpha = FN(att_exp)(m[i] - top), sum = 0;   /* rescales what came before */
            for (i64 j = 0; j < seen; j++) {
                si[j] = FN(att_exp)(si[j] - top);
                sum += si[j];
            }
            l[i] = l[i] * alpha + sum;
            m[i] = top;
            for (i64 c = 0; c < nv; c++) ai[c] *= alpha;
            for (i64 j = 0; j < seen; j++) {
                T p = si[j];
                const T *vj = v + (j0 + j) * v_row;
                for (i64 c = 0; c < nv; c++) ai[c] += p * vj[c];
            }
        }
    }
    for (i64 i = 0; i < rows; i++) {
        T inv = 1 / l[i];
        for (i64 c = 0; c < nv; c++) out[(i0 + i) * nv + c] = acc[i * nv + c] * inv;
        lse[i0 + i] = (T)((double)m[i] + log((double)l[i]));
    }
}

static int FN(attention_blocked)(const AttentionShape *g, const T *q, const i64 *q_base, i64 q_row,
                                 const T *k, const i64 *k_base, i64 k_row, const T *v,
                                 const i64 *v_base, i64 v_row, T *out, T *lse) {
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
            FN(attention_block)(g, q + q_base[b], q_row, k + k_base[b], k_row, v + v_base[b], v_row,
                                i0, rows, out + b * g->t * g->dv, lse + b * g->t, buffer);
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
         i64 v_row, const T *out, const T *lse, const T *dout, i64 do_row, T *dq, T *dk, T *dv,
         T *scratch),
        (g, q, q_row, k, k_row, v, v_row, out, lse, dout, do_row, dq, dk, dv, scratch)) {
    i64 d = g->d, nv = g->dv;
    T *qs = scratch, *dos = qs + ATT_BQ * d, *dqs = dos + ATT_BQ * nv, *st = dqs + ATT_BQ * d;
    T *dp = st + ATT_BQ * ATT_BK, *dd = dp + ATT_BQ * ATT_BK, *ls = dd + ATT_BQ;
    T *kt = ls + ATT_BQ, *vt = kt + d * ATT_BK;
    T scale = (T)g->scale;
    memset(dk, 0, (size_t)(g->s * d) * sizeof(T));
    memset(dv, 0, (size_t)(g->s * nv) * sizeof(T));
    for (i64 i0 = 0; i0 < g->t; i0 += ATT_BQ) {
        i64 rows = g->t - i0 < ATT_BQ ? g->t - i0 : ATT_BQ;
        for (i64 i = 0; i < rows; i++) {
            const T *doi = dout + (i0 + i) * do_row, *oi = out + (i0 + i) * nv;
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
            FN(att_tile)(rows, d, qs, kt, st);       /* the scores, again */
            FN(att_tile)(rows, nv, dos, vt, dp);     /* dp_ij = dout_i . v_j */
            for (i64 i = 0; i < rows; i++) {
                i64 seen = att_visible(g, i0 + i) - j0;
                seen = seen < n ? seen : n;
                if (seen <= 0) continue;
                T *pi = st + i * ATT_BK, *dsi = dp + i * ATT_BK;
                for (i64 j = 0; j < seen; j++) {
                    pi[j] = FN(att_exp)(pi[j] - ls[i]);
                    dsi[j] = pi[j] * (dsi[j] - dd[i]);
                }
                const T *doi = dos + i * nv, *qi = qs + i * d;
                T *dqi = dqs + i * d;
                for (i64 j = 0; j < seen; j++) {
                    T p = pi[j], ds = dsi[j];
                    T *dvj = dv + (j0 + j) * nv, *dkj = dk + (j0 + j) * d;
                    const T *kj = k + (j0 + j) * k_row;
                    for (i64 c = 0; c < nv; c++) dvj[c] += p * doi[c];
                    for (i64 c = 0; c < d; c++) {
                        dkj[c] += ds * qi[c];              /* qs is scale * q already */
                        dqi[c] += ds * kj[c];
                    }
                }
            }
        }
        for (i64 i = 0; i < rows; i++)
            for (i64 p = 0; p < d; p++) dq[(i0 + i) * d + p] = dqs[i * d + p] * scale;
    }
}

static int FN(attention_backward_blocked)(const AttentionShape *g, const T *q, const i64 *q_base,
                                          i64 q_row, const T *k, const i64 *k_base, i64 k_row,
                                          const T *v, const i64 *v_base, i64 v_row, const T *out,
                                          const T *lse, const T *dout, const i64 *do_base,
                                          i64 do_row, T *dq, T *dk, T *dv) {
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
            FN(attention_backward_head)(g, q + q_base[b], q_row, k + k_base[b], k_row, v + v_base[b],
                                        v_row, out + b * g->t * g->dv, lse + b * g->t,
                                        dout + do_base[b], do_row, dq + b * g->t * g->d,
                                        dk + b * g->s * g->d, dv + b * g->s * g->dv, buffer);
        }
        free(buffer);
    }
    return failed;
}

/* ---- the dispatch: variant 0 naive, 1 blocked --------------------------------------------- */

int FN(tg_attention)(int variant, i64 bh, i64 t, i64 s, i64 d, i64 ev, const T *q,
                     const i64 *q_base, i64 q_row, const T *k, const i64 *k_base, i64 k_row,
                     const T *v, const i64 *v_base, i64 v_row, int causal, i64 offset,
                     double scale, T *out, T *lse) {
    AttentionShape g = {bh, t, s, d, ev, causal, offset, scale};
    if (variant == 0)
        return FN(attention_naive)(&g, q, q_base, q_row, k, k_base, k_row, v, v_base, v_row, out, lse);
    return FN(attention_blocked)(&g, q, q_base, q_row, k, k_base, k_row, v, v_base, v_row, out, lse);
}

int FN(tg_attention_backward)(int variant, i64 bh, i64 t, i64 s, i64 d, i64 ev, const T *q,
                              const i64 *q_base, i64 q_row, const T *k, const i64 *k_base,
                              i64 k_row, const T *v, const i64 *v_base, i64 v_row, const T *out,
                              const T *lse, const T *dout, const i64 *do_base, i64 do_row,
                              int causal, i64 offset, double scale, T *dq, T *dk, T *dv) {
    AttentionShape g = {bh, t, s, d, ev, causal, offset, scale};
    if (variant == 0)
        return FN(attention_backward_naive)(&g, q, q_base, q_row, k, k_base, k_row, v, v_base, v_row,
                                            out, lse, dout, do_base, do_row, dq, dk, dv);
    return FN(attention_backward_blocked)(&g, q, q_base, q_row, k, k_base, k_row, v, v_base, v_row,
                                          out, lse, dout, do_base, do_row, dq, dk, dv);
}
