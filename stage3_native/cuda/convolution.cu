/* Convolution's and pooling's window kernels for device "cuda" (chapter on convolutional
 * networks, "im2col"); compare csrc/convolution.c and pooling.c, which explain them, and
 * stage2_tensor/backend.py's table. The CPU walks a window's row with a loop; here each
 * thread takes one element and works its window positions out from its index:
 *
 *   im2col     one thread per column element (plane, k, l): the input it reads, or fill
 *   col2im     one thread per input element: the sum over the kernel positions k of the
 *              column elements that read it (the outputs o with o * stride - before +
 *              k * dilation = its position), in k order: no atomics, the same order of
 *              additions as the CPU's, and the same bits from run to run
 *   max_pool   one thread per output: its window's maximum and position
 *   max_pool_backward  one thread per output: its gradient added at its position with
 *              atomicAdd (windows that overlap may pick one element twice; the order of
 *              those additions is the hardware's)
 *   conv_direct one thread per output: the definition's sum, in double
 *
 * The geometry travels by value (a Windows struct of TG_MAX_DIMS-long arrays), checked on
 * the host by stage2_tensor/contracts.py first, as for the CPU. */
#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

struct Windows {
    int n;
    i64 spatial[TG_MAX_DIMS], kernel[TG_MAX_DIMS], stride[TG_MAX_DIMS], before[TG_MAX_DIMS],
        dilation[TG_MAX_DIMS], out[TG_MAX_DIMS];
    i64 P, K, L;

    /* where output l reads the input at kernel position k: a flat position in the plane,
     * or -1 in the padding */
    __device__ __forceinline__ i64 read(i64 k, i64 l) const {
        i64 flat = 0, step = 1;
        bool inside = true;
        for (int d = n - 1; d >= 0; d--) {
            i64 p = (l % out[d]) * stride[d] - before[d] + (k % kernel[d]) * dilation[d];
            l /= out[d];
            k /= kernel[d];
            inside = inside && p >= 0 && p < spatial[d];
            flat += p * step;
            step *= spatial[d];
        }
        return inside ? flat : -1;
    }

    /* which output reads input position p (flat) at kernel position k, or -1 if none */
    __device__ __forceinline__ i64 reader(i64 k, i64 p) const {
        i64 flat = 0, step = 1;
        for (int d = n - 1; d >= 0; d--) {
            i64 t = p % spatial[d] + before[d] - (k % kernel[d]) * dilation[d];
            p /= spatial[d];
            k /= kernel[d];
            if (t < 0 || t % stride[d] || t / stride[d] >= out[d]) return -1;
            flat += t / stride[d] * step;
            step *= out[d];
        }
        return flat;
    }
};

Windows windows_of(int n, const i64 *spatial, const i64 *kernel, const i64 *stride, const i64 *before,
                   const i64 *dilation, const i64 *out) {
    Windows w;
    w.n = n;
    w.P = w.K = w.L = 1;
    for (int d = 0; d < n; d++) {
        w.spatial[d] = spatial[d];
        w.kernel[d] = kernel[d];
        w.stride[d] = stride[d];
        w.before[d] = before[d];
        w.dilation[d] = dilation[d];
        w.out[d] = out[d];
        w.P *= spatial[d];
        w.K *= kernel[d];
        w.L *= out[d];
    }
    return w;
}

template <typename T>
__global__ void im2col_kernel(i64 n, Windows w, const T *x, T fill, T *cols) {
    for_each_index(i, n) {
        i64 l = i % w.L, k = i / w.L % w.K, plane = i / (w.L * w.K);
        i64 p = w.read(k, l);
        cols[i] = p < 0 ? fill : x[plane * w.P + p];
    }
}

template <typename T>
__global__ void col2im_kernel(i64 n, Windows w, const T *cols, T *x) {
    for_each_index(i, n) {
        i64 p = i % w.P, plane = i / w.P;
        T sum = 0;
        for (i64 k = 0; k < w.K; k++) {
            i64 l = w.reader(k, p);
            if (l >= 0) sum += cols[(plane * w.K + k) * w.L + l];
        }
        x[i] = sum;
    }
}

