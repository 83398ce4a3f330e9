/* Element-wise kernels for device "cuda": fill, strided copy with dtype conversion, unary
 * and binary ops (comparisons included) and where, on views broadcast to one shape (stride
 * 0 where stretched). Compare csrc/elementwise.c: the CPU walks each thread's share of
 * the elements with the thesis's index increment; here every GPU thread takes single
 * elements (a grid-stride loop) and finds each operand's element from the flat index
 * (Strided::locate), since neighbouring threads must read neighbouring elements. */
#include "ops_generated.h"      /* the op codes, from stage2_tensor/ops.py (ops_header.py) */
#include "runtime.cuh"
#include "../csrc/elementwise_math.h"   /* the formulas, shared with the C kernels */
#include "../csrc/half.h"               /* float16 / bfloat16 bits <-> float, as the CPU's */

namespace {         /* private to this file: other .cu files may use the same names */

/* Each switch is written by expanding the generated list of the ops declared in
 * stage2_tensor/ops.py (TG_UNARY_OPS, ops_header.py): one case per op, calling its formula
 * (elementwise_math.h) by the op's name, overloaded on the compute type. The return after
 * it is never reached. */
template <typename C> __device__ __forceinline__ C unary_op(int op, C x) {
#define UNARY(CODE, name) case CODE: return tg_##name(x);
    switch ((tg_unary_op)op) { TG_UNARY_OPS(UNARY) }
#undef UNARY
    return x;
}

template <typename C> __device__ __forceinline__ C binary_op(int op, C x, C y) {
#define BINARY(CODE, name) case CODE: return tg_##name(x, y);
    switch ((tg_binary_op)op) { TG_BINARY_OPS(BINARY) }
#undef BINARY
    return x;
}

template <typename C> __device__ __forceinline__ uint8_t compare_op(int op, C x, C y) {
#define COMPARE(CODE, name) case CODE: return tg_##name(x, y);
    switch ((tg_comparison_op)op) { TG_COMPARISON_OPS(COMPARE) }
#undef COMPARE
    return 0;
}

template <typename T> __global__ void fill_kernel(i64 n, T value, T *out) {
    for_each_index(i, n) out[i] = value;
}

/* float16 and bfloat16 (dtypes 5, 6) are only ever copied and filled: stage2 computes them
 * in float32 (backend.py, "Half precision"). Their bits, converted through float32 by
 * half.h's code, the same bits as the CPU's; a copy within one of them keeps the bits. */
struct Float16 {
    uint16_t bits;
    template <typename U> __host__ __device__ explicit Float16(U v) : bits(tg_f32_to_f16((float)v)) {}
    __host__ __device__ operator float() const { return tg_f16_to_f32(bits); }
};
struct BFloat16 {
    uint16_t bits;
    template <typename U> __host__ __device__ explicit BFloat16(U v) : bits(tg_f32_to_bf16((float)v)) {}
    __host__ __device__ operator float() const { return tg_bf16_to_f32(bits); }
};

/* The small ints (dtypes 7, 8, 9) are only copied and filled too (computed in int64). uint8
 * is a type of its own here: uint8_t is bool's, which converts by != 0. */
struct UInt8 {
    uint8_t v;
    template <typename U> __host__ __device__ explicit UInt8(U x) : v((uint8_t)(int64_t)x) {}
    __host__ __device__ operator int64_t() const { return v; }
};

/* runtime.cuh's DISPATCH, with the storage types (a copy's only) */
#define DISPATCH_COPY(DTYPE, ...) \
    switch (DTYPE) { \
    case 0: { typedef uint8_t T; __VA_ARGS__; break; } \
    case 1: { typedef int32_t T; __VA_ARGS__; break; } \
    case 2: { typedef int64_t T; __VA_ARGS__; break; } \
    case 3: { typedef float T; __VA_ARGS__; break; } \
    case 5: { typedef Float16 T; __VA_ARGS__; break; } \
    case 6: { typedef BFloat16 T; __VA_ARGS__; break; } \
    case 7: { typedef UInt8 T; __VA_ARGS__; break; } \
    case 8: { typedef int8_t T; __VA_ARGS__; break; } \
    case 9: { typedef int16_t T; __VA_ARGS__; break; } \
    default: { typedef double T; __VA_ARGS__; break; } \
    }

template <typename S, typename D> __device__ __forceinline__ D convert(S x) { return (D)x; }
template <> __device__ __forceinline__ uint8_t convert<Float16, uint8_t>(Float16 x) { return (float)x != 0; }
template <> __device__ __forceinline__ uint8_t convert<BFloat16, uint8_t>(BFloat16 x) { return (float)x != 0; }
template <> __device__ __forceinline__ uint8_t convert<float, uint8_t>(float x) { return x != 0; }
template <> __device__ __forceinline__ uint8_t convert<double, uint8_t>(double x) { return x != 0; }
template <> __device__ __forceinline__ uint8_t convert<int32_t, uint8_t>(int32_t x) { return x != 0; }
template <> __device__ __forceinline__ uint8_t convert<int64_t, uint8_t>(int64_t x) { return x != 0; }
template <> __device__ __forceinline__ uint8_t convert<UInt8, uint8_t>(UInt8 x) { return x.v != 0; }
template <> __device__ __forceinline__ uint8_t convert<int8_t, uint8_t>(int8_t x) { return x != 0; }
template <> __device__ __forceinline__ uint8_t convert<int16_t, uint8_t>(int16_t x) { return x != 0; }

template <typename S, typename D> __global__ void copy_kernel(i64 n, Strided<2> s, const S *x, D *out) {
    for_each_index(i, n) {
        i64 p[2];
        s.locate(i, p);
        out[p[1]] = convert<S, D>(x[p[0]]);
    }
}

template <typename T> __global__ void unary_kernel(int op, i64 n, Strided<1> s, const T *x, T *out) {
    typedef typename Compute<T>::type C;
    for_each_index(i, n) {
        i64 p[1];
        s.locate(i, p);
        out[i] = (T)unary_op<C>(op, (C)x[p[0]]);
    }
}

template <typename T> __global__ void binary_kernel(int op, i64 n, Strided<2> s, const T *a, const T *b, T *out) {
    typedef typename Compute<T>::type C;
    for_each_index(i, n) {
        i64 p[2];
        s.locate(i, p);
        out[i] = (T)binary_op<C>(op, (C)a[p[0]], (C)b[p[1]]);
    }
}

template <typename T> __global__ void compare_kernel(int op, i64 n, Strided<2> s, const T *a, const T *b, uint8_t *out) {
    typedef typename Compute<T>::type C;
    for_each_index(i, n) {
        i64 p[2];
        s.locate(i, p);
        out[i] = compare_op<C>(op, (C)a[p[0]], (C)b[p[1]]);
    }
}

template <typename T> __global__ void where_kernel(i64 n, Strided<3> s, const uint8_t *c, const T *a, const T *b, T *out) {
    for_each_index(i, n) {
        i64 p[3];
        s.locate(i, p);
        out[i] = c[p[0]] ? a[p[1]] : b[p[2]];
    }
}

template <typename S>
static int copy_from(i64 n, const Strided<2> &s, const void *x, void *out, int out_dtype) {
    DISPATCH_COPY(out_dtype, LAUNCH(blocks_for(n), THREADS, copy_kernel<S, T>)(n, s, (const S *)x, (T *)out))
    return LAUNCHED();
}

}  // namespace

