"""Rows by index: the gather that embedding and advanced indexing read with, and its adjoint.
An index out of range is data, not a shape: the kernel finds it as it reads, and the backend
raises backend.bad_index."""
from ..contracts import bad_dim, differ
from ..strides import numel
from . import kernel


@kernel(halves=True)
def index_select(view: "view", dim: "dim", index: "index"):
    """The rows of `dim` listed in `index`, a 1-d int64 view on the same device (-size to
    size - 1, negative ones counting from the end)."""
    if not (type(dim) is int and 0 <= dim < len(view.shape)):
        bad_dim("index_select", dim, len(view.shape))
    return [(tuple(view.shape[:dim]) + (numel(index.shape),) + tuple(view.shape[dim + 1:]), view.dtype)]


@kernel()
def index_add(shape: "shape", dim: "dim", index: "index", src: "view"):
    """Zeros of `shape` with row r of src added at row index[r] (repeats add up):
    index_select's gradient, `index` as for index_select."""
    shape = tuple(shape)
    if not all(type(n) is int and n >= 0 for n in shape):
        raise ValueError(f"index_add: shape {shape} is not a tuple of non-negative ints")
    if not (type(dim) is int and 0 <= dim < len(shape)):
        bad_dim("index_add", dim, len(shape))
    differ("index_add", "src", src.shape, shape[:dim] + (numel(index.shape),) + shape[dim + 1:])
    return [(shape, src.dtype)]
