/* A language model's loss without its logits: the cross-entropy of z = x @ W^T (+ bias)
 * against class indices, for x (n, c) and W (v, c), float and double, computed over
 * chunks of the vocabulary so that the (n, v) logits, their softmax and their gradient
 * never exist whole (F.linear_cross_entropy; GPT.loss). With GPT-2's 50,257 tokens and
 * 2,048 positions a step, the logits alone are 412 MB of float32, written and read several
 * times each way by linear + cross_entropy: here the most held at once is a tile of
 * LCE_ROWS x LCE_CHUNK values per thread, a few hundred KiB that stay in L2.
 *
 * Forward, per row i with target t_i:  loss_i = lse_i - z_i[t_i],  lse_i = log sum_j e^z_ij.
 * Per tile of rows and chunk of columns, TinyBLAS computes the tile of z (gemm.h), and
 * each row folds the tile into its running max m and sum s of e^(z - m), the online
 * logsumexp: a larger max M found later rescales s by e^(m - M), so no exponent overflows
 * and nothing is read twice. The target's logit is picked up when its column passes by.
 * Only lse (n values) is kept for the backward pass.
 *
 * Backward, with g_i the upstream gradient of row i (divided by the rows kept, for the
 * mean; 0 for an ignored row):  dz_ij = (e^(z_ij - lse_i) - [j == t_i]) g_i, then
 *     dW[j] = sum_i dz_ij x_i (dz^T @ x),  dx_i = sum_j dz_ij W[j] (dz @ W),  db = column sums.
 * z is computed again, chunk by chunk (the price of not keeping it: a fourth product of
 * the size of the forward one, against several passes over 412 MB).
 *
 * Threads: the forward pass splits the rows (each thread its rows, every chunk: a row's
 * statistics stay on its thread, and the result is the same bits on any thread count);
 * the backward pass splits the chunks (each thread owns its chunks' rows of dW and db and
 * writes them once, also the same bits on any thread count); dx sums over every chunk,
 * so each thread adds into a copy of its own (n, c), and the copies are added in thread
 * order at the end: dx's last bits depend on the thread count. The products inside run on
 * the thread that called them (a nested region gets one thread), unless the whole problem
 * is below LCE_PARALLEL_MIN, or the forward pass has too few rows to share, where there is
 * one thread outside and TinyBLAS may split each product itself.
 *
 * The plain path beside it is stage2's composite, F.cross_entropy(F.linear(x, W, b), t)
 * (the chapters' path, and the tests' reference). The exponentials of float rows are
 * vmath.h's tg_expf, vectorized (TG_SIMD), with sums finished in double; double rows use
 * libm's exp.
 */
#include <math.h>
#include <string.h>
#include "gemm.h"
#include "parallel.h"
#include "vmath.h"

#define LCE_CHUNK 512          /* columns of the vocabulary per chunk */
#define LCE_ROWS 256           /* rows per tile: a float tile of 512 KiB, in L2 */
#define LCE_PARALLEL_MIN (64.0 * 64 * 256)   /* multiply-adds below which one thread does it */
#define LANES 16               /* independent partial sums (softmax.c's) */

/* Fold the segment z[0:cols] of a float row into the running max *m and sum *s of
 * e^(z - *m). The max and the sum are kept in LANES partial results each, so the loops
 * vectorize; the sum is finished in double. */
TG_SIMD(void, lce_fold_f32, (i64 cols, const float *z, double *m, double *s), (cols, z, m, s)) {
    float lane_sum[LANES];
    for (int l = 0; l < LANES; l++) lane_sum[l] = 0;
    i64 body = cols / LANES * LANES;
    float seg = tg_max_f32(cols, z);
    if (seg == -INFINITY) return;          /* every e^z is 0 here (or a NaN row: the sum has it) */
    float big = (double)seg > *m ? seg : (float)*m;   /* *m came from a float: exact */
    for (i64 j = 0; j < body; j += LANES)
        for (int l = 0; l < LANES; l++) lane_sum[l] += tg_expf(z[j + l] - big);
    double sum = 0;
    for (int l = 0; l < LANES; l++) sum += lane_sum[l];
    for (i64 j = body; j < cols; j++) sum += tg_expf(z[j] - big);
    *s = *s * exp(*m - (double)big) + sum;  /* e^(-inf) = 0 for the first segment */
    *m = big;
}

/* The double version: libm's exp, one running sum. */
static void lce_fold_f64(i64 cols, const double *z, double *m, double *s) {
    double seg = -INFINITY;
    for (i64 j = 0; j < cols; j++) seg = z[j] > seg ? z[j] : seg;
    if (seg == -INFINITY) return;
    double big = seg > *m ? seg : *m, sum = 0;
    for (i64 j = 0; j < cols; j++) sum += exp(z[j] - big);
    *s = *s * exp(*m - big) + sum;
    *m = big;
}

/* A row of logits turned into its share of the gradient, in place: e^(z - lse) * g, the
 * softmax times the row's upstream gradient (the one-hot part is subtracted by the caller). */
TG_SIMD(void, lce_grad_f32, (i64 cols, float *z, float lse, float g), (cols, z, lse, g)) {
    for (i64 j = 0; j < cols; j++) z[j] = tg_expf(z[j] - lse) * g;
}

static void lce_grad_f64(i64 cols, double *z, double lse, double g) {
    for (i64 j = 0; j < cols; j++) z[j] = exp(z[j] - lse) * g;
}

/* The chunk width: `chunk` when the caller asks for one (the tests, to cut a small
 * vocabulary into several), else LCE_CHUNK, narrowed so that each of `threads` threads has
 * a chunk of a small vocabulary (multiples of 16 columns: whole cache lines of floats). */
static i64 lce_chunk(i64 chunk, i64 v, int threads) {
    if (chunk > 0) return chunk;
    i64 share = (v + threads - 1) / threads;
    share = (share + 15) / 16 * 16;
    return share < LCE_CHUNK ? (share > 16 ? share : 16) : LCE_CHUNK;
}

#define TEMPLATE "linear_cross_entropy_t.h"
#include "instantiate_float.h"
