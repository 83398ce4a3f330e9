/* Layer normalization, fused: forward and backward each one pass over the rows, for float
 * and double. x is contiguous, viewed as (rows, n), normalized over its last dimension n
 * (cpu/backend.py copies other views first); weight and bias hold n values, or are NULL.
 *
 * Forward, per row:   mean = sum_j x_j / n,   var = sum_j (x_j - mean)^2 / n  (biased, as
 *                     PyTorch), rstd = 1 / sqrt(var + eps), xhat_j = (x_j - mean) * rstd,
 *                     out_j = xhat_j * weight_j + bias_j.
 * mean and rstd are kept, one per row: the backward pass recomputes xhat from them.
 *
 * Backward, with g the upstream gradient and gw_j = g_j * weight_j (g_j without weight):
 *     dx_j = rstd * (gw_j - mean_k(gw_k) - xhat_j * mean_k(gw_k * xhat_k))     per row,
 *     dweight_j = sum over rows of g_j * xhat_j,   dbias_j = sum over rows of g_j.
 * (The Jacobian of xhat is rstd * (I - 1/n - xhat xhat^T / n); two row sums apply it.)
 *
 * Written with stage2's tensor operations, the forward pass is 11 operations (mean,
 * subtract, square, mean, add eps, sqrt, divide, scale, shift...) and the backward pass
 * about 25, each reading and writing a whole (rows, n) tensor and launching from Python.
 * Here a row is read once into cache and every statistic comes from it: the work is two or
 * three sweeps over n numbers that sit in L1, and one kernel call per direction.
 *
 * The statistics (each row's sums) are accumulated in double for both types, as softmax.c
 * does; the element-wise passes that apply them run in T (see layernorm_t.h), with the
 * formulas of one element in layernorm_math.h, which cuda/layernorm.cu shares. Rows are
 * split across threads when the tensor is large (TG_PARALLEL_MIN elements). dweight and
 * dbias sum over rows, which threads would race on: each chunk of LN_CHUNK rows sums into
 * its own partial array (in double), and the partials are added in chunk order afterwards.
 * The chunks do not depend on the thread count, so the result is the same bits on 1
 * thread or 16.
 */
#include <math.h>
#include <stdlib.h>
#include "parallel.h"
#include "tracegrad.h"

#define LN_CHUNK 64                /* rows per partial sum of dweight and dbias */

#define TEMPLATE "layernorm_t.h"
#include "instantiate_float.h"
