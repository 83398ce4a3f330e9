/* index_reduce for one element type T (included by index_reduce.c per dtype). */

/* a combined with b: NaN wins a maximum or a minimum */
#define TG_COMBINE_PROD(a, b) (T)((a) * (b))
#define TG_COMBINE_MEAN(a, b) (T)((a) + (b))
#define TG_COMBINE_AMAX(a, b) (IS_NAN(a) || (a) >= (b) ? (a) : (b))
#define TG_COMBINE_AMIN(a, b) (IS_NAN(a) || (a) <= (b) ? (a) : (b))

/* sum / n, n > 0: an integer's rounded down (PyTorch's floor division) */
static inline T FN(mean_of)(T sum, i64 n) {
    if ((T)0.5 != (T)0) return (T)(sum / (T)n);
    int64_t s = (int64_t)sum, q = s / n;
    return (T)(q - (s % n < 0));
}

/* src's rows at outer positions [o_lo, o_hi) combined into out's rows in [lo, hi), in index
 * order; then a mean's rows divided by their counts (the indices checked) */
#define TG_COMBINE_ROWS(COMBINE) \
    for (i64 o = o_lo; o < o_hi; o++) \
        for (i64 r = 0; r < n_index; r++) { \
            i64 i = tg_row_wrap(index[r], size); \
            if (i < lo || i >= hi) continue; \
            T *dst = out + (o * size + i) * inner; \
            const T *row = src + (o * n_index + r) * inner; \
            if (!include_self && first[i] == r) \
                for (i64 j = 0; j < inner; j++) dst[j] = row[j]; \
            else \
                for (i64 j = 0; j < inner; j++) dst[j] = COMBINE(dst[j], row[j]); \
        }

static void FN(reduce_rows)(i64 o_lo, i64 o_hi, i64 lo, i64 hi, i64 size, i64 inner, const i64 *index,
                            i64 n_index, const T *src, int reduce, int include_self, const i64 *counts,
                            const i64 *first, T *out) {
    switch (reduce) {
    case TG_PROD: TG_COMBINE_ROWS(TG_COMBINE_PROD) break;
    case TG_MEAN: TG_COMBINE_ROWS(TG_COMBINE_MEAN) break;
    case TG_AMAX: TG_COMBINE_ROWS(TG_COMBINE_AMAX) break;
    default: TG_COMBINE_ROWS(TG_COMBINE_AMIN) break;
    }
    if (reduce != TG_MEAN) return;
    for (i64 o = o_lo; o < o_hi; o++)
        for (i64 i = lo; i < hi; i++) {
            if (!counts[i]) continue;
            T *dst = out + (o * size + i) * inner;
            for (i64 j = 0; j < inner; j++) dst[j] = FN(mean_of)(dst[j], counts[i] + include_self);
        }
}

#undef TG_COMBINE_ROWS
#undef TG_COMBINE_PROD
#undef TG_COMBINE_MEAN
#undef TG_COMBINE_AMAX
#undef TG_COMBINE_AMIN

i64 FN(tg_index_reduce)(i64 outer, i64 size, i64 inner, const i64 *index, i64 n_index, const T *src, int reduce,
                        int include_self, i64 *counts, i64 *first, T *out) {
    i64 bad = tg_index_reduce_rows(index, n_index, size, counts, first);
    if (bad >= 0 || !counts || n_index == 0) return bad;
    int threads = outer * n_index * inner >= TG_PARALLEL_MIN ? tg_thread_count() : 1;
    if (threads > 1 && outer >= threads) {
        #pragma omp parallel for schedule(static)
        for (i64 o = 0; o < outer; o++)
            FN(reduce_rows)(o, o + 1, 0, size, size, inner, index, n_index, src, reduce, include_self, counts, first,
                            out);
    } else if (threads > 1 && inner >= TG_ROW_MIN) {
        #pragma omp parallel for schedule(static)
        for (int t = 0; t < threads; t++)
            FN(reduce_rows)(0, outer, size * t / threads, size * (t + 1) / threads, size, inner, index, n_index, src,
                            reduce, include_self, counts, first, out);
    } else {
        FN(reduce_rows)(0, outer, 0, size, size, inner, index, n_index, src, reduce, include_self, counts, first, out);
    }
    return -1;
}
