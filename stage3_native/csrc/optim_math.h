/* The update of one element by SGD and by Adam/AdamW (optim.c states the rules), written
 * once for the C kernels (optim_t.h) and the CUDA kernels (cuda/optim.cu): the arithmetic
 * in double, each stored value rounded to the parameter's type, so the devices follow the
 * same trajectory.
 *
 * p, v and m point at the element's values as doubles; the kernel reads them from the
 * parameter's arrays and stores them back. `single` says the parameter is float32: a value
 * stored is then rounded to float, as storing it into a float array would, and what is read
 * back later in the step is that rounded value. */
#ifndef TG_OPTIM_MATH_H
#define TG_OPTIM_MATH_H
#include <math.h>
#include <stdint.h>
#include "tg_fn.h"

/* x as the parameter's array stores it */
TG_FN double tg_stored(double x, int single) { return single ? (double)(float)x : x; }

/* SGD: g += weight_decay * p; with momentum v = momentum * v + (1 - dampening) * g (v = g on
 * the first step), then g = v, or g + momentum * v with nesterov; p -= lr * g. v is only
 * touched with momentum. */
TG_FN void tg_sgd_step(int single, double *p, double g, double *v, double lr, double momentum,
                       double dampening, double weight_decay, int first_step, int nesterov) {
    if (weight_decay != 0) g += weight_decay * *p;
    if (momentum != 0) {
        *v = tg_stored(first_step ? g : momentum * *v + (1 - dampening) * g, single);
        g = nesterov ? g + momentum * *v : *v;
    }
    *p = tg_stored(*p - lr * g, single);
}

/* Adam's bias corrections at step t (from 1), the same for every element: computed once
 * per parameter, by the host on CUDA. */
TG_FN void tg_adam_corrections(double lr, double beta1, double beta2, int64_t step,
                               double *step_size, double *root_correction) {
    *step_size = lr / (1 - pow(beta1, (double)step));
    *root_correction = sqrt(1 - pow(beta2, (double)step));
}

/* Adam: AdamW (decoupled) first shrinks p *= 1 - lr * weight_decay, Adam adds
 * weight_decay * p to g instead; m = beta1 * m + (1 - beta1) * g,
 * v = beta2 * v + (1 - beta2) * g^2, p -= step_size * m / (sqrt(v) / root_correction + eps). */
TG_FN void tg_adam_step(int single, double *p, double g, double *m, double *v, double lr,
                        double beta1, double beta2, double eps, double weight_decay, int decoupled,
                        double step_size, double root_correction) {
    if (weight_decay != 0 && decoupled) *p = tg_stored(*p * (1 - lr * weight_decay), single);
    else if (weight_decay != 0) g += weight_decay * *p;
    *m = tg_stored(beta1 * *m + (1 - beta1) * g, single);
    *v = tg_stored(beta2 * *v + (1 - beta2) * g * g, single);
    double denom = sqrt(*v) / root_correction + eps;
    *p = tg_stored(*p - step_size * (*m / denom), single);
}
#endif