template <typename T>
__global__ void max_pool_kernel(i64 n, Windows w, const T *x, T *y, i64 *where) {
    for_each_index(i, n) {
        i64 l = i % w.L, plane = i / w.L;
        T best = -INFINITY;
        i64 at = -1;
        for (i64 k = 0; k < w.K; k++) {
            i64 p = w.read(k, l);
            if (p < 0) continue;
            T v = x[plane * w.P + p];
            if (v > best || at < 0 || (v != v && best == best)) {     /* a NaN wins */
                best = v;
                at = p;
            }
        }
        y[i] = best;
        where[i] = at;
    }
}

template <typename T>
__global__ void max_pool_backward_kernel(i64 n, i64 P, i64 L, const T *grad, const i64 *where, T *dx,
                                         i64 *bad) {
    for_each_index(i, n) {
        i64 p = where[i];
        if (p < -1 || p >= P) atomicMin((long long *)bad, (long long)i);
        else if (p >= 0) atomicAdd(&dx[i / L * P + p], grad[i]);
    }
}

template <typename T>
__global__ void conv_direct_kernel(i64 n, Windows w, i64 c_in, i64 c_out, i64 groups, const T *x,
                                   const T *weight, const T *bias, T *y) {
    for_each_index(i, n) {                             /* i = (b, co, l) */
        i64 l = i % w.L, co = i / w.L % c_out, b = i / (w.L * c_out);
        i64 cg = c_in / groups, g = co / (c_out / groups);
        double acc = bias ? (double)bias[co] : 0.0;
        for (i64 ci = 0; ci < cg; ci++)
            for (i64 k = 0; k < w.K; k++) {
                i64 p = w.read(k, l);
                if (p >= 0)
                    acc += (double)weight[(co * cg + ci) * w.K + k] * (double)x[(b * c_in + g * cg + ci) * w.P + p];
            }
        y[i] = (T)acc;
    }
}

}  // namespace

extern "C" {

#define GEOMETRY int n, const i64 *spatial, const i64 *kernel, const i64 *stride, const i64 *before, \
                 const i64 *dilation, const i64 *out
#define WINDOWS windows_of(n, spatial, kernel, stride, before, dilation, out)

int tg_cuda_im2col(int dtype, i64 planes, GEOMETRY, const void *x, double fill, void *cols) {
    Windows w = WINDOWS;
    i64 total = planes * w.K * w.L;
    if (total == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(total), THREADS, im2col_kernel<T>)(
                              total, w, (const T *)x, (T)fill, (T *)cols))
    return LAUNCHED();
}

int tg_cuda_col2im(int dtype, i64 planes, GEOMETRY, const void *cols, void *x) {
    Windows w = WINDOWS;
    i64 total = planes * w.P;
    if (total == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(total), THREADS, col2im_kernel<T>)(
                              total, w, (const T *)cols, (T *)x))
    return LAUNCHED();
}

int tg_cuda_max_pool(int dtype, i64 planes, GEOMETRY, const void *x, void *y, i64 *where) {
    Windows w = WINDOWS;
    i64 total = planes * w.L;
    if (total == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(total), THREADS, max_pool_kernel<T>)(
                              total, w, (const T *)x, (T *)y, where))
    return LAUNCHED();
}

int tg_cuda_max_pool_backward(int dtype, i64 planes, i64 P, i64 L, const void *grad, const i64 *where,
                              void *dx, i64 *bad_position) {
    *bad_position = -1;
    i64 total = planes * L;
    if (total == 0) return 0;
    i64 *bad = bad_index_word();
    if (!bad) return (int)cudaErrorMemoryAllocation;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(total), THREADS, max_pool_backward_kernel<T>)(
                              total, P, L, (const T *)grad, where, (T *)dx, bad))
    int status;
    *bad_position = read_bad_index(&status);
    return status;
}

int tg_cuda_conv_direct(int dtype, i64 batch, i64 c_in, i64 c_out, i64 groups, GEOMETRY, const void *x,
                        const void *weight, const void *bias, void *y) {
    Windows w = WINDOWS;
    i64 total = batch * c_out * w.L;
    if (total == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(total), THREADS, conv_direct_kernel<T>)(
                              total, w, c_in, c_out, groups, (const T *)x, (const T *)weight,
                              (const T *)bias, (T *)y))
    return LAUNCHED();
}

#undef GEOMETRY
#undef WINDOWS
}  // extern "C"
