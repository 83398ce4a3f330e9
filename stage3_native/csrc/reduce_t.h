/* Reductions for one element type T (included by reduce.c per dtype): the row and column
 * kernels (TG_SIMD: vectorized, one copy per instruction set), then the three paths. */

/* ---- rows: each output reduces n contiguous elements ----------------------------------- */

/* The max (op MAX, ARGMAX) or min of n >= 1 elements, NaN if there is one. TG_LANES
 * running maxima side by side: the inner loop is TG_LANES independent compare-and-selects,
 * a few vector instructions. */
TG_INLINE T FN(extreme_loop)(int op, const T *x, i64 n) {
    T acc[TG_LANES], r = x[0];
    i64 i = 0;
    if (n >= TG_LANES) {
        for (int l = 0; l < TG_LANES; l++) acc[l] = x[l];
        if (op == MAX || op == ARGMAX)
            for (i = TG_LANES; i + TG_LANES <= n; i += TG_LANES)
                for (int l = 0; l < TG_LANES; l++) {
                    T v = x[i + l];
                    acc[l] = v > acc[l] || IS_NAN(v) ? v : acc[l];
                }
        else
            for (i = TG_LANES; i + TG_LANES <= n; i += TG_LANES)
                for (int l = 0; l < TG_LANES; l++) {
                    T v = x[i + l];
                    acc[l] = v < acc[l] || IS_NAN(v) ? v : acc[l];
                }
        for (int l = 0; l < TG_LANES; l++) if (BEATS(op, acc[l], r)) r = acc[l];
    }
    for (; i < n; i++) if (BEATS(op, x[i], r)) r = x[i];
    return r;
}

TG_SIMD static T FN(extreme_row)(int op, const T *x, i64 n) { return FN(extreme_loop)(op, x, n); }

/* Blocks of TG_SUM_BLOCK elements summed in TG_LANES accumulators of type C (float for
 * float32: 8 per AVX2 register), each block's sum then added in W (double). */
TG_SIMD static W FN(sum_row)(const T *x, i64 n) {
    W total = 0;
    for (i64 start = 0; start < n; start += TG_SUM_BLOCK) {
        const T *block = x + start;
        i64 len = n - start < TG_SUM_BLOCK ? n - start : TG_SUM_BLOCK, i = 0;
        C acc[TG_LANES] = {0};
        for (; i + TG_LANES <= len; i += TG_LANES)
            for (int l = 0; l < TG_LANES; l++) acc[l] += (C)block[i + l];
        W sum = 0;
        for (int l = 0; l < TG_LANES; l++) sum += (W)acc[l];
        for (; i < len; i++) sum += (W)block[i];
        total += sum;
    }
    return total;
}

/* Index of the first max (min) of n >= 1 elements, or of the first NaN. A vectorized
 * extreme per block; only a block that holds a new extreme is searched for its position. */
TG_SIMD static i64 FN(arg_row)(int op, const T *x, i64 n) {
    T best = x[0];
    i64 best_i = 0;
    for (i64 start = 0; start < n && !IS_NAN(best); start += TG_ARG_BLOCK) {
        i64 len = n - start < TG_ARG_BLOCK ? n - start : TG_ARG_BLOCK, j = 0;
        T m = FN(extreme_loop)(op, x + start, len);
        if (!BEATS(op, m, best)) continue;
        while (!(x[start + j] == m || (IS_NAN(m) && IS_NAN(x[start + j])))) j++;
        best = m;
        best_i = start + j;
    }
    return best_i;
}

static void FN(row_result)(int op, const T *row, i64 n, W *vals, i64 *idx, i64 o) {
    if (op == SUM) vals[o] = FN(sum_row)(row, n);
    else if (op == MAX || op == MIN) vals[o] = (W)FN(extreme_row)(op, row, n);
    else idx[o] = FN(arg_row)(op, row, n);
}

