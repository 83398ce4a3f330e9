"""Padding and interpolation as gathers along one dimension at a time (chapter on
convolutional networks).

Both build a new tensor whose positions along a dimension read positions of the input:
padding by reflecting (``reflect``), repeating the edge (``replicate``) or wrapping around
(``circular``), nearest-neighbour upsampling by repeating each position. The list of
positions read is worked out once per shape and gathered with ``index_select``, whose
gradient scatter-adds back; (bi)linear interpolation gathers the two neighbours of each
position and mixes them with constant weights. Constant padding is a concatenation.

A device with the optional resampling kernels (backend.py: pad, interpolate and their
backward passes; the native devices' csrc/resample.c) runs those instead: each output
position's source worked out arithmetically (sampling_grid.py), one pass over the output
for all the padded dimensions at once, or for both dimensions of a 2-d interpolation, and
the gradient a scatter-add in one pass. ``native`` is where the choice is made; the
gathers stay as the path every device has (and for the cases the kernels leave out:
negative constant padding, which crops, and nearest upsampling of 3 spatial dimensions).
"""
import functools
import math

from . import backend as backends
from .concat import cat
from .factories import full
from .gradient_function import GradientFunction
from .tensor import Tensor
from .sampling_grid import PAD_MODES, interpolation_source, interpolation_step, pad_source
from .views import IndexSelect, constant_tensor


def check_pad_sizes(size, before, after, mode):
    """reflect padding must be smaller than the dimension it pads (a mirror image of the
    elements after the edge one), circular at most as large (one wrap-around); replicate
    needs an element to repeat."""
    if mode == "reflect" and max(before, after) >= size:
        raise ValueError(f"pad: reflect padding ({before}, {after}) must be smaller than the "
                         f"dimension it pads ({size})")
    if mode == "circular" and max(before, after) > size:
        raise ValueError(f"pad: circular padding ({before}, {after}) must be at most the "
                         f"dimension it pads ({size})")
    if mode == "replicate" and size < 1 and max(before, after) > 0:
        raise ValueError("pad: replicate padding of an empty dimension")


@functools.lru_cache(maxsize=256)
def pad_positions(size, before, after, mode):
    """The input position each output position reads along one padded dimension."""
    check_pad_sizes(size, before, after, mode)
    return tuple(pad_source(i, size, mode) for i in range(-before, size + after))


def native(x, kernel):
    """Whether x's device runs resampling kernel ``kernel`` ("pad" or "interpolate") and
    its backward pass, on x's dtype (a float; a half one through float32, as
    backends.launch does): the one place where resampling chooses the kernels over the
    gathers every device runs."""
    be = backends.get(x.device)
    return x.dtype.is_floating_point and be.has(kernel) and be.has(kernel + "_backward")


class Pad(GradientFunction):
    """x's last len(before) dimensions padded (the device's ``pad`` kernel). Gradient:
    PadBackward of the upstream gradient, the padding's gradient added back where it was
    read from (dropped for constant padding)."""

    def forward(self, x, before, after, mode, value):
        self.geometry = (x.shape[x.ndim - len(before):], before, after, mode)
        shape = x.shape[:x.ndim - len(before)] + tuple(s + b + a for s, b, a in zip(self.geometry[0], before, after))
        return x.launch("pad", x.as_view(), before, after, mode, value, x.dtype, shape=shape, dtype=x.dtype)

    def backward(self, grad):
        return (PadBackward.apply(grad, *self.geometry),)


class PadBackward(GradientFunction):
    """pad's adjoint (the device's ``pad_backward``): each element of the padded gradient
    added at the input position its output position read. Gradient: Pad with 0 as the
    constant."""

    def forward(self, grad, spatial, before, after, mode):
        self.geometry = (before, after, mode)
        shape = grad.shape[:grad.ndim - len(before)] + tuple(spatial)
        return grad.launch("pad_backward", grad.as_view(), tuple(spatial), before, after, mode, grad.dtype,
                           shape=shape, dtype=grad.dtype)

    def backward(self, grad):
        before, after, mode = self.geometry
        return (Pad.apply(grad, before, after, mode, 0.0),)


class Interpolate(GradientFunction):
    """Each (H, W) plane of x resampled to ``out`` (the device's ``interpolate``: nearest
    or bilinear, with sampling_grid's steps). Gradient: InterpolateBackward."""

    def forward(self, x, out, steps, mode, align_corners):
        self.geometry = (x.shape[2:], steps, mode, align_corners)
        return x.launch("interpolate", x.as_view(), out, steps, mode, align_corners, x.dtype,
                        shape=x.shape[:2] + tuple(out), dtype=x.dtype)

    def backward(self, grad):
        return (InterpolateBackward.apply(grad, *self.geometry),)


class InterpolateBackward(GradientFunction):
    """interpolate's adjoint (``interpolate_backward``): each output's gradient added at
    the input positions it mixed, times their weights. Gradient: Interpolate."""

    def forward(self, grad, spatial, steps, mode, align_corners):
        self.geometry = (grad.shape[2:], steps, mode, align_corners)
        return grad.launch("interpolate_backward", grad.as_view(), tuple(spatial), steps, mode, align_corners,
                           grad.dtype, shape=grad.shape[:2] + tuple(spatial), dtype=grad.dtype)

    def backward(self, grad):
        return (Interpolate.apply(grad, *self.geometry),)


def _gather(x, dim, positions):
    """x's positions along ``dim`` listed in ``positions`` (a tuple), as one index_select."""
    return IndexSelect.apply(x, dim, constant_tensor(positions, x.device, list(positions)))


