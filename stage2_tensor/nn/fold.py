"""PyTorch's nn.Fold and nn.Unfold: F.fold (col2im) and F.unfold (im2col) as layers
(stage2_tensor/convolution.py)."""
from . import functional as F
from .modules import Module


class _Windows(Module):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Unfold(_Windows):
    """(N, C, H, W) -> (N, C * prod(kernel_size), L): each column one sliding window."""

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(_Windows):
    """(N, C * prod(kernel_size), L) -> (N, C, *output_size), overlapping windows summed."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return f"output_size={self.output_size}, " + super().extra_repr()
