"""Pixel shuffle (Shi et al. 2016, "Real-Time Single Image and Video Super-Resolution"):
channels traded for resolution and back, PyTorch's F.pixel_shuffle and F.pixel_unshuffle.

Both are a reshape, a permutation and a reshape: views and one copy, differentiated by
autograd with no code of their own. A convolution producing C * r^2 channels followed by
pixel_shuffle(r) upsamples by r without the checkerboard artefacts of a strided transposed
convolution.
"""
from .tensor import Tensor


def _checked(input, factor, fn, what):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(input).__name__}")
    if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
        raise ValueError(f"{fn}: {what} must be a positive int, got {factor!r}")
    if input.ndim < 3:
        raise ValueError(f"{fn}: expected an input of at least 3 dimensions (*, C, H, W), got "
                         f"shape {input.shape}")
    return input.shape[:-3], input.shape[-3:]


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r): output pixel (c, h r + i, w r + j) is input
    channel c r^2 + i r + j at (h, w)."""
    r = upscale_factor
    lead, (c, h, w) = _checked(input, r, "pixel_shuffle", "upscale_factor")
    if c % (r * r):
        raise ValueError(f"pixel_shuffle: the channel dimension ({c}) of input {input.shape} "
                         f"must be divisible by upscale_factor squared ({r * r})")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)   # (*, C, H, r, W, r)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W), pixel_shuffle's inverse."""
    r = downscale_factor
    lead, (c, h, w) = _checked(input, r, "pixel_unshuffle", "downscale_factor")
    if h % r or w % r:
        raise ValueError(f"pixel_unshuffle: the height and width of input {input.shape} must "
                         f"be divisible by downscale_factor ({r})")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)   # (*, C, r, r, H, W)
    return x.reshape(*lead, c * r * r, h // r, w // r)
