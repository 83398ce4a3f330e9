/* Padding and interpolation (chapter on convolutional networks, "padding and upsampling"):
 * each output position reads input positions worked out arithmetically, the formulas of
 * stage2_tensor/sampling_grid.py repeated here in double, operation for operation, so
 * that every device reads the same positions.
 *
 * pad          the last n dimensions of x (planes, *spatial) grown by before and after:
 *              constant (a fill value), reflect (mirrored around the edge element),
 *              replicate (the edge element repeated) or circular (wrapped around). The
 *              output is walked one row (last dimension) at a time: the row it reads is
 *              worked out once from its first coordinates, its middle part is a memcpy,
 *              and only the edges read through a table of the last dimension's positions.
 * pad_backward its adjoint: each gradient element added at the position it was read from.
 * interpolate  each plane (H, W) resampled to (H_out, W_out), nearest (one read) or
 *              bilinear: the two rows y0, y1 and columns x0, x1 around each output
 *              position, mixed by their weights; the per-row and per-column positions
 *              and weights are worked out once per call.
 * interpolate_backward its adjoint: each output's gradient added at the positions it
 *              mixed, times the weights.
 *
 * The naive versions beside these are stage2_tensor/resampling.py's gathers (an index
 * table per dimension, an index_select per dimension, a weighted sum per dimension: a
 * whole intermediate tensor each) that every device runs. Threads split the planes: no
 * two write the same element, and each element adds its contributions in the same order
 * whatever the thread count (the backward passes are deterministic).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "parallel.h"
#include "tracegrad.h"

#ifndef TG_RESAMPLE_H
#define TG_RESAMPLE_H
enum { PAD_CONSTANT, PAD_REFLECT, PAD_REPLICATE, PAD_CIRCULAR };   /* contracts.PAD_CODES */

/* sampling_grid.pad_source: the input position padded position i (counted from the
 * input's first) reads along a dimension of `size`, or -1 for the fill */
static inline i64 pad_source(i64 i, i64 size, int mode) {
    if (i >= 0 && i < size) return i;
    switch (mode) {
    case PAD_REFLECT: return i < 0 ? -i : 2 * (size - 1) - i;
    case PAD_REPLICATE: return i < 0 ? 0 : size - 1;
    case PAD_CIRCULAR: return ((i % size) + size) % size;
    default: return -1;
    }
}

/* The flat offset in an input plane of the row that output row `row` reads (its first
 * n - 1 coordinates mapped one by one), or -1 when one of them is in constant padding */
static inline i64 pad_row_start(int n, const i64 *spatial, const i64 *before, const i64 *outer, i64 row,
                                int mode) {
    i64 offset = 0, step = spatial[n - 1];
    for (int d = n - 2; d >= 0; d--) {
        i64 p = pad_source(row % outer[d] - before[d], spatial[d], mode);
        row /= outer[d];
        if (p < 0) return -1;
        offset += p * step;
        step *= spatial[d];
    }
    return offset;
}

/* sampling_grid.interpolation_source for j = 0..out-1: first and second neighbours and the
 * second's weight, three arrays of `out` */
static void interpolation_sources(i64 size, i64 out, double step, int linear, int align_corners, i64 *first,
                                  i64 *second, double *weight) {
    for (i64 j = 0; j < out; j++) {
        if (!linear) {
            i64 i = (i64)floor((double)j * step);
            first[j] = second[j] = i < size - 1 ? i : size - 1;
            weight[j] = 0.0;
            continue;
        }
        double c = align_corners ? (double)j * step : ((double)j + 0.5) * step - 0.5;
        if (c < 0.0) c = 0.0;
        i64 i = (i64)c < size - 1 ? (i64)c : size - 1;
        first[j] = i;
        second[j] = i + 1 < size - 1 ? i + 1 : size - 1;
        weight[j] = c - (double)i;
    }
}
#endif

#define TEMPLATE "resample_t.h"
#include "instantiate_float.h"
