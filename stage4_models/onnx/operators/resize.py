"""Resize and Upsample (chapter 13, "13_inference_compiler") on F.interpolate: nearest and
(bi)linear, sizes from scales or given; Upsample's scales an attribute before opset 9.
``resize_into`` writes either one's result into a given tensor (a slice of a Concat's
buffer: passes/writes.py) through inference_kernels.interpolate_into."""
import math

import stage2_tensor.nn.functional as F

from . import register
from .common import check_size, count_inputs
from .host import HostTensor
from .inference_kernels import interpolate_into
from ..shapes import shape_of


def _resize_sizes(ctx, node, x, scales, sizes):
    shape = shape_of(x)
    if sizes is not None:
        out = ctx.ints(sizes, node, "sizes")
    elif scales is not None:
        if isinstance(scales, list):
            factors = scales
        else:
            factors = [float(v) for v in ctx.host(scales, node, "scales").values]
        if len(factors) != len(shape) or not all(math.isfinite(f) and f > 0 for f in factors):
            raise ValueError(f"{node.describe()}: scales {factors} must give one positive finite factor per dim "
                             f"of {shape}")
        out = [int(math.floor(d * f)) for d, f in zip(shape, factors)]
    else:
        raise ValueError(f"{node.describe()}: give scales or sizes")
    if len(out) != len(shape) or list(out[:2]) != list(shape[:2]) or any(d < 1 for d in out):
        raise ValueError(f"{node.describe()}: resizes {shape} to {out}; only the spatial dims of an (N, C, ...) "
                         "input may change, to positive sizes")
    return list(check_size(node, out, x.dtype.itemsize))


def _interpolate(node, x, out, mode, transform, dst=None):
    spatial = list(out[2:])
    integer = all(o % i == 0 for o, i in zip(spatial, shape_of(x)[2:]))
    if mode == "nearest":
        if transform != "asymmetric" and not integer:
            raise ValueError(f"{node.describe()}: nearest resizing with {transform!r} coordinates is "
                             "supported for integer scale factors only")
        if node.attr("nearest_mode", "round_prefer_floor" if transform != "asymmetric" else "floor") \
                not in ("floor", "round_prefer_floor") and transform == "asymmetric":
            raise ValueError(f"{node.describe()}: nearest_mode {node.attr('nearest_mode')!r} is not supported")
        return _resampled(x, tuple(spatial), "nearest", None, dst)
    if mode == "linear" and x.ndim in (3, 4) and transform in ("half_pixel", "pytorch_half_pixel", "align_corners"):
        return _resampled(x, tuple(spatial), "linear" if x.ndim == 3 else "bilinear",
                          transform == "align_corners", dst)
    raise ValueError(f"{node.describe()}: mode {mode!r} with coordinate transformation {transform!r} "
                     f"on a {x.ndim}-d input is not supported (nearest, and linear with half_pixel or "
                     "align_corners on 3-d/4-d inputs, are)")


def _resampled(x, size, mode, align_corners, dst):
    if dst is None:
        return F.interpolate(x, size=size, mode=mode, align_corners=align_corners)
    return interpolate_into(x, size=size, mode=mode, align_corners=align_corners, out=dst)


def resize_into(ctx, node, inputs, out):
    """A Resize or Upsample node's result written into ``out`` (a tensor of its shape)."""
    return (resize if node.op_type == "Resize" else upsample)(ctx, node, inputs, dst=out)


@register("Upsample")
def upsample(ctx, node, inputs, dst=None):
    """Scales as an attribute before opset 9, an input from 9; coordinates asymmetric."""
    x = ctx.tensor(inputs[0] if inputs else None, node)
    if node.opset < 9:
        count_inputs(node, inputs, 1)
        scales = node.attr("scales")
        if not isinstance(scales, list):
            raise ValueError(f"{node.describe()}: attribute scales is required")
    else:
        count_inputs(node, inputs, 2)
        scales = inputs[1] if isinstance(inputs[1], HostTensor) else _float_host(inputs[1])
    mode = node.attr("mode", "nearest")
    out = _resize_sizes(ctx, node, x, scales, None)
    return [_interpolate(node, x, out, mode, "asymmetric" if mode == "nearest" else "half_pixel", dst)]


def _float_host(t):
    """A small float tensor (scales) read back to the host: a constant folded at plan time."""
    return HostTensor(shape_of(t), [float(v) for v in t.reshape(-1).tolist()], "float32")


@register("Resize")
def resize(ctx, node, inputs, dst=None):
    """Opset 10: X, scales; from 11: X, roi, scales, sizes, with coordinate_transformation_mode."""
    count_inputs(node, inputs, 1, 4)
    x = ctx.tensor(inputs[0], node)
    if node.opset < 11:
        scales, sizes, transform = (inputs[1] if len(inputs) > 1 else None), None, "asymmetric"
    else:
        scales = inputs[2] if len(inputs) > 2 else None
        sizes = inputs[3] if len(inputs) > 3 else None
        transform = node.attr("coordinate_transformation_mode", "half_pixel")
    if scales is not None and not isinstance(scales, HostTensor):
        scales = _float_host(scales)
    if scales is not None and not scales.values:
        scales = None
    if node.opset >= 18 and (node.attr("antialias", 0) or node.attr("axes") is not None
                             or node.attr("keep_aspect_ratio_policy", "stretch") != "stretch"):
        raise ValueError(f"{node.describe()}: antialias, axes and keep_aspect_ratio_policy (opset 18) are not "
                         "supported")
    out = _resize_sizes(ctx, node, x, scales, sizes)
    return [_interpolate(node, x, out, node.attr("mode", "nearest"), transform, dst)]
