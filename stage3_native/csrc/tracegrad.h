/* tracegrad's native kernels: the declarations cffi reads (see build.py).
 *
 * Every kernel reads strided views: a base pointer, a shape, one stride per dimension (in
 * elements, not bytes) and an offset. Outputs are contiguous unless stated. Dtype codes
 * match stage3_native/native_backend.py: 0 bool (uint8), 1 int32, 2 int64, 3 float32, 4 float64,
 * 5 float16, 6 bfloat16 (both stored as uint16_t bits), 7 uint8, 8 int8, 9 int16; only
 * copies and fills take 5 to 9: the other kernels run on float32 or int64 copies, stage2's
 * backend.py, "Half precision".
 */
#ifndef TRACEGRAD_H
#define TRACEGRAD_H
#ifndef TG_CDEF            /* cffi knows the stdint types itself (see build.py) */
#include <stddef.h>
#include <stdint.h>
#endif

typedef int64_t i64;
#define TG_MAX_DIMS 16

/* threads.c: the number of OpenMP threads kernels may use (1 when built without OpenMP) */
void tg_set_num_threads(int n);
int tg_num_threads(void);
/* seconds an empty parallel region of `threads` threads takes when the threads have been
 * idle for idle_seconds before it: what a kernel pays to hand work to them */
double tg_parallel_region_seconds(int threads, double idle_seconds);

/* alloc.c: the caching allocator behind every cpu buffer (uninitialized memory; tg_free
 * keeps blocks for reuse, large ones on huge pages) */
void *tg_alloc(size_t nbytes);
void tg_free(void *p);
void tg_alloc_trim(void);            /* give every cached block back to the OS */

/* copy.c: strided copy with dtype conversion (contiguous(), write(), casts) */
void tg_copy(int ndim, const i64 *shape, const void *x, int x_dtype, const i64 *xs, i64 xo,
             void *out, int out_dtype, const i64 *os, i64 oo);
void tg_fill(void *out, int dtype, i64 n, double value, i64 int_value);

/* half.c: contiguous float32 <-> float16 (dtype 5) / bfloat16 (6), on the CPU's F16C or
 * AVX-512 BF16 instructions where it has them and tg_half_use(1) (the default), else the
 * portable bit code of half.h; tg_half_has_simd: whether this CPU has them, tg_half_simd:
 * whether they are used now */
void tg_half_narrow(int dtype, i64 n, const float *x, uint16_t *out);
void tg_half_widen(int dtype, i64 n, const uint16_t *x, float *out);
int tg_half_has_simd(int dtype);
int tg_half_simd(int dtype);
int tg_half_use(int simd);

/* elementwise.c: which level of the element-wise hierarchy runs for operands of this shape
 * with these strides (n_in operands, ndim strides each, one after the other); reduce.c:
 * which path a reduction takes, the kept (outer) and reduced (inner) dimensions given as
 * tg_reduce takes them */
enum { TG_PATH_CONTIGUOUS, TG_PATH_SCALAR, TG_PATH_LASTDIM, TG_PATH_STRIDED };
enum { TG_REDUCE_ROWS, TG_REDUCE_COLUMNS, TG_REDUCE_STRIDED };
int tg_elementwise_path(int ndim, const i64 *shape, int n_in, const i64 *strides);
int tg_reduce_path(int n_outer, const i64 *outer_shape, const i64 *outer_strides,
                   int n_inner, const i64 *inner_shape, const i64 *inner_strides);

/* elementwise.c, reduce.c: one version per dtype suffix u8 i32 i64 f32 f64; W is
 * the type reductions accumulate in (int64_t for integer dtypes, double for floating point);
 * tg_reduce stores its results as out_dtype (a float type for floating-point x, else an
 * integer type) */
