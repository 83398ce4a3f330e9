/* Linear + cross-entropy kernels for one element type T (included by
 * linear_cross_entropy.c for float and double; FN(name) gives name_f32 or name_f64). */

/* z (rows x cols, row-major) = x[rows] @ W[cols]^T (+ bias[cols]): x and W row-major with
 * c values a row, so W^T is W read with its strides swapped. */
static void FN(lce_logits)(i64 rows, i64 cols, i64 c, const T *x, const T *w, const T *bias, T *z) {
    static const i64 zero = 0;
    FN(tg_gemm)(1, &zero, &zero, rows, cols, c, x, c, 1, w, 1, c, bias, z);
}

static int FN(lce_ignored)(const i64 *targets, i64 i, int ignoring, i64 ignore_index) {
    return ignoring && targets[i] == ignore_index;
}

/* Rows [lo, hi) of the forward pass, tile by tile, every chunk of each: their lse and
 * losses (per_row). Returns 1 when out of memory, else 0. */
static int FN(lce_forward_rows)(i64 lo, i64 hi, i64 c, i64 v, i64 cw, i64 rows, const T *x,
                                const T *w, const T *bias, const i64 *targets, int ignoring,
                                i64 ignore_index, T *per_row, T *lse) {
    if (lo >= hi) return 0;
    T *z = tg_alloc(sizeof(T) * (size_t)(rows * cw));
    double *stats = tg_alloc(sizeof(double) * (size_t)(3 * rows));
    int failed = !z || !stats;
    for (i64 r0 = lo; r0 < hi && !failed; r0 += rows) {
        i64 nr = hi - r0 < rows ? hi - r0 : rows;
        double *m = stats, *s = stats + rows, *picked = stats + 2 * rows;
        for (i64 r = 0; r < nr; r++) m[r] = -INFINITY, s[r] = 0, picked[r] = 0;
        for (i64 j0 = 0; j0 < v; j0 += cw) {
            i64 nc = v - j0 < cw ? v - j0 : cw;
            FN(lce_logits)(nr, nc, c, x + r0 * c, w + j0 * c, bias ? bias + j0 : NULL, z);
            for (i64 r = 0; r < nr; r++) {
                const T *row = z + r * nc;
                FN(lce_fold)(nc, row, &m[r], &s[r]);
                i64 t = targets[r0 + r] - j0;
                if (t >= 0 && t < nc) picked[r] = (double)row[t];
            }
        }
        for (i64 r = 0; r < nr; r++) {
            i64 i = r0 + r;
            double l = m[r] + log(s[r]);
            lse[i] = (T)l;
            per_row[i] = FN(lce_ignored)(targets, i, ignoring, ignore_index) ? 0 : (T)(l - picked[r]);
        }
    }
    if (z) tg_free(z);
    if (stats) tg_free(stats);
    return failed;
}

/* x (n, c), w (v, c), bias v values or NULL, targets n class indices: loss_i = lse_i -
 * z_i[targets[i]] with z = x @ w^T + bias and lse_i its row's logsumexp (kept in lse, n
 * values, for the backward pass); 0 for a row whose target is ignore_index (when ignoring).
 * reduction 0 writes the n losses, 1 their sum, 2 their mean over the rows kept (none:
 * nan), and then their count into *kept. chunk, tile: columns per chunk and rows per tile,
 * 0 for the kernel's own. Returns the position of the first target neither a class nor
 * ignored (nothing computed), -2 when out of memory, else -1. */
i64 FN(tg_linear_cross_entropy)(i64 n, i64 c, i64 v, const T *x, const T *w, const T *bias,
                                const i64 *targets, int reduction, int ignoring, i64 ignore_index,
                                i64 chunk, i64 tile, T *losses, T *lse, T *kept) {
    for (i64 i = 0; i < n; i++)
        if ((targets[i] < 0 || targets[i] >= v) && !FN(lce_ignored)(targets, i, ignoring, ignore_index))
            return i;
    /* Rows to threads when each gets a good share of them. Otherwise no parallel region
     * here at all, so that TinyBLAS may split each product's columns (a few rows against
     * a large vocabulary): a product inside a region of one thread would open a nested
     * team every call, far slower than the product. */
    int threads = (double)n * v * c >= LCE_PARALLEL_MIN ? tg_thread_count() : 1;
    if (n < 32 * (i64)threads) threads = 1;
    i64 cw = lce_chunk(chunk, v, 1), rows = tile > 0 ? tile : LCE_ROWS;
    T *per_row = reduction == 0 ? losses : tg_alloc(sizeof(T) * (size_t)(n > 0 ? n : 1));
    if (!per_row) return -2;
    int failed = 0;
    if (threads == 1) {
        failed = FN(lce_forward_rows)(0, n, c, v, cw, rows, x, w, bias, targets, ignoring,
                                      ignore_index, per_row, lse);
    } else {
#pragma omp parallel num_threads(threads)
        {
            i64 lo, hi;
            tg_thread_range(n, 16, &lo, &hi);           /* this thread's rows */
            if (FN(lce_forward_rows)(lo, hi, c, v, cw, rows, x, w, bias, targets, ignoring,
                                     ignore_index, per_row, lse)) {
#pragma omp atomic write
                failed = 1;
            }
        }
    }
    if (!failed && reduction != 0) {
        double total = 0;
        i64 count = 0;
        for (i64 i = 0; i < n; i++) {
            total += (double)per_row[i];             /* the rounded losses, as summing them would */
            count += !FN(lce_ignored)(targets, i, ignoring, ignore_index);
        }
        losses[0] = (T)(reduction == 2 ? total / (double)count : total);
        if (reduction == 2) *kept = (T)count;
    }
    if (per_row != losses) tg_free(per_row);
    return failed ? -2 : -1;
}

