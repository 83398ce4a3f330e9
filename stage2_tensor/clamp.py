"""clamp: each element limited to [min, max], as PyTorch's torch.clamp. Two ``where``s, so
the gradient flows to x where it was kept (min <= x <= max, both ends included, as PyTorch)
and to a tensor bound where it was taken."""
from .elementwise import where
from .tensor import Tensor


def check_bounds(op, min, max):  # noqa: A002  (PyTorch's argument names)
    if min is None and max is None:
        raise ValueError(f"{op}: at least one of 'min' or 'max' must not be None")
    for name, bound in (("min", min), ("max", max)):
        if bound is not None and not isinstance(bound, (Tensor, int, float)):
            raise TypeError(f"{op}: {name} must be a number, a tensor or None, got "
                            f"{type(bound).__name__}")


def clamp(x, min=None, max=None):  # noqa: A002
    """x with elements below min raised to min and those above max lowered to max (either
    bound may be None, a number or a tensor that broadcasts). NaN stays NaN; with min > max
    every element is max, as PyTorch. The dtype is promoted as for x + min."""
    check_bounds("clamp", min, max)
    out = x
    if min is not None:
        out = where(out < min, min, out)    # x < min is false for NaN: it stays
    if max is not None:
        out = where(out > max, max, out)
    return out
