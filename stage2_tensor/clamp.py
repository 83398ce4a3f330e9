"""clamp: each element limited to [min, max], as PyTorch's torch.clamp. With number bounds,
one kernel on float32 and float64 tensors (elsewhere two: the maximum with min, then the
minimum with max), and a gradient that flows to x where min <= x <= max (both ends included, and not where x is NaN: PyTorch's rule). A
tensor bound is two ``where``s, the gradient flowing to x where it was kept and to the
bound where it was taken."""
import math

from . import dtypes
from .elementwise import binary_kernel, operands, where
from .gradient_function import GradientFunction
from .tensor import Tensor


def check_bounds(op, min, max):  # noqa: A002  (PyTorch's argument names)
    if min is None and max is None:
        raise ValueError(f"{op}: at least one of 'min' or 'max' must not be None")
    for name, bound in (("min", min), ("max", max)):
        if bound is not None and not isinstance(bound, (Tensor, int, float)):
            raise TypeError(f"{op}: {name} must be a number, a tensor or None, got "
                            f"{type(bound).__name__}")


class Clamp(GradientFunction):
    """x limited by number bounds: the clamp kernel, or maximum(x, min), then minimum(that,
    max), each a binary kernel (a NaN stays NaN in both); the gradient passes where
    min <= x <= max."""

    def forward(self, x, min, max):  # noqa: A002
        self.save_for_backward(x)
        self.bounds = min, max
        if x.dtype in (dtypes.float32, dtypes.float64) and not any(b != b for b in (min, max) if b is not None):
            low, high = (-math.inf if min is None else min), (math.inf if max is None else max)
            return x.launch("clamp", x.as_view(), low, high, x.dtype, shape=x.shape, dtype=x.dtype)
        out = x
        for op, bound in (("maximum", min), ("minimum", max)):
            if bound is not None:
                out, b, _, _ = operands(out, bound)
                out = binary_kernel(op, out, b)
        return out

    def backward(self, grad):
        (x,) = self.saved_tensors
        low, high = self.bounds
        if low is not None:
            grad = where(x >= low, grad, 0.0)       # false for NaN: no gradient there
        if high is not None:
            grad = where(x <= high, grad, 0.0)
        return (grad,)


def clamp(x, min=None, max=None):  # noqa: A002
    """x with elements below min raised to min and those above max lowered to max (either
    bound may be None, a number or a tensor that broadcasts). NaN stays NaN; with min > max
    every element is max, as PyTorch. The dtype is promoted as for x + min."""
    check_bounds("clamp", min, max)
    if not isinstance(min, Tensor) and not isinstance(max, Tensor):
        return Clamp.apply(x, min, max)
    out = x
    if min is not None:
        out = where(out < min, min, out)    # x < min is false for NaN: it stays
    if max is not None:
        out = where(out > max, max, out)
    return out
