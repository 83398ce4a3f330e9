"""Element by element: the primitives of ops.py (their kinds, formulas and gradients are
declared there) and the choice between two views."""
from ..contracts import differ
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
