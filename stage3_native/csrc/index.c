/* Gather and scatter-add along one dimension: index_select copies the rows of `dim` listed
 * in `index`; index_add (its gradient) adds row r of src into row index[r] of a zeroed
 * output, so an index that repeats accumulates. Positions are computed from the multi-index
 * (offset + sum of index * stride) because the gathered dimension jumps.
 *
 * The index arrives as it is stored in an int64 tensor, not as a Python list: converting a
 * (32, 128) batch of token ids to 4096 Python ints and back to a C array costs more than the
 * gather itself. The kernels check each index against the dimension's size (-size..size-1,
 * negative ones counting from the end, as in Python) and return the position of the first
 * bad one, so the error names it without a Python loop over the indices.
 *
 * The _dense versions are the common case, an embedding table or a gradient: a contiguous
 * tensor viewed as (outer, size, inner), where a picked "row" is `inner` consecutive
 * elements, one memcpy or one vectorizable loop instead of a multi-index per element.
 *
 * tg_index and tg_index_put (index_t.h) are advanced indexing over several dimensions at
 * once (x[i, j], x[mask], x[i, j] = v): indices (k, n) holds one row of n indices per
 * leading dimension of a strided view, and index position j names the view's sub-tensor
 * at (indices[0][j], ..., indices[k-1][j]), of the view's other (trailing) dimensions.
 * tg_index copies each into out (n, trailing...), tg_index_put writes (or adds) values into
 * it. Both check every index first, so a bad one leaves the destination as it was.
 */
#include <string.h>
#include "parallel.h"
#include "strided.h"

void tg_index_select(int ndim, const i64 *shape, const i64 *strides, i64 offset, int dim,
                     const i64 *index, i64 n_index, const char *x, int itemsize, char *out) {
    i64 out_shape[TG_MAX_DIMS], idx[TG_MAX_DIMS] = {0};
    for (int d = 0; d < ndim; d++) out_shape[d] = d == dim ? n_index : shape[d];
    i64 n = tg_numel(ndim, out_shape);
    for (i64 i = 0; i < n; i++) {
        i64 p = offset;
        for (int d = 0; d < ndim; d++) p += (d == dim ? index[idx[d]] : idx[d]) * strides[d];
        memcpy(out + i * itemsize, x + p * itemsize, itemsize);
        for (int d = ndim - 1; d >= 0 && ++idx[d] == out_shape[d]; d--) idx[d] = 0;
    }
}

/* An index is valid in -size..size-1; a negative one counts from the end. */
static inline int tg_index_ok(i64 i, i64 size) { return i >= -size && i < size; }
static inline i64 tg_index_wrap(i64 i, i64 size) { return i < 0 ? i + size : i; }

i64 tg_index_check(const i64 *index, i64 n_index, i64 size, i64 *wrapped) {
    for (i64 r = 0; r < n_index; r++)
        if (!tg_index_ok(index[r], size)) return r;
    for (i64 r = 0; r < n_index; r++) wrapped[r] = tg_index_wrap(index[r], size);
    return -1;
}

i64 tg_index_select_dense(i64 outer, i64 size, i64 inner, const char *x, int itemsize,
                          const i64 *index, i64 n_index, char *out) {
    for (i64 r = 0; r < n_index; r++)
        if (!tg_index_ok(index[r], size)) return r;
    size_t row = (size_t)inner * (size_t)itemsize;                /* bytes per picked row */
    #pragma omp parallel for schedule(static) if (outer * n_index * inner >= TG_PARALLEL_MIN)
    for (i64 k = 0; k < outer * n_index; k++) {                   /* output row k = (o, r) */
        i64 o = k / n_index, r = k % n_index;
        memcpy(out + k * row, x + (o * size + tg_index_wrap(index[r], size)) * row, row);
    }
    return -1;
}

/* The position (d * n + j) of the first index out of range of indices (k, n) over a view's
 * leading dimensions of `shape`, in that order, or -1. */
i64 tg_index_bad(int k, const i64 *shape, const i64 *indices, i64 n) {
    for (int d = 0; d < k; d++)
        for (i64 j = 0; j < n; j++)
            if (!tg_index_ok(indices[d * n + j], shape[d])) return d * n + j;
    return -1;
}

/* Where index position j's sub-tensor starts: offset plus each leading index, wrapped,
 * times its stride (the indices checked). */
static inline i64 tg_index_start(int k, const i64 *shape, const i64 *strides, i64 offset,
                                 const i64 *indices, i64 n, i64 j) {
    i64 p = offset;
    for (int d = 0; d < k; d++) p += tg_index_wrap(indices[d * n + j], shape[d]) * strides[d];
    return p;
}

/* One element of `itemsize` bytes, by its type where the size has one (a memcpy of a size
 * unknown at compile time is a call per element). */
static inline void tg_move(char *dst, const char *src, int itemsize) {
    switch (itemsize) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, (size_t)itemsize);
    }
}

i64 tg_index(int ndim, const i64 *shape, const i64 *strides, i64 offset, const char *x, int itemsize,
             int k, const i64 *indices, i64 n, char *out) {
    i64 bad = tg_index_bad(k, shape, indices, n);
    if (bad >= 0) return bad;
    int rest = ndim - k;
    const i64 *rest_shape = shape + k, *rest_strides = strides + k;
    i64 inner = tg_numel(rest, rest_shape);
    size_t row = (size_t)inner * (size_t)itemsize;              /* bytes per sub-tensor */
    int dense = tg_is_contiguous(rest, rest_shape, rest_strides);
    #pragma omp parallel for schedule(static) if (n * inner >= TG_PARALLEL_MIN)
    for (i64 j = 0; j < n; j++) {
        i64 p = tg_index_start(k, shape, strides, offset, indices, n, j);
        char *o = out + (size_t)j * row;
        if (inner == 1) {
            tg_move(o, x + p * itemsize, itemsize);
        } else if (dense) {
            memcpy(o, x + p * itemsize, row);
        } else {                                                 /* through the strides */
            i64 idx[TG_MAX_DIMS] = {0};
            for (i64 e = 0; e < inner; e++) {
                tg_move(o + e * itemsize, x + p * itemsize, itemsize);
                tg_step(rest, rest_shape, idx, &p, rest_strides, NULL, NULL, NULL, NULL);
            }
        }
    }
    return -1;
}

#define TEMPLATE "index_t.h"
#include "instantiate.h"
