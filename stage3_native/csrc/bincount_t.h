/* The bincount kernel for one element type T (bincount.c includes this per type). */

void FN(tg_bincount)(i64 n, const i64 *index, const T *weights, i64 bins, T *out) {
    memset(out, 0, (size_t)bins * sizeof(T));
    if (weights) {
        for (i64 i = 0; i < n; i++)
            if ((uint64_t)index[i] < (uint64_t)bins) out[index[i]] += weights[i];
    } else {
        for (i64 i = 0; i < n; i++)
            if ((uint64_t)index[i] < (uint64_t)bins) out[index[i]] += 1;
    }
}

/* A run starts at element 0 and wherever an element is not equal to the one before (a NaN
 * never is): its first element and its length, the first `count` runs. */
void FN(tg_runs)(i64 n, i64 count, const T *x, T *values, i64 *counts) {
    i64 run = -1;
    for (i64 i = 0; i < n; i++) {
        if (i == 0 || !(x[i] == x[i - 1])) {
            if (++run == count) return;
            values[run] = x[i];
            counts[run] = 0;
        }
        counts[run]++;
    }
}
