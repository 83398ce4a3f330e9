/* Element-wise kernels: unary, binary (broadcast through stride-0 views), comparisons and
 * where. The op codes are ops_generated.h's enums, written from the declaration of the ops
 * (stage2_tensor/ops.py) by the build: NEG, ADD, EQ, ... by name (stage3_native/ops_header.py).
 *
 * The thesis's hierarchy of element-wise kernels. The output is always contiguous; what
 * varies is how the operands are laid out, and the more regular the layout, the less work
 * per element beyond the op itself:
 *
 *   (a) contiguous: every operand is contiguous. One flat loop over n elements with no
 *       index arithmetic: the compiler vectorizes it (8 floats per AVX2 instruction), and
 *       memory is read in order, which the hardware prefetcher streams at full bandwidth.
 *   (b) scalar broadcast: the operands that are not contiguous are one value repeated
 *       (all strides 0: x + 1.0). The same flat loop with that value held in a register,
 *       "splatted" across the vector lanes.
 *   (c) last dimension contiguous: every operand has stride 1 (or 0, a broadcast row or
 *       column) in the last dimension: x + b[None, :], x * c[:, None]. The row loop is an
 *       (a) or (b) loop; only the outer dimensions are walked with the index increment,
 *       once per row instead of once per element.
 *   (d) general strided: anything else (a transposed operand, a step in the last
 *       dimension). The thesis's index increment (tg_step) walks every element; blocks of
 *       them are gathered into small contiguous buffers, so the op itself still runs as
 *       the vectorized (a) loop.
 *
 * Before choosing, adjacent dimensions that every operand walks as one are merged
 * (tg_collapse): a contiguous (N, M, K) view is one dimension and lands in (a), x (N, M) +
 * b (1, M) keeps two and lands in (c) with N rows. choose_path below is the decision, and
 * tg_elementwise_path reports it, so tests and the chapter can ask which level runs.
 *
 * Each level splits its flat output range among the threads (above TG_PARALLEL_MIN
 * elements): contiguous slices, so each thread streams through its own part of memory.
 * benchmarks/elementwise.py times one add on each level, and the ops against numpy.
 *
 * The ops themselves live in elementwise_t.h, one loop per op (the switch on the op sits
 * outside the loop, so every loop body is a single formula the compiler can vectorize),
 * computed in C: float for float32 tensors, double for float64, int64 for integers.
 */
#include <math.h>
#include "parallel.h"
#include "simd.h"
#include "strided.h"
#include "ops_generated.h"
#include "vmath.h"

#define TG_MIN_ROW 16      /* (c) calls the row loop once per row: shorter rows go to (d) */
#define TG_BLOCK 256       /* (d) gathers this many elements per operand at a time */

/* A kernel for n elements of every operand: in[k] is operand k's first element, step[k]
 * 1 when its elements follow each other, 0 when it is one value repeated. */
typedef void RowKernel(int op, i64 n, const void *const *in, const int *step, void *out);

typedef struct {
    int op, n_in, ndim, path;
    i64 shape[TG_MAX_DIMS];
    const char *in[3];                      /* each operand's first element */
    i64 strides[3][TG_MAX_DIMS];            /* in elements */
    int size[3], out_size;                  /* bytes per element */
    char *out;
    RowKernel *row;
} Elementwise;

/* The decision, on collapsed shapes and strides. */
static int choose_path(int ndim, const i64 *shape, int n_in, i64 *const *strides) {
    if (ndim == 0) return TG_PATH_CONTIGUOUS;                        /* a single element */
    int unit = 1, unit_or_zero = 1;
    for (int k = 0; k < n_in; k++) {
        i64 s = strides[k][ndim - 1];
        unit &= s == 1;
        unit_or_zero &= s == 1 || s == 0;
    }
    if (ndim == 1 && unit) return TG_PATH_CONTIGUOUS;                               /* (a) */
    if (ndim == 1 && unit_or_zero) return TG_PATH_SCALAR;                           /* (b) */
    if (unit_or_zero && shape[ndim - 1] >= TG_MIN_ROW) return TG_PATH_LASTDIM;      /* (c) */
    return TG_PATH_STRIDED;                                                         /* (d) */
}

static void copy_item(char *dst, const char *src, int size) {
    switch (size) {
    case 1: *dst = *src; break;
    case 4: memcpy(dst, src, 4); break;
    default: memcpy(dst, src, 8);
    }
}