#define TG_ELEMENTWISE(T, W, S) \
    void tg_unary_##S(int op, int ndim, const i64 *shape, const T *x, const i64 *xs, i64 xo, T *out); \
    void tg_binary_##S(int op, int ndim, const i64 *shape, const T *a, const i64 *as, i64 ao, \
                       const T *b, const i64 *bs, i64 bo, T *out); \
    void tg_compare_##S(int op, int ndim, const i64 *shape, const T *a, const i64 *as, i64 ao, \
                        const T *b, const i64 *bs, i64 bo, uint8_t *out); \
    void tg_where_##S(int ndim, const i64 *shape, const uint8_t *c, const i64 *cs, i64 co, \
                      const T *a, const i64 *as, i64 ao, const T *b, const i64 *bs, i64 bo, T *out); \
    void tg_reduce_##S(int op, int n_outer, const i64 *outer_shape, const i64 *outer_strides, \
                       int n_inner, const i64 *inner_shape, const i64 *inner_strides, \
                       const T *x, i64 xo, void *out, int out_dtype); \
    void tg_argreduce_##S(int op, int n_outer, const i64 *outer_shape, const i64 *outer_strides, \
                          int n_inner, const i64 *inner_shape, const i64 *inner_strides, \
                          const T *x, i64 xo, i64 *out);
TG_ELEMENTWISE(uint8_t, int64_t, u8)
TG_ELEMENTWISE(int32_t, int64_t, i32)
TG_ELEMENTWISE(int64_t, int64_t, i64)
TG_ELEMENTWISE(float, double, f32)
TG_ELEMENTWISE(double, double, f64)

/* index.c: rows of `dim` picked by `index` (any dtype: elements are copied as bytes) */
void tg_index_select(int ndim, const i64 *shape, const i64 *strides, i64 offset, int dim,
                     const i64 *index, i64 n_index, const char *x, int itemsize, char *out);

/* cat.c: count views side by side along dimension dim into out, contiguous, of `shape`:
 * view p is buffers[p] at offsets[p] (offsets NULL: at 0) with ndim strides (strides + p *
 * ndim, or strides itself for every view when shared_strides), of shape but for sizes[p]
 * along dim; elements of itemsize bytes */
void tg_cat(int ndim, const i64 *shape, int dim, i64 count, void *const *buffers, const i64 *offsets,
            const i64 *sizes, const i64 *strides, int shared_strides, int itemsize, void *out);

/* matmul.c: 1 when the library was built against a system CBLAS */
int tg_has_cblas(void);

/* matmul.c: out[b, i, j] = sum_p a[b, i, p] * b[b, p, j] (+ bias[j]) for each batch b;
 * a_base and b_base list each batch's offset; bias is NULL or n contiguous values added to
 * every row (Linear's fused bias); variant 0 naive i-j-k, 1 reordered i-k-j, 2 blocked
 * (tiled loops), 3 system CBLAS where it can read the operands (else TinyBLAS),
 * 4 TinyBLAS (gemm.c: packed, SIMD micro-kernels, threads) */
#define TG_MATMUL(T, S) \
    void tg_matmul_##S(int variant, i64 batch, const i64 *a_base, const i64 *b_base, \
                       i64 m, i64 n, i64 k, const T *a, i64 sa_i, i64 sa_p, \
                       const T *b, i64 sb_p, i64 sb_j, const T *bias, T *out);
TG_MATMUL(float, f32)
TG_MATMUL(double, f64)

/* gemm.c: one product out = a @ b (+ bias), m x n row-major, by TinyBLAS exactly as
 * tg_matmul's variant 4 computes it (same blocks, threads and order over k: the same bits),
 * calling epilogue(ctx, row0, rows, col0, cols) once each block out[row0:row0+rows,
 * col0:col0+cols] is final, on the thread that computed it, while the block is still in
 * cache (chapter 11: a fused activation). The blocks cover out exactly once and are
 * disjoint, so calls may run at the same time on different threads. k = 0 (out = bias
 * rows) makes one call for the whole of out; epilogue may be NULL. */
