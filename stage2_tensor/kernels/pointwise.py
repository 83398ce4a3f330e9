"""Element by element: the primitives of ops.py (their kinds, formulas and gradients are
declared there), the choice between two views, and clamp between two numbers."""
import math

from ..contracts import differ, same_dtype
from ..strides import numel
from . import kernel


@kernel()
def unary(op: "op", view: "view", dtype: "dtype"):
    """op, one of ops.py's unary primitives or the fused kernels a device has (its backend's
    ``fused``), of each element."""
    return [(tuple(view.shape), dtype)]


@kernel()
def binary(op: "op", a: "view", b: "view", dtype: "dtype"):
    """op, one of ops.py's binary primitives or comparisons (whose dtype is bool), of a and b,
    views already broadcast to one shape (stride 0 where stretched). pow_grad is d(a^b)/da =
    b * a^(b-1), 0 where b == 0 (Pow's backward); relu_backward(g, x) is g where x > 0, else
    0 (ReLU's upstream times local, in one pass)."""
    if b.shape != a.shape:
        differ("binary", "b", b.shape, a.shape)
    return [(tuple(a.shape), dtype)]


@kernel()
def where(cond: "view", a: "view", b: "view", dtype: "dtype"):
    """cond ? a : b, all three broadcast to one shape (cond a bool view)."""
    if not cond.shape == a.shape == b.shape:
        differ("where", "a", a.shape, cond.shape)
        differ("where", "b", b.shape, cond.shape)
    return [(tuple(a.shape), dtype)]


@kernel(native="i64 n, double low, double high, const T *view, T *out", float_only=True,
        sizes=lambda view, low, high, dtype: {"n": numel(view.shape)})
def clamp(view: "dense", low: "float", high: "float", dtype: "dtype"):
    """Each element raised to `low` where below it, then lowered to `high` where above it
    (-inf and inf: no bound; low > high gives high everywhere, as PyTorch's); a NaN stays
    NaN. One pass where maximum then minimum take two."""
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v) for v in (low, high)):
        raise ValueError(f"clamp: low and high must be numbers (not NaN), got {low!r} and {high!r}")
    same_dtype("clamp", view, dtype, " (clamp keeps the dtype)")
    return [(tuple(view.shape), dtype)]
