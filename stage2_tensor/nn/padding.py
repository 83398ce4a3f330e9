"""PyTorch's padding modules: ZeroPad1d/2d/3d, ConstantPad1d/2d/3d, ReflectionPad1d/2d/3d,
ReplicationPad1d/2d/3d and CircularPad1d/2d/3d, each F.pad (stage2_tensor/resampling.py)
with its mode over the last 1, 2 or 3 dimensions. ``padding`` is an int (the same on
every side) or 2n sizes, (left, right, top, bottom, front, back), held as a tuple of 2n.
"""
from . import functional as F
from .modules import Module


def _sizes(padding, n, name):
    if isinstance(padding, int) and not isinstance(padding, bool):
        return (padding,) * (2 * n)
    sizes = tuple(padding)
    if len(sizes) != 2 * n or not all(isinstance(p, int) and not isinstance(p, bool) for p in sizes):
        raise ValueError(f"{name}: padding must be an int or {2 * n} ints, got {padding!r}")
    return sizes


class _PadNd(Module):
    n, mode = 1, "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _sizes(padding, self.n, type(self).__name__)

    def forward(self, input):
        if self.mode != "constant" and input.ndim not in (self.n + 1, self.n + 2):
            raise ValueError(f"expected {self.n + 1}D or {self.n + 2}D input (got {input.ndim}D input)")
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        F._check_number(value, "value", type(self).__name__)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    n = 1


class ConstantPad2d(_ConstantPadNd):
    n = 2


class ConstantPad3d(_ConstantPadNd):
    n = 3


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    n, mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    n, mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    n, mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    n, mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    n, mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    n, mode = 3, "replicate"


class CircularPad1d(_PadNd):
    n, mode = 1, "circular"


class CircularPad2d(_PadNd):
    n, mode = 2, "circular"


class CircularPad3d(_PadNd):
    n, mode = 3, "circular"
