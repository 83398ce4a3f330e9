/* The squared-error loss over the floating-point types (mse.c includes this per type). */

void FN(tg_mse_loss)(i64 n, const T *a, const T *b, int reduction, T *losses, T *diff) {
    double total = 0;
    for (i64 i = 0; i < n; i++) {
        T d = a[i] - b[i];
        diff[i] = d;
        if (reduction == 0) losses[i] = d * d;
        total += (double)d * (double)d;
    }
    if (reduction != 0) losses[0] = (T)(reduction == 2 ? total / (double)n : total);
}

void FN(tg_mse_loss_backward)(i64 n, const T *diff, const T *grad, i64 grad_step, double factor,
                              T *out) {
    for (i64 i = 0; i < n; i++)
        out[i] = (T)(2.0 * (double)diff[i] * (double)grad[i * grad_step] * factor);
}
