/* cat: views side by side along one dimension, in one call however many there are
 * (stage2_tensor/concat.py's cat and stack; the declaration, kernels/storage.py, says what
 * the arguments are). Elements are only moved, so one copy per element size serves every
 * dtype.
 *
 * The output, of `shape`, is seen as (outer, row): outer the elements before dimension dim,
 * row the elements from there on. Each piece p is seen the same way, (outer, width_p) with
 * width_p = sizes[p] * inner (inner: the elements after dim), and the output's row o holds
 * piece 0's row o, then piece 1's, and so on. So the output is a sequence of segments, each
 * one piece's row: a memcpy where the piece is contiguous, else a strided walk (the thesis's
 * index increment, strided.h), so a transposed or sliced piece is read in place, not copied
 * first. Threads (on a large output) split its elements evenly (at 64-byte lines, so no
 * two write one line), whatever the pieces' sizes: one large piece is shared as well as
 * many small ones; each finds the segment its share starts in, then copies segment after
 * segment. */
#include <string.h>
#include "parallel.h"
#include "strided.h"

typedef struct {
    int ndim, dim, itemsize;
    const i64 *shape;                   /* the output's */
    i64 count, inner, row;
    void *const *buffers;
    const i64 *offsets, *sizes, *strides;     /* offsets NULL: all 0; strides: ndim per piece */
    int shared;                                /* one set of strides for every piece */
    char *out;
} cat_args;

#define WALK(E) \
    for (i64 k = 0; k < n; k++) { \
        ((E *)dst)[k] = ((const E *)base)[pos]; \
        tg_step(a->ndim, shape, idx, &pos, strides, NULL, NULL, NULL, NULL); \
    }

/* Elements k0 .. k0 + n - 1 (row-major) of piece p into dst */
static void copy_segment(const cat_args *a, i64 p, i64 k0, i64 n, char *dst) {
    i64 shape[TG_MAX_DIMS], idx[TG_MAX_DIMS], pos = 0;
    i64 *strides = (i64 *)a->strides + (a->shared ? 0 : p * a->ndim);
    for (int d = 0; d < a->ndim; d++) shape[d] = a->shape[d];
    shape[a->dim] = a->sizes[p];
    const char *base = (const char *)a->buffers[p] + (a->offsets ? a->offsets[p] * a->itemsize : 0);
    if (tg_is_contiguous(a->ndim, shape, strides)) {
        memcpy(dst, base + k0 * a->itemsize, (size_t)(n * a->itemsize));
        return;
    }
    tg_unravel(a->ndim, shape, k0, idx, 1, &strides, &pos);
    switch (a->itemsize) {
    case 1: WALK(uint8_t); break;
    case 2: WALK(uint16_t); break;
    case 4: WALK(uint32_t); break;
    default: WALK(uint64_t); break;
    }
}

/* The output's elements [lo, hi): row o's segments, from the one holding element lo */
static void copy_range(const cat_args *a, i64 lo, i64 hi) {
    i64 o = lo / a->row, p = 0, start = 0;                  /* start: piece p's first element in a row */
    while (start + a->sizes[p] * a->inner <= lo - o * a->row) start += a->sizes[p++] * a->inner;
    while (lo < hi) {
        i64 width = a->sizes[p] * a->inner, end = o * a->row + start + width;
        if (end > hi) end = hi;
        if (end > lo) copy_segment(a, p, o * width + lo - o * a->row - start, end - lo, a->out + lo * a->itemsize);
        lo = end;
        start += width;
        if (++p == a->count) {
            p = start = 0;
            o++;
        }
    }
}

void tg_cat(int ndim, const i64 *shape, int dim, i64 count, void *const *buffers, const i64 *offsets,
            const i64 *sizes, const i64 *strides, int shared_strides, int itemsize, void *out) {
    cat_args a = {ndim, dim, itemsize, shape, count, tg_numel(ndim - dim - 1, shape + dim + 1), 0,
                  buffers, offsets, sizes, strides, shared_strides, out};
    a.row = shape[dim] * a.inner;
    i64 n = tg_numel(ndim, shape);
    if (n == 0) return;
    /* a copy is bound by memory, not arithmetic: another thread pays for its wake-up only
     * on a megabyte or so, more than TG_PARALLEL_MIN elements */
    #pragma omp parallel if (n * itemsize >= 16 * TG_PARALLEL_MIN)
    {
        i64 lo, hi;
        tg_thread_range(n, 64 / itemsize, &lo, &hi);
        if (lo < hi) copy_range(&a, lo, hi);
    }
}
