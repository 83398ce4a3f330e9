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
#endif
