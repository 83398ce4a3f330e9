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
    are; a float's result stays a float (math.floor(2.5) is the int 2), with x's sign, as
    in C (trunc(-0.5) is -0.0)."""
    return lambda x: x if isinstance(x, int) or not math.isfinite(x) else math.copysign(float(f(x)), x)


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


# ---- the special functions and the rest of PyTorch's element-wise math ------------------
# (torch.tan, asin, ..., lgamma, digamma, polygamma, erfinv, i0, the bitwise ops). Each answers
# as PyTorch does outside its domain and at its poles: nan, or the signed infinity of the limit.

def _domain(f, low, high):
    """f inside [low, high] (inverse trigonometric and hyperbolic functions), nan outside."""
    return lambda x: f(x) if low <= x <= high else math.nan


def _signed_overflow(f):
    """f, with the infinity of x's sign where math overflows (sinh, exp2 of large x)."""
    def g(x):
        try:
            return f(x)
        except OverflowError:
            return math.copysign(math.inf, x) if f is math.sinh else math.inf
    return g


def atanh(x):
    if -1 < x < 1:
        return math.atanh(x)
    return math.copysign(math.inf, x) if abs(x) == 1 else math.nan


def _log_base(f):
    """log2 or log10 on Python numbers, IEEE's answers at 0 and below (as log above)."""
    return lambda x: f(x) if x > 0 else (-math.inf if x == 0 else math.nan)


def _whole(x):
    """Whether x is a whole number, as C's x == floor(x) (infinities are; math.floor refuses them)."""
    return math.isinf(x) or (x == x and x == math.floor(x))


def lgamma(x):
    """log |Gamma(x)|: inf at its poles (0 and the negative integers), as PyTorch."""
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):
        return math.inf


_PSI_10 = 2.25175258906672110764            # digamma(10)
_PSI_SERIES = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
               -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
               8.33333333333333333333e-2)


def digamma(x):
    """Gamma'(x) / Gamma(x), as PyTorch computes it (Cephes' psi): -inf at 0 (inf at -0.0),
    nan at the negative integers; reflection for x < 0, the recurrence psi(x) = psi(x + 1)
    - 1 / x up to 10, then the asymptotic series."""
    if x == 0:
        return math.copysign(math.inf, -x)
    result = 0.0
    if x < 0:
        if _whole(x):
            return math.nan
        result = -math.pi / math.tan(math.pi * math.fmod(x, 1.0))
        x = 1 - x
    while x < 10:
        result -= 1 / x
        x += 1
    if x == 10:
        return result + _PSI_10
    y = 0.0
    if x < 1e17:
        z = 1 / (x * x)
        p = 0.0
        for c in _PSI_SERIES:
            p = p * z + c
        y = z * p
    return result + math.log(x) - 0.5 / x - y


def trigamma(x):
    """psi'(x) as PyTorch computes it: reflection below 1/2, six steps of the recurrence,
    then the asymptotic series."""
    sign, result = 1.0, 0.0
    if x < 0.5:
        sign = -1.0
        s = math.sin(math.pi * x) if math.isfinite(x) else math.nan
        result = -math.pi * math.pi / (s * s) if s else -math.inf
        x = 1 - x
    for _ in range(6):
        result += 1 / (x * x) if x else math.inf
        x += 1
    ixx = 1 / (x * x)
    result += (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
    return sign * result


_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)
ZETA_STEPS = 100_000      # terms summed before the tail: q below -ZETA_STEPS gives nan, not a long loop


def zeta(x, q):
    """Hurwitz's zeta, sum over k >= 0 of (k + q)^-x, as PyTorch computes it (Cephes):
    terms summed until q + k > 9, then the Euler-Maclaurin tail."""
    if x == 1:
        return math.inf
    if x < 1 or q != q:
        return math.nan
    if q <= 0:
        if _whole(q):
            return math.inf
        if not _whole(x) or q < -ZETA_STEPS:
            return math.nan
    s, a, i, b = pow_(q, -x), q, 0, 0.0
    while i < 9 or a <= 9:
        i += 1
        a += 1.0
        b = pow_(a, -x)
        s += b
        if -1.11022302462515654042e-16 * s < b < 1.11022302462515654042e-16 * s:
            return s
    w = a
    s += b * w / (x - 1) - 0.5 * b
    a, k = 1.0, 0.0
    for coefficient in _ZETA_A:
        a *= x + k
        b /= w
        t = a * b / coefficient
        s += t
        if abs(t / s) < 1.11022302462515654042e-16:
            break
        k += 1
        a *= x + k
        b /= w
        k += 1
    return s


def polygamma(n, x):
    """The n-th derivative of digamma at x (n a whole number >= 0): digamma, trigamma, and
    for n >= 2 (-1)^(n+1) n! zeta(n + 1, x), as PyTorch; nan for any other n (stage2
    refuses them first)."""
    if not (n >= 0 and _whole(n)) or n == math.inf:
        return math.nan
    if n == 0:
        return digamma(x)
    if n == 1:
        return trigamma(x)
    return (1.0 if n % 2 else -1.0) * math.exp(math.lgamma(n + 1.0)) * zeta(n + 1.0, x)


