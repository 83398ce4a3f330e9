"""Normalization as PyTorch's torch.nn.functional has it: batch_norm, group_norm,
instance_norm and rms_norm (layer_norm, fused over the last dimension, lives in
nn/functional.py). Each is a composite of differentiable tensor operations (means, a
square root, products), so every device runs it and autograd differentiates it with no
kernel of its own (backend.py, "Primitives and composites").

They differ only in which elements share one mean and variance: batch_norm every
element of a channel across the batch, instance_norm every element of a channel within
one sample, group_norm the channels of one group within one sample. The variance that
normalizes is the biased one (divide by n); the running variance a training step stores
is the unbiased one (divide by n - 1), as in PyTorch.

batch_norm in training mode, the convolutional networks' normalization, is also a pair of
optional backend kernels (backend.py: batch_norm, batch_norm_backward; the native
devices' csrc/batchnorm.c): one pass over each channel for its statistics and one
multiply-add per element, and the gradient's two sums per channel, instead of about 10
tensor operations forward and 20 backward. ``native`` is where the choice is made; the
composite stays as the path of a device without them, and as the naive version.
instance_norm and group_norm, whose statistics are per sample (and group of channels),
are the same computation on the input viewed as (1, N * groups, rest) and run the same
kernels (``_per_sample``). In evaluation mode batch_norm is one scale and one shift per channel, worked out on the C
values: two operations over the input.
"""
from . import backend as backends
from .gradient_function import GradientFunction
from .grad_mode import no_grad
from .tensor import Tensor


def _check_eps(eps, fn):
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps >= 0:
        raise ValueError(f"{fn}: eps must be a non-negative number (1e-5 by default), got {eps!r}")


def _check_momentum(momentum, fn):
    if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
        raise ValueError(f"{fn}: momentum must be a number in [0, 1] (the weight of the new "
                         f"statistics in the running ones), got {momentum!r}")


def _check_input(input, fn, min_ndim=2):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: expected a tensor as input, got {type(input).__name__}")
    if input.ndim < min_ndim:
        raise ValueError(f"{fn}: expected an input of shape (N, C, ...) with at least {min_ndim} "
                         f"dimensions, got shape {input.shape}")
    if not input.dtype.is_floating_point:
        raise TypeError(f"{fn}: expected a floating-point input, got {input.dtype.name}")


def _check_per_channel(tensor, name, c, fn):
    """weight, bias, running_mean, running_var: None or one value per channel."""
    if tensor is not None and (not isinstance(tensor, Tensor) or tensor.shape != (c,)):
        raise ValueError(f"{fn}: {name} must be None or a tensor of shape ({c},), one value per "
                         f"channel, got {getattr(tensor, 'shape', type(tensor).__name__)}")


def _check_running(fn, input, min_ndim, eps, momentum, running_mean, running_var, weight, bias):
    """The checks batch_norm and instance_norm share; the channel count C."""
    _check_input(input, fn, min_ndim=min_ndim)
    _check_eps(eps, fn)
    _check_momentum(momentum, fn)
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_per_channel(t, name, c, fn)
    return c


def _per_channel(t, ndim):
    """A (C,) tensor reshaped (C, 1, ..., 1) so it broadcasts along dimension 1 of an
    (N, C, ...) input of ndim dimensions (plain broadcasting would align it with the last)."""
    return t.reshape(t.shape[0], *([1] * (ndim - 2)))


def _affine(out, weight, bias):
    """out * weight + bias per channel (dimension 1), each optional."""
    if weight is not None:
        out = out * _per_channel(weight, out.ndim)
    return out if bias is None else out + _per_channel(bias, out.ndim)


def _standardize(x, dims, eps):
    """(x - mean) / sqrt(var + eps) over ``dims``, with var the biased variance; also the
    mean and variance (keepdim), which the running statistics are made of."""
    mean = x.mean(dim=dims, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dim=dims, keepdim=True)
    return centered / (var + eps).sqrt(), mean, var


