/* max_pool and its backward pass for one float type T (included by pooling.c per dtype). */

void FN(tg_max_pool)(i64 planes, int n, const i64 *spatial, const i64 *kernel, const i64 *stride,
                     const i64 *before, const i64 *dilation, const i64 *out, const T *x, T *y,
                     i64 *where) {
    tg_windows w = tg_windows_of(n, spatial, kernel, stride, before, dilation, out);
    i64 width = spatial[n - 1], count = out[n - 1], s = stride[n - 1];
    #pragma omp parallel for schedule(static) if (planes * w.K * w.L >= TG_PARALLEL_MIN)
    for (i64 plane = 0; plane < planes; plane++) {
        const T *src = x + plane * w.P;
        T *best = y + plane * w.L;
        i64 *at = where + plane * w.L;
        for (i64 l = 0; l < w.L; l++) {
            best[l] = -INFINITY;
            at[l] = -1;
        }
        /* kernel position by kernel position, each output row at once: the inner loop
         * runs along a row of the input, as im2col's does */
        for (i64 k = 0; k < w.K; k++) {
            i64 shift = tg_last_shift(&w, k), lo, hi;
            tg_inside(width, s, shift, count, &lo, &hi);
            for (i64 row = 0; row < w.rows; row++) {
                i64 start = tg_row_start(&w, k, row);
                if (start < 0) continue;
                T *b = best + row * count;
                i64 *a = at + row * count;
                for (i64 j = lo; j < hi; j++) {
                    i64 p = start + shift + j * s;
                    T v = src[p];
                    if (v > b[j] || a[j] < 0 || (isnan(v) && !isnan(b[j]))) {
                        b[j] = v;
                        a[j] = p;
                    }
                }
            }
        }
    }
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
