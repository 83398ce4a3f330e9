"""Order along one dimension: sort, argsort and topk (sorting.py) are one kernel, the first k
elements of each row in order. NaN comes after every number ascending and before every
number descending, and equal values keep the order of their positions, as PyTorch's
stable sort: one total order, so every device gives the same indices. kthvalue (median's
too) selects one position of that order; searchsorted (searching.py) finds where values
would go in sorted rows."""
from .. import dtypes
from ..contracts import bad_dim, same_dtype
from ..strides import numel
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


@kernel("values, indices", fails=True, c_dtypes=ANY_DTYPE,
        sizes=lambda view, k, dim, dtype: rows_around(view, dim),
        native="i64 outer, i64 size, i64 inner, i64 k, const T *view, T *values, i64 *indices")
def kthvalue(view: "dense", k: "int", dim: "dim", dtype: "dtype"):
    """The element at position k (from 0) of each row along `dim` in sort's ascending order
    (NaN last, equal values by position), and its position in the row (int64): the view's
    shape without dim. A kernel need not sort the row: a selection finds it in O(size)."""
    if not (type(dim) is int and 0 <= dim < len(view.shape)):
        bad_dim("kthvalue", dim, len(view.shape))
    if not (type(k) is int and 0 <= k < view.shape[dim]):
        raise ValueError(f"kthvalue: k must be an int from 0 to {view.shape[dim] - 1} (the row's size less 1), "
                         f"got {k!r}")
    same_dtype("kthvalue", view, dtype, " (values are moved, not computed)")
    shape = tuple(view.shape[:dim]) + tuple(view.shape[dim + 1:])
    return [(shape, dtype), (shape, dtypes.int64)]

def _searched(boundaries, values, right, dtype):
    """searchsorted's rows: each of `rows` rows of m values searched in n boundaries, one
    row of boundaries for all of them (`shared`) when boundaries are 1-d."""
    shared = len(boundaries.shape) == 1
    m = numel(values.shape) if shared else values.shape[-1]
    return {"rows": 1 if shared else numel(values.shape[:-1]), "n": boundaries.shape[-1], "m": m,
            "shared": int(shared)}


@kernel(c_dtypes=ANY_DTYPE, sizes=_searched,
        native="i64 rows, i64 n, i64 m, int shared, int right, const T *boundaries, const T *values, i64 *out")
def searchsorted(boundaries: "dense", values: "dense", right: "bool", dtype: "dtype"):
    """For each value, the position in its row of `boundaries` (the last dimension, sorted
    ascending) where it would go to keep the row sorted (int64, values' shape): the first
    position whose boundary is >= the value (> when `right`), found by PyTorch's binary
    search, which reads a NaN boundary as below every value and puts a NaN value last.
    Boundaries are 1-d (one row for every value) or have values' leading dimensions."""
    if not boundaries.shape or not (len(boundaries.shape) == 1
                                    or tuple(boundaries.shape[:-1]) == tuple(values.shape[:-1])):
        raise ValueError(f"searchsorted: boundaries of shape {tuple(boundaries.shape)} must be 1-d or have the "
                         f"leading dimensions of the values' shape {tuple(values.shape)}")
    same_dtype("searchsorted", boundaries, dtype)
    same_dtype("searchsorted", values, dtype)
    return [(tuple(values.shape), dtypes.int64)]
