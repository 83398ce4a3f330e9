"""The pooling layers conv.py lacks, PyTorch's names: MaxPool3d, AvgPool3d, the 1-d and 3-d
adaptive pools, LPPool1d/2d/3d and MaxUnpool1d/2d/3d, thin Modules around
stage2_tensor/pool_variants.py."""
from .. import pool_variants as P
from .conv import AvgPool1d, MaxPool1d
from .modules import Module


class MaxPool3d(MaxPool1d):
    n = 3


class AvgPool3d(AvgPool1d):
    n = 3

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)
        if divisor_override is not None:
            raise ValueError("AvgPool3d: divisor_override is not supported here; leave it None")
        self.divisor_override = None


class _AdaptiveAvgPoolNd(Module):
    n = 1

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return P.adaptive_pool(input, self.output_size, "avg", n=self.n)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    n = 1


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    n = 3


class _AdaptiveMaxPoolNd(_AdaptiveAvgPoolNd):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return P.adaptive_pool(input, self.output_size, "max", self.n, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    n = 1


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    n = 3


class _LPPoolNd(Module):
    n = 1

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return P.lp_pool(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode, self.n)

    def extra_repr(self):
        return f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, " \
               f"ceil_mode={self.ceil_mode}"


class LPPool1d(_LPPoolNd):
    n = 1


class LPPool2d(_LPPoolNd):
    n = 2


class LPPool3d(_LPPoolNd):
    n = 3


class _MaxUnpoolNd(Module):
    n = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = P._tuple(kernel_size, self.n, "kernel_size")
        self.stride = self.kernel_size if stride is None else P._tuple(stride, self.n, "stride")
        self.padding = P._tuple(padding, self.n, "padding")

    def forward(self, input, indices, output_size=None):
        return P.max_unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size, self.n)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    n = 3
