/* Reductions for one element type T (included by reduce.c per dtype). */

void FN(tg_reduce)(int op, int n_outer, const i64 *outer_shape, const i64 *outer_strides,
                   int n_inner, const i64 *inner_shape, const i64 *inner_strides,
                   const T *x, i64 xo, W *out) {
    i64 n_out = tg_numel(n_outer, outer_shape), n_in = tg_numel(n_inner, inner_shape);
    i64 oidx[TG_MAX_DIMS] = {0}, base = xo;
    for (i64 o = 0; o < n_out; o++) {
        i64 iidx[TG_MAX_DIMS] = {0}, p = base;
        W acc = op == 0 ? 0 : (W)x[base];
        for (i64 i = 0; i < n_in; i++) {
            W v = (W)x[p];
            if (op == 0) acc += v;
            else if (op == 1 ? v > acc : v < acc) acc = v;
            tg_step(n_inner, inner_shape, iidx, &p, inner_strides, 0, 0, 0, 0);
        }
        out[o] = acc;
        tg_step(n_outer, outer_shape, oidx, &base, outer_strides, 0, 0, 0, 0);
    }
}

void FN(tg_argreduce)(int op, int n_outer, const i64 *outer_shape, const i64 *outer_strides,
                      int n_inner, const i64 *inner_shape, const i64 *inner_strides,
                      const T *x, i64 xo, i64 *out) {
    i64 n_out = tg_numel(n_outer, outer_shape), n_in = tg_numel(n_inner, inner_shape);
    i64 oidx[TG_MAX_DIMS] = {0}, base = xo;
    for (i64 o = 0; o < n_out; o++) {
        i64 iidx[TG_MAX_DIMS] = {0}, p = base, best = 0;
        T best_v = x[base];
        for (i64 i = 0; i < n_in; i++) {
            if (op == 3 ? x[p] > best_v : x[p] < best_v) { best_v = x[p]; best = i; }
            tg_step(n_inner, inner_shape, iidx, &p, inner_strides, 0, 0, 0, 0);
        }
        out[o] = best;
        tg_step(n_outer, outer_shape, oidx, &base, outer_strides, 0, 0, 0, 0);
    }
}
