/* Batch normalization in training mode, fused (chapter on convolutional networks, "batch
 * normalization"): forward and backward each one kernel call instead of the composite's
 * ~10 tensor operations forward and ~20 backward (stage2_tensor/normalization_functions.py,
 * which stays as the naive version beside this one and as the path of every other device).
 *
 * x is contiguous (N, C, S), S the product of the spatial extents: channel c's N * S
 * elements are N runs of S, one per image. Per channel:
 *
 *   forward    mean = sum x / (N S), var = sum (x - mean)^2 / (N S) (biased; two passes,
 *              from the centred values, in double), rstd = 1 / sqrt(var + eps);
 *              out = x * scale + shift with scale = weight * rstd, shift = bias - mean * scale
 *              (one multiply-add per element). mean and var are kept: the backward pass
 *              and the running statistics read them.
 *   backward   with xhat = (x - mean) * rstd and g the upstream gradient:
 *              dbias = sum g, dweight = sum g * xhat,
 *              dx = weight * rstd * (g - dbias / (N S) - xhat * dweight / (N S))
 *              (the Jacobian of xhat, rstd (I - 1/n - xhat xhat^T / n), applied by two sums).
 *
 * Threads split the channels, each summing its own channel in one fixed order: the same
 * bits whatever the thread count. weight and bias may be NULL (1 and 0).
 */
#include <math.h>
#include "parallel.h"
#include "tracegrad.h"

#define TEMPLATE "batchnorm_t.h"
#include "instantiate_float.h"
