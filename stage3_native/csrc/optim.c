/* Optimizer steps, fused: one pass over a parameter updates it and its state in place,
 * where stage2's tensor operations would make a temporary tensor per arithmetic step.
 * PyTorch's rules, exactly as stage2_tensor/optim writes them out; for float and double,
 * with the arithmetic in double and each stored value rounded to T. One call updates a
 * whole parameter group (a native call per parameter would cost more than the update of
 * a small one); each array is contiguous (cpu/backend.py copies other views and writes
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
#include "optim_math.h"    /* the update of one element, shared with cuda/optim.cu */

/* Elements below which an update runs on one thread. An update streams 3 to 5 arrays with
 * a few operations per element, so MNIST's first weight takes about as long as waking a
 * sleeping OpenMP thread on a virtual machine: with GOMP_SPINCOUNT=1000, splitting that
 * update slows MNIST's step down. With the package's default, 30000
 * (stage3_native/__init__.py), the second thread is still spinning from the step's matmuls
 * and the split pays (benchmarks/RESULTS.md, "Figures behind design choices"). */
#define TG_UPDATE_PARALLEL_MIN (TG_PARALLEL_MIN)

#define TEMPLATE "optim_t.h"
#include "instantiate_float.h"
