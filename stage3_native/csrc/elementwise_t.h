/* Element-wise kernels for one element type T (included by elementwise.c per dtype). */

static int FN(compare_op)(int op, W a, W b) {
    switch (op) {
    case 7: return a == b;
    case 8: return a != b;
    case 9: return a < b;
    case 10: return a <= b;
    case 11: return a > b;
    default: return a >= b;
    }
}

void FN(tg_unary)(int op, int ndim, const i64 *shape, const T *x, const i64 *xs, i64 xo, T *out) {
    i64 n = tg_numel(ndim, shape), idx[TG_MAX_DIMS] = {0}, px = xo;
    if (tg_is_contiguous(ndim, shape, xs)) {                 /* fast path: no index arithmetic */
        for (i64 i = 0; i < n; i++) out[i] = (T)WIDE(unary_op)(op, (W)x[xo + i]);
        return;
    }
    for (i64 i = 0; i < n; i++) {
        out[i] = (T)WIDE(unary_op)(op, (W)x[px]);
        tg_step(ndim, shape, idx, &px, xs, 0, 0, 0, 0);
    }
}

void FN(tg_binary)(int op, int ndim, const i64 *shape, const T *a, const i64 *as, i64 ao,
                   const T *b, const i64 *bs, i64 bo, T *out) {
    i64 n = tg_numel(ndim, shape), idx[TG_MAX_DIMS] = {0}, pa = ao, pb = bo;
    if (tg_is_contiguous(ndim, shape, as) && tg_is_contiguous(ndim, shape, bs)) {
        for (i64 i = 0; i < n; i++) out[i] = (T)WIDE(binary_op)(op, (W)a[ao + i], (W)b[bo + i]);
        return;
    }
    for (i64 i = 0; i < n; i++) {
        out[i] = (T)WIDE(binary_op)(op, (W)a[pa], (W)b[pb]);
        tg_step(ndim, shape, idx, &pa, as, &pb, bs, 0, 0);
    }
}

void FN(tg_compare)(int op, int ndim, const i64 *shape, const T *a, const i64 *as, i64 ao,
                    const T *b, const i64 *bs, i64 bo, uint8_t *out) {
    i64 n = tg_numel(ndim, shape), idx[TG_MAX_DIMS] = {0}, pa = ao, pb = bo;
    for (i64 i = 0; i < n; i++) {
        out[i] = (uint8_t)FN(compare_op)(op, (W)a[pa], (W)b[pb]);
        tg_step(ndim, shape, idx, &pa, as, &pb, bs, 0, 0);
    }
}

void FN(tg_where)(int ndim, const i64 *shape, const uint8_t *c, const i64 *cs, i64 co,
                  const T *a, const i64 *as, i64 ao, const T *b, const i64 *bs, i64 bo, T *out) {
    i64 n = tg_numel(ndim, shape), idx[TG_MAX_DIMS] = {0}, pc = co, pa = ao, pb = bo;
    for (i64 i = 0; i < n; i++) {
        out[i] = c[pc] ? a[pa] : b[pb];
        tg_step(ndim, shape, idx, &pc, cs, &pa, as, &pb, bs);
    }
}
