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

/* An index is valid in -size..size-1; a negative one counts from the end. (One unsigned
 * comparison, wrapping defined: i + size lands in 0..2 size - 1 exactly when i is valid.) */
static inline int tg_index_ok(i64 i, i64 size) { return (uint64_t)i + (uint64_t)size < 2 * (uint64_t)size; }
static inline i64 tg_index_wrap(i64 i, i64 size) { return i < 0 ? i + size : i; }

i64 tg_index_check(const i64 *index, i64 n_index, i64 size, i64 *wrapped) {
    for (i64 r = 0; r < n_index; r++)
        if (!tg_index_ok(index[r], size)) return r;
    for (i64 r = 0; r < n_index; r++) wrapped[r] = tg_index_wrap(index[r], size);
    return -1;
}

/* The position of the first index outside -size..size-1, or -1: a branch-free pass, then a
 * search only when one is bad. */
static i64 first_bad_index(const i64 *index, i64 n_index, i64 size) {
    int bad = 0;
    for (i64 r = 0; r < n_index; r++) bad |= !tg_index_ok(index[r], size);
    if (!bad) return -1;
    for (i64 r = 0; r < n_index; r++)
        if (!tg_index_ok(index[r], size)) return r;
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

/* Output rows k in [lo, hi) of (outer, n_index) rows: row k = (o, r) is x's row index[r]
 * at outer position o, taken a run of r at a time within one o (no division per row).
 * Single elements (inner == 1: a gather, an embedding of width 1) are copied as their
 * type, each index checked as it is read (a bad one reads row 0 instead, and is reported:
 * one pass over the indices, not two); longer rows are memcpy'd, the indices checked
 * first. Returns whether an index was bad. */
#define SELECT_ELEMENTS(E) \
    for (const E *from = (const E *)x + o * size; j < end; j++) { \
        i64 i = index[j - row0]; \
        int ok = tg_index_ok(i, size); \
        bad |= !ok; \
        ((E *)out)[j] = from[ok ? tg_index_wrap(i, size) : 0]; \
    }

static int select_rows(i64 lo, i64 hi, i64 size, i64 inner, const char *x, int itemsize, const i64 *index,
                       i64 n_index, char *out) {
    size_t bytes = (size_t)inner * (size_t)itemsize;              /* per picked row */
    int bad = 0;
    for (i64 o = lo / n_index, row0 = o * n_index; lo < hi; o++, row0 += n_index) {
        i64 j = lo, end = row0 + n_index < hi ? row0 + n_index : hi;    /* rows row0 + r of this o */
        if (inner == 1) {
            switch (itemsize) {
            case 1: SELECT_ELEMENTS(uint8_t); break;
            case 2: SELECT_ELEMENTS(uint16_t); break;
            case 4: SELECT_ELEMENTS(uint32_t); break;
            default: SELECT_ELEMENTS(uint64_t); break;
            }
        } else {
            for (; j < end; j++)
                memcpy(out + j * bytes, x + (o * size + tg_index_wrap(index[j - row0], size)) * bytes, bytes);
        }
        lo = end;
    }
    return bad;
}

i64 tg_index_select_dense(i64 outer, i64 size, i64 inner, const char *x, int itemsize,
                          const i64 *index, i64 n_index, char *out) {
    i64 rows = outer * n_index;
    if (inner != 1 || size == 0 || rows == 0) {    /* whole rows, or no row 0 to read: checked first */
        i64 bad = first_bad_index(index, n_index, size);
        if (bad >= 0 || rows == 0 || inner == 0) return bad;
    }
    int bad = 0;
    #pragma omp parallel if (rows * inner >= TG_PARALLEL_MIN) reduction(|: bad)
    {
        i64 lo, hi;
        tg_thread_range(rows, inner == 1 ? 64 / itemsize : 1, &lo, &hi);
        if (lo < hi) bad |= select_rows(lo, hi, size, inner, x, itemsize, index, n_index, out);
    }
    return bad ? first_bad_index(index, n_index, size) : -1;
}

/* index_add shares long rows of its output among threads; rows of fewer elements go to
 * one thread (index_t.h) */
#define TG_ROW_MIN 16

#define TEMPLATE "index_t.h"
#include "instantiate.h"
