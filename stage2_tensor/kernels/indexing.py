"""Elements by position: the gather that embedding and advanced indexing read with, its
adjoint, flip, roll, and the positions of nonzero elements. An index out of range is data, not a shape: the kernel finds it as it
reads, and the backend raises backend.bad_index."""
from .. import dtypes
from ..contracts import bad_dim, differ, reduced_dims, same_dtype
from ..strides import make_strides, numel
from . import ANY_DTYPE, kernel


@kernel(halves=True)
def index_select(view: "view", dim: "dim", index: "index"):
    """The rows of `dim` listed in `index`, a 1-d int64 view on the same device (-size to
    size - 1, negative ones counting from the end)."""
    if not (type(dim) is int and 0 <= dim < len(view.shape)):
        bad_dim("index_select", dim, len(view.shape))
    return [(tuple(view.shape[:dim]) + (numel(index.shape),) + tuple(view.shape[dim + 1:]), view.dtype)]


@kernel()
def index_add(shape: "shape", dim: "dim", index: "index", src: "view", base: "view?" = None):
    """base (None: zeros), of `shape` and src's dtype, with row r of src added at row
    index[r] (repeats add up): index_select's gradient, and scatter_add onto its input;
    `index` as for index_select."""
    shape = tuple(shape)
    if not all(type(n) is int and n >= 0 for n in shape):
        raise ValueError(f"index_add: shape {shape} is not a tuple of non-negative ints")
    if not (type(dim) is int and 0 <= dim < len(shape)):
        bad_dim("index_add", dim, len(shape))
    differ("index_add", "src", src.shape, shape[:dim] + (numel(index.shape),) + shape[dim + 1:])
    if base is not None:
        differ("index_add", "base", base.shape, shape)
        same_dtype("index_add", base, src.dtype, " (base is added to as src's dtype)")
    return [(shape, src.dtype)]


def _shape(view, *_):
    """The C parameters ndim and shape of a kernel that walks the view's row-major copy."""
    return {"ndim": len(view.shape), "shape": tuple(view.shape)}


def _flipped(view, dims, dtype):
    """flip's walk of the view's row-major copy: a step per dimension (its stride, negated
    along dims) and where the walk starts (the last element along each of dims)."""
    strides = make_strides(view.shape)
    return {**_shape(view),
            "steps": tuple(-s if d in dims else s for d, s in enumerate(strides)),
            "start": sum((view.shape[d] - 1) * strides[d] for d in dims if view.shape[d])}


@kernel(native="int ndim, const i64 *shape, const i64 *steps, i64 start, const T *view, T *out",
        sizes=_flipped, c_dtypes=ANY_DTYPE)
def flip(view: "dense", dims: "dims", dtype: "dtype"):
    """The view's elements in reverse order along each of `dims`, in the view's shape and
    dtype: element (i_0, ..., i_n) of the result is the view's element with each i_d, d in
    dims, counted from the end (size_d - 1 - i_d)."""
    reduced_dims("flip", dims, len(view.shape))
    same_dtype("flip", view, dtype, " (flip moves elements only)")
    return [(tuple(view.shape), dtype)]


@kernel(native="int ndim, const i64 *shape, const i64 *shifts, const T *view, T *out",
        sizes=_shape,
        c_dtypes=ANY_DTYPE)
def roll(view: "dense", shifts: "ints", dtype: "dtype"):
    """The view's elements moved shifts[d] places along each dimension d, those leaving one
    end coming back at the other, in the view's shape and dtype: element (i_0, ..., i_n) of
    the result is the view's element ((i_d - shifts[d]) mod size_d), 0 <= shifts[d] < size_d
    (0 for an empty dimension)."""
    if not (isinstance(shifts, (tuple, list)) and len(shifts) == len(view.shape)
            and all(type(s) is int and 0 <= s < max(n, 1) for s, n in zip(shifts, view.shape))):
        raise ValueError(f"roll: shifts must be one int per dimension, 0 <= shift < its size "
                         f"{tuple(view.shape)}, got {shifts!r}")
    same_dtype("roll", view, dtype, " (roll moves elements only)")
    return [(tuple(view.shape), dtype)]


@kernel(native="int ndim, const i64 *shape, i64 count, const T *view, i64 *out",
        sizes=_shape,
        c_dtypes=ANY_DTYPE)
def nonzero(view: "dense", count: "int", dtype: "dtype"):
    """The coordinates of the view's nonzero elements (a NaN is nonzero) in row-major order,
    one row of int64 per element: (count, ndim). `count` is how many there are, which the
    caller counts first (the output's shape depends on it); a kernel writes no more rows."""
    if not (type(count) is int and 0 <= count <= numel(view.shape)):
        raise ValueError(f"nonzero: count must be an int from 0 to {numel(view.shape)} (the view's elements), "
                         f"got {count!r}")
    same_dtype("nonzero", view, dtype)
    return [((count, len(view.shape)), dtypes.int64)]
