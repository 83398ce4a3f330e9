"""PyTorch's other activation functions (F.relu6, F.hardtanh, F.selu, F.mish, F.glu,
F.rrelu, F.gumbel_softmax, ...), each a composite of differentiable tensor operations
(where, clamp, exp, tanh, the softplus and softmax kernels), so every device runs them
and autograd differentiates them. ``inplace=True`` and the trailing-underscore forms
(F.relu_, F.elu_, ...) write the result into the input as inplace.py says.

A piecewise function is written with ``where`` over a branch that is finite everywhere
(the exponential of min(x, 0), not of x), so the unused branch never sends inf * 0 = nan
into the gradient.
"""
import math

from . import dtypes
from . import inplace as in_place
from .channel_dropout import _mask
from .concat import cat
from .elementwise import unary, where
from .factories import rand, uniform
from .softmax import softmax
from .strides import normalize_dim
from .tensor import Tensor

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _number(value, name, fn):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__}")


def _tensor(x, fn):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}: expected a Tensor as input, got {type(x).__name__}")


def _out(x, out, inplace, fn):
    return in_place.into(x, out, fn) if inplace else out


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val]; the gradient 1 strictly inside, 0 outside."""
    _tensor(input, "hardtanh")
    _number(min_val, "min_val", "hardtanh")
    _number(max_val, "max_val", "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _out(input, input.clamp(min_val, max_val), inplace, "hardtanh")


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    """min(max(x, 0), 6)."""
    return _out(input, hardtanh(input, 0.0, 6.0), inplace, "relu6")


def relu_(input):
    _tensor(input, "relu_")
    return in_place.into(input, input.relu(), "relu_")


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6: 0 below -3, 1 above 3, linear between."""
    return _out(input, relu6(input + 3.0) / 6.0, inplace, "hardsigmoid")


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6 (MobileNetV3's)."""
    return _out(input, input * (relu6(input + 3.0) / 6.0), inplace, "hardswish")


def _softplus(x):
    return unary("softplus", x)


def mish(input, inplace=False):
    """x * tanh(softplus(x)) (Misra 2019)."""
    _tensor(input, "mish")
    return _out(input, input * _softplus(input).tanh(), inplace, "mish")


def _expm1_negative(x, scale=1.0):
    """e^(min(x, 0) * scale) - 1: finite for every x (the branch where x <= 0)."""
    return (x.minimum(0.0) * scale).exp() - 1.0


def selu(input, inplace=False):
    """scale * (x where x > 0, else alpha (e^x - 1)), with the constants of Klambauer et al.
    2017 that keep activations at mean 0 and variance 1."""
    _tensor(input, "selu")
    out = where(input > 0, input, _expm1_negative(input) * SELU_ALPHA) * SELU_SCALE
    return _out(input, out, inplace, "selu")


def selu_(input):
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha (e^(x / alpha) - 1) (Barron 2017)."""
    _tensor(input, "celu")
    _number(alpha, "alpha", "celu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu's alpha must not be 0 (x is divided by it)")
    out = where(input > 0, input, _expm1_negative(input, 1.0 / alpha) * alpha)
    return _out(input, out, inplace, "celu")


def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


def softsign(input):
    """x / (1 + |x|)."""
    _tensor(input, "softsign")
    return input / (input.abs() + 1.0)


def _implicit_dim(ndim):
    """PyTorch's legacy softmax dimension when none is given: 0 for 0-, 1- and 3-d inputs,
    else 1."""
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along dim."""
    _tensor(input, "softmin")
    if dtype is not None:
        input = input.to(dtype=dtype)
    return softmax(-input, _implicit_dim(input.ndim) if dim is None else dim)


def logsigmoid(input):
    """log(sigmoid(x)) = -softplus(-x), without the log of a rounded-to-0 sigmoid."""
    _tensor(input, "logsigmoid")
    return -_softplus(-input)


def tanhshrink(input):
    """x - tanh(x)."""
    _tensor(input, "tanhshrink")
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    _tensor(input, "softshrink")
    _number(lambd, "lambd", "softshrink")
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be in range [0, inf) for input dtype "
                           f"{input.dtype.name}, but found {lambd}")
    zero = input * 0.0
    return where(input > lambd, input - lambd, where(input < -lambd, input + lambd, zero))


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    _tensor(input, "hardshrink")
    _number(lambd, "lambd", "hardshrink")
    return where(input.abs() > lambd, input, input * 0.0)


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else value."""
    _tensor(input, "threshold")
    _number(threshold, "threshold", "threshold")
    _number(value, "value", "threshold")
    out = where(input > threshold, input, input * 0.0 + value)
    return _out(input, out, inplace, "threshold")


def threshold_(input, threshold, value):
    return _threshold(input, threshold, value, True)


_threshold = threshold


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the two halves of x along dim (Dauphin et al. 2017)."""
    _tensor(input, "glu")
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = normalize_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    a, b = input.chunk(2, d)
    return a * b.sigmoid()


