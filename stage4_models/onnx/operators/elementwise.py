"""Element-wise ONNX operators (chapter 13, "13_inference_compiler"): activations,
arithmetic with broadcasting (and the ``broadcast``/``axis`` attributes of opsets before 7),
the variadic Sum, Max, Min, Mean. Arithmetic on host values (shapes) stays on the host."""
import math
import operator
from functools import partial

import stage2_tensor as tg
import stage2_tensor.nn.functional as F

from . import register
from .common import count_inputs, number_attr
from .host import HostTensor
from ..shapes import shape_of

_UNARY = {
    "Relu": lambda x: x.relu(), "Sigmoid": lambda x: x.sigmoid(), "Tanh": lambda x: x.tanh(),
    "Exp": lambda x: x.exp(), "Log": lambda x: x.log(), "Sqrt": lambda x: x.sqrt(), "Neg": lambda x: -x,
    "Abs": lambda x: x.abs(), "Reciprocal": lambda x: 1.0 / x, "Floor": lambda x: x.floor(),
    "Ceil": lambda x: x.ceil(), "Erf": lambda x: x.erf(), "Softplus": lambda x: F.softplus(x),
    "Softsign": lambda x: x / (1.0 + x.abs()), "Sin": lambda x: x.sin(), "Cos": lambda x: x.cos(),
}


