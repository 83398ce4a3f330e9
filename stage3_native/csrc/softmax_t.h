/* Softmax kernels for one element type T (included by softmax.c for float and double). */

/* The row max m and log(sum_j e^(x_j - m)) of `size` elements `step` apart. */
static void FN(row_stats)(const T *x, i64 size, i64 step, double *max, double *log_sum) {
    double m = size > 0 ? (double)x[0] : 0.0, sum = 0.0;
    for (i64 i = 1; i < size; i++)
        if ((double)x[i * step] > m) m = (double)x[i * step];
    for (i64 i = 0; i < size; i++) sum += exp((double)x[i * step] - m);
    *max = m;
    *log_sum = log(sum);
}

/* softmax (log-softmax when log_softmax) of `size` elements `step` apart, into dst */
static void FN(strided_row)(const T *row, i64 size, i64 step, int log_softmax, T *dst) {
    double m, log_sum;
    FN(row_stats)(row, size, step, &m, &log_sum);
    for (i64 i = 0; i < size; i++) {
        double shifted = (double)row[i * step] - m - log_sum;           /* log-softmax */
        dst[i * step] = (T)(log_softmax ? shifted : exp(shifted));
    }
}

/* x viewed as (outer, size, inner), the softmax dimension in the middle: each of the
 * outer * inner rows is `size` elements `inner` apart. log != 0: log-softmax. */
void FN(tg_softmax)(i64 outer, i64 size, i64 inner, const T *x, int log_softmax, T *out) {
    if (inner == 1) {                     /* the last dimension: contiguous rows (softmax.c) */
        #pragma omp parallel for schedule(static) if (outer * size >= TG_PARALLEL_MIN)
        for (i64 o = 0; o < outer; o++)
            FN(softmax_row)(size, x + o * size, log_softmax, out + o * size);
        return;
    }
    for (i64 o = 0; o < outer; o++)
        for (i64 k = 0; k < inner; k++)
            FN(strided_row)(x + o * size * inner + k, size, inner, log_softmax, out + o * size * inner + k);
}

/* The gradient of one row, `size` elements `step` apart, from the upstream g and the
 * output y: dx = y * (g - sum_j g_j y_j) for softmax, g - e^y * sum_j g_j for log-softmax
 * (e^y is the softmax), in double. */
static void FN(strided_backward_row)(const T *g, const T *y, i64 size, i64 step, int log_softmax,
                                     T *dx) {
    double sum = 0;
    for (i64 i = 0; i < size; i++)
        sum += log_softmax ? (double)g[i * step] : (double)g[i * step] * (double)y[i * step];
    for (i64 i = 0; i < size; i++) {
        double gi = (double)g[i * step], yi = (double)y[i * step];
        dx[i * step] = (T)(log_softmax ? gi - exp(yi) * sum : yi * (gi - sum));
    }
}

/* grad and y viewed as (outer, size, inner), as tg_softmax's x: each row's gradient. */
void FN(tg_softmax_backward)(i64 outer, i64 size, i64 inner, const T *grad, const T *y,
                             int log_softmax, T *out) {
    if (inner == 1) {                     /* the last dimension: contiguous rows (softmax.c) */
        #pragma omp parallel for schedule(static) if (outer * size >= TG_PARALLEL_MIN)
        for (i64 o = 0; o < outer; o++)
            FN(softmax_backward_row)(size, grad + o * size, y + o * size, log_softmax, out + o * size);
        return;
    }
    for (i64 o = 0; o < outer; o++)
        for (i64 k = 0; k < inner; k++) {
            i64 start = o * size * inner + k;
            FN(strided_backward_row)(grad + start, y + start, size, inner, log_softmax, out + start);
        }
}

/* One row of cross-entropy in double: the probabilities into probs and the loss at target
 * (none: -1, a loss of 0); softmax.c's float rows have a vectorized version. */
static inline double FN(cross_entropy_row_double)(i64 size, const T *x, i64 target, T *probs) {
    double m, log_sum;
    FN(row_stats)(x, size, 1, &m, &log_sum);
    for (i64 j = 0; j < size; j++) probs[j] = (T)exp((double)x[j] - m - log_sum);
    return target < 0 ? 0.0 : log_sum - ((double)x[target] - m);
}

/* logits (n, c), targets n class indices: loss_i = -log softmax(logits_i)[targets[i]],
 * and probs, the softmax of every row (what the backward pass needs: probs - onehot). A row
 * whose target is ignore_index (when ignoring) has loss 0. reduction 0 writes the n losses,
 * 1 their sum, 2 their mean over the rows kept (none: nan, 0/0), into losses, and then the
 * count kept into *kept (the backward's divisor). Returns the position of the first target
 * that is neither a class index nor ignored (nothing computed), else -1. */
i64 FN(tg_cross_entropy)(i64 n, i64 c, const T *logits, const i64 *targets, int reduction,
                         int ignoring, i64 ignore_index, T *losses, T *probs, T *kept) {
    for (i64 i = 0; i < n; i++)
        if ((targets[i] < 0 || targets[i] >= c) && !(ignoring && targets[i] == ignore_index)) return i;
    double total = 0;
    i64 count = 0;
    for (i64 i = 0; i < n; i++) {
        int skip = ignoring && targets[i] == ignore_index;
        double loss = FN(cross_entropy_row)(c, logits + i * c, skip ? -1 : targets[i], probs + i * c);
        if (reduction == 0) losses[i] = (T)loss;
        total += (double)(T)loss;            /* the rounded losses, as summing them would */
        count += !skip;
    }
    if (reduction != 0) losses[0] = (T)(reduction == 2 ? total / (double)count : total);
    if (reduction == 2) *kept = (T)count;
    return -1;
}

/* The gradient of cross-entropy with respect to the logits: (probs - onehot(targets)) *
 * scale[i * scale_step] / *kept for row i (the upstream gradient: one value per row, or
 * one for all with scale_step 0; kept NULL: no division, for "none" and "sum"), 0 for a
 * row whose target is ignore_index (when ignoring). */
void FN(tg_cross_entropy_backward)(i64 n, i64 c, const T *probs, const i64 *targets,
                                   const T *scale, i64 scale_step, const T *kept, int ignoring,
                                   i64 ignore_index, T *out) {
    double factor = kept ? 1.0 / (double)*kept : 1.0;
    for (i64 i = 0; i < n; i++) {
        if (ignoring && targets[i] == ignore_index) {
            for (i64 j = 0; j < c; j++) out[i * c + j] = 0;
            continue;
        }
        double s = (double)scale[i * scale_step] * factor;
        for (i64 j = 0; j < c; j++)
            out[i * c + j] = (T)(((double)probs[i * c + j] - (j == targets[i])) * s);
    }
}
