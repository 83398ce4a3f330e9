/* Device "cuda": the C functions cffi reads (cuda_build.py runs this header through the
 * C preprocessor with -DTG_CDEF and hands the result to cffi's cdef).
 *
 * Buffers are device pointers. Shapes, strides and offsets count elements and live on the
 * host: the launching function copies them into the kernel's arguments. Dtype codes match
 * native_backend.py: 0 bool (uint8), 1 int32, 2 int64, 3 float32, 4 float64. Every function
 * returns a CUDA status (0: success); tg_cuda_error_string names it. Op codes are
 * ops_generated.h's, written from stage2_tensor/ops.py (stage3_native/ops_header.py). */
#ifndef TRACEGRAD_CUDA_H
#define TRACEGRAD_CUDA_H
#ifndef TG_CDEF
#include <stddef.h>
#include <stdint.h>
#endif
typedef int64_t i64;
#define TG_MAX_DIMS 16

#ifdef __cplusplus
extern "C" {
#endif
/* memory.cu: devices, memory (a caching allocator, as PyTorch's), copies, errors */
int tg_cuda_device_count(int *count);
int tg_cuda_device_name(char *name, int length);
const char *tg_cuda_error_string(int status);
int tg_cuda_synchronize(void);
void *tg_cuda_malloc(size_t bytes, int *status);
void tg_cuda_free(void *p);
size_t tg_cuda_memory_allocated(void);
size_t tg_cuda_memory_reserved(void);
int tg_cuda_empty_cache(void);
int tg_cuda_to_device(void *dst, const void *src, size_t bytes);
int tg_cuda_to_host(void *dst, const void *src, size_t bytes);

/* elementwise.cu: strided, broadcast (stride 0) element-wise ops; outputs contiguous */
int tg_cuda_fill(void *out, int dtype, i64 n, double value, i64 int_value);
int tg_cuda_copy(int ndim, const i64 *shape, const void *x, int x_dtype, const i64 *xs, i64 xo,
                 void *out, int out_dtype, const i64 *os, i64 oo);
int tg_cuda_unary(int op, int dtype, int ndim, const i64 *shape, const void *x, const i64 *xs,
                  i64 xo, void *out);
int tg_cuda_binary(int op, int dtype, int ndim, const i64 *shape, const void *a, const i64 *as,
                   i64 ao, const void *b, const i64 *bs, i64 bo, void *out);
int tg_cuda_compare(int op, int dtype, int ndim, const i64 *shape, const void *a, const i64 *as,
                    i64 ao, const void *b, const i64 *bs, i64 bo, uint8_t *out);
int tg_cuda_where(int dtype, int ndim, const i64 *shape, const uint8_t *c, const i64 *cs, i64 co,
                  const void *a, const i64 *as, i64 ao, const void *b, const i64 *bs, i64 bo, void *out);

/* reduce.cu: SUM, MAX, MIN (results stored as out_dtype) or ARGMAX, ARGMIN (out is int64)
 * of x over its inner (reduced) dimensions, one result per index of its outer (kept) ones; x's element (outer o, inner i) is at xo + o's and i's strided positions */
int tg_cuda_reduce(int op, int dtype, int n_outer, const i64 *outer_shape, const i64 *outer_strides,
                   int n_inner, const i64 *inner_shape, const i64 *inner_strides,
                   const void *x, i64 xo, void *out, int out_dtype);

/* softmax.cu, layernorm.cu: float32 and float64 (dtype 3, 4); inputs contiguous.
 * softmax: x viewed as (outer, size, inner), each of the outer * inner rows along the middle
 * dimension (log_softmax != 0: log-softmax); its backward from the upstream grad and the
 * output y. cross_entropy: logits (n, c), targets n int64 class indices, reduction 0 (none:
 * n losses), 1 (sum), 2 (mean over the rows kept, their count into kept[0]), a row whose
 * target is ignore_index (when ignoring) adding 0; probs gets the n * c softmax values;
 * *bad (a host pointer) the first row whose target is neither a class nor ignored, else -1.
 * Its backward: (probs - onehot(targets)) * scale[i * scale_step] / kept[0] (kept NULL: 1)
 * for row i, 0 for an ignored row. layer_norm: x (rows, n),
 * weight and bias n values or NULL; mean and rstd one per row. Its backward: dx, and, when
 * dweight is not NULL, dweight and dbias (sums over the rows, in a fixed order). */
int tg_cuda_cross_entropy(int dtype, i64 n, i64 c, const void *logits, const i64 *targets, int reduction,
                          int ignoring, i64 ignore_index, void *losses, void *probs, void *kept, i64 *bad);
int tg_cuda_cross_entropy_backward(int dtype, i64 n, i64 c, const void *probs, const i64 *targets,
                                   const void *scale, i64 scale_step, const void *kept, int ignoring,
                                   i64 ignore_index, void *out);

/* resample.cu: csrc/tracegrad.h's tg_pad, tg_interpolate and their backward passes on
 * contiguous float32/float64 (dtype 3, 4); the backward passes add into a dx the caller
 * zeroed. */
int tg_cuda_interpolate(int dtype, i64 planes, i64 h, i64 w, i64 oh, i64 ow, double step_h, double step_w,
                        int linear, int align_corners, const void *x, void *y);

/* matmul.cu, cublas.cu: out (batch..., m, n), contiguous, = a (batch..., m, k) @ b (batch...,
 * k, n), plus bias (NULL, or n contiguous values) on every row. The batch_ndim batch
 * dimensions have one shape and a stride per operand (0 where broadcast); within a batch
 * entry, a's element (i, p) is at i * sa_i + p * sa_p, b's (p, j) at p * sb_p + j * sb_j.
 * variant: 0 naive, 1 tiled, 2 vectorized (float32; float64 runs tiled), 3 cuBLAS, 4 cuBLAS
 * with TF32 tensor cores (float32 only); dtype 3 or 4. cuBLAS is opened at run time (never
 * linked): tg_cuda_has_cublas says whether it loaded (the emulator: never),
 * tg_cuda_cublas_load tries one more path. A cuBLAS error comes back as TG_CUBLAS_STATUS +
 * its status (tg_cuda_cublas_status_name);
 * TG_CUBLAS_DECLINED, from tg_cuda_cublas_matmul only, means "not for cuBLAS: use a kernel". */
enum { TG_CUBLAS_DECLINED = -1, TG_CUBLAS_STATUS = 100000 };
int tg_cuda_matmul(int variant, int dtype, int batch_ndim, const i64 *batch_shape,
                   const i64 *a_batch_strides, i64 a_offset, const i64 *b_batch_strides, i64 b_offset,
                   i64 m, i64 n, i64 k, const void *a, i64 sa_i, i64 sa_p,
                   const void *b, i64 sb_p, i64 sb_j, const void *bias, void *out);
int tg_cuda_cublas_matmul(int tf32, int dtype, int batch_ndim, const i64 *batch_shape,
                          const i64 *a_batch_strides, i64 a_offset, const i64 *b_batch_strides, i64 b_offset,
                          i64 m, i64 n, i64 k, const void *a, i64 sa_i, i64 sa_p,
                          const void *b, i64 sb_p, i64 sb_j, const void *bias, void *out);
int tg_cuda_has_cublas(void);
int tg_cuda_has_cublas_tf32(void);
int tg_cuda_cublas_load(const char *path);
const char *tg_cuda_cublas_library(void);
const char *tg_cuda_cublas_status_name(int status);

/* cat.cu: count views side by side along dimension dim, as csrc/tracegrad.h's tg_cat
 * (buffers: a host array of device pointers) */
int tg_cuda_cat(int ndim, const i64 *shape, int dim, i64 count, void *const *buffers, const i64 *offsets,
                const i64 *sizes, const i64 *strides, int shared_strides, int itemsize, void *out);

/* index.cu: gather and scatter-add along one dimension, every index checked (-size..size-1,
 * negative from the end); *bad_position: -1, or the position in index of the first bad one */
int tg_cuda_index_select(int ndim, const i64 *shape, const i64 *strides, i64 offset, int dim,
                         const i64 *index, i64 n_index, const void *x, int itemsize, void *out,
                         i64 *bad_position);
int tg_cuda_index_add(int dtype, i64 outer, i64 size, i64 inner, const i64 *index, i64 n_index,
                      const void *src, void *out, i64 *bad_position);
/* index_reduce.cu: base's copy out (outer, size, inner) with src's rows (outer, n_index,
 * inner) reduced into it at the rows index names, as csrc/tracegrad.h's tg_index_reduce;
 * dtype 1 to 4 (compare-and-swap has no byte-sized form) */
int tg_cuda_index_reduce(int dtype, i64 outer, i64 size, i64 inner, const i64 *index, i64 n_index, const void *src,
                         int reduce, int include_self, i64 *counts, i64 *first, void *out, i64 *bad_position);
/* index.cu: advanced indexing over the k leading dimensions of a view, indices (k, n), each
 * checked; *bad_position: -1, or d * n + j of the first bad one (nothing then written).
 * index: the n sub-tensors into out (n, trailing...), elements of `itemsize` bytes;
 * index_put: values (vndim dimensions, row-major over the n sub-tensors) written into them,
 * or added (accumulate; a bool ors), dtype 0 to 4 */
int tg_cuda_index(int ndim, const i64 *shape, const i64 *strides, i64 offset, const void *x, int itemsize,
                  int k, const i64 *indices, i64 n, void *out, i64 *bad_position);
int tg_cuda_index_put(int dtype, int ndim, const i64 *shape, const i64 *strides, i64 offset, void *dst,
                      int k, const i64 *indices, i64 n, int vndim, const i64 *vshape, const i64 *vstrides,
                      i64 voffset, const void *values, int accumulate, i64 *bad_position);

/* mse.cu, dropout.cu, optim.cu: fused kernels on contiguous float32/float64 (dtype 3, 4);
 * reduction 0 none, 1 sum, 2 mean. The updates take host arrays of device pointers, one per
 * parameter of a group (v[t] NULL for SGD without momentum), and update them in place. */
int tg_cuda_mse_loss_backward(int dtype, i64 n, const void *diff, const void *grad, i64 grad_step,
                              double factor, void *out);
int tg_cuda_sgd_update(int dtype, i64 count, const i64 *sizes, void **p, void **grad, void **v, double lr,
                       double momentum, double dampening, double weight_decay, const int *first_step,
                       int nesterov);
int tg_cuda_adam_update(int dtype, i64 count, const i64 *sizes, void **p, void **grad, void **m, void **v,
                        double lr, double beta1, double beta2, double eps, double weight_decay, int decoupled,
                        const i64 *step);
/* convolution.cu: the window kernels of csrc/convolution.c and pooling.c (see
 * tracegrad.h) on contiguous float32/float64 (dtype 3, 4); max_pool_backward adds into a
 * zeroed dx and sets *bad_position to -1 or the first entry of where outside -1..P-1 */
int tg_cuda_max_pool(int dtype, i64 planes, int n, const i64 *spatial, const i64 *kernel, const i64 *stride,
                     const i64 *before, const i64 *dilation, const i64 *out, const void *x, void *y, i64 *where);
int tg_cuda_max_pool_backward(int dtype, i64 planes, i64 P, i64 L, const void *grad, const i64 *where,
                              void *dx, i64 *bad_position);
/* The kernels declared with their C parameters in stage2_tensor/kernels/ (cumsum, softmax,
 * layer_norm, batch_norm, dropout, mse_loss, pad, im2col, col2im, conv_direct...), as the C
 * library has them (csrc/tracegrad.h), the dtype's code first: written from there by the
 * build (ops_header.py) */
#include "kernels_generated.h"
#ifdef __cplusplus
}
#endif
#endif
