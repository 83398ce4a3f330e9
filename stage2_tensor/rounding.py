"""Rounding and integer division: ``floor``, ``ceil``, ``round``, ``floor_divide`` (``//``)
and ``remainder`` (``%``), as PyTorch (chapter 2, "Composite operations").

No kernel of their own: a float64 value v < 2^51 in magnitude rounds to the nearest
integer (ties to even, as PyTorch's round) by adding and subtracting 1.5 * 2^52, which
leaves no fraction bits for the sum to keep; floor is that, minus 1 where it came out
above v, and ceil is -floor(-v). Beyond 2^51 every float64 is a whole number already and
is kept. The results are constants to autograd (their gradient is 0 almost everywhere, as
PyTorch's); remainder a - floor(a / b) b takes its gradient through a and b (1 and
-floor(a / b)). Integers in, integers out (floor division of ints is exact up to 2^51).
"""
from . import dtypes
from .elementwise import where
from .factories import as_tensor
from .tensor import Tensor

_ROUNDER = 1.5 * 2.0 ** 52


def _rounded(v):
    """v (float64, detached) rounded to the nearest integer, ties to even."""
    return where(v.abs() < 2.0 ** 51, (v + _ROUNDER) - _ROUNDER, v)


def _check(op, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be a Tensor, not {type(x).__name__}")


def round(x):  # noqa: A001  (PyTorch's name)
    """The nearest integer to each element, halves to even; an integer tensor itself."""
    _check("round", x)
    if not x.dtype.is_floating_point:
        return x
    return _rounded(x.detach().to(dtype=dtypes.float64)).to(dtype=x.dtype)


def _floor64(v):
    r = _rounded(v)
    return r - (r > v).to(dtype=dtypes.float64)


def floor(x):
    """The largest integer not above each element; an integer tensor itself."""
    _check("floor", x)
    if not x.dtype.is_floating_point:
        return x
    return _floor64(x.detach().to(dtype=dtypes.float64)).to(dtype=x.dtype)


def ceil(x):
    """The smallest integer not below each element; an integer tensor itself."""
    _check("ceil", x)
    if not x.dtype.is_floating_point:
        return x
    return (-_floor64(-x.detach().to(dtype=dtypes.float64))).to(dtype=x.dtype)


def _operands(op, a, b):
    """(a, b, the result's dtype): tensors on one device, promoted as a + b would be."""
    t = a if isinstance(a, Tensor) else b
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}(): expected a tensor operand, got {type(a).__name__} and {type(b).__name__}")
    dtype = (a + b).dtype if isinstance(a, Tensor) and isinstance(b, Tensor) else \
        dtypes.promote_scalar(t.dtype, b if t is a else a)
    a = as_tensor(a, dtype=dtype, device=t.device) if not isinstance(a, Tensor) else a
    b = as_tensor(b, dtype=dtype, device=t.device) if not isinstance(b, Tensor) else b
    if not dtype.is_floating_point and bool((b == 0).any().item()):
        raise ZeroDivisionError(f"{op}(): integer division by zero")
    return a, b, dtype


def floor_divide(a, b):
    """floor(a / b) element-wise (Python's //), in the operands' promoted dtype."""
    a, b, dtype = _operands("floor_divide", a, b)
    q = a.detach().to(dtype=dtypes.float64) / b.detach().to(dtype=dtypes.float64)
    return _floor64(q).to(dtype=dtype)


def remainder(a, b):
    """a - floor(a / b) * b element-wise (Python's %: the sign of b), in the promoted dtype."""
    a, b, dtype = _operands("remainder", a, b)
    q = floor_divide(a, b)
    return a - q * b if dtype.is_floating_point else (a - q * b).to(dtype=dtype)
