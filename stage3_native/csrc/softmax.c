/* Softmax, log-softmax and cross-entropy, fused: one pass per row instead of the five
 * tensor operations (max, subtract, exp, sum, divide) stage2 would otherwise launch, each
 * with an intermediate tensor. For float and double; inputs are contiguous (cpu_backend.py
 * copies other views first).
 *
 * Every row is shifted by its max first: e^(x - max) <= 1, so large logits cannot overflow,
 * and the sum of exponentials is at least 1, so its log is finite. The arithmetic is in
 * double for both types, as stage2's python kernels do it; only the results are rounded.
 */
#include <math.h>
#include "strided.h"

#define TEMPLATE "softmax_t.h"
#include "instantiate_float.h"
