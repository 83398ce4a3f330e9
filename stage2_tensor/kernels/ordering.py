"""Order along one dimension: sort, argsort and topk (sorting.py) are one kernel, the first k
elements of each row in order. NaN comes after every number ascending and before every
number descending, and equal values keep the order of their positions, as PyTorch's
stable sort: one total order, so every device gives the same indices."""
from .. import dtypes
from ..contracts import bad_dim, same_dtype
from . import ANY_DTYPE, kernel
from .reductions import rows_around


@kernel("values, indices", fails=True, c_dtypes=ANY_DTYPE,
        sizes=lambda view, k, dim, descending, dtype: rows_around(view, dim),
        native="i64 outer, i64 size, i64 inner, i64 k, int descending, const T *view, T *values, i64 *indices")
def topk(view: "dense", k: "int", dim: "dim", descending: "bool", dtype: "dtype"):
    """The first k elements of each row along `dim` in order, ascending (descending when
    `descending`), and their positions in the row (int64): the view's shape with k at dim.
    The whole order is sort's (k the row's size); a kernel need not sort more than k."""
    if not (type(dim) is int and 0 <= dim < len(view.shape)):
        bad_dim("topk", dim, len(view.shape))
    if not (type(k) is int and 0 <= k <= view.shape[dim]):
        raise ValueError(f"topk: k must be an int from 0 to {view.shape[dim]} (the row's size), got {k!r}")
    same_dtype("topk", view, dtype, " (values are moved, not computed)")
    shape = tuple(view.shape[:dim]) + (k,) + tuple(view.shape[dim + 1:])
    return [(shape, dtype), (shape, dtypes.int64)]
