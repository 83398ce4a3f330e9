"""Elements by position: the gather that embedding and advanced indexing read with, its
adjoint, advanced indexing's gather and write over several dimensions, flip, roll, the
triangles of tril and triu, and the positions of nonzero elements; index_reduce, which
reduces rows into a tensor by product, mean, maximum or minimum (scatter_reduce's kernel);
and elements counted by value: bincount, histc and the runs of equal neighbours
(counting.py). An index out of range is data, not a shape: the kernel finds it as it reads,
and the backend raises backend.bad_index."""
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


REDUCTIONS = ("prod", "mean", "amax", "amin")


@kernel()
def index_reduce(base: "view", dim: "dim", index: "index", src: "view", reduce: "choice", include_self: "bool"):
    """base with the rows of src reduced into it along `dim`: row r of src into row index[r]
    (`index` as for index_select), by `reduce`, one of "prod", "mean", "amax", "amin", in
    index order; with include_self base's own row takes part, without it a row that some
    index names starts from the first of its src rows. A row no index names keeps base's.
    amax and amin give NaN where one takes part; an integer mean rounds down, a bool is
    and (prod, amin) or or (amax), and has no mean. Of base's shape and dtype, src's too."""
    if not (type(dim) is int and 0 <= dim < len(base.shape)):
        bad_dim("index_reduce", dim, len(base.shape))
    rows = tuple(base.shape[:dim]) + (numel(index.shape),) + tuple(base.shape[dim + 1:])
    differ("index_reduce", "src", src.shape, rows)
    same_dtype("index_reduce", src, base.dtype, " (src is reduced into base as it is)")
    if reduce not in REDUCTIONS or (reduce == "mean" and base.dtype is dtypes.bool_):
        raise ValueError(f"index_reduce: reduce must be one of {REDUCTIONS} (no mean of bools), got {reduce!r} "
                         f"for {base.dtype}")
    if type(include_self) is not bool:
        raise TypeError(f"index_reduce: include_self must be a bool, got {include_self!r}")
    return [(tuple(base.shape), base.dtype)]


def _leading(kernel, view, indices):
    """k, the number of leading dimensions of the view that indices (k, *S) names: int64, 1
    to the view's dimensions."""
    if indices.dtype is not dtypes.int64 or not (indices.shape and 1 <= indices.shape[0] <= len(view.shape)):
        raise ValueError(f"{kernel}: indices must be int64 (k, ...), 1 <= k <= {len(view.shape)} (the view's "
                         f"dimensions), got shape {tuple(indices.shape)} of {indices.dtype}")
    return indices.shape[0]


@kernel(halves=True)
def index(view: "view", indices: "index"):
    """Advanced indexing's gather (PyTorch's aten::index): indices (k, *S) holds, per leading
    dimension d < k of the view, an int64 index for each position j of S (-size_d to
    size_d - 1, negative ones counting from the end); out[j, r] is the view's element
    (indices[0][j], ..., indices[k - 1][j], r), r over the other dimensions: shape
    S + view.shape[k:], the view's dtype."""
    k = _leading("index", view, indices)
    return [(tuple(indices.shape[1:]) + tuple(view.shape[k:]), view.dtype)]


@kernel("", role="in_place")
def index_put(dst: "view", indices: "index", values: "view", accumulate: "bool"):
    """index's adjoint, in place: dst's element (indices[0][j], ..., indices[k - 1][j], r)
    becomes values[j, r], or gains it when `accumulate` (repeats add up; a bool ors). Without
    accumulate, of an element named twice one value lands (the last on the CPU). values has
    shape S + dst.shape[k:] and dst's dtype; every index is checked before anything is written."""
    k = _leading("index_put", dst, indices)
    differ("index_put", "values", values.shape, tuple(indices.shape[1:]) + tuple(dst.shape[k:]))
    same_dtype("index_put", values, dst.dtype, " (the values are written as they are)")
    if type(accumulate) is not bool:
        raise TypeError(f"index_put: accumulate must be a bool, got {accumulate!r}")
    return []


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


