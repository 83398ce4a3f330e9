/* Gather and scatter-add along one dimension for device "cuda" (chapter on native kernels,
 * section "CUDA"): index_select copies the rows of `dim` listed in `index`, index_add (its
 * gradient) adds row r of src into row index[r] of a zeroed output. Compare csrc/index.c.
 *
 * Both see a tensor as (outer, size, inner): the dimensions before `dim`, `dim` itself,
 * and those after it. Every thread takes single output (or src) elements, so neighbouring
 * threads touch neighbouring elements of a picked row: the writes coalesce, and so do the
 * reads wherever a row's elements are adjacent in memory (an embedding table's are).
 *
 * The gather moves elements without looking at them, so it is compiled per element size
 * (1, 4, 8 bytes), not per dtype: one kernel serves bool, int32, int64, float32, float64.
 * It reads any strided view (the outer and inner dimensions as two Strided layouts, each
 * collapsed to as few dimensions as its strides allow), so a transposed weight is not
 * copied first.
 *
 * Scatter-add differs from the CPU: there each of a few threads owns rows of the output
 * and scans every index for its own, adding in index order. A GPU's tens of thousands of
 * threads would each scan every index, and most would find nothing (an embedding's
 * gradient hits a few rows of a large table). Here each src element is taken by one
 * thread, which adds it into its row with atomicAdd, so an index that repeats still
 * accumulates; the order of those additions is the hardware's, so a repeated row can
 * differ from the CPU's sum in its last bits, and from run to run.
 *
 * Index checks: every kernel first checks its share of the indices (a separate grid-stride
 * loop, so indices are checked even when the rows are empty) and atomicMin's the position
 * of a bad one into bad_index_word(); the host reads the smallest back, so the error names
 * the first bad index, as on the CPU. Elements whose index is bad are skipped: nothing is
 * read or written out of bounds before the host raises. */
#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

/* An index is valid in -size..size-1; a negative one counts from the end. */
__device__ __forceinline__ bool index_ok(i64 i, i64 size) { return i >= -size && i < size; }
__device__ __forceinline__ i64 index_wrap(i64 i, i64 size) { return i < 0 ? i + size : i; }

__device__ __forceinline__ void check_indices(const i64 *index, i64 n_index, i64 size, i64 *bad) {
    for_each_index(r, n_index)
        if (!index_ok(index[r], size)) atomicMin((long long *)bad, (long long)r);
}

/* The atomic additions CUDA has, by element type: int64 goes through unsigned long long
 * (two's complement: the same bits as a signed addition). */
__device__ __forceinline__ void atomic_add(float *p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(double *p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(int32_t *p, int32_t v) { atomicAdd((int *)p, (int)v); }
__device__ __forceinline__ void atomic_add(int64_t *p, int64_t v) {
    atomicAdd((unsigned long long *)p, (unsigned long long)v);
}

/* out (outer, n_index, inner), contiguous: element i is x's element at outer position o,
 * row index[r] of `dim` (stride `step`), inner position j. */
template <typename E>
__global__ void index_select_kernel(i64 n, Strided<1> outer, i64 size, i64 step, Strided<1> inner,
                                    i64 inner_n, const i64 *index, i64 n_index, const E *x, E *out,
                                    i64 *bad) {
    check_indices(index, n_index, size, bad);
    for_each_index(i, n) {
        i64 j = i % inner_n, k = i / inner_n;
        i64 r = k % n_index, o = k / n_index;
        i64 at = index[r];
        if (!index_ok(at, size)) continue;
        i64 po, pi;
        outer.locate(o, &po);
        inner.locate(j, &pi);
        out[i] = x[po + index_wrap(at, size) * step + pi];
    }
}

/* src (outer, n_index, inner) and out (outer, size, inner), both contiguous. */
template <typename T>
__global__ void index_add_kernel(i64 n, i64 size, i64 inner_n, const i64 *index, i64 n_index,
                                 const T *src, T *out, i64 *bad) {
    check_indices(index, n_index, size, bad);
    for_each_index(i, n) {
        i64 j = i % inner_n, k = i / inner_n;
        i64 r = k % n_index, o = k / n_index;
        i64 at = index[r];
        if (!index_ok(at, size)) continue;
        atomic_add(&out[(o * size + index_wrap(at, size)) * inner_n + j], src[i]);
    }
}

}  // namespace

extern "C" {

/* x: a view (shape, strides, offset) of elements of `itemsize` bytes; out: contiguous, of
 * x's shape with `dim` replaced by n_index. *bad_position: -1, or the position in index of
 * the first index out of range (out is then incomplete). */
int tg_cuda_index_select(int ndim, const i64 *shape, const i64 *strides, i64 offset, int dim,
                         const i64 *index, i64 n_index, const void *x, int itemsize, void *out,
                         i64 *bad_position) {
    *bad_position = -1;
    if (n_index == 0) return 0;                  /* no index to check, no element to copy */
    i64 zero = 0, inner_n = numel(ndim - dim - 1, shape + dim + 1);
    i64 n = numel(dim, shape) * n_index * inner_n;
    Strided<1> outer = strided<1>(dim, shape, &strides, &offset);
    const i64 *inner_strides = strides + dim + 1;
    Strided<1> inner = strided<1>(ndim - dim - 1, shape + dim + 1, &inner_strides, &zero);
    i64 *bad = bad_index_word();
    if (!bad) return (int)cudaErrorMemoryAllocation;
    unsigned grid = blocks_for(n > n_index ? n : n_index);
#define SELECT(E) LAUNCH(grid, THREADS, index_select_kernel<E>)(n, outer, shape[dim], strides[dim], inner, \
                         inner_n, index, n_index, (const E *)x, (E *)out, bad)
    switch (itemsize) {
    case 1: SELECT(uint8_t); break;
    case 2: SELECT(uint16_t); break;               /* float16, bfloat16: their bits */
    case 4: SELECT(uint32_t); break;
    default: SELECT(uint64_t);
    }
#undef SELECT
    int status;
    *bad_position = read_bad_index(&status);
    return status;
}

/* out: zeros of (outer, size, inner), added into; src: contiguous (outer, n_index, inner);
 * dtype 1 to 4 (bool has no atomic addition). *bad_position as for index_select. */
int tg_cuda_index_add(int dtype, i64 outer, i64 size, i64 inner, const i64 *index, i64 n_index,
                      const void *src, void *out, i64 *bad_position) {
    *bad_position = -1;
    if (n_index == 0) return 0;
    i64 n = outer * n_index * inner;
    i64 *bad = bad_index_word();
    if (!bad) return (int)cudaErrorMemoryAllocation;
    unsigned grid = blocks_for(n > n_index ? n : n_index);
#define ADD(T) LAUNCH(grid, THREADS, index_add_kernel<T>)(n, size, inner, index, n_index, \
                      (const T *)src, (T *)out, bad)
    switch (dtype) {
    case 1: ADD(int32_t); break;
    case 2: ADD(int64_t); break;
    case 3: ADD(float); break;
    default: ADD(double);
    }
#undef ADD
    int status;
    *bad_position = read_bad_index(&status);
    return status;
}

}  // extern "C"
