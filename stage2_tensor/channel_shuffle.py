"""PyTorch's F.channel_shuffle (ShuffleNet, Zhang et al. 2017): the C channels of (N, C, ...)
seen as (groups, C / groups) and read transposed, so each group of the next grouped
convolution gets channels from every group of this one. A reshape, a transpose and a
copy."""
from .tensor import Tensor


def channel_shuffle(input, groups):
    if not isinstance(input, Tensor):
        raise TypeError(f"channel_shuffle: expected a Tensor, got {type(input).__name__}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"sizes {list(input.shape)}")
    n, c = input.shape[:2]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = input.shape[2:]
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle
