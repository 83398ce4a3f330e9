/* Scatter-add for one element type T (included by index.c per dtype). */

/* Row r of src at each outer position o in [o_lo, o_hi) added into out's row index[r] at o,
 * where that row is in [lo, hi). Each index is checked as it is read (one pass over them,
 * not two): a bad one adds nothing and is reported. */
static int FN(add_rows)(i64 o_lo, i64 o_hi, i64 lo, i64 hi, i64 size, i64 inner, const i64 *index, i64 n_index,
                        const T *src, T *out) {
    int bad = 0;
    for (i64 o = o_lo; o < o_hi; o++)
        for (i64 r = 0; r < n_index; r++) {
            i64 i = index[r];
            if (!tg_index_ok(i, size)) {
                bad = 1;
                continue;
            }
            i = tg_index_wrap(i, size);
            if (i < lo || i >= hi) continue;
            T *dst = out + (o * size + i) * inner;
            const T *row = src + (o * n_index + r) * inner;
            if (inner == 1) *dst += *row;
            else
                for (i64 j = 0; j < inner; j++) dst[j] += row[j];   /* repeats add up */
        }
    return bad;
}

/* Each element adds its contributions in index order, whatever the threads: they take
 * whole outer positions when there are enough of them (each its own slice of out), else
 * rows of out when rows are long, every thread then reading all the indices and adding
 * only those landing in its own rows (skipping another's index costs a mispredicted
 * branch, which a long row's additions pay for and a single element's do not), else one
 * thread adds them all. */
i64 FN(tg_index_add_dense)(i64 outer, i64 size, i64 inner, const i64 *index, i64 n_index,
                           const T *src, T *out) {
    int threads = outer * n_index * inner >= TG_PARALLEL_MIN ? tg_thread_count() : 1, bad = 0;
    if (threads > 1 && outer >= threads) {
        #pragma omp parallel for schedule(static) reduction(|: bad)
        for (i64 o = 0; o < outer; o++) bad |= FN(add_rows)(o, o + 1, 0, size, size, inner, index, n_index, src, out);
    } else if (threads > 1 && inner >= TG_ROW_MIN) {
        #pragma omp parallel for schedule(static) reduction(|: bad)
        for (int t = 0; t < threads; t++)
            bad |= FN(add_rows)(0, outer, size * t / threads, size * (t + 1) / threads, size, inner, index, n_index,
                                src, out);
    } else if (inner == 1) {                                     /* single elements, one thread */
        for (i64 o = 0; o < outer; o++)
            for (i64 r = 0; r < n_index; r++) {
                i64 i = index[r];
                int ok = tg_index_ok(i, size);
                bad |= !ok;
                if (ok) out[o * size + tg_index_wrap(i, size)] += src[o * n_index + r];
            }
    } else {
        bad = FN(add_rows)(0, outer, 0, size, size, inner, index, n_index, src, out);
    }
    return bad ? first_bad_index(index, n_index, size) : -1;
}
