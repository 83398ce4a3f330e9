"""Tensor's methods for the element-wise math and the reductions of math_functions.py,
bitwise.py and more_reductions.py (x.tan(), x.prod(1), x & y, ~mask), and their in-place
forms (x.tan_()), bound onto Tensor as methods.py binds the others (methods.py imports this
module last)."""
from . import bitwise
from . import math_functions as mf
from . import more_reductions as reductions
from .elementwise import unary
from .tensor import Tensor


def _unary(op):
    def method(self):
        return unary(op, self)
    method.__name__ = op
    return method


class MathMethods:
    """Written as a class body so they read as methods; bound onto Tensor below."""
    tan = _unary("tan")
    asin = arcsin = _unary("asin")
    acos = arccos = _unary("acos")
    atan = arctan = _unary("atan")
    sinh = _unary("sinh")
    cosh = _unary("cosh")
    asinh = arcsinh = _unary("asinh")
    acosh = arccosh = _unary("acosh")
    atanh = arctanh = _unary("atanh")
    log2 = _unary("log2")
    log10 = _unary("log10")
    exp2 = _unary("exp2")
    erfc = _unary("erfc")
    erfinv = _unary("erfinv")
    lgamma = _unary("lgamma")
    digamma = _unary("digamma")
    i0 = _unary("i0")

    def atan2(self, other): return mf.atan2(self, other)
    arctan2 = atan2
    def hypot(self, other): return mf.hypot(self, other)
    def copysign(self, other): return mf.copysign(self, other)
    def fmod(self, other): return mf.fmod(self, other)
    def xlogy(self, other): return mf.xlogy(self, other)
    def logaddexp(self, other): return mf.logaddexp(self, other)
    def logaddexp2(self, other): return mf.logaddexp2(self, other)
    def float_power(self, exponent): return mf.float_power(self, exponent)
    def fmax(self, other): return mf.fmax(self, other)
    def fmin(self, other): return mf.fmin(self, other)
    def heaviside(self, values): return mf.heaviside(self, values)
    def ldexp(self, other): return mf.ldexp(self, other)
    def sinc(self): return mf.sinc(self)
    def logit(self, eps=None): return mf.logit(self, eps)
    def frac(self): return mf.frac(self)
    def deg2rad(self): return mf.deg2rad(self)
    def rad2deg(self): return mf.rad2deg(self)
    def reciprocal(self): return mf.reciprocal(self)
    def sgn(self): return self.sign()
    def polygamma(self, n): return mf.polygamma(n, self)
    def mvlgamma(self, p): return mf.mvlgamma(self, p)
    def nan_to_num(self, nan=0.0, posinf=None, neginf=None): return mf.nan_to_num(self, nan, posinf, neginf)
    def frexp(self): return mf.frexp(self)
    def isnan(self): return mf.isnan(self)
    def isinf(self): return mf.isinf(self)
    def isposinf(self): return mf.isposinf(self)
    def isneginf(self): return mf.isneginf(self)
    def isfinite(self): return mf.isfinite(self)
    def isreal(self): return mf.isreal(self)
    def signbit(self): return mf.signbit(self)

    # ---- bits and truth values (bitwise.py) ----
    def bitwise_and(self, other): return bitwise.bitwise_and(self, other)
    def bitwise_or(self, other): return bitwise.bitwise_or(self, other)
    def bitwise_xor(self, other): return bitwise.bitwise_xor(self, other)
    def bitwise_not(self): return bitwise.bitwise_not(self)
    def bitwise_left_shift(self, other): return bitwise.bitwise_left_shift(self, other)
    def bitwise_right_shift(self, other): return bitwise.bitwise_right_shift(self, other)
    def gcd(self, other): return bitwise.gcd(self, other)
    def lcm(self, other): return bitwise.lcm(self, other)
    def logical_and(self, other): return bitwise.logical_and(self, other)
    def logical_or(self, other): return bitwise.logical_or(self, other)
    def logical_xor(self, other): return bitwise.logical_xor(self, other)
    def logical_not(self): return bitwise.logical_not(self)
    def __and__(self, other): return bitwise.bitwise_and(self, other)
    def __rand__(self, other): return bitwise.bitwise_and(other, self)
    def __or__(self, other): return bitwise.bitwise_or(self, other)
    def __ror__(self, other): return bitwise.bitwise_or(other, self)
    def __xor__(self, other): return bitwise.bitwise_xor(self, other)
    def __rxor__(self, other): return bitwise.bitwise_xor(other, self)
    def __invert__(self): return bitwise.bitwise_not(self)
    def __lshift__(self, other): return bitwise.bitwise_left_shift(self, other)
    def __rlshift__(self, other): return bitwise.bitwise_left_shift(other, self)
    def __rshift__(self, other): return bitwise.bitwise_right_shift(self, other)
    def __rrshift__(self, other): return bitwise.bitwise_right_shift(other, self)
    def __iand__(self, other): return self.bitwise_and_(other)
    def __ior__(self, other): return self.bitwise_or_(other)
    def __ixor__(self, other): return self.bitwise_xor_(other)
    def __ilshift__(self, other): return self.bitwise_left_shift_(other)
    def __irshift__(self, other): return self.bitwise_right_shift_(other)

    # ---- reductions (more_reductions.py) ----
    def prod(self, dim=None, keepdim=False, *, dtype=None): return reductions.prod(self, dim, keepdim, dtype=dtype)
    def nansum(self, dim=None, keepdim=False, *, dtype=None): return reductions.nansum(self, dim, keepdim, dtype=dtype)
    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        return reductions.nanmean(self, dim, keepdim, dtype=dtype)
    def aminmax(self, *, dim=None, keepdim=False): return reductions.aminmax(self, dim=dim, keepdim=keepdim)
    def mode(self, dim=-1, keepdim=False): return reductions.mode(self, dim, keepdim)
    def diff(self, n=1, dim=-1, prepend=None, append=None): return reductions.diff(self, n, dim, prepend, append)

    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return reductions.quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return reductions.nanquantile(self, q, dim, keepdim, interpolation=interpolation)


