/* Who works on a row, for the kernels that reduce along rows and then use the result in
 * the same row (softmax.cu, layernorm.cu, mse.cu's block sums; chapter on native kernels,
 * section "CUDA").
 *
 *   BlockTeam   a block per row: its threads share the row's elements (lane t takes t,
 *               t + blockDim, ...) and add their partial results in a tree in shared
 *               memory, halving the live slots each step.
 *   ThreadTeam  a thread per row: it sees every element itself, so there is nothing to
 *               combine and no barrier. For short rows (at most a warp's 32 elements),
 *               where a block would leave most of its threads idle.
 *
 * A kernel written against a Team (template parameter) walks its rows with
 * for_each_team_row and a row's elements with for_each_lane, and works either way. */
#ifndef TG_TEAM_CUH
#define TG_TEAM_CUH
#include "runtime.cuh"

#define WARP 32

struct BlockTeam {
    static __device__ __forceinline__ i64 first_row() { return blockIdx.x; }
    static __device__ __forceinline__ i64 row_step() { return gridDim.x; }
    static __device__ __forceinline__ i64 lane() { return threadIdx.x; }
    static __device__ __forceinline__ i64 lanes() { return blockDim.x; }
    static __device__ __forceinline__ bool leader() { return threadIdx.x == 0; }
    /* The block's total (or maximum), to every thread: every thread of the block must call
     * it (it has barriers); the last barrier lets all read the result before the next call
     * overwrites the slots. blockDim.x is THREADS, a power of two. */
    static __device__ double sum(double v) {
        __shared__ double slots[THREADS];
        slots[threadIdx.x] = v;
        __syncthreads();
        for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
            if (threadIdx.x < s) slots[threadIdx.x] += slots[threadIdx.x + s];
            __syncthreads();
        }
        double total = slots[0];
        __syncthreads();
        return total;
    }
    static __device__ double max(double v) {
        __shared__ double slots[THREADS];
        slots[threadIdx.x] = v;
        __syncthreads();
        for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
            if (threadIdx.x < s && slots[threadIdx.x + s] > slots[threadIdx.x])
                slots[threadIdx.x] = slots[threadIdx.x + s];
            __syncthreads();
        }
        double top = slots[0];
        __syncthreads();
        return top;
    }
};

struct ThreadTeam {
    static __device__ __forceinline__ i64 first_row() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
    static __device__ __forceinline__ i64 row_step() { return (i64)gridDim.x * blockDim.x; }
    static __device__ __forceinline__ i64 lane() { return 0; }
    static __device__ __forceinline__ i64 lanes() { return 1; }
    static __device__ __forceinline__ bool leader() { return true; }
    static __device__ __forceinline__ double sum(double v) { return v; }
    static __device__ __forceinline__ double max(double v) { return v; }
};

/* Every row in [0, rows) once, each to one team */
#define for_each_team_row(Team, r, rows) for (i64 r = Team::first_row(); r < (rows); r += Team::row_step())
/* The row's elements i in [0, size) this thread takes */
#define for_each_lane(Team, i, size) for (i64 i = Team::lane(); i < (size); i += Team::lanes())
#endif
