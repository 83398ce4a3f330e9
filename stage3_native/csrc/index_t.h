/* Scatter-add for one element type T (included by index.c per dtype). */

/* Threads split the rows of `out`, not the indices: every thread scans all the indices and
 * adds only those that land in its own rows, so no two threads write the same element, and
 * each element adds its contributions in index order whatever the thread count. Each index
 * is checked as it is read (one pass over them, not two): a bad one adds nothing and is
 * reported, the first one found again afterwards. */
i64 FN(tg_index_add_dense)(i64 outer, i64 size, i64 inner, const i64 *index, i64 n_index,
                           const T *src, T *out) {
    int parts = outer * n_index * inner >= TG_PARALLEL_MIN ? tg_thread_count() : 1, bad = 0;
    if (inner == 1 && parts == 1) {                              /* single elements, one thread */
        for (i64 o = 0; o < outer; o++)
            for (i64 r = 0; r < n_index; r++) {
                i64 i = index[r];
                int ok = tg_index_ok(i, size);
                bad |= !ok;
                if (ok) out[o * size + tg_index_wrap(i, size)] += src[o * n_index + r];
            }
        return bad ? first_bad_index(index, n_index, size) : -1;
    }
    #pragma omp parallel for schedule(static) if (parts > 1) reduction(|: bad)
    for (int t = 0; t < parts; t++) {
        i64 lo = size * t / parts, hi = size * (t + 1) / parts;  /* this thread's rows */
        for (i64 o = 0; o < outer; o++)
            for (i64 r = 0; r < n_index; r++) {
                if (!tg_index_ok(index[r], size)) {
                    bad = 1;
                    continue;
                }
                i64 i = tg_index_wrap(index[r], size);
                if (i < lo || i >= hi) continue;
                T *dst = out + (o * size + i) * inner;
                const T *row = src + (o * n_index + r) * inner;
                for (i64 j = 0; j < inner; j++) dst[j] += row[j];   /* repeats add up */
            }
    }
    return bad ? first_bad_index(index, n_index, size) : -1;
}
