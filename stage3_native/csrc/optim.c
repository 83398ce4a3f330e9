/* Optimizer steps, fused: one pass over a parameter updates it and its state in place,
 * where stage2's tensor operations would make a temporary tensor per arithmetic step.
 * PyTorch's rules, exactly as stage2_tensor/optim writes them out; for float and double,
 * with the arithmetic in double and each stored value rounded to T. One call updates a
 * whole parameter group (a native call per parameter would cost more than the update of
 * a small one); each array is contiguous (cpu_backend.py copies other views and writes
 * them back). Large parameters are split across threads; each loop is vectorized
 * (optim_t.h).
 *
 * SGD:  g += weight_decay * p; with momentum: v = momentum * v + (1 - dampening) * g
 *       (v = g on the first step), g = v, or g + momentum * v with nesterov; p -= lr * g.
 * Adam: AdamW (decoupled) first shrinks p *= 1 - lr * weight_decay, Adam adds
 *       weight_decay * p to g instead; m = beta1 * m + (1 - beta1) * g,
 *       v = beta2 * v + (1 - beta2) * g^2,
 *       p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps).
 */
#include <math.h>
#include "parallel.h"
#include "simd.h"
#include "strided.h"

#define TEMPLATE "optim_t.h"
#include "instantiate_float.h"
