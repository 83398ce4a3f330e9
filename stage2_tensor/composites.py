"""Composite ops: written with primitives, so every device runs them and autograd
differentiates them with no code of their own (chapter 4, "Tensor-level autograd").

A device may compute a composite in one kernel instead, forward and backward: one pass
over memory rather than one per primitive, and no intermediate tensors kept for the
backward pass. An element-wise one (GELU) is declared in ops.py's FUSED with its gradient,
and a device that has it lists it in its backend's ``fused``; the losses' are backend
methods (``mse_loss``, ``cross_entropy``, backend.py's optional kernels). The public calls
(``x.gelu()``, nn.functional's losses) run the fused kernel where the device has it and
the definition below where it does not: the python device runs GELU's, as a reader sees it.
"""
import math

from . import backend, ops
from .data_checks import no_negatives
from .elementwise import unary
from .factories import arange
from .softmax import log_softmax
from .views import out_of_range

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
    if gelu_op(approximate) == "gelu":
        return 0.5 * x * (1 + unary("erf", x * (1 / math.sqrt(2))))
    z = ops.GELU_TANH_K * (x + ops.GELU_TANH_C * x * x * x)
    return x * unary("sigmoid", z)


def mse_loss(input, target, reduction):
    """The squared differences, their sum or their mean (reduction "none", "sum", "mean"),
    for input and target of one dtype (nn.functional.mse_loss checks and converts)."""
    diff = input - target
    return reduced(diff * diff, reduction)


def cross_entropy(logits, target, reduction, ignore_index=None):
    """-log softmax(logits)[target] per row of (N, C) logits, for int64 class indices target
    (N,); their sum or mean as ``reduction`` says. log_softmax subtracts each row's max, so
    large logits do not overflow. A row whose target is ``ignore_index`` (None: none is)
    adds 0, and the mean is over the other rows (none left: 0 / 0, nan, as PyTorch's)."""
    n, c = logits.shape
    kept = None if ignore_index is None else target != ignore_index
    picked = target if kept is None else target.masked_fill(kept == False, 0)  # noqa: E712  (then weighted 0)
    try:                                # the index kernel checks the targets (data_checks.py)
        losses = -log_softmax(logits, dim=-1)[arange(n, device=logits.device), no_negatives(picked, c)]
    except IndexError:
        raise backend.bad_target(*out_of_range(picked, c), c) from None
    if kept is None:
        return reduced(losses, reduction)
    kept = kept.to(dtype=losses.dtype)
    losses = losses * kept
    return losses.sum() / kept.sum() if reduction == "mean" else reduced(losses, reduction)


def reduced(losses, reduction):
    """A loss's per-element values as ``reduction`` asks: "none" as they are, their "sum",
    or their "mean"."""
    return losses if reduction == "none" else losses.sum() if reduction == "sum" else losses.mean()
