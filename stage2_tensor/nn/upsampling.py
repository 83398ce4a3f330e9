"""Layers that change a feature map's resolution without weights, PyTorch's nn.Upsample
(around F.interpolate, stage2_tensor/resampling.py), nn.PixelShuffle and nn.PixelUnshuffle
(around stage2_tensor/pixel_shuffle.py), their deprecated aliases UpsamplingNearest2d and
UpsamplingBilinear2d, and nn.ChannelShuffle. Arguments are checked when the layer is built."""
from .. import pixel_shuffle, resampling
from ..channel_shuffle import channel_shuffle
from .modules import Module


class Upsample(Module):
    """F.interpolate(x, size, scale_factor, mode, align_corners) as a layer: give either
    ``size`` (the output's spatial size) or ``scale_factor`` (stored as a float, or a tuple
    of floats, as PyTorch). Modes: "nearest", "linear" (3-d input), "bilinear" (4-d).
    (``recompute_scale_factor`` is accepted as None or False: the scale factor given is
    the one used, PyTorch's behaviour for those values.)"""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        if mode not in ("nearest", "linear", "bilinear"):
            raise ValueError(f"Upsample: mode must be 'nearest', 'linear' or 'bilinear', got {mode!r}")
        if (size is None) == (scale_factor is None):
            raise ValueError("Upsample: give either size or scale_factor, not both and not neither")
        if mode == "nearest" and align_corners is not None:
            raise ValueError("Upsample: align_corners only applies to the linear modes")
        if recompute_scale_factor:
            raise ValueError("Upsample: recompute_scale_factor=True is not supported; leave it None")
        if scale_factor is not None:
            scale_factor = (tuple(float(f) for f in scale_factor)
                            if isinstance(scale_factor, (tuple, list)) else float(scale_factor))
        self.size = tuple(size) if isinstance(size, list) else size
        self.scale_factor, self.mode, self.align_corners = scale_factor, mode, align_corners

    def forward(self, x):
        return resampling.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners)

    def extra_repr(self):
        what = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return f"{what}, mode={self.mode!r}"


def _factor(value, name, layer):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{layer}: {name} must be a positive int, got {value!r}")
    return value


class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r), r = upscale_factor."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = _factor(upscale_factor, "upscale_factor", "PixelShuffle")

    def forward(self, x):
        return pixel_shuffle.pixel_shuffle(x, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r^2, H, W), r = downscale_factor: PixelShuffle's inverse."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = _factor(downscale_factor, "downscale_factor", "PixelUnshuffle")

    def forward(self, x):
        return pixel_shuffle.pixel_unshuffle(x, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class UpsamplingNearest2d(Upsample):
    """Upsample with mode "nearest" (PyTorch's deprecated name)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample with mode "bilinear" and align_corners=True (PyTorch's deprecated name)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class ChannelShuffle(Module):
    """F.channel_shuffle as a layer: the channels of each group interleaved."""

    def __init__(self, groups):
        super().__init__()
        self.groups = _factor(groups, "groups", "ChannelShuffle")

    def forward(self, input):
        return channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
