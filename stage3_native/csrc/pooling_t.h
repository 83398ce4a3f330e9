/* max_pool and its backward pass for one float type T (included by pooling.c per dtype). */

/* The U-net's pool, 2x2 windows at stride 2 with no padding or dilation, each output
 * reading two input rows: the general loop below without its tables, bounds tests and
 * per-window loop. The same four reads in the same order (row-major in the window), so
 * the same choice among equal values and NaNs. */
static void FN(max_pool_2x2)(i64 batch, i64 channels, const i64 *spatial, const i64 *out, const T *x, T *y,
                             i64 *where, i64 y_image, i64 y_channel) {
    i64 planes = batch * channels, h = spatial[0], w = spatial[1], oh = out[0], ow = out[1];
    #pragma omp parallel for schedule(static) if (planes * oh * ow * 4 >= TG_PARALLEL_MIN)
    for (i64 plane = 0; plane < planes; plane++) {
        const T *src = x + plane * h * w;
        T *dst = y + (plane / channels) * y_image + (plane % channels) * y_channel;
        for (i64 i = 0; i < oh; i++) {
            const T *r0 = src + 2 * i * w, *r1 = r0 + w;
            for (i64 j = 0; j < ow; j++) {
                T v[4] = {r0[2 * j], r0[2 * j + 1], r1[2 * j], r1[2 * j + 1]};
                int at = 0;
                for (int k = 1; k < 4; k++)        /* a larger value, or a NaN over a number */
                    if (v[k] > v[at] || (v[k] != v[k] && v[at] == v[at])) at = k;
                dst[i * ow + j] = v[at];
                if (where) where[(plane * oh + i) * ow + j] = (2 * i + (at >> 1)) * w + 2 * j + (at & 1);
            }
        }
    }
}

/* x (batch, channels, *spatial), contiguous -> the maxima, each (batch, channels) plane
 * row-major at y + image * y_image + channel * y_channel (a new buffer, or a slice of a
 * Concat's buffer along its channels), and their positions into where (contiguous
 * (batch, channels, *out); NULL at inference: not written). 1 when out of memory, else 0. */
int FN(tg_max_pool)(i64 batch, i64 channels, int n, const i64 *spatial, const i64 *kernel, const i64 *stride,
                    const i64 *before, const i64 *dilation, const i64 *out, const T *x, T *y,
                    i64 *where, i64 y_image, i64 y_channel) {
    i64 planes = batch * channels;
    if (planes == 0) return 0;
    if (n == 2 && kernel[0] == 2 && kernel[1] == 2 && stride[0] == 2 && stride[1] == 2 && before[0] == 0
        && before[1] == 0 && dilation[0] == 1 && dilation[1] == 1 && 2 * out[0] <= spatial[0]
        && 2 * out[1] <= spatial[1]) {                  /* specialized: the 2x2 pool above */
        FN(max_pool_2x2)(batch, channels, spatial, out, x, y, where, y_image, y_channel);
        return 0;
    }
    tg_windows w = tg_windows_of(n, spatial, kernel, stride, before, dilation, out);
    i64 width = spatial[n - 1], count = out[n - 1], s = stride[n - 1];
    i64 *starts = tg_row_starts(&w);
    i64 *edges = malloc((size_t)(3 * w.K) * sizeof(i64));      /* per k: shift, lo, hi */
    if (!starts || !edges) {
        free(starts);
        free(edges);
        return 1;
    }
    for (i64 k = 0; k < w.K; k++) {
        edges[3 * k] = tg_last_shift(&w, k);
        tg_inside(width, s, edges[3 * k], count, &edges[3 * k + 1], &edges[3 * k + 2]);
    }
    /* each output on its own: its window's positions in turn, the maximum kept in a
     * register (the kernel is small: a 2x2 pool reads 4) */
    #pragma omp parallel for schedule(static) if (planes * w.K * w.L >= TG_PARALLEL_MIN)
    for (i64 plane = 0; plane < planes; plane++) {
        const T *src = x + plane * w.P;
        T *dst = y + (plane / channels) * y_image + (plane % channels) * y_channel;
        for (i64 row = 0; row < w.rows; row++) {
            for (i64 j = 0; j < count; j++) {
                T best = -INFINITY;
                i64 at = -1;
                for (i64 k = 0; k < w.K; k++) {
                    i64 start = starts[k * w.rows + row];
                    if (start < 0 || j < edges[3 * k + 1] || j >= edges[3 * k + 2]) continue;
                    i64 p = start + edges[3 * k] + j * s;
                    T v = src[p];
                    /* the first value read wins over -inf, a larger one over it, and a
                     * NaN over a number (so NaN propagates) */
                    if (v > best || at < 0 || (v != v && best == best)) {
                        best = v;
                        at = p;
                    }
                }
                dst[row * count + j] = best;
                if (where) where[(plane * w.rows + row) * count + j] = at;
            }
        }
    }
    free(starts);
    free(edges);
    return 0;
}

/* dx (planes, P) zeroed, then grad[plane, l] added at where[plane, l] (-1: nowhere).
 * Returns the flat position in `where` of the first entry outside -1..P-1, having
 * written nothing past dx's planes, or -1. */
i64 FN(tg_max_pool_backward)(i64 planes, i64 P, i64 L, const T *grad, const i64 *where, T *dx) {
    for (i64 i = 0; i < planes * L; i++)
        if (where[i] < -1 || where[i] >= P) return i;
    #pragma omp parallel for schedule(static) if (planes * (P + L) >= TG_PARALLEL_MIN)
    for (i64 plane = 0; plane < planes; plane++) {
        T *dst = dx + plane * P;
        memset(dst, 0, (size_t)P * sizeof(T));
        for (i64 l = 0; l < L; l++) {
            i64 p = where[plane * L + l];
            if (p >= 0) dst[p] += grad[plane * L + l];
        }
    }
    return -1;
}
