"""Masks: ``masked_fill`` (a value where a bool mask is true), the triangles ``tril`` and
``triu`` (a causal mask; one kernel), and ``diag`` (one diagonal kept: diag_embed and
diagonal's view). Each keeps some elements and zeroes the rest, so its gradient flows to the
elements kept.
``masked_select`` and ``masked_scatter`` read and write the true positions in row-major
order: x[mask] and advanced indexing's write (advanced_index.py), differentiable the same way."""
from . import dtypes, factories
from .advanced_index import nonzero, write
from .broadcast import broadcast_shapes
from .elementwise import where
from .gradient_function import GradientFunction
from .tensor import Tensor
from .view_layouts import diag_embed, diagonal as diagonal_view


def check_mask(op, x, mask, value):
    """PyTorch's rules for masked_fill: a bool mask that broadcasts to x's shape, a value that
    is a number or a 0-d tensor; an error naming what was wrong otherwise. Returns the value
    as a tensor of x's dtype and device: the result keeps x's dtype, as in PyTorch."""
    if not isinstance(mask, Tensor) or mask.dtype is not dtypes.bool_:
        got = f"dtype {mask.dtype}" if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(f"{op}: only supports boolean masks, but got a mask of {got}")
    try:
        shape = broadcast_shapes(x.shape, mask.shape)
    except ValueError:
        shape = None
    if shape != x.shape:
        raise ValueError(f"{op}: the mask of shape {mask.shape} must broadcast to the tensor's "
                         f"shape {x.shape}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise ValueError(f"{op}: only supports a 0-dimensional value tensor, but got a tensor "
                             f"of shape {value.shape}")
        return value.to(device=x.device, dtype=x.dtype)
    if not isinstance(value, (bool, int, float)):
        raise TypeError(f"{op}: value must be a number or a 0-d tensor, got {type(value).__name__}")
    try:
        value = x.dtype.cast(value)
    except (OverflowError, ValueError):          # inf or nan into an integer tensor
        raise ValueError(f"{op}: value {value!r} cannot be converted to {x.dtype}") from None
    return factories.full((), value, dtype=x.dtype, device=x.device)


def masked_fill(x, mask, value):
    """value where mask is true, x elsewhere (mask broadcasts to x's shape; the result has
    x's shape and dtype, as in PyTorch)."""
    return where(mask, check_mask("masked_fill", x, mask, value), x)


class Triangle(GradientFunction):
    """One kernel (kernels/indexing.py's triangle), which is its own gradient: the upstream
    gradient kept on the same triangle."""

    def forward(self, x, diagonal, upper):
        self.diagonal, self.upper = diagonal, upper
        return x.launch("triangle", x.as_view(), diagonal, upper, x.dtype, shape=x.shape, dtype=x.dtype)

    def backward(self, grad):
        return (Triangle.apply(grad, self.diagonal, self.upper),)


def _triangle(op, x, diagonal, upper):
    if x.ndim < 2:
        raise ValueError(f"{op}: input tensor must have at least 2 dimensions, got shape {x.shape}")
    if not isinstance(diagonal, int) or isinstance(diagonal, bool):
        raise TypeError(f"{op}: diagonal must be an int, got {diagonal!r}")
    return Triangle.apply(x, diagonal, upper)


def tril(x, diagonal=0):
    """Zeros above the given diagonal of the last two dimensions (a causal mask): element
    (i, j) is kept where j - i <= diagonal."""
    return _triangle("tril", x, diagonal, False)


def triu(x, diagonal=0):
    """Zeros below the given diagonal of the last two dimensions: element (i, j) is kept
    where j - i >= diagonal."""
    return _triangle("triu", x, diagonal, True)


def diag(x, diagonal=0):
    """PyTorch's torch.diag: of a vector, the square matrix with it on the given diagonal
    (j - i = diagonal), zeros elsewhere (diag_embed); of a matrix, a copy of that diagonal
    (diagonal, a view, copied). The gradient flows to those elements only."""
    if not isinstance(x, Tensor):
        raise TypeError(f"diag(): argument 'input' (position 1) must be a Tensor, not {type(x).__name__}")
    if not isinstance(diagonal, int) or isinstance(diagonal, bool):
        raise TypeError(f"diag: diagonal must be an int, got {diagonal!r}")
    if x.ndim == 1:
        return diag_embed(x, diagonal)
    if x.ndim != 2:
        raise ValueError(f"diag: expected a 1-D or 2-D tensor, got shape {x.shape}")
    return diagonal_view(x, diagonal).clone()


def _bool_mask(op, mask):
    if not isinstance(mask, Tensor) or mask.dtype is not dtypes.bool_:
        got = f"dtype {mask.dtype}" if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(f"{op}: expected a bool mask, got a mask of {got}")


def masked_select(x, mask):
    """x's elements where mask is true, as one row in row-major order; x and mask broadcast
    together first (PyTorch's torch.masked_select)."""
    _bool_mask("masked_select", mask)
    try:
        shape = broadcast_shapes(x.shape, mask.shape)
    except ValueError:
        raise RuntimeError(f"masked_select: the mask of shape {mask.shape} and the tensor of shape {x.shape} "
                           "do not broadcast") from None
    return x.broadcast_to(shape)[mask.broadcast_to(shape)] if shape else x.reshape(1)[mask.reshape(1)]


def masked_scatter(x, mask, source, in_place=False):
    """x with the positions where mask (broadcast to x's shape) is true given source's
    elements in order, row-major: source needs at least as many elements as mask has true
    ones (PyTorch's Tensor.masked_scatter). Differentiable in x and source."""
    _bool_mask("masked_scatter", mask)
    if not isinstance(source, Tensor):
        raise TypeError(f"masked_scatter: source must be a Tensor, not {type(source).__name__}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"masked_scatter: expected source of the tensor's dtype {x.dtype}, got {source.dtype}")
    if _broadcast_or_none(x.shape, mask.shape) != x.shape:
        raise RuntimeError(f"masked_scatter: the mask of shape {mask.shape} must broadcast to the tensor's "
                           f"shape {x.shape}")
    flat = x.reshape(1) if x.ndim == 0 else x
    found = nonzero(mask.broadcast_to(x.shape).reshape(*flat.shape))
    if source.numel() < found.shape[0]:
        raise RuntimeError(f"masked_scatter: Number of elements of source ({source.numel()}) < number of ones "
                           f"in mask ({found.shape[0]})")
    if not found.shape[0]:
        return x if in_place else x.clone()
    values = source.reshape(-1)[:found.shape[0]]
    out = write(flat, (slice(None),) * flat.ndim, [(d, found[:, d]) for d in range(flat.ndim)], values, False,
                "masked_scatter_", in_place)
    return x if in_place else out.reshape(*x.shape)


def _broadcast_or_none(*shapes):
    try:
        return broadcast_shapes(*shapes)
    except ValueError:
        return None
