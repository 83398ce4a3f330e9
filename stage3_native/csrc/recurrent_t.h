/* The recurrent cells for one element type T (recurrent.c includes this per type). Each
 * kernel is a loop over rows [lo, hi) compiled once per instruction set (TG_SIMD), whose
 * inner loop over a row's units gcc vectorizes (the activations are straight-line code,
 * and no test is left in it); threads each call it on their own rows (an OpenMP loop
 * inside a TG_SIMD function would be compiled apart from it, for the baseline instruction
 * set). */
#include "recurrent_math.h"   /* one unit's formulas, for this T; shared with cuda/recurrent.cu */

/* One row's units. Inlined twice, biased 1 and 0: each copy's bias tests are then known,
 * not made per unit. */
TG_INLINE void FN(lstm_row)(i64 hidden, const T *restrict x, const T *restrict h, const T *restrict cx,
                            const T *restrict ib, const T *restrict hb, T *restrict hy, T *restrict cy,
                            T *restrict w, int biased) {
    for (i64 j = 0; j < hidden; j++) {
        T p[4];
        for (int k = 0; k < 4; k++)
            p[k] = FN(tg_cell_biased)(x[k * hidden + j], ib, k * hidden + j, biased)
                   + FN(tg_cell_biased)(h[k * hidden + j], hb, k * hidden + j, biased);
        FN(tg_lstm_unit)(p[0], p[1], p[2], p[3], cx[j], &w[j], &w[hidden + j], &w[2 * hidden + j],
                         &w[3 * hidden + j], &cy[j], &hy[j]);
    }
}

TG_SIMD(void, FN(lstm_rows),
        (i64 lo, i64 hi, i64 hidden, const T *ig, const T *hg, const T *cx, const T *ib, const T *hb, T *hy,
         T *cy, T *ws),
        (lo, hi, hidden, ig, hg, cx, ib, hb, hy, cy, ws)) {
    for (i64 b = lo; b < hi; b++) {
        i64 g = b * 4 * hidden, u = b * hidden;
        if (ib)
            FN(lstm_row)(hidden, ig + g, hg + g, cx + u, ib, hb, hy + u, cy + u, ws + g, 1);
        else
            FN(lstm_row)(hidden, ig + g, hg + g, cx + u, NULL, NULL, hy + u, cy + u, ws + g, 0);
    }
}

/* gates (batch, 4 hidden), cx (batch, hidden) -> state: hy, then cy (batch, hidden each);
 * workspace (batch, 4 hidden). input_bias, hidden_bias: 4 hidden values each, or NULL. */
void FN(tg_lstm_cell)(i64 batch, i64 hidden, const T *input_gates, const T *hidden_gates, const T *cx,
                      const T *input_bias, const T *hidden_bias, T *state, T *workspace) {
    #pragma omp parallel if (batch * 4 * hidden >= TG_PARALLEL_MIN)
    {
        i64 lo, hi;
        tg_thread_range(batch, 1, &lo, &hi);
        if (lo < hi)
            FN(lstm_rows)(lo, hi, hidden, input_gates, hidden_gates, cx, input_bias, hidden_bias, state,
                          state + batch * hidden, workspace);
    }
}

/* The sum of each column of x (rows, width) over the rows, in double, column by column in
 * row order: a bias's gradient. */
static void FN(column_sums)(i64 rows, i64 width, const T *x, T *sums) {
    i64 blocks = (width + SUM_BLOCK - 1) / SUM_BLOCK;
    #pragma omp parallel for schedule(static) if (rows * width >= TG_PARALLEL_MIN)
    for (i64 c = 0; c < blocks; c++) {
        i64 lo = c * SUM_BLOCK, n = width - lo < SUM_BLOCK ? width - lo : SUM_BLOCK;
        double acc[SUM_BLOCK] = {0};
        for (i64 r = 0; r < rows; r++)
            for (i64 k = 0; k < n; k++) acc[k] += (double)x[r * width + lo + k];
        for (i64 k = 0; k < n; k++) sums[lo + k] = (T)acc[k];
    }
}

TG_SIMD(void, FN(lstm_backward_rows),
        (i64 lo, i64 hi, i64 hidden, const T *restrict grad_hy, const T *restrict grad_cy, const T *restrict cx,
         const T *restrict ws, T *restrict dgates, T *restrict dcx),
        (lo, hi, hidden, grad_hy, grad_cy, cx, ws, dgates, dcx)) {
    for (i64 b = lo; b < hi; b++) {
        const T *w = ws + b * 4 * hidden;
        T *d = dgates + b * 4 * hidden;
        for (i64 j = 0; j < hidden; j++) {
            i64 u = b * hidden + j;
            FN(tg_lstm_unit_backward)(grad_hy[u], grad_cy[u], cx[u], w[j], w[hidden + j], w[2 * hidden + j],
                                      w[3 * hidden + j], &d[j], &d[hidden + j], &d[2 * hidden + j],
                                      &d[3 * hidden + j], &dcx[u]);
        }
    }
}

/* grad (2, batch, hidden): hy's, then cy's; cx and workspace the forward's -> dgates (batch,
 * 4 hidden), dcx (batch, hidden) and, unless NULL, dbias (4 hidden). */
