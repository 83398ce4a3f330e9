"""Normalizations (chapter 13, "13_inference_compiler"): BatchNormalization with running
statistics, InstanceNormalization, and LRN (local response normalization) across channels."""

import stage2_tensor.nn.functional as F

from . import register
from .common import count_inputs, number_attr
from ..shapes import shape_of


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
