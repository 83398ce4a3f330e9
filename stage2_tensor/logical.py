"""Questions about values with true-or-false answers: ``all`` and ``any`` (over dimensions),
``isclose`` (element by element), ``allclose`` and ``equal`` (one Python bool). None is
differentiable: they are counts and comparisons."""
import math

from . import dtypes
from .elementwise import where
from .reduce import normalize_dims
from .strides import numel
from .tensor import Tensor


def _check_tensor(op, name, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(x).__name__}")


def _nonzero_count(x, dim, keepdim):
    """How many elements are nonzero (true, NaN included, as in PyTorch), and of how many."""
    dims = normalize_dims(x, dim)
    count = (x != 0).to(dtype=dtypes.int64).sum(dim=dims, keepdim=keepdim)
    return count, numel([x.shape[d] for d in dims])


def all(x, dim=None, keepdim=False):  # noqa: A001  (PyTorch's name)
    """True where every element along ``dim`` (all of them: None) is nonzero; of nothing: True."""
    _check_tensor("all", "input", x)
    count, n = _nonzero_count(x, dim, keepdim)
    return count == n


def any(x, dim=None, keepdim=False):  # noqa: A001  (PyTorch's name)
    """True where some element along ``dim`` (all of them: None) is nonzero; of nothing: False."""
    _check_tensor("any", "input", x)
    count, _ = _nonzero_count(x, dim, keepdim)
    return count > 0


def _or(a, b):
    """Element-wise a or b of bool tensors (a where it is true, b elsewhere)."""
    return where(a, a, b)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Where |a - b| <= atol + rtol |b| (not symmetric: b is the reference), as PyTorch and
    numpy. Equal infinities are close; NaN is close to NaN only with equal_nan."""
    _check_tensor("isclose", "input", a)
    _check_tensor("isclose", "other", b)
    if a.dtype is not b.dtype:
        raise TypeError(f"isclose(): expected both tensors to have the same dtype, got {a.dtype} "
                        f"and {b.dtype}")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not tol >= 0:
            raise ValueError(f"isclose(): {name} must be a number >= 0, got {tol!r}")
    close = a == b
    if a.dtype is dtypes.bool_:
        return close
    if not a.dtype.is_floating_point:      # differences of integers computed exactly
        a, b = a.to(dtype=dtypes.float64), b.to(dtype=dtypes.float64)
    # Equal infinities are caught by a == b above (inf - inf is nan); any other infinite
    # difference is never close, though inf <= atol + rtol * inf would say so
    difference = (a - b).abs()
    finite = difference < math.inf
    close = _or(close, where(finite, difference <= atol + rtol * b.abs(), finite))
    if equal_nan:
        close = _or(close, where(a != a, b != b, a != a))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True (a Python bool) when isclose holds for every element (a and b broadcast)."""
    return bool(all(isclose(a, b, rtol, atol, equal_nan)).item())


def equal(a, b):
    """True (a Python bool) when a and b have the same shape and the same elements."""
    _check_tensor("equal", "input", a)
    _check_tensor("equal", "other", b)
    return a.shape == b.shape and bool(all(a == b).item())

