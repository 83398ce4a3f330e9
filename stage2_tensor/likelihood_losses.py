"""Divergence and likelihood losses, PyTorch's F.kl_div, F.poisson_nll_loss and
F.gaussian_nll_loss: composites of differentiable tensor operations, so every device runs
them and autograd differentiates them; the formulas and reductions are PyTorch's.
"""
import math
import warnings

from .broadcast import broadcast_shapes
from .composites import reduced
from .elementwise import where
from .grad_mode import no_grad
from .loss_functions import _no_legacy
from .tensor import Tensor


def _tensors(fn, *tensors):
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: expected Tensors, got {type(t).__name__}")


def _number(value, name, fn):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__}")


def _xlogy(x, y):
    """x log y, 0 where x is 0 (the 0 log 0 = 0 of an entropy), with a finite gradient."""
    positive = x > 0
    return where(positive, x * where(positive, y, y * 0.0 + 1.0).log(), x * 0.0)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """The Kullback-Leibler divergence of the distribution ``input`` (log-probabilities)
    from ``target``: target (log target - input) per element (0 where the target is 0);
    with ``log_target`` the target holds log-probabilities too, e^t (t - input).
    "batchmean" divides the sum by the batch size (the first dimension), the divergence
    per sample; "mean" divides by every element, with PyTorch's warning."""
    fn = "kl_div"
    _no_legacy(size_average, reduce, fn)
    _tensors(fn, input, target)
    if reduction not in ("mean", "sum", "none", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    try:
        broadcast_shapes(input.shape, target.shape)
    except ValueError:
        raise RuntimeError(f"kl_div: input of shape {input.shape} and target of shape {target.shape} do not "
                           f"broadcast") from None
    if log_target:
        losses = target.exp() * (target - input)
    else:
        losses = _xlogy(target, target) - target * input
    if reduction == "batchmean":
        return losses.sum() / input.shape[0] if input.ndim else losses.sum()
    return reduced(losses, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """The negative log likelihood of counts ``target`` under a Poisson distribution of
    rate e^input (``log_input``, the default: e^x - y x) or of rate input (x - y log(x +
    eps)). ``full`` adds Stirling's approximation of log(y!), y log y - y + log(2 pi y) / 2,
    where y > 1."""
    fn = "poisson_nll_loss"
    _no_legacy(size_average, reduce, fn)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _tensors(fn, input, target)
    _number(eps, "eps", fn)
    if log_input:
        losses = input.exp() - target * input
    else:
        losses = input - target * (input + eps).log()
    if full:
        big = target > 1
        y = where(big, target, target * 0.0 + 1.0)
        stirling = y * y.log() - y + (y * (2 * math.pi)).log() * 0.5
        losses = losses + where(big, stirling, stirling * 0.0)
    return reduced(losses, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """The negative log likelihood of ``target`` under normal distributions of mean
    ``input`` and variance ``var``: (log var + (x - y)^2 / var) / 2 (+ log(2 pi) / 2 with
    ``full``). var has the input's shape, or one dimension of size 1 where the input's
    differs (shared), or the input's shape without its last dimension, or is a number. As
    PyTorch, var is held at least eps for the loss, while its gradient is taken as if it
    were not (the clamp made outside autograd)."""
    fn = "gaussian_nll_loss"
    _tensors(fn, input, target)
    _number(eps, "eps", fn)
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = input.detach() * 0.0 + float(var)
    elif not isinstance(var, Tensor):
        raise TypeError(f"{fn}: var must be a Tensor or a number, got {type(var).__name__}")
    elif var.numel() and var.min().item() < 0:
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(reduction + " is not valid")
    with no_grad():
        lift = var.clamp(min=eps) - var
    var = var + lift
    losses = ((input - target) ** 2 / var + var.log()) * 0.5
    if full:
        losses = losses + 0.5 * math.log(2 * math.pi)
    return reduced(losses, reduction)
