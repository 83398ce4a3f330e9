"""The primitive ops, each declared once (chapter on native kernels, "the backend boundary").

A primitive is what a backend computes element by element (``unary``, ``binary``) or along
dimensions (``reduce``); backend.py's UNARY_OPS, BINARY_OPS and REDUCE_OPS are views of
this table. Every other list of them derives from it by *name*, never by position: a
native device's build writes its C and CUDA op codes from it (an enum member per op, its
name in capitals, in a generated header), and the Python side of a native backend takes
each op's code from ``codes``. So adding an op here is the one declaration; a backend that
lacks it fails when it is imported (python_backend's formula tables) or built (a kernel's
switch over the generated enum misses a case, an error with -Werror=switch), naming it.

Kinds: "unary" (one operand), "binary" (two operands, the result in their dtype),
"comparison" (two operands, a bool result), "reduce" (one operand, over some dimensions).
``float_only`` ops are defined on floating-point values: stage2 converts an integer
tensor to the default float dtype before computing them.
"""
from typing import NamedTuple

KINDS = ("unary", "binary", "comparison", "reduce")


class Primitive(NamedTuple):
    name: str
    kind: str
    float_only: bool = False

    @property
    def arity(self):
        """How many tensors the op reads: 2 for binary ops and comparisons, else 1."""
        return 2 if self.kind in ("binary", "comparison") else 1


PRIMITIVES = (
    Primitive("neg", "unary"),
    Primitive("exp", "unary", float_only=True),
    Primitive("log", "unary", float_only=True),
    Primitive("sqrt", "unary", float_only=True),
    Primitive("abs", "unary"),
    Primitive("relu", "unary"),
    Primitive("sigmoid", "unary", float_only=True),
    Primitive("tanh", "unary", float_only=True),
    Primitive("gelu", "unary", float_only=True),
    Primitive("gelu_grad", "unary"),            # GELU's derivative, inside its backward pass
    Primitive("sign", "unary"),
    Primitive("gelu_tanh", "unary", float_only=True),
    Primitive("gelu_tanh_grad", "unary"),
    Primitive("add", "binary"),
    Primitive("sub", "binary"),
    Primitive("mul", "binary"),
    Primitive("div", "binary"),
    Primitive("pow", "binary"),
    Primitive("maximum", "binary"),
    Primitive("minimum", "binary"),
    Primitive("pow_grad", "binary"),            # d(a^b)/da, Pow's backward
    Primitive("relu_backward", "binary"),       # g where x > 0, else 0: ReLU's backward
    Primitive("eq", "comparison"),
    Primitive("ne", "comparison"),
    Primitive("lt", "comparison"),
    Primitive("le", "comparison"),
    Primitive("gt", "comparison"),
    Primitive("ge", "comparison"),
    Primitive("sum", "reduce"),
    Primitive("max", "reduce"),
    Primitive("min", "reduce"),
    Primitive("argmax", "reduce"),
    Primitive("argmin", "reduce"),
)

BY_NAME = {p.name: p for p in PRIMITIVES}


def names(*kinds):
    """The names of the primitives of these kinds, in declaration order."""
    for kind in kinds:
        if kind not in KINDS:
            raise ValueError(f"unknown kind of primitive {kind!r}; kinds: {', '.join(KINDS)}")
    return tuple(p.name for p in PRIMITIVES if p.kind in kinds)


def codes(kind):
    """{name: code} of one kind's primitives: the numbers the native kernels switch on,
    which their generated enum gives the same names."""
    return {name: code for code, name in enumerate(names(kind))}


def require(kind, table, where):
    """Check that ``table`` (a backend's formulas, keyed by op name) covers every primitive
    of ``kind``: a RuntimeError naming those it lacks, raised where the table is built."""
    lacking = [name for name in names(kind) if name not in table]
    if lacking:
        raise RuntimeError(f"{where} has no {kind} formula for {', '.join(lacking)} "
                           "(declared in stage2_tensor/ops.py)")
