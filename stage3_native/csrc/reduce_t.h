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
        if (op == MAX || op == ARGMAX) {
            for (i = TG_LANES; i + TG_LANES <= n; i += TG_LANES)
                for (int l = 0; l < TG_LANES; l++) {
                    T v = x[i + l];
                    acc[l] = v > acc[l] || IS_NAN(v) ? v : acc[l];
                }
            for (int w = TG_LANES / 2; w > 0; w /= 2)      /* the lanes by halving: vector steps */
                for (int l = 0; l < w; l++) {
                    T v = acc[l + w];
                    acc[l] = v > acc[l] || IS_NAN(v) ? v : acc[l];
                }
        } else {
            for (i = TG_LANES; i + TG_LANES <= n; i += TG_LANES)
                for (int l = 0; l < TG_LANES; l++) {
                    T v = x[i + l];
                    acc[l] = v < acc[l] || IS_NAN(v) ? v : acc[l];
                }
            for (int w = TG_LANES / 2; w > 0; w /= 2)
                for (int l = 0; l < w; l++) {
                    T v = acc[l + w];
                    acc[l] = v < acc[l] || IS_NAN(v) ? v : acc[l];
                }
        }
        r = acc[0];
    }
    for (; i < n; i++) if (BEATS(op, x[i], r)) r = x[i];
    return r;
}

TG_SIMD(T, FN(extreme_row), (int op, const T *x, i64 n), (op, x, n)) {
    return FN(extreme_loop)(op, x, n);
}

/* Blocks of TG_SUM_BLOCK elements summed in TG_SUM_LANES accumulators of type C (float for
 * float32: 8 per AVX2 register), each block's sum then added in W (double). Bytes (bool,
 * the count of a mask) add in one uint32 per block instead, exact (at most 255 an element),
 * a loop the compiler widens and vectorizes itself; with lanes written out it spills them. */
TG_SIMD(W, FN(sum_row), (const T *x, i64 n), (x, n)) {
    W total = 0;
    for (i64 start = 0; start < n; start += TG_SUM_BLOCK) {
        const T *block = x + start;
        i64 len = n - start < TG_SUM_BLOCK ? n - start : TG_SUM_BLOCK, i = 0;
        if (sizeof(T) == 1) {
            uint32_t count = 0;
            for (; i < len; i++) count += (uint32_t)block[i];
            total += (W)count;
            continue;
        }
        C acc[TG_SUM_LANES] = {0};
        for (; i + TG_SUM_LANES <= len; i += TG_SUM_LANES)
            for (int l = 0; l < TG_SUM_LANES; l++) acc[l] += (C)block[i + l];
        for (int w = TG_SUM_LANES / 2; w > 0; w /= 2)
            for (int l = 0; l < w; l++) acc[l] += acc[l + w];
        W sum = (W)acc[0];
        for (; i < len; i++) sum += (W)block[i];
        total += sum;
    }
    return total;
}

/* Index of the first max (min) of n >= 1 elements, or of the first NaN. Two passes, both
 * vectorized: the extreme of each block of TG_ARG_BLOCK elements (extreme_loop), keeping
 * the first block whose extreme beats all before it; then, in that block only, the first
 * element equal to it, found 32 elements at a time. */
TG_SIMD(i64, FN(arg_row), (int op, const T *x, i64 n), (op, x, n)) {
    T best = FN(extreme_loop)(op, x, n < TG_ARG_BLOCK ? n : TG_ARG_BLOCK);
    i64 where = 0;
    for (i64 start = TG_ARG_BLOCK; start < n && !IS_NAN(best); start += TG_ARG_BLOCK) {
        T m = FN(extreme_loop)(op, x + start, n - start < TG_ARG_BLOCK ? n - start : TG_ARG_BLOCK);
        if (BEATS(op, m, best)) { best = m; where = start; }
    }
    const T *block = x + where;
    i64 len = n - where < TG_ARG_BLOCK ? n - where : TG_ARG_BLOCK, j = 0;
    int nan = IS_NAN(best);
    for (; j + 32 <= len; j += 32) {
        int hit = 0;
        for (int l = 0; l < 32; l++) hit |= block[j + l] == best || (nan && IS_NAN(block[j + l]));
        if (hit) break;
    }
    while (!(block[j] == best || (nan && IS_NAN(block[j])))) j++;
    return where + j;
}

/* One row's result: its sum or extreme, in W; for argmax, argmin its index, into *at. */
static W FN(row_value)(int op, const T *row, i64 n, i64 *at) {
    if (op == SUM) return FN(sum_row)(row, n);
    if (op == MAX || op == MIN) return (W)FN(extreme_row)(op, row, n);
    *at = FN(arg_row)(op, row, n);
    return 0;
}