def _bessel_series(x, order):
    """I_order(x) for order 0 or 1 by its power series, sum of (x/2)^(2k+order) / (k! (k+order)!):
    positive terms (no cancellation), at most a few dozen of them for |x| <= 30."""
    t = (0.5 * x) ** order
    s, q, k = t, 0.25 * x * x, 0
    while t > 1e-17 * abs(s):
        k += 1
        t *= q / (k * (k + order))
        s += t
    return s


def _bessel_asymptotic(x, order):
    """I_order(|x|) for |x| > 30: e^x / sqrt(2 pi x) times Hankel's series in 1 / (8x), whose
    terms fall below 1e-17 within twenty of them there."""
    x = abs(x)
    if x == math.inf:                   # nan, as PyTorch's
        return math.nan
    mu, t, s, k = 4.0 * order * order, 1.0, 1.0, 0
    while abs(t) > 1e-17 and k < 40:
        k += 1
        t *= -(mu - (2 * k - 1) ** 2) / (k * 8 * x)
        s += t
    try:
        return math.exp(x) / math.sqrt(2 * math.pi * x) * s
    except OverflowError:
        return math.inf


def bessel_i0(x):
    """The modified Bessel function of the first kind, order 0 (PyTorch's i0): even, I0(0) = 1."""
    if x != x:
        return math.nan
    a = abs(x)
    return _bessel_series(a, 0) if a <= 30 else _bessel_asymptotic(a, 0)


def bessel_i1(x):
    """Order 1 (torch.special.i1): odd, I1'(0) = 1/2."""
    if x != x:
        return math.nan
    a = abs(x)
    value = _bessel_series(a, 1) if a <= 30 else _bessel_asymptotic(a, 1)
    return -value if x < 0 else value           # I1(-0.0) is 0.0, as PyTorch's


def erfinv(y):
    """The inverse of erf on (-1, 1) (+-inf at +-1, nan outside): Giles' single-precision
    approximation, then Newton's steps on erf(x) - |y|; for |y| >= 1/2 on log erfc(x) -
    log(1 - |y|) instead, as 1 - |y| is exact there (erf(x) - |y|, near 1, is not) and the
    log of erfc is nearly a parabola, where Newton's steps converge from far."""
    if not -1 < y < 1:
        return math.copysign(math.inf, y) if abs(y) == 1 else math.nan
    a = abs(y)
    w = -math.log((1 - a) * (1 + a))
    if w < 5:
        w -= 2.5
        coefficients = _GILES_CENTRAL
    else:
        w = math.sqrt(w) - 3
        coefficients = _GILES_TAIL
    p = 0.0
    for c in coefficients:
        p = p * w + c
    x = p * a
    for _ in range(ERFINV_STEPS):
        if a < 0.5:
            x -= (math.erf(x) - a) / (TWO_OVER_SQRT_PI * math.exp(-x * x))
        else:
            c = math.erfc(x)
            x += (math.log(c) - math.log1p(-a)) * c / (TWO_OVER_SQRT_PI * math.exp(-x * x))
    return math.copysign(x, y)


ERFINV_STEPS = 4
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2          # erfinv's derivative is this times e^(erfinv(y)^2)


def fmod(a, b):
    """C's fmod: a - trunc(a / b) b, the sign of a; integers exactly (b == 0 stage2 refuses)."""
    if isinstance(a, int) and isinstance(b, int):
        r = abs(a) % abs(b) if b else 0
        return r if a >= 0 else -r
    try:
        return math.fmod(a, b)
    except ValueError:                              # b == 0 or a infinite
        return math.nan


_INT64 = 1 << 64


def wrap64(n):
    """An integer modulo 2^64 as int64, as the C kernels compute (and PyTorch)."""
    n &= _INT64 - 1
    return n - _INT64 if n >= 1 << 63 else n


def _integers_only(f):
    """A bitwise or number-theoretic op: f on integers (bools are 0 and 1); nan on floats,
    which stage2 refuses before any kernel runs, as PyTorch."""
    return lambda a, b=0: wrap64(f(int(a), int(b))) if not isinstance(a, float) and not isinstance(b, float) \
        else math.nan


def left_shift(a, b):
    return a << b if 0 <= b < 64 else 0             # shifted past the width: 0, as PyTorch


def right_shift(a, b):
    return a >> (b if 0 <= b < 64 else 63)          # past the width: the sign's bits


