/* The dropout kernel over the floating-point types (dropout.c includes this per type). */

void FN(tg_dropout)(i64 n, const T *x, uint64_t seed, double p, T *out) {
    /* factor[keep]: a load instead of a branch, which the CPU would mispredict at random
     * (for p = 0.1, one element in ten), costing more than the hash */
    const double factor[2] = {0.0, 1.0 / (1.0 - p)};
    uint64_t threshold = tg_dropout_threshold(p);
    #pragma omp parallel for schedule(static) if (n >= TG_PARALLEL_MIN)
    for (i64 i = 0; i < n; i++)
        out[i] = (T)((double)x[i] * factor[tg_dropout_keep(seed, (uint64_t)i, threshold)]);
}
