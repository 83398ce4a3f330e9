"""The primitive ops, each declared once (chapter on native kernels, "the backend boundary").

A primitive is what a backend computes element by element (``unary``, ``binary``,
``comparison``) or along dimensions (``reduce``). Its declaration below is the whole of it
that is not native code: its name and kind, its formula on Python numbers (device
"python"'s kernel, the readable reference) and how its gradient flows back. Everything
else follows from it by *name*, never by position:

- backend.py's UNARY_OPS, BINARY_OPS, ... are views of this table; python_backend runs
  each op's ``python`` formula; elementwise.py runs each op's ``gradient``;
- the native devices' build writes a header from it (ops_header.py): an enum member per
  op, its name in capitals, and a list of the ops that the C and CUDA kernels expand into
  their switches, each case calling the op's formula in csrc/elementwise_math.h by the
  op's name (tg_NAME_f32, _f64, _i64); their lazy code generator calls the same functions
  by the same names. An op declared here without its native formula stops the build,
  naming the missing function.

The rule for what is a primitive (backend.py says it to a device's author): an op that
needs its own per-element formula. What can be written with other ops (GELU, SiLU, the
losses) is a composite in stage2 (composites.py), which every device then runs. A device
may compute a composite in one kernel instead: element-wise ones are declared below too, in
``FUSED``, with the gradient of the fused kernel, and a device that has them says so (its
backend's ``fused``); the public call (``x.gelu()``) runs the fused kernel where the device
has it.

Kinds: "unary" (one operand), "binary" (two operands, the result in their dtype),
"comparison" (two operands, a bool result), "reduce" (one operand, over some dimensions).
``float_only`` ops are defined on floating-point values: stage2 converts an integer
tensor to the default float dtype before computing them.

This file imports only the standard library: the native builds read it by its path.
"""
import math
import operator
from functools import partial
from typing import Callable, NamedTuple, Optional

KINDS = ("unary", "binary", "comparison", "reduce")


class Gradient(NamedTuple):
    """How a primitive's gradient flows back (chapter 4, "Tensor-level autograd").

    ``saves``: the tensors the backward pass reads, by role: "x" (a unary op's input), "a"
    and "b" (a binary op's inputs), "out" (the output; reusing it where the derivative is a
    function of it, as for exp, sigmoid and tanh, saves recomputing it).
    ``rules``: one function per operand, ``rule(g, *saved)``: that operand's gradient, the
    tensor form of upstream x local, from the upstream gradient ``g``. It runs only when
    the operand needs a gradient."""
    saves: tuple
    rules: tuple


class Primitive(NamedTuple):
    name: str
    kind: str
    python: Callable                     # the formula on Python numbers (a reduce: on a list)
    gradient: Optional[Gradient] = None  # None: used inside backward passes, never differentiated
    float_only: bool = False

    @property
    def arity(self):
        """How many tensors the op reads: 2 for binary ops and comparisons, else 1."""
        return 2 if self.kind in ("binary", "comparison") else 1


class Kernels:
    """What a gradient rule calls besides tensor arithmetic: ``kernel.NAME(*operands)``
    runs primitive NAME's kernel (or ``where``) on tensors, as a plain computation (a
    backward pass records no graph). stage2's elementwise.py supplies the runner, as this
    file knows no Tensor."""
    runner = None

    def __getattr__(self, name):
        return partial(self.runner, name)


kernel = Kernels()


def unary(name, python, saves=(), grad=None, float_only=False):
    return Primitive(name, "unary", python, grad and Gradient(saves, (grad,)), float_only)


def binary(name, python, saves=(), grads=None):
    return Primitive(name, "binary", python, grads and Gradient(saves, grads))


# ---- the formulas on Python numbers ----------------------------------------------------
# Float results follow IEEE like numpy and PyTorch (log(0) = -inf, 0/0 = nan) instead of
# raising, because one bad element must not stop a whole tensor operation.

def exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def log(x):
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


def log1p(x):                        # log(1 + x), exact for tiny x where 1 + x rounds to 1
    return math.log1p(x) if x > -1 else (-math.inf if x == -1 else math.nan)


def expm1(x):                        # e^x - 1, exact for tiny x
    try:
        return math.expm1(x)
    except OverflowError:
        return math.inf


def periodic(f):
    """sin or cos on Python numbers: nan at +-inf (and nan), as numpy, not a ValueError."""
    return lambda x: f(x) if math.isfinite(x) else math.nan


