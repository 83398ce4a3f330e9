"""PyTorch's element-wise math beyond the arithmetic (torch.tan, atan2, lgamma, xlogy, isnan,
nan_to_num, ...): the functions that need a formula of their own are primitives (ops.py's
MATH: tan, asin, ..., lgamma, digamma, polygamma, erfinv, i0, i1), called here by name; the
rest are composites of them, which autograd differentiates.

As in PyTorch: an integer tensor given to a real function computes in float32 (the default
dtype), a predicate (isnan, signbit) gives bool, and the gradients at the special points are
PyTorch's (sinc'(0) = 0, copysign's 0 at 0). Where a composite has a branch that would be
nan or inf where it is not chosen (log(0) in xlogy at x = 0), that branch reads a harmless
value there instead, so no nan reaches the gradient through the unchosen side of a where.
"""
import math

from . import dtypes
from .data_checks import raise_if_any
from .elementwise import binary, operands, unary, where
from .factories import full_like, ones_like, zeros_like
from .tensor import Tensor


def check_tensor(op, x, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(x).__name__}")


def floating(x):
    """x itself if floating-point, else converted to float32 (PyTorch's default dtype)."""
    return x if x.dtype.is_floating_point else x.to(dtype=dtypes.float32)


def float_operands(a, b):
    """a and b as tensors of one floating-point dtype (the promoted one, float32 for integers)."""
    a, b, _, dtype = operands(a, b)
    if not dtype.is_floating_point:
        a, b = a.to(dtype=dtypes.float32), b.to(dtype=dtypes.float32)
    return a, b


def _and(a, b):
    """a and b, bool tensors, element-wise."""
    return where(a, b, a)


# ---- two operands ---------------------------------------------------------------------------

def atan2(input, other):  # noqa: A002  (PyTorch's argument names, here and below)
    """The angle of the point (other, input), in (-pi, pi]."""
    return binary("atan2", *float_operands(input, other))


def hypot(input, other):
    """sqrt(input^2 + other^2), without overflow in the squares."""
    return binary("hypot", *float_operands(input, other))


def copysign(input, other):
    """|input| with the sign of other (-0.0 counts as negative), a float."""
    return binary("copysign", *float_operands(input, other))


def fmod(input, other):
    """input - trunc(input / other) * other: C's remainder, the sign of input (remainder's
    has the sign of other). Integers stay integers; an integer division by zero is an error."""
    a, b, _, dtype = operands(input, other)
    if not dtype.is_floating_point:     # a tensor's zeros found by a kernel (data_checks.py)
        if not isinstance(other, Tensor):
            if other == 0:
                raise RuntimeError("ZeroDivisionError")
        else:
            raise_if_any(b == 0, lambda: RuntimeError("ZeroDivisionError"))
    return binary("fmod", a, b)


def xlogy(input, other):
    """input * log(other), 0 where input is 0 (unless other is nan)."""
    a, b = float_operands(input, other)
    safe = _and(a == 0, b == b)
    return where(safe, 0.0, a * unary("log", where(safe, 1.0, b)))


def xlog1py(input, other):
    """input * log1p(other), 0 where input is 0 (unless other is nan)."""
    a, b = float_operands(input, other)
    safe = _and(a == 0, b == b)
    return where(safe, 0.0, a * unary("log1p", where(safe, 0.0, b)))


def logaddexp(input, other):
    """log(e^input + e^other), without overflow: max + log1p(e^-|input - other|); at equal
    operands (infinities too) max + log 2."""
    a, b = float_operands(input, other)
    d = where(a == b, 0.0, a - b)
    return a.maximum(b) + unary("log1p", unary("exp", -d.abs()))


def logaddexp2(input, other):
    """log2(2^input + 2^other), as logaddexp in base 2."""
    a, b = float_operands(input, other)
    d = where(a == b, 0.0, a - b)
    return a.maximum(b) + unary("log1p", unary("exp2", -d.abs())) * (1 / math.log(2))


def float_power(input, exponent):
    """input ** exponent in float64, whatever the operands' dtypes (PyTorch's float_power)."""
    a = input.to(dtype=dtypes.float64) if isinstance(input, Tensor) else input
    b = exponent.to(dtype=dtypes.float64) if isinstance(exponent, Tensor) else exponent
    if not isinstance(a, Tensor):
        a = full_like(b, a)
    return binary("pow", a, b)


def fmax(input, other):
    """The larger of the two, a nan counting as missing (maximum propagates it); at a tie
    the gradient goes to input, as PyTorch's."""
    a, b, _, _ = operands(input, other)
    return where(where(a >= b, a >= b, b != b), a, b)


def fmin(input, other):
    """The smaller of the two, a nan counting as missing."""
    a, b, _, _ = operands(input, other)
    return where(where(a <= b, a <= b, b != b), a, b)


def heaviside(input, values):
    """0 where input < 0, values where it is 0, 1 where it is > 0 (nan: 0, as PyTorch)."""
    check_tensor("heaviside", input)
    check_tensor("heaviside", values, "values")
    if input.dtype is not values.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes, got "
                           f"{input.dtype} and {values.dtype}")
    x = input.detach()
    return where(x == 0, values.detach(), (x > 0).to(dtype=x.dtype))


