/* Dropout, fused, for device "cuda" (chapter on native kernels, section "CUDA"); compare
 * csrc/dropout.c, which explains the generator. Element i is kept iff the top 53 bits of
 * output i of SplitMix64 seeded with `seed`, as a uniform in [0, 1), are >= p; a kept
 * element is x_i * (1 / (1 - p)), a dropped one x_i * 0 (nan stays nan), the product in
 * double rounded to T once.
 *
 * That generator is what makes a GPU kernel simple: element i's decision depends on
 * (seed, i) alone, not on a generator's state, so each GPU thread hashes its own i and no
 * thread waits for another. And since it is the same integer arithmetic on the same
 * (seed, i), devices "python", "cpu" and "cuda" drop exactly the same elements. The
 * mask is never stored: the backward pass is this kernel on the upstream gradient, with
 * the same seed. */
#include <math.h>
#include "runtime.cuh"
#include "../csrc/dropout_math.h"   /* the generator and keep-test, shared with the CPU */

namespace {         /* private to this file: other .cu files may use the same names */

/* kept iff bits >= threshold = ceil(p * 2^53): u >= p compared exactly in integers
 * (csrc/dropout_math.h) */
template <typename T>
__global__ void dropout_kernel(i64 n, const T *x, uint64_t seed, uint64_t threshold, double scale, T *out) {
    for_each_index(i, n)
        out[i] = (T)((double)x[i] * (tg_dropout_keep(seed, (uint64_t)i, threshold) ? scale : 0.0));
}

}  // namespace

extern "C" {

/* x, out: n contiguous elements (i counts x's elements in row-major order) */
int tg_cuda_dropout(int dtype, i64 n, const void *x, uint64_t seed, double p, void *out) {
    if (n == 0) return 0;
    uint64_t threshold = tg_dropout_threshold(p);
    double scale = 1.0 / (1.0 - p);
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(n), THREADS, dropout_kernel<T>)(
                              n, (const T *)x, seed, threshold, scale, (T *)out))
    return LAUNCHED();
}

}  // extern "C"