static void FN(reduce_rows)(const Plan *p, int op, const T *x, W *vals, i64 *idx) {
    int threads = tg_thread_count(), parallel = p->n_out * p->n_in >= TG_PARALLEL_MIN && threads > 1;
    if (!parallel || p->n_out >= 4 * threads) {             /* threads take whole rows */
        #pragma omp parallel if (parallel)
        {
            i64 lo, hi, oidx[TG_MAX_DIMS] = {0}, base = 0;
            tg_thread_range(p->n_out, 8, &lo, &hi);
            tg_unravel(p->n_outer, p->outer_shape, lo, oidx, 1, (i64 *[]){(i64 *)p->outer_strides}, &base);
            for (i64 o = lo; o < hi; o++) {
                FN(row_result)(op, x + base, p->n_in, vals, idx, o);
                tg_step(p->n_outer, p->outer_shape, oidx, &base, p->outer_strides, 0, 0, 0, 0);
            }
        }
        return;
    }
    /* Fewer rows than threads can share evenly: each row is split among the threads, and
     * their partial results combined in thread order (the first max still wins a tie). */
    i64 oidx[TG_MAX_DIMS] = {0}, base = 0;
    for (i64 o = 0; o < p->n_out; o++) {
        W part[threads];
        i64 part_i[threads];
        int has[threads];
        memset(has, 0, sizeof has);
        #pragma omp parallel
        {
            i64 lo, hi;
            tg_thread_range(p->n_in, 16, &lo, &hi);
            int t = tg_thread_index();
            if (lo < hi) {
                has[t] = 1;
                FN(row_result)(op, x + base + lo, hi - lo, part, part_i, t);
                part_i[t] += lo;
            }
        }
        int first = 1;
        for (int t = 0; t < threads; t++) {
            if (!has[t]) continue;
            if (op == SUM) vals[o] = first ? part[t] : vals[o] + part[t];
            else if (op == MAX || op == MIN) vals[o] = first || BEATS(op, part[t], vals[o]) ? part[t] : vals[o];
            else if (first || BEATS(op, x[base + part_i[t]], x[base + idx[o]])) idx[o] = part_i[t];
            first = 0;
        }
        tg_step(p->n_outer, p->outer_shape, oidx, &base, p->outer_strides, 0, 0, 0, 0);
    }
}

/* ---- columns: rows of the input combined into a row of accumulators ------------------- */

/* Fold row i (m contiguous elements) into the accumulators: acc holds sums, maxima or
 * minima; for argmax/argmin acc holds the running extremes and at their row numbers. */
TG_SIMD static void FN(column_step)(int op, W *restrict acc, i64 *restrict at, const T *row, i64 m, i64 i) {
    if (i == 0) {
        for (i64 j = 0; j < m; j++) acc[j] = (W)row[j];
        for (i64 j = 0; at && j < m; j++) at[j] = 0;
        return;
    }
    switch (op) {
    case SUM:
        for (i64 j = 0; j < m; j++) acc[j] += (W)row[j];
        break;
    case MAX:
        for (i64 j = 0; j < m; j++) { W v = (W)row[j]; acc[j] = v > acc[j] || IS_NAN(v) ? v : acc[j]; }
        break;
    case MIN:
        for (i64 j = 0; j < m; j++) { W v = (W)row[j]; acc[j] = v < acc[j] || IS_NAN(v) ? v : acc[j]; }
        break;
    case ARGMAX:
        for (i64 j = 0; j < m; j++) {
            W v = (W)row[j];
            int take = v > acc[j] || (IS_NAN(v) && !IS_NAN(acc[j]));
            acc[j] = take ? v : acc[j];
            at[j] = take ? i : at[j];
        }
        break;
    default:
        for (i64 j = 0; j < m; j++) {
            W v = (W)row[j];
            int take = v < acc[j] || (IS_NAN(v) && !IS_NAN(acc[j]));
            acc[j] = take ? v : acc[j];
            at[j] = take ? i : at[j];
        }
    }
}

