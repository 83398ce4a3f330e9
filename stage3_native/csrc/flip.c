/* Flip: a tensor's elements in reverse order along some of its dimensions, as PyTorch's
 * torch.flip (stage2_tensor/reorder.py; the declaration, kernels/indexing.py, says what the
 * arguments are).
 *
 * x is contiguous and so is out. Output element i (row-major over `shape`) reads x at
 * start + sum_d index_d * steps[d]: steps are x's strides, negated along the flipped
 * dimensions, and start is the position of x's last element along each of them, so the
 * walk runs backwards there and forwards elsewhere. Elements are only moved, never
 * computed, so one copy per element size serves every dtype.
 *
 * The row-major output is written a row (its last dimension) at a time: the position of a
 * row's first element takes one division per dimension, and the row itself is a strided
 * copy with step steps[ndim - 1] (1, or -1 when the last dimension is flipped). Rows are
 * split across threads above TG_PARALLEL_MIN elements. */
#include <string.h>

#include "parallel.h"
#include "tracegrad.h"

/* A row read backwards (step -1, the last dimension flipped) is its own loop: with the step
 * a constant the compiler reverses whole vectors; with it a variable, an element at a time. */
#define COPY_ROW(T) \
    if (step == -1) for (i64 j = 0; j < width; j++) ((T *)out)[row * width + j] = ((const T *)x)[at - j]; \
    else for (i64 j = 0; j < width; j++) ((T *)out)[row * width + j] = ((const T *)x)[at + j * step]

static void flip_rows(int ndim, const i64 *shape, const i64 *steps, i64 start, const void *x, void *out,
                      int itemsize) {
    i64 width = ndim ? shape[ndim - 1] : 1, step = ndim ? steps[ndim - 1] : 0, rows = 1;
    for (int d = 0; d < ndim - 1; d++) rows *= shape[d];
    if (width == 0 || rows == 0) return;
    #pragma omp parallel for schedule(static) if (rows * width >= TG_PARALLEL_MIN)
    for (i64 row = 0; row < rows; row++) {
        i64 at = start, rest = row;
        for (int d = ndim - 2; d >= 0; d--) {
            at += rest % shape[d] * steps[d];
            rest /= shape[d];
        }
        switch (itemsize) {
        case 1: COPY_ROW(uint8_t); break;
        case 4: COPY_ROW(uint32_t); break;
        default: COPY_ROW(uint64_t); break;
        }
    }
}

#define TG_FLIP(T, S) \
    void tg_flip_##S(int ndim, const i64 *shape, const i64 *steps, i64 start, const T *view, T *out) { \
        flip_rows(ndim, shape, steps, start, view, out, (int)sizeof(T)); \
    }
TG_FLIP(uint8_t, u8)
TG_FLIP(int32_t, i32)
TG_FLIP(int64_t, i64)
TG_FLIP(float, f32)
TG_FLIP(double, f64)
