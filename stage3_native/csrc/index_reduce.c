/* index_reduce: rows of src reduced into a copy of base along one dimension, by product,
 * mean, maximum or minimum (stage2_tensor/index_reduce.py; the declaration,
 * kernels/indexing.py, says what the arguments are). scatter_reduce is this kernel over
 * flat positions.
 *
 * Both are contiguous and seen as (outer, size, inner), src as (outer, n_index, inner).
 * A first pass over the indices checks each (nothing is written when one is bad), counts
 * the src rows landing in each row of `size` (a mean divides by it) and notes the first of
 * them: without include_self, that one replaces the row instead of combining with it, so no
 * identity (a type's smallest value for amax) is needed. Then src's rows are combined in
 * index order, so every run gives the same bits; threads take whole outer positions, or,
 * when there are few of them and rows are long, each its own range of rows of the output,
 * reading every index and combining only the rows in its range (index.c's index_add does
 * the same). */
#include "nan.h"
#include "parallel.h"
#include "tracegrad.h"

/* The reduce codes, in the order of kernels/indexing.py's REDUCTIONS */
enum { TG_PROD, TG_MEAN, TG_AMAX, TG_AMIN };

/* Rows shorter than this go to one thread when there are fewer outer positions than threads */
#define TG_ROW_MIN 16

static inline int tg_row_ok(i64 i, i64 size) { return (uint64_t)i + (uint64_t)size < 2 * (uint64_t)size; }
static inline i64 tg_row_wrap(i64 i, i64 size) { return i < 0 ? i + size : i; }

i64 tg_index_reduce_rows(const i64 *index, i64 n_index, i64 size, i64 *counts, i64 *first) {
    for (i64 r = 0; r < n_index; r++)
        if (!tg_row_ok(index[r], size)) return r;
    if (!counts) return -1;
    for (i64 i = 0; i < size; i++) {
        counts[i] = 0;
        first[i] = -1;
    }
    for (i64 r = 0; r < n_index; r++) {
        i64 i = tg_row_wrap(index[r], size);
        if (first[i] < 0) first[i] = r;
        counts[i]++;
    }
    return -1;
}

#define TEMPLATE "index_reduce_t.h"
#include "instantiate.h"