static void FN(reduce_columns)(const Plan *p, int op, const T *x, W *vals, i64 *idx) {
    int last = p->n_outer - 1;
    i64 m = p->outer_shape[last], rest = p->n_out / m, tiles = (m + TG_TILE - 1) / TG_TILE;
    #pragma omp parallel if (p->n_out * p->n_in >= TG_PARALLEL_MIN && tg_thread_count() > 1)
    {
        W extremes[TG_TILE];                       /* argmax/argmin: the running values */
        i64 lo, hi;
        tg_thread_range(rest * tiles, 1, &lo, &hi);
        for (i64 item = lo; item < hi; item++) {   /* columns [j0, j0 + len) of kept row r */
            i64 r = item / tiles, j0 = item % tiles * TG_TILE, len = m - j0 < TG_TILE ? m - j0 : TG_TILE;
            i64 oidx[TG_MAX_DIMS] = {0}, iidx[TG_MAX_DIMS] = {0}, base = 0, pos = 0;
            tg_unravel(last, p->outer_shape, r, oidx, 1, (i64 *[]){(i64 *)p->outer_strides}, &base);
            W *acc = op == SUM || op == MAX || op == MIN ? vals + r * m + j0 : extremes;
            i64 *at = acc == extremes ? idx + r * m + j0 : NULL;
            for (i64 i = 0; i < p->n_in; i++) {
                FN(column_step)(op, acc, at, x + base + pos + j0, len, i);
                tg_step(p->n_inner, p->inner_shape, iidx, &pos, p->inner_strides, 0, 0, 0, 0);
            }
        }
    }
}

/* ---- strided: the index increment over each output's elements ------------------------- */

static void FN(reduce_strided)(const Plan *p, int op, const T *x, W *vals, i64 *idx) {
    #pragma omp parallel if (p->n_out * p->n_in >= TG_PARALLEL_MIN && tg_thread_count() > 1)
    {
        i64 lo, hi, oidx[TG_MAX_DIMS] = {0}, base = 0;
        tg_thread_range(p->n_out, 8, &lo, &hi);
        tg_unravel(p->n_outer, p->outer_shape, lo, oidx, 1, (i64 *[]){(i64 *)p->outer_strides}, &base);
        for (i64 o = lo; o < hi; o++) {
            i64 iidx[TG_MAX_DIMS] = {0}, pos = base, best_i = 0;
            W sum = 0;
            T best = x[base];
            for (i64 i = 0; i < p->n_in; i++) {
                T v = x[pos];
                if (op == SUM) sum += (W)v;
                else if (BEATS(op, v, best)) { best = v; best_i = i; }
                tg_step(p->n_inner, p->inner_shape, iidx, &pos, p->inner_strides, 0, 0, 0, 0);
            }
            if (op == SUM) vals[o] = sum;
            else if (op == MAX || op == MIN) vals[o] = (W)best;
            else idx[o] = best_i;
            tg_step(p->n_outer, p->outer_shape, oidx, &base, p->outer_strides, 0, 0, 0, 0);
        }
    }
}

/* vals for sum, max, min; idx for argmax, argmin */
static void FN(reduce)(const Plan *p, int op, const T *x, W *vals, i64 *idx) {
    if (p->n_out == 0) return;
    if (p->n_in == 0) {                           /* a sum over nothing (max raises before) */
        for (i64 o = 0; o < p->n_out; o++) vals[o] = 0;
        return;
    }
    switch (p->path) {
    case TG_REDUCE_ROWS: FN(reduce_rows)(p, op, x, vals, idx); break;
    case TG_REDUCE_COLUMNS: FN(reduce_columns)(p, op, x, vals, idx); break;
    default: FN(reduce_strided)(p, op, x, vals, idx);
    }
}

void FN(tg_reduce)(int op, int n_outer, const i64 *outer_shape, const i64 *outer_strides,
                   int n_inner, const i64 *inner_shape, const i64 *inner_strides,
                   const T *x, i64 xo, W *out) {
    Plan p = plan_reduce(n_outer, outer_shape, outer_strides, n_inner, inner_shape, inner_strides);
    FN(reduce)(&p, op, x + xo, out, NULL);
}

void FN(tg_argreduce)(int op, int n_outer, const i64 *outer_shape, const i64 *outer_strides,
                      int n_inner, const i64 *inner_shape, const i64 *inner_strides,
                      const T *x, i64 xo, i64 *out) {
    Plan p = plan_reduce(n_outer, outer_shape, outer_strides, n_inner, inner_shape, inner_strides);
    FN(reduce)(&p, op, x + xo, NULL, out);
}