/* Outputs [lo, hi) of the rows path, each reducing its own contiguous row. */
static void FN(rows_range)(const Plan *p, int op, const T *x, Out out, i64 *idx, i64 lo, i64 hi) {
    i64 oidx[TG_MAX_DIMS] = {0}, base = 0;
    tg_unravel(p->n_outer, p->outer_shape, lo, oidx, 1, (i64 *[]){(i64 *)p->outer_strides}, &base);
    for (i64 o = lo; o < hi; o++) {
        i64 at = 0;
        W v = FN(row_value)(op, x + base, p->n_in, &at);
        if (idx) idx[o] = at;
        else STORE(out, o, v);
        tg_step(p->n_outer, p->outer_shape, oidx, &base, p->outer_strides, 0, 0, 0, 0);
    }
}

static void FN(reduce_rows)(const Plan *p, int op, const T *x, Out out, i64 *idx) {
    int threads = tg_thread_count(), parallel = p->n_out * p->n_in >= TG_PARALLEL_MIN && threads > 1;
    /* Not "#pragma omp parallel if (parallel)": even a region that runs on one thread
     * enters the OpenMP runtime, which costs more than summing a small tensor. */
    if (!parallel) {
        FN(rows_range)(p, op, x, out, idx, 0, p->n_out);
        return;
    }
    if (p->n_out >= 4 * threads) {                          /* threads take whole rows */
        #pragma omp parallel
        {
            i64 lo, hi;
            tg_thread_range(p->n_out, 8, &lo, &hi);
            FN(rows_range)(p, op, x, out, idx, lo, hi);
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
                part[t] = FN(row_value)(op, x + base + lo, hi - lo, &part_i[t]);
                part_i[t] += lo;
            }
        }
        int first = 1;
        W v = 0;
        i64 at = 0;
        for (int t = 0; t < threads; t++) {
            if (!has[t]) continue;
            if (op == SUM) v = first ? part[t] : v + part[t];
            else if (op == MAX || op == MIN) v = first || BEATS(op, part[t], v) ? part[t] : v;
            else if (first || BEATS(op, x[base + part_i[t]], x[base + at])) at = part_i[t];
            first = 0;
        }
        if (idx) idx[o] = at;
        else STORE(out, o, v);
        tg_step(p->n_outer, p->outer_shape, oidx, &base, p->outer_strides, 0, 0, 0, 0);
    }
}

/* ---- strided: the index increment over each output's elements ------------------------- */

/* Outputs [lo, hi) of the strided path. */
static void FN(strided_range)(const Plan *p, int op, const T *x, Out out, i64 *idx, i64 lo, i64 hi) {
    i64 oidx[TG_MAX_DIMS] = {0}, base = 0;
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
        if (op == SUM) STORE(out, o, sum);
        else if (op == MAX || op == MIN) STORE(out, o, (W)best);
        else idx[o] = best_i;
        tg_step(p->n_outer, p->outer_shape, oidx, &base, p->outer_strides, 0, 0, 0, 0);
    }
}

static void FN(reduce_strided)(const Plan *p, int op, const T *x, Out out, i64 *idx) {
    if (p->n_out * p->n_in < TG_PARALLEL_MIN || tg_thread_count() == 1) {  /* no OpenMP region */
        FN(strided_range)(p, op, x, out, idx, 0, p->n_out);
        return;
    }
    #pragma omp parallel
    {
        i64 lo, hi;
        tg_thread_range(p->n_out, 8, &lo, &hi);
        FN(strided_range)(p, op, x, out, idx, lo, hi);
    }
}

/* ---- columns: rows of the input folded into a row of accumulators --------------------- */

/* Fold k rows (row numbers i0, i0 + 1, ...; m contiguous elements each) into one tile's
 * accumulators; `start`: they are the first rows, nothing to fold into yet. sum: the rows
 * are added up in `block` (type C: float for float32), then block into acc (W, double):
 * float speed, and the double sum sees one addition per TG_FOLD_ROWS rows. max/min:
 * block holds the running extremes; argmax/argmin: block and at (their row numbers). */
