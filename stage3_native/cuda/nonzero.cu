/* nonzero for device "cuda"; compare csrc/nonzero.c. Each row's place in the output depends
 * on every element before it, so this walks the tensor in one thread: correct on any size,
 * and as slow as one GPU thread is (a block-wide prefix sum of the flags would place every
 * row at once). */
#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

struct Shape {
    int ndim;
    i64 extent[TG_MAX_DIMS];
};

template <typename T>
__global__ void nonzero_walk(i64 n, Shape s, i64 count, const T *x, i64 *out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    i64 found = 0;
    for (i64 i = 0; i < n && found < count; i++) {
        if (x[i] == 0) continue;
        i64 rest = i;
        for (int d = s.ndim - 1; d >= 0; d--) {
            out[found * s.ndim + d] = rest % s.extent[d];
            rest /= s.extent[d];
        }
        found++;
    }
    for (i64 j = found * s.ndim; j < count * s.ndim; j++) out[j] = 0;
}

}  // namespace

extern "C" {

int tg_cuda_nonzero(int dtype, int ndim, const i64 *shape, i64 count, const void *view, i64 *out) {
    if (count == 0) return 0;
    Shape s;
    s.ndim = ndim;
    for (int d = 0; d < ndim; d++) s.extent[d] = shape[d];
    DISPATCH(dtype, LAUNCH(1, 1, nonzero_walk<T>)(numel(ndim, shape), s, count, (const T *)view, out))
    return LAUNCHED();
}

}  // extern "C"
