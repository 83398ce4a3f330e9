/* Roll for device "cuda" (chapter on native kernels, section "CUDA"); compare csrc/roll.c.
 * Output element (i_0, ..., i_n) reads x at ((i_d - shifts[d]) mod shape[d]) in each
 * dimension: one thread per output element, the shape and shifts passed by value. */
#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

struct Rolled {
    int ndim;
    i64 shape[TG_MAX_DIMS];
    i64 shifts[TG_MAX_DIMS];
};

template <typename T>
__global__ void roll_elements(i64 n, Rolled r, const T *x, T *out) {
    for_each_index(i, n) {
        i64 source = 0, rest = i, step = 1;
        for (int d = r.ndim - 1; d >= 0; d--) {
            i64 index = rest % r.shape[d];
            rest /= r.shape[d];
            index = index >= r.shifts[d] ? index - r.shifts[d] : index - r.shifts[d] + r.shape[d];
            source += index * step;
            step *= r.shape[d];
        }
        out[i] = x[source];
    }
}

}  // namespace

extern "C" {

int tg_cuda_roll(int dtype, int ndim, const i64 *shape, const i64 *shifts, const void *view, void *out) {
    i64 n = numel(ndim, shape);
    if (n == 0) return 0;
    Rolled r;
    r.ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        r.shape[d] = shape[d];
        r.shifts[d] = shifts[d];
    }
    DISPATCH(dtype, LAUNCH(blocks_for(n), THREADS, roll_elements<T>)(n, r, (const T *)view, (T *)out))
    return LAUNCHED();
}

}  // extern "C"
