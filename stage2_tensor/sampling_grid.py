"""Which input positions an output position of padding or interpolation reads (chapter on
convolutional networks, "padding and upsampling"): the arithmetic both the gathers of
resampling.py (which list it per shape) and the resampling kernels (which compute it per
element: python_backend.py's loops, csrc/resample.c, cuda/resample.cu) share. The C and
CUDA kernels repeat these formulas in double, operation for operation, so every device
reads the same positions.
"""
import math

PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad_source(i, size, mode):
    """The input position that position i of a padded dimension reads (i counted from the
    input's first position, so negative in the padding before), or None for constant
    padding's fill: reflect mirrors around the edge element, replicate repeats it, circular
    wraps around."""
    if 0 <= i < size:
        return i
    if mode == "constant":
        return None
    if mode == "reflect":
        return -i if i < 0 else 2 * (size - 1) - i
    if mode == "replicate":
        return min(max(i, 0), size - 1)
    return i % size


def interpolation_step(size, out, mode, align_corners, scale):
    """The distance in input positions between two output positions, as PyTorch computes
    it: with align_corners the corners map onto each other ((size - 1) / (out - 1)), else
    1 / scale_factor when one was given, else size / out."""
    if mode != "nearest" and align_corners:
        return (size - 1) / (out - 1) if out > 1 else 0.0
    return 1 / scale if scale else size / out


def interpolation_source(j, size, step, mode, align_corners):
    """Output position j's (first neighbour, second neighbour, the second's weight) along a
    dimension of ``size``: nearest reads floor(j * step) alone (weight 0); linear reads the
    two neighbours of the coordinate j * step (align_corners) or (j + 0.5) * step - 0.5
    (the centres of the pixels aligned, clamped at 0)."""
    if mode == "nearest":
        i = min(int(math.floor(j * step)), size - 1)
        return i, i, 0.0
    c = j * step if align_corners else max((j + 0.5) * step - 0.5, 0.0)
    first = min(int(c), size - 1)
    return first, min(first + 1, size - 1), c - first