def pad(input, pad, mode="constant", value=0.0):
    """PyTorch's F.pad: ``pad`` holds (before, after) pairs from the last dimension
    backwards, (left, right, top, bottom, ...). A negative constant padding crops."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pad: expected a tensor, got {type(input).__name__}")
    if mode not in PAD_MODES:
        raise ValueError(f"pad: mode must be one of {', '.join(PAD_MODES)}, got {mode!r}")
    pad = tuple(pad)
    if len(pad) % 2 or len(pad) // 2 > input.ndim or not all(isinstance(p, int) for p in pad):
        raise ValueError(f"pad: expected pairs of ints, at most one per dimension of the "
                         f"{input.ndim}-d input, got {pad}")
    if mode != "constant" and (any(p < 0 for p in pad) or len(pad) // 2 > input.ndim - 1):
        raise ValueError(f"pad: {mode} padding takes non-negative sizes and leaves the first "
                         f"dimension alone, got {pad} for a {input.ndim}-d input")
    n = len(pad) // 2
    if n and native(input, "pad") and min(pad) >= 0:
        before, after = tuple(pad[2 * k] for k in reversed(range(n))), tuple(pad[2 * k + 1] for k in reversed(range(n)))
        for size, b, a in zip(input.shape[input.ndim - n:], before, after):
            check_pad_sizes(size, b, a, mode)
        return Pad.apply(input, before, after, mode, float(value))
    x = input
    for k in range(n):
        dim, before, after = x.ndim - 1 - k, pad[2 * k], pad[2 * k + 1]
        if mode != "constant":
            x = _gather(x, dim, pad_positions(x.shape[dim], before, after, mode))
            continue
        if before < 0 or after < 0:                       # crop
            x = x[(slice(None),) * dim + (slice(-min(before, 0), x.shape[dim] + min(after, 0)),)]
        parts = [full(x.shape[:dim] + (p,) + x.shape[dim + 1:], value, dtype=x.dtype, device=x.device)
                 for p in (max(before, 0), max(after, 0))]
        x = cat([parts[0], x, parts[1]], dim=dim)
    return x


@functools.lru_cache(maxsize=256)
def source_positions(size, out, mode, align_corners, scale):
    """Per output position along one dimension: (first neighbours, second neighbours, the
    seconds' weights), as PyTorch maps output to input coordinates (sampling_grid.py)."""
    step = interpolation_step(size, out, mode, align_corners, scale)
    first, second, weights = zip(*(interpolation_source(j, size, step, mode, align_corners) for j in range(out)))
    if mode == "nearest":
        return first, None, None
    return first, second, weights


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """PyTorch's F.interpolate for modes "nearest", "linear" (3-d input) and "bilinear"
    (4-d): ``size`` or ``scale_factor`` (an int or float, or one per spatial dimension)."""
    out, scales = _interpolation_args(input, size, scale_factor, mode, align_corners)
    n = input.ndim - 2
    if n <= 2 and native(input, "interpolate"):
        return _interpolate_native(input, out, scales, mode, bool(align_corners))
    x, spatial = input, input.shape[2:]
    for d in range(n):
        dim = 2 + d
        first, second, weights = source_positions(spatial[d], out[d], mode, bool(align_corners), scales[d])
        if mode == "nearest":
            x = _gather(x, dim, first)
            continue
        shape = [1] * x.ndim
        shape[dim] = out[d]
        w = constant_tensor(weights, x.device, list(weights), x.dtype).reshape(*shape)
        x = _gather(x, dim, first) * (1 - w) + _gather(x, dim, second) * w
    return x


def _interpolation_args(input, size, scale_factor, mode, align_corners):
    """interpolate's arguments checked: (the output's spatial extents, the scale per
    dimension that sets its step, None where ``size`` gave it)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate: expected a tensor, got {type(input).__name__}")
    if mode not in ("nearest", "linear", "bilinear"):
        raise ValueError(f"interpolate: mode must be 'nearest', 'linear' or 'bilinear', got {mode!r}")
    n = input.ndim - 2
    if (mode == "linear" and n != 1) or (mode == "bilinear" and n != 2) or n < 1:
        raise ValueError(f"interpolate: mode {mode!r} takes a {3 if mode == 'linear' else 4}-d input "
                         f"(N, C, ...), got shape {input.shape}")
    if mode == "nearest" and align_corners is not None:
        raise ValueError("interpolate: align_corners only applies to the linear modes")
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give either size or scale_factor")
    spatial = input.shape[2:]
    if size is not None:
        out = (size,) * n if isinstance(size, int) else tuple(size)
        scales = (None,) * n
    else:
        scales = (float(scale_factor),) * n if isinstance(scale_factor, (int, float)) else tuple(map(float, scale_factor))
        out = tuple(int(math.floor(s * f)) for s, f in zip(spatial, scales))
    if len(out) != n or any(o < 1 for o in out):
        raise ValueError(f"interpolate: output size {out} does not fit the {n} spatial dimension(s) "
                         f"of input {input.shape}")
    return out, scales


def _interpolate_native(x, out, scales, mode, align_corners):
    """interpolate through the device's kernel, which resamples (H, W) planes: a 1-d input
    (N, C, W) as (N, C, 1, W), its one row read as itself (step 0)."""
    kind = "nearest" if mode == "nearest" else "linear"
    steps = tuple(interpolation_step(s, o, kind, align_corners, f) for s, o, f in zip(x.shape[2:], out, scales))
    if x.ndim == 3:
        y = Interpolate.apply(x.unsqueeze(2), (1, out[0]), (0.0, steps[0]), kind, align_corners)
        return y.squeeze(2)
    return Interpolate.apply(x, tuple(out), steps, kind, align_corners)