/* Output elements [lo, hi) of e, on the calling thread. */
static void run_range(const Elementwise *e, i64 lo, i64 hi) {
    const void *in[3];
    int step[3] = {1, 1, 1};
    i64 *strides[3] = {(i64 *)e->strides[0], (i64 *)e->strides[1], (i64 *)e->strides[2]};
    i64 idx[TG_MAX_DIMS] = {0}, pos[3] = {0, 0, 0};
    int last = e->ndim - 1;

    if (e->path == TG_PATH_CONTIGUOUS || e->path == TG_PATH_SCALAR) {      /* (a), (b) */
        for (int k = 0; k < e->n_in; k++) {
            step[k] = e->ndim == 0 || e->strides[k][0] != 0;
            in[k] = e->in[k] + (step[k] ? lo * e->size[k] : 0);
        }
        e->row(e->op, hi - lo, in, step, e->out + lo * e->out_size);
        return;
    }
    if (e->path == TG_PATH_LASTDIM) {                                      /* (c) */
        i64 m = e->shape[last], col = lo % m;
        tg_unravel(last, e->shape, lo / m, idx, e->n_in, strides, pos);
        for (int k = 0; k < e->n_in; k++) step[k] = e->strides[k][last] != 0;
        for (i64 i = lo; i < hi; col = 0) {
            i64 len = m - col < hi - i ? m - col : hi - i;
            for (int k = 0; k < e->n_in; k++)
                in[k] = e->in[k] + (pos[k] + col * step[k]) * e->size[k];
            e->row(e->op, len, in, step, e->out + i * e->out_size);
            i += len;
            tg_step(last, e->shape, idx, &pos[0], strides[0], e->n_in > 1 ? &pos[1] : 0, strides[1],
                    e->n_in > 2 ? &pos[2] : 0, strides[2]);
        }
        return;
    }
    /* (d): gather TG_BLOCK elements of each operand, then run the contiguous loop on them */
    _Alignas(64) char block[3][TG_BLOCK * 8];
    tg_unravel(e->ndim, e->shape, lo, idx, e->n_in, strides, pos);
    for (int k = 0; k < e->n_in; k++) in[k] = block[k];
    for (i64 i = lo; i < hi; i += TG_BLOCK) {
        i64 len = hi - i < TG_BLOCK ? hi - i : TG_BLOCK;
        for (i64 j = 0; j < len; j++) {
            for (int k = 0; k < e->n_in; k++)
                copy_item(block[k] + j * e->size[k], e->in[k] + pos[k] * e->size[k], e->size[k]);
            tg_step(e->ndim, e->shape, idx, &pos[0], strides[0], e->n_in > 1 ? &pos[1] : 0, strides[1],
                    e->n_in > 2 ? &pos[2] : 0, strides[2]);
        }
        e->row(e->op, len, in, step, e->out + i * e->out_size);
    }
}

/* Every element-wise kernel goes through here: collapse, choose the level, split among
 * threads. in[k] points at operand k's first element (buffer + offset). */
static void elementwise(int op, int ndim, const i64 *shape, int n_in, const void *const *in,
                        const i64 *const *strides, const int *size, void *out, int out_size,
                        RowKernel *row) {
    Elementwise e = {.op = op, .n_in = n_in, .ndim = ndim, .out = out, .out_size = out_size, .row = row};
    i64 n = tg_numel(ndim, shape);
    if (n == 0) return;
    memcpy(e.shape, shape, ndim * sizeof(i64));
    for (int k = 0; k < n_in; k++) {
        e.in[k] = in[k];
        e.size[k] = size[k];
        memcpy(e.strides[k], strides[k], ndim * sizeof(i64));
    }
    e.ndim = tg_collapse(ndim, e.shape, n_in, (i64 *[]){e.strides[0], e.strides[1], e.strides[2]});
    e.path = choose_path(e.ndim, e.shape, n_in, (i64 *[]){e.strides[0], e.strides[1], e.strides[2]});
    if (n < TG_PARALLEL_MIN || tg_thread_count() == 1) {
        run_range(&e, 0, n);
        return;
    }
    #pragma omp parallel
    {
        i64 lo, hi;
        tg_thread_range(n, 16, &lo, &hi);          /* 16 elements: a 64-byte line of floats */
        if (lo < hi) run_range(&e, lo, hi);
    }
}

int tg_elementwise_path(int ndim, const i64 *shape, int n_in, const i64 *strides) {
    i64 s[3][TG_MAX_DIMS], sh[TG_MAX_DIMS];
    memcpy(sh, shape, ndim * sizeof(i64));
    for (int k = 0; k < n_in; k++) memcpy(s[k], strides + k * ndim, ndim * sizeof(i64));
    ndim = tg_collapse(ndim, sh, n_in, (i64 *[]){s[0], s[1], s[2]});
    return choose_path(ndim, sh, n_in, (i64 *[]){s[0], s[1], s[2]});
}

#include "elementwise_math.h"      /* the math of each op, per compute type */

#define TEMPLATE "elementwise_t.h"
#include "instantiate.h"
