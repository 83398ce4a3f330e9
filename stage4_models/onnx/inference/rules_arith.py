"""Shape rules of the element-wise operators and of the shape arithmetic itself (chapter 13,
"13_inference_compiler": symbolic shapes): Add, Sub, Mul, Div, Mod, Pow, Sum, Max, Min,
Mean, the comparisons and logic, Where, PRelu (shapes broadcast: equal, or 1), and Shape,
Size, Cast, Constant, ConstantOfShape, Range, whose *values* are expressions: Shape(x) is
x's symbolic shape, and what an exporter computes from it (``(2 - H % 2) % 2``) is computed
here on expressions, entry by entry.

Entries are ``Expr`` (integers) or Python floats (float constants). Integer ``Div`` of a
symbolic entry is floor division: ONNX truncates, which is the same on the nonnegative
extents shape arithmetic works with. What a rule cannot compute on expressions (a float
division of an extent, a comparison of two symbolic extents) leaves the value unknown.
"""
import math
import operator

import numpy as np

from ..operators.shape_ops import constant_array
from ..symbolic import Expr, as_expr
from . import rule
from .values import (INT_DTYPES, VALUE_MAX_ELEMENTS, CannotInfer, Sym, broadcast, dmax, dmin, from_array, ints,
                     is_static, object_array, product, shape, static)


def _plain(v):
    """A constant Expr as an int; a float or a symbolic Expr as it is."""
    return v.const if isinstance(v, Expr) and v.is_constant() else v


def _trunc_div(x, y):
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _binary(op_type, fmod):
    """The entry-wise function of op_type on entries (Expr or float), or CannotInfer."""
    def fn(a, b):
        a, b = _plain(a), _plain(b)
        symbolic = isinstance(a, Expr) or isinstance(b, Expr)
        if symbolic and any(isinstance(v, float) and not v.is_integer() for v in (a, b)):
            raise CannotInfer(f"{op_type} of an extent and a fraction")
        if symbolic:
            a, b = (int(v) if isinstance(v, float) else v for v in (a, b))
        if op_type in ("Add", "Sum"):
            return a + b
        if op_type == "Sub":
            return a - b
        if op_type == "Mul":
            return a * b
        if op_type == "Max":
            return dmax(a, b) if symbolic else max(a, b)
        if op_type == "Min":
            return dmin(a, b) if symbolic else min(a, b)
        if op_type == "Div":
            if isinstance(a, float) or isinstance(b, float):
                if symbolic:
                    raise CannotInfer("a float division of an extent")
                return a / b
            return a // b if symbolic else _trunc_div(a, b)
        if op_type == "Mod":
            if fmod and symbolic:
                raise CannotInfer("fmod of an extent")
            return math.fmod(a, b) if fmod else a % b
        if op_type == "Pow" and not symbolic and (isinstance(a, float) or isinstance(b, float) or 0 <= b <= 64):
            return a ** b               # (bounded: an untrusted exponent cannot stall the import)
        if op_type in _COMPARE and not symbolic:
            return int(_COMPARE[op_type](a, b))
        if op_type == "Equal" and as_expr(a) == as_expr(b):
            return 1
        if op_type in ("And", "Or") and not symbolic:
            return int(bool(a) and bool(b)) if op_type == "And" else int(bool(a) or bool(b))
        raise CannotInfer(f"{op_type} of symbolic extents")
    return fn


_COMPARE = {"Equal": operator.eq, "Less": operator.lt, "LessOrEqual": operator.le, "Greater": operator.gt,
            "GreaterOrEqual": operator.ge}


def _entry(v, dtype):
    if isinstance(v, Expr):
        return v
    if dtype in INT_DTYPES or isinstance(v, (int, np.integer)):
        return as_expr(int(v))
    return float(v)


def _combine(op_type, node, syms, out_shape, dtype):
    """The value of an element-wise op on values, or None when one is unknown or the rule
    cannot compute it."""
    if any(s.value is None for s in syms) or not is_static(out_shape) or op_type == "Mean":
        return None
    fn = np.frompyfunc(_binary(op_type, node.attr("fmod", 0)), 2, 1)
    arrays = np.broadcast_arrays(*[s.value for s in syms])
    result = arrays[0]
    try:
        for a in arrays[1:]:
            result = fn(result, a)
    except (CannotInfer, ZeroDivisionError, OverflowError, TypeError, ValueError):
        return None         # (ValueError: legacy broadcasting along an axis, not numpy's)
    result = np.asarray(result, dtype=object).reshape(static(out_shape))
    return object_array([_entry(v, dtype) for v in result.reshape(-1)], result.shape)


@rule("Add", "Sub", "Mul", "Div", "Mod", "Pow", "Sum", "Max", "Min", "Mean", "PRelu",
      "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or")