def _per_sample(x, groups, eps):
    """x (N, C, ...) standardized per sample and group of C / groups consecutive channels
    (instance_norm: groups = C; group_norm), with the (N * groups) means and variances.
    That is batch normalization of x viewed as (1, N * groups, rest): the batch_norm
    kernels run it where the device has them (``native``), else the composite."""
    grouped = x.reshape(1, x.shape[0] * groups, -1)
    if grouped.shape[2] > 0 and native(grouped, None, None):
        stats = []
        out = BatchNorm.apply(grouped, None, None, eps, stats)
        mean, var = stats
    else:
        out, mean, var = _standardize(grouped, (0, 2), eps)
    return out.reshape(x.shape), mean.reshape(-1), var.reshape(-1)


def _update_running(running, value, momentum):
    """running <- (1 - momentum) running + momentum value, in place and outside autograd
    (the statistics are state, not part of the graph), converted to running's dtype."""
    with no_grad():
        running.copy_(running * (1 - momentum) + value.detach().to(dtype=running.dtype,
                                                                   device=running.device) * momentum)


def native(x, weight, bias):
    """Whether batch_norm runs the device's fused kernels (BatchNorm) on x: a float x (a
    half one through float32, as backends.launch does), the device has both kernels, and
    weight and bias (each optional) are of x's dtype and device (else the composite, whose
    broadcasting and type promotion handle them). The one place where the choice is made."""
    be = backends.get(x.device)
    return (x.dtype.is_floating_point and be.has("batch_norm") and be.has("batch_norm_backward")
            and all(p is None or (p.dtype is x.dtype and p.device == x.device) for p in (weight, bias)))


