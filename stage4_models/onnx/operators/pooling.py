"""Pooling as ONNX defines it (chapter 13, "13_inference_compiler"): MaxPool, AveragePool
(count_include_pad, ceil_mode), GlobalAveragePool, GlobalMaxPool. Unequal pads, or pads
over half the kernel, are applied with F.pad first (-inf for a maximum). ``max_pool_into``
writes a MaxPool's result into a given tensor (a slice of a Concat's buffer:
passes/writes.py) through inference_kernels.max_pool_into."""
import math

import stage2_tensor as tg
from stage2_tensor import convolution

from . import inference_kernels, register
from .common import count_inputs
from ..shapes import shape_of
from .conv import kernel_shape, pad_spatial, window


def _pool_setup(node, x):
    kernel = kernel_shape(node)
    strides, dilations, begin, end = window(node, x, kernel)
    ceil_mode = bool(node.attr("ceil_mode", 0))
    return kernel, strides, dilations, begin, end, ceil_mode


def _equal_pads(begin, end, kernel):
    """Whether tracegrad's pools take these pads as they are (equal, at most half the kernel)."""
    return begin == end and all(2 * p <= k for p, k in zip(begin, kernel))


def max_pool_into(ctx, node, inputs, out):
    """The MaxPool node's result written into ``out`` (a tensor of its shape)."""
    return max_pool(ctx, node, inputs, dst=out)


@register("MaxPool")
def max_pool(ctx, node, inputs, dst=None):
    count_inputs(node, inputs, 1)
    if len(node.outputs) > 1 and node.outputs[1]:
        raise ValueError(f"{node.describe()}: the Indices output is not supported")
    x = ctx.tensor(inputs[0], node)
    kernel, strides, dilations, begin, end, ceil_mode = _pool_setup(node, x)
    if not _equal_pads(begin, end, kernel):
        x, begin = pad_spatial(x, begin, end, -math.inf), [0] * len(kernel)
    # max_pool_into: inference keeps no positions (into dst, or a new tensor without them)
    return [inference_kernels.max_pool_into(x, kernel, strides, begin, dilations, ceil_mode, out=dst, n=len(kernel))]


@register("AveragePool")
def avg_pool(ctx, node, inputs):
    """count_include_pad=0 (ONNX's default) divides by the positions inside the input."""
    count_inputs(node, inputs, 1)
    x = ctx.tensor(inputs[0], node)
    kernel, strides, dilations, begin, end, ceil_mode = _pool_setup(node, x)
    if dilations != [1] * len(kernel):
        raise ValueError(f"{node.describe()}: dilated average pooling is not supported")
    include = bool(node.attr("count_include_pad", 0))
    n = len(kernel)
    if _equal_pads(begin, end, kernel):
        return [convolution.avg_pool(x, kernel, strides, begin, ceil_mode, include, n=n)]
    mean = convolution.avg_pool(pad_spatial(x, begin, end), kernel, strides, 0, ceil_mode, True, n=n)
    if include:
        return [mean]
    ones = tg.ones(1, 1, *shape_of(x)[2:], dtype=x.dtype, device=x.device)   # which positions are inside
    inside = convolution.avg_pool(pad_spatial(ones, begin, end), kernel, strides, 0, ceil_mode, True, n=n)
    return [mean / inside]


@register("GlobalAveragePool", "GlobalMaxPool")
def global_pool(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    x = ctx.tensor(inputs[0], node)
    if x.ndim < 3:
        raise ValueError(f"{node.describe()}: expected an (N, C, spatial...) input, got shape {shape_of(x)}")
    dims = tuple(range(2, x.ndim))
    if node.op_type == "GlobalMaxPool":
        return [x.amax(dim=dims, keepdim=True)]
    return [x.mean(dim=dims, keepdim=True)]