def elementwise(inf, node, ins):
    """Broadcast shapes (opsets before 7: B onto A, A's shape); a dim that is neither
    provably equal across the inputs nor 1 refuses the model, as a Concat does."""
    shapes = [shape(s) for s in ins]
    if node.opset < 7 and node.op_type in ("Add", "Sub", "Mul", "Div", "Pow") or node.op_type == "PRelu":
        out = shapes[0]
    else:
        out = broadcast(inf, shapes, node.describe())
    logical = node.op_type in _COMPARE or node.op_type in ("And", "Or")
    dtype = "bool" if logical else ins[0].dtype
    return [Sym(out, dtype, _combine(node.op_type, node, ins, out, dtype))]


@rule("Where")
def where(inf, node, ins):
    out = broadcast(inf, [shape(s) for s in ins], node.describe())
    value = None
    if all(s.value is not None for s in ins) and is_static(out):
        cond, a, b = np.broadcast_arrays(*[s.value for s in ins])
        if all(as_expr(c).is_constant() for c in cond.reshape(-1)):
            picked = [x if int(c) else y for c, x, y in zip(cond.reshape(-1), a.reshape(-1), b.reshape(-1))]
            value = object_array(picked, static(out))
    return [Sym(out, ins[1].dtype, value)]


@rule("Shape")
def shape_(inf, node, ins):
    """Its value is the input's symbolic shape (from opset 15, dims start to end)."""
    dims = list(shape(ins[0]))[slice(node.attr("start", 0), node.attr("end", None))]
    return [Sym((len(dims),), "int64", object_array(dims, (len(dims),)))]


@rule("Size")
def size(inf, node, ins):
    return [Sym((), "int64", object_array([product(shape(ins[0]))], ()))]


def _cast_entry(v, dtype):
    """One entry cast to dtype: floats to integers truncate, integers to floats convert, an
    extent stays an expression (a float holding an integer); None where unknown (an
    extent's truth value)."""
    v = _plain(v)
    if dtype == "bool":
        return None if isinstance(v, Expr) else as_expr(int(bool(v)))
    if dtype in INT_DTYPES:
        return as_expr(int(v)) if isinstance(v, (int, float)) else v
    return float(v) if isinstance(v, int) else v


@rule("Cast")
def cast(inf, node, ins):
    to = node.attr("to")
    if isinstance(to, str):                 # opset 6 and earlier name the type
        from onnx import TensorProto
        to = getattr(TensorProto, to.upper(), None)
    from ..importer import numpy_dtype
    dtype = numpy_dtype(to, node.describe())
    x, value = ins[0], None
    if x.value is not None:
        entries = [_cast_entry(v, dtype) for v in x.value.reshape(-1)]
        if all(v is not None for v in entries):
            value = object_array(entries, x.value.shape)
    return [Sym(x.shape, dtype, value)]


@rule("Constant")
def constant(inf, node, ins):
    try:
        array = constant_array(node)        # the operator's reading of the attributes
    except ValueError as e:
        raise CannotInfer(str(e)) from None
    return [from_array(array)]


@rule("ConstantOfShape")
def constant_of_shape(inf, node, ins):
    dims = ints(ins[0], "the shape")
    fill = node.attr("value")
    array = np.zeros((1,), dtype=np.float32) if fill is None else np.asarray(fill)
    dtype = array.dtype.name
    value = None
    if is_static(dims) and math.prod(static(dims)) <= VALUE_MAX_ELEMENTS:
        entry = _entry(array.reshape(-1)[0].item(), dtype)
        value = object_array([entry] * math.prod(static(dims)), static(dims))
    return [Sym(dims, dtype, value)]


@rule("Range")
def range_(inf, node, ins):
    """max(ceil((limit - start) / delta), 0) entries; symbolic for an integer delta."""
    start, limit, delta = (_plain(s.value.reshape(-1)[0]) if s.value is not None else None for s in ins)
    if start is None or limit is None or not isinstance(delta, int) or delta == 0:
        raise CannotInfer("Range's bounds are not known at import")
    if isinstance(start, float) or isinstance(limit, float):
        if isinstance(start, Expr) or isinstance(limit, Expr):
            raise CannotInfer("a float Range of an extent")
        n = max(math.ceil((limit - start) / delta), 0)
    else:
        n = dmax(-((as_expr(start) - limit) // delta), 0)
    value = None
    if as_expr(n).is_constant() and int(n) <= VALUE_MAX_ELEMENTS:
        value = object_array([_entry(start + i * delta, ins[0].dtype) for i in range(int(n))], (int(n),))
    return [Sym((n,), ins[0].dtype, value)]
