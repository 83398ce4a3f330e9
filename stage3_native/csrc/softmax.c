/* Softmax, log-softmax and cross-entropy, fused: one pass per row instead of the five
 * tensor operations (max, subtract, exp, sum, divide) stage2 would otherwise launch, each
 * with an intermediate tensor. For float and double; inputs are contiguous (cpu/backend.py
 * copies other views first).
 *
 * Every row is shifted by its max first: e^(x - max) <= 1, so large logits cannot overflow,
 * and the sum of exponentials is at least 1, so its log is finite. Double rows, and float
 * rows along a middle dimension, are computed in double, as stage2's python kernels do it;
 * float rows over the last dimension (softmax's, cross-entropy's) in float with vectorized
 * exponentials, within a few float ulps of the double formula.
 */
#include <math.h>
#include "parallel.h"
#include "strided.h"
#include "vmath.h"

#define LANES 16        /* independent partial maxima and sums: a vector's worth, or two */

/* e^(x_i - max) of a float row into out, the shared first pass of softmax_row_f32 and
 * cross_entropy_row_f32: returns their sum (finished in double) and sets *max (0 for an
 * all -inf row: e^(x - 0) = 0, as the double path). */
TG_INLINE double shifted_exps_f32(i64 size, const float *x, float *out, float *max) {
    float lane_sum[LANES];
    for (int l = 0; l < LANES; l++) lane_sum[l] = 0;
    i64 body = size / LANES * LANES;
    float m = tg_max_f32(size, x);
    if (m == -INFINITY) m = 0;
    for (i64 i = 0; i < body; i += LANES)
        for (int l = 0; l < LANES; l++) {
            float e = tg_expf(x[i + l] - m);
            out[i + l] = e;
            lane_sum[l] += e;
        }
    double sum = 0;
    for (int l = 0; l < LANES; l++) sum += lane_sum[l];
    for (i64 i = body; i < size; i++) sum += out[i] = tg_expf(x[i] - m);
    *max = m;
    return sum;
}

/* Softmax over the last dimension of float rows (attention's scores, the common case),
 * vectorized: the max and the sum each kept in LANES partial results (a loop-carried
 * dependency on one variable would not vectorize), e^x from vmath.h's tg_expf, the row's
 * sum finished in double. Within a few float ulps of the double-precision formula. */
TG_SIMD(void, softmax_row_f32, (i64 size, const float *x, int log_softmax, float *out),
        (size, x, log_softmax, out)) {
    float m;
    double sum = shifted_exps_f32(size, x, out, &m);
    if (log_softmax) {
        float shift = (float)(m + log(sum));
        for (i64 i = 0; i < size; i++) out[i] = x[i] - shift;
    } else {
        float scale = (float)(1.0 / sum);
        for (i64 i = 0; i < size; i++) out[i] *= scale;
    }
}

/* One row of cross-entropy over float logits: the probabilities into probs, vectorized as
 * softmax_row_f32 computes them, and the loss at `target` (none: -1, a loss of 0) in
 * double, log(sum) - (x[target] - max), so large logits lose no digits to float rounding. */
TG_SIMD(double, cross_entropy_row_f32, (i64 size, const float *x, i64 target, float *probs),
        (size, x, target, probs)) {
    float m;
    double sum = shifted_exps_f32(size, x, probs, &m);
    float scale = (float)(1.0 / sum);
    for (i64 i = 0; i < size; i++) probs[i] *= scale;
    return target < 0 ? 0.0 : log(sum) - ((double)x[target] - m);
}

/* Double rows: softmax_t.h's formula (libm's exp), as any other row. */
#define cross_entropy_row_f64 cross_entropy_row_double_f64

/* Double rows keep softmax_t.h's formula (libm's exp), as any other row. */
#define softmax_row_f64(size, x, log_softmax, out) strided_row_f64(x, size, 1, log_softmax, out)

/* The gradient of a float row over the last dimension, vectorized the same way: the row's
 * sum, of g * y (softmax) or of g (log-softmax), in LANES partial sums finished in double,
 * then dx = y * (g - sum) or g - e^y * sum in one pass. */
TG_SIMD(void, softmax_backward_row_f32,
        (i64 size, const float *g, const float *y, int log_softmax, float *dx),
        (size, g, y, log_softmax, dx)) {
    float lane_sum[LANES];
    for (int l = 0; l < LANES; l++) lane_sum[l] = 0;
    i64 body = size / LANES * LANES;
    if (log_softmax)
        for (i64 i = 0; i < body; i += LANES)
            for (int l = 0; l < LANES; l++) lane_sum[l] += g[i + l];
    else
        for (i64 i = 0; i < body; i += LANES)
            for (int l = 0; l < LANES; l++) lane_sum[l] += g[i + l] * y[i + l];
    double sum = 0;
    for (int l = 0; l < LANES; l++) sum += lane_sum[l];
    for (i64 i = body; i < size; i++) sum += log_softmax ? (double)g[i] : (double)g[i] * y[i];
    float s = (float)sum;
    if (log_softmax)
        for (i64 i = 0; i < size; i++) dx[i] = g[i] - tg_expf(y[i]) * s;
    else
        for (i64 i = 0; i < size; i++) dx[i] = y[i] * (g[i] - s);
}

#define softmax_backward_row_f64(size, g, y, log_softmax, dx) \
    strided_backward_row_f64(g, y, size, 1, log_softmax, dx)

#define TEMPLATE "softmax_t.h"
#include "instantiate_float.h"
