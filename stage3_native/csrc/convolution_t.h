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

/* The convolution in bands, for inference (no columns kept for a backward pass): one
 * parallel region in which each thread takes a band of `band_rows` output rows (rows over
 * all but the last spatial dimension, windows.h) of one image and group at a time, im2cols
 * it into its own buffer (cg * K x band positions: sized by the caller to stay in cache),
 * multiplies the group's kernels into it with TinyBLAS on this one thread, and stores the
 * product into y with the bias added and, when `relu`, ReLU applied (NaN stays NaN, as
 * elementwise_math.h's relu) while the band is still in cache. The whole convolution is one call and wakes the other threads once; the
 * column matrix never exists whole (a 3x3 convolution of 48 channels at 256x256: 113 MB).
 *
 * x (batch, c_in, *spatial) and weight (c_out, c_in / groups, *kernel) contiguous, bias
 * c_out values or NULL; y[b, co, l] = y[b * y_image + co * y_channel + l] (l the flat
 * output position): a contiguous output, or a slice of a larger buffer along its channels
 * (an ONNX Concat written in place). Bands never share an output element, and each
 * element's sum runs over k in the same order whatever the band or thread: the result
 * does not depend on the thread count. conv_direct is the definition. Returns 1 when out
 * of memory (for the row table or a thread's buffers), else 0. */
int FN(tg_conv_bands)(i64 batch, i64 c_in, i64 c_out, i64 groups, int n, const i64 *spatial,
                      const i64 *kernel, const i64 *stride, const i64 *before, const i64 *dilation,
                      const i64 *out, const T *x, const T *weight, const T *bias, int relu,
                      i64 band_rows, T *y, i64 y_image, i64 y_channel) {
    tg_windows w = tg_windows_of(n, spatial, kernel, stride, before, dilation, out);
    i64 width = spatial[n - 1], count = out[n - 1], s = stride[n - 1];
    i64 cg = c_in / groups, per_group = c_out / groups, depth = cg * w.K;
    if (w.L == 0 || c_out == 0 || batch == 0) return 0;
    i64 *starts = tg_row_starts(&w);
    if (!starts) return 1;
    if (band_rows < 1) band_rows = 1;
    if (band_rows > w.rows) band_rows = w.rows;
    int threads = tg_thread_count(), failed = 0;
    if (batch * groups * ((w.rows + band_rows - 1) / band_rows) < threads) {
        /* fewer bands than threads: thinner ones, so that each thread has one */
        i64 per_image = (threads + batch * groups - 1) / (batch * groups);
        band_rows = (w.rows + per_image - 1) / per_image;
    }
    i64 bands = (w.rows + band_rows - 1) / band_rows, items = batch * groups * bands;
    i64 width_max = band_rows * count;           /* positions in the largest band */
    if (threads > items) threads = (int)items;
    #pragma omp parallel num_threads(threads) if (threads > 1)
    {
#ifdef _OPENMP
        omp_set_num_threads(1);                  /* TinyBLAS below: this thread alone */
#endif
        T *cols = tg_alloc(sizeof(T) * (size_t)(depth * width_max > 0 ? depth * width_max : 1));
        T *prod = tg_alloc(sizeof(T) * (size_t)(per_group * width_max > 0 ? per_group * width_max : 1));
        i64 zero = 0;
        if (!cols || !prod) {
            #pragma omp atomic write
            failed = 1;
        }
        #pragma omp for schedule(dynamic, 1)
        for (i64 item = 0; item < items; item++) {
            if (!cols || !prod) continue;
            i64 band = item % bands, bg = item / bands, b = bg / groups, g = bg % groups;
            i64 r0 = band * band_rows, r1 = r0 + band_rows < w.rows ? r0 + band_rows : w.rows;
            i64 m = (r1 - r0) * count;           /* this band's output positions */
            /* im2col of the band: row (ci, k) of cols holds what positions r0*count.. read */
            for (i64 ci = 0; ci < cg; ci++) {
                const T *src = x + (b * c_in + g * cg + ci) * w.P;
                for (i64 k = 0; k < w.K; k++) {
                    i64 shift = tg_last_shift(&w, k), lo, hi;
                    tg_inside(width, s, shift, count, &lo, &hi);
                    const i64 *start = starts + k * w.rows;
                    T *dst = cols + (ci * w.K + k) * m;
                    for (i64 row = r0; row < r1; row++, dst += count) {
                        if (start[row] < 0) {
                            for (i64 j = 0; j < count; j++) dst[j] = 0;
                            continue;
                        }
                        const T *line = src + start[row] + shift;
                        for (i64 j = 0; j < lo; j++) dst[j] = 0;
                        if (s == 1)
                            memcpy(dst + lo, line + lo, (size_t)(hi - lo) * sizeof(T));
                        else
                            for (i64 j = lo; j < hi; j++) dst[j] = line[j * s];
                        for (i64 j = hi; j < count; j++) dst[j] = 0;
                    }
                }
            }
            /* the group's kernels (per_group x depth) times the band's columns (depth x m) */
            FN(tg_gemm)(1, &zero, &zero, per_group, m, depth, weight + g * per_group * depth, depth, 1,
                        cols, m, 1, NULL, prod);
            /* the store: bias and activation on the product while it is in cache */
            for (i64 co = 0; co < per_group; co++) {
                i64 c = g * per_group + co;
                T *dst = y + b * y_image + c * y_channel + r0 * count;
                const T *src = prod + co * m;
                if (bias) {
                    T add = bias[c];
                    if (relu) for (i64 j = 0; j < m; j++) { T v = src[j] + add; dst[j] = v > 0 || v != v ? v : 0; }
                    else for (i64 j = 0; j < m; j++) dst[j] = src[j] + add;
                } else if (relu) {
                    for (i64 j = 0; j < m; j++) dst[j] = src[j] > 0 || src[j] != src[j] ? src[j] : 0;
                } else {
                    memcpy(dst, src, (size_t)m * sizeof(T));
                }
            }
        }
        if (cols) tg_free(cols);
        if (prod) tg_free(prod);
    }
    free(starts);
    return failed;
}