typedef void (*tg_epilogue)(void *ctx, i64 row0, i64 rows, i64 col0, i64 cols);
#define TG_MATMUL_EPILOGUE(T, S) \
    void tg_matmul_epilogue_##S(i64 m, i64 n, i64 k, const T *a, i64 sa_i, i64 sa_p, \
                                const T *b, i64 sb_p, i64 sb_j, const T *bias, T *out, \
                                tg_epilogue epilogue, void *ctx);
TG_MATMUL_EPILOGUE(float, f32)
TG_MATMUL_EPILOGUE(double, f64)

/* gemm_kernels.c: the micro-kernel TinyBLAS uses ("generic", "avx2" or "avx512": the widest
 * this CPU runs, or TRACEGRAD_GEMM_KERNEL's choice), and a way to switch it (1 when the CPU
 * runs the named kernel and it is now in use, else 0; "auto" or "": the widest again);
 * tg_gemm_kernels(i): the i-th kernel this CPU runs, narrowest first, NULL past the last;
 * tg_gemm_blocking: the kernel's blocks for float32 (dtype 3) or float64 (4), in elements */
const char *tg_gemm_kernel(void);
int tg_gemm_use_kernel(const char *name);
const char *tg_gemm_kernels(int i);
typedef struct { i64 mr, nr, mc, kc, nc; } tg_gemm_blocks;
tg_gemm_blocks tg_gemm_blocking(int dtype);
double tg_gemm_peak_gflops(void);    /* one core's FMA peak at that kernel's width, measured */

/* simd.c: the SIMD level the element-wise kernels (simd.h's TG_SIMD functions) run at,
 * "generic", "avx2" or "avx512": the widest this CPU runs, or TRACEGRAD_SIMD's choice, and
 * the same three functions as for the micro-kernel above. tg_simd_current points at the
 * level's index, which every TG_SIMD dispatch reads (a generated kernel's library points
 * its own at the same index: lazy/jit.py) */
const char *tg_simd_level(void);
int tg_simd_use(const char *name);
const char *tg_simd_levels(int i);
extern const int *tg_simd_current;

/* softmax.c: fused softmax (log != 0: log-softmax) of contiguous x viewed as (outer, size,
 * inner), along the middle dimension; its gradient from the upstream grad and the output y
 * (both contiguous, of x's shape); cross-entropy of contiguous logits (n, c) against n
 * class indices: the losses (reduction 0 none, 1 sum, 2 mean over the rows kept, their count
 * into *kept) and the softmax probabilities (n * c), rows whose target is ignore_index (when
 * ignoring) adding 0, returning the position of the first target neither a class nor
 * ignored, or -1; and its gradient with respect to the logits, row i scaled by
 * scale[i * scale_step] / *kept (kept NULL: 1), 0 for an ignored row */
#define TG_SOFTMAX(T, S) \
    i64 tg_cross_entropy_##S(i64 n, i64 c, const T *logits, const i64 *targets, \
                             int reduction, int ignoring, i64 ignore_index, T *losses, T *probs, \
                             T *kept); \
    void tg_cross_entropy_backward_##S(i64 n, i64 c, const T *probs, const i64 *targets, \
                                       const T *scale, i64 scale_step, const T *kept, int ignoring, \
                                       i64 ignore_index, T *out);
TG_SOFTMAX(float, f32)
TG_SOFTMAX(double, f64)

/* attention.c: scaled dot-product attention of bh heads, fused (variant 0 naive, 1
 * blocked): queries (t, d), keys (s, d), values (s, ev) read in place, head b's rows at
 * x + x_base[b], x_row apart (last dimension contiguous); query i sees keys 0 .. i + offset
 * under the causal mask (causal != 0, offset >= 0), else all s. Forward: out (bh / heads,
 * t, heads, ev): each head's rows interleaved with those of its `heads` neighbours (1: (bh,
 * t, ev)), and each query's lse = log sum_j e^(scale q.k_j) (bh, t); backward: dq, dk, dv
 * laid out as out ((bh / heads, t or s, heads, d or ev)) from those, out and dout (read in
 * place, as q). Each returns 1 when out of memory for its tiles, else 0. */
