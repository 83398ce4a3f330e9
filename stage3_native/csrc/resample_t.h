/* pad, interpolate and their backward passes for one float type T (included by resample.c). */

/* x (planes, *spatial) -> y (planes, *padded) with padded[d] = spatial[d] + before[d] +
 * after[d]; returns 1 when out of memory for the tables, else 0. */
int FN(tg_pad)(i64 planes, int n, const i64 *spatial, const i64 *before, const i64 *after, int mode,
               double value, const T *x, T *y) {
    i64 outer[TG_MAX_DIMS], P = 1, rows = 1;
    if (planes == 0) return 0;                 /* nothing to write: no table either */
    for (int d = 0; d < n; d++) {
        outer[d] = spatial[d] + before[d] + after[d];
        P *= spatial[d];
        if (d < n - 1) rows *= outer[d];
    }
    i64 width = spatial[n - 1], ow = outer[n - 1], left = before[n - 1];
    i64 *cols = malloc((size_t)(ow > 0 ? ow : 1) * sizeof(i64));
    if (!cols) return 1;
    for (i64 j = 0; j < ow; j++) cols[j] = pad_source(j - left, width, mode);
    T fill = (T)value;
    #pragma omp parallel for schedule(static) if (planes * rows * ow >= TG_PARALLEL_MIN)
    for (i64 plane = 0; plane < planes; plane++) {
        for (i64 row = 0; row < rows; row++) {
            T *dst = y + (plane * rows + row) * ow;
            i64 start = pad_row_start(n, spatial, before, outer, row, mode);
            if (start < 0) {                               /* a row of constant padding */
                for (i64 j = 0; j < ow; j++) dst[j] = fill;
                continue;
            }
            const T *src = x + plane * P + start;
            for (i64 j = 0; j < left; j++) dst[j] = cols[j] < 0 ? fill : src[cols[j]];
            if (width > 0) memcpy(dst + left, src, (size_t)width * sizeof(T));
            for (i64 j = left + width; j < ow; j++) dst[j] = cols[j] < 0 ? fill : src[cols[j]];
        }
    }
    free(cols);
    return 0;
}

/* grad (planes, *padded) -> dx (planes, *spatial): zeros, each gradient element added where
 * pad read it. Returns 1 when out of memory for the table, else 0. */
int FN(tg_pad_backward)(i64 planes, int n, const i64 *spatial, const i64 *before, const i64 *after, int mode,
                        const T *grad, T *dx) {
    i64 outer[TG_MAX_DIMS], P = 1, rows = 1;
    if (planes == 0) return 0;                 /* nothing to write: no table either */
    for (int d = 0; d < n; d++) {
        outer[d] = spatial[d] + before[d] + after[d];
        P *= spatial[d];
        if (d < n - 1) rows *= outer[d];
    }
    i64 width = spatial[n - 1], ow = outer[n - 1], left = before[n - 1];
    i64 *cols = malloc((size_t)(ow > 0 ? ow : 1) * sizeof(i64));
    if (!cols) return 1;
    for (i64 j = 0; j < ow; j++) cols[j] = pad_source(j - left, width, mode);
    #pragma omp parallel for schedule(static) if (planes * rows * ow >= TG_PARALLEL_MIN)
    for (i64 plane = 0; plane < planes; plane++) {
        T *d = dx + plane * P;
        memset(d, 0, (size_t)P * sizeof(T));
        for (i64 row = 0; row < rows; row++) {
            i64 start = pad_row_start(n, spatial, before, outer, row, mode);
            if (start < 0) continue;
            const T *g = grad + (plane * rows + row) * ow;
            for (i64 j = 0; j < ow; j++)
                if (cols[j] >= 0) d[start + cols[j]] += g[j];
        }
    }
    free(cols);
    return 0;
}

/* The per-row and per-column sources of an interpolation (one allocation); NULL when out
 * of memory. first/second/weight of the rows, then of the columns. */
static double *FN(interpolation_tables)(i64 h, i64 w, i64 oh, i64 ow, double step_h, double step_w, int linear,
                                        int align_corners, i64 **at) {
    i64 *positions = malloc((size_t)(2 * (oh + ow)) * sizeof(i64));
    double *weights = malloc((size_t)(oh + ow) * sizeof(double));
    if (!positions || !weights) {
        free(positions);
        free(weights);
        return NULL;
    }
    interpolation_sources(h, oh, step_h, linear, align_corners, positions, positions + oh, weights);
    interpolation_sources(w, ow, step_w, linear, align_corners, positions + 2 * oh, positions + 2 * oh + ow,
                          weights + oh);
    *at = positions;
    return weights;
}

