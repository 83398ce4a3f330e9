"""In-place initialisations, PyTorch's ``torch.nn.init``: ``init.kaiming_uniform_(w)``.

Each fills its tensor in place under no_grad (so a Parameter stays a leaf and the fill is
not recorded) and returns it. The random ones draw from the package's generator through
the random factories (factories.py's uniform and normal, which the layers draw their
initial weights from too), so ``stage2_tensor.manual_seed(n)`` makes them repeat, and
inside ``factories.skip_init`` they give zeros as the layers do. PyTorch's ``generator``
argument is not offered: there is one generator. The scale rules:

* Xavier/Glorot: variance 2 / (fan_in + fan_out), keeping both the forward activations'
  and the backward gradients' variance about constant through linear or tanh layers;
* Kaiming/He: variance gain^2 / fan (fan_in by default: the forward pass), gain from
  ``calculate_gain`` (sqrt 2 for ReLU, which zeroes half its inputs).

``nn.Linear``'s own initialisation, uniform on +-1/sqrt(in_features), is
``kaiming_uniform_(w, a=math.sqrt(5))``, as in PyTorch.
"""
import math
import warnings
from statistics import NormalDist

from ..factories import _random_tensor, generator, normal, uniform
from ..grad_mode import no_grad
from ..strides import numel
from ..tensor import Tensor

_STANDARD_NORMAL = NormalDist()
_LINEAR_GAIN = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                "conv_transpose2d", "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity, param=None):
    """The factor by which a nonlinearity's output standard deviation should be scaled up
    to keep activations' variance, PyTorch's values: 1 for linear layers and sigmoid, 5/3
    for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu (slope ``param``,
    0.01 by default), 3/4 for selu."""
    if nonlinearity in _LINEAR_GAIN:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; expected one "
                     f"of {', '.join(_LINEAR_GAIN)}, tanh, relu, leaky_relu, selu")


def _checked(tensor, fn, random=True):
    """tensor, once known to be a tensor that ``fn`` can fill; False when it has no elements
    (nothing to do, with PyTorch's warning)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"init.{fn}: expected a Tensor, got {type(tensor).__name__}")
    if random and not tensor.dtype.is_floating_point:
        raise TypeError(f"init.{fn}: expected a floating-point tensor, got dtype "
                        f"{tensor.dtype.name}")
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return False
    return True


def _fill(tensor, values):
    """Copy ``values`` into ``tensor`` in place, unrecorded; return tensor."""
    with no_grad():
        tensor.copy_(values)
    return tensor


def _fans(tensor, fn):
    """(fan_in, fan_out) of a weight (out_features, in_features, *kernel), as PyTorch: the
    inputs and outputs each output and input element is connected to."""
    if tensor.ndim < 2:
        raise ValueError(f"init.{fn}: fan in and fan out can not be computed for a tensor "
                         f"with fewer than 2 dimensions, got shape {tensor.shape}")
    receptive = numel(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor, mode, fn):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"init.{fn}: mode {mode!r} not supported, please use one of "
                         "'fan_in', 'fan_out'")
    fan_in, fan_out = _fans(tensor, fn)
    return fan_in if mode == "fan_in" else fan_out


def constant_(tensor, val):
    """Fill with ``val``."""
    if _checked(tensor, "constant_", random=False):
        with no_grad():
            tensor.fill_(val)
    return tensor


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def uniform_(tensor, a=0.0, b=1.0):
    """Fill with draws from the uniform distribution on [a, b)."""
    if a > b:
        raise ValueError(f"init.uniform_: expects a <= b, got a={a} and b={b}")
    if not _checked(tensor, "uniform_"):
        return tensor
    return _fill(tensor, uniform(tensor.shape, a, b, dtype=tensor.dtype, device=tensor.device))


def normal_(tensor, mean=0.0, std=1.0):
    """Fill with draws from N(mean, std^2)."""
    if std < 0:
        raise ValueError(f"init.normal_: expects std >= 0, got {std}")
    if not _checked(tensor, "normal_"):
        return tensor
    return _fill(tensor, normal(tensor.shape, mean, std, dtype=tensor.dtype, device=tensor.device))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """Fill with draws from N(mean, std^2) conditioned on [a, b] (bounds in the values'
    units, not in stds, as PyTorch): a uniform draw between the normal distribution
    function's values at a and b, mapped back through its inverse (PyTorch's method)."""
    if std <= 0 or not a < b:
        raise ValueError(f"init.trunc_normal_: expects std > 0 and a < b, got std={std}, "
                         f"a={a}, b={b}")
    if not _checked(tensor, "trunc_normal_"):
        return tensor
    low = _STANDARD_NORMAL.cdf((a - mean) / std)
    high = _STANDARD_NORMAL.cdf((b - mean) / std)
    if not high > low:
        raise ValueError(f"init.trunc_normal_: [a, b] = [{a}, {b}] holds no probability "
                         f"under N({mean}, {std}^2) in floating point; move it nearer the mean")
    rng = generator()

    def draw():
        # inv_cdf needs a point strictly inside (0, 1); the clamp keeps rounding in [a, b]
        u = min(max(rng.uniform(low, high), 1e-300), 1 - 2 ** -53)
        return min(max(mean + std * _STANDARD_NORMAL.inv_cdf(u), a), b)

    return _fill(tensor, _random_tensor("trunc_normal_", tensor.shape, draw, tensor.dtype, False, tensor.device))


def xavier_uniform_(tensor, gain=1.0):
    """Uniform on +-gain * sqrt(6 / (fan_in + fan_out)): Glorot and Bengio's variance
    gain^2 * 2 / (fan_in + fan_out)."""
    if not _checked(tensor, "xavier_uniform_"):
        return tensor
    fan_in, fan_out = _fans(tensor, "xavier_uniform_")
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor, gain=1.0):
    """N(0, gain^2 * 2 / (fan_in + fan_out))."""
    if not _checked(tensor, "xavier_normal_"):
        return tensor
    fan_in, fan_out = _fans(tensor, "xavier_normal_")
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """Uniform on +-sqrt(3) * gain / sqrt(fan): He et al.'s variance gain^2 / fan, gain
    from calculate_gain(nonlinearity, a) (``a``: leaky_relu's negative slope; PyTorch's
    default nonlinearity "leaky_relu" with a = 0 is ReLU's sqrt 2)."""
    if not _checked(tensor, "kaiming_uniform_"):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode, "kaiming_uniform_"))
    return uniform_(tensor, -math.sqrt(3.0) * std, math.sqrt(3.0) * std)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """N(0, gain^2 / fan), gain and fan as for kaiming_uniform_."""
    if not _checked(tensor, "kaiming_normal_"):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode, "kaiming_normal_"))
    return normal_(tensor, 0.0, std)


__all__ = ["calculate_gain", "constant_", "zeros_", "ones_", "uniform_", "normal_",
           "trunc_normal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_"]
