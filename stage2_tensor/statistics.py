"""Spread and size: ``var`` and ``std`` (with PyTorch's Bessel ``correction``), ``norm``.
Each is written with differentiable operations (means, sums, powers, where), so autograd
differentiates them with no code of their own."""
import math

from .elementwise import where
from .reduce import Extremum, kept_shape, normalize_dims
from .strides import numel


def _floating(op, x):
    if not x.dtype.is_floating_point:
        raise TypeError(f"{op}(): only supports floating point tensors, got {x.dtype}")


def _correction(op, unbiased, correction):
    """PyTorch's two spellings: unbiased (True: divide by n - 1, False: by n) or correction
    (divide by n - correction); the default is correction 1."""
    if unbiased is not None and correction is not None:
        raise ValueError(f"{op}(): give unbiased or correction, not both")
    if correction is None:
        return 1 if unbiased is None or unbiased else 0
    if isinstance(correction, bool) or not isinstance(correction, (int, float)):
        raise TypeError(f"{op}(): correction must be a number, got {correction!r}")
    return correction


def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The mean squared deviation from the mean over ``dim`` (None: every element), its sum
    divided by n - correction: with the default correction 1 an unbiased estimate (Bessel's
    correction), as PyTorch. n <= correction divides by 0 (inf, or nan for 0 / 0), as PyTorch.
    ``x.var(False)`` means unbiased=False, PyTorch's older signature."""
    _floating("var", x)
    if isinstance(dim, bool):                  # var(unbiased): the older overload
        dim, unbiased = None, dim
    c = _correction("var", unbiased, correction)
    dims = normalize_dims(x, dim)
    n = numel([x.shape[d] for d in dims])
    deviation = x - x.mean(dim=dims, keepdim=True)
    return (deviation * deviation).sum(dim=dims, keepdim=keepdim) / float(max(0, n - c))


def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The square root of var, with the same arguments."""
    _floating("std", x)
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return var(x, dim, unbiased, keepdim, correction=correction).sqrt()


def norm(x, p="fro", dim=None, keepdim=False):
    """The vector p-norm over ``dim`` (None: every element), (sum |x|^p)^(1/p): p = 2 or
    "fro" (Frobenius: the 2-norm of all the elements), 1, inf (max |x|), -inf (min |x|),
    or another positive number."""
    _floating("norm", x)
    if p == "fro":
        p = 2
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not (p > 0 or p == -math.inf):
        raise ValueError(f"norm(): p must be 'fro', inf, -inf or a number > 0, got {p!r}")
    dims = normalize_dims(x, dim)
    if p == math.inf or p == -math.inf:
        return Extremum.apply(x.abs(), dims, keepdim, "max" if p > 0 else "min")
    if p == 1:
        return x.abs().sum(dim=dims, keepdim=keepdim)
    if p == 2:
        total = (x * x).sum(dim=dims, keepdim=keepdim)
        # sqrt's gradient at 0 is infinite; PyTorch gives the norm of zeros the gradient 0
        # instead (a subgradient): sqrt reads 1 there, and where passes it no gradient
        zero = total == 0
        return where(zero, 0.0, where(zero, 1.0, total).sqrt())
    return (x.abs() ** p).sum(dim=dims, keepdim=keepdim) ** (1.0 / p)


def logsumexp(x, dim, keepdim=False):
    """log(sum(exp(x))) over ``dim``, computed as m + log(sum(exp(x - m))) with m the maximum
    (detached: the result does not depend on it), so no exp overflows; an all -inf slice
    gives -inf, as PyTorch."""
    _floating("logsumexp", x)
    dims = normalize_dims(x, dim)
    m = Extremum.apply(x, dims, True, "max").detach()
    m = where(m.abs() == math.inf, 0.0, m)               # -inf rows: exp(-inf - 0) = 0, log 0 = -inf
    return (x - m).exp().sum(dim=dims, keepdim=keepdim).log() + m.reshape(*kept_shape(x.shape, dims, keepdim))
