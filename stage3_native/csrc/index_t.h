/* Scatter-add and advanced indexing's write for one element type T (included by index.c per
 * dtype). */

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

/* dst's sub-tensor at index position j gets values' j-th (accumulate: adds it; a bool ors).
 * values is a view of shape (S..., trailing...), read in row-major order, which is j's order
 * and then the trailing dimensions' (S is n positions). One thread: indices that repeat
 * then write, or add, in index order. */
static inline T FN(tg_put_one)(T old, T value, int accumulate) {
    if (!accumulate) return value;
    T sum = (T)(old + value);
    return sizeof(T) == 1 ? (T)(sum != 0) : sum;                 /* bool: true + true is true */
}

i64 FN(tg_index_put)(int ndim, const i64 *shape, const i64 *strides, i64 offset, T *dst,
                     int k, const i64 *indices, i64 n, int vndim, const i64 *vshape,
                     const i64 *vstrides, i64 voffset, const T *values, int accumulate) {
    i64 bad = tg_index_bad(k, shape, indices, n);
    if (bad >= 0) return bad;
    int rest = ndim - k;
    const i64 *rest_shape = shape + k, *rest_strides = strides + k;
    i64 inner = tg_numel(rest, rest_shape);
    if (n == 0 || inner == 0) return -1;
    int constant = 1;                                            /* one value broadcast everywhere */
    for (int d = 0; d < vndim; d++) constant = constant && (vshape[d] == 1 || vstrides[d] == 0);
    int dense = tg_is_contiguous(rest, rest_shape, rest_strides);
    int dense_values = tg_is_contiguous(vndim, vshape, vstrides);
    if (k == 1 && inner == 1 && (constant || dense_values)) {   /* x[idx] = v, x[idx] += v: an element each */
        const T *v = values + voffset;
        i64 step = constant ? 0 : 1, size = shape[0], stride = strides[0];
        for (i64 j = 0; j < n; j++) {
            T *o = dst + offset + tg_index_wrap(indices[j], size) * stride;
            *o = FN(tg_put_one)(*o, v[j * step], accumulate);
        }
        return -1;
    }
    i64 vidx[TG_MAX_DIMS] = {0}, pv = voffset;
    for (i64 j = 0; j < n; j++) {
        T *o = dst + tg_index_start(k, shape, strides, offset, indices, n, j);
        if (dense && (constant || dense_values)) {               /* a row of values, or one value */
            const T *v = values + voffset + (constant ? 0 : j * inner);
            i64 step = constant ? 0 : 1;
            for (i64 e = 0; e < inner; e++) o[e] = FN(tg_put_one)(o[e], v[e * step], accumulate);
            continue;
        }
        i64 idx[TG_MAX_DIMS] = {0}, p = 0;                       /* through the strides */
        for (i64 e = 0; e < inner; e++) {
            o[p] = FN(tg_put_one)(o[p], values[pv], accumulate);
            tg_step(rest, rest_shape, idx, &p, rest_strides, NULL, NULL, NULL, NULL);
            tg_step(vndim, vshape, vidx, &pv, vstrides, NULL, NULL, NULL, NULL);
        }
    }
    return -1;
}