extern "C" {

int tg_cuda_fill(void *out, int dtype, i64 n, double value, i64 int_value) {
    if (n == 0) return 0;
    switch (dtype) {
    case 0: LAUNCH(blocks_for(n), THREADS, fill_kernel<uint8_t>)(n, (uint8_t)(int_value != 0), (uint8_t *)out); break;
    case 1: LAUNCH(blocks_for(n), THREADS, fill_kernel<int32_t>)(n, (int32_t)int_value, (int32_t *)out); break;
    case 2: LAUNCH(blocks_for(n), THREADS, fill_kernel<int64_t>)(n, int_value, (int64_t *)out); break;
    case 3: LAUNCH(blocks_for(n), THREADS, fill_kernel<float>)(n, (float)value, (float *)out); break;
    case 5: LAUNCH(blocks_for(n), THREADS, fill_kernel<uint16_t>)(n, tg_f32_to_f16((float)value), (uint16_t *)out); break;
    case 6: LAUNCH(blocks_for(n), THREADS, fill_kernel<uint16_t>)(n, tg_f32_to_bf16((float)value), (uint16_t *)out); break;
    case 7: LAUNCH(blocks_for(n), THREADS, fill_kernel<uint8_t>)(n, (uint8_t)int_value, (uint8_t *)out); break;
    case 8: LAUNCH(blocks_for(n), THREADS, fill_kernel<int8_t>)(n, (int8_t)(uint8_t)int_value, (int8_t *)out); break;
    case 9: LAUNCH(blocks_for(n), THREADS, fill_kernel<int16_t>)(n, (int16_t)(uint16_t)int_value, (int16_t *)out); break;
    default: LAUNCH(blocks_for(n), THREADS, fill_kernel<double>)(n, value, (double *)out);
    }
    return LAUNCHED();
}

int tg_cuda_copy(int ndim, const i64 *shape, const void *x, int x_dtype, const i64 *xs, i64 xo,
                 void *out, int out_dtype, const i64 *os, i64 oo) {
    i64 n = numel(ndim, shape);
    if (n == 0) return 0;
    const i64 *strides[2] = {xs, os}, offsets[2] = {xo, oo};
    Strided<2> s = strided<2>(ndim, shape, strides, offsets);
    DISPATCH_COPY(x_dtype, return copy_from<T>(n, s, x, out, out_dtype))
    return 0;
}

int tg_cuda_unary(int op, int dtype, int ndim, const i64 *shape, const void *x, const i64 *xs,
                  i64 xo, void *out) {
    i64 n = numel(ndim, shape);
    if (n == 0) return 0;
    Strided<1> s = strided<1>(ndim, shape, &xs, &xo);
    DISPATCH(dtype, LAUNCH(blocks_for(n), THREADS, unary_kernel<T>)(op, n, s, (const T *)x, (T *)out))
    return LAUNCHED();
}

int tg_cuda_binary(int op, int dtype, int ndim, const i64 *shape, const void *a, const i64 *as,
                   i64 ao, const void *b, const i64 *bs, i64 bo, void *out) {
    i64 n = numel(ndim, shape);
    if (n == 0) return 0;
    const i64 *strides[2] = {as, bs}, offsets[2] = {ao, bo};
    Strided<2> s = strided<2>(ndim, shape, strides, offsets);
    DISPATCH(dtype, LAUNCH(blocks_for(n), THREADS, binary_kernel<T>)(op, n, s, (const T *)a, (const T *)b, (T *)out))
    return LAUNCHED();
}

/* out is bool (uint8), whatever the operands' dtype */
int tg_cuda_compare(int op, int dtype, int ndim, const i64 *shape, const void *a, const i64 *as,
                    i64 ao, const void *b, const i64 *bs, i64 bo, uint8_t *out) {
    i64 n = numel(ndim, shape);
    if (n == 0) return 0;
    const i64 *strides[2] = {as, bs}, offsets[2] = {ao, bo};
    Strided<2> s = strided<2>(ndim, shape, strides, offsets);
    DISPATCH(dtype, LAUNCH(blocks_for(n), THREADS, compare_kernel<T>)(op, n, s, (const T *)a, (const T *)b, out))
    return LAUNCHED();
}

int tg_cuda_where(int dtype, int ndim, const i64 *shape, const uint8_t *c, const i64 *cs, i64 co,
                  const void *a, const i64 *as, i64 ao, const void *b, const i64 *bs, i64 bo, void *out) {
    i64 n = numel(ndim, shape);
    if (n == 0) return 0;
    const i64 *strides[3] = {cs, as, bs}, offsets[3] = {co, ao, bo};
    Strided<3> s = strided<3>(ndim, shape, strides, offsets);
    DISPATCH(dtype, LAUNCH(blocks_for(n), THREADS, where_kernel<T>)(n, s, c, (const T *)a, (const T *)b, (T *)out))
    return LAUNCHED();
}

}  // extern "C"
