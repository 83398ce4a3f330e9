/* Gather and scatter-add along one dimension: index_select copies the rows of `dim` listed
 * in `index`; index_add (its gradient) adds row r of src into row index[r] of a zeroed
 * output, so an index that repeats accumulates. Positions are computed from the multi-index
 * (offset + sum of index * stride) because the gathered dimension jumps.
 */
#include <string.h>
#include "strided.h"

void tg_index_select(int ndim, const i64 *shape, const i64 *strides, i64 offset, int dim,
                     const i64 *index, i64 n_index, const char *x, int itemsize, char *out) {
    i64 out_shape[TG_MAX_DIMS], idx[TG_MAX_DIMS] = {0};
    for (int d = 0; d < ndim; d++) out_shape[d] = d == dim ? n_index : shape[d];
    i64 n = tg_numel(ndim, out_shape);
    for (i64 i = 0; i < n; i++) {
        i64 p = offset;
        for (int d = 0; d < ndim; d++) p += (d == dim ? index[idx[d]] : idx[d]) * strides[d];
        memcpy(out + i * itemsize, x + p * itemsize, itemsize);
        for (int d = ndim - 1; d >= 0 && ++idx[d] == out_shape[d]; d--) idx[d] = 0;
    }
}

#define TEMPLATE "index_t.h"
#include "instantiate.h"