def leaky_relu_(input, negative_slope=0.01):
    _number(negative_slope, "negative_slope", "leaky_relu_")
    return in_place.into(input, where(input > 0, input, input * negative_slope), "leaky_relu_")


def elu_(input, alpha=1.0):
    _tensor(input, "elu_")
    _number(alpha, "alpha", "elu_")
    return in_place.into(input, where(input > 0, input, _expm1_negative(input) * alpha), "elu_")


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU (Xu et al. 2015): x where x >= 0, else a * x, with a drawn
    uniformly from [lower, upper) per element (the package's generator) in training, and
    the mean (lower + upper) / 2 outside it."""
    _tensor(input, "rrelu")
    _number(lower, "lower", "rrelu")
    _number(upper, "upper", "rrelu")
    if lower > upper:
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound, got "
                           f"lower={lower} and upper={upper}")
    if training:
        slope = uniform(input.shape, lower, upper, dtype=input.dtype, device=input.device)
    else:
        slope = (lower + upper) / 2
    return _out(input, where(input >= 0, input, input * slope), inplace, "rrelu")


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample from the Gumbel-softmax distribution (Jang et al. 2016): softmax((logits +
    g) / tau) with g standard Gumbel noise, -log(-log(u)) for u uniform on (0, 1) from the
    package's generator. ``hard=True`` returns the one-hot of its largest entry in the
    forward pass with the soft sample's gradient (the straight-through estimator)."""
    _tensor(logits, "gumbel_softmax")
    _number(tau, "tau", "gumbel_softmax")
    tiny = 1e-30 if logits.dtype is dtypes.float64 else 1e-37
    u = rand(*logits.shape, dtype=logits.dtype, device=logits.device).maximum(tiny)
    gumbels = -(-u.log()).log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    d = normalize_dim(dim, max(logits.ndim, 1))
    index = y_soft.argmax(dim=d, keepdim=True)
    y_hard = (y_soft * 0.0).scatter(d, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha / size * sum of x^2 over the ``size`` neighbouring channels)^beta
    (AlexNet's), the channels (dimension 1) padded with zeros, size // 2 before and
    (size - 1) // 2 after, as PyTorch. The window's sum is ``size`` shifted slices added:
    the cost of PyTorch's average pool over the same windows."""
    _tensor(input, "local_response_norm")
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"local_response_norm: size must be a positive int, got {size!r}")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    zeros = input[:, :1] * 0.0
    squares = input * input
    pieces = [zeros] * (size // 2) + [squares] + [zeros] * ((size - 1) // 2)
    padded = cat(pieces, dim=1) if len(pieces) > 1 else squares
    total = padded.narrow(1, 0, c)
    for i in range(1, size):
        total = total + padded.narrow(1, i, c)
    return input / ((total * (alpha / size) + k) ** beta)


ALPHA_DROPOUT_SATURATION = 1.7580993408473766     # -SELU's scale * alpha: SELU's value at -inf


def _alpha_dropout(input, p, training, inplace, feature, fn):
    """Dropout that keeps SELU's mean 0 and variance 1 (Klambauer et al. 2017): a dropped
    element is set to SELU's saturation value -alpha', and the result is scaled by a and
    shifted by b so that mean and variance are kept: kept x -> a x + alpha' a p, dropped ->
    -alpha' a (1 - p), a = 1 / sqrt((alpha'^2 p + 1)(1 - p)), as PyTorch. ``feature``: one
    decision per (sample, channel), broadcast over the rest."""
    _tensor(input, fn)
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        return _out(input, input * 0.0, inplace, fn)
    shape = input.shape[:2] + (1,) * (input.ndim - 2) if feature else input.shape
    keep = _mask(shape, p, input) * (1 - p)                # 1 kept, 0 dropped
    s = ALPHA_DROPOUT_SATURATION
    a = 1.0 / math.sqrt((s * s * p + 1) * (1 - p))
    out = input * (keep * a) + (keep - 1.0) * (s * a) + s * a * p
    return _out(input, out, inplace, fn)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, False, "alpha_dropout")


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, True, "feature_alpha_dropout")


__all__ = ["hardtanh", "hardtanh_", "relu6", "relu_", "hardsigmoid", "hardswish", "mish", "selu", "selu_",
           "celu", "celu_", "softsign", "softmin", "logsigmoid", "tanhshrink", "softshrink", "hardshrink",
           "threshold", "threshold_", "glu", "leaky_relu_", "elu_", "rrelu", "rrelu_", "gumbel_softmax",
           "local_response_norm", "alpha_dropout", "feature_alpha_dropout"]
