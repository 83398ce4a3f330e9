/* Padding and interpolation for device "cuda" (chapter on convolutional networks, "padding
 * and upsampling"); compare csrc/resample.c, which explains them, and the formulas of
 * stage2_tensor/sampling_grid.py, repeated here in double operation for operation. Each
 * thread takes one output element and works its source out from its index:
 *
 *   pad                  one thread per output: the input position it reads, or the fill
 *   pad_backward         one thread per output: its gradient added where it was read,
 *                        with atomicAdd (reflect and replicate read an edge element more
 *                        than once; the order of those additions is the hardware's)
 *   interpolate          one thread per output: one read (nearest) or four mixed (bilinear)
 *   interpolate_backward one thread per output: its gradient added at the four positions,
 *                        times the weights, with atomicAdd (neighbouring outputs share them)
 *
 * The host zeroes dx before a backward kernel adds into it (cuda/backend.py). The geometry
 * travels by value, checked on the host by stage2_tensor/contracts.py first. */
#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_REPLICATE, PAD_CIRCULAR };   /* contracts.PAD_CODES */

struct Padding {
    int n, mode;
    i64 spatial[TG_MAX_DIMS], before[TG_MAX_DIMS], outer[TG_MAX_DIMS];
    i64 P, Q;                                          /* input and output plane sizes */

    /* sampling_grid.pad_source along dimension d, or -1 for the fill */
    __device__ __forceinline__ i64 source(int d, i64 i) const {
        i64 size = spatial[d];
        if (i >= 0 && i < size) return i;
        switch (mode) {
        case PAD_REFLECT: return i < 0 ? -i : 2 * (size - 1) - i;
        case PAD_REPLICATE: return i < 0 ? 0 : size - 1;
        case PAD_CIRCULAR: return ((i % size) + size) % size;
        default: return -1;
        }
    }

    /* the flat position in the input plane that output position q reads, or -1 */
    __device__ __forceinline__ i64 read(i64 q) const {
        i64 flat = 0, step = 1;
        for (int d = n - 1; d >= 0; d--) {
            i64 p = source(d, q % outer[d] - before[d]);
            q /= outer[d];
            if (p < 0) return -1;
            flat += p * step;
            step *= spatial[d];
        }
        return flat;
    }
};

Padding padding_of(int n, const i64 *spatial, const i64 *before, const i64 *after, int mode) {
    Padding g;
    g.n = n;
    g.mode = mode;
    g.P = g.Q = 1;
    for (int d = 0; d < n; d++) {
        g.spatial[d] = spatial[d];
        g.before[d] = before[d];
        g.outer[d] = spatial[d] + before[d] + after[d];
        g.P *= spatial[d];
        g.Q *= g.outer[d];
    }
    return g;
}

template <typename T>
__global__ void pad_kernel(i64 total, Padding g, T fill, const T *x, T *y) {
    for_each_index(i, total) {
        i64 p = g.read(i % g.Q);
        y[i] = p < 0 ? fill : x[i / g.Q * g.P + p];
    }
}

template <typename T>
__global__ void pad_backward_kernel(i64 total, Padding g, const T *grad, T *dx) {
    for_each_index(i, total) {
        i64 p = g.read(i % g.Q);
        if (p >= 0) atomicAdd(&dx[i / g.Q * g.P + p], grad[i]);
    }
}

/* sampling_grid.interpolation_source for output position j */
__device__ __forceinline__ void source(i64 j, i64 size, double step, int linear, int align_corners, i64 *first,
                                       i64 *second, double *weight) {
    if (!linear) {
        i64 i = (i64)floor((double)j * step);
        *first = *second = i < size - 1 ? i : size - 1;
        *weight = 0.0;
        return;
    }
    double c = align_corners ? (double)j * step : ((double)j + 0.5) * step - 0.5;
    if (c < 0.0) c = 0.0;
    i64 i = (i64)c < size - 1 ? (i64)c : size - 1;
    *first = i;
    *second = i + 1 < size - 1 ? i + 1 : size - 1;
    *weight = c - (double)i;
}

struct Resampling {
    i64 h, w, oh, ow;
    double step_h, step_w;
    int linear, align_corners;
};