void FN(tg_lstm_cell_backward)(i64 batch, i64 hidden, const T *grad, const T *cx, const T *workspace,
                               T *dgates, T *dcx, T *dbias) {
    #pragma omp parallel if (batch * 4 * hidden >= TG_PARALLEL_MIN)
    {
        i64 lo, hi;
        tg_thread_range(batch, 1, &lo, &hi);
        if (lo < hi)
            FN(lstm_backward_rows)(lo, hi, hidden, grad, grad + batch * hidden, cx, workspace, dgates, dcx);
    }
    if (dbias) FN(column_sums)(batch, 4 * hidden, dgates, dbias);
}

/* One row's units, inlined twice as lstm_row */
TG_INLINE void FN(gru_row)(i64 hidden, const T *restrict x, const T *restrict h, const T *restrict hx,
                           const T *restrict ib, const T *restrict hb, T *restrict hy, T *restrict w,
                           int biased) {
    for (i64 j = 0; j < hidden; j++) {
        T p[2];
        for (int k = 0; k < 2; k++)
            p[k] = FN(tg_cell_biased)(x[k * hidden + j], ib, k * hidden + j, biased)
                   + FN(tg_cell_biased)(h[k * hidden + j], hb, k * hidden + j, biased);
        i64 at = 2 * hidden + j;
        T h_n = FN(tg_cell_biased)(h[at], hb, at, biased);
        FN(tg_gru_unit)(p[0], p[1], FN(tg_cell_biased)(x[at], ib, at, biased), h_n, hx[j], &w[j], &w[hidden + j],
                        &w[at], &hy[j]);
        w[3 * hidden + j] = hx[j];
        w[4 * hidden + j] = h_n;
    }
}

TG_SIMD(void, FN(gru_rows),
        (i64 lo, i64 hi, i64 hidden, const T *ig, const T *hg, const T *hx, const T *ib, const T *hb, T *hy,
         T *ws),
        (lo, hi, hidden, ig, hg, hx, ib, hb, hy, ws)) {
    for (i64 b = lo; b < hi; b++) {
        i64 g = b * 3 * hidden, u = b * hidden;
        if (ib)
            FN(gru_row)(hidden, ig + g, hg + g, hx + u, ib, hb, hy + u, ws + b * 5 * hidden, 1);
        else
            FN(gru_row)(hidden, ig + g, hg + g, hx + u, NULL, NULL, hy + u, ws + b * 5 * hidden, 0);
    }
}

/* gates (batch, 3 hidden), hx (batch, hidden) -> hy (batch, hidden), workspace (batch,
 * 5 hidden): r, z, n, hx, h_n. input_bias, hidden_bias: 3 hidden values each, or NULL. */
void FN(tg_gru_cell)(i64 batch, i64 hidden, const T *input_gates, const T *hidden_gates, const T *hx,
                     const T *input_bias, const T *hidden_bias, T *hy, T *workspace) {
    #pragma omp parallel if (batch * 3 * hidden >= TG_PARALLEL_MIN)
    {
        i64 lo, hi;
        tg_thread_range(batch, 1, &lo, &hi);
        if (lo < hi)
            FN(gru_rows)(lo, hi, hidden, input_gates, hidden_gates, hx, input_bias, hidden_bias, hy, workspace);
    }
}

TG_SIMD(void, FN(gru_backward_rows),
        (i64 lo, i64 hi, i64 hidden, const T *restrict grad, const T *restrict ws, T *restrict dx,
         T *restrict dh, T *restrict dhx),
        (lo, hi, hidden, grad, ws, dx, dh, dhx)) {
    for (i64 b = lo; b < hi; b++) {
        const T *w = ws + b * 5 * hidden;
        T *di = dx + b * 3 * hidden, *dj = dh + b * 3 * hidden;
        for (i64 j = 0; j < hidden; j++) {
            i64 u = b * hidden + j;
            T dr, dz, dn, dh_n;
            FN(tg_gru_unit_backward)(grad[u], w[j], w[hidden + j], w[2 * hidden + j], w[3 * hidden + j],
                                     w[4 * hidden + j], &dr, &dz, &dn, &dh_n, &dhx[u]);
            di[j] = dj[j] = dr;
            di[hidden + j] = dj[hidden + j] = dz;
            di[2 * hidden + j] = dn;
            dj[2 * hidden + j] = dh_n;
        }
    }
}

/* grad (batch, hidden), workspace the forward's -> the input's and the hidden's gates'
 * gradients (batch, 3 hidden each), dhx (batch, hidden) and, unless NULL, each bias's (3
 * hidden values). */
void FN(tg_gru_cell_backward)(i64 batch, i64 hidden, const T *grad, const T *workspace, T *dinput_gates,
                              T *dhidden_gates, T *dhx, T *dinput_bias, T *dhidden_bias) {
    #pragma omp parallel if (batch * 3 * hidden >= TG_PARALLEL_MIN)
    {
        i64 lo, hi;
        tg_thread_range(batch, 1, &lo, &hi);
        if (lo < hi) FN(gru_backward_rows)(lo, hi, hidden, grad, workspace, dinput_gates, dhidden_gates, dhx);
    }
    if (dinput_bias) {
        FN(column_sums)(batch, 3 * hidden, dinput_gates, dinput_bias);
        FN(column_sums)(batch, 3 * hidden, dhidden_gates, dhidden_bias);
    }
}
