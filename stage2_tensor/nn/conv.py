"""Convolution, transposed convolution and pooling layers (chapter on convolutional networks): thin Modules around
stage2_tensor/convolution.py, with PyTorch's names, arguments and initialisation."""
import math

from .. import convolution
from ..convolution import _tuple
from ..factories import uniform
from .modules import Module, Parameter


class _ConvNd(Module):
    """Kernels (out_channels, in_channels / groups, *kernel_size) and a bias (out_channels,),
    both uniform on [-1/sqrt(fan_in), 1/sqrt(fan_in)] with fan_in = in_channels / groups *
    prod(kernel_size), PyTorch's default (its kaiming_uniform_ with a = sqrt(5) gives this
    bound for the weight)."""
    n = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        for what, value in (("in_channels", in_channels), ("out_channels", out_channels), ("groups", groups)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: {what} must be a positive int, got {value!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        if padding_mode != "zeros":
            raise ValueError(f"{name}: padding_mode {padding_mode!r} is not supported; 'zeros' is")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _tuple(kernel_size, self.n, "kernel_size")
        self.stride, self.padding, self.dilation = stride, padding, dilation
        fan_in = in_channels // groups * math.prod(self.kernel_size)
        k = 1 / math.sqrt(fan_in)
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(uniform(shape, -k, k, dtype=dtype, device=device))
        self.bias = Parameter(uniform((out_channels,), -k, k, dtype=dtype, device=device)) if bias else None

    def forward(self, x):
        return convolution.conv(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                                self.groups, n=self.n)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}"
                + (f", dilation={self.dilation}" if self.dilation != 1 else "")
                + (f", groups={self.groups}" if self.groups != 1 else "")
                + (", bias=False" if self.bias is None else ""))


class Conv1d(_ConvNd):
    n = 1


class Conv2d(_ConvNd):
    n = 2


class Conv3d(_ConvNd):
    n = 3


class _ConvTransposeNd(_ConvNd):
    """Kernels (in_channels, out_channels / groups, *kernel_size), PyTorch's layout for a
    transposed convolution, initialised as PyTorch does (fan_in from that layout)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)
        self.output_padding = output_padding
        k = 1 / math.sqrt(out_channels // groups * math.prod(self.kernel_size))
        shape = (in_channels, out_channels // groups, *self.kernel_size)
        self.weight = Parameter(uniform(shape, -k, k, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(uniform((out_channels,), -k, k, dtype=dtype, device=device))

    def forward(self, x):
        return convolution.conv_transpose(x, self.weight, self.bias, self.stride, self.padding,
                                          self.output_padding, self.groups, self.dilation, n=self.n)


class ConvTranspose1d(_ConvTransposeNd):
    n = 1


class ConvTranspose2d(_ConvTransposeNd):
    n = 2


class AdaptiveAvgPool2d(Module):
    reduce = "avg"

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, x):
        return convolution.adaptive_pool(x, self.output_size, self.reduce, n=2)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(AdaptiveAvgPool2d):
    reduce = "max"

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, x):
        return convolution.adaptive_pool(x, self.output_size, "max", 2, self.return_indices)


class MaxPool1d(Module):
    n = 1

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, x):
        return convolution.max_pool(x, self.kernel_size, self.stride, self.padding, self.dilation,
                                    self.ceil_mode, self.return_indices, n=self.n)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool2d(MaxPool1d):
    n = 2


class AvgPool1d(Module):
    n = 1

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, x):
        return convolution.avg_pool(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                    self.count_include_pad, n=self.n)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(AvgPool1d):
    n = 2


class ConvTranspose3d(_ConvTransposeNd):
    n = 3
