"""Convolution and transposed convolution as ONNX defines them (chapter 13,
"13_inference_compiler"), on stage2_tensor's convolution module; the window arithmetic
(strides, dilations, pads, auto_pad) pooling shares.

ONNX writes padding as ``pads`` = (begin of each spatial dim..., end of each...), or as
``auto_pad`` (SAME_UPPER, SAME_LOWER, VALID); tracegrad's functions take PyTorch's equal
padding on both sides, so an unequal one is applied first with F.pad. A Conv runs as
inference_kernels.conv (stage2's conv, its chunked no-gradient path one conv_bands call on
a device that has it).
"""
import math

import stage2_tensor.nn.functional as F
from stage2_tensor import convolution

from . import inference_kernels, register
from .common import check_size, count_inputs, ints_attr
from ..shapes import shape_of


def window(node, x, kernel):
    """(strides, dilations, begin pads, end pads) of a windowed op over x's spatial dims."""
    n = len(kernel)
    if x.ndim != n + 2:
        raise ValueError(f"{node.describe()}: a {n}-d kernel needs an (N, C, {n} spatial dims) input, "
                         f"got shape {shape_of(x)}")
    if any(k < 1 for k in kernel):
        raise ValueError(f"{node.describe()}: kernel_shape must be positive, got {kernel}")
    strides = ints_attr(node, "strides", [1] * n, n)
    dilations = ints_attr(node, "dilations", [1] * n, n)
    if any(s < 1 for s in strides) or any(d < 1 for d in dilations):
        raise ValueError(f"{node.describe()}: strides and dilations must be positive, got {strides}, {dilations}")
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        pads = ints_attr(node, "pads", [0] * 2 * n, 2 * n)
        if any(p < 0 for p in pads):
            raise ValueError(f"{node.describe()}: pads must be non-negative, got {pads}")
        begin, end = pads[:n], pads[n:]
    elif auto_pad == "VALID":
        begin, end = [0] * n, [0] * n
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for size, k, s, d in zip(shape_of(x)[2:], kernel, strides, dilations):
            total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
            small, large = total // 2, total - total // 2
            begin.append(small if auto_pad == "SAME_UPPER" else large)
            end.append(large if auto_pad == "SAME_UPPER" else small)
    else:
        raise ValueError(f"{node.describe()}: auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, "
                         f"got {auto_pad!r}")
    # the pads are the model's numbers: the padded input (what the op may make) must fit
    check_size(node, [*shape_of(x)[:2], *(i + b + e for i, b, e in zip(shape_of(x)[2:], begin, end))],
               x.dtype.itemsize, "padded input")
    return strides, dilations, begin, end


def pad_spatial(x, begin, end, value=0.0):
    """x padded by (begin, end) per spatial dim, in F.pad's order (last dim first)."""
    pairs = []
    for b, e in zip(reversed(begin), reversed(end)):
        pairs += [b, e]
    return F.pad(x, pairs, value=value)


def kernel_shape(node, default=None):
    kernel = ints_attr(node, "kernel_shape", default)
    if kernel is None:
        raise ValueError(f"{node.describe()}: attribute kernel_shape is required")
    return kernel


@register("Conv")
def conv(ctx, node, inputs):
    x, w, b, strides, begin, dilations, group = conv_operands(ctx, node, inputs)
    return [inference_kernels.conv(x, w, b, strides, begin, dilations, group, n=len(strides))]


def conv_into(ctx, node, inputs, relu=False, out=None):
    """The Conv node's result, ReLU'd when ``relu`` (a Conv and the Relu after it as one
    kernel), written into ``out`` (a slice of a Concat's buffer: passes/writes.py) or a
    new tensor: inference_kernels.conv_into, the device's conv_bands where it has one."""
    x, w, b, strides, begin, dilations, group = conv_operands(ctx, node, inputs)
    return inference_kernels.conv_into(x, w, b, strides, begin, dilations, group, relu=relu, out=out, n=len(strides))


