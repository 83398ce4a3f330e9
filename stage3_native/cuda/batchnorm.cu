/* Batch normalization in training mode for device "cuda" (chapter on convolutional
 * networks, "batch normalization"): the formulas of csrc/batchnorm.c, one kernel each way.
 * x is contiguous (N, C, S): channel c's elements are N runs of S.
 *
 *   forward    a block per channel: the channel's sum, then the sum of its squared
 *              deviations (from the centred values), each a tree in shared memory
 *              (team.cuh's BlockTeam), in double; then out = x * scale + shift.
 *   backward   a block per channel: sum g and sum g (x - mean), then dx; the block's
 *              leader writes dweight and dbias. Each channel is summed by one block in a
 *              fixed order, so there are no atomics and the same bits every run.
 *
 * A U-net's layers have tens of channels, each of N * S = thousands of elements: a block
 * per channel keeps that many blocks busy, each of THREADS threads reading consecutive
 * elements of a run.
 */
#include "team.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

/* the position of element i (of N * S) of channel c */
__device__ __forceinline__ i64 at(i64 channels, i64 size, i64 c, i64 i) {
    return (i / size * channels + c) * size + i % size;
}

template <typename T>
__global__ void batch_norm_channels(i64 batch, i64 channels, i64 size, const T *x, const T *weight,
                                    const T *bias, double eps, T *out, T *mean, T *var) {
    i64 count = batch * size;
    for_each_team_row(BlockTeam, c, channels) {
        double sum = 0, squares = 0;
        for_each_lane(BlockTeam, i, count) sum += (double)x[at(channels, size, c, i)];
        double m = BlockTeam::sum(sum) / (double)count;
        for_each_lane(BlockTeam, i, count) {
            double d = (double)x[at(channels, size, c, i)] - m;
            squares += d * d;
        }
        double v = BlockTeam::sum(squares) / (double)count, s = 1.0 / sqrt(v + eps);
        double scale = (weight ? (double)weight[c] : 1.0) * s;
        if (BlockTeam::leader()) {
            mean[c] = (T)m;
            var[c] = (T)v;
        }
        T st = (T)scale, sh = (T)((bias ? (double)bias[c] : 0.0) - m * scale);
        for_each_lane(BlockTeam, i, count) {
            i64 p = at(channels, size, c, i);
            out[p] = x[p] * st + sh;
        }
    }
}

template <typename T>
__global__ void batch_norm_backward_channels(i64 batch, i64 channels, i64 size, const T *grad, const T *x,
                                             const T *mean, const T *var, const T *weight, double eps, T *dx,
                                             T *dweight, T *dbias) {
    i64 count = batch * size;
    for_each_team_row(BlockTeam, c, channels) {
        double m = (double)mean[c], s = 1.0 / sqrt((double)var[c] + eps), sum_g = 0, sum_gx = 0;
        for_each_lane(BlockTeam, i, count) {
            i64 p = at(channels, size, c, i);
            sum_g += (double)grad[p];
            sum_gx += (double)grad[p] * ((double)x[p] - m);
        }
        sum_g = BlockTeam::sum(sum_g);
        sum_gx = BlockTeam::sum(sum_gx) * s;                  /* sum g * xhat */
        if (BlockTeam::leader()) {
            dweight[c] = (T)sum_gx;
            dbias[c] = (T)sum_g;
        }
        double k = (weight ? (double)weight[c] : 1.0) * s;
        T kt = (T)k, a = (T)(sum_g / (double)count), b = (T)(s * sum_gx / (double)count), mt = (T)m;
        for_each_lane(BlockTeam, i, count) {
            i64 p = at(channels, size, c, i);
            dx[p] = kt * (grad[p] - a - (x[p] - mt) * b);
        }
    }
}

}  // namespace

extern "C" {

int tg_cuda_batch_norm(int dtype, i64 batch, i64 channels, i64 size, const void *x, const void *weight,
                       const void *bias, double eps, void *out, void *mean, void *var) {
    if (channels == 0) return 0;
    DISPATCH_FLOAT(dtype, {
        LAUNCH(blocks_for(channels, 1), THREADS, batch_norm_channels<T>)(
            batch, channels, size, (const T *)x, (const T *)weight, (const T *)bias, eps, (T *)out, (T *)mean,
            (T *)var);
        return LAUNCHED();
    })
    return 0;
}

int tg_cuda_batch_norm_backward(int dtype, i64 batch, i64 channels, i64 size, const void *grad, const void *x,
                                const void *mean, const void *var, const void *weight, double eps, void *dx,
                                void *dweight, void *dbias) {
    if (channels == 0) return 0;
    DISPATCH_FLOAT(dtype, {
        LAUNCH(blocks_for(channels, 1), THREADS, batch_norm_backward_channels<T>)(
            batch, channels, size, (const T *)grad, (const T *)x, (const T *)mean, (const T *)var,
            (const T *)weight, eps, (T *)dx, (T *)dweight, (T *)dbias);
        return LAUNCHED();
    })
    return 0;
}

}  // extern "C"
