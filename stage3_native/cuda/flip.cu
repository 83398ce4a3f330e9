/* Flip for device "cuda" (chapter on native kernels, section "CUDA"); compare csrc/flip.c.
 * Output element i (row-major over `shape`) reads x at start + sum_d index_d * steps[d],
 * the steps negative along the flipped dimensions: one thread per output element, the
 * walk a Strided layout (runtime.cuh) whose strides happen to be negative there, so the
 * neighbouring dimensions it merges are merged here too. */
#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

template <typename T>
__global__ void flip_elements(i64 n, Strided<1> walk, const T *x, T *out) {
    for_each_index(i, n) {
        i64 at;
        walk.locate(i, &at);
        out[i] = x[at];
    }
}

}  // namespace

extern "C" {

int tg_cuda_flip(int dtype, int ndim, const i64 *shape, const i64 *steps, i64 start, const void *view, void *out) {
    i64 n = numel(ndim, shape);
    if (n == 0) return 0;
    Strided<1> walk = strided<1>(ndim, shape, &steps, &start);
    DISPATCH(dtype, LAUNCH(blocks_for(n), THREADS, flip_elements<T>)(n, walk, (const T *)view, (T *)out))
    return LAUNCHED();
}

}  // extern "C"
