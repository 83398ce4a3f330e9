/* The windows of a convolution or a pooling over n spatial dimensions (chapter on
 * convolutional networks, "im2col"), shared by convolution.c and pooling.c.
 *
 * Output position o (a multi-index over `out`) and kernel position k (over `kernel`) read
 * the input at p[d] = o[d] * stride[d] - before[d] + k[d] * dilation[d] in each dimension;
 * a p outside 0..spatial[d]-1 lies in the padding. The kernels walk the output one row (the
 * last dimension) at a time: along a row only the last coordinate changes, so which of its
 * positions fall inside the input is an interval, worked out once per row (tg_inside), and
 * the copy between its ends is a plain loop (a memcpy when the stride is 1).
 *
 * stage2_tensor/contracts.py checks the geometry before any call: every extent and step
 * positive (padding non-negative), n from 1 to TG_MAX_DIMS, and every position and size
 * computed here within int64 (so no product below overflows).
 */
#ifndef TG_WINDOWS_H
#define TG_WINDOWS_H
#include <stdlib.h>
#include "tracegrad.h"

typedef struct {
    int n;                                             /* spatial dimensions */
    const i64 *spatial, *kernel, *stride, *before, *dilation, *out;
    i64 P, K, L;                                       /* input plane, kernel, output sizes */
    i64 rows;                                          /* output rows: L / out[n - 1] */
} tg_windows;

static inline tg_windows tg_windows_of(int n, const i64 *spatial, const i64 *kernel, const i64 *stride,
                                       const i64 *before, const i64 *dilation, const i64 *out) {
    tg_windows w = {n, spatial, kernel, stride, before, dilation, out, 1, 1, 1, 1};
    for (int d = 0; d < n; d++) {
        w.P *= spatial[d];
        w.K *= kernel[d];
        w.L *= out[d];
    }
    w.rows = out[n - 1] ? w.L / out[n - 1] : 0;
    return w;
}

/* Where the row `row` of the output reads the input at kernel position k (flat indices):
 * the input offset of its first dimensions, or -1 when one of them falls in the padding
 * (the whole row then reads the fill value). The last dimension is left to tg_inside. */
static inline i64 tg_row_start(const tg_windows *w, i64 k, i64 row) {
    i64 offset = 0, inside = 1, step = 1;
    /* multi-indices from the flat ones, last dimension fastest; the last is skipped */
    k /= w->kernel[w->n - 1];
    for (int d = w->n - 2; d >= 0; d--) {
        i64 kd = k % w->kernel[d], od = row % w->out[d];
        k /= w->kernel[d];
        row /= w->out[d];
        i64 p = od * w->stride[d] - w->before[d] + kd * w->dilation[d];
        inside &= p >= 0 && p < w->spatial[d];
        step *= w->spatial[d + 1];
        offset += p * step;
    }
    return inside ? offset : -1;
}

/* tg_row_start for every kernel position and row, k-major (K * rows values): worked out
 * once per call, so the loops over the planes do no division. NULL when out of memory. */
static inline i64 *tg_row_starts(const tg_windows *w) {
    i64 *starts = malloc((size_t)(w->K * w->rows > 0 ? w->K * w->rows : 1) * sizeof(i64));
    if (starts)
        for (i64 k = 0; k < w->K; k++)
            for (i64 row = 0; row < w->rows; row++) starts[k * w->rows + row] = tg_row_start(w, k, row);
    return starts;
}

/* Along the last dimension, position x of a row reads input column x * s + shift (shift =
 * k * dilation - before): the [lo, hi) of x for which that lies in 0..width-1. */
static inline void tg_inside(i64 width, i64 s, i64 shift, i64 count, i64 *lo, i64 *hi) {
    *lo = shift >= 0 ? 0 : (-shift + s - 1) / s;
    *hi = width - 1 - shift < 0 ? 0 : (width - 1 - shift) / s + 1;
    if (*hi > count) *hi = count;
    if (*lo > *hi) *lo = *hi;
}

/* The shift of kernel position k along the last dimension. */
static inline i64 tg_last_shift(const tg_windows *w, i64 k) {
    int d = w->n - 1;
    return (k % w->kernel[d]) * w->dilation[d] - w->before[d];
}
#endif
