"""Masks: ``masked_fill`` (a value where a bool mask is true) and the triangles ``tril`` and
``triu`` (a causal mask). Each is a ``where``, so its gradient flows to the elements kept."""
from . import dtypes, factories
from .broadcast import broadcast_shapes
from .elementwise import where
from .tensor import Tensor


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


def _triangle(op, x, diagonal, keep_below):
    if x.ndim < 2:
        raise ValueError(f"{op}: input tensor must have at least 2 dimensions, got shape {x.shape}")
    if not isinstance(diagonal, int) or isinstance(diagonal, bool):
        raise TypeError(f"{op}: diagonal must be an int, got {diagonal!r}")
    rows, cols = x.shape[-2:]
    # column j of row i is on diagonal j - i: the main one is 0, those above it positive
    offset = factories.arange(cols, device=x.device) - factories.arange(rows, device=x.device).unsqueeze(-1)
    keep = offset <= diagonal if keep_below else offset >= diagonal
    # a zero of x's own dtype: tril of a bool or int tensor stays bool or int
    return where(keep, x, factories.full((), 0, dtype=x.dtype, device=x.device))


def tril(x, diagonal=0):
    """Zeros above the given diagonal of the last two dimensions (a causal mask): element
    (i, j) is kept where j - i <= diagonal."""
    return _triangle("tril", x, diagonal, True)


def triu(x, diagonal=0):
    """Zeros below the given diagonal of the last two dimensions: element (i, j) is kept
    where j - i >= diagonal."""
    return _triangle("triu", x, diagonal, False)
