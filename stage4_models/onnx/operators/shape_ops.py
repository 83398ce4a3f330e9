"""Operators whose results are shapes and constants (chapter 13, "13_inference_compiler"):
Shape, Size, Cast, Constant, ConstantOfShape, Range. Integer results stay on the host
(host.py); they are how an exported model computes its own padding and reshape targets."""
import math

import numpy as np

from . import register
from .common import check_size, count_inputs
from .context import tg_dtype
from .host import HostTensor, cast_values, fits_host
from ..shapes import shape_of


@register("Shape")
def shape(ctx, node, inputs):
    """The input's shape as an int64 vector; from opset 15, the dims from start to end."""
    count_inputs(node, inputs, 1)
    dims = list(shape_of(inputs[0]))
    start, end = node.attr("start", 0), node.attr("end", None)
    dims = dims[slice(start, end)]
    return [HostTensor((len(dims),), dims, "int64")]


@register("Size")
def size(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    return [HostTensor((), [math.prod(shape_of(inputs[0]))], "int64")]


def _onnx_dtype(node, code):
    from ..importer import numpy_dtype
    return numpy_dtype(code, node.describe())


@register("Cast")
def cast(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    to = node.attr("to")
    if isinstance(to, str):                 # opset 6 and earlier name the type
        from onnx import TensorProto
        to = getattr(TensorProto, to.upper(), None)
    if not isinstance(to, int):
        raise ValueError(f"{node.describe()}: attribute 'to' must name an element type, got {to!r}")
    dtype = _onnx_dtype(node, to)
    x = inputs[0]
    if isinstance(x, HostTensor) and fits_host(dtype, x.shape):
        return [HostTensor(x.shape, cast_values(x.values, dtype), dtype)]
    x = ctx.tensor(x, node)
    target = tg_dtype(dtype, node.describe())
    if target.is_floating_point and ctx.float_dtype is not None:
        target = ctx.float_dtype
    return [x.to(dtype=target)]


@register("Constant")
def constant(ctx, node, inputs):
    count_inputs(node, inputs, 0)
    return [ctx.constant(constant_array(node))]


def constant_array(node):
    """A Constant node's value as a numpy array, from whichever attribute holds it."""
    attrs = node.attributes
    if "value" in attrs:
        array = attrs["value"]
    elif "value_float" in attrs or "value_floats" in attrs:
        array = np.array(attrs.get("value_float", attrs.get("value_floats")), dtype=np.float32)
    elif "value_int" in attrs or "value_ints" in attrs:
        array = np.array(attrs.get("value_int", attrs.get("value_ints")), dtype=np.int64)
    else:
        raise ValueError(f"{node.describe()}: expected attribute value (or value_float(s), value_int(s)), "
                         f"got {sorted(attrs)}")
    if not isinstance(array, np.ndarray):
        raise ValueError(f"{node.describe()}: attribute value must be a tensor")
    return array


@register("ConstantOfShape")
def constant_of_shape(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    dims = ctx.ints(inputs[0], node, "the shape")
    value = node.attr("value")
    if value is None:
        value = np.zeros((1,), dtype=np.float32)
    if not isinstance(value, np.ndarray) or value.size != 1:
        raise ValueError(f"{node.describe()}: attribute value must be a one-element tensor")
    dtype = value.dtype.name
    check_size(node, dims, value.dtype.itemsize)
    if fits_host(dtype, dims):
        return [HostTensor(dims, [value.reshape(-1)[0].item()] * math.prod(dims), dtype)]
    import stage2_tensor as tg
    target = tg_dtype(dtype, node.describe())
    if target.is_floating_point and ctx.float_dtype is not None:
        target = ctx.float_dtype
    return [tg.full(tuple(dims), value.reshape(-1)[0].item(), dtype=target, device=ctx.device)]


@register("Range")
def range_(ctx, node, inputs):
    """max(ceil((limit - start) / delta), 0) entries start + i * delta, counted before any is
    made: a long one is made by numpy on the device, not as a Python list."""
    count_inputs(node, inputs, 3)
    start, limit, delta = (ctx.host(v, node, "a Range bound") for v in inputs)
    s, lim, d = start.values[0], limit.values[0], delta.values[0]
    if d == 0 or not all(math.isfinite(v) for v in (s, lim, d)):
        raise ValueError(f"{node.describe()}: start, limit and delta must be finite and delta not 0, "
                         f"got {s}, {lim}, {d}")
    n = max(math.ceil((lim - s) / d), 0)       # (in floats, as onnxruntime counts)
    if fits_host(start.dtype, (n,)):
        return [HostTensor((n,), [s + i * d for i in range(n)], start.dtype)]
    check_size(node, (n,), np.dtype(start.dtype).itemsize)
    import stage2_tensor as tg
    target = tg_dtype(start.dtype, node.describe())
    values = (s + d * np.arange(n)).astype(target.name)
    return [tg.from_numpy(values, device=ctx.device)]
