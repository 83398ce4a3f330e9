/* Optimizer updates for one element type T (included by optim.c for float and double).
 * One call updates every parameter of a group: count arrays, sizes[t] elements each. */

static void FN(sgd_one)(i64 n, T *p, const T *grad, T *v, double lr, double momentum,
                        double dampening, double weight_decay, int first_step, int nesterov) {
    #pragma omp parallel for schedule(static) if (n >= TG_PARALLEL_MIN)
    for (i64 i = 0; i < n; i++) {
        double g = (double)grad[i];
        if (weight_decay != 0) g += weight_decay * (double)p[i];
        if (momentum != 0) {
            T vi = (T)(first_step ? g : momentum * (double)v[i] + (1 - dampening) * g);
            v[i] = vi;
            g = nesterov ? g + momentum * (double)vi : (double)vi;
        }
        p[i] = (T)((double)p[i] - lr * g);
    }
}

/* v[t] is NULL without momentum. */
void FN(tg_sgd_update)(i64 count, const i64 *sizes, T **p, T **grad, T **v, double lr,
                       double momentum, double dampening, double weight_decay,
                       const int *first_step, int nesterov) {
    for (i64 t = 0; t < count; t++)
        FN(sgd_one)(sizes[t], p[t], grad[t], v[t], lr, momentum, dampening, weight_decay,
                    first_step[t], nesterov);
}

static void FN(adam_one)(i64 n, T *p, const T *grad, T *m, T *v, double lr, double beta1,
                         double beta2, double eps, double weight_decay, int decoupled, i64 step) {
    double step_size = lr / (1 - pow(beta1, (double)step));
    double root_correction = sqrt(1 - pow(beta2, (double)step));
    #pragma omp parallel for schedule(static) if (n >= TG_PARALLEL_MIN)
    for (i64 i = 0; i < n; i++) {
        double g = (double)grad[i];
        if (weight_decay != 0 && decoupled) p[i] = (T)((double)p[i] * (1 - lr * weight_decay));
        else if (weight_decay != 0) g += weight_decay * (double)p[i];
        m[i] = (T)(beta1 * (double)m[i] + (1 - beta1) * g);
        v[i] = (T)(beta2 * (double)v[i] + (1 - beta2) * g * g);
        double denom = sqrt((double)v[i]) / root_correction + eps;
        p[i] = (T)((double)p[i] - step_size * ((double)m[i] / denom));
    }
}

void FN(tg_adam_update)(i64 count, const i64 *sizes, T **p, T **grad, T **m, T **v, double lr,
                        double beta1, double beta2, double eps, double weight_decay,
                        int decoupled, const i64 *step) {
    for (i64 t = 0; t < count; t++)
        FN(adam_one)(sizes[t], p[t], grad[t], m[t], v[t], lr, beta1, beta2, eps, weight_decay,
                     decoupled, step[t]);
}
