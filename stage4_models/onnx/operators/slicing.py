"""Operators that cut and extend (chapter 13, "13_inference_compiler"): Slice (bounds as
attributes before opset 10, as inputs from 10; negative steps), Gather, Pad (attributes
before opset 11, inputs from 11). On host values they run on the host (host.py's take)."""
import stage2_tensor.nn.functional as F
from stage2_tensor import Tensor

from . import register
from .common import axis, check_size, count_inputs, ints_attr, number_attr
from .host import HostTensor, take
from ..shapes import shape_of


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
    """A slice's clamped (start, end, step) as ONNX defines them; the step clamped to the
    dim's extent, as onnxruntime does (one step that long already leaves the dim), so no
    stride past int64 reaches a view."""
    start += size if start < 0 else 0
    end += size if end < 0 else 0
    step = min(max(step, -max(size, 1)), max(size, 1))
    if step > 0:
        return min(max(start, 0), size), min(max(end, 0), size), step
    return min(max(start, -1), size - 1), min(max(end, -1), size - 1), step


@register("Slice")
def slice_(ctx, node, inputs):
    x = inputs[0] if inputs else None
    shape = shape_of(x)
    params = list(_slice_params(ctx, node, inputs, len(shape)))
    if isinstance(x, HostTensor):
        positions = [list(range(d)) for d in shape]
        for ax, start, end, step in params:
            start, end, step = _bounds(start, end, step, shape[ax])
            positions[ax] = positions[ax][start:end if end >= 0 else None:step]
        return [take(x, positions)]
    x = ctx.tensor(x, node)
    for ax, start, end, step in params:
        size = shape_of(x)[ax]
        start, end, step = _bounds(start, end, step, size)
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
        value = _pad_value(ctx, inputs[2], node) if len(inputs) > 2 and inputs[2] is not None else 0.0
    axes = list(range(x.ndim))
    if len(inputs) > 3 and inputs[3] is not None:
        axes = [axis(node, a, x.ndim, "axes entry") for a in ctx.ints(inputs[3], node, "axes")]
    if pads is None or len(pads) != 2 * len(axes):
        raise ValueError(f"{node.describe()}: pads must hold a begin and an end for each of {len(axes)} axes, "
                         f"got {pads}")
    per_dim = {a: (pads[i], pads[i + len(axes)]) for i, a in enumerate(axes)}
    check_size(node, [d + sum(per_dim.get(a, (0, 0))) for a, d in enumerate(shape_of(x))], x.dtype.itemsize)
    first = min([a for a, p in per_dim.items() if p != (0, 0)], default=x.ndim)
    pairs = []
    for d in range(x.ndim - 1, first - 1, -1):
        pairs += per_dim.get(d, (0, 0))
    if not pairs:
        return [x]
    return [F.pad(x, pairs, mode=_PAD_MODES[mode], value=value)]


def _pad_value(ctx, value, node):
    """Pad's constant_value: one number, a host value (shape arithmetic) or a float constant
    kept on the device (read once here: Pad takes it as a number)."""
    if isinstance(value, HostTensor):
        values = value.values
    elif isinstance(value, Tensor) and value.numel() == 1:
        values = [value.item()]
    else:
        values = ()
    if len(values) != 1:
        raise ValueError(f"{node.describe()}: constant_value must be one number, got "
                         f"{getattr(value, 'shape', type(value).__name__)}")
    return values[0]
