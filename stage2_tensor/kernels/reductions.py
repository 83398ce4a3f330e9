"""Along dimensions: reductions, running sums, products, extremes and log-sum-exps, and
softmax, each walking rows of a view."""
from .. import dtypes
from ..contracts import bad_dim, differ, reduced_dims, same_dtype
from ..strides import numel
from . import ANY_DTYPE, kernel


def rows_around(view, dim):
    """A row kernel's geometry: the view as (outer, size, inner) around ``dim``."""
    return {"outer": numel(view.shape[:dim]), "size": view.shape[dim], "inner": numel(view.shape[dim + 1:])}


def _dim(kernel_name, dim, view):
    if not (type(dim) is int and 0 <= dim < len(view.shape)):
        bad_dim(kernel_name, dim, len(view.shape))


@kernel()
def reduce(op: "op", view: "view", dims: "dims", dtype: "dtype"):
    """op, one of ops.py's reductions, over `dims`: the result has the view's shape with
    those dims removed."""
    reduced_dims("reduce", dims, len(view.shape))
    return [(tuple(s for d, s in enumerate(view.shape) if d not in dims), dtype)]


@kernel(native="i64 outer, i64 size, i64 inner, const T *view, T *out", sizes=lambda view, dim, dtype: rows_around(view, dim),
        c_dtypes=ANY_DTYPE)
def cumsum(view: "dense", dim: "dim", dtype: "dtype"):
    """Running sums along `dim`, the view's shape: element j the sum of elements 0..j of its
    row, added in order (floats in double, ints in int64) and each rounded to dtype, so a
    nan or inf reaches the sums from its position on and no earlier one."""
    _dim("cumsum", dim, view)
    return [(tuple(view.shape), dtype)]


@kernel(native="i64 outer, i64 size, i64 inner, const T *view, T *out", sizes=lambda view, dim, dtype: rows_around(view, dim),
        c_dtypes=ANY_DTYPE)
def cumprod(view: "dense", dim: "dim", dtype: "dtype"):
    """Running products along `dim`, the view's shape: element j the product of elements
    0..j of its row, multiplied in order (floats in double, ints in int64) and each rounded
    to dtype, so a zero makes every later product zero (a nan or inf: nan or inf)."""
    _dim("cumprod", dim, view)
    return [(tuple(view.shape), dtype)]


@kernel("values, indices", native="i64 outer, i64 size, i64 inner, int smallest, const T *view, T *values, i64 *indices",
        sizes=lambda view, dim, smallest, dtype: rows_around(view, dim), c_dtypes=ANY_DTYPE)
def cummax(view: "dense", dim: "dim", smallest: "bool", dtype: "dtype"):
    """Running maxima along `dim` (minima when `smallest`), the view's shape, and where each
    was found (int64), as PyTorch's: an element equal to the extreme so far takes its place
    (the last of equal values), and a nan takes it from every number, each later nan too."""
    _dim("cummax", dim, view)
    same_dtype("cummax", view, dtype, " (values are compared, not computed)")
    return [(tuple(view.shape), dtype), (tuple(view.shape), dtypes.int64)]


@kernel(float_only=True, native="i64 outer, i64 size, i64 inner, const T *view, T *out",
        sizes=lambda view, dim, dtype: rows_around(view, dim))
def logcumsumexp(view: "dense", dim: "dim", dtype: "dtype"):
    """Running log(sum(exp)) along `dim`, the view's shape, in double and without overflow:
    the row's largest element so far m and the sum s of e^(x - m), rescaled when m grows;
    element j is m + log(s). -inf adds nothing, +inf makes inf, a nan nan from there on."""
    _dim("logcumsumexp", dim, view)
    return [(tuple(view.shape), dtype)]


@kernel(float_only=True, native="i64 outer, i64 size, i64 inner, const T *view, int log, T *out",
        sizes=lambda view, dim, log, dtype: rows_around(view, dim))
def softmax(view: "dense", dim: "dim", log: "bool", dtype: "dtype"):
    """Softmax along `dim` (log-softmax when `log`), the row's maximum subtracted first so no
    exponent overflows."""
    _dim("softmax", dim, view)
    return [(tuple(view.shape), dtype)]


@kernel("dx", float_only=True, native="i64 outer, i64 size, i64 inner, const T *grad, const T *out, int log, T *dx",
        sizes=lambda grad, out, dim, log, dtype: rows_around(out, dim))
def softmax_backward(grad: "dense", out: "dense", dim: "dim", log: "bool", dtype: "dtype"):
    """Softmax's gradient from the upstream grad and the forward output y (one shape), per row
    along `dim`: softmax dx = y * (g - sum(g * y)), log-softmax dx = g - e^y * sum(g)."""
    if grad.shape != out.shape:
        differ("softmax_backward", "grad", grad.shape, out.shape)
    _dim("softmax_backward", dim, out)
    return [(tuple(out.shape), dtype)]
