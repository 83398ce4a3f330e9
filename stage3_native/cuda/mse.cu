/* The squared-error loss, fused, for device "cuda" (chapter on native kernels, section
 * "CUDA"); compare csrc/mse.c, whose semantics these kernels keep: diff = a - b (kept for
 * the backward pass), the losses diff^2 per element (reduction 0) or their sum (1) or mean
 * (2), summed in double; backward 2 * diff * grad * factor.
 *
 * The sum is the part a GPU does differently. The CPU adds the squares one after another;
 * here each block adds its threads' partial sums in a tree (shared memory, halving the
 * active threads at each step), writes one partial per block, and a second launch of one
 * block adds the partials the same way. Two launches instead of an atomicAdd per block
 * into one total: the order of the additions is then fixed by the grid, so a loss is the
 * same bits every run (floating-point addition is not associative). The result can differ
 * from the CPU's sequential sum in the last bits of the double before it is rounded to T. */
#include "team.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

template <typename T>
__global__ void mse_kernel(i64 n, const T *a, const T *b, int reduction, T *losses, T *diff,
                           double *block_sums) {
    double mine = 0;
    for_each_index(i, n) {
        T d = a[i] - b[i];
        diff[i] = d;
        if (reduction == 0) losses[i] = d * d;
        mine += (double)d * (double)d;
    }
    if (reduction == 0) return;                  /* the whole block returns: no barrier skipped */
    double total = BlockTeam::sum(mine);
    if (threadIdx.x == 0) block_sums[blockIdx.x] = total;
}

/* One block: the partials of mse_kernel's blocks into the loss. */
template <typename T>
__global__ void mse_total_kernel(i64 count, const double *block_sums, i64 n, int reduction, T *losses) {
    double mine = 0;
    for (i64 k = threadIdx.x; k < count; k += blockDim.x) mine += block_sums[k];
    double total = BlockTeam::sum(mine);
    if (threadIdx.x == 0) losses[0] = (T)(reduction == 2 ? total / (double)n : total);
}

template <typename T>
__global__ void mse_backward_kernel(i64 n, const T *diff, const T *grad, i64 grad_step, double factor, T *out) {
    for_each_index(i, n) out[i] = (T)(2.0 * (double)diff[i] * (double)grad[i * grad_step] * factor);
}

template <typename T>
static int mse_loss(i64 n, const T *a, const T *b, int reduction, T *losses, T *diff) {
    unsigned grid = blocks_for(n);
    if (reduction == 0) {
        if (n > 0) LAUNCH(grid, THREADS, mse_kernel<T>)(n, a, b, reduction, losses, diff, (double *)nullptr);
        return LAUNCHED();
    }
    int status;
    double *block_sums = (double *)tg_cuda_malloc(grid * sizeof(double), &status);
    if (!block_sums) return status;
    i64 count = 0;                               /* no element: a sum of 0, a mean of 0 / 0 */
    if (n > 0) {
        LAUNCH(grid, THREADS, mse_kernel<T>)(n, a, b, reduction, losses, diff, block_sums);
        count = grid;
    }
    LAUNCH(1, THREADS, mse_total_kernel<T>)(count, block_sums, n, reduction, losses);
    status = LAUNCHED();
    tg_cuda_free(block_sums);                    /* reused only by kernels queued after these */
    return status;
}

}  // namespace

extern "C" {

/* a, b, diff: n contiguous elements; losses: n (reduction 0) or 1 */
int tg_cuda_mse_loss(int dtype, i64 n, const void *a, const void *b, int reduction, void *losses, void *diff) {
    DISPATCH_FLOAT(dtype, return mse_loss<T>(n, (const T *)a, (const T *)b, reduction, (T *)losses, (T *)diff))
    return 0;
}

/* grad: n values (grad_step 1) or one (grad_step 0) */
int tg_cuda_mse_loss_backward(int dtype, i64 n, const void *diff, const void *grad, i64 grad_step,
                              double factor, void *out) {
    if (n == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(n), THREADS, mse_backward_kernel<T>)(
                              n, (const T *)diff, (const T *)grad, grad_step, factor, (T *)out))
    return LAUNCHED();
}

}  // extern "C"