/* x (batch, channels, h, w), contiguous -> y (batch, channels, oh, ow), each plane row-major
 * at y + image * y_image + channel * y_channel: a new buffer (y_channel = oh * ow, y_image
 * = channels * y_channel) or a slice of a larger one along its channels (a Concat's
 * buffer, written in place). Returns 1 when out of memory, else 0. */
int FN(tg_interpolate)(i64 batch, i64 channels, i64 h, i64 w, i64 oh, i64 ow, double step_h, double step_w,
                       int linear, int align_corners, const T *x, T *y, i64 y_image, i64 y_channel) {
    i64 *at, planes = batch * channels;
    if (planes == 0) return 0;
    double *weights = FN(interpolation_tables)(h, w, oh, ow, step_h, step_w, linear, align_corners, &at);
    if (!weights) return 1;
    const i64 *y0 = at, *y1 = at + oh, *x0 = at + 2 * oh, *x1 = at + 2 * oh + ow;
    const double *wy = weights, *wx = weights + oh;
    #pragma omp parallel for schedule(static) if (planes * oh * ow >= TG_PARALLEL_MIN)
    for (i64 plane = 0; plane < planes; plane++) {
        const T *src = x + plane * h * w;
        for (i64 i = 0; i < oh; i++) {
            T *dst = y + (plane / channels) * y_image + (plane % channels) * y_channel + i * ow;
            const T *r0 = src + y0[i] * w, *r1 = src + y1[i] * w;
            if (!linear) {                          /* one read: no 0 * inf from a second */
                for (i64 j = 0; j < ow; j++) dst[j] = r0[x0[j]];
                continue;
            }
            T b = (T)wy[i], a = (T)(1.0 - wy[i]);
            for (i64 j = 0; j < ow; j++) {
                T r = (T)wx[j], l = (T)(1.0 - wx[j]);
                dst[j] = a * (l * r0[x0[j]] + r * r0[x1[j]]) + b * (l * r1[x0[j]] + r * r1[x1[j]]);
            }
        }
    }
    free(at);
    free(weights);
    return 0;
}

/* grad (planes, oh, ow) -> dx (planes, h, w): zeros, each output's gradient added at the
 * positions it mixed, times their weights. Returns 1 when out of memory, else 0. */
int FN(tg_interpolate_backward)(i64 planes, i64 h, i64 w, i64 oh, i64 ow, double step_h, double step_w,
                                int linear, int align_corners, const T *grad, T *dx) {
    i64 *at;
    if (planes == 0) return 0;
    double *weights = FN(interpolation_tables)(h, w, oh, ow, step_h, step_w, linear, align_corners, &at);
    if (!weights) return 1;
    const i64 *y0 = at, *y1 = at + oh, *x0 = at + 2 * oh, *x1 = at + 2 * oh + ow;
    const double *wy = weights, *wx = weights + oh;
    #pragma omp parallel for schedule(static) if (planes * oh * ow >= TG_PARALLEL_MIN)
    for (i64 plane = 0; plane < planes; plane++) {
        T *d = dx + plane * h * w;
        memset(d, 0, (size_t)(h * w) * sizeof(T));
        for (i64 i = 0; i < oh; i++) {
            const T *g = grad + (plane * oh + i) * ow;
            T *r0 = d + y0[i] * w, *r1 = d + y1[i] * w;
            if (!linear) {
                for (i64 j = 0; j < ow; j++) r0[x0[j]] += g[j];
                continue;
            }
            T b = (T)wy[i], a = (T)(1.0 - wy[i]);
            for (i64 j = 0; j < ow; j++) {
                T r = (T)wx[j], l = (T)(1.0 - wx[j]);
                r0[x0[j]] += a * l * g[j];
                r0[x1[j]] += a * r * g[j];
                r1[x0[j]] += b * l * g[j];
                r1[x1[j]] += b * r * g[j];
            }
        }
    }
    free(at);
    free(weights);
    return 0;
}
