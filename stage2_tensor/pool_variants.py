"""The rest of PyTorch's pooling functions, on convolution.py's pooling: the 1-d and 3-d
adaptive pools, adaptive max pooling's positions (``return_indices``), max_pool3d and
avg_pool3d, the ``*_with_indices`` names, power-average pooling (lp_pool1d/2d/3d) and
max unpooling (max_unpool1d/2d/3d), which writes each value back at the position its max
pool took it from. All compositions of the same gathers and scatters, so every device runs
them and autograd differentiates them.
"""
import math

from . import dtypes
from .convolution import _batched, _tuple, adaptive_pool, avg_pool, max_pool
from .factories import zeros
from .strides import numel
from .tensor import Tensor


def adaptive_avg_pool1d(input, output_size):
    return adaptive_pool(input, output_size, "avg", n=1)


def adaptive_avg_pool3d(input, output_size):
    return adaptive_pool(input, output_size, "avg", n=3)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return adaptive_pool(input, output_size, "max", 1, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return adaptive_pool(input, output_size, "max", 3, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return adaptive_pool(input, output_size, "max", 1, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_pool(input, output_size, "max", 2, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return adaptive_pool(input, output_size, "max", 3, True)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, n=3)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if divisor_override is not None:
        raise ValueError("avg_pool3d: divisor_override is not supported here; leave it None")
    return avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, n=3)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, n=1)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, n=2)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, n=3)


def lp_pool(input, norm_type, kernel_size, stride, ceil_mode, n):
    """(sum over each window of x^p)^(1/p), PyTorch's lp_pool: the average pool of x^p
    times the window's size, its root taken of its positive part (so a window of
    negatives with an odd p gives 0, as PyTorch); p = inf is the max pool of |x|."""
    what = f"lp_pool{n}d"
    if isinstance(norm_type, bool) or not isinstance(norm_type, (int, float)) or norm_type == 0:
        raise ValueError(f"{what}: norm_type must be a non-zero number, got {norm_type!r}")
    if norm_type == math.inf:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode, n=n)
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode, n=n)
    out = avg_pool(input ** norm_type, kernel_size, stride, 0, ceil_mode, True, n=n)
    return (out.sign() * out.abs().relu() * numel(_tuple(kernel_size, n, "kernel_size"))) ** (1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


def max_unpool(input, indices, kernel_size, stride, padding, output_size, n):
    """The inverse of max pooling as far as it goes: zeros of the pooled input's extents
    with each value written at its position in ``indices`` (max_pool's, flat in each
    plane). The extents are (in - 1) stride - 2 padding + kernel, or ``output_size``."""
    what = f"max_unpool{n}d"
    if not isinstance(indices, Tensor) or indices.dtype is not dtypes.int64:
        raise TypeError(f"{what}: indices must be an int64 tensor (max_pool's return_indices), got "
                        f"{getattr(indices, 'dtype', type(indices).__name__)}")
    x, unbatched = _batched(input, n, what)
    if indices.shape != input.shape:
        raise ValueError(f"{what}: indices of shape {indices.shape} must have the input's shape {input.shape}")
    kernel = _tuple(kernel_size, n, "kernel_size")
    stride = kernel if stride is None else _tuple(stride, n, "stride")
    pad = _tuple(padding, n, "padding")
    default = tuple((i - 1) * s - 2 * p + k for i, s, p, k in zip(x.shape[2:], stride, pad, kernel))
    if output_size is None:
        out = default
    else:
        out = tuple(output_size)
        out = out[-n:] if len(out) in (n + 1, n + 2) else out
        if len(out) != n or any(abs(o - d) >= s for o, d, s in zip(out, default, stride)):
            raise ValueError(f"{what}: output_size {tuple(output_size)} is not within a stride of the default "
                             f"{default}")
    N, C, P = x.shape[0], x.shape[1], numel(out)
    where = indices.unsqueeze(0) if unbatched else indices
    where = where.reshape(N, C, -1).to(device=x.device)
    try:                                # scatter checks the positions (data_checks.py)
        y = zeros(N, C, P, dtype=x.dtype, device=x.device).scatter(2, where, x.reshape(N, C, -1))
    except IndexError:
        raise RuntimeError(f"{what}: Found an invalid max index {where.max().item()} (output volumes are "
                           f"of size {'x'.join(map(str, out))})") from None
    y = y.reshape(N, C, *out)
    return y[0] if unbatched else y


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)
