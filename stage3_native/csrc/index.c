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

#define TEMPLATE "index_t.h"
#include "instantiate.h"