def conv_operands(ctx, node, inputs):
    """A Conv's inputs and attributes checked: (x, w, b, strides, pads, dilations, group),
    an unequal padding applied to x first (tracegrad pads both sides alike)."""
    count_inputs(node, inputs, 2, 3)
    x, w = ctx.tensor(inputs[0], node), ctx.tensor(inputs[1], node)
    b = ctx.tensor(inputs[2], node) if len(inputs) > 2 else None
    if w.ndim < 3:
        raise ValueError(f"{node.describe()}: weight must be (M, C/group, k...), got shape {shape_of(w)}")
    kernel = kernel_shape(node, list(shape_of(w)[2:]))
    if kernel != list(shape_of(w)[2:]):
        raise ValueError(f"{node.describe()}: kernel_shape {kernel} disagrees with the weight's {shape_of(w)}")
    strides, dilations, begin, end = window(node, x, kernel)
    group = node.attr("group", 1)
    if not isinstance(group, int) or group < 1 or shape_of(x)[1] != shape_of(w)[1] * group \
            or shape_of(w)[0] % group:
        raise ValueError(f"{node.describe()}: group {group!r} does not fit input {shape_of(x)} and weight "
                         f"{shape_of(w)}")
    if begin != end:
        x, begin = pad_spatial(x, begin, end), [0] * len(kernel)
    return x, w, b, strides, begin, dilations, group


@register("ConvTranspose")
def conv_transpose(ctx, node, inputs):
    """The gradient of a convolution. ``output_shape`` (or auto_pad SAME_*: input x stride)
    decides the pads, the larger half at the end for SAME_UPPER, else at the start, and an
    output larger than the full result grows at the end (as onnxruntime does it); unequal
    pads crop the full result
    with F.pad's negative sizes (or pad it, where output_shape is larger)."""
    count_inputs(node, inputs, 2, 3)
    x, w = ctx.tensor(inputs[0], node), ctx.tensor(inputs[1], node)
    b = ctx.tensor(inputs[2], node) if len(inputs) > 2 else None
    n = w.ndim - 2
    if n < 1 or x.ndim != n + 2:
        raise ValueError(f"{node.describe()}: weight {shape_of(w)} and input {shape_of(x)} do not fit")
    kernel = kernel_shape(node, list(shape_of(w)[2:]))
    group = node.attr("group", 1)
    strides = ints_attr(node, "strides", [1] * n, n)
    dilations = ints_attr(node, "dilations", [1] * n, n)
    out_pad = ints_attr(node, "output_padding", [0] * n, n)
    if not isinstance(group, int) or group < 1 or any(v < 1 for v in strides + dilations):
        raise ValueError(f"{node.describe()}: group, strides and dilations must be positive, got {group!r}, "
                         f"{strides}, {dilations}")
    # the full result (before pads crop it) grows with the strides, the model's numbers: it must fit
    full = [s * (i - 1) + (k - 1) * d + 1 for s, i, k, d in zip(strides, shape_of(x)[2:], kernel, dilations)]
    check_size(node, [shape_of(x)[0], shape_of(w)[1] * group, *full], x.dtype.itemsize, "full result")
    output_shape = ints_attr(node, "output_shape")
    auto_pad = node.attr("auto_pad", "NOTSET")
    if output_shape is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        output_shape = [i * s for i, s in zip(shape_of(x)[2:], strides)]
    if output_shape is not None:
        output_shape = output_shape[-n:]
        total = [s * (i - 1) + op + (k - 1) * d + 1 - o for s, i, op, k, d, o in
                 zip(strides, shape_of(x)[2:], out_pad, kernel, dilations, output_shape)]
        upper = auto_pad == "SAME_UPPER"
        begin = [0 if t < 0 else t // 2 if upper else t - t // 2 for t in total]   # t < 0: grown at the end
        end = [t - bb for t, bb in zip(total, begin)]
    elif auto_pad == "VALID":
        begin = end = [0] * n
    else:
        pads = ints_attr(node, "pads", [0] * 2 * n, 2 * n)
        begin, end = pads[:n], pads[n:]
    check_size(node, [shape_of(x)[0], shape_of(w)[1] * group,
                      *(f - b - e + op for f, b, e, op in zip(full, begin, end, out_pad))], x.dtype.itemsize)
    if begin == end and all(p >= 0 for p in begin) and all(op < max(s, d) for op, s, d in
                                                          zip(out_pad, strides, dilations)):
        return [convolution.conv_transpose(x, w, b, strides, begin, out_pad, group, dilations, n=n)]
    y = convolution.conv_transpose(x, w, None, strides, 0, 0, group, dilations, n=n)
    y = pad_spatial(y, [-p for p in begin], [op - e for op, e in zip(out_pad, end)])
    if b is not None:
        y = y + b.reshape(-1, *([1] * n))
    return [y]