/* to[0:count] += from[0:count] */
static void FN(lce_add)(i64 count, const T *from, T *to) {
    for (i64 e = 0; e < count; e++) to[e] += from[e];
}

/* The gradients of tg_linear_cross_entropy's loss, from the forward's lse and the upstream
 * gradient scale[i * scale_step] of row i (one value for all with scale_step 0), divided by
 * *kept (NULL: by 1): dx (n, c), dw (v, c) and dbias (v), each skipped when NULL. bias is
 * the forward's (it enters the logits again). Returns 1 when out of memory, else 0. */
int FN(tg_linear_cross_entropy_backward)(i64 n, i64 c, i64 v, const T *x, const T *w, const T *bias,
                                         const i64 *targets, const T *lse, const T *scale,
                                         i64 scale_step, const T *kept, int ignoring,
                                         i64 ignore_index, i64 chunk, i64 tile, T *dx, T *dw,
                                         T *dbias) {
    if (dx) memset(dx, 0, sizeof(T) * (size_t)(n * c));
    if (n == 0) {                                   /* no rows: nothing reaches W or b */
        if (dw) memset(dw, 0, sizeof(T) * (size_t)(v * c));
        if (dbias) memset(dbias, 0, sizeof(T) * (size_t)v);
        return 0;
    }
    double factor = kept ? 1.0 / (double)*kept : 1.0;
    int threads = (double)n * v * c >= LCE_PARALLEL_MIN ? tg_thread_count() : 1;
    i64 cw = lce_chunk(chunk, v, threads), rows = tile > 0 ? tile : LCE_ROWS;
    i64 chunks = (v + cw - 1) / cw;
    T *parts[threads];                              /* each thread's dx; thread 0's is dx */
    int failed = 0;
#pragma omp parallel num_threads(threads)
    {
        int id = tg_thread_index(), team = tg_team_size();
        i64 q0 = chunks * id / team, q1 = chunks * (id + 1) / team;     /* its chunks */
        T *z = tg_alloc(sizeof(T) * (size_t)(rows * cw));
        T *tw = dw ? tg_alloc(sizeof(T) * (size_t)(cw * c + 1)) : NULL;
        T *tx = dx ? tg_alloc(sizeof(T) * (size_t)(rows * c + 1)) : NULL;
        double *colsum = dbias ? tg_alloc(sizeof(double) * (size_t)cw) : NULL;
        T *mine = !dx ? NULL : id == 0 ? dx : tg_alloc(sizeof(T) * (size_t)(n * c + 1));
        parts[id] = mine;
        if (!z || (dw && !tw) || (dx && (!tx || !mine)) || (dbias && !colsum)) {
#pragma omp atomic write
            failed = 1;
        } else {
            if (mine && id > 0) memset(mine, 0, sizeof(T) * (size_t)(n * c));
            for (i64 q = q0; q < q1; q++) {
                i64 j0 = q * cw, nc = v - j0 < cw ? v - j0 : cw;
                const T *wq = w + j0 * c;
                if (colsum) for (i64 j = 0; j < nc; j++) colsum[j] = 0;
                for (i64 r0 = 0; r0 < n; r0 += rows) {
                    i64 nr = n - r0 < rows ? n - r0 : rows;
                    FN(lce_logits)(nr, nc, c, x + r0 * c, wq, bias ? bias + j0 : NULL, z);
                    for (i64 r = 0; r < nr; r++) {
                        i64 i = r0 + r;
                        T *row = z + r * nc;
                        if (FN(lce_ignored)(targets, i, ignoring, ignore_index)) {
                            memset(row, 0, sizeof(T) * (size_t)nc);     /* not 0 * e^z: inf stays out */
                            continue;
                        }
                        T g = (T)((double)scale[i * scale_step] * factor);
                        FN(lce_grad)(nc, row, lse[i], g);
                        i64 t = targets[i] - j0;
                        if (t >= 0 && t < nc) row[t] -= g;
                        if (colsum) for (i64 j = 0; j < nc; j++) colsum[j] += (double)row[j];
                    }
                    static const i64 zero = 0;
                    if (dw) {      /* dw[chunk] (+)= dz^T @ x[tile]: the first tile writes it */
                        T *into = r0 == 0 ? dw + j0 * c : tw;
                        FN(tg_gemm)(1, &zero, &zero, nc, c, nr, z, 1, nc, x + r0 * c, c, 1, NULL, into);
                        if (r0 > 0) FN(lce_add)(nc * c, tw, dw + j0 * c);
                    }
                    if (mine) {    /* dx[tile] += dz @ W[chunk] */
                        FN(tg_gemm)(1, &zero, &zero, nr, c, nc, z, nc, 1, wq, c, 1, NULL, tx);
                        FN(lce_add)(nr * c, tx, mine + r0 * c);
                    }
                }
                if (dbias) for (i64 j = 0; j < nc; j++) dbias[j0 + j] = (T)colsum[j];
            }
        }
        if (dx && team > 1) {      /* dx = the threads' copies, added in thread order */
#pragma omp barrier
            int bad;
#pragma omp atomic read
            bad = failed;
            if (!bad) {
                i64 lo, hi;
                tg_thread_range(n * c, 16, &lo, &hi);
                for (int t = 1; t < team; t++) FN(lce_add)(hi - lo, parts[t] + lo, dx + lo);
            }
#pragma omp barrier
        }
        if (z) tg_free(z);
        if (tw) tg_free(tw);
        if (tx) tg_free(tx);
        if (colsum) tg_free(colsum);
        if (mine && id > 0) tg_free(mine);
    }
    return failed;
}
