/* Reductions for device "cuda" (chapter on native kernels, section "CUDA"): sum, max, min,
 * argmax, argmin of a strided view over any set of its dimensions. The caller splits the
 * view into the kept ("outer") dimensions, one output each, and the reduced ("inner") ones,
 * as for csrc/reduce.c; the semantics are that file's: sums in int64 (integer tensors) or
 * double (float ones), stored as the output's dtype; max and min propagate NaN; argmax and
 * argmin give the first index of the extreme, a NaN counting as the extreme.
 *
 * How the work is laid out is about memory: the threads of a warp should read neighbouring
 * addresses at the same time. Two kernels, picked by the layout:
 *
 *   reduce_blocks   a block per output: its threads take the output's elements in turn
 *                   (thread t the t-th, t + 256-th, ...), then a tree in shared memory
 *                   combines their 256 partial results. Right when each output's elements
 *                   are contiguous (x.sum(-1)): the block reads them side by side.
 *   reduce_threads  a thread per output, walking its elements alone. Right when the kept
 *                   dimension is the contiguous one (x.sum(0) of a row-major matrix):
 *                   neighbouring threads then read neighbouring columns. Also for outputs
 *                   of a few elements each, which would leave most of a block idle.
 *
 * A few outputs of many elements each (a full sum: one output) would leave the GPU nearly
 * empty, so each output's elements are split into `parts` ranges, each reduced by its own
 * block (or thread) into a partial result; a second kernel, finish, combines each output's
 * partials in order. Everything happens in a fixed order, with no atomics: the same input
 * gives the same bits on every run.
 */
#include "ops_generated.h"      /* SUM, MAX, MIN, ARGMAX, ARGMIN: from stage2_tensor/ops.py */
#include "runtime.cuh"

#define FILL_BLOCKS 1024            /* blocks that keep every SM of an H100 busy (132 SMs) */
#define FILL_THREADS (FILL_BLOCKS * THREADS)
#define MIN_PER_BLOCK 2048          /* elements a block's part gets at least */
#define MIN_PER_THREAD 32           /* elements a thread's part gets at least */

