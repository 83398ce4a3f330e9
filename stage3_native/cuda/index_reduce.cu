/* index_reduce for device "cuda": rows of src reduced into a copy of base along one
 * dimension, by product, mean, maximum or minimum. Compare csrc/index_reduce.c.
 *
 * Both are contiguous, base as (outer, size, inner), src as (outer, n_index, inner). A first
 * launch checks every index (atomicMin of a bad one's position, as index.cu) and, per row of
 * `size`, counts the src rows landing there (atomicAdd) and finds the first (atomicMin): the
 * host reads the check back and writes nothing when an index is bad. Without include_self a
 * thread per element of the named rows then copies the first src row's element in; then a
 * thread per src element (but the first rows, already in) combines it into its row with a
 * compare-and-swap loop, CUDA having no atomic product, nor a maximum of floats. The order
 * of the combinations is the hardware's: a product or a mean can differ from the CPU's in
 * its last bits, and from run to run. A mean's rows are divided by their counts last. */
#include <cstring>

#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

enum { PROD, MEAN, AMAX, AMIN };     /* kernels/indexing.py's REDUCTIONS */

__device__ __forceinline__ bool row_ok(i64 i, i64 size) { return i >= -size && i < size; }
__device__ __forceinline__ i64 row_wrap(i64 i, i64 size) { return i < 0 ? i + size : i; }

template <typename T> __device__ __forceinline__ bool is_nan(T) { return false; }
template <> __device__ __forceinline__ bool is_nan(float v) { return v != v; }
template <> __device__ __forceinline__ bool is_nan(double v) { return v != v; }

/* a combined with b: NaN wins a maximum or a minimum */
template <typename T>
__device__ __forceinline__ T combine(int reduce, T a, T b) {
    switch (reduce) {
    case PROD: return (T)(a * b);
    case MEAN: return (T)(a + b);
    case AMAX: return is_nan(a) || a >= b ? a : b;
    default: return is_nan(a) || a <= b ? a : b;
    }
}

/* The word a compare-and-swap takes for an element of N bytes */
template <int N> struct Word;
template <> struct Word<4> { typedef unsigned int type; };
template <> struct Word<8> { typedef unsigned long long type; };

template <typename T>
__device__ void atomic_combine(T *p, T v, int reduce) {
    typedef typename Word<sizeof(T)>::type B;
    B *word = (B *)p, seen = *word, old;
    do {
        old = seen;
        T now, next;
        memcpy(&now, &old, sizeof now);
        next = combine(reduce, now, v);
        B bits;
        memcpy(&bits, &next, sizeof bits);
        if (bits == old) return;                         /* nothing changes (a NaN stays) */
        seen = atomicCAS(word, old, bits);
    } while (seen != old);
}

__global__ void reset_rows(i64 size, i64 n_index, i64 *counts, i64 *first) {
    for_each_index(i, size) {
        counts[i] = 0;
        first[i] = n_index;
    }
}

__global__ void count_rows(const i64 *index, i64 n_index, i64 size, i64 *counts, i64 *first, i64 *bad) {
    for_each_index(r, n_index) {
        i64 i = index[r];
        if (!row_ok(i, size)) {
            atomicMin((long long *)bad, (long long)r);
        } else if (counts) {
            i = row_wrap(i, size);
            atomicAdd((unsigned long long *)&counts[i], 1ULL);
            atomicMin((long long *)&first[i], (long long)r);
        }
    }
}

/* out's elements in rows some index names: the first such src row's */
template <typename T>
__global__ void take_first(i64 n, i64 size, i64 inner, i64 n_index, const i64 *counts, const i64 *first,
                           const T *src, T *out) {
    for_each_index(e, n) {
        i64 j = e % inner, k = e / inner, i = k % size, o = k / size;
        if (counts[i]) out[e] = src[(o * n_index + first[i]) * inner + j];
    }
}

template <typename T>
__global__ void combine_rows(i64 n, i64 size, i64 inner, const i64 *index, i64 n_index, const i64 *first,
                             const T *src, int reduce, bool include_self, T *out) {
    for_each_index(e, n) {
        i64 j = e % inner, k = e / inner, r = k % n_index, o = k / n_index;
        i64 i = row_wrap(index[r], size);
        if (!include_self && first[i] == r) continue;
        atomic_combine(&out[(o * size + i) * inner + j], src[e], reduce);
    }
}

/* sum / n, n > 0: an integer's rounded down (PyTorch's floor division) */
template <typename T> __device__ __forceinline__ T mean_of(T sum, i64 n) {
    i64 q = (i64)sum / n;
    return (T)(q - ((i64)sum % n < 0));
}
template <> __device__ __forceinline__ float mean_of(float sum, i64 n) { return sum / (float)n; }
template <> __device__ __forceinline__ double mean_of(double sum, i64 n) { return sum / (double)n; }

template <typename T>
__global__ void divide_rows(i64 n, i64 size, i64 inner, const i64 *counts, bool include_self, T *out) {
    for_each_index(e, n) {
        i64 i = (e / inner) % size;
        if (counts[i]) out[e] = mean_of(out[e], counts[i] + include_self);
    }
}

}  // namespace

extern "C" {

/* out: base's contiguous copy (outer, size, inner), reduced into; src (outer, n_index,
 * inner); dtype 1 to 4; counts and first: `size` int64 each, for the kernel's use, or NULL
 * when out has no elements (the indices are then only checked). *bad_position: -1, or the
 * position in index of the first bad one (out is then as it was). */
int tg_cuda_index_reduce(int dtype, i64 outer, i64 size, i64 inner, const i64 *index, i64 n_index, const void *src,
                         int reduce, int include_self, i64 *counts, i64 *first, void *out, i64 *bad_position) {
    *bad_position = -1;
    if (n_index == 0) return 0;
    i64 *bad = bad_index_word();
    if (!bad) return (int)cudaErrorMemoryAllocation;
    if (counts) LAUNCH(blocks_for(size), THREADS, reset_rows)(size, n_index, counts, first);
    LAUNCH(blocks_for(n_index), THREADS, count_rows)(index, n_index, size, counts, first, bad);
    int status;
    *bad_position = read_bad_index(&status);
    if (status || *bad_position >= 0 || !counts) return status;
    i64 n = outer * size * inner, n_src = outer * n_index * inner;
#define REDUCE(T) \
    do { \
        if (!include_self) \
            LAUNCH(blocks_for(n), THREADS, take_first<T>)(n, size, inner, n_index, counts, first, (const T *)src, \
                                                          (T *)out); \
        LAUNCH(blocks_for(n_src), THREADS, combine_rows<T>)(n_src, size, inner, index, n_index, first, \
                                                            (const T *)src, reduce, include_self != 0, (T *)out); \
        if (reduce == MEAN) \
            LAUNCH(blocks_for(n), THREADS, divide_rows<T>)(n, size, inner, counts, include_self != 0, (T *)out); \
    } while (0)
    switch (dtype) {
    case 1: REDUCE(int32_t); break;
    case 2: REDUCE(int64_t); break;
    case 3: REDUCE(float); break;
    default: REDUCE(double);
    }
#undef REDUCE
    return LAUNCHED();
}

}  // extern "C"
