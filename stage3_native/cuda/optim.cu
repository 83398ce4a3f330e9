/* Optimizer steps, fused, for device "cuda" (chapter on native kernels, section "CUDA"):
 * one pass over a parameter updates it and its state in place. The rules and their
 * arithmetic are csrc/optim.c's (PyTorch's SGD, Adam and AdamW; in double, each stored
 * value rounded to T), so the GPU follows the same trajectory as the CPU.
 *
 * One call updates a whole parameter group: the host loops over the parameters and
 * launches one kernel each. A group holds a few to a few hundred parameters, each a
 * separate allocation, and a launch per parameter is only queued, not waited for, so this
 * is cheap next to the step's matmuls; a single launch over a table of pointers would save
 * those few microseconds at the price of a kernel much harder to read.
 *
 * The switches (momentum or not, nesterov, weight decay) are the same for every thread, so
 * testing them per element costs nothing on a GPU: no thread of a warp goes another way.
 * Adam's bias corrections depend only on the step, so the host computes them once, with
 * the same pow() the CPU uses.
 *
 * nvcc contracts a * b + c into one fused multiply-add, rounded once; the CPU library
 * compiled for AVX2 does too, the baseline one and the emulator do not. The trajectories
 * agree to a few units in the last place, not bit for bit. */
#include <math.h>
#include "runtime.cuh"
#include "../csrc/optim_math.h"   /* the update of one element, shared with the CPU */

namespace {         /* private to this file: other .cu files may use the same names */

template <typename T>
__global__ void sgd_kernel(i64 n, T *p, const T *grad, T *v, double lr, double momentum, double dampening,
                           double weight_decay, int first_step, int nesterov) {
    for_each_index(i, n) {
        double pi = (double)p[i], vi = momentum != 0 ? (double)v[i] : 0;
        tg_sgd_step(sizeof(T) == 4, &pi, (double)grad[i], &vi, lr, momentum, dampening, weight_decay,
                    first_step, nesterov);
        if (momentum != 0) v[i] = (T)vi;
        p[i] = (T)pi;
    }
}

template <typename T>
__global__ void adam_kernel(i64 n, T *p, const T *grad, T *m, T *v, double lr, double beta1, double beta2,
                            double eps, double weight_decay, int decoupled, double step_size,
                            double root_correction) {
    for_each_index(i, n) {
        double pi = (double)p[i], mi = (double)m[i], vi = (double)v[i];
        tg_adam_step(sizeof(T) == 4, &pi, (double)grad[i], &mi, &vi, lr, beta1, beta2, eps, weight_decay,
                     decoupled, step_size, root_correction);
        m[i] = (T)mi;
        v[i] = (T)vi;
        p[i] = (T)pi;
    }
}

template <typename T>
static int sgd_update(i64 count, const i64 *sizes, void **p, void **grad, void **v, double lr, double momentum,
                      double dampening, double weight_decay, const int *first_step, int nesterov) {
    for (i64 t = 0; t < count; t++) {
        if (sizes[t] == 0) continue;
        LAUNCH(blocks_for(sizes[t]), THREADS, sgd_kernel<T>)(sizes[t], (T *)p[t], (const T *)grad[t], (T *)v[t],
                                                             lr, momentum, dampening, weight_decay,
                                                             first_step[t], nesterov);
        int status = LAUNCHED();
        if (status) return status;
    }
    return 0;
}

template <typename T>
static int adam_update(i64 count, const i64 *sizes, void **p, void **grad, void **m, void **v, double lr,
                       double beta1, double beta2, double eps, double weight_decay, int decoupled,
                       const i64 *step) {
    for (i64 t = 0; t < count; t++) {
        if (sizes[t] == 0) continue;
        double step_size, root_correction;
        tg_adam_corrections(lr, beta1, beta2, step[t], &step_size, &root_correction);
        LAUNCH(blocks_for(sizes[t]), THREADS, adam_kernel<T>)(sizes[t], (T *)p[t], (const T *)grad[t], (T *)m[t],
                                                              (T *)v[t], lr, beta1, beta2, eps, weight_decay,
                                                              decoupled, step_size, root_correction);
        int status = LAUNCHED();
        if (status) return status;
    }
    return 0;
}

}  // namespace

extern "C" {

/* count parameters of sizes[t] contiguous elements each; p, grad, v: host arrays of device
 * pointers (v[t] NULL without momentum) */
int tg_cuda_sgd_update(int dtype, i64 count, const i64 *sizes, void **p, void **grad, void **v, double lr,
                       double momentum, double dampening, double weight_decay, const int *first_step,
                       int nesterov) {
    DISPATCH_FLOAT(dtype, return sgd_update<T>(count, sizes, p, grad, v, lr, momentum, dampening, weight_decay,
                                               first_step, nesterov))
    return 0;
}

/* step[t]: parameter t's step count, from 1 */
int tg_cuda_adam_update(int dtype, i64 count, const i64 *sizes, void **p, void **grad, void **m, void **v,
                        double lr, double beta1, double beta2, double eps, double weight_decay, int decoupled,
                        const i64 *step) {
    DISPATCH_FLOAT(dtype, return adam_update<T>(count, sizes, p, grad, m, v, lr, beta1, beta2, eps, weight_decay,
                                                decoupled, step))
    return 0;
}

}  // extern "C"
