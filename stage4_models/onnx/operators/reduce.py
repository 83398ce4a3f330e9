"""Reductions (chapter 13, "13_inference_compiler"): ReduceMean, ReduceSum, ReduceMax,
ReduceMin. Axes are an attribute, or an input from opset 13 (ReduceSum)
and 18 (the others); keepdims defaults to 1; no axes means all of them, unless
noop_with_empty_axes."""
from . import register
from .common import axis, count_inputs, ints_attr

_AXES_INPUT_SINCE = {"ReduceSum": 13}


@register("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin")
def reduce(ctx, node, inputs):
    x = ctx.tensor(inputs[0] if inputs else None, node)
    if node.opset < _AXES_INPUT_SINCE.get(node.op_type, 18):
        count_inputs(node, inputs, 1)
        axes = ints_attr(node, "axes")
    else:
        count_inputs(node, inputs, 1, 2)
        axes = ctx.ints(inputs[1], node, "axes") if len(inputs) > 1 and inputs[1] is not None else None
        if not axes and node.attr("noop_with_empty_axes", 0):
            return [x]
    keep = bool(node.attr("keepdims", 1))
    dims = tuple(range(x.ndim)) if not axes else tuple(sorted({axis(node, a, x.ndim, "axes entry") for a in axes}))
    if node.op_type == "ReduceMean":
        return [x.mean(dim=dims, keepdim=keep)]
    if node.op_type == "ReduceSum":
        return [x.sum(dim=dims, keepdim=keep)]
    return [(x.amax if node.op_type == "ReduceMax" else x.amin)(dim=dims, keepdim=keep)]
