"""Comparisons, logic and Where (chapter 13, "13_inference_compiler"): what exporters write
for masks and for choosing between sizes. On host values (shapes) they stay on the host."""
import operator

import stage2_tensor as tg

from . import register
from .common import count_inputs
from .host import HostTensor

_COMPARE = {"Equal": operator.eq, "Less": operator.lt, "Greater": operator.gt, "LessOrEqual": operator.le,
            "GreaterOrEqual": operator.ge}


def _host_pairs(a, b):
    """Element pairs of two host scalars or vectors under broadcasting, and the shape; or None."""
    if a.ndim > 1 or b.ndim > 1 or len({len(a.values), len(b.values)} - {1}) > 1:
        return None
    n = max(len(a.values), len(b.values))
    av = a.values * n if len(a.values) == 1 else a.values
    bv = b.values * n if len(b.values) == 1 else b.values
    return list(zip(av, bv)), ((n,) if a.ndim or b.ndim else ())


def _bool(ctx, node, v):
    t = ctx.tensor(v, node)
    if t.dtype is not tg.bool:
        raise ValueError(f"{node.describe()}: expected a bool tensor, got {t.dtype}")
    return t


@register(*_COMPARE)
def compare(ctx, node, inputs):
    count_inputs(node, inputs, 2)
    a, b = inputs
    fn = _COMPARE[node.op_type]
    if isinstance(a, HostTensor) and isinstance(b, HostTensor) and _host_pairs(a, b):
        pairs, shape = _host_pairs(a, b)
        return [HostTensor(shape, [fn(x, y) for x, y in pairs], "bool")]
    return [fn(ctx.tensor(a, node), ctx.tensor(b, node))]


@register("Not")
def logical_not(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    if isinstance(inputs[0], HostTensor):
        return [HostTensor(inputs[0].shape, [not v for v in inputs[0].values], "bool")]
    x = _bool(ctx, node, inputs[0])
    return [x == tg.zeros_like(x)]


@register("And", "Or")
def logical(ctx, node, inputs):
    count_inputs(node, inputs, 2)
    a, b = _bool(ctx, node, inputs[0]), _bool(ctx, node, inputs[1])
    return [tg.where(a, b, a) if node.op_type == "And" else tg.where(a, a, b)]


@register("Where")
def where(ctx, node, inputs):
    count_inputs(node, inputs, 3)
    cond, a, b = inputs
    if all(isinstance(v, HostTensor) for v in inputs) and cond.ndim <= 1 and a.ndim <= 1 and b.ndim <= 1 \
            and a.dtype == b.dtype:
        n = max(len(v.values) for v in inputs)
        if all(len(v.values) in (1, n) for v in inputs):
            pick = [v.values * n if len(v.values) == 1 else v.values for v in inputs]
            shape = (n,) if any(v.ndim for v in inputs) else ()
            return [HostTensor(shape, [x if c else y for c, x, y in zip(*pick)], a.dtype)]
    return [tg.where(_bool(ctx, node, cond), ctx.tensor(a, node), ctx.tensor(b, node))]
