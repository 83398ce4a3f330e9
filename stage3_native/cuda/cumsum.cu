/* Running sums (cumsum) for device "cuda" (chapter on native kernels, section "CUDA");
 * compare csrc/cumsum.c. x is contiguous, viewed as (outer, size, inner) with the summed
 * dimension in the middle: row r is `size` elements `inner` apart. Each row is summed in
 * order by one thread, in double for the float types and int64 for the integer ones (as
 * on the CPU: the same bits), each running sum rounded to T as it is stored, so a nan or
 * an infinity reaches the sums from its position on and no earlier one.
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

}  // namespace

extern "C" {

int tg_cuda_cumsum(int dtype, i64 outer, i64 size, i64 inner, const void *x, void *out) {
    i64 rows = outer * inner;
    if (rows == 0 || size == 0) return 0;
    DISPATCH(dtype, LAUNCH(blocks_for(rows), THREADS, cumsum_rows<T>)(
                        rows, size, inner, (const T *)x, (T *)out))
    return LAUNCHED();
}

}  // extern "C"