namespace {         /* private to this file: other .cu files may use the same names */

/* The type sums accumulate in: int64 for the integer dtypes (exact), double for floats */
template <typename T> struct Wide { typedef int64_t type; };
template <> struct Wide<float> { typedef double type; };
template <> struct Wide<double> { typedef double type; };

/* What a thread (or a part) has seen so far: the running sum, or the running extreme and
 * its index among the reduced elements (at < 0: no element yet). max and min keep the
 * index too: "the first of equal values" then decides which of 0.0 and -0.0 a max returns,
 * whatever order the threads finish in. */
template <typename T> struct Partial {
    typename Wide<T>::type sum;
    T best;
    i64 at;
};

template <typename T> __device__ __forceinline__ bool is_nan(T v) { return v != v; }

/* Whether v takes acc's place: strictly beyond it, or NaN where acc is not */
template <typename T> __device__ __forceinline__ bool beats(int op, T v, T acc) {
    bool beyond = op == MAX || op == ARGMAX ? v > acc : v < acc;
    return beyond || (is_nan(v) && !is_nan(acc));
}

/* One more element, v at index i; a thread sees its elements in increasing i, so a strict
 * `beats` keeps the first of equal extremes. */
template <typename T> __device__ __forceinline__ void take(int op, Partial<T> &acc, T v, i64 i) {
    if (op == SUM) acc.sum += (typename Wide<T>::type)v;
    else if (acc.at < 0 || beats(op, v, acc.best)) { acc.best = v; acc.at = i; }
}

/* Two partial results as one. Their elements interleave (thread t holds t, t + 256, ...),
 * so among extremes that tie (equal, or both NaN) the smaller index wins explicitly. */
template <typename T> __device__ __forceinline__ Partial<T> combine(int op, Partial<T> a, Partial<T> b) {
    if (op == SUM) { a.sum += b.sum; return a; }
    if (b.at < 0) return a;
    if (a.at < 0 || beats(op, b.best, a.best)) return b;
    if (beats(op, a.best, b.best)) return a;
    return b.at < a.at ? b : a;
}

template <typename V> __device__ __forceinline__ void store(void *out, int dtype, i64 o, V v) {
    switch (dtype) {
    case 0: ((uint8_t *)out)[o] = v != 0; break;
    case 1: ((int32_t *)out)[o] = (int32_t)v; break;
    case 2: ((int64_t *)out)[o] = (int64_t)v; break;
    case 3: ((float *)out)[o] = (float)v; break;
    default: ((double *)out)[o] = (double)v;
    }
}

/* Where results go: with partials, work item `item`'s partial result; else output `item`
 * itself, as out_dtype (argmax, argmin: int64) */
template <typename T> struct Out {
    void *out;
    int dtype;
    Partial<T> *partials;

    __device__ __forceinline__ void put(int op, i64 item, const Partial<T> &acc) const {
        if (partials) partials[item] = acc;
        else if (op == SUM) store(out, dtype, item, acc.sum);
        else if (op == MAX || op == MIN) store(out, dtype, item, acc.best);
        else ((int64_t *)out)[item] = acc.at;
    }
};

template <typename T> __device__ __forceinline__ Partial<T> nothing() {
    Partial<T> p;
    p.sum = 0;
    p.best = T();
    p.at = -1;
    return p;
}

/* Work item `item` is part item / n_out of output item % n_out (outputs vary fastest, so
 * neighbouring threads of reduce_threads take neighbouring outputs): its output's first
 * element, and the range [lo, hi) of reduced elements it covers. */
struct Item {
    i64 o, base, lo, hi;
};
__device__ __forceinline__ Item item_of(i64 item, i64 n_out, i64 n_in, i64 parts, const Strided<1> &outer) {
    Item it;
    it.o = item % n_out;
    i64 part = item / n_out;
    outer.locate(it.o, &it.base);
    it.lo = n_in * part / parts;
    it.hi = n_in * (part + 1) / parts;
    return it;
}

template <typename T>
__global__ void reduce_blocks(int op, i64 n_out, i64 n_in, i64 parts, Strided<1> outer, Strided<1> inner,
                              const T *x, Out<T> out) {
    __shared__ Partial<T> shared[THREADS];
    for_each_row(item, n_out * parts) {
        Item it = item_of(item, n_out, n_in, parts, outer);
        Partial<T> acc = nothing<T>();
        for (i64 i = it.lo + threadIdx.x; i < it.hi; i += blockDim.x) {
            i64 pos;
            inner.locate(i, &pos);
            take(op, acc, x[it.base + pos], i);
        }
        shared[threadIdx.x] = acc;
        __syncthreads();
        for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {     /* halve the live slots each step */
            if (threadIdx.x < s) shared[threadIdx.x] = combine(op, shared[threadIdx.x], shared[threadIdx.x + s]);
            __syncthreads();
        }
        /* The next item's first writes are safe without another barrier: thread 0 alone
         * reads shared[0], which no other thread writes. */
        if (threadIdx.x == 0) out.put(op, item, shared[0]);
    }
}

template <typename T>
__global__ void reduce_threads(int op, i64 n_out, i64 n_in, i64 parts, Strided<1> outer, Strided<1> inner,
                               const T *x, Out<T> out) {
    for_each_index(item, n_out * parts) {
        Item it = item_of(item, n_out, n_in, parts, outer);
        Partial<T> acc = nothing<T>();
        for (i64 i = it.lo; i < it.hi; i++) {
            i64 pos;
            inner.locate(i, &pos);
            take(op, acc, x[it.base + pos], i);
        }
        out.put(op, item, acc);
    }
}

/* Each output's parts, combined in part order: partial p of output o is partials[p * n_out + o] */
template <typename T>
__global__ void finish(int op, i64 n_out, i64 parts, const Partial<T> *partials, Out<T> out) {
    for_each_index(o, n_out) {
        Partial<T> acc = partials[o];
        for (i64 p = 1; p < parts; p++) acc = combine(op, acc, partials[p * n_out + o]);
        out.put(op, o, acc);
    }
}

static i64 smaller(i64 a, i64 b) { return a < b ? a : b; }

template <typename T>
static int reduce(int op, const Strided<1> &outer, const Strided<1> &inner, i64 n_out, i64 n_in,
                  const T *x, void *out, int out_dtype) {
    /* A thread per output when the kept dimension is the contiguous one and the reduced
     * ones are not (reading down columns), or when each output has few elements. */
    bool kept_contiguous = outer.ndim > 0 && outer.strides[0][outer.ndim - 1] == 1;
    bool reduced_contiguous = inner.ndim == 0 || inner.strides[0][inner.ndim - 1] == 1;
    bool by_threads = n_in < MIN_PER_THREAD || (kept_contiguous && !reduced_contiguous);
    /* parts per output: enough work items to fill the GPU, but not so many that each gets
     * only a handful of elements */
    i64 parts = by_threads ? smaller((FILL_THREADS + n_out - 1) / n_out, n_in / MIN_PER_THREAD)
                           : smaller((FILL_BLOCKS + n_out - 1) / n_out, n_in / MIN_PER_BLOCK);
    parts = parts < 1 ? 1 : parts;
    Out<T> target = {out, out_dtype, nullptr};
    if (parts > 1) {
        int status;
        target.partials = (Partial<T> *)tg_cuda_malloc(n_out * parts * sizeof(Partial<T>), &status);
        if (!target.partials) return status;
    }
    i64 items = n_out * parts;
    if (by_threads)
        LAUNCH(blocks_for(items), THREADS, reduce_threads<T>)(op, n_out, n_in, parts, outer, inner, x, target);
    else
        LAUNCH(blocks_for(items, 1), THREADS, reduce_blocks<T>)(op, n_out, n_in, parts, outer, inner, x, target);
    int status = LAUNCHED();
    if (parts > 1) {
        Partial<T> *partials = target.partials;
        target.partials = nullptr;
        if (status == 0) {
            LAUNCH(blocks_for(n_out), THREADS, finish<T>)(op, n_out, parts, partials, target);
            status = LAUNCHED();
        }
        tg_cuda_free(partials);      /* kernels run in order: the next user of it waits for finish */
    }
    return status;
}

}  // namespace

extern "C" {

int tg_cuda_reduce(int op, int dtype, int n_outer, const i64 *outer_shape, const i64 *outer_strides,
                   int n_inner, const i64 *inner_shape, const i64 *inner_strides,
                   const void *x, i64 xo, void *out, int out_dtype) {
    i64 n_out = numel(n_outer, outer_shape), n_in = numel(n_inner, inner_shape), zero = 0;
    if (n_out == 0) return 0;
    Strided<1> outer = strided<1>(n_outer, outer_shape, &outer_strides, &xo);
    Strided<1> inner = strided<1>(n_inner, inner_shape, &inner_strides, &zero);
    DISPATCH(dtype, return reduce<T>(op, outer, inner, n_out, n_in, (const T *)x, out, out_dtype))
    return 0;
}

}  // extern "C"