#define TG_ATTENTION(T, S) \
    int tg_attention_##S(int variant, i64 bh, i64 t, i64 s, i64 d, i64 ev, const T *q, \
                         const i64 *q_base, i64 q_row, const T *k, const i64 *k_base, i64 k_row, \
                         const T *v, const i64 *v_base, i64 v_row, int causal, i64 offset, \
                         double scale, i64 heads, T *out, T *lse); \
    int tg_attention_backward_##S(int variant, i64 bh, i64 t, i64 s, i64 d, i64 ev, const T *q, \
                                  const i64 *q_base, i64 q_row, const T *k, const i64 *k_base, \
                                  i64 k_row, const T *v, const i64 *v_base, i64 v_row, \
                                  const T *out, const i64 *o_base, i64 o_row, const T *lse, \
                                  const T *dout, const i64 *do_base, i64 do_row, int causal, \
                                  i64 offset, double scale, i64 heads, T *dq, T *dk, T *dv);
TG_ATTENTION(float, f32)
TG_ATTENTION(double, f64)

/* linear_cross_entropy.c: cross-entropy of the logits x @ w^T + bias (x (n, c), w (v, c),
 * bias v values or NULL; all contiguous) against n class indices, over chunks of the
 * vocabulary, never holding all the logits: the losses as tg_cross_entropy gives them, and
 * lse, each row's logsumexp (n values, for the backward); returns the position of the first
 * target neither a class nor ignored, -2 when out of memory, else -1. Its gradient: dx,
 * dw, dbias (each skipped when NULL) from lse and the upstream scale[i * scale_step] /
 * *kept (kept NULL: 1), returning 1 when out of memory, else 0. chunk and tile: columns per
 * chunk and rows per tile (0: the kernel's own) */
#define TG_LINEAR_CROSS_ENTROPY(T, S) \
    i64 tg_linear_cross_entropy_##S(i64 n, i64 c, i64 v, const T *x, const T *w, const T *bias, \
                                    const i64 *targets, int reduction, int ignoring, \
                                    i64 ignore_index, i64 chunk, i64 tile, T *losses, T *lse, \
                                    T *kept); \
    int tg_linear_cross_entropy_backward_##S(i64 n, i64 c, i64 v, const T *x, const T *w, \
                                             const T *bias, const i64 *targets, const T *lse, \
                                             const T *scale, i64 scale_step, const T *kept, \
                                             int ignoring, i64 ignore_index, i64 chunk, i64 tile, \
                                             T *dx, T *dw, T *dbias);
TG_LINEAR_CROSS_ENTROPY(float, f32)
TG_LINEAR_CROSS_ENTROPY(double, f64)

/* mse.c: the squared-error loss of a against b (n elements each; reduction 0 none, 1 sum,
 * 2 mean), keeping diff = a - b; and its gradient with respect to a, 2 * diff * grad * factor
 * (grad: one value with grad_step 0, or n with grad_step 1) */
#define TG_MSE(T, S) \
    void tg_mse_loss_backward_##S(i64 n, const T *diff, const T *grad, i64 grad_step, \
                                  double factor, T *out);
TG_MSE(float, f32)
TG_MSE(double, f64)

/* optim.c: one optimizer step for a group of `count` parameters, in place on each p[t]
 * (sizes[t] contiguous elements) and its state (v[t] NULL for SGD without momentum);
 * Adam's step[t] counts from 1 */
#define TG_OPTIM(T, S) \
    void tg_sgd_update_##S(i64 count, const i64 *sizes, T **p, T **grad, T **v, double lr, \
                           double momentum, double dampening, double weight_decay, \
                           const int *first_step, int nesterov); \
    void tg_adam_update_##S(i64 count, const i64 *sizes, T **p, T **grad, T **m, T **v, \
                            double lr, double beta1, double beta2, double eps, \
                            double weight_decay, int decoupled, const i64 *step);
