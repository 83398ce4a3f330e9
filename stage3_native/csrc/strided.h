/* The thesis's index increment: walk a strided view in row-major order without computing
 * offset + sum(index[d] * stride[d]) for every element. The last index steps fastest; each
 * step adds that dimension's stride to the flat position; when an index wraps to 0 the
 * position steps back by stride * (size - 1) and the next dimension steps instead.
 */
#ifndef TG_STRIDED_H
#define TG_STRIDED_H
#include "tracegrad.h"

static inline i64 tg_numel(int ndim, const i64 *shape) {
    i64 n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

/* Advance idx by one element and move up to three flat positions (p0, p1, p2) with it. */
static inline void tg_step(int ndim, const i64 *shape, i64 *idx,
                           i64 *p0, const i64 *s0, i64 *p1, const i64 *s1, i64 *p2, const i64 *s2) {
    for (int d = ndim - 1; d >= 0; d--) {
        if (++idx[d] < shape[d]) {
            *p0 += s0[d];
            if (p1) *p1 += s1[d];
            if (p2) *p2 += s2[d];
            return;
        }
        idx[d] = 0;
        *p0 -= s0[d] * (shape[d] - 1);
        if (p1) *p1 -= s1[d] * (shape[d] - 1);
        if (p2) *p2 -= s2[d] * (shape[d] - 1);
    }
}

static inline int tg_is_contiguous(int ndim, const i64 *shape, const i64 *strides) {
    i64 expected = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] != 1 && strides[d] != expected) return 0;
        expected *= shape[d];
    }
    return 1;
}

/* Merge neighbouring dimensions that every operand steps through as one (the outer stride
 * is the inner one times the inner size) and drop size-1 dimensions, rewriting shape and
 * each operand's strides in place; returns the new number of dimensions. Row-major order
 * is unchanged, so a flat index means the same element before and after. A contiguous
 * tensor becomes one dimension; x (N, M) with a broadcast row b (1, M) stays two, as no
 * single stride walks b; a (N, M) column broadcast against (N, M) too. Fewer dimensions:
 * fewer, longer inner loops, and the kernels' fast paths recognize more layouts. */
static inline int tg_collapse(int ndim, i64 *shape, int n_ops, i64 *const *strides) {
    int kept = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) continue;
        int merge = kept > 0;
        for (int k = 0; k < n_ops && merge; k++)
            merge = strides[k][kept - 1] == strides[k][d] * shape[d];
        if (merge) {
            shape[kept - 1] *= shape[d];
            for (int k = 0; k < n_ops; k++) strides[k][kept - 1] = strides[k][d];
        } else {
            shape[kept] = shape[d];
            for (int k = 0; k < n_ops; k++) strides[k][kept] = strides[k][d];
            kept++;
        }
    }
    return kept;
}

/* The multi-index of row-major flat index i, and the positions it gives up to three
 * operands (pos[k] += idx . strides[k]): where a thread starts its share of a strided walk. */
static inline void tg_unravel(int ndim, const i64 *shape, i64 i, i64 *idx,
                              int n_ops, i64 *const *strides, i64 *pos) {
    for (int d = ndim - 1; d >= 0; d--) {
        idx[d] = i % shape[d];
        i /= shape[d];
        for (int k = 0; k < n_ops; k++) pos[k] += idx[d] * strides[k][d];
    }
}
#endif
