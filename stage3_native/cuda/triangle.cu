/* Triangle (tril and triu) for device "cuda"; compare csrc/triangle.c. One thread per
 * element of the contiguous (batch, rows, cols) output: element (i, j) is copied where its
 * diagonal j - i is on the kept side of `diagonal`, else zero. */
#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

template <typename T>
__global__ void triangle_elements(i64 n, i64 rows, i64 cols, i64 diagonal, int upper, const T *x, T *out) {
    for_each_index(e, n) {
        i64 j = e % cols, i = e / cols % rows;
        bool keep = upper ? j - i >= diagonal : j - i <= diagonal;
        out[e] = keep ? x[e] : T(0);
    }
}

}  // namespace

extern "C" {

int tg_cuda_triangle(int dtype, i64 batch, i64 rows, i64 cols, i64 diagonal, int upper, const void *view, void *out) {
    i64 n = batch * rows * cols;
    if (n == 0) return 0;
    DISPATCH(dtype, LAUNCH(blocks_for(n), THREADS, triangle_elements<T>)(n, rows, cols, diagonal, upper,
                                                                          (const T *)view, (T *)out))
    return LAUNCHED();
}

}  // extern "C"