def integral(f):
    """floor, ceil, trunc or round on Python numbers: integers, infinities and nan as they
    are; a float's result stays a float (math.floor(2.5) is the int 2)."""
    return lambda x: x if isinstance(x, int) or not math.isfinite(x) else float(f(x))


def sigmoid(x):
    """1 / (1 + e^-x), for x < 0 as e^x / (1 + e^x): nothing overflows."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def gelu(x):                        # exact GELU, x * Phi(x), PyTorch's default
    return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))


def gelu_grad(x):                   # Phi(x) + x * phi(x)
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0))) + x * math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


# GPT-2's GELU, PyTorch's approximate="tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
# Computed as x * sigmoid(z) with z = 2 sqrt(2/pi) (x + 0.044715 x^3), the same number since
# 0.5 (1 + tanh(u)) = sigmoid(2u): for x < 0, 1 + tanh(u) cancels and sigmoid does not.
GELU_TANH_K = 2 * math.sqrt(2 / math.pi)
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)           # erf's derivative is this times e^(-x^2)
GELU_TANH_C = 0.044715


def gelu_tanh(x):
    return x * sigmoid(GELU_TANH_K * (x + GELU_TANH_C * x * x * x))


def gelu_tanh_grad(x):              # s + x s (1 - s) dz/dx with s = sigmoid(z)
    z = GELU_TANH_K * (x + GELU_TANH_C * x * x * x)
    # s (1 - s) = e / (1 + e)^2 with e = e^-|z|: neither factor is 1 - (a number near 1)
    e = math.exp(-abs(z))
    a = 1.0 / (1.0 + e)
    s = a if z >= 0 else e * a
    return s + x * (e * a * a) * GELU_TANH_K * (1.0 + 3 * GELU_TANH_C * x * x)


def softplus(x):
    """log(1 + e^x), as PyTorch's softplus (beta 1, threshold 20): x itself above 20, where
    the two differ by less than e^-20."""
    return x if x > 20 else math.log1p(exp(x))


def div(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or a != a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def pow_(a, b):
    if isinstance(a, int) and isinstance(b, int) and b >= 0:
        return a ** b                               # exact for integer tensors
    try:
        return math.pow(a, b)
    except ValueError:                              # negative base, fractional exponent; 0 ** -1
        return math.inf if a == 0 else math.nan
    except OverflowError:
        return math.inf


def pow_grad(a, b):                 # d(a^b)/da; a^0 is the constant 1 (even at a = 0)
    return 0 if b == 0 else b * pow_(a, b - 1)


# max, min, argmax, argmin propagate NaN as PyTorch (and the C kernels) do: the first NaN is
# the result. Python's max and min would skip it (every comparison with NaN is False).
def _first_nan(values):
    return next((i for i, v in enumerate(values) if v != v), None)


def argmax(values):
    nan = _first_nan(values)
    return max(range(len(values)), key=values.__getitem__) if nan is None else nan


def argmin(values):
    nan = _first_nan(values)
    return min(range(len(values)), key=values.__getitem__) if nan is None else nan


def _max_share(a, b):
    """The share of max(a, b)'s gradient that goes to a: all where a is larger, half at a
    tie (as in PyTorch), none where b is larger."""
    return kernel.where(a > b, 1.0, kernel.where(a == b, 0.5, 0.0))


def _pow_grad_b(g, a, b, out):
    """d/db a^b = a^b ln a; at a == 0 (b >= 0) its limit is 0, as in PyTorch."""
    return g * out * kernel.where(a == 0, 0.0, a.log())


PRIMITIVES = (
    unary("neg", operator.neg, grad=lambda g: -g),
    unary("exp", exp, ("out",), lambda g, out: g * out, float_only=True),
    unary("log", log, ("x",), lambda g, x: g * (1 / x), float_only=True),
    unary("sqrt", lambda x: math.sqrt(x) if x >= 0 else math.nan, ("out",), lambda g, out: g * (0.5 / out),
          float_only=True),
    unary("abs", abs, ("x",), lambda g, x: g * kernel.sign(x)),
    # +0 for negatives (not -0.0), nan stays nan; the backward is one kernel, g where x > 0
    unary("relu", lambda x: x if x > 0 or x != x else 0, ("x",), lambda g, x: kernel.relu_backward(g, x)),
    unary("sigmoid", sigmoid, ("out",), lambda g, out: g * (out * (1 - out)), float_only=True),
    unary("tanh", math.tanh, ("out",), lambda g, out: g * (1 - out * out), float_only=True),
    unary("sign", lambda x: (x > 0) - (x < 0)),
    unary("erf", math.erf, ("x",), lambda g, x: g * (TWO_OVER_SQRT_PI * kernel.exp(-(x * x))), float_only=True),
    # d/dx log(1 + e^x) = sigmoid(x); 1 where the forward is x itself
    unary("softplus", softplus, ("x",), lambda g, x: kernel.where(x > 20, g, g * kernel.sigmoid(x)),
          float_only=True),
    unary("log1p", log1p, ("x",), lambda g, x: g / (1 + x), float_only=True),
    unary("expm1", expm1, ("out",), lambda g, out: g * (out + 1), float_only=True),
    unary("sin", periodic(math.sin), ("x",), lambda g, x: g * kernel.cos(x), float_only=True),
    unary("cos", periodic(math.cos), ("x",), lambda g, x: -g * kernel.sin(x), float_only=True),
    # not differentiated (zero almost everywhere, as PyTorch's gradient); an integer is itself;
    # round takes halves to even, as Python's round, numpy and PyTorch do
    unary("floor", integral(math.floor)),
    unary("ceil", integral(math.ceil)),
    unary("trunc", integral(math.trunc)),
    unary("round", integral(round)),
    binary("add", operator.add, (), (lambda g: g, lambda g: g)),       # the gradient router
    binary("sub", operator.sub, (), (lambda g: g, lambda g: -g)),
    binary("mul", operator.mul, ("a", "b"), (lambda g, a, b: g * b, lambda g, a, b: g * a)),
    binary("div", div, ("a", "b"), (lambda g, a, b: g / b, lambda g, a, b: -g * a / (b * b))),
    binary("pow", pow_, ("a", "b", "out"), (lambda g, a, b, out: g * kernel.pow_grad(a, b), _pow_grad_b)),
    # a nan on either side wins, as in PyTorch (Python's max would keep its first argument)
    binary("maximum", lambda a, b: b if b > a or b != b else a, ("a", "b"),
           (lambda g, a, b: g * _max_share(a, b), lambda g, a, b: g * (1 - _max_share(a, b)))),
    binary("minimum", lambda a, b: b if b < a or b != b else a, ("a", "b"),
           (lambda g, a, b: g * (1 - _max_share(a, b)), lambda g, a, b: g * _max_share(a, b))),
    binary("pow_grad", pow_grad),               # d(a^b)/da, Pow's local gradient
    binary("relu_backward", lambda g, x: g if x > 0 else 0 * g),   # g where x > 0, else 0
    Primitive("eq", "comparison", operator.eq),
    Primitive("ne", "comparison", operator.ne),
    Primitive("lt", "comparison", operator.lt),
    Primitive("le", "comparison", operator.le),
    Primitive("gt", "comparison", operator.gt),
    Primitive("ge", "comparison", operator.ge),
    Primitive("sum", "reduce", sum),
    Primitive("max", "reduce", lambda v: v[argmax(v)]),
    Primitive("min", "reduce", lambda v: v[argmin(v)]),
    Primitive("argmax", "reduce", argmax),
    Primitive("argmin", "reduce", argmin),
)

# Fused kernels a device may have for composites (composites.py): GELU, exact and GPT-2's
# tanh form, in one pass forward and one backward (their derivatives, gelu_grad and
# gelu_tanh_grad, are kernels of the fused backward alone).
FUSED = (
    unary("gelu", gelu, ("x",), lambda g, x: g * kernel.gelu_grad(x), float_only=True),
    unary("gelu_grad", gelu_grad),
    unary("gelu_tanh", gelu_tanh, ("x",), lambda g, x: g * kernel.gelu_tanh_grad(x), float_only=True),
    unary("gelu_tanh_grad", gelu_tanh_grad),
)

BY_NAME = {p.name: p for p in PRIMITIVES + FUSED}


def names(*kinds, fused=False):
    """The names of the primitives of these kinds, in declaration order; with ``fused``,
    followed by the fused kernels of these kinds."""
    for kind in kinds:
        if kind not in KINDS:
            raise ValueError(f"unknown kind of primitive {kind!r}; kinds: {', '.join(KINDS)}")
    return tuple(p.name for p in PRIMITIVES + (FUSED if fused else ()) if p.kind in kinds)


def codes(kind):
    """{name: code} of one kind's primitives and fused kernels: the numbers the native
    kernels switch on, which their generated enum gives the same names."""
    return {name: code for code, name in enumerate(names(kind, fused=True))}


def formulas(*kinds):
    """{name: python formula} of the primitives of these kinds: device "python"'s kernels."""
    return {name: BY_NAME[name].python for name in names(*kinds)}
