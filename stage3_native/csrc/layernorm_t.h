/* Layer-norm kernels for one element type T (included by layernorm.c for float and double).
 * The loops over a row are plain loops over j that gcc -O3 vectorizes; the row sums carry
 * `omp simd reduction`, which allows it to add them in vector lanes (a fixed order, so still
 * deterministic) where C's rules alone would force one addition after another. The sums
 * are in double; the element-wise passes that use them (layernorm_math.h's formulas) are in
 * T, as PyTorch's are: for float an SSE instruction then does 4 elements instead of 2, and
 * the result is rounded to float anyway. */
#include "layernorm_math.h"   /* one element's formulas, for this T; shared with cuda/layernorm.cu */

/* x (rows, n) -> out (rows, n), mean (rows), rstd (rows). weight, bias: n values or NULL. */
void FN(tg_layer_norm)(i64 rows, i64 n, const T *x, const T *weight, const T *bias,
                       double eps, T *out, T *mean, T *rstd) {
    #pragma omp parallel for schedule(static) if (rows * n >= TG_PARALLEL_MIN)
    for (i64 r = 0; r < rows; r++) {
        const T *xr = x + r * n;
        T *y = out + r * n;
        double sum = 0, squares = 0;
        #pragma omp simd reduction(+:sum)
        for (i64 j = 0; j < n; j++) sum += (double)xr[j];
        double m = sum / (double)n;
        /* the variance from the centred values: sum x^2 / n - m^2 would cancel badly */
        #pragma omp simd reduction(+:squares)
        for (i64 j = 0; j < n; j++) squares += ((double)xr[j] - m) * ((double)xr[j] - m);
        double s = 1.0 / sqrt(squares / (double)n + eps);
        mean[r] = (T)m;
        rstd[r] = (T)s;
        T mt = (T)m, st = (T)s;
        for (i64 j = 0; j < n; j++) y[j] = FN(tg_layer_norm_out)(xr[j], mt, st, weight, bias, j);
    }
}

/* dx for one row (g, x, dx: n values each); with pw, pb: also adds g * xhat and g into
 * the chunk's partial sums of dweight and dbias. */
static void FN(layer_norm_backward_row)(i64 n, const T *g, const T *x, double m, double s,
                                        const T *weight, T *dx, double *pw, double *pb) {
    double sum_gw = 0, sum_gw_xhat = 0;
    if (weight) {
        #pragma omp simd reduction(+:sum_gw, sum_gw_xhat)
        for (i64 j = 0; j < n; j++) {
            double gw = (double)g[j] * (double)weight[j];
            sum_gw += gw;
            sum_gw_xhat += gw * (((double)x[j] - m) * s);
        }
    } else {
        #pragma omp simd reduction(+:sum_gw, sum_gw_xhat)
        for (i64 j = 0; j < n; j++) {
            sum_gw += (double)g[j];
            sum_gw_xhat += (double)g[j] * (((double)x[j] - m) * s);
        }
    }
    T a = (T)(sum_gw / (double)n), b = (T)(sum_gw_xhat / (double)n), mt = (T)m, st = (T)s;
    for (i64 j = 0; j < n; j++) dx[j] = FN(tg_layer_norm_dx)(g[j], x[j], mt, st, weight, j, a, b);
    if (pw)
        for (i64 j = 0; j < n; j++) {
            pw[j] += (double)g[j] * (((double)x[j] - m) * s);
            pb[j] += (double)g[j];
        }
}

/* grad, x (rows, n); mean, rstd (rows) from the forward pass -> dx (rows, n) and, when
 * dweight is not NULL, dweight and dbias (n each). Returns 0, or 1 when the memory for the
 * partial sums could not be had (nothing is computed then). */
int FN(tg_layer_norm_backward)(i64 rows, i64 n, const T *grad, const T *x, const T *mean,
                               const T *rstd, const T *weight, T *dx, T *dweight, T *dbias) {
    i64 chunks = (rows + LN_CHUNK - 1) / LN_CHUNK;
    double *partial = NULL;                  /* chunk c: n sums for dweight, then n for dbias */
    if (dweight && chunks * n > 0) {
        partial = calloc((size_t)(chunks * 2 * n), sizeof(double));
        if (!partial) return 1;
    }
    #pragma omp parallel for schedule(static) if (rows * n >= TG_PARALLEL_MIN)
    for (i64 c = 0; c < chunks; c++) {
        double *pw = partial ? partial + c * 2 * n : NULL, *pb = partial ? pw + n : NULL;
        i64 end = (c + 1) * LN_CHUNK < rows ? (c + 1) * LN_CHUNK : rows;
        for (i64 r = c * LN_CHUNK; r < end; r++)
            FN(layer_norm_backward_row)(n, grad + r * n, x + r * n, (double)mean[r],
                                        (double)rstd[r], weight, dx + r * n, pw, pb);
    }
    if (dweight) {
        for (i64 j = 0; j < n; j++) {        /* the chunks' partial sums, in chunk order */
            double w = 0, b = 0;
            for (i64 c = 0; c < chunks; c++) {
                w += partial[c * 2 * n + j];
                b += partial[c * 2 * n + n + j];
            }
            dweight[j] = (T)w;
            dbias[j] = (T)b;
        }
    }
    free(partial);
    return 0;
}
