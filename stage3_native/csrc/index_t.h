/* Scatter-add for one element type T (included by index.c per dtype). `shape` is the
 * output's (contiguous, zeroed by the caller); src has that shape with `dim` of n_index. */

void FN(tg_index_add)(int ndim, const i64 *shape, int dim, const i64 *index, i64 n_index,
                      const T *src, const i64 *ss, i64 so, T *out) {
    i64 src_shape[TG_MAX_DIMS], out_strides[TG_MAX_DIMS], idx[TG_MAX_DIMS] = {0}, ps = so;
    i64 stride = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        out_strides[d] = stride;
        stride *= shape[d];
        src_shape[d] = d == dim ? n_index : shape[d];
    }
    i64 n = tg_numel(ndim, src_shape);
    for (i64 i = 0; i < n; i++) {
        i64 po = 0;
        for (int d = 0; d < ndim; d++) po += (d == dim ? index[idx[d]] : idx[d]) * out_strides[d];
        out[po] += src[ps];                              /* a repeated index adds up */
        tg_step(ndim, src_shape, idx, &ps, ss, 0, 0, 0, 0);
    }
}
