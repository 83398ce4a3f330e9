/* What every .cu file of device "cuda" shares (chapter on native kernels, section "CUDA"):
 * the runtime (NVIDIA's, or emulate.cuh's on the CPU), how a kernel is launched and how
 * many blocks it gets, dtype dispatch, and strided layouts.
 *
 * Kernels walk their elements with grid-stride loops (for_each_index): any grid size
 * covers any n, so the host picks the grid for speed alone; the emulator gives every
 * launch two blocks, which still exercises the loop across blocks. */
#ifndef TG_RUNTIME_CUH
#define TG_RUNTIME_CUH
#ifdef TG_CUDA_EMULATE
#include "emulate.cuh"
#define LAUNCH(grid, block, ...) emu::launch((grid), (block), __VA_ARGS__)
#define TG_MAX_BLOCKS 2
#else
#include <cuda_runtime.h>
#include <cmath>
#include <cstdint>
#define LAUNCH(grid, block, ...) __VA_ARGS__<<<(grid), (block)>>>
#define TG_MAX_BLOCKS 65535
#endif
#include "tracegrad_cuda.h"

#define THREADS 256                     /* threads per block, a power of two (tree reductions) */

static inline unsigned blocks_for(i64 n, i64 per_block = THREADS) {
    i64 blocks = (n + per_block - 1) / per_block;
    return (unsigned)(blocks < 1 ? 1 : blocks > TG_MAX_BLOCKS ? TG_MAX_BLOCKS : blocks);
}

/* Every index in [0, n) once, spread over all the grid's threads */
#define for_each_index(i, n) \
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)gridDim.x * blockDim.x)
/* Every row in [0, rows) once, a whole block per row (softmax, layer norm, reductions) */
#define for_each_row(row, rows) for (i64 row = blockIdx.x; row < (rows); row += gridDim.x)

/* The status of the launch just made: errors in its configuration show here, errors while
 * it runs at the next synchronizing call (a copy to the host). */
#define LAUNCHED() ((int)cudaGetLastError())

/* Run CALL with T the C type of dtype code DTYPE (0 bool, 1 int32, 2 int64, 3 float32,
 * 4 float64), as cpu/backend.py numbers them. */
#define DISPATCH(DTYPE, CALL) \
    switch (DTYPE) { \
    case 0: { typedef uint8_t T; CALL; break; } \
    case 1: { typedef int32_t T; CALL; break; } \
    case 2: { typedef int64_t T; CALL; break; } \
    case 3: { typedef float T; CALL; break; } \
    default: { typedef double T; CALL; break; } \
    }
#define DISPATCH_FLOAT(DTYPE, CALL) \
    switch (DTYPE) { \
    case 3: { typedef float T; CALL; break; } \
    default: { typedef double T; CALL; break; } \
    }

/* The type element-wise math runs in: the float types themselves, 64-bit integers for the
 * integer ones (exact; stage2 converts integer tensors to float before exp, log, true
 * division) */
template <typename T> struct Compute { typedef int64_t type; };
template <> struct Compute<float> { typedef float type; };
template <> struct Compute<double> { typedef double type; };

/* N strided operands over one shape, passed to a kernel by value: the element at row-major
 * index i of the shape is operand k's element offset[k] + sum_d idx[d] * strides[k][d]. */
template <int N>
struct Strided {
    int ndim;
    bool contiguous;                    /* every operand: element i at offset + i */
    i64 shape[TG_MAX_DIMS];
    i64 strides[N][TG_MAX_DIMS];
    i64 offset[N];

    __device__ __forceinline__ void locate(i64 i, i64 *pos) const {
        for (int k = 0; k < N; k++) pos[k] = offset[k] + (contiguous ? i : 0);
        if (contiguous) return;
        for (int d = ndim - 1; d >= 0; d--) {
            i64 index = i % shape[d];
            i /= shape[d];
            for (int k = 0; k < N; k++) pos[k] += index * strides[k][d];
        }
    }
};

/* The layout of N operands, with neighbouring dimensions that every operand steps through
 * as one merged and size-1 dimensions dropped (csrc/strided.h's tg_collapse): fewer
 * divisions per element, and a contiguous tensor becomes one dimension. */
template <int N>
static Strided<N> strided(int ndim, const i64 *shape, const i64 *const *strides, const i64 *offsets) {
    Strided<N> s;
    s.ndim = 0;
    for (int k = 0; k < N; k++) s.offset[k] = offsets[k];
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) continue;
        bool merge = s.ndim > 0;
        for (int k = 0; k < N && merge; k++)
            merge = s.strides[k][s.ndim - 1] == strides[k][d] * shape[d];
        if (merge) {
            s.shape[s.ndim - 1] *= shape[d];
            for (int k = 0; k < N; k++) s.strides[k][s.ndim - 1] = strides[k][d];
        } else {
            s.shape[s.ndim] = shape[d];
            for (int k = 0; k < N; k++) s.strides[k][s.ndim] = strides[k][d];
            s.ndim++;
        }
    }
    s.contiguous = s.ndim == 0;
    if (s.ndim == 1) {
        s.contiguous = true;
        for (int k = 0; k < N; k++) s.contiguous = s.contiguous && s.strides[k][0] == 1;
    }
    return s;
}

static inline i64 numel(int ndim, const i64 *shape) {
    i64 n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

/* Index checks (gather, scatter-add, cross-entropy targets): kernels record the smallest
 * position of a bad index in a device word; right after launching such a kernel, the host
 * calls read_bad_index, which sets *status to the launch's status (or the copy's) and
 * reads the word back (memory.cu). -1 (INT64_MAX on the device) means every index was in
 * range, or that *status is an error. */
i64 *bad_index_word(void);
i64 read_bad_index(int *status);
#define NO_BAD_INDEX INT64_MAX
#endif