TG_OPTIM(float, f32)
TG_OPTIM(double, f64)

/* resample.c: pad the last n (1 to TG_MAX_DIMS) dimensions of contiguous x (planes,
 * *spatial) by before and after (mode 0 constant with `value`, 1 reflect, 2 replicate, 3
 * circular; stage2_tensor/contracts.py checks each fits), and its adjoint; interpolate
 * each (h, w) plane of x (batch, channels, h, w) to (oh, ow) (linear 0: nearest, 1:
 * bilinear) with the steps of stage2_tensor/sampling_grid.py, plane (b, c) row-major at
 * y + b * y_image + c * y_channel, and its adjoint. Each returns 1 when out of memory for
 * its tables, else 0. */
#define TG_RESAMPLE(T, S) \
    int tg_interpolate_##S(i64 batch, i64 channels, i64 h, i64 w, i64 oh, i64 ow, double step_h, \
                           double step_w, int linear, int align_corners, const T *x, T *y, \
                           i64 y_image, i64 y_channel);
TG_RESAMPLE(float, f32)
TG_RESAMPLE(double, f64)

/* index.c, bounds-checked: index holds n_index positions along a dimension of `size`, each
 * in -size..size-1 (negative ones count from the end). Each returns the position in index
 * of the first one out of range (the _dense kernels' output then incomplete, tg_index_check
 * having written nothing), or -1.
 * tg_index_check: the indices wrapped into 0..size-1, written to `wrapped` (for the strided
 * tg_index_select above). The _dense kernels read a contiguous x viewed as (outer, size,
 * inner) and move whole rows of `inner` elements: index_select into out (outer, n_index,
 * inner), any dtype, as bytes; index_add adds src (outer, n_index, inner) into a zeroed out
 * (outer, size, inner) */
i64 tg_index_check(const i64 *index, i64 n_index, i64 size, i64 *wrapped);
i64 tg_index_select_dense(i64 outer, i64 size, i64 inner, const char *x, int itemsize,
                          const i64 *index, i64 n_index, char *out);
#define TG_INDEX_ADD_DENSE(T, S) \
    i64 tg_index_add_dense_##S(i64 outer, i64 size, i64 inner, const i64 *index, i64 n_index, \
                               const T *src, T *out);
TG_INDEX_ADD_DENSE(uint8_t, u8)
TG_INDEX_ADD_DENSE(int32_t, i32)
TG_INDEX_ADD_DENSE(int64_t, i64)
TG_INDEX_ADD_DENSE(float, f32)
TG_INDEX_ADD_DENSE(double, f64)

/* index_reduce.c: base (outer, size, inner), copied into out, with src's rows (outer,
 * n_index, inner) reduced into it at the rows index names (checked as above, nothing
 * written when one is bad); reduce 0 prod, 1 mean, 2 amax, 3 amin; counts and first hold
 * `size` entries for the kernel's use (NULL when out has no elements: the indices are then
 * only checked). Returns the position of the first bad index, or -1. */
i64 tg_index_reduce_rows(const i64 *index, i64 n_index, i64 size, i64 *counts, i64 *first);
#define TG_INDEX_REDUCE(T, S) \
    i64 tg_index_reduce_##S(i64 outer, i64 size, i64 inner, const i64 *index, i64 n_index, const T *src, \
                            int reduce, int include_self, i64 *counts, i64 *first, T *out);
TG_INDEX_REDUCE(uint8_t, u8)
TG_INDEX_REDUCE(int32_t, i32)
TG_INDEX_REDUCE(int64_t, i64)
TG_INDEX_REDUCE(float, f32)
TG_INDEX_REDUCE(double, f64)

