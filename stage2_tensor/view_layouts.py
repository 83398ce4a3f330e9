"""Views given by a layout computed from the input's (chapter 1, "Strides"): a diagonal
(its stride the sum of two dimensions'), ``Tensor.unfold``'s windows (a new dimension with
the old one's stride), ``select``, ``as_strided``; and the tensors those views are written
into, PyTorch's ``diagonal_scatter``, ``select_scatter``, ``slice_scatter`` and the matrices
``diag_embed`` and ``diagflat`` build.

A layout is a function of (shape, strides, offset) giving the view's. Applied to the
input's own layout it is the view, no copy; applied to the row-major layout of the input's
shape it gives the flat positions of the elements the view reads, built with integer
tensor arithmetic (one arange per dimension): the gradient adds back at them (index_add:
windows that overlap get every share), and a scatter writes src at them (index_put), so
both are one kernel call, and differentiable.
"""
from . import backend, dtypes, factories
from .gradient_function import GradientFunction
from .index_kernels import IndexPut
from .strides import check_view, make_strides, normalize_dim, numel
from .tensor import Tensor
from .views import IndexAdd


def positions(layout, shape, device):
    """The flat row-major positions in a tensor of ``shape`` of the elements the view
    ``layout`` reads, in the view's row-major order (int64, 1-D)."""
    view_shape, strides, offset = layout(shape, make_strides(shape), 0)
    at = factories.full((), offset, dtype=dtypes.int64, device=device)
    for n, stride in zip(view_shape, strides):
        at = at.unsqueeze(-1) + factories.arange(n, dtype=dtypes.int64, device=device) * stride
    return at.reshape(-1)


class LayoutView(GradientFunction):
    """x seen through ``layout``; gradient: added back where each element was read."""

    def forward(self, x, layout):
        self.shape, self.layout = x.shape, layout
        return x.view_of(*layout(x.shape, x.strides, x.offset))

    def backward(self, grad):
        n = numel(self.shape)
        if not grad.numel():
            return (factories.zeros(*self.shape, dtype=grad.dtype, device=grad.device),)
        at = positions(self.layout, self.shape, grad.device)
        return (IndexAdd.apply(grad.reshape(-1), (n,), 0, at).reshape(*self.shape),)


def written(op, x, src, layout):
    """A copy of x with the view ``layout`` of it replaced by src (of the view's shape)."""
    _tensor(op, "input", x)
    _tensor(op, "src", src)
    want = layout(x.shape, make_strides(x.shape), 0)[0]
    if tuple(src.shape) != tuple(want):
        raise RuntimeError(f"{op}(): expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(want)}")
    if src.device != x.device:
        raise RuntimeError(f"{op}(): src is on device {src.device!r}, input on {x.device!r}")
    if not src.numel():
        return x.clone()
    at = positions(layout, x.shape, x.device).reshape(1, -1)
    flat = x.reshape(-1)
    return IndexPut.apply(flat, src.reshape(-1).to(dtype=x.dtype), at, None, None, False).reshape(*x.shape)


def _tensor(op, name, t):
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(t).__name__}")


def _int(op, name, v):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{op}(): argument '{name}' must be int, not {type(v).__name__}")
    return v


# ---- diagonals ----------------------------------------------------------------------------------

def _diagonal_layout(op, ndim, offset, dim1, dim2):
    _int(op, "offset", offset)
    if ndim < 2:
        raise RuntimeError(f"{op}(): expected a tensor of at least 2 dimensions, got {ndim}")
    d1, d2 = normalize_dim(_int(op, "dim1", dim1), ndim), normalize_dim(_int(op, "dim2", dim2), ndim)
    if d1 == d2:
        raise RuntimeError(f"{op}(): diagonal dimensions cannot be identical {dim1}, {dim2}")

    def layout(shape, strides, start):
        n = max(0, min(shape[d1] - max(0, -offset), shape[d2] - max(0, offset)))
        if n:
            start += offset * strides[d2] if offset >= 0 else -offset * strides[d1]
        kept = [d for d in range(len(shape)) if d not in (d1, d2)]
        return (tuple(shape[d] for d in kept) + (n,), tuple(strides[d] for d in kept) + (strides[d1] + strides[d2],),
                start)
    return layout


def diagonal(input, offset=0, dim1=0, dim2=1):  # noqa: A002  (PyTorch's argument names)
    """The view of input's diagonal over dim1 and dim2 (j - i = offset), as its last
    dimension; writing through it writes input."""
    _tensor("diagonal", "input", input)
    return LayoutView.apply(input, _diagonal_layout("diagonal", input.ndim, offset, dim1, dim2))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):  # noqa: A002
    """A copy of input with its diagonal (as ``diagonal`` reads it) replaced by src."""
    _tensor("diagonal_scatter", "input", input)
    return written("diagonal_scatter", input, src,
                   _diagonal_layout("diagonal_scatter", input.ndim, offset, dim1, dim2))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002
    """Matrices over dims dim1 and dim2 of the result (one more dimension than input) with
    input's last dimension on their diagonal, zeros elsewhere."""
    _tensor("diag_embed", "input", input)
    if not input.ndim:
        raise RuntimeError("diag_embed(): expected a tensor of at least 1 dimension, got 0")
    ndim = input.ndim + 1
    d1, d2 = normalize_dim(_int("diag_embed", "dim1", dim1), ndim), normalize_dim(_int("diag_embed", "dim2", dim2), ndim)
    if d1 == d2:
        raise RuntimeError(f"diag_embed(): diagonal dimensions cannot be identical {dim1}, {dim2}")
    m = input.shape[-1] + abs(_int("diag_embed", "offset", offset))
    rest = list(input.shape[:-1])
    for d in sorted((d1, d2)):
        rest.insert(d, m)
    zeros = factories.zeros(*rest, dtype=input.dtype, device=input.device)
    return diagonal_scatter(zeros, input, offset, d1, d2)


