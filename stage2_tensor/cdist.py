"""cdist: the p-norm distance between each row of x1 (..., P, M) and each row of x2
(..., R, M), batches broadcast: (..., P, R).

For p = 2 PyTorch computes, when P or R exceeds 25 (compute_mode's default), with the
matrix product: |a - b|^2 = |a|^2 - 2 a.b + |b|^2, one matmul instead of P R M differences,
clamped at 0 against rounding; so does this. Otherwise, and for every other p, the
differences themselves: a broadcast subtraction (P, R, M), then the vector norm over M
(p = 0 counts nonzero differences, inf is the largest). Differentiable; a zero distance
has the gradient 0, as PyTorch's.
"""
import math

from .elementwise import where
from .statistics import norm
from .tensor import Tensor

MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def _by_matmul(x1, x2):
    squares = (x1 * x1).sum(-1, keepdim=True) - 2 * (x1 @ x2.mT) + (x2 * x2).sum(-1).unsqueeze(-2)
    squares = squares.clamp(min=0.0)
    zero = squares == 0
    return where(zero, 0.0, where(zero, 1.0, squares).sqrt())


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    for name, t in (("x1", x1), ("x2", x2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"cdist(): argument '{name}' must be Tensor, not {type(t).__name__}")
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name.upper()} got: {t.ndim}D")
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name.upper()} got: {t.dtype}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in MODES:
        raise RuntimeError(f"{compute_mode} is not a valid value for compute_mode")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"cdist: X1 and X2 must have the same dtype, got {x1.dtype} and {x2.dtype}")
    batch = _batch(x1, x2)
    x1 = x1.expand(*batch, *x1.shape[-2:])
    x2 = x2.expand(*batch, *x2.shape[-2:])
    large = x1.shape[-2] > 25 or x2.shape[-2] > 25
    if p == 2 and (compute_mode == MODES[1] or (compute_mode == MODES[0] and large)):
        return _by_matmul(x1, x2)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)               # (..., P, R, M)
    if p == 0:
        return (diff != 0).to(dtype=x1.dtype).sum(-1)
    if p == math.inf:
        return diff.abs().amax(-1)
    if p in (1, 2):
        return norm(diff, p, -1)
    # a zero difference to a power below 1 has an infinite derivative: PyTorch's is 0 there
    size = diff.abs()
    zero = size == 0
    powered = where(zero, 0.0, where(zero, 1.0, size) ** float(p)).sum(-1)
    none = powered == 0
    return where(none, 0.0, where(none, 1.0, powered) ** (1.0 / p))


def _batch(x1, x2):
    from .broadcast import broadcast_shapes
    try:
        return broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError as e:
        raise RuntimeError(f"cdist: the batch dimensions of X1 {tuple(x1.shape)} and X2 {tuple(x2.shape)} do not "
                           f"broadcast: {e}") from None
