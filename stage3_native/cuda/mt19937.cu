/* The random factories' numbers for device "cuda", drawn from the state of Python's own
 * generator; compare csrc/mt19937.c, and csrc/mt19937.h, which explains the generator and
 * the draws and is included here, so both libraries run the same code.
 *
 * The Mersenne Twister is sequential: each output is the next step of one state, and the
 * numbers must be Python's, bit for bit, with the C math library's log, sin and cos
 * (a GPU's differ in the last bits). So the numbers are drawn on the host, as the CPU
 * library draws them, a chunk at a time, and each chunk is copied to the GPU: the host
 * memory taken is one chunk's, whatever n. */
#include <cstdlib>
#include "runtime.cuh"
#include "../csrc/mt19937.h"   /* the generator and the draws, shared with the CPU */

namespace {         /* private to this file: other .cu files may use the same names */

const i64 CHUNK = 1 << 16;              /* elements drawn on the host per copy */

/* out[i] = draw() for i < n, out in device memory */
template <typename T, typename Draw>
int drawn(i64 n, T *out, Draw draw) {
    if (n == 0) return 0;
    T *host = (T *)std::malloc(sizeof(T) * (size_t)(n < CHUNK ? n : CHUNK));
    if (host == NULL) return (int)cudaErrorMemoryAllocation;
    int status = 0;
    for (i64 start = 0; start < n && status == 0; start += CHUNK) {
        i64 m = n - start < CHUNK ? n - start : CHUNK;
        for (i64 i = 0; i < m; i++) host[i] = draw();
        status = (int)cudaMemcpy(out + start, host, sizeof(T) * (size_t)m, cudaMemcpyHostToDevice);
    }
    std::free(host);
    return status;
}

}  // namespace

extern "C" {

/* state: 625 words, spare: 2 doubles, both host memory, updated in place; out: n elements */
int tg_cuda_mt19937_floats(int dtype, uint32_t *state, double *spare, i64 n, int distribution, double a,
                           double b, void *out) {
    DISPATCH_FLOAT(dtype, return drawn(n, (T *)out, [&] {
        return (T)tg_mt_draw(state, spare, distribution, a, b);
    }))
}

int tg_cuda_mt19937_integers(int dtype, uint32_t *state, i64 n, i64 low, uint64_t width, void *out) {
    (void)dtype;                        /* int64, the one dtype declared */
    int k = tg_mt_bit_length(width);
    return drawn(n, (int64_t *)out, [&] { return (int64_t)((uint64_t)low + tg_mt_below(state, width, k)); });
}

}  // extern "C"