def lcm(a, b):
    g = math.gcd(a, b)
    return abs(wrap64(a // g * b)) if g else 0


MATH = (
    unary("tan", periodic(math.tan), ("out",), lambda g, out: g * (1 + out * out), float_only=True),
    unary("asin", _domain(math.asin, -1, 1), ("x",), lambda g, x: g / kernel.sqrt(1 - x * x), float_only=True),
    unary("acos", _domain(math.acos, -1, 1), ("x",), lambda g, x: -g / kernel.sqrt(1 - x * x), float_only=True),
    unary("atan", math.atan, ("x",), lambda g, x: g / (1 + x * x), float_only=True),
    unary("sinh", _signed_overflow(math.sinh), ("x",), lambda g, x: g * kernel.cosh(x), float_only=True),
    unary("cosh", _signed_overflow(math.cosh), ("x",), lambda g, x: g * kernel.sinh(x), float_only=True),
    unary("asinh", math.asinh, ("x",), lambda g, x: g / kernel.sqrt(x * x + 1), float_only=True),
    unary("acosh", _domain(math.acosh, 1, math.inf), ("x",), lambda g, x: g / kernel.sqrt(x * x - 1),
          float_only=True),
    unary("atanh", atanh, ("x",), lambda g, x: g / (1 - x * x), float_only=True),
    unary("log2", _log_base(math.log2), ("x",), lambda g, x: g / (x * math.log(2)), float_only=True),
    unary("log10", _log_base(math.log10), ("x",), lambda g, x: g / (x * math.log(10)), float_only=True),
    unary("exp2", _signed_overflow(partial(math.pow, 2.0)), ("out",), lambda g, out: g * out * math.log(2),
          float_only=True),
    unary("erfc", math.erfc, ("x",), lambda g, x: g * (-TWO_OVER_SQRT_PI * kernel.exp(-(x * x))), float_only=True),
    unary("erfinv", erfinv, ("out",), lambda g, out: g * (SQRT_PI_OVER_2 * kernel.exp(out * out)), float_only=True),
    unary("lgamma", lgamma, ("x",), lambda g, x: g * kernel.digamma(x), float_only=True),
    # polygamma(1, x): the 1 as a tensor like x (sign(x) * 0 is 0 even where x is inf or nan)
    unary("digamma", digamma, ("x",), lambda g, x: g * kernel.polygamma(kernel.sign(x) * 0 + 1, x), float_only=True),
    unary("i0", bessel_i0, ("x",), lambda g, x: g * kernel.i1(x), float_only=True),
    # I1' = I0 - I1 / x, 1/2 at 0
    unary("i1", bessel_i1, ("x", "out"), lambda g, x, out: g * kernel.where(x == 0, 0.5, kernel.i0(x) - out / x),
          float_only=True),
    unary("bitwise_not", _integers_only(lambda a, b: ~a)),
    binary("atan2", math.atan2, ("a", "b"), (lambda g, a, b: g * b / (a * a + b * b),
                                             lambda g, a, b: -g * a / (a * a + b * b))),
    binary("fmod", fmod, ("a", "b"), (lambda g, a, b: g, lambda g, a, b: -g * kernel.trunc(a / b))),
    # d/da copysign(a, b) = out / a, 0 at a == 0 (PyTorch's); b only chooses a sign
    binary("copysign", math.copysign, ("a", "out"), (lambda g, a, out: kernel.where(a == 0, 0.0, g * out / a),
                                                     lambda g, a, out: 0 * g)),
    binary("hypot", math.hypot, ("a", "b", "out"), (lambda g, a, b, out: g * a / out,
                                                    lambda g, a, b, out: g * b / out)),
    # polygamma(n, x): n, the first operand, is a whole number, not differentiated
    binary("polygamma", polygamma, ("a", "b"), (lambda g, a, b: 0 * g,
                                                lambda g, a, b: g * kernel.polygamma(a + 1, b))),
    binary("bitwise_and", _integers_only(operator.and_)),
    binary("bitwise_or", _integers_only(operator.or_)),
    binary("bitwise_xor", _integers_only(operator.xor)),
    binary("bitwise_left_shift", _integers_only(left_shift)),
    binary("bitwise_right_shift", _integers_only(right_shift)),
    binary("gcd", _integers_only(math.gcd)),
    binary("lcm", _integers_only(lcm)),
)


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
) + MATH

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
    """The names of the primitives of these kinds, kind by kind, each in declaration order;
    with ``fused``, each kind's followed by its fused kernels."""
    for kind in kinds:
        if kind not in KINDS:
            raise ValueError(f"unknown kind of primitive {kind!r}; kinds: {', '.join(KINDS)}")
    return tuple(p.name for kind in kinds for p in PRIMITIVES + (FUSED if fused else ()) if p.kind == kind)


def codes(kind):
    """{name: code} of one kind's primitives and fused kernels: the numbers the native
    kernels switch on, which their generated enum gives the same names."""
    return {name: code for code, name in enumerate(names(kind, fused=True))}


def formulas(*kinds):
    """{name: python formula} of the primitives of these kinds: device "python"'s kernels."""
    return {name: BY_NAME[name].python for name in names(*kinds)}
