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
 * read or written out of bounds before the host raises.
 *
 * Advanced indexing over the k leading dimensions of a view (index, index_put; compare
 * csrc/index.c): indices (k, n), a thread per element of the n sub-tensors, which finds
 * its sub-tensor's start from its k indices and its place within it from the trailing
 * dimensions' strides. index_put writes in place, so it checks every index in a launch of
 * its own first and writes nothing when one is bad. Without accumulate, an element that
 * repeated indices name gets one of their values, whichever thread stores last (PyTorch's
 * CUDA leaves it undefined too); with it, atomic additions (a bool: an atomic or on the
 * 32-bit word holding the byte). */
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

/* indices (k, n) over dimensions of `size`; the first bad one's position d * n + j. */
struct Leading {
    int k;
    i64 size[TG_MAX_DIMS];
    i64 stride[TG_MAX_DIMS];
};

__global__ void check_leading(Leading lead, const i64 *indices, i64 n, i64 *bad) {
    for_each_index(i, lead.k * n)
        if (!index_ok(indices[i], lead.size[i / n])) atomicMin((long long *)bad, (long long)i);
}

__device__ __forceinline__ i64 leading_start(const Leading &lead, i64 offset, const i64 *indices, i64 n, i64 j) {
    i64 p = offset;
    for (int d = 0; d < lead.k; d++) p += index_wrap(indices[d * n + j], lead.size[d]) * lead.stride[d];
    return p;
}

/* out (n, inner), contiguous: element i is the view's element of sub-tensor i / inner at
 * trailing position i % inner. Its indices were checked by check_leading. */
template <typename E>
__global__ void index_kernel(i64 total, i64 inner, Leading lead, i64 offset, Strided<1> trailing,
                             const i64 *indices, i64 n, const E *x, E *out) {
    for_each_index(i, total) {
        i64 pt;
        trailing.locate(i % inner, &pt);
        out[i] = x[leading_start(lead, offset, indices, n, i / inner) + pt];
    }
}

__device__ __forceinline__ void put(float *p, float v, bool add) { if (add) atomicAdd(p, v); else *p = v; }
__device__ __forceinline__ void put(double *p, double v, bool add) { if (add) atomicAdd(p, v); else *p = v; }
__device__ __forceinline__ void put(int32_t *p, int32_t v, bool add) { if (add) atomic_add(p, v); else *p = v; }
__device__ __forceinline__ void put(int64_t *p, int64_t v, bool add) { if (add) atomic_add(p, v); else *p = v; }
__device__ __forceinline__ void put(uint8_t *p, uint8_t v, bool add) {
    if (!add) { *p = v; return; }
    if (!v) return;                                  /* false ors nothing in */
    uintptr_t at = (uintptr_t)p;
    unsigned *word = (unsigned *)(at & ~(uintptr_t)3);
    atomicOr(word, 1u << (8 * (at & 3)));            /* little-endian: byte b is bits 8b.. */
}

/* Element i of values (read through its strides, row-major over (S..., trailing...)) into
 * the destination's element of sub-tensor i / inner at trailing position i % inner. */
template <typename T>
__global__ void index_put_kernel(i64 total, i64 inner, Leading lead, i64 offset, Strided<1> trailing,
                                 Strided<1> from, const i64 *indices, i64 n, const T *values, T *dst,
                                 bool accumulate) {
    for_each_index(i, total) {
        i64 pt, pv;
        trailing.locate(i % inner, &pt);
        from.locate(i, &pv);
        put(&dst[leading_start(lead, offset, indices, n, i / inner) + pt], values[pv], accumulate);
    }
}

static Leading leading(int k, const i64 *shape, const i64 *strides) {
    Leading lead;
    lead.k = k;
    for (int d = 0; d < k; d++) lead.size[d] = shape[d], lead.stride[d] = strides[d];
    return lead;
}

/* check_leading over every index, then the host reads the first bad one back: -1 when none. */
static int check_all(const Leading &lead, const i64 *indices, i64 n, i64 *bad_position) {
    *bad_position = -1;
    if (n == 0) return 0;
    i64 *bad = bad_index_word();
    if (!bad) return (int)cudaErrorMemoryAllocation;
    LAUNCH(blocks_for(lead.k * n), THREADS, check_leading)(lead, indices, n, bad);
    int status;
    *bad_position = read_bad_index(&status);
    return status;
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

/* x: a view (shape, strides, offset) of elements of `itemsize` bytes; indices (k, n) over
 * its first k dimensions; out: contiguous (n, trailing...). *bad_position: -1, or d * n + j
 * of the first index out of range (out is then not written). */
int tg_cuda_index(int ndim, const i64 *shape, const i64 *strides, i64 offset, const void *x, int itemsize,
                  int k, const i64 *indices, i64 n, void *out, i64 *bad_position) {
    Leading lead = leading(k, shape, strides);
    int status = check_all(lead, indices, n, bad_position);
    if (status || *bad_position >= 0) return status;
    i64 zero = 0, inner = numel(ndim - k, shape + k), total = n * inner;
    if (total == 0) return 0;
    const i64 *trailing_strides = strides + k;
    Strided<1> trailing = strided<1>(ndim - k, shape + k, &trailing_strides, &zero);
#define GATHER(E) LAUNCH(blocks_for(total), THREADS, index_kernel<E>)(total, inner, lead, offset, trailing, \
                         indices, n, (const E *)x, (E *)out)
    switch (itemsize) {
    case 1: GATHER(uint8_t); break;
    case 2: GATHER(uint16_t); break;               /* float16, bfloat16: their bits */
    case 4: GATHER(uint32_t); break;
    default: GATHER(uint64_t);
    }
#undef GATHER
    return LAUNCHED();
}

/* dst: a view of dtype 0 to 4; values: a view of vndim dimensions (S..., trailing...) of
 * n * trailing elements; the rest as tg_cuda_index. Writes nothing when an index is bad. */
int tg_cuda_index_put(int dtype, int ndim, const i64 *shape, const i64 *strides, i64 offset, void *dst,
                      int k, const i64 *indices, i64 n, int vndim, const i64 *vshape, const i64 *vstrides,
                      i64 voffset, const void *values, int accumulate, i64 *bad_position) {
    Leading lead = leading(k, shape, strides);
    int status = check_all(lead, indices, n, bad_position);
    if (status || *bad_position >= 0) return status;
    i64 zero = 0, inner = numel(ndim - k, shape + k), total = n * inner;
    if (total == 0) return 0;
    const i64 *trailing_strides = strides + k;
    Strided<1> trailing = strided<1>(ndim - k, shape + k, &trailing_strides, &zero);
    Strided<1> from = strided<1>(vndim, vshape, &vstrides, &voffset);
    DISPATCH(dtype, LAUNCH(blocks_for(total), THREADS, index_put_kernel<T>)(
                 total, inner, lead, offset, trailing, from, indices, n, (const T *)values, (T *)dst,
                 accumulate != 0))
    return LAUNCHED();
}

}  // extern "C"