template <typename T>
__global__ void interpolate_kernel(i64 total, Resampling r, const T *x, T *y) {
    for_each_index(i, total) {
        i64 j = i % r.ow, row = i / r.ow % r.oh, plane = i / (r.ow * r.oh), y0, y1, x0, x1;
        double wy, wx;
        source(row, r.h, r.step_h, r.linear, r.align_corners, &y0, &y1, &wy);
        source(j, r.w, r.step_w, r.linear, r.align_corners, &x0, &x1, &wx);
        const T *src = x + plane * r.h * r.w;
        if (!r.linear) {                            /* one read: no 0 * inf from a second */
            y[i] = src[y0 * r.w + x0];
            continue;
        }
        T b = (T)wy, a = (T)(1.0 - wy), rt = (T)wx, l = (T)(1.0 - wx);
        y[i] = a * (l * src[y0 * r.w + x0] + rt * src[y0 * r.w + x1]) +
               b * (l * src[y1 * r.w + x0] + rt * src[y1 * r.w + x1]);
    }
}

template <typename T>
__global__ void interpolate_backward_kernel(i64 total, Resampling r, const T *grad, T *dx) {
    for_each_index(i, total) {
        i64 j = i % r.ow, row = i / r.ow % r.oh, plane = i / (r.ow * r.oh), y0, y1, x0, x1;
        double wy, wx;
        source(row, r.h, r.step_h, r.linear, r.align_corners, &y0, &y1, &wy);
        source(j, r.w, r.step_w, r.linear, r.align_corners, &x0, &x1, &wx);
        T *d = dx + plane * r.h * r.w, g = grad[i];
        if (!r.linear) {
            atomicAdd(&d[y0 * r.w + x0], g);
            continue;
        }
        T b = (T)wy, a = (T)(1.0 - wy), rt = (T)wx, l = (T)(1.0 - wx);
        atomicAdd(&d[y0 * r.w + x0], a * l * g);
        atomicAdd(&d[y0 * r.w + x1], a * rt * g);
        atomicAdd(&d[y1 * r.w + x0], b * l * g);
        atomicAdd(&d[y1 * r.w + x1], b * rt * g);
    }
}

}  // namespace

extern "C" {

int tg_cuda_pad(int dtype, i64 planes, int n, const i64 *spatial, const i64 *before, const i64 *after, int mode,
                double value, const void *x, void *y) {
    Padding g = padding_of(n, spatial, before, after, mode);
    i64 total = planes * g.Q;
    if (total == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(total), THREADS, pad_kernel<T>)(total, g, (T)value, (const T *)x,
                                                                            (T *)y))
    return LAUNCHED();
}

int tg_cuda_pad_backward(int dtype, i64 planes, int n, const i64 *spatial, const i64 *before, const i64 *after,
                         int mode, const void *grad, void *dx) {
    Padding g = padding_of(n, spatial, before, after, mode);
    i64 total = planes * g.Q;
    if (total == 0 || g.P == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(total), THREADS, pad_backward_kernel<T>)(total, g, (const T *)grad,
                                                                                     (T *)dx))
    return LAUNCHED();
}

int tg_cuda_interpolate(int dtype, i64 planes, i64 h, i64 w, i64 oh, i64 ow, double step_h, double step_w,
                        int linear, int align_corners, const void *x, void *y) {
    Resampling r = {h, w, oh, ow, step_h, step_w, linear, align_corners};
    i64 total = planes * oh * ow;
    if (total == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(total), THREADS, interpolate_kernel<T>)(total, r, (const T *)x,
                                                                                    (T *)y))
    return LAUNCHED();
}

int tg_cuda_interpolate_backward(int dtype, i64 planes, i64 h, i64 w, i64 oh, i64 ow, double step_h,
                                 double step_w, int linear, int align_corners, const void *grad, void *dx) {
    Resampling r = {h, w, oh, ow, step_h, step_w, linear, align_corners};
    i64 total = planes * oh * ow;
    if (total == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(total), THREADS, interpolate_backward_kernel<T>)(
                              total, r, (const T *)grad, (T *)dx))
    return LAUNCHED();
}

}  // extern "C"