# The in-place forms, x.NAME_(...): the result written into x (PyTorch's rule: a float result
# is not written into an integer tensor)
IN_PLACE = ("tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh", "asinh", "arcsinh",
            "acosh", "arccosh", "atanh", "arctanh", "log2", "log10", "exp2", "erfc", "erfinv", "lgamma",
            "digamma", "i0", "atan2", "arctan2", "hypot", "copysign", "fmod", "xlogy", "float_power", "ldexp",
            "sinc", "logit", "frac", "deg2rad", "rad2deg", "reciprocal", "sgn", "polygamma", "mvlgamma",
            "nan_to_num", "heaviside", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
            "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm", "logical_and", "logical_or", "logical_xor",
            "logical_not")


def _in_place(name):
    def method(self, *args, **kwargs):
        self._check_inplace(name + "_", *args)
        out = getattr(self, name)(*args, **kwargs)
        if (out.dtype.is_floating_point and not self.dtype.is_floating_point) or (
                name == "float_power" and out.dtype is not self.dtype):
            raise RuntimeError(f"{name}_: result type {out.dtype} can't be cast to the desired output type "
                               f"{self.dtype}")
        if out.shape != self.shape:
            raise RuntimeError(f"{name}_: output with shape {self.shape} doesn't match the broadcast shape "
                               f"{out.shape}")
        return self._write(name + "_", out)
    method.__name__ = name + "_"
    return method


def bind():
    for name, attr in vars(MathMethods).items():
        if callable(attr) and name not in ("__dict__", "__weakref__", "__module__", "__doc__", "__qualname__"):
            setattr(Tensor, name, attr)
    for name in IN_PLACE:
        setattr(Tensor, name + "_", _in_place(name))


bind()
