/* Reductions over any set of dimensions. The caller splits the view into the kept
 * ("outer") dimensions, one output each, and the reduced ("inner") ones. Op codes
 * (ops_generated.h, from stage2_tensor/ops.py): SUM, MAX, MIN for tg_reduce (computed in
 * W: int64 for integer tensors, double for floating-point ones; stored as the output's
 * dtype); ARGMAX, ARGMIN for tg_argreduce (the row-major index within the reduced
 * dimensions; the first one on ties, and the first NaN, as numpy; max and min propagate
 * NaN, as numpy's do).
 *
 * Like the element-wise kernels, a reduction takes the fastest path its layout allows,
 * after merging adjacent dimensions (tg_collapse) among the kept and among the reduced:
 *
 *   rows     the reduced elements of each output are contiguous (x.sum(-1), x.sum()):
 *            each output reduces a contiguous row with several independent accumulators,
 *            so the compiler vectorizes it and the additions overlap in the pipeline (one
 *            accumulator would wait for each addition before starting the next). Threads
 *            take whole rows; a few long rows (a full sum) are split among them instead.
 *   columns  the last kept dimension is contiguous and the reduced ones are not
 *            (x.sum(0) of a row-major matrix): walking each output's elements would jump
 *            a whole row per element, so instead whole rows of the input are added into a
 *            row of accumulators, vectorized along the kept dimension, reading memory in
 *            order. Threads take tiles of TG_TILE columns, and split the reduced rows
 *            when there are fewer tiles than threads.
 *   strided  anything else: the index increment walks each output's elements.
 *
 * float32 sums add blocks of elements in float lanes (8 per AVX2 register) and the block
 * sums in double: nearly the speed of float, and the rounding error of a 16M-element sum
 * stays that of a few thousand additions.
 */
#include <math.h>
#include <stdlib.h>
#include "nan.h"
#include "parallel.h"
#include "simd.h"
#include "ops_generated.h"                  /* SUM, MAX, MIN, ARGMAX, ARGMIN */
#include "strided.h"

#define TG_LANES 32         /* independent running extremes of a row reduction (with 16
                               float lanes gcc unrolls the loop into scalar code) */
#define TG_SUM_LANES 16     /* independent sums of a row reduction (measured fastest) */
#define TG_SUM_BLOCK 1024   /* float32 sums: elements added in float before a double add */
#define TG_ARG_BLOCK 1024   /* argmax: elements whose extreme is compared at a time */
#define TG_TILE 4096        /* columns path: columns per work item (whole rows, where they fit) */
#define TG_FOLD_ROWS 16     /* columns path: rows added in C before each addition in W */
#define TG_MIN_COLUMNS 16   /* narrower kept rows take the strided path */

/* The reduction after collapsing, and the path it takes. */
typedef struct {
    int path, n_outer, n_inner;
    i64 outer_shape[TG_MAX_DIMS], outer_strides[TG_MAX_DIMS];
    i64 inner_shape[TG_MAX_DIMS], inner_strides[TG_MAX_DIMS];
    i64 n_out, n_in;
} Plan;

static Plan plan_reduce(int n_outer, const i64 *outer_shape, const i64 *outer_strides,
                        int n_inner, const i64 *inner_shape, const i64 *inner_strides) {
    Plan p;
    p.n_out = tg_numel(n_outer, outer_shape);
    p.n_in = tg_numel(n_inner, inner_shape);
    memcpy(p.outer_shape, outer_shape, n_outer * sizeof(i64));
    memcpy(p.outer_strides, outer_strides, n_outer * sizeof(i64));
    memcpy(p.inner_shape, inner_shape, n_inner * sizeof(i64));
    memcpy(p.inner_strides, inner_strides, n_inner * sizeof(i64));
    p.n_outer = tg_collapse(n_outer, p.outer_shape, 1, (i64 *[]){p.outer_strides});
    p.n_inner = tg_collapse(n_inner, p.inner_shape, 1, (i64 *[]){p.inner_strides});
    int last = p.n_outer - 1;
    if (p.n_inner == 1 && p.inner_strides[0] == 1)
        p.path = TG_REDUCE_ROWS;
    else if (p.n_inner >= 1 && last >= 0 && p.outer_strides[last] == 1 && p.outer_shape[last] >= TG_MIN_COLUMNS)
        p.path = TG_REDUCE_COLUMNS;
    else
        p.path = TG_REDUCE_STRIDED;
    return p;
}

int tg_reduce_path(int n_outer, const i64 *outer_shape, const i64 *outer_strides,
                   int n_inner, const i64 *inner_shape, const i64 *inner_strides) {
    return plan_reduce(n_outer, outer_shape, outer_strides, n_inner, inner_shape, inner_strides).path;
}

/* Whether v takes acc's place as the max (min): strictly larger (smaller), so the first of
 * equal values stays; or NaN where acc is not, so the first NaN stays. */
#define BEATS(op, v, acc) \
    (((op) == MAX || (op) == ARGMAX ? (v) > (acc) : (v) < (acc)) || (IS_NAN(v) && !IS_NAN(acc)))

/* Where results go: the output buffer and its dtype (native_backend.py's codes: 0 bool,
 * 1 int32, 2 int64, 3 float32, 4 float64). Each result is computed in W and stored once,
 * rounded to the output's dtype: a float32 sum is written as float32 by the kernel itself,
 * with no second pass (a conversion kernel) over the output. */
typedef struct { void *p; int dtype; } Out;

static inline void store_double(Out out, i64 o, double v) {
    switch (out.dtype) {
    case 3: ((float *)out.p)[o] = (float)v; break;
    default: ((double *)out.p)[o] = v;
    }
}

static inline void store_int(Out out, i64 o, int64_t v) {     /* exact: not through double */
    switch (out.dtype) {
    case 0: ((uint8_t *)out.p)[o] = v != 0; break;
    case 1: ((int32_t *)out.p)[o] = (int32_t)v; break;
    default: ((int64_t *)out.p)[o] = v;
    }
}
#define STORE(out, o, v) _Generic((v), double: store_double, default: store_int)(out, o, v)

#define TEMPLATE "reduce_t.h"
#include "instantiate.h"
