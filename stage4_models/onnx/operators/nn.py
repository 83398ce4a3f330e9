"""Convolution, pooling, normalization, products and softmax as ONNX defines them
(chapter 13, "13_inference_compiler"), on stage2_tensor's F.conv*, pools and norms.

ONNX writes padding as ``pads`` = (begin of each spatial dim..., end of each...), or as
``auto_pad`` (SAME_UPPER, SAME_LOWER, VALID); tracegrad's functions take PyTorch's equal
padding on both sides, so an unequal one is applied first with F.pad.
"""
import math

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
from stage2_tensor import convolution

from . import register
from .common import axis, count_inputs, ints_attr, number_attr
from ..shapes import shape_of


def _window(node, x, kernel):
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
        return strides, dilations, pads[:n], pads[n:]
    if auto_pad == "VALID":
        return strides, dilations, [0] * n, [0] * n
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise ValueError(f"{node.describe()}: auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, "
                         f"got {auto_pad!r}")
    begin, end = [], []
    for size, k, s, d in zip(shape_of(x)[2:], kernel, strides, dilations):
        total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else large)
        end.append(large if auto_pad == "SAME_UPPER" else small)
    return strides, dilations, begin, end


def _pad(x, begin, end, value=0.0):
    """x padded by (begin, end) per spatial dim, in F.pad's order (last dim first)."""
    pairs = []
    for b, e in zip(reversed(begin), reversed(end)):
        pairs += [b, e]
    return F.pad(x, pairs, value=value)


def _kernel(node, default=None):
    kernel = ints_attr(node, "kernel_shape", default)
    if kernel is None:
        raise ValueError(f"{node.describe()}: attribute kernel_shape is required")
    return kernel


@register("Conv")
def conv(ctx, node, inputs):
    count_inputs(node, inputs, 2, 3)
    x, w = ctx.tensor(inputs[0], node), ctx.tensor(inputs[1], node)
    b = ctx.tensor(inputs[2], node) if len(inputs) > 2 else None
    if w.ndim < 3:
        raise ValueError(f"{node.describe()}: weight must be (M, C/group, k...), got shape {shape_of(w)}")
    kernel = _kernel(node, list(shape_of(w)[2:]))
    if kernel != list(shape_of(w)[2:]):
        raise ValueError(f"{node.describe()}: kernel_shape {kernel} disagrees with the weight's {shape_of(w)}")
    strides, dilations, begin, end = _window(node, x, kernel)
    group = node.attr("group", 1)
    if not isinstance(group, int) or group < 1 or shape_of(x)[1] != shape_of(w)[1] * group \
            or shape_of(w)[0] % group:
        raise ValueError(f"{node.describe()}: group {group!r} does not fit input {shape_of(x)} and weight "
                         f"{shape_of(w)}")
    if begin != end:
        x, begin = _pad(x, begin, end), [0] * len(kernel)
    return [convolution.conv(x, w, b, strides, begin, dilations, group, n=len(kernel))]


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
    kernel = _kernel(node, list(shape_of(w)[2:]))
    group = node.attr("group", 1)
    strides = ints_attr(node, "strides", [1] * n, n)
    dilations = ints_attr(node, "dilations", [1] * n, n)
    out_pad = ints_attr(node, "output_padding", [0] * n, n)
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
    if begin == end and all(p >= 0 for p in begin) and all(op < max(s, d) for op, s, d in
                                                          zip(out_pad, strides, dilations)):
        return [convolution.conv_transpose(x, w, b, strides, begin, out_pad, group, dilations, n=n)]
    y = convolution.conv_transpose(x, w, None, strides, 0, 0, group, dilations, n=n)
    y = _pad(y, [-p for p in begin], [op - e for op, e in zip(out_pad, end)])
    if b is not None:
        y = y + b.reshape(-1, *([1] * n))
    return [y]


def _pool_setup(node, x):
    kernel = _kernel(node)
    strides, dilations, begin, end = _window(node, x, kernel)
    ceil_mode = bool(node.attr("ceil_mode", 0))
    return kernel, strides, dilations, begin, end, ceil_mode


def _equal_pads(begin, end, kernel):
    """Whether tracegrad's pools take these pads as they are (equal, at most half the kernel)."""
    return begin == end and all(2 * p <= k for p, k in zip(begin, kernel))


