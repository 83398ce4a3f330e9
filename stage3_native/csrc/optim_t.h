/* Optimizer updates for one element type T (included by optim.c for float and double).
 * One call updates every parameter of a group: count arrays, sizes[t] elements each.
 *
 * Each update is a loop over elements [lo, hi) of one parameter, compiled once per
 * instruction set (TG_SIMD): its branches (momentum or not, weight decay or not) are the
 * same for every element, so the compiler moves them out of the loop and vectorizes each
 * variant, float to double and back included. A large parameter is split among threads,
 * each calling the loop on its own slice (an OpenMP loop inside the TG_SIMD function would
 * be compiled apart from it, for the baseline instruction set). */

TG_SIMD(void, FN(sgd_range), (i64 lo, i64 hi, T *restrict p, const T *restrict grad, T *restrict v,
                               double lr, double momentum, double dampening, double weight_decay,
                               int first_step, int nesterov),
        (lo, hi, p, grad, v, lr, momentum, dampening, weight_decay, first_step, nesterov)) {
    for (i64 i = lo; i < hi; i++) {
        double pi = (double)p[i], vi = momentum != 0 ? (double)v[i] : 0;
        tg_sgd_step(sizeof(T) == 4, &pi, (double)grad[i], &vi, lr, momentum, dampening, weight_decay,
                    first_step, nesterov);
        if (momentum != 0) v[i] = (T)vi;
        p[i] = (T)pi;
    }
}

static void FN(sgd_one)(i64 n, T *p, const T *grad, T *v, double lr, double momentum,
                        double dampening, double weight_decay, int first_step, int nesterov) {
    if (n < TG_UPDATE_PARALLEL_MIN || tg_thread_count() == 1) {
        FN(sgd_range)(0, n, p, grad, v, lr, momentum, dampening, weight_decay, first_step, nesterov);
        return;
    }
    #pragma omp parallel
    {
        i64 lo, hi;
        tg_thread_range(n, 16, &lo, &hi);
        FN(sgd_range)(lo, hi, p, grad, v, lr, momentum, dampening, weight_decay, first_step, nesterov);
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

TG_SIMD(void, FN(adam_range), (i64 lo, i64 hi, T *restrict p, const T *restrict grad, T *restrict m,
                                T *restrict v, double lr, double beta1, double beta2, double eps,
                                double weight_decay, int decoupled, double step_size,
                                double root_correction),
        (lo, hi, p, grad, m, v, lr, beta1, beta2, eps, weight_decay, decoupled, step_size,
         root_correction)) {
    for (i64 i = lo; i < hi; i++) {
        double pi = (double)p[i], mi = (double)m[i], vi = (double)v[i];
        tg_adam_step(sizeof(T) == 4, &pi, (double)grad[i], &mi, &vi, lr, beta1, beta2, eps, weight_decay,
                     decoupled, step_size, root_correction);
        m[i] = (T)mi;
        v[i] = (T)vi;
        p[i] = (T)pi;
    }
}

static void FN(adam_one)(i64 n, T *p, const T *grad, T *m, T *v, double lr, double beta1,
                         double beta2, double eps, double weight_decay, int decoupled, i64 step) {
    double step_size, root_correction;
    tg_adam_corrections(lr, beta1, beta2, step, &step_size, &root_correction);
    if (n < TG_UPDATE_PARALLEL_MIN || tg_thread_count() == 1) {
        FN(adam_range)(0, n, p, grad, m, v, lr, beta1, beta2, eps, weight_decay, decoupled,
                       step_size, root_correction);
        return;
    }
    #pragma omp parallel
    {
        i64 lo, hi;
        tg_thread_range(n, 16, &lo, &hi);
        FN(adam_range)(lo, hi, p, grad, m, v, lr, beta1, beta2, eps, weight_decay, decoupled,
                       step_size, root_correction);
    }
}

void FN(tg_adam_update)(i64 count, const i64 *sizes, T **p, T **grad, T **m, T **v, double lr,
                        double beta1, double beta2, double eps, double weight_decay,
                        int decoupled, const i64 *step) {
    for (i64 t = 0; t < count; t++)
        FN(adam_one)(sizes[t], p[t], grad[t], m[t], v[t], lr, beta1, beta2, eps, weight_decay,
                     decoupled, step[t]);
}