/* index.c, advanced indexing over the k leading dimensions of a strided view (shape,
 * strides, offset): indices (k, n), row d the n indices of dimension d, each checked as
 * above. tg_index copies the n sub-tensors (the trailing dimensions) into out, contiguous,
 * any dtype as bytes; tg_index_put writes values (a view of vndim dimensions, read
 * row-major: n sub-tensors) into them, or adds them when accumulate (a bool ors). Each
 * returns d * n + j of the first bad index, having done nothing, or -1. */
i64 tg_index_bad(int k, const i64 *shape, const i64 *indices, i64 n);
i64 tg_index(int ndim, const i64 *shape, const i64 *strides, i64 offset, const char *x, int itemsize,
             int k, const i64 *indices, i64 n, char *out);
#define TG_INDEX_PUT(T, S) \
    i64 tg_index_put_##S(int ndim, const i64 *shape, const i64 *strides, i64 offset, T *dst, \
                         int k, const i64 *indices, i64 n, int vndim, const i64 *vshape, \
                         const i64 *vstrides, i64 voffset, const T *values, int accumulate);
TG_INDEX_PUT(uint8_t, u8)
TG_INDEX_PUT(int32_t, i32)
TG_INDEX_PUT(int64_t, i64)
TG_INDEX_PUT(float, f32)
TG_INDEX_PUT(double, f64)


/* convolution.c, pooling.c: windows over the n spatial dimensions (1 to TG_MAX_DIMS) of
 * contiguous planes (one channel of one image each, P = prod(spatial) elements): output
 * position o reads the input at o * stride - before + k * dilation for kernel position k
 * (windows.h), K = prod(kernel) positions, L = prod(out) outputs, all checked by
 * stage2_tensor/contracts.py first (positive extents, non-negative padding, int64 sizes).
 * im2col: cols (planes, K, L), fill where a window reads the padding; col2im: its adjoint,
 * x (planes, P) the sum of cols at the positions they were read from (padding dropped);
 * conv_direct: the naive convolution of x (batch, c_in, *spatial) with weight
 * (c_out, c_in / groups, *kernel) and bias (c_out values or NULL) into y (batch, c_out,
 * *out); conv_bands: the same, for inference: im2col and TinyBLAS a band of band_rows
 * output rows at a time in one parallel region, bias and (relu != 0) ReLU in the store,
 * y[b, co, l] at y[b * y_image + co * y_channel + l] (returns 1 when out of memory);
 * max_pool: each window's maximum of x (batch, channels, *spatial), plane (b, c) row-major
 * at y + b * y_image + c * y_channel, and its flat position in the plane into where
 * (batch * channels, L), unless where is NULL (im2col, col2im and max_pool return 1 when out of memory for their
 * table of row starts, else 0); max_pool_backward: dx (planes, P) with grad (planes, L)
 * added at where, returning the position of the first entry of where outside -1..P-1
 * (having done nothing), or -1 */
#define TG_CONVOLUTION(T, S) \
    int tg_conv_bands_##S(i64 batch, i64 c_in, i64 c_out, i64 groups, int n, const i64 *spatial, \
                          const i64 *kernel, const i64 *stride, const i64 *before, \
                          const i64 *dilation, const i64 *out, const T *x, const T *weight, \
                          const T *bias, int relu, i64 band_rows, T *y, i64 y_image, i64 y_channel); \
    int tg_max_pool_##S(i64 batch, i64 channels, int n, const i64 *spatial, const i64 *kernel, \
                         const i64 *stride, const i64 *before, const i64 *dilation, const i64 *out, \
                         const T *x, T *y, i64 *where, i64 y_image, i64 y_channel); \
    i64 tg_max_pool_backward_##S(i64 planes, i64 P, i64 L, const T *grad, const i64 *where, T *dx);
TG_CONVOLUTION(float, f32)
TG_CONVOLUTION(double, f64)

/* The kernels declared with their C parameters in stage2_tensor/kernels/ (cumsum, softmax,
 * the normalizations, dropout, mse_loss, padding, im2col, col2im, conv_direct...): their
 * declarations, one per dtype, written from there by the build (ops_header.py) */
#include "kernels_generated.h"

#endif
