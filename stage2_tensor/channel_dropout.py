"""Channel dropout (Tompson et al. 2015, "Efficient Object Localization Using Convolutional
Networks"), PyTorch's F.dropout1d, F.dropout2d and F.dropout3d.

Neighbouring pixels of a feature map are strongly correlated, so dropping single elements
barely regularises a convolutional layer: the lost value is recovered from its
neighbours. Channel dropout zeroes whole channels instead: one keep-or-drop decision per
(sample, channel), a mask of shape (N, C, 1, 1) broadcast over the spatial positions,
the kept channels scaled by 1 / (1 - p) so the expected value is unchanged (and
evaluation needs no rescaling).

The mask is the device's ``dropout`` kernel run on a tensor of ones of that small shape
(one 64-bit seed from the package's generator, so ``manual_seed`` makes it repeat); the
output is the input times the mask, a product autograd differentiates: dx = dy * mask.
"""
import warnings

from . import inplace as in_place
from .factories import generator, ones, random_bits
from .tensor import Tensor
from . import dtypes


def _mask(shape, p, like):
    """keep / (1 - p) for each of numel(shape) decisions, on like's device and dtype."""
    one = ones(*shape, dtype=like.dtype, device=like.device)
    return one.launch("dropout", one.as_view(), random_bits(generator(), 64), p, like.dtype,
                      shape=one.shape, dtype=like.dtype)


def feature_dropout(input, p, training, spatial, fn):
    """Zero each channel (dimension -spatial-1) of each sample with probability p. The
    input is (N, C, *spatial) or, unbatched, (C, *spatial)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(input).__name__}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ValueError(f"{fn}: dropout probability has to be between 0 and 1, but got {p!r}")
    if input.ndim not in (spatial + 1, spatial + 2):
        raise ValueError(f"{fn}: expected a {spatial + 1}-D (C, ...) or {spatial + 2}-D "
                         f"(N, C, ...) input with {spatial} spatial dimension(s), got shape "
                         f"{input.shape}")
    if not training or p == 0:
        return input
    if not input.dtype.is_floating_point:
        input = input.to(dtype=dtypes.float32)
    if p == 1:
        return input * 0
    channels = input.shape[:input.ndim - spatial]
    return input * _mask(channels + (1,) * spatial, p, input)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel dropout of (N, C, L) or (C, L) inputs."""
    out = feature_dropout(input, p, training, 1, "dropout1d")
    return in_place.into(input, out, "dropout1d") if inplace else out


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel dropout of (N, C, H, W) inputs. As PyTorch (for now), a 3-D input is read
    as (N, C, L), not as an unbatched (C, H, W), with its warning: one decision per
    (N, C), as dropout1d."""
    spatial = 2
    if isinstance(input, Tensor) and input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim (PyTorch's behaviour); use "
                      "dropout1d for that", stacklevel=2)
        spatial = 1
    out = feature_dropout(input, p, training, spatial, "dropout2d")
    return in_place.into(input, out, "dropout2d") if inplace else out


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channel dropout of (N, C, D, H, W) or (C, D, H, W) inputs."""
    out = feature_dropout(input, p, training, 3, "dropout3d")
    return in_place.into(input, out, "dropout3d") if inplace else out