@register("MaxPool")
def max_pool(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    if len(node.outputs) > 1 and node.outputs[1]:
        raise ValueError(f"{node.describe()}: the Indices output is not supported")
    x = ctx.tensor(inputs[0], node)
    kernel, strides, dilations, begin, end, ceil_mode = _pool_setup(node, x)
    if not _equal_pads(begin, end, kernel):
        x, begin = _pad(x, begin, end, -math.inf), [0] * len(kernel)
    return [convolution.max_pool(x, kernel, strides, begin, dilations, ceil_mode, n=len(kernel))]


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
    mean = convolution.avg_pool(_pad(x, begin, end), kernel, strides, 0, ceil_mode, True, n=n)
    if include:
        return [mean]
    ones = tg.ones(1, 1, *shape_of(x)[2:], dtype=x.dtype, device=x.device)   # which positions are inside
    inside = convolution.avg_pool(_pad(ones, begin, end), kernel, strides, 0, ceil_mode, True, n=n)
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


@register("BatchNormalization")
def batch_norm(ctx, node, inputs):
    """Inference: the running statistics. Opsets before 7 carry is_test, consumed_inputs and
    spatial; spatial=0 (statistics per activation) is not supported."""
    count_inputs(node, inputs, 5)
    if not node.attr("spatial", 1):
        raise ValueError(f"{node.describe()}: spatial=0 is not supported")
    if node.attr("training_mode", 0) or len([o for o in node.outputs if o]) > 1:
        raise ValueError(f"{node.describe()}: training mode (running statistics as outputs) is not supported")
    x, scale, bias, mean, var = (ctx.tensor(v, node) for v in inputs)
    return [F.batch_norm(x, mean, var, scale, bias, training=False, eps=number_attr(node, "epsilon", 1e-5))]


@register("InstanceNormalization")
def instance_norm(ctx, node, inputs):
    count_inputs(node, inputs, 3)
    x, scale, bias = (ctx.tensor(v, node) for v in inputs)
    return [F.instance_norm(x, weight=scale, bias=bias, eps=number_attr(node, "epsilon", 1e-5))]


@register("LRN")
def lrn(ctx, node, inputs):
    """Local response normalization across channels: x / (bias + alpha/size * sum of x^2
    over the ``size`` channels around)^beta."""
    count_inputs(node, inputs, 1)
    x = ctx.tensor(inputs[0], node)
    size = node.attr("size")
    if not isinstance(size, int) or size < 1 or x.ndim < 3:
        raise ValueError(f"{node.describe()}: size must be a positive int and the input (N, C, ...), got "
                         f"size {size!r}, shape {shape_of(x)}")
    alpha, beta = number_attr(node, "alpha", 1e-4), number_attr(node, "beta", 0.75)
    bias = number_attr(node, "bias", 1.0)
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    squares = F.pad(x * x, [0, 0] * (x.ndim - 2) + [before, after])
    c = shape_of(x)[1]
    window = squares[:, 0:c]
    for i in range(1, size):
        window = window + squares[:, i:i + c]
    return [x / (bias + (alpha / size) * window).pow(beta)]


@register("Gemm")
def gemm(ctx, node, inputs):
    count_inputs(node, inputs, 2, 3)
    a, b = ctx.tensor(inputs[0], node), ctx.tensor(inputs[1], node)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"{node.describe()}: A and B must be matrices, got {shape_of(a)} and {shape_of(b)}")
    if node.attr("transA", 0):
        a = a.t()
    if node.attr("transB", 0):
        b = b.t()
    if shape_of(a)[1] != shape_of(b)[0]:
        raise ValueError(f"{node.describe()}: A {shape_of(a)} and B {shape_of(b)} do not multiply")
    y = a @ b
    alpha, beta = number_attr(node, "alpha", 1.0), number_attr(node, "beta", 1.0)
    if alpha != 1.0:
        y = alpha * y
    if len(inputs) > 2 and inputs[2] is not None and beta != 0.0:
        c = ctx.tensor(inputs[2], node)
        y = y + (c if beta == 1.0 else beta * c)
    return [y]


@register("MatMul")
def matmul(ctx, node, inputs):
    count_inputs(node, inputs, 2)
    return [tg.matmul(ctx.tensor(inputs[0], node), ctx.tensor(inputs[1], node))]


@register("Softmax", "LogSoftmax")
def softmax(ctx, node, inputs):
    """From opset 13 along ``axis`` (default -1); before, the input is seen as 2-d, the
    dims before ``axis`` (default 1) as rows, all the rest as one row of the softmax."""
    count_inputs(node, inputs, 1)
    x = ctx.tensor(inputs[0], node)
    fn = F.softmax if node.op_type == "Softmax" else F.log_softmax
    if node.opset >= 13:
        return [fn(x, axis(node, node.attr("axis", -1), x.ndim))]
    ax = axis(node, node.attr("axis", 1), x.ndim) if x.ndim else 0
    shape = shape_of(x)
    rows = math.prod(shape[:ax])
    return [fn(x.reshape(rows, -1), 1).reshape(*shape)]
