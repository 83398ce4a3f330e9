/* The running-scan kernels for one element type T, in W (cumsum.c includes this per type). */

void FN(tg_cumsum)(i64 outer, i64 size, i64 inner, const T *x, T *out) {
    #pragma omp parallel for schedule(static) if (outer * size * inner >= TG_PARALLEL_MIN)
    for (i64 row = 0; row < outer * inner; row++) {
        i64 first = row / inner * size * inner + row % inner;     /* the row's element 0 */
        W sum = 0;
        for (i64 i = 0; i < size; i++) {
            sum += (W)x[first + i * inner];
            out[first + i * inner] = (T)sum;
        }
    }
}

void FN(tg_cumprod)(i64 outer, i64 size, i64 inner, const T *x, T *out) {
    #pragma omp parallel for schedule(static) if (outer * size * inner >= TG_PARALLEL_MIN)
    for (i64 row = 0; row < outer * inner; row++) {
        i64 first = row / inner * size * inner + row % inner;
        W product = 1;
        for (i64 i = 0; i < size; i++) {
            product *= (W)x[first + i * inner];
            out[first + i * inner] = (T)product;
        }
    }
}

/* PyTorch's rule: x takes the extreme's place when it is NaN, or when the extreme is not
 * and x is at least as large (as small): so the last of equal values, and the last NaN. */
void FN(tg_cummax)(i64 outer, i64 size, i64 inner, int smallest, const T *x, T *values, i64 *indices) {
    #pragma omp parallel for schedule(static) if (outer * size * inner >= TG_PARALLEL_MIN)
    for (i64 row = 0; row < outer * inner; row++) {
        i64 first = row / inner * size * inner + row % inner;
        T best = size ? x[first] : 0;
        i64 at = 0;
        for (i64 i = 0; i < size; i++) {
            T v = x[first + i * inner];
            if (IS_NAN(v) || (!IS_NAN(best) && (smallest ? v <= best : v >= best))) {
                best = v;
                at = i;
            }
            values[first + i * inner] = best;
            indices[first + i * inner] = at;
        }
    }
}
