/* Running scans (cumsum, cumprod, cummax and cummin, logcumsumexp) for device "cuda"
 * (chapter on native kernels, section "CUDA"); compare csrc/cumsum.c. x is contiguous,
 * viewed as (outer, size, inner) with the scanned dimension in the middle: row r is `size`
 * elements `inner` apart. Each row is scanned in order by one thread, in double for the
 * float types and int64 for the integer ones (as on the CPU: the same bits), each running
 * result rounded to T as it is stored, so a nan or an infinity reaches the results from
 * its position on and no earlier one.
 *
 * A thread per row keeps the kernel small: neighbouring threads take neighbouring rows,
 * which are neighbours in memory when inner > 1, so a warp's reads come in one piece. One
 * long row is then one thread's work; a parallel scan across a block would be faster. */
#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

template <typename T> struct Wide { typedef int64_t type; };     /* what a row is summed in */
template <> struct Wide<float> { typedef double type; };
template <> struct Wide<double> { typedef double type; };

template <typename T>
__global__ void cumsum_rows(i64 rows, i64 size, i64 inner, const T *x, T *out) {
    for_each_index(r, rows) {
        i64 first = r / inner * size * inner + r % inner;         /* the row's element 0 */
        typename Wide<T>::type sum = 0;
        for (i64 i = 0; i < size; i++) {
            sum += x[first + i * inner];
            out[first + i * inner] = (T)sum;
        }
    }
}

template <typename T>
__global__ void cumprod_rows(i64 rows, i64 size, i64 inner, const T *x, T *out) {
    for_each_index(r, rows) {
        i64 first = r / inner * size * inner + r % inner;
        typename Wide<T>::type product = 1;
        for (i64 i = 0; i < size; i++) {
            product *= x[first + i * inner];
            out[first + i * inner] = (T)product;
        }
    }
}

template <typename T> __device__ bool is_nan(T) { return false; }
template <> __device__ bool is_nan(float v) { return v != v; }
template <> __device__ bool is_nan(double v) { return v != v; }

/* csrc/cumsum_t.h's rule: a NaN, or an element at least as large (small) as the extreme so
 * far, takes its place */
template <typename T>
__global__ void cummax_rows(i64 rows, i64 size, i64 inner, int smallest, const T *x, T *values, i64 *indices) {
    for_each_index(r, rows) {
        i64 first = r / inner * size * inner + r % inner, at = 0;
        T best = x[first];
        for (i64 i = 0; i < size; i++) {
            T v = x[first + i * inner];
            if (is_nan(v) || (!is_nan(best) && (smallest ? v <= best : v >= best))) {
                best = v;
                at = i;
            }
            values[first + i * inner] = best;
            indices[first + i * inner] = at;
        }
    }
}

/* csrc/logcumsumexp_t.h's running maximum m and sum s of e^(x - m), in double */
template <typename T>
__global__ void logcumsumexp_rows(i64 rows, i64 size, i64 inner, const T *x, T *out) {
    for_each_index(r, rows) {
        i64 first = r / inner * size * inner + r % inner;
        double m = -INFINITY, s = 0;
        for (i64 i = 0; i < size; i++) {
            double v = x[first + i * inner];
            if (v > m) {
                s = s * exp(m - v) + 1;
                m = v;
            } else {
                s += v == m ? 1 : exp(v - m);
            }
            out[first + i * inner] = (T)(m + log(s));
        }
    }
}

}  // namespace

extern "C" {

int tg_cuda_cumsum(int dtype, i64 outer, i64 size, i64 inner, const void *x, void *out) {
    i64 rows = outer * inner;
    if (rows == 0 || size == 0) return 0;
    DISPATCH(dtype, LAUNCH(blocks_for(rows), THREADS, cumsum_rows<T>)(
                        rows, size, inner, (const T *)x, (T *)out))
    return LAUNCHED();
}

int tg_cuda_cumprod(int dtype, i64 outer, i64 size, i64 inner, const void *x, void *out) {
    i64 rows = outer * inner;
    if (rows == 0 || size == 0) return 0;
    DISPATCH(dtype, LAUNCH(blocks_for(rows), THREADS, cumprod_rows<T>)(
                        rows, size, inner, (const T *)x, (T *)out))
    return LAUNCHED();
}

int tg_cuda_cummax(int dtype, i64 outer, i64 size, i64 inner, int smallest, const void *x, void *values,
                   i64 *indices) {
    i64 rows = outer * inner;
    if (rows == 0 || size == 0) return 0;
    DISPATCH(dtype, LAUNCH(blocks_for(rows), THREADS, cummax_rows<T>)(
                        rows, size, inner, smallest, (const T *)x, (T *)values, indices))
    return LAUNCHED();
}

int tg_cuda_logcumsumexp(int dtype, i64 outer, i64 size, i64 inner, const void *x, void *out) {
    i64 rows = outer * inner;
    if (rows == 0 || size == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(rows), THREADS, logcumsumexp_rows<T>)(
                              rows, size, inner, (const T *)x, (T *)out))
    return LAUNCHED();
}

}  // extern "C"
