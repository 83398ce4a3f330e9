"""Operators that move values around without arithmetic (chapter 13, "13_inference_compiler"):
Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Split, Slice, Gather, Pad, Tile,
Expand, DepthToSpace, SpaceToDepth, Resize, Upsample, Identity, Dropout. Their parameters
(target shapes, axes, bounds, pads) are host values; on host values (shapes and pads being
assembled) Reshape, Transpose, Concat, Gather, Slice, Squeeze and Unsqueeze run on the host
too (host.py's take and permute)."""
import math

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
from stage2_tensor.broadcast import broadcast_shapes

from . import register
from .common import axis, count_inputs, ints_attr, number_attr
from .host import HostTensor, permute, take
from ..shapes import shape_of


@register("Identity")
def identity(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    return [inputs[0]]


@register("Dropout")
def dropout(ctx, node, inputs):
    """Inference: the input as it is, and (when asked) a mask of all ones."""
    count_inputs(node, inputs, 1, 3)
    if node.opset >= 12 and len(inputs) > 2 and inputs[2] is not None:
        if any(ctx.host(inputs[2], node, "training_mode").values):
            raise ValueError(f"{node.describe()}: training_mode=True is not supported in inference")
    x = inputs[0]
    outputs = [x]
    if len(node.outputs) > 1 and node.outputs[1]:
        outputs.append(tg.ones(*shape_of(x), dtype=tg.bool, device=ctx.device))
    return outputs


def _target_shape(node, shape, dims, allowzero=False):
    """Reshape's target: 0 copies the input's dim (unless allowzero), -1 takes the rest."""
    out = [shape[i] if d == 0 and not allowzero and i < len(shape) else d for i, d in enumerate(dims)]
    if out.count(-1) > 1 or any(d < -1 for d in out):
        raise ValueError(f"{node.describe()}: shape {dims} may hold one -1 and no other negative value")
    total = math.prod(shape)
    if -1 in out:
        known = math.prod(d for d in out if d != -1)
        if known == 0 or total % known:
            raise ValueError(f"{node.describe()}: cannot reshape {tuple(shape)} to {dims}")
        out[out.index(-1)] = total // known
    if math.prod(out) != total:
        raise ValueError(f"{node.describe()}: cannot reshape {tuple(shape)} ({total} elements) to {dims}")
    return out


@register("Reshape")
def reshape(ctx, node, inputs):
    """The target shape is an attribute before opset 5, an input from opset 5."""
    if node.opset < 5:
        count_inputs(node, inputs, 1)
        dims = ints_attr(node, "shape", [])
    else:
        count_inputs(node, inputs, 2)
        dims = ctx.ints(inputs[1], node, "the target shape")
    x = inputs[0]
    out = _target_shape(node, shape_of(x), dims, node.attr("allowzero", 0))
    if isinstance(x, HostTensor):
        return [HostTensor(out, x.values, x.dtype)]
    return [x.reshape(*out)]


@register("Flatten")
def flatten(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    x = ctx.tensor(inputs[0], node)
    ax = node.attr("axis", 1)
    if not isinstance(ax, int) or not -x.ndim <= ax <= x.ndim:
        raise ValueError(f"{node.describe()}: axis {ax!r} is out of range for a {x.ndim}-d input")
    ax %= x.ndim + 1
    shape = shape_of(x)
    return [x.reshape(math.prod(shape[:ax]), math.prod(shape[ax:]))]


@register("Transpose")
def transpose(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    x = inputs[0]
    ndim = len(shape_of(x))
    perm = ints_attr(node, "perm", list(range(ndim))[::-1])
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"{node.describe()}: perm {perm} is not a permutation of the {ndim} dims")
    if isinstance(x, HostTensor):
        return [permute(x, perm)]
    return [x.permute(*perm)]


def _axes(ctx, node, inputs, since):
    """Axes: an attribute before opset ``since``, the second input from it."""
    if node.opset < since:
        count_inputs(node, inputs, 1)
        return ints_attr(node, "axes")
    count_inputs(node, inputs, 1, 2)
    return ctx.ints(inputs[1], node, "axes") if len(inputs) > 1 and inputs[1] is not None else None


@register("Squeeze")
def squeeze(ctx, node, inputs):
    x = inputs[0] if inputs else None
    axes = _axes(ctx, node, inputs, 13)
    shape = shape_of(x)
    axes = [i for i, d in enumerate(shape) if d == 1] if axes is None else \
        sorted({axis(node, a, len(shape), "axes entry") for a in axes})
    if any(shape[a] != 1 for a in axes):
        raise ValueError(f"{node.describe()}: cannot squeeze axes {axes} of shape {shape}: not all are 1")
    out = [d for i, d in enumerate(shape) if i not in axes]
    if isinstance(x, HostTensor):
        return [HostTensor(out, x.values, x.dtype)]
    return [x.reshape(*out)]


@register("Unsqueeze")
def unsqueeze(ctx, node, inputs):
    x = inputs[0] if inputs else None
    axes = _axes(ctx, node, inputs, 13)
    if axes is None:
        raise ValueError(f"{node.describe()}: axes are required")
    shape = list(shape_of(x))
    n = len(shape) + len(axes)
    axes = sorted(axis(node, a, n, "axes entry") for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{node.describe()}: axes {axes} repeat an axis")
    for a in axes:
        shape.insert(a, 1)
    if isinstance(x, HostTensor):
        return [HostTensor(shape, x.values, x.dtype)]
    return [x.reshape(*shape)]


@register("Concat")
def concat(ctx, node, inputs):
    if not inputs or any(v is None for v in inputs):
        raise ValueError(f"{node.describe()}: expected one or more inputs, got {node.inputs}")
    first = shape_of(inputs[0])
    ax = axis(node, node.attr("axis", 1 if node.opset < 4 else None), len(first))
    for v in inputs[1:]:
        s = shape_of(v)
        if len(s) != len(first) or any(a != b for i, (a, b) in enumerate(zip(s, first)) if i != ax):
            raise ValueError(f"{node.describe()}: inputs of shapes {first} and {s} differ outside axis {ax}")
    if all(isinstance(v, HostTensor) for v in inputs) and len({v.dtype for v in inputs}) == 1:
        order = [ax] + [d for d in range(len(first)) if d != ax]        # the axis first: row-major blocks
        parts = [permute(v, order) for v in inputs]
        values = [x for p in parts for x in p.values]
        joined = HostTensor([sum(p.shape[0] for p in parts)] + list(parts[0].shape[1:]), values, parts[0].dtype)
        return [permute(joined, sorted(range(len(first)), key=order.__getitem__))]
    return [tg.cat([ctx.tensor(v, node) for v in inputs], dim=ax)]


@register("Split")
def split(ctx, node, inputs):
    """Sizes as attribute ``split`` before opset 13, as the second input from 13; else equal parts."""
    x = ctx.tensor(inputs[0], node)
    ax = axis(node, node.attr("axis", 0), x.ndim)
    if node.opset < 13:
        count_inputs(node, inputs, 1)
        sizes = ints_attr(node, "split")
    else:
        count_inputs(node, inputs, 1, 2)
        sizes = ctx.ints(inputs[1], node, "split") if len(inputs) > 1 and inputs[1] is not None else None
    n, size = len(node.outputs), shape_of(x)[ax]
    if sizes is None:
        if size % n and node.opset < 18:
            raise ValueError(f"{node.describe()}: axis {ax} of size {size} does not split into {n} parts")
        part = -(-size // n)
        sizes = [min(part, size - i * part) for i in range(n)]
    if len(sizes) != n or sum(sizes) != size or any(s < 0 for s in sizes):
        raise ValueError(f"{node.describe()}: sizes {sizes} do not split axis {ax} of size {size} "
                         f"into {n} outputs")
    return list(x.split(sizes, dim=ax))


def _slice_params(ctx, node, inputs, ndim):
    if node.opset < 10:
        count_inputs(node, inputs, 1)
        starts, ends = ints_attr(node, "starts"), ints_attr(node, "ends")
        axes, steps = ints_attr(node, "axes"), None
        if starts is None or ends is None:
            raise ValueError(f"{node.describe()}: attributes starts and ends are required")
    else:
        count_inputs(node, inputs, 3, 5)
        starts, ends = ctx.ints(inputs[1], node, "starts"), ctx.ints(inputs[2], node, "ends")
        axes = ctx.ints(inputs[3], node, "axes") if len(inputs) > 3 and inputs[3] is not None else None
        steps = ctx.ints(inputs[4], node, "steps") if len(inputs) > 4 and inputs[4] is not None else None
    axes = list(range(len(starts))) if axes is None else [axis(node, a, ndim, "axes entry") for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    if not len(starts) == len(ends) == len(axes) == len(steps) or 0 in steps:
        raise ValueError(f"{node.describe()}: starts {starts}, ends {ends}, axes {axes}, steps {steps} must "
                         "have one entry per axis and no zero step")
    return zip(axes, starts, ends, steps)


def _bounds(start, end, step, size):
    """A slice's clamped (start, end) as ONNX defines them."""
    start += size if start < 0 else 0
    end += size if end < 0 else 0
    if step > 0:
        return min(max(start, 0), size), min(max(end, 0), size)
    return min(max(start, -1), size - 1), min(max(end, -1), size - 1)


@register("Slice")
def slice_(ctx, node, inputs):
    x = inputs[0] if inputs else None
    shape = shape_of(x)
    params = list(_slice_params(ctx, node, inputs, len(shape)))
    if isinstance(x, HostTensor):
        positions = [list(range(d)) for d in shape]
        for ax, start, end, step in params:
            start, end = _bounds(start, end, step, shape[ax])
            positions[ax] = positions[ax][start:end if end >= 0 else None:step]
        return [take(x, positions)]
    x = ctx.tensor(x, node)
    for ax, start, end, step in params:
        size = shape_of(x)[ax]
        start, end = _bounds(start, end, step, size)
        if step < 0:                         # as a forward slice of the flipped axis
            x, start, end, step = x.flip(ax), size - 1 - start, size - 1 - end, -step
        index = (slice(None),) * ax + (slice(start, max(end, start), step),)
        x = x[index]
    return [x]


@register("Gather")
def gather(ctx, node, inputs):
    count_inputs(node, inputs, 2)
    data, indices = inputs
    shape = shape_of(data)
    ax = axis(node, node.attr("axis", 0), len(shape))
    if isinstance(indices, HostTensor):
        index = [i + shape[ax] if i < 0 else i for i in indices.values]
        if any(not 0 <= i < shape[ax] for i in index):
            raise ValueError(f"{node.describe()}: indices {indices.values} out of range for axis {ax} "
                             f"of size {shape[ax]}")
        if isinstance(data, HostTensor):
            picked = take(data, [index if d == ax else list(range(n)) for d, n in enumerate(shape)])
            return [HostTensor(shape[:ax] + tuple(indices.shape) + shape[ax + 1:], picked.values, data.dtype)]
        indices = HostTensor(indices.shape, index, "int64")
    x, idx = ctx.tensor(data, node), ctx.tensor(indices, node)
    if idx.dtype.is_floating_point:
        raise ValueError(f"{node.describe()}: indices must be integers, got {idx.dtype}")
    out = x.index_select(ax, idx.reshape(-1).long())
    return [out.reshape(*shape[:ax], *shape_of(idx), *shape[ax + 1:])]


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "replicate", "wrap": "circular"}


@register("Pad")
def pad(ctx, node, inputs):
    """Pads (begin of each dim..., end of each...) and the value as attributes before opset
    11 (``paddings`` in opset 1), as inputs from 11; opset 18 adds ``axes``."""
    x = ctx.tensor(inputs[0] if inputs else None, node)
    mode = node.attr("mode", "constant")
    if mode not in _PAD_MODES:
        raise ValueError(f"{node.describe()}: mode must be one of {', '.join(_PAD_MODES)}, got {mode!r}")
    if node.opset < 11:
        count_inputs(node, inputs, 1)
        pads = ints_attr(node, "pads" if node.opset >= 2 else "paddings")
        value = number_attr(node, "value", 0.0)
    else:
        count_inputs(node, inputs, 2, 4)
        pads = ctx.ints(inputs[1], node, "pads")
        value = ctx.host(inputs[2], node, "constant_value").values[0] if len(inputs) > 2 and inputs[2] is not None \
            else 0.0
    axes = list(range(x.ndim))
    if len(inputs) > 3 and inputs[3] is not None:
        axes = [axis(node, a, x.ndim, "axes entry") for a in ctx.ints(inputs[3], node, "axes")]
    if pads is None or len(pads) != 2 * len(axes):
        raise ValueError(f"{node.describe()}: pads must hold a begin and an end for each of {len(axes)} axes, "
                         f"got {pads}")
    per_dim = {a: (pads[i], pads[i + len(axes)]) for i, a in enumerate(axes)}
    first = min([a for a, p in per_dim.items() if p != (0, 0)], default=x.ndim)
    pairs = []
    for d in range(x.ndim - 1, first - 1, -1):
        pairs += per_dim.get(d, (0, 0))
    if not pairs:
        return [x]
    return [F.pad(x, pairs, mode=_PAD_MODES[mode], value=value)]


@register("Tile")
def tile(ctx, node, inputs):
    count_inputs(node, inputs, 2)
    x = ctx.tensor(inputs[0], node)
    repeats = ctx.ints(inputs[1], node, "repeats")
    if len(repeats) != x.ndim or any(r < 0 for r in repeats):
        raise ValueError(f"{node.describe()}: repeats {repeats} must give one non-negative count per dim of "
                         f"{shape_of(x)}")
    return [x.repeat(*repeats)]


@register("Expand")
def expand(ctx, node, inputs):
    count_inputs(node, inputs, 2)
    x = ctx.tensor(inputs[0], node)
    dims = ctx.ints(inputs[1], node, "the shape")
    try:
        target = broadcast_shapes(shape_of(x), tuple(dims))
    except (ValueError, RuntimeError):
        raise ValueError(f"{node.describe()}: shape {shape_of(x)} does not broadcast to {dims}") from None
    return [x.reshape(*([1] * (len(target) - x.ndim)), *shape_of(x)).expand(*target)]


def _blocksize(node, x):
    b = node.attr("blocksize")
    if not isinstance(b, int) or b < 1 or x.ndim != 4:
        raise ValueError(f"{node.describe()}: needs a positive blocksize and an (N, C, H, W) input, got "
                         f"{b!r}, {shape_of(x)}")
    return b


@register("DepthToSpace")
def depth_to_space(ctx, node, inputs):
    """Channels to b x b blocks: mode DCR (depth, column, row; the default) or CRD."""
    count_inputs(node, inputs, 1)
    x = ctx.tensor(inputs[0], node)
    b = _blocksize(node, x)
    n, c, h, w = shape_of(x)
    if c % (b * b):
        raise ValueError(f"{node.describe()}: {c} channels do not divide by blocksize^2 = {b * b}")
    if node.attr("mode", "DCR") == "CRD":
        y = x.reshape(n, c // (b * b), b, b, h, w).permute(0, 1, 4, 2, 5, 3)
    else:
        y = x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    return [y.reshape(n, c // (b * b), h * b, w * b)]


@register("SpaceToDepth")
def space_to_depth(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    x = ctx.tensor(inputs[0], node)
    b = _blocksize(node, x)
    n, c, h, w = shape_of(x)
    if h % b or w % b:
        raise ValueError(f"{node.describe()}: H, W = {h}, {w} do not divide by blocksize {b}")
    y = x.reshape(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4)
    return [y.reshape(n, c * b * b, h // b, w // b)]


def _resize_sizes(ctx, node, x, scales, sizes):
    shape = shape_of(x)
    if sizes is not None:
        out = ctx.ints(sizes, node, "sizes")
    elif scales is not None:
        if isinstance(scales, list):
            factors = scales
        else:
            factors = [float(v) for v in ctx.host(scales, node, "scales").values]
        if len(factors) != len(shape) or any(f <= 0 for f in factors):
            raise ValueError(f"{node.describe()}: scales {factors} must give one positive factor per dim "
                             f"of {shape}")
        out = [int(math.floor(d * f)) for d, f in zip(shape, factors)]
    else:
        raise ValueError(f"{node.describe()}: give scales or sizes")
    if len(out) != len(shape) or list(out[:2]) != list(shape[:2]) or any(d < 1 for d in out):
        raise ValueError(f"{node.describe()}: resizes {shape} to {out}; only the spatial dims of an (N, C, ...) "
                         "input may change, to positive sizes")
    return out


def _interpolate(node, x, out, mode, transform):
    spatial = list(out[2:])
    integer = all(o % i == 0 for o, i in zip(spatial, shape_of(x)[2:]))
    if mode == "nearest":
        if transform != "asymmetric" and not integer:
            raise ValueError(f"{node.describe()}: nearest resizing with {transform!r} coordinates is "
                             "supported for integer scale factors only")
        if node.attr("nearest_mode", "round_prefer_floor" if transform != "asymmetric" else "floor") \
                not in ("floor", "round_prefer_floor") and transform == "asymmetric":
            raise ValueError(f"{node.describe()}: nearest_mode {node.attr('nearest_mode')!r} is not supported")
        return F.interpolate(x, size=tuple(spatial), mode="nearest")
    if mode == "linear" and x.ndim in (3, 4) and transform in ("half_pixel", "pytorch_half_pixel", "align_corners"):
        return F.interpolate(x, size=tuple(spatial), mode="linear" if x.ndim == 3 else "bilinear",
                             align_corners=transform == "align_corners")
    raise ValueError(f"{node.describe()}: mode {mode!r} with coordinate transformation {transform!r} "
                     f"on a {x.ndim}-d input is not supported (nearest, and linear with half_pixel or "
                     "align_corners on 3-d/4-d inputs, are)")


@register("Upsample")
def upsample(ctx, node, inputs):
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
    return [_interpolate(node, x, out, mode, "asymmetric" if mode == "nearest" else "half_pixel")]


def _float_host(t):
    """A small float tensor (scales) read back to the host: a constant folded at plan time."""
    return HostTensor(shape_of(t), [float(v) for v in t.reshape(-1).tolist()], "float32")


@register("Resize")
def resize(ctx, node, inputs):
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
    out = _resize_sizes(ctx, node, x, scales, sizes)
    return [_interpolate(node, x, out, node.attr("mode", "nearest"), transform)]
