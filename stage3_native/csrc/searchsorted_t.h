/* The searchsorted kernel for one element type T (searchsorted.c includes this per type). */

void FN(tg_searchsorted)(i64 rows, i64 n, i64 m, int shared, int right, const T *boundaries, const T *values,
                         i64 *out) {
    #pragma omp parallel for schedule(static) if (rows * m >= TG_PARALLEL_MIN)
    for (i64 i = 0; i < rows * m; i++) {
        const T *row = shared ? boundaries : boundaries + i / m * n;
        T value = values[i];
        i64 lo = 0, hi = n;
        while (lo < hi) {
            i64 mid = lo + (hi - lo) / 2;
            if (right ? !(row[mid] > value) : !(row[mid] >= value)) lo = mid + 1;
            else hi = mid;
        }
        out[i] = lo;
    }
}
