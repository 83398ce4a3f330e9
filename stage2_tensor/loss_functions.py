"""Losses beyond the fused mse_loss and cross_entropy (nn/functional.py), PyTorch's
torch.nn.functional names and semantics: binary_cross_entropy,
binary_cross_entropy_with_logits, l1_loss, smooth_l1_loss, and the path cross_entropy
takes for class weights, label smoothing or (N, C, d...) inputs. Each is a composite of
differentiable tensor operations, so every device runs it and autograd differentiates it
(backend.py, "Primitives and composites"); nn.functional re-exports them.
"""
import operator
import warnings

from . import backend, dtypes
from .broadcast import broadcast_shapes
from .composites import reduced
from .data_checks import outside, raise_if_any
from .elementwise import where
from .softmax import log_softmax
from .tensor import Tensor
from .views import out_of_range


def check_reduction(reduction, fn):
    """Every loss's reductions: "mean", "sum" or "none"."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def check_ignore_index(ignore_index, fn):
    """A class-index loss's ignore_index: None (every target a class) or an int, returned as
    a plain int (numpy's too), which the kernels take."""
    if ignore_index is None:
        return None
    try:
        if isinstance(ignore_index, bool):
            raise TypeError
        return operator.index(ignore_index)
    except TypeError:
        raise TypeError(f"{fn}: ignore_index must be an int (the target that counts for nothing, "
                        f"-100 by default) or None, got {ignore_index!r}") from None


def _no_legacy(size_average, reduce, fn):
    """PyTorch's deprecated size_average and reduce keep their places in the signatures."""
    if size_average is not None or reduce is not None:
        raise ValueError(f"{fn}: size_average and reduce are deprecated (as in PyTorch); pass "
                         "reduction='mean', 'sum' or 'none' instead")


def _pair(input, target, fn, same_shape):
    """input and target as tensors of one floating dtype on one device. same_shape: a
    target of another shape is a ValueError (PyTorch's binary cross-entropies); otherwise
    they broadcast with a warning, as PyTorch's l1_loss does."""
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError(f"{fn}: expected tensors as input and target, got "
                        f"{type(input).__name__} and {type(target).__name__}")
    if not input.dtype.is_floating_point:
        raise TypeError(f"{fn}: expected a floating-point input, got {input.dtype.name}")
    if target.shape != input.shape:
        if same_shape:
            raise ValueError(f"{fn}: target of shape {target.shape} must have the input's "
                             f"shape {input.shape}")
        warnings.warn(f"{fn}: target size {target.shape} is different from input size "
                      f"{input.shape}; they broadcast, which is likely wrong", stacklevel=3)
        shape = broadcast_shapes(input.shape, target.shape)
        input, target = input.broadcast_to(shape), target.broadcast_to(shape)
    if input.device != target.device:
        raise RuntimeError(f"{fn}: input is on device {input.device!r} and target on "
                           f"{target.device!r}; move one with .to(device)")
    return input, target.to(dtype=input.dtype)


def _rescaling(tensor, name, input, fn, shape=None):
    """weight or pos_weight: None, or a tensor that broadcasts to ``shape`` (the input's)."""
    if tensor is None:
        return None
    shape = shape or input.shape
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}: {name} must be a tensor or None, got {type(tensor).__name__}")
    try:
        fits = broadcast_shapes(tensor.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{fn}: {name} of shape {tensor.shape} does not broadcast to the "
                         f"input's shape {shape}")
    return tensor.to(device=input.device, dtype=input.dtype)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-weight (y log x + (1 - y) log(1 - x)) for probabilities x (in [0, 1], a ValueError
    otherwise) and targets y of x's shape, as PyTorch's F.binary_cross_entropy. Each log is
    clamped to >= -100, as PyTorch does, so x = 0 or 1 gives a finite loss. "mean" is the
    mean over every element (the weight does not change the divisor)."""
    fn = "binary_cross_entropy"
    _no_legacy(size_average, reduce, fn)
    check_reduction(reduction, fn)
    input, target = _pair(input, target, fn, same_shape=True)
    weight = _rescaling(weight, "weight", input, fn)
    if input.numel():                   # outside [0, 1], or NaN (data_checks.py)
        raise_if_any(input.detach().clamp(0, 1) != input.detach(), lambda: ValueError(
            f"{fn}: every element of input must be a probability in [0, 1], got values from "
            f"{input.min().item()} to {input.max().item()}; for logits use binary_cross_entropy_with_logits"))
    losses = -(target * _clamped_log(input) + (1 - target) * _clamped_log(1 - input))
    return reduced(losses if weight is None else losses * weight, reduction)


def _clamped_log(p):
    """max(log p, -100). The argument is first raised to the smallest normal number, so
    p = 0 differentiates to 0 rather than to 0 * (1/0) = nan (PyTorch's own formula gives
    the gradient (x - y) / max(x (1 - x), 1e-12) there)."""
    tiny = 2.2250738585072014e-308 if p.dtype is dtypes.float64 else 1.1754943508222875e-38
    return p.maximum(tiny).log().maximum(-100.0)


def _softplus_neg(x):
    """log(1 + e^-x) = max(-x, 0) + log(1 + e^-|x|), which never overflows. Both terms take
    the branch of x >= 0 together, so at x = 0 the gradient is the true -1/2 (separate
    max and abs would each pick a subgradient there and sum to 0)."""
    positive = x >= 0
    return where(positive, 0.0, -x) + (1 + where(positive, -x, x).exp()).log()


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(x), y) computed from the logits x without forming the
    sigmoid, as PyTorch's F.binary_cross_entropy_with_logits:
    (1 - y) x + (1 + (pos_weight - 1) y) log(1 + e^-x), which without pos_weight is
    max(x, 0) - x y + log(1 + e^-|x|): stable for any x. pos_weight (broadcast against the
    target, one per class along the last dimension) weighs the positive term; weight
    rescales each element's loss."""
    fn = "binary_cross_entropy_with_logits"
    _no_legacy(size_average, reduce, fn)
    check_reduction(reduction, fn)
    input, target = _pair(input, target, fn, same_shape=True)
    weight = _rescaling(weight, "weight", input, fn)
    pos_weight = _rescaling(pos_weight, "pos_weight", input, fn)
    softplus_neg = _softplus_neg(input)
    if pos_weight is None:
        losses = (1 - target) * input + softplus_neg
    else:
        losses = (1 - target) * input + (1 + (pos_weight - 1) * target) * softplus_neg
    return reduced(losses if weight is None else losses * weight, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """|input - target| per element, or its sum or mean, as PyTorch's F.l1_loss (shapes
    that differ broadcast, with a warning)."""
    _no_legacy(size_average, reduce, "l1_loss")
    check_reduction(reduction, "l1_loss")
    input, target = _pair(input, target, "l1_loss", same_shape=False)
    return reduced((input - target).abs(), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Huber-like loss, as PyTorch's F.smooth_l1_loss: with d = |input - target|,
    0.5 d^2 / beta where d < beta, else d - 0.5 beta; beta = 0 is l1_loss. A negative beta
    is a ValueError."""
    fn = "smooth_l1_loss"
    _no_legacy(size_average, reduce, fn)
    check_reduction(reduction, fn)
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not beta >= 0:
        raise ValueError(f"{fn}: beta must be a non-negative number (1.0 by default), got {beta!r}")
    input, target = _pair(input, target, fn, same_shape=False)
    d = (input - target).abs()
    if beta == 0:
        return reduced(d, reduction)
    return reduced(where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """PyTorch's F.huber_loss: with d = |input - target|, 0.5 d^2 where d < delta, else
    delta (d - 0.5 delta); smooth_l1_loss times delta (beta = delta). delta must be > 0."""
    fn = "huber_loss"
    check_reduction(reduction, fn)
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not delta > 0:
        raise ValueError(f"{fn}: delta must be a positive number (1.0 by default), got {delta!r}")
    input, target = _pair(input, target, fn, same_shape=False)
    d = (input - target).abs()
    return reduced(where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta), reduction)


def cross_entropy_probabilities(input, target, weight, reduction, label_smoothing):
    """F.cross_entropy with class probabilities as target (the logits' shape, (N, C, d...)):
    -sum_c weight[c] target[:, c] log_softmax(input)[:, c] per sample, the target first mixed
    with the uniform distribution by label_smoothing; "mean" divides by the number of
    samples (N times d...), as PyTorch."""
    classes = input.shape[1]
    if label_smoothing:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = log_softmax(input, dim=1) * target
    if weight is not None:
        terms = terms * weight.reshape(classes, *[1] * (input.ndim - 2))
    return reduced(-terms.sum(dim=1), reduction)


def cross_entropy_composite(input, target, weight, ignore_index, reduction, label_smoothing, nll_loss):
    """F.cross_entropy's path for class weights, label smoothing or (N, C, d...) logits,
    PyTorch's formula: with logp = log_softmax over dimension 1,

        (1 - s) nll_loss(logp, target, weight, ignore_index) + (s / C) smooth,
        smooth_i = -sum_c weight[c] logp[i, c]  (0 for ignored samples),

    where "mean" divides the nll part and smooth's sum alike by the sum of weight[target]
    over the samples not ignored (their count without weight). ``nll_loss`` is
    nn.functional's. ignore_index None ignores nothing: every target must be a class."""
    c = input.shape[1]
    if ignore_index is None:
        # nll_loss always ignores some index; check the targets here, then -100 is never met
        raise_if_any(outside(target, c), lambda: backend.bad_target(*out_of_range(target, c), c))
        ignore_index = -100
    logp = log_softmax(input, dim=1)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return nll
    shape = (1, c, *([1] * (input.ndim - 2)))
    per_class = logp if weight is None else logp * weight.to(dtype=logp.dtype).reshape(shape)
    kept = (target != ignore_index).to(dtype=logp.dtype)
    smooth = -per_class.sum(1) * kept
    if reduction == "mean":
        if weight is None:
            divisor = kept.sum()
        else:
            picked = target.masked_fill(target == ignore_index, 0).reshape(-1)
            divisor = (weight.to(dtype=logp.dtype)[picked] * kept.reshape(-1)).sum()
        smooth = smooth.sum() / divisor
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)
