/* The cumsum kernel for one element type T, summing in W (cumsum.c includes this per type). */

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
