"""What shape inference knows of one value, and the helpers every rule shares (chapter 13,
"13_inference_compiler": symbolic shapes).

A ``Sym`` holds a value's shape (a tuple of ``Expr``, each an expression of the graph
inputs' dims, or None when not even the rank is known), its dtype (numpy's name, or None)
and, for the small integer tensors of shape arithmetic (``Shape``, a Reshape's target, a
Pad's pads), its *value*: a numpy array of dtype object whose entries are ``Expr`` (or
Python floats, for float constants such as Resize's scales). Those arrays are only ever
reshaped, sliced, gathered and concatenated by numpy, or combined entry by entry: the
arithmetic on each entry is the symbolic engine's.

A dim inference could not work out is a fresh symbol named ``?...`` (``unknown``): it
stands for "some extent, learnt when the graph runs", and a proof that involves one is
never a reason to refuse a model (``Inference.fresh`` makes them).
"""
import math

import numpy as np

from ..symbolic import Max, Min, as_expr, free_symbols
from ..symbolic.solver import dim_bounds

INT_DTYPES = ("int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool")
VALUE_MAX_ELEMENTS = 64         # as host.py: larger integer tensors are data, not shapes
# A constant bound at least this large in a Slice means "to the end" (exporters write
# INT64_MAX): min(2**63 - 1, H) is H for every tensor that fits in memory.
TO_THE_END = 2 ** 31


# An expression with more terms than this (nested ones counted) is not kept: repeated
# products of extents would otherwise grow without bound on an untrusted model.
MAX_TERMS = 64


def size(expr):
    """The number of terms in an expression, those inside its atoms included."""
    expr = as_expr(expr)
    return len(expr.terms) + sum(size(arg) for mono, _ in expr.terms for atom in mono
                                 for arg in atom.args if not isinstance(arg, str))


class CannotInfer(Exception):
    """Raised by a rule that cannot express an output symbolically: the driver falls back
    to unknown dims (fresh ``?`` symbols) and records why."""


class ShapeRefusal(ValueError):
    """The model is refused: two extents that must be equal (a Concat's, a broadcast's)
    cannot be proven equal for every input."""


class Sym:
    __slots__ = ("shape", "dtype", "value")

    def __init__(self, shape=None, dtype=None, value=None):
        self.shape = None if shape is None else tuple(as_expr(d) for d in shape)
        self.dtype = dtype
        if value is not None and (self.shape is None or not is_static(self.shape)
                                  or math.prod(static(self.shape)) > VALUE_MAX_ELEMENTS):
            value = None        # (a chain of Concats cannot grow a value without bound)
        if value is not None:
            value = np.asarray(value, dtype=object).reshape(static(self.shape))
            if any(not isinstance(v, float) and size(v) > MAX_TERMS for v in value.reshape(-1)):
                value = None
        self.value = value

    def __repr__(self):
        return f"Sym({format_shape(self.shape)}, {self.dtype})"


def format_shape(shape):
    return "?" if shape is None else "(" + ", ".join(str(d) for d in shape) + ")"


def is_unknown(expr):
    return any(name.startswith("?") for name in free_symbols(expr))


def is_static(shape):
    return all(as_expr(d).is_constant() for d in shape)


def static(shape):
    return tuple(int(d) for d in shape)


def shape(sym):
    """A known shape, or CannotInfer."""
    if sym is None or sym.shape is None:
        raise CannotInfer("an input's rank is unknown")
    return sym.shape


def ints(sym, what):
    """A shape-arithmetic value as a flat list of integer ``Expr``, or CannotInfer."""
    if sym is None or sym.value is None:
        raise CannotInfer(f"{what} is not known at import")
    if sym.dtype is not None and sym.dtype not in INT_DTYPES:
        raise CannotInfer(f"{what} is not an integer tensor")
    out = []
    for v in sym.value.reshape(-1):
        if isinstance(v, float):
            if not v.is_integer():
                raise CannotInfer(f"{what} holds a fraction")
            v = int(v)
        out.append(as_expr(v))
    return out


def const_ints(sym, what):
    """A value whose entries are all constants, as Python ints (axes, steps)."""
    out = ints(sym, what)
    if not all(e.is_constant() for e in out):
        raise CannotInfer(f"{what} depends on the input's dims")
    return [int(e) for e in out]


def dmin(a, b):
    """min(a, b), decided where the dims being >= 1 decides it (min(H, H + 1) == H)."""
    lo, hi = dim_bounds(as_expr(a) - as_expr(b))
    if lo is not None and lo >= 0:
        return as_expr(b)
    if hi is not None and hi <= 0:
        return as_expr(a)
    return Min(a, b)


def dmax(a, b):
    lo, hi = dim_bounds(as_expr(a) - as_expr(b))
    if lo is not None and lo >= 0:
        return as_expr(a)
    if hi is not None and hi <= 0:
        return as_expr(b)
    return Max(a, b)


def sign(expr):
    """+1 (>= 0 for every dims), -1 (< 0) or CannotInfer."""
    lo, hi = dim_bounds(as_expr(expr))
    if lo is not None and lo >= 0:
        return 1
    if hi is not None and hi < 0:
        return -1
    raise CannotInfer(f"the sign of {expr} is unknown")


def product(dims):
    out = as_expr(1)
    for d in dims:
        out = out * d
    return out


def from_array(array):
    """A Sym for a numpy constant (an initializer, a Constant's value)."""
    dtype = array.dtype.name
    value = None
    if array.size <= VALUE_MAX_ELEMENTS and array.dtype.kind in "iubf":
        flat = [as_expr(int(v)) if array.dtype.kind in "iub" else float(v) for v in array.reshape(-1)]
        value = np.array(flat + [None], dtype=object)[:-1]      # (keeps numpy from unpacking)
    return Sym(array.shape, dtype, value)


def object_array(entries, shape):
    out = np.empty(len(entries), dtype=object)
    out[:] = entries
    return out.reshape(shape)


def expr_equal(inf, a, b, where):
    """Require a == b for every input; an unknown symbol on either side defers the check
    to run time (where the operators check it). A proof beyond equal canonical forms is
    kept in ``inf.proofs`` (what the chapter shows for the padded U-net's Concat)."""
    a, b = as_expr(a), as_expr(b)
    if a == b:
        return a
    if is_unknown(a) or is_unknown(b):
        return b if is_unknown(a) else a
    if a.is_constant() and b.is_constant():
        raise ShapeRefusal(f"{where}: the extents {a} and {b} differ")
    proof = inf.ctx.prove_equal(a, b)
    if not proof:
        raise ShapeRefusal(f"{where}: cannot prove the extents {a} and {b} equal for every input "
                           f"({proof.status}: {proof.steps[-1]})")
    inf.proofs.append((where, proof))
    return a


def broadcast(inf, shapes, where):
    """The multidirectional (numpy) broadcast of shapes: per dim, equal extents, or one of
    them the constant 1. A pair that is neither provably equal nor 1 refuses the model."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        dims = [d for d in dims if not (d.is_constant() and d.const == 1)] or [as_expr(1)]
        result = dims[0]
        for d in dims[1:]:
            result = expr_equal(inf, result, d, f"{where}, broadcasting dim {i} (neither equal nor 1)")
        out.append(result)
    return tuple(out)
