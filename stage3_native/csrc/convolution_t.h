/* im2col, col2im and the direct convolution for one float type T (included by
 * convolution.c per dtype; see there and windows.h). */

int FN(tg_im2col)(i64 planes, int n, const i64 *spatial, const i64 *kernel, const i64 *stride,
                  const i64 *before, const i64 *dilation, const i64 *out, const T *x, double fill,
                  T *cols) {
    tg_windows w = tg_windows_of(n, spatial, kernel, stride, before, dilation, out);
    i64 width = spatial[n - 1], count = out[n - 1], s = stride[n - 1];
    i64 *starts = tg_row_starts(&w);
    if (!starts) return 1;
    T pad = (T)fill;
    /* one (plane, kernel position) pair per iteration: L consecutive outputs */
    #pragma omp parallel for schedule(static) if (planes * w.K * w.L >= TG_PARALLEL_MIN)
    for (i64 pk = 0; pk < planes * w.K; pk++) {
        i64 plane = pk / w.K, k = pk % w.K, shift = tg_last_shift(&w, k), lo, hi;
        tg_inside(width, s, shift, count, &lo, &hi);
        const T *src = x + plane * w.P;
        const i64 *start = starts + k * w.rows;
        T *dst = cols + pk * w.L;
        for (i64 row = 0; row < w.rows; row++, dst += count) {
            if (start[row] < 0) {                         /* the whole row in the padding */
                for (i64 j = 0; j < count; j++) dst[j] = pad;
                continue;
            }
            const T *line = src + start[row] + shift;     /* line[j * s]: position j */
            for (i64 j = 0; j < lo; j++) dst[j] = pad;
            if (s == 1)
                memcpy(dst + lo, line + lo, (size_t)(hi - lo) * sizeof(T));
            else
                for (i64 j = lo; j < hi; j++) dst[j] = line[j * s];
            for (i64 j = hi; j < count; j++) dst[j] = pad;
        }
    }
    free(starts);
    return 0;
}

int FN(tg_col2im)(i64 planes, int n, const i64 *spatial, const i64 *kernel, const i64 *stride,
                  const i64 *before, const i64 *dilation, const i64 *out, const T *cols, T *x) {
    tg_windows w = tg_windows_of(n, spatial, kernel, stride, before, dilation, out);
    i64 width = spatial[n - 1], count = out[n - 1], s = stride[n - 1];
    i64 *starts = tg_row_starts(&w);
    if (!starts) return 1;
    #pragma omp parallel for schedule(static) if (planes * w.K * w.L >= TG_PARALLEL_MIN)
    for (i64 plane = 0; plane < planes; plane++) {
        T *dst = x + plane * w.P;
        memset(dst, 0, (size_t)w.P * sizeof(T));
        for (i64 k = 0; k < w.K; k++) {
            i64 shift = tg_last_shift(&w, k), lo, hi;
            tg_inside(width, s, shift, count, &lo, &hi);
            const i64 *start = starts + k * w.rows;
            const T *src = cols + (plane * w.K + k) * w.L;
            for (i64 row = 0; row < w.rows; row++, src += count) {
                if (start[row] < 0) continue;             /* read the fill: no gradient */
                T *line = dst + start[row] + shift;
                if (s == 1)                               /* contiguous: vectorized */
                    for (i64 j = lo; j < hi; j++) line[j] += src[j];
                else
                    for (i64 j = lo; j < hi; j++) line[j * s] += src[j];
            }
        }
    }
    free(starts);
    return 0;
}

/* out[b, co, o] = bias[co] + sum over ci of group g(co), kernel position k of
 * weight[co, ci, k] * x[b, g * cg + ci, o * stride - before + k * dilation] (0 in the
 * padding). x (batch, c_in, *spatial), weight (c_out, c_in / groups, *kernel), bias c_out
 * values or NULL, out (batch, c_out, *out): all contiguous. */
void FN(tg_conv_direct)(i64 batch, i64 c_in, i64 c_out, i64 groups, int n, const i64 *spatial,
                        const i64 *kernel, const i64 *stride, const i64 *before, const i64 *dilation,
                        const i64 *out, const T *x, const T *weight, const T *bias, T *y) {
    tg_windows w = tg_windows_of(n, spatial, kernel, stride, before, dilation, out);
    i64 cg = c_in / groups, per_group = c_out / groups;
    #pragma omp parallel for schedule(static)
    for (i64 bc = 0; bc < batch * c_out; bc++) {                     /* image, output channel */
        i64 b = bc / c_out, co = bc % c_out, g = co / per_group;
        for (i64 l = 0; l < w.L; l++) {                                /* output position */
            double acc = bias ? (double)bias[co] : 0;
            for (i64 ci = 0; ci < cg; ci++) {                         /* input channel */
                const T *plane = x + (b * c_in + g * cg + ci) * w.P;
                const T *kern = weight + (co * cg + ci) * w.K;
                for (i64 k = 0; k < w.K; k++) {                       /* kernel position */
                    i64 flat = 0, rest_l = l, rest_k = k, inside = 1, step = 1;
                    for (int d = n - 1; d >= 0; d--) {                /* its input position */
                        i64 p = (rest_l % out[d]) * stride[d] - before[d] + (rest_k % kernel[d]) * dilation[d];
                        rest_l /= out[d];
                        rest_k /= kernel[d];
                        inside &= p >= 0 && p < spatial[d];
                        flat += p * step;
                        step *= spatial[d];
                    }
                    if (inside) acc += (double)kern[k] * (double)plane[flat];
                }
            }
            y[bc * w.L + l] = (T)acc;
        }
    }
}
