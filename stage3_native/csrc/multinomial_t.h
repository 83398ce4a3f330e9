/* Multinomial draws for one float type T (multinomial.c includes this per type). */

/* The running sums of a row's n weights into cum; whether the row is a distribution to
 * draw `samples` from (every weight finite and >= 0, some above 0, and without replacement
 * at least `samples` above 0). */
static int FN(running_sums)(const T *w, i64 n, i64 samples, int replacement, double *cum) {
    double sum = 0;
    i64 above = 0;
    int valid = 1;
    for (i64 i = 0; i < n; i++) {
        double x = (double)w[i];
        valid &= x >= 0 && x <= DBL_MAX;                         /* false for nan */
        above += x > 0;
        sum += x;
        cum[i] = sum;
    }
    return valid && above > 0 && (replacement || above >= samples);
}

/* Row r's draws: a bisection each with replacement; without, each drawn weight zeroed in
 * `left` (the row's weights not drawn yet) and the sums from it on summed again. */
static void FN(draw_row)(const T *w, i64 n, i64 samples, int replacement, const double *u, double *cum,
                         i64 *out) {
    if (replacement) {
        for (i64 s = 0; s < samples; s++) {
            i64 at = first_above(cum, n, u[s] * cum[n - 1]);
            while (at > 0 && w[at] == 0) at--;                   /* rounding past the top end */
            out[s] = at;
        }
        return;
    }
    double *left = cum + n;
    for (i64 i = 0; i < n; i++) left[i] = (double)w[i];
    for (i64 s = 0; s < samples; s++) {
        i64 at = first_above(cum, n, u[s] * cum[n - 1]);
        while (at > 0 && left[at] == 0) at--;
        out[s] = at;
        left[at] = 0;
        double sum = at > 0 ? cum[at - 1] : 0;
        for (i64 i = at; i < n; i++) {
            sum += left[i];
            cum[i] = sum;
        }
    }
}

int FN(tg_multinomial)(i64 rows, i64 n, i64 samples, const T *weights, const double *uniforms, int replacement,
                       i64 *out, i64 *bad) {
    i64 first_bad = rows;
    int failed = 0;
    size_t scratch = (size_t)(n > 0 ? n : 1) * (replacement ? 1 : 2) * sizeof(double);
    #pragma omp parallel if (rows > 1 && rows * (n + samples) >= TG_PARALLEL_MIN) \
        reduction(min: first_bad) reduction(|: failed)
    {
        double *cum = malloc(scratch);
        failed |= cum == NULL;
        #pragma omp for schedule(static)
        for (i64 r = 0; r < rows; r++) {
            if (cum == NULL) continue;
            const T *w = weights + r * n;
            if (!FN(running_sums)(w, n, samples, replacement, cum)) {
                if (r < first_bad) first_bad = r;
                continue;
            }
            FN(draw_row)(w, n, samples, replacement, uniforms + r * samples, cum, out + r * samples);
        }
        free(cum);
    }
    *bad = first_bad < rows ? first_bad : -1;
    return failed;
}
