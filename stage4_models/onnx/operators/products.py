"""Matrix products and softmax (chapter 13, "13_inference_compiler"): Gemm, MatMul, Softmax
and LogSoftmax (with the 2-d coercion of opsets before 13)."""
import math

import stage2_tensor as tg
import stage2_tensor.nn.functional as F

from . import register
from .common import axis, count_inputs, number_attr
from ..shapes import shape_of


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