def _matrices(view, *_):
    """The C parameters of a kernel over the view's last two dimensions: (batch, rows, cols)."""
    return {"batch": numel(view.shape[:-2]), "rows": view.shape[-2], "cols": view.shape[-1]}


@kernel(native="i64 batch, i64 rows, i64 cols, i64 diagonal, int upper, const T *view, T *out",
        sizes=_matrices, c_dtypes=ANY_DTYPE)
def triangle(view: "dense", diagonal: "int", upper: "bool", dtype: "dtype"):
    """tril and triu (and their gradients): of each matrix in the view's last two dimensions,
    element (i, j) is kept where j - i <= diagonal (upper False) or j - i >= diagonal (upper
    True), and zero elsewhere; the view's shape and dtype."""
    if len(view.shape) < 2:
        raise ValueError(f"triangle: the view needs at least 2 dimensions, got shape {tuple(view.shape)}")
    if type(diagonal) is not int or type(upper) is not bool:
        raise TypeError(f"triangle: diagonal must be an int and upper a bool, got {diagonal!r} and {upper!r}")
    same_dtype("triangle", view, dtype, " (triangle moves elements only)")
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


@kernel(native="i64 n, const i64 *index, const T *weights, i64 bins, T *out",
        c_dtypes=("int32", "int64", "float32", "float64"),
        sizes=lambda index, weights, bins, dtype: {"n": numel(index.shape)})
def bincount(index: "index", weights: "dense?", bins: "int", dtype: "dtype"):
    """How many elements of the 1-d int64 `index` equal each of 0..bins-1 (with `weights`,
    a 1-d view of as many elements, the sum of their weights instead), added in index
    order, in dtype. An element outside 0..bins-1 counts nowhere (the caller sizes bins
    from the largest one, and refuses negative ones first)."""
    if len(index.shape) != 1 or index.dtype is not dtypes.int64:
        raise ValueError(f"bincount: index must be a 1-d int64 view, got {index.dtype} of shape {tuple(index.shape)}")
    if weights is not None:
        differ("bincount", "weights", weights.shape, index.shape)
        same_dtype("bincount", weights, dtype)
    if not (type(bins) is int and bins >= 0):
        raise ValueError(f"bincount: bins must be a non-negative int, got {bins!r}")
    return [((bins,), dtype)]


@kernel(float_only=True, native="i64 n, const T *view, i64 bins, double low, double high, T *out",
        sizes=lambda view, bins, low, high, dtype: {"n": numel(view.shape)})
def histc(view: "dense", bins: "int", low: "float", high: "float", dtype: "dtype"):
    """A histogram of the view's elements in `bins` bins of equal width from low to high
    (low < high, both numbers of dtype), in dtype: an element x in [low, high] counts in
    bin (x - low) * bins / (high - low), rounded down, computed in dtype (PyTorch's
    formula); one equal to high in the last bin. Elements outside, and NaN, count nowhere."""
    if not (type(bins) is int and bins > 0):
        raise ValueError(f"histc: bins must be a positive int, got {bins!r}")
    if not low < high:
        raise ValueError(f"histc: low must be below high, got {low!r} and {high!r}")
    same_dtype("histc", view, dtype)
    return [((bins,), dtype)]


@kernel("values, counts", c_dtypes=ANY_DTYPE, native="i64 n, i64 count, const T *view, T *values, i64 *counts",
        sizes=lambda view, count, dtype: {"n": numel(view.shape)})
def runs(view: "dense", count: "int", dtype: "dtype"):
    """The runs of equal neighbours of a 1-d view (a NaN equal to nothing), in order: each
    run's first element and its length (int64). `count` is how many runs there are, which
    the caller counts first (the outputs' size depends on it); a kernel writes no more."""
    if len(view.shape) != 1:
        raise ValueError(f"runs: the view must be 1-d, got shape {tuple(view.shape)}")
    n = view.shape[0]
    if not (type(count) is int and min(n, 1) <= count <= n):
        raise ValueError(f"runs: count must be an int from {min(n, 1)} to {n}, got {count!r}")
    same_dtype("runs", view, dtype)
    return [((count,), dtype), ((count,), dtypes.int64)]