def diagflat(input, offset=0):  # noqa: A002
    """The square matrix with input's elements (read as one row) on its diagonal."""
    _tensor("diagflat", "input", input)
    return diag_embed(input.reshape(-1), offset, 0, 1)


# ---- one index, a slice -------------------------------------------------------------------------

def _select_layout(op, shape, dim, index):
    if not shape:
        raise IndexError(f"{op}(): cannot be applied to a 0-dim tensor")
    d = normalize_dim(_int(op, "dim", dim), len(shape))
    size = shape[d]
    if not -size <= _int(op, "index", index) < size:
        raise IndexError(f"{op}(): index {index} out of range for tensor of size {list(shape)} at dimension {d}")
    i = index % size

    def layout(shape, strides, start):
        return shape[:d] + shape[d + 1:], strides[:d] + strides[d + 1:], start + i * strides[d]
    return layout


def select(input, dim, index):  # noqa: A002
    """The view of input at ``index`` along dim, without that dimension."""
    _tensor("select", "input", input)
    return LayoutView.apply(input, _select_layout("select", input.shape, dim, index))


def select_scatter(input, src, dim, index):  # noqa: A002
    """A copy of input with its slice at ``index`` along dim replaced by src."""
    _tensor("select_scatter", "input", input)
    return written("select_scatter", input, src, _select_layout("select_scatter", input.shape, dim, index))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):  # noqa: A002
    """A copy of input with input[start:end:step] along dim replaced by src."""
    _tensor("slice_scatter", "input", input)
    if not input.ndim:
        raise RuntimeError("slice_scatter(): cannot be applied to a 0-dim tensor")
    d = normalize_dim(_int("slice_scatter", "dim", dim), input.ndim)
    if _int("slice_scatter", "step", step) <= 0:
        raise RuntimeError("slice_scatter(): slice step must be positive")
    first, last, step = slice(start, end, step).indices(input.shape[d])
    n = len(range(first, last, step))

    def layout(shape, strides, offset):
        return (shape[:d] + (n,) + shape[d + 1:], strides[:d] + (strides[d] * step,) + strides[d + 1:],
                offset + (first * strides[d] if n else 0))
    return written("slice_scatter", input, src, layout)


# ---- windows, any layout ------------------------------------------------------------------------

def unfold(x, dimension, size, step):
    """Tensor.unfold: the view of every window of ``size`` elements along dimension,
    ``step`` apart, as a new last dimension (windows that overlap share elements)."""
    _int("unfold", "size", size)
    if _int("unfold", "step", step) <= 0:
        raise RuntimeError(f"unfold(): step is {step} but must be > 0")
    d = normalize_dim(_int("unfold", "dimension", dimension), max(x.ndim, 1))
    length = x.shape[d] if x.ndim else 1
    if not 0 <= size <= length:
        raise RuntimeError(f"unfold(): maximum size for tensor at dimension {d} is {length} but size is {size}")
    windows = (length - size) // step + 1

    def layout(shape, strides, offset):
        if not shape:                              # a 0-d tensor: its one element
            return (size,), (0,), offset
        return (shape[:d] + (windows,) + shape[d + 1:] + (size,),
                strides[:d] + (strides[d] * step,) + strides[d + 1:] + (strides[d],), offset)
    return LayoutView.apply(x, layout)


def as_strided(input, size, stride, storage_offset=None):  # noqa: A002
    """The view of input's storage with the given sizes, strides and offset (input's own
    offset by default), which must lie inside the storage. Its gradient needs a contiguous
    input, whose elements the view's storage positions then name."""
    _tensor("as_strided", "input", input)
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"as_strided(): mismatch in length of strides and shape: {len(size)} sizes, "
                           f"{len(stride)} strides")
    if any(isinstance(s, int) and s < 0 for s in stride):
        raise RuntimeError(f"as_strided(): Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    start = input.offset if storage_offset is None else storage_offset
    room = backend.get(input.device).size(input.storage.buffer, input.dtype)
    try:
        size, stride, start = check_view(size, stride, start, room)
    except ValueError as e:
        raise RuntimeError(f"as_strided(): sizes {list(size)}, strides {list(stride)} and storage offset "
                           f"{start} are out of bounds for storage of size {room}: {e}") from None
    return AsStrided.apply(input, size, stride, start)


class AsStrided(GradientFunction):
    def forward(self, x, size, stride, start):
        self.shape, self.contiguous, self.x_offset = x.shape, x.is_contiguous(), x.offset
        self.size, self.stride, self.start = size, stride, start
        return x.view_of(size, stride, start)

    def backward(self, grad):
        if not self.contiguous:
            raise RuntimeError("as_strided(): the gradient of a view of a non-contiguous tensor's storage is not "
                               "supported; call .contiguous() before as_strided")
        size, stride, start = self.size, self.stride, self.start - self.x_offset
        return LayoutView.backward(_Layout(self.shape, lambda shape, strides, offset: (size, stride, start)), grad)


class _Layout:
    """What LayoutView.backward reads of its function: the input's shape and the layout."""

    def __init__(self, shape, layout):
        self.shape, self.layout = shape, layout
