/* Clamp between two numbers for device "cuda"; compare csrc/clamp.c. One thread per element:
 * raised to low, then lowered to high (a NaN compares false and stays). */
#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

template <typename T>
__global__ void clamp_elements(i64 n, T low, T high, const T *x, T *out) {
    for_each_index(i, n) {
        T v = x[i];
        v = v < low ? low : v;
        out[i] = v > high ? high : v;
    }
}

}  // namespace

extern "C" {

int tg_cuda_clamp(int dtype, i64 n, double low, double high, const void *view, void *out) {
    if (n == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(n), THREADS, clamp_elements<T>)(n, (T)low, (T)high, (const T *)view,
                                                                           (T *)out))
    return LAUNCHED();
}

}  // extern "C"