TG_SIMD(void, FN(fold_rows), (int op, int start, i64 i0, int k, const T *const *rows, i64 m,
                               C *restrict block, W *restrict acc, i64 *restrict at),
        (op, start, i0, k, rows, m, block, acc, at)) {
    int r = 0;
    if (op == SUM || start) {
        for (i64 j = 0; j < m; j++) block[j] = (C)rows[0][j];
        for (i64 j = 0; start && at && j < m; j++) at[j] = i0;
        r = 1;
    }
    /* sum, max, min: four rows per pass over block, a quarter of its loads and stores */
    for (; r + 4 <= k && op <= MIN; r += 4) {
        const T *r0 = rows[r], *r1 = rows[r + 1], *r2 = rows[r + 2], *r3 = rows[r + 3];
        if (op == SUM)
            for (i64 j = 0; j < m; j++) block[j] += ((C)r0[j] + (C)r1[j]) + ((C)r2[j] + (C)r3[j]);
        else if (op == MAX)
            for (i64 j = 0; j < m; j++) {
                C b = block[j], v0 = (C)r0[j], v1 = (C)r1[j], v2 = (C)r2[j], v3 = (C)r3[j];
                b = v0 > b || IS_NAN(v0) ? v0 : b;
                b = v1 > b || IS_NAN(v1) ? v1 : b;
                b = v2 > b || IS_NAN(v2) ? v2 : b;
                block[j] = v3 > b || IS_NAN(v3) ? v3 : b;
            }
        else
            for (i64 j = 0; j < m; j++) {
                C b = block[j], v0 = (C)r0[j], v1 = (C)r1[j], v2 = (C)r2[j], v3 = (C)r3[j];
                b = v0 < b || IS_NAN(v0) ? v0 : b;
                b = v1 < b || IS_NAN(v1) ? v1 : b;
                b = v2 < b || IS_NAN(v2) ? v2 : b;
                block[j] = v3 < b || IS_NAN(v3) ? v3 : b;
            }
    }
    for (; r < k; r++) {
        const T *row = rows[r];            /* a local: the vectorized loop reloads no pointer */
        switch (op) {
        case SUM:
            for (i64 j = 0; j < m; j++) block[j] += (C)row[j];
            break;
        case MAX:
            for (i64 j = 0; j < m; j++) { C v = (C)row[j]; block[j] = v > block[j] || IS_NAN(v) ? v : block[j]; }
            break;
        case MIN:
            for (i64 j = 0; j < m; j++) { C v = (C)row[j]; block[j] = v < block[j] || IS_NAN(v) ? v : block[j]; }
            break;
        case ARGMAX:
            for (i64 j = 0; j < m; j++) {
                C v = (C)row[j];
                int take = v > block[j] || (IS_NAN(v) && !IS_NAN(block[j]));
                block[j] = take ? v : block[j];
                at[j] = take ? i0 + r : at[j];
            }
            break;
        default:
            for (i64 j = 0; j < m; j++) {
                C v = (C)row[j];
                int take = v < block[j] || (IS_NAN(v) && !IS_NAN(block[j]));
                block[j] = take ? v : block[j];
                at[j] = take ? i0 + r : at[j];
            }
        }
    }
    if (op == SUM && start) for (i64 j = 0; j < m; j++) acc[j] = (W)block[j];
    else if (op == SUM) for (i64 j = 0; j < m; j++) acc[j] += (W)block[j];
}

/* Reduced rows [i_lo, i_hi) of columns [j0, j0 + m) of kept row r: the results (sums,
 * extremes) into vals (when given), row numbers of the extremes into at (arg ops). */
static void FN(fold_tile)(const Plan *p, int op, const T *x, i64 r, i64 j0, i64 m, i64 i_lo, i64 i_hi,
                          W *vals, i64 *at) {
    _Alignas(64) C block[TG_TILE];          /* whole cache lines: no load splits across two */
    const T *rows[TG_FOLD_ROWS];
    i64 oidx[TG_MAX_DIMS] = {0}, iidx[TG_MAX_DIMS] = {0}, base = 0, pos = 0;
    tg_unravel(p->n_outer - 1, p->outer_shape, r, oidx, 1, (i64 *[]){(i64 *)p->outer_strides}, &base);
    tg_unravel(p->n_inner, p->inner_shape, i_lo, iidx, 1, (i64 *[]){(i64 *)p->inner_strides}, &pos);
    for (i64 i = i_lo; i < i_hi;) {
        int k = i_hi - i < TG_FOLD_ROWS ? (int)(i_hi - i) : TG_FOLD_ROWS;
        for (int q = 0; q < k; q++) {
            rows[q] = x + base + pos + j0;
            tg_step(p->n_inner, p->inner_shape, iidx, &pos, p->inner_strides, 0, 0, 0, 0);
        }
        FN(fold_rows)(op, i == i_lo, i, k, rows, m, block, vals, at);
        i += k;
    }
    for (i64 j = 0; op != SUM && vals && j < m; j++) vals[j] = (W)block[j];
}

/* Work item w of the columns path: one tile of TG_TILE columns of one kept row, and one
 * part of its reduced rows. */
