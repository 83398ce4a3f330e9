"""Operators that rearrange values without arithmetic (chapter 13, "13_inference_compiler"):
Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Split, Tile, Expand, Identity,
Dropout. Their parameters (target shapes, axes) are host values; on host values (shapes
and pads being assembled) Reshape, Transpose, Concat, Squeeze and Unsqueeze run on the
host too (host.py's permute). Slice, Gather and Pad: slicing.py; Resize: resize.py."""
import math

import stage2_tensor as tg
from stage2_tensor.broadcast import broadcast_shapes

from . import register
from .common import axis, check_size, count_inputs, ints_attr
from .host import HostTensor, permute
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


@register("Tile")
def tile(ctx, node, inputs):
    count_inputs(node, inputs, 2)
    x = ctx.tensor(inputs[0], node)
    repeats = ctx.ints(inputs[1], node, "repeats")
    if len(repeats) != x.ndim or any(r < 0 for r in repeats):
        raise ValueError(f"{node.describe()}: repeats {repeats} must give one non-negative count per dim of "
                         f"{shape_of(x)}")
    check_size(node, [d * r for d, r in zip(shape_of(x), repeats)], x.dtype.itemsize)
    return [x.repeat(*repeats)]


@register("Expand")
def expand(ctx, node, inputs):
    count_inputs(node, inputs, 2)
    x = ctx.tensor(inputs[0], node)
    dims = ctx.ints(inputs[1], node, "the shape")
    try:
        target = broadcast_shapes(shape_of(x), tuple(dims)) if min(dims, default=0) >= 0 else None
    except (ValueError, RuntimeError):
        target = None
    if target is None:
        raise ValueError(f"{node.describe()}: shape {shape_of(x)} does not broadcast to {dims}")
    # a view, but what reads it makes the whole tensor (onnxruntime makes it here)
    check_size(node, target, x.dtype.itemsize)
    return [x.reshape(*([1] * (len(target) - x.ndim)), *shape_of(x)).expand(*target)]
