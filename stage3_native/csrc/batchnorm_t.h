/* batch_norm and its backward pass for one float type T (included by batchnorm.c per dtype).
 * The sums run in double, the element-wise passes in T (as layernorm_t.h's). */

/* x (batch, channels, size) -> out (same), mean and var (channels; var biased). */
void FN(tg_batch_norm)(i64 batch, i64 channels, i64 size, const T *x, const T *weight, const T *bias,
                       double eps, T *out, T *mean, T *var) {
    double count = (double)(batch * size);
    #pragma omp parallel for schedule(static) if (batch * channels * size >= TG_PARALLEL_MIN)
    for (i64 c = 0; c < channels; c++) {
        double sum = 0, squares = 0;
        for (i64 b = 0; b < batch; b++) {
            const T *run = x + (b * channels + c) * size;
            #pragma omp simd reduction(+:sum)
            for (i64 i = 0; i < size; i++) sum += (double)run[i];
        }
        double m = sum / count;
        for (i64 b = 0; b < batch; b++) {
            const T *run = x + (b * channels + c) * size;
            #pragma omp simd reduction(+:squares)
            for (i64 i = 0; i < size; i++) squares += ((double)run[i] - m) * ((double)run[i] - m);
        }
        double v = squares / count, s = 1.0 / sqrt(v + eps);
        double scale = (weight ? (double)weight[c] : 1.0) * s;
        T st = (T)scale, sh = (T)((bias ? (double)bias[c] : 0.0) - m * scale);
        mean[c] = (T)m;
        var[c] = (T)v;
        for (i64 b = 0; b < batch; b++) {
            const T *run = x + (b * channels + c) * size;
            T *y = out + (b * channels + c) * size;
            for (i64 i = 0; i < size; i++) y[i] = run[i] * st + sh;
        }
    }
}

/* grad, x (batch, channels, size); mean, var (channels) from the forward pass -> dx (same
 * shape as x), dweight and dbias (channels each, always written). */
void FN(tg_batch_norm_backward)(i64 batch, i64 channels, i64 size, const T *grad, const T *x, const T *mean,
                                const T *var, const T *weight, double eps, T *dx, T *dweight, T *dbias) {
    double count = (double)(batch * size);
    #pragma omp parallel for schedule(static) if (batch * channels * size >= TG_PARALLEL_MIN)
    for (i64 c = 0; c < channels; c++) {
        double m = (double)mean[c], s = 1.0 / sqrt((double)var[c] + eps), sum_g = 0, sum_gx = 0;
        for (i64 b = 0; b < batch; b++) {
            const T *g = grad + (b * channels + c) * size, *run = x + (b * channels + c) * size;
            #pragma omp simd reduction(+:sum_g, sum_gx)
            for (i64 i = 0; i < size; i++) {
                sum_g += (double)g[i];
                sum_gx += (double)g[i] * ((double)run[i] - m);
            }
        }
        sum_gx *= s;                                           /* sum g * xhat */
        dweight[c] = (T)sum_gx;
        dbias[c] = (T)sum_g;
        /* dx = k * (g - a - (x - mean) * b): k = weight * rstd, a = mean(g),
         * b = rstd * mean(g * xhat), all per channel */
        double k = (weight ? (double)weight[c] : 1.0) * s;
        T kt = (T)k, at = (T)(sum_g / count), bt = (T)(s * sum_gx / count), mt = (T)m;
        for (i64 b = 0; b < batch; b++) {
            const T *g = grad + (b * channels + c) * size, *run = x + (b * channels + c) * size;
            T *d = dx + (b * channels + c) * size;
            for (i64 i = 0; i < size; i++) d[i] = kt * (g[i] - at - (run[i] - mt) * bt);
        }
    }
}