static void FN(column_item)(const Plan *p, int op, const T *x, i64 w, i64 tiles, i64 parts,
                            W *scratch, i64 *scratch_idx, i64 *idx) {
    int arg = op == ARGMAX || op == ARGMIN;
    i64 m = p->outer_shape[p->n_outer - 1], n_out = p->n_out;
    i64 item = w / parts, part = w % parts, r = item / tiles, j0 = item % tiles * TG_TILE;
    i64 len = m - j0 < TG_TILE ? m - j0 : TG_TILE, o = r * m + j0;
    W *v = scratch + part * n_out + o;
    i64 *at = !arg ? NULL : part == 0 ? idx + o : scratch_idx + part * n_out + o;
    FN(fold_tile)(p, op, x, r, j0, len, p->n_in * part / parts, p->n_in * (part + 1) / parts, v, at);
}

static void FN(reduce_columns)(const Plan *p, int op, const T *x, Out out, i64 *idx) {
    int threads = tg_thread_count(), arg = op == ARGMAX || op == ARGMIN;
    int parallel = p->n_out * p->n_in >= TG_PARALLEL_MIN && threads > 1;
    i64 m = p->outer_shape[p->n_outer - 1], n_out = p->n_out;
    i64 tiles = (m + TG_TILE - 1) / TG_TILE, items = n_out / m * tiles;
    /* Fewer tiles than threads (x.sum(0) of a matrix is one): the reduced rows are split
     * among the threads too, each part folded into accumulators of its own, which are
     * combined in order at the end (so the first extreme still wins a tie). Each part's
     * results are kept in W (sums accumulate there), stored as the output's dtype at the
     * end; arg ops keep each part's extremes beside the row numbers, to compare them. */
    i64 parts = parallel && items < threads ? threads : 1;
    parts = parts < p->n_in ? parts : p->n_in;
    W *scratch = malloc(parts * n_out * sizeof(W));              /* each part's results */
    i64 *scratch_idx = parts > 1 && arg ? malloc(parts * n_out * sizeof(i64)) : NULL;
    if (!scratch || (parts > 1 && arg && !scratch_idx)) {          /* out of memory */
        free(scratch);
        free(scratch_idx);
        FN(reduce_strided)(p, op, x, out, idx);
        return;
    }
    if (parallel) {
        #pragma omp parallel for schedule(static)
        for (i64 w = 0; w < items * parts; w++)
            FN(column_item)(p, op, x, w, tiles, parts, scratch, scratch_idx, idx);
    } else {                                   /* no OpenMP region (see reduce_rows) */
        for (i64 w = 0; w < items * parts; w++)
            FN(column_item)(p, op, x, w, tiles, parts, scratch, scratch_idx, idx);
    }
    for (i64 part = 1; part < parts; part++)
        for (i64 o = 0; o < n_out; o++) {
            W v = scratch[part * n_out + o];
            if (op == SUM) scratch[o] += v;
            else if (BEATS(op, v, scratch[o])) {
                scratch[o] = v;
                if (arg) idx[o] = scratch_idx[part * n_out + o];
            }
        }
    for (i64 o = 0; !arg && o < n_out; o++) STORE(out, o, scratch[o]);
    free(scratch);
    free(scratch_idx);
}

/* out for sum, max, min; idx for argmax, argmin */
static void FN(reduce)(const Plan *p, int op, const T *x, Out out, i64 *idx) {
    if (p->n_out == 0) return;
    if (p->n_in == 0) {                           /* a sum over nothing (max raises before) */
        for (i64 o = 0; o < p->n_out; o++) STORE(out, o, (W)0);
        return;
    }
    switch (p->path) {
    case TG_REDUCE_ROWS: FN(reduce_rows)(p, op, x, out, idx); break;
    case TG_REDUCE_COLUMNS: FN(reduce_columns)(p, op, x, out, idx); break;
    default: FN(reduce_strided)(p, op, x, out, idx);
    }
}

void FN(tg_reduce)(int op, int n_outer, const i64 *outer_shape, const i64 *outer_strides,
                   int n_inner, const i64 *inner_shape, const i64 *inner_strides,
                   const T *x, i64 xo, void *out, int out_dtype) {
    Plan p = plan_reduce(n_outer, outer_shape, outer_strides, n_inner, inner_shape, inner_strides);
    FN(reduce)(&p, op, x + xo, (Out){out, out_dtype}, NULL);
}

void FN(tg_argreduce)(int op, int n_outer, const i64 *outer_shape, const i64 *outer_strides,
                      int n_inner, const i64 *inner_shape, const i64 *inner_strides,
                      const T *x, i64 xo, i64 *out) {
    Plan p = plan_reduce(n_outer, outer_shape, outer_strides, n_inner, inner_shape, inner_strides);
    FN(reduce)(&p, op, x + xo, (Out){NULL, 0}, out);
}
