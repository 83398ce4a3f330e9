"""Composite ops: written with primitives, so every device runs them and autograd
differentiates them with no code of their own (chapter 4, "Tensor-level autograd").

A device may compute a composite in one kernel instead, forward and backward: one pass
over memory rather than one per primitive, and no intermediate tensors kept for the
backward pass. Such a kernel is declared in ops.py's FUSED with its gradient, and a device
that has it lists it in its backend's ``fused``; the composite below then calls it. The
python device has none, so it runs (and a reader sees) the definition itself.
"""
import math

from . import backend, ops
from .elementwise import unary

# nn.GELU's and F.gelu's `approximate` (PyTorch's names) -> the fused kernel that computes it
GELU_OPS = {"none": "gelu", "tanh": "gelu_tanh"}


def gelu_op(approximate):
    """The fused kernel of GELU with ``approximate`` "none" (exact, x * Phi(x)) or "tanh"
    (GPT-2's approximation); anything else is a ValueError naming the allowed values."""
    try:
        return GELU_OPS[approximate]
    except (KeyError, TypeError):       # TypeError: an unhashable value, e.g. a list
        raise ValueError(f"GELU: approximate={approximate!r} is not one of "
                         f"{', '.join(repr(k) for k in GELU_OPS)}") from None


def gelu(x, approximate="none"):
    """GELU, x * Phi(x) with Phi the standard normal distribution function, as PyTorch's
    F.gelu: exact, 0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh" GPT-2's
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), here written x * sigmoid(2 u) with u
    the tanh's argument, the same number: for x < 0, 1 + tanh(u) cancels, sigmoid does not."""
    op = gelu_op(approximate)
    if op in backend.get(x.device).fused:
        return unary(op, x)
    if op == "gelu":
        return 0.5 * x * (1 + unary("erf", x * (1 / math.sqrt(2))))
    z = ops.GELU_TANH_K * (x + ops.GELU_TANH_C * x * x * x)
    return x * unary("sigmoid", z)
