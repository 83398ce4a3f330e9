"""sin and cos (PyTorch's torch.sin, torch.cos), composites of + and *, so differentiable
and on every device without a kernel of their own (chapter 2, "Composite operations").

Computed in float64 (a float32 angle converted there and the result back, as a kernel
would widen it). The angle is first brought into [-pi, pi]: x - 2 pi k, with k = x / (2 pi)
rounded to the nearest integer by adding and subtracting 1.5 * 2^52, which leaves no
fraction bits for the sum to keep (beyond 2^51 turns x / (2 pi) is a whole number already
and is k itself). k is detached: a whole number of turns has derivative 0, so the gradient
flows through x alone. Half that angle, h in [-pi/2, pi/2], gets Taylor
polynomials of sin and cos up to h^21 and h^20 (Horner's rule), whose truncation error,
(pi/2)^22 / 22! < 1e-16, is below float64's rounding; then sin x = 2 sin h cos h and
cos x = 1 - 2 sin^2 h. Their derivatives, the polynomials' derivatives, are the series of
cos and -sin to the same accuracy.
"""
import math

from . import dtypes
from .elementwise import where
from .tensor import Tensor

_ROUNDER = 1.5 * 2.0 ** 52
_SIN = [(-1) ** n / math.factorial(2 * n + 1) for n in range(11)]      # h, h^3, ..., h^21
_COS = [(-1) ** n / math.factorial(2 * n) for n in range(11)]          # 1, h^2, ..., h^20


def _horner(h2, coefficients):
    """sum c_n h2^n, highest power first."""
    out = h2 * coefficients[-1] + coefficients[-2]
    for c in reversed(coefficients[:-2]):
        out = out * h2 + c
    return out


def _half_angle(op, x):
    """(sin h, cos h, the result's dtype) of h = x / 2 reduced to [-pi/2, pi/2], in float64."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be a Tensor, not {type(x).__name__}")
    # as PyTorch: an integer angle gives float32
    dtype = x.dtype if x.dtype.is_floating_point else dtypes.float32
    x = x.to(dtype=dtypes.float64)
    v = (x * (1 / (2 * math.pi))).detach()
    turns = where(v.abs() < 2.0 ** 51, (v + _ROUNDER) - _ROUNDER, v)
    h = (x - turns * (2 * math.pi)) * 0.5
    h2 = h * h
    return h * _horner(h2, _SIN), _horner(h2, _COS), dtype


def sin(x):
    """The sine of each element (radians)."""
    s, c, dtype = _half_angle("sin", x)
    return (2 * s * c).to(dtype=dtype)


def cos(x):
    """The cosine of each element (radians)."""
    s, _, dtype = _half_angle("cos", x)
    return (1 - 2 * s * s).to(dtype=dtype)
