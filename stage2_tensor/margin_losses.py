"""Margin and ranking losses, PyTorch's F.margin_ranking_loss, F.hinge_embedding_loss,
F.cosine_embedding_loss, F.triplet_margin_loss, F.triplet_margin_with_distance_loss,
F.soft_margin_loss, F.multilabel_soft_margin_loss, F.multi_margin_loss and
F.multilabel_margin_loss. Each is a composite of differentiable tensor operations (where,
clamp, gathers, sums), so every device runs it and autograd differentiates it; the
formulas and reductions are PyTorch's, written in each docstring.
"""
from . import dtypes
from .activation_functions import logsigmoid
from .broadcast import broadcast_shapes
from .composites import reduced
from .data_checks import outside, raise_if_any
from .distances import pairwise_distance
from .elementwise import unary, where
from .factories import arange
from .loss_functions import _no_legacy, check_reduction
from .tensor import Tensor


def _start(fn, size_average, reduce, reduction, *tensors):
    _no_legacy(size_average, reduce, fn)
    check_reduction(reduction, fn)
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: expected Tensors, got {type(t).__name__}")


def _number(value, name, fn):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__}")


def _fits(fn, *tensors):
    """The tensors broadcast to one shape (a RuntimeError naming them otherwise)."""
    try:
        return broadcast_shapes(*(t.shape for t in tensors))
    except ValueError:
        raise RuntimeError(f"{fn}: the shapes {', '.join(str(t.shape) for t in tensors)} do not "
                           f"broadcast") from None


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -y (x1 - x2) + margin): y = 1 asks x1 to rank above x2 by the margin, y = -1
    below. The three tensors have one number of dimensions (and broadcast)."""
    fn = "margin_ranking_loss"
    _start(fn, size_average, reduce, reduction, input1, input2, target)
    _number(margin, "margin", fn)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got "
                           f"sizes: input1: {input1.shape}, input2: {input2.shape}, target: {target.shape}")
    _fits(fn, input1, input2, target)
    return reduced((-target * (input1 - input2) + margin).clamp(min=0.0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x where y = 1, max(0, margin - x) where y = -1 (x a distance: small for similar
    pairs, at least the margin for dissimilar ones), as PyTorch: the first term counts
    wherever y != -1, the second wherever y != 1."""
    fn = "hinge_embedding_loss"
    _start(fn, size_average, reduce, reduction, input, target)
    _number(margin, "margin", fn)
    _fits(fn, input, target)
    zero = input * 0.0
    losses = where(target != 1, (margin - input).clamp(min=0.0), zero) + where(target != -1, input, zero)
    return reduced(losses, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1, the cosine
    along the last dimension of (N, D) or (D,) inputs with 1e-12 added to each squared
    norm, as PyTorch."""
    fn = "cosine_embedding_loss"
    _start(fn, size_average, reduce, reduction, input1, input2, target)
    _number(margin, "margin", fn)
    if input1.ndim != input2.ndim or input1.ndim not in (1, 2) or target.ndim != input1.ndim - 1:
        raise RuntimeError(f"cosine_embedding_loss: expected inputs (N, D) with target (N,) or (D,) with "
                           f"target (), got {input1.shape}, {input2.shape} and target {target.shape}")
    _fits(fn, input1, input2)
    _fits(fn, input1.sum(-1), target)
    eps = 1e-12
    dot = (input1 * input2).sum(-1)
    cos = dot / (((input1 * input1).sum(-1) + eps) * ((input2 * input2).sum(-1) + eps)).sqrt()
    zero = cos * 0.0
    losses = where(target == 1, 1.0 - cos, zero) + where(target == -1, (cos - margin).clamp(min=0.0), zero)
    return reduced(losses, reduction)


def _triplet_dims(anchor, positive, negative):
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same "
                           f"number of dimensions, but got: anchor {anchor.ndim}D, positive "
                           f"{positive.ndim}D, and negative {negative.ndim}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(a, p) - d(a, n)) with d the pairwise p-norm distance (eps added to
    the difference); ``swap`` takes d(a, n) as min(d(a, n), d(p, n)) (Balntas et al. 2016)."""
    fn = "triplet_margin_loss"
    _start(fn, size_average, reduce, reduction, anchor, positive, negative)
    _number(margin, "margin", fn)
    _triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return reduced((d_pos - d_neg + margin).clamp(min=0.0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """triplet_margin_loss with any distance (a function of two tensors; pairwise_distance
    by default); the margin must be positive."""
    fn = "triplet_margin_with_distance_loss"
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _start(fn, None, None, reduction, anchor, positive, negative)
    _number(margin, "margin", fn)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _triplet_dims(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return reduced((d_pos - d_neg + margin).clamp(min=0.0), reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + e^(-y x)), the logistic loss of targets y in {1, -1} (softplus(-y x))."""
    fn = "soft_margin_loss"
    _start(fn, size_average, reduce, reduction, input, target)
    _fits(fn, input, target)
    return reduced(unary("softplus", -target * input), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log sigmoid(x) + (1 - y) log sigmoid(-x)), times weight (per class), averaged
    over the classes (the last dimension), then reduced over the samples."""
    fn = "multilabel_soft_margin_loss"
    _start(fn, size_average, reduce, reduction, input, target)
    _fits(fn, input, target)
    losses = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        if not isinstance(weight, Tensor):
            raise TypeError(f"{fn}: weight must be a Tensor or None, got {type(weight).__name__}")
        _fits(fn, losses, weight)
        losses = losses * weight
    losses = losses.sum(-1) / input.shape[-1] if input.ndim else losses
    return reduced(losses, reduction)


def _class_targets(input, target, fn, dim):
    """(N, C) input with int64 target (N,) (or (C,) with ()): as 2-d rows and 1-d targets."""
    if target.dtype not in (dtypes.int64, dtypes.int32):
        raise TypeError(f"{fn}: expected class indices (an int64 tensor) as target, got {target.dtype.name}")
    if input.ndim not in (1, 2) or target.ndim != dim - (input.ndim == 1) or (
            input.ndim == 2 and target.shape[0] != input.shape[0]) or (dim == 2 and target.shape[-1] != input.shape[-1]):
        want = "(N,)" if dim == 1 else "(N, C)"
        raise RuntimeError(f"{fn}: expected input (N, C) with target {want} (or one sample), got input "
                           f"{input.shape} and target {target.shape}")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """The multi-class hinge loss: for a sample of class y, the sum over the other classes
    i of max(0, margin - x[y] + x[i])^p, times weight[y], divided by the number of classes
    C. p is 1 or 2."""
    fn = "multi_margin_loss"
    _start(fn, size_average, reduce, reduction, input, target)
    if p not in (1, 2) or isinstance(p, bool):
        raise ValueError("only p == 1 and p == 2 supported")
    _number(margin, "margin", fn)
    _class_targets(input, target, fn, 1)
    x, y = (input.unsqueeze(0), target.reshape(1)) if input.ndim == 1 else (input, target)
    c = x.shape[1]
    y = y.to(device=x.device, dtype=dtypes.int64)
    try:                                # gather checks the targets (data_checks.py)
        picked = x.gather(1, y.unsqueeze(1))                           # (N, 1): x[y]
    except IndexError:
        raise RuntimeError(f"{fn}: target out of range: classes are 0 to {c - 1}") from None
    hinge = (x - picked + margin).clamp(min=0.0)
    hinge = hinge * hinge if p == 2 else hinge
    others = (arange(c, device=x.device) != y.unsqueeze(1)).to(dtype=x.dtype)
    if weight is not None:
        if not isinstance(weight, Tensor) or weight.shape != (c,):
            raise ValueError(f"{fn}: weight must be a tensor of shape ({c},), got "
                             f"{getattr(weight, 'shape', type(weight).__name__)}")
        others = others * weight.to(device=x.device, dtype=x.dtype)[y].unsqueeze(1)
    losses = (hinge * others).sum(1) / c
    return reduced(losses.reshape(()) if input.ndim == 1 else losses, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss: a sample's target lists its classes, the list ended by
    the first -1 (or the row's end); the loss is the sum over its classes j and the classes
    i not listed of max(0, 1 - (x[j] - x[i])), divided by the number of classes C. The
    (N, C, C) comparisons are PyTorch's cost."""
    fn = "multilabel_margin_loss"
    _start(fn, size_average, reduce, reduction, input, target)
    _class_targets(input, target, fn, 2)
    x, y = (input.unsqueeze(0), target.unsqueeze(0)) if input.ndim == 1 else (input, target)
    c = x.shape[1]
    y = y.to(device=x.device, dtype=dtypes.int64)
    if y.numel():                       # -1 to c - 1, checked by a kernel (data_checks.py)
        raise_if_any(outside(y + 1, c + 1), lambda: RuntimeError(
            f"{fn}: argument #2 'target' is out of range: classes are 0 to {c - 1}, and -1 ends a list"))
    listed = (y != -1).to(dtype=dtypes.int64).cumprod(1).to(dtype=x.dtype)       # (N, C): before the first -1
    classes = y.clamp(min=0)
    hits = (classes.unsqueeze(-1) == arange(c, device=x.device)).to(dtype=x.dtype) * listed.unsqueeze(-1)
    is_target = hits.amax(1) if c else hits.sum(1)                            # (N, C): class i listed
    picked = x.gather(1, classes)                                            # (N, C): x[j]
    hinge = (1.0 - picked.unsqueeze(-1) + x.unsqueeze(1)).clamp(min=0.0)     # (N, j, i)
    losses = (hinge * listed.unsqueeze(-1) * (1.0 - is_target).unsqueeze(1)).sum((1, 2)) / c
    return reduced(losses.reshape(()) if input.ndim == 1 else losses, reduction)
