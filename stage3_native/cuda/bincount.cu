/* bincount, histc and runs for device "cuda"; compare csrc/bincount.c. A thread
 * per element adds 1 (or its weight) into its bin with an atomic addition, so float weights
 * add up in an order that varies from run to run (as PyTorch's on a GPU); an element
 * outside the bins counts nowhere. The bins are zeroed by a launch of their own first. */
#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

__device__ __forceinline__ void add(float *p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void add(double *p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void add(int32_t *p, int32_t v) { atomicAdd((int *)p, (int)v); }
__device__ __forceinline__ void add(int64_t *p, int64_t v) { atomicAdd((unsigned long long *)p, (unsigned long long)v); }

template <typename T>
__global__ void zero_bins(i64 bins, T *out) {
    for_each_index(b, bins) out[b] = 0;
}

template <typename T>
__global__ void count_elements(i64 n, const i64 *index, const T *weights, i64 bins, T *out) {
    for_each_index(i, n) {
        i64 b = index[i];
        if (b >= 0 && b < bins) add(&out[b], weights ? weights[i] : (T)1);
    }
}

template <typename T>
int bincount(i64 n, const i64 *index, const T *weights, i64 bins, T *out) {
    if (bins == 0) return 0;
    LAUNCH(blocks_for(bins), THREADS, zero_bins<T>)(bins, out);
    if (n) LAUNCH(blocks_for(n), THREADS, count_elements<T>)(n, index, weights, bins, out);
    return LAUNCHED();
}

/* csrc/histc_t.h's bin of each element, in T */
template <typename T>
__global__ void histc_elements(i64 n, const T *x, i64 bins, T lo, T hi, T *out) {
    for_each_index(i, n) {
        T v = x[i];
        if (!(v >= lo && v <= hi)) continue;
        i64 bin = (i64)((v - lo) * (T)bins / (hi - lo));
        add(&out[bin < bins ? bin : bins - 1], (T)1);
    }
}

template <typename T>
int histc(i64 n, const T *x, i64 bins, double low, double high, T *out) {
    LAUNCH(blocks_for(bins), THREADS, zero_bins<T>)(bins, out);
    if (n) LAUNCH(blocks_for(n), THREADS, histc_elements<T>)(n, x, bins, (T)low, (T)high, out);
    return LAUNCHED();
}

/* csrc/bincount_t.h's runs, walked in order by one thread: a row is one thread's work, as
 * a sort's row is (topk.cu); a parallel scan of the run starts would be faster */
template <typename T>
__global__ void runs_of(i64 n, i64 count, const T *x, T *values, i64 *counts) {
    for_each_index(one, 1) {
        i64 run = -1;
        for (i64 i = 0; i < n; i++) {
            if (i == 0 || !(x[i] == x[i - 1])) {
                if (++run == count) break;
                values[run] = x[i];
                counts[run] = 0;
            }
            counts[run]++;
        }
    }
}

}  // namespace

extern "C" {

/* the dtypes with atomic additions: int32, int64, float32, float64 (the declaration's) */
int tg_cuda_bincount(int dtype, i64 n, const i64 *index, const void *weights, i64 bins, void *out) {
    switch (dtype) {
    case 1: return bincount(n, index, (const int32_t *)weights, bins, (int32_t *)out);
    case 2: return bincount(n, index, (const int64_t *)weights, bins, (int64_t *)out);
    case 3: return bincount(n, index, (const float *)weights, bins, (float *)out);
    case 4: return bincount(n, index, (const double *)weights, bins, (double *)out);
    default: return (int)cudaErrorInvalidValue;
    }
}

int tg_cuda_histc(int dtype, i64 n, const void *x, i64 bins, double low, double high, void *out) {
    DISPATCH_FLOAT(dtype, return histc(n, (const T *)x, bins, low, high, (T *)out))
    return 0;
}

int tg_cuda_runs(int dtype, i64 n, i64 count, const void *x, void *values, i64 *counts) {
    if (n == 0) return 0;
    DISPATCH(dtype, LAUNCH(1, 1, runs_of<T>)(n, count, (const T *)x, (T *)values, counts))
    return LAUNCHED();
}

}  // extern "C"