@register(*_UNARY)
def unary(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    return [_UNARY[node.op_type](ctx.tensor(inputs[0], node))]


@register("LeakyRelu")
def leaky_relu(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    return [F.leaky_relu(ctx.tensor(inputs[0], node), number_attr(node, "alpha", 0.01))]


@register("Elu")
def elu(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    return [F.elu(ctx.tensor(inputs[0], node), number_attr(node, "alpha", 1.0))]


@register("Selu")
def selu(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    x = ctx.tensor(inputs[0], node)
    alpha = number_attr(node, "alpha", 1.67326319217681884765625)
    gamma = number_attr(node, "gamma", 1.05070102214813232421875)
    return [gamma * tg.where(x > 0, x, alpha * (x.exp() - 1.0))]


@register("HardSigmoid")
def hard_sigmoid(ctx, node, inputs):
    count_inputs(node, inputs, 1)
    x = ctx.tensor(inputs[0], node)
    return [(number_attr(node, "alpha", 0.2) * x + number_attr(node, "beta", 0.5)).clamp(0.0, 1.0)]


@register("PRelu")
def prelu(ctx, node, inputs):
    """x where x >= 0, slope * x elsewhere. Before opset 7 a 1-d slope of C entries applied
    per channel (dimension 1); from opset 7 it broadcasts the numpy way, from the right."""
    count_inputs(node, inputs, 2)
    x, slope = ctx.tensor(inputs[0], node), ctx.tensor(inputs[1], node)
    xs, ss = shape_of(x), shape_of(slope)
    if len(ss) == 1 and len(xs) >= 2 and ss[0] == xs[1] != xs[-1]:
        slope = slope.reshape(ss[0], *([1] * (len(xs) - 2)))
    return [tg.where(x < 0, x * slope, x)]


@register("Clip")
def clip(ctx, node, inputs):
    """Bounds as attributes min, max before opset 11, as optional inputs from opset 11 (one
    value each, a constant or computed from the data: applied with maximum and minimum)."""
    if node.opset < 11:
        count_inputs(node, inputs, 1)
        low, high = node.attr("min"), node.attr("max")
        x = ctx.tensor(inputs[0], node)
        return [x if low is None and high is None else x.clamp(low, high)]
    count_inputs(node, inputs, 1, 3)
    x = ctx.tensor(inputs[0], node)
    for bound, fn in zip(inputs[1:], (tg.maximum, tg.minimum)):
        if bound is None:
            continue
        if math.prod(shape_of(bound)) != 1:
            raise ValueError(f"{node.describe()}: a bound must hold one value, got shape {shape_of(bound)}")
        x = fn(x, ctx.tensor(bound, node).reshape(()).to(dtype=x.dtype))
    return [x]


def _legacy_broadcast(node, a, b):
    """Opsets before 7: b broadcasts onto a only with broadcast=1, its dims aligned at
    ``axis`` (default: aligned right, as numpy does); without it the shapes must match."""
    if node.opset >= 7:
        return b
    if not node.attr("broadcast", 0):
        if shape_of(a) != shape_of(b):
            raise ValueError(f"{node.describe()}: shapes {shape_of(a)} and {shape_of(b)} differ and "
                             "the node does not set broadcast=1")
        return b
    ax = node.attr("axis")
    if ax is None or b.ndim == 0:
        return b
    ax %= max(a.ndim, 1)
    if ax + b.ndim > a.ndim:
        raise ValueError(f"{node.describe()}: a {b.ndim}-d operand cannot broadcast at axis {ax} onto shape "
                         f"{shape_of(a)}")
    return b.reshape(*shape_of(b), *([1] * (a.ndim - ax - b.ndim)))


def _host_broadcast(a, b):
    """The broadcast shape of two host values (scalars or vectors), or None."""
    if a.ndim > 1 or b.ndim > 1:
        return None
    n = {len(a.values), len(b.values)} - {1}
    if len(n) > 1:
        return None
    size = n.pop() if n else 1
    return (size,) if a.ndim or b.ndim else ()


def _int_div(x, y):
    """C's integer division, truncating toward zero (what ONNX runtimes compute)."""
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


_HOST_BINARY = {"Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "Div": None,
                "Mod": None, "Max": max, "Min": min, "Pow": operator.pow}
_BITS = {"int64": 64, "int32": 32, "int16": 16, "int8": 8, "uint8": 8}


def _int_pow(x, y, bits):
    """x ** y wrapped to ``bits`` as a C integer power would be, in time and memory bounded
    by the bits (an untrusted exponent of 10**9 costs nothing); a negative exponent gives
    the integer part of the fraction (0 but for x = 1 or -1)."""
    if y < 0:
        if x == 0:
            raise ZeroDivisionError
        return 1 if x == 1 else ((-1) ** (y % 2) if x == -1 else 0)
    return pow(x, y, 1 << bits)


def _wrap(value, dtype):
    """An integer result as the dtype holds it (two's complement), as a runtime's int64 does."""
    bits = _BITS[dtype]
    value &= (1 << bits) - 1
    return value - (1 << bits) if dtype != "uint8" and value >> (bits - 1) else value


def _host_binary(op_type, a, b, fmod=0):
    """op_type on two host scalars or vectors, or None where the host does not compute it."""
    shape = _host_broadcast(a, b)
    if shape is None or a.dtype != b.dtype:
        return None
    integer = a.dtype in ("int64", "int32", "int16", "int8", "uint8")
    fn = _HOST_BINARY[op_type]
    if op_type == "Div":
        fn = _int_div if integer else operator.truediv
    if op_type == "Mod":
        fn = (lambda x, y: x - _int_div(x, y) * y) if fmod else operator.mod
    if op_type == "Pow" and integer:
        fn = partial(_int_pow, bits=_BITS[a.dtype])
    n = shape[0] if shape else 1
    av = a.values * n if len(a.values) == 1 else a.values
    bv = b.values * n if len(b.values) == 1 else b.values
    try:
        values = [fn(x, y) for x, y in zip(av, bv)]
    except ZeroDivisionError:
        raise ValueError(f"{op_type}: division by zero in shape arithmetic") from None
    if integer:
        values = [_wrap(v, a.dtype) for v in values]
    return HostTensor(shape, values, a.dtype)


_DEVICE_BINARY = {"Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "Div": operator.truediv,
                  "Pow": lambda a, b: a.pow(b), "Max": tg.maximum, "Min": tg.minimum,
                  "Mod": lambda a, b: a.remainder(b)}


@register("Add", "Sub", "Mul", "Div", "Pow", "Mod")
def binary(ctx, node, inputs):
    count_inputs(node, inputs, 2)
    a, b = inputs
    if isinstance(a, HostTensor) and isinstance(b, HostTensor):
        result = _host_binary(node.op_type, a, b, node.attr("fmod", 0))
        if result is not None:
            return [result]
    a, b = ctx.tensor(a, node), ctx.tensor(b, node)
    if node.op_type == "Div" and not a.dtype.is_floating_point:
        return [(a.floor_divide(b))]      # integer tensors divide to integers (none in the tests' data)
    return [_DEVICE_BINARY[node.op_type](a, _legacy_broadcast(node, a, b))]


@register("Sum", "Max", "Min", "Mean")
def variadic(ctx, node, inputs):
    """Sum, Max, Min, Mean of one or more inputs, broadcasting (numpy's way from opset 8)."""
    if not inputs or any(v is None for v in inputs):
        raise ValueError(f"{node.describe()}: expected one or more inputs, got {node.inputs}")
    if all(isinstance(v, HostTensor) for v in inputs) and node.op_type in ("Sum", "Max", "Min"):
        op_type = "Add" if node.op_type == "Sum" else node.op_type
        result = inputs[0]
        for v in inputs[1:]:
            result = _host_binary(op_type, result, v) if result is not None else None
        if result is not None:
            return [result]
    tensors = [ctx.tensor(v, node) for v in inputs]
    fn = {"Sum": operator.add, "Mean": operator.add, "Max": tg.maximum, "Min": tg.minimum}[node.op_type]
    result = tensors[0]
    for t in tensors[1:]:
        result = fn(result, t)
    return [result / len(tensors) if node.op_type == "Mean" else result]