def ldexp(input, other):
    """input * 2^other, a float."""
    a, b = float_operands(input, other)
    return a * unary("exp2", b)


# ---- one operand ----------------------------------------------------------------------------

def sinc(x):
    """sin(pi x) / (pi x), 1 at 0 (where its gradient is 0)."""
    x = floating(x)
    zero = x == 0
    px = where(zero, 1.0, x) * math.pi
    return where(zero, 1.0, unary("sin", px) / px)


def logit(x, eps=None):
    """log(x / (1 - x)); with eps, x clamped to [eps, 1 - eps] first (gradient 0 outside)."""
    x = floating(x)
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    return unary("log", x / (1 - x))


def frac(x):
    """The fractional part, x - trunc(x), the sign of x."""
    if not x.dtype.is_floating_point:
        raise RuntimeError(f'"frac" not implemented for {x.dtype}: it is defined on floating-point tensors')
    return x - unary("trunc", x).detach()


def deg2rad(x):
    return floating(x) * (math.pi / 180)


def rad2deg(x):
    return floating(x) * (180 / math.pi)


def reciprocal(x):
    return 1 / x


def polygamma(n, x):
    """The n-th derivative of digamma (n a whole number >= 0) at each element."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = floating(x)
    return binary("polygamma", full_like(x, n), x)


def mvlgamma(x, p):
    """The multivariate log-gamma of dimension p: sum of lgamma(x - i/2), i < p, plus
    p (p - 1) / 4 log(pi); every element must be > (p - 1) / 2."""
    if isinstance(p, bool) or not isinstance(p, int) or p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1, got {p!r}")
    x = floating(x)
    if not bool((x > (p - 1) / 2).all().item()):
        raise RuntimeError(f"All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    total = unary("lgamma", x)
    for i in range(1, p):
        total = total + unary("lgamma", x - i / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf below (special.entr)."""
    x = floating(x)
    positive = x > 0
    values = -x * unary("log", where(positive, x, 1.0))
    return where(positive, values, where(x == 0, 0.0, where(x != x, x, -math.inf)))


def ndtr(x):
    """The standard normal distribution function, erfc(-x / sqrt 2) / 2."""
    return unary("erfc", floating(x) * (-1 / math.sqrt(2))) * 0.5


def ndtri(p):
    """Its inverse, sqrt 2 erfinv(2p - 1)."""
    return unary("erfinv", floating(p) * 2 - 1) * math.sqrt(2)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """nan, +inf and -inf replaced (by default with 0 and the dtype's largest and lowest
    finite values); an integer tensor is returned as it is."""
    if not x.dtype.is_floating_point:
        return x.clone()
    top = dtypes.finfo(x.dtype).max
    posinf = top if posinf is None else posinf
    neginf = -top if neginf is None else neginf
    return where(x != x, nan, where(x == math.inf, posinf, where(x == -math.inf, neginf, x)))


def frexp(x):
    """(mantissa, exponent) with x = mantissa * 2^exponent, 0.5 <= |mantissa| < 1 (0, inf
    and nan: themselves and 0); exponent int32."""
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"torch.frexp() only supports floating-point dtypes, got {x.dtype}")
    a = x.detach().abs()
    scaled = _and(a > 0, a < math.inf)
    e = unary("floor", unary("log2", where(scaled, a, 1.0))) + 1
    m = a / unary("exp2", e)                      # log2 rounds: one step of correction either way
    e = where(m >= 1, e + 1, where(m < 0.5, e - 1, e))
    e = where(scaled, e, 0.0)
    mantissa = x / unary("exp2", e)
    return FrExp(mantissa, e.to(dtype=dtypes.int32))


# ---- predicates: bool results -----------------------------------------------------------------

def isnan(x):
    return x != x


def isinf(x):
    return x.abs() == math.inf if x.dtype.is_floating_point else zeros_like(x, dtype=dtypes.bool_)


def isposinf(x):
    return x == math.inf if x.dtype.is_floating_point else zeros_like(x, dtype=dtypes.bool_)


def isneginf(x):
    return x == -math.inf if x.dtype.is_floating_point else zeros_like(x, dtype=dtypes.bool_)


def isfinite(x):
    return x.abs() < math.inf if x.dtype.is_floating_point else ones_like(x, dtype=dtypes.bool_)


def isreal(x):
    """Every real tensor's elements are real (tracegrad has no complex dtype)."""
    return ones_like(x, dtype=dtypes.bool_)


def signbit(x):
    """Whether the sign bit is set: x < 0, and -0.0 and negative nans too."""
    if x.dtype.is_floating_point:
        return binary("copysign", ones_like(x), x.detach()) < 0
    return x < 0


class FrExp(tuple):
    """frexp's (mantissa, exponent), also by name, as PyTorch's return type."""

    def __new__(cls, mantissa, exponent):
        return super().__new__(cls, (mantissa, exponent))

    mantissa = property(lambda self: self[0])
    exponent = property(lambda self: self[1])