class BatchNorm(GradientFunction):
    """Batch normalization in training mode as two kernel calls: the device's
    ``batch_norm`` normalizes each channel of x (N, C, ...) with its mean and biased
    variance over every dimension but 1, and keeps them (C values each, also what the
    running statistics are updated with: put in the list ``stats``);
    ``batch_norm_backward`` turns them and the upstream gradient g into, per channel with
    xhat = (x - mean) * rstd and means over the channel's N * S elements,

        dx = weight * rstd * (g - mean(g) - xhat * mean(g * xhat)),
        dweight = sum g * xhat,  dbias = sum g.

    weight and bias may each be None (then they are not inputs)."""

    def forward(self, x, weight, bias, eps, stats):
        self.has_weight, self.has_bias, self.eps = weight is not None, bias is not None, eps
        c, dtype = x.shape[1], x.dtype
        out, mean, var = backends.launch(
            x.device, "batch_norm", x.as_view(), None if weight is None else weight.as_view(),
            None if bias is None else bias.as_view(), eps, dtype, out_dtype=dtype)
        mean, var = (Tensor.from_buffer(b, (c,), dtype, x.device) for b in (mean, var))
        stats.extend((mean, var))
        self.save_for_backward(x, mean, var, *([weight] if self.has_weight else []))
        return Tensor.from_buffer(out, x.shape, dtype, x.device)

    def backward(self, grad):
        x, mean, var, *weight = self.saved_tensors
        weight = weight[0] if weight else None
        dx, dweight, dbias = backends.launch(
            x.device, "batch_norm_backward", grad.as_view(), x.as_view(), mean.as_view(), var.as_view(),
            None if weight is None else weight.as_view(), self.eps, x.dtype, out_dtype=x.dtype)
        c = (x.shape[1],)
        grads = [Tensor.from_buffer(dx, x.shape, x.dtype, x.device)]
        if self.has_weight:
            grads.append(Tensor.from_buffer(dweight, c, x.dtype, x.device))
        if self.has_bias:
            grads.append(Tensor.from_buffer(dbias, c, x.dtype, x.device))
        return tuple(grads)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Batch normalization of an (N, C, ...) input, PyTorch's F.batch_norm: every channel
    normalized with one mean and variance, then scaled by weight and shifted by bias.

    training=True: the statistics are the batch's, over every dimension but 1 (biased
    variance); running_mean and running_var, where given, are updated in place,
    r <- (1 - momentum) r + momentum s, with the UNBIASED variance (n / (n - 1) times the
    biased one), as PyTorch does. training=False: the running statistics normalize, and
    must be given."""
    c = _check_running("batch_norm", input, 2, eps, momentum, running_mean, running_var, weight, bias)
    dims = (0, *range(2, input.ndim))
    if not training:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: training=False normalizes with running_mean and "
                             "running_var, so both must be given (or pass training=True)")
        # (x - mean) / sqrt(var + eps) * weight + bias = x * scale + shift, the scale and
        # shift worked out on the C values: two operations over the input, not four
        scale = 1 / (running_var + eps).sqrt()
        if weight is not None:
            scale = scale * weight
        shift = -running_mean * scale
        if bias is not None:
            shift = shift + bias
        return input * _per_channel(scale, input.ndim) + _per_channel(shift, input.ndim)
    n = input.numel() // c if c else 0
    if n <= 1:
        raise ValueError(f"batch_norm: expected more than 1 value per channel when training, "
                         f"got input of shape {input.shape}")
    if native(input, weight, bias):
        stats = []
        out = BatchNorm.apply(input, weight, bias, eps, stats)
        mean, var = stats
    else:
        out, mean, var = _standardize(input, dims, eps)
        out = _affine(out, weight, bias)
    if running_mean is not None:
        _update_running(running_mean, mean.reshape(c), momentum)
    if running_var is not None:
        _update_running(running_var, var.reshape(c) * (n / (n - 1)), momentum)
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Instance normalization of an (N, C, ...) input, PyTorch's F.instance_norm: each
    channel of each sample normalized with its own mean and (biased) variance over the
    dimensions after C, then weight and bias per channel. With use_input_stats and running
    statistics given, these are updated with the batch average of the instances' means and
    unbiased variances, as PyTorch does; use_input_stats=False normalizes with the running
    statistics instead (InstanceNorm in eval mode with track_running_stats)."""
    c = _check_running("instance_norm", input, 3, eps, momentum, running_mean, running_var, weight, bias)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise ValueError("instance_norm: use_input_stats=False normalizes with running_mean "
                             "and running_var, so both must be given")
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    n = input.numel() // (input.shape[0] * c) if input.shape[0] * c else 0
    if n <= 1:
        raise ValueError(f"instance_norm: expected more than 1 spatial element per channel "
                         f"when using input statistics, got input of shape {input.shape}")
    out, mean, var = _per_sample(input, input.shape[1], eps)
    if running_mean is not None:
        _update_running(running_mean, mean.reshape(-1, c).mean(0), momentum)
    if running_var is not None:
        _update_running(running_var, var.reshape(-1, c).mean(0) * (n / (n - 1)), momentum)
    return _affine(out, weight, bias)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization of an (N, C, ...) input, PyTorch's F.group_norm: the C channels
    split into num_groups groups of C / num_groups consecutive channels, each group of each
    sample normalized with its own mean and biased variance; then weight and bias per
    channel. num_groups=1 is layer normalization over (C, ...), num_groups=C instance
    normalization. No running statistics: training and evaluation compute the same."""
    fn = "group_norm"
    _check_input(input, fn)
    _check_eps(eps, fn)
    c = input.shape[1]
    if isinstance(num_groups, bool) or not isinstance(num_groups, int) or num_groups <= 0 \
            or c % num_groups:
        raise ValueError(f"group_norm: num_groups must be a positive int dividing the number of "
                         f"channels {c}, got {num_groups!r}")
    for name, t in (("weight", weight), ("bias", bias)):
        _check_per_channel(t, name, c, fn)
    out, _, _ = _per_sample(input, num_groups, eps)
    return _affine(out, weight, bias)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalization, PyTorch's F.rms_norm: x / sqrt(mean(x^2) + eps) *
    weight over the last len(normalized_shape) dimensions; no centering and no bias.
    eps=None means the machine epsilon of the input's dtype, as in PyTorch."""
    fn = "rms_norm"
    _check_input(input, fn, min_ndim=0)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or input.shape[input.ndim - len(shape):] != shape or len(shape) > input.ndim:
        raise ValueError(f"rms_norm: normalized_shape {shape} must be the last dimensions of the "
                         f"input, whose shape is {input.shape}")
    if weight is not None and (not isinstance(weight, Tensor) or weight.shape != shape):
        raise ValueError(f"rms_norm: weight must be None or a tensor of shape {shape}, got "
                         f"{getattr(weight, 'shape', type(weight).__name__)}")
    if eps is None:
        eps = _MACHINE_EPS[input.dtype.name]
    _check_eps(eps, fn)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    out = input / ((input * input).mean(dim=dims, keepdim=True) + eps).sqrt()
    return out if weight is None else out * weight


# torch.finfo(dtype).eps: the gap between 1 and the next representable number
_MACHINE_EPS = {"float64": 2.220446049250313e-16, "float32": 1.1920928955078125e-07}
