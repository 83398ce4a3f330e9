"""Losses in one pass: each a composite of stage2 (composites.py, linear_cross_entropy.py)
that a device may run as one kernel instead. A target that is neither a class nor
ignore_index is data: the kernel finds it as it reads, and the backend raises
backend.bad_target."""
from ..contracts import REDUCTIONS, bad_reduction, differ, not_rows
from ..strides import numel
from . import kernel


def _ignore_index(kernel_name, ignore_index):
    if ignore_index is not None and type(ignore_index) is not int:
        raise TypeError(f"{kernel_name}: ignore_index must be an int or None, got {ignore_index!r}")


def _kept(kernel_name, kept):
    if kept is not None and tuple(kept.shape) != ():
        differ(kernel_name, "kept", kept.shape, ())


@kernel("losses, probs, kept?", float_only=True)
def cross_entropy(logits: "dense", targets: "index", reduction: "choice", ignore_index: "int?", dtype: "dtype"):
    """logits (N, C), targets N class indices: loss_i = -log softmax(logits_i)[targets[i]], 0
    for a row whose target is ignore_index (None: none ignored); the N losses, or ("sum",
    "mean") their reduction to one value, the mean over the kept rows (none kept: nan).
    probs: the N * C probabilities, for the backward; kept, for "mean" only (else None): the
    count of kept rows as one value of dtype (what the backward divides by: PyTorch's
    total_weight)."""
    if len(logits.shape) != 2:
        not_rows("cross_entropy", "logits", logits.shape)
    if targets.shape != logits.shape[:1]:
        differ("cross_entropy", "targets", targets.shape, logits.shape[:1])
    if reduction not in REDUCTIONS:
        bad_reduction("cross_entropy", reduction)
    _ignore_index("cross_entropy", ignore_index)
    n = logits.shape[0]
    kept = ((), dtype) if reduction == "mean" else None
    return [((n,) if reduction == "none" else (), dtype), (tuple(logits.shape), dtype), kept]


@kernel("dlogits", float_only=True)
def cross_entropy_backward(probs: "dense", targets: "index", scale: "view", kept: "dense?", ignore_index: "int?",
                           dtype: "dtype"):
    """cross_entropy's gradient: (probs - onehot(targets)) * scale[i] / kept for row i (scale
    N values; kept the forward's, or None: no division), 0 for an ignored row."""
    rows = probs.shape[:1]
    if len(probs.shape) != 2:
        not_rows("cross_entropy_backward", "probs", probs.shape)
    if not targets.shape == scale.shape == rows:
        differ("cross_entropy_backward", "targets", targets.shape, rows)
        differ("cross_entropy_backward", "scale", scale.shape, rows)
    _kept("cross_entropy_backward", kept)
    _ignore_index("cross_entropy_backward", ignore_index)
    return [(tuple(probs.shape), dtype)]


def _linear_rows(kernel_name, x, weight, bias, targets):
    """linear_cross_entropy's operands: x (N, C), weight (V, C), bias (V,) or None, N targets."""
    if len(x.shape) != 2:
        not_rows(kernel_name, "x", x.shape)
    if len(weight.shape) != 2 or weight.shape[1] != x.shape[1]:
        raise ValueError(f"{kernel_name}: weight has shape {tuple(weight.shape)}, expected (V, "
                         f"{x.shape[1]}) for x of shape {tuple(x.shape)}")
    if bias is not None and bias.shape != weight.shape[:1]:
        differ(kernel_name, "bias", bias.shape, weight.shape[:1])
    if targets.shape != x.shape[:1]:
        differ(kernel_name, "targets", targets.shape, x.shape[:1])


@kernel("losses, lse, kept?", optional=True)
def linear_cross_entropy(x: "dense", weight: "dense", bias: "dense?", targets: "index", reduction: "choice",
                         ignore_index: "int?", dtype: "dtype"):
    """cross_entropy's losses and kept for the logits x @ weight^T + bias (x (N, C), weight
    (V, C), bias V values or None) without forming them; lse each row's logsumexp (N
    values, for the backward). A device without it runs the composite, linear then
    cross_entropy (linear_cross_entropy.py)."""
    _linear_rows("linear_cross_entropy", x, weight, bias, targets)
    if reduction not in REDUCTIONS:
        bad_reduction("linear_cross_entropy", reduction)
    _ignore_index("linear_cross_entropy", ignore_index)
    n = x.shape[0]
    kept = ((), dtype) if reduction == "mean" else None
    return [((n,) if reduction == "none" else (), dtype), ((n,), dtype), kept]


@kernel("dx?, dweight?, dbias?", optional=True)
def linear_cross_entropy_backward(x: "dense", weight: "dense", bias: "dense?", targets: "index", lse: "dense",
                                  scale: "view", kept: "dense?", ignore_index: "int?", needs: "bools",
                                  dtype: "dtype"):
    """Its gradients, each None unless `needs` (three bools) asks for it: with the logits z
    computed again, dz = (e^(z - lse) - onehot(targets)) * scale[i] / kept (0 for an ignored
    row), dx = dz @ weight, dweight = dz^T @ x, dbias = the sum of dz's rows."""
    name = "linear_cross_entropy_backward"
    _linear_rows(name, x, weight, bias, targets)
    if not lse.shape == scale.shape == x.shape[:1]:
        differ(name, "lse", lse.shape, x.shape[:1])
        differ(name, "scale", scale.shape, x.shape[:1])
    _kept(name, kept)
    _ignore_index(name, ignore_index)
    if len(needs) != 3 or (needs[2] and bias is None):
        raise ValueError(f"{name}: needs must say (dx, dweight, dbias), dbias only with a "
                         f"bias, got {needs!r}")
    shapes = (tuple(x.shape), tuple(weight.shape), (weight.shape[0],))
    return [(shape, dtype) if need else None for shape, need in zip(shapes, needs)]


@kernel("losses, diff", float_only=True, native="i64 n, const T *a, const T *b, int reduction_code, T *losses, T *diff",
        sizes=lambda a, b, reduction, dtype: {"n": numel(a.shape), "reduction_code": REDUCTIONS.index(reduction)})
def mse_loss(a: "dense", b: "dense", reduction: "choice", dtype: "dtype"):
    """a and b of one shape: diff = a - b, and the losses (a - b)^2 per element or ("sum",
    "mean") their reduction to one value."""
    if b.shape != a.shape:
        differ("mse_loss", "b", b.shape, a.shape)
    if reduction not in REDUCTIONS:
        bad_reduction("mse_loss", reduction)
    return [(tuple(a.shape) if reduction == "none" else (), dtype), (tuple(a.shape), dtype)]


@kernel("da", float_only=True)
def mse_loss_backward(diff: "dense", grad: "view", factor: "float", dtype: "dtype"):
    """mse_loss's gradient with respect to a: 2 * diff * grad * factor, grad of diff's shape
    (stride 0 when the upstream gradient is one value)."""
    if grad.shape != diff.shape:
        differ("mse_loss_backward", "grad", grad.shape, diff.shape)
    return [(tuple(diff.shape), dtype)]
