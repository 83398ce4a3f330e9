"""torch.tan(x), torch.atan2(a, b), torch.prod(x, 1), torch.isnan(x), ...: the functions of
math_functions.py, bitwise.py and more_reductions.py under PyTorch's names, and the tensor
methods of math_methods.py as functions (torch_compat's ``_functional``: the method, after a
check that the first argument is a tensor). The package's __init__ exports them."""
from .bitwise import (bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift,  # noqa: F401
                      bitwise_xor, gcd, lcm, logical_and, logical_not, logical_or, logical_xor)
from .math_functions import (atan2, copysign, deg2rad, float_power, fmax, fmin, fmod, frac, frexp,  # noqa: F401
                             heaviside, hypot, isfinite, isinf, isnan, isneginf, isposinf, isreal, ldexp,
                             logaddexp, logaddexp2, logit, mvlgamma, nan_to_num, polygamma, rad2deg, reciprocal,
                             signbit, sinc, xlogy)
from .more_reductions import (aminmax, diff, mode, nanmean, nanquantile, nansum, prod, quantile,  # noqa: F401
                              std_mean, var_mean)
from .torch_compat import _functional

arctan2 = atan2
tan = _functional("tan", "the tangent of each element (radians)")
asin = arcsin = _functional("asin", "the arcsine of each element, nan outside [-1, 1]")
acos = arccos = _functional("acos", "the arccosine of each element, nan outside [-1, 1]")
atan = arctan = _functional("atan", "the arctangent of each element")
sinh = _functional("sinh", "the hyperbolic sine of each element")
cosh = _functional("cosh", "the hyperbolic cosine of each element")
asinh = arcsinh = _functional("asinh", "the inverse hyperbolic sine of each element")
acosh = arccosh = _functional("acosh", "the inverse hyperbolic cosine of each element, nan below 1")
atanh = arctanh = _functional("atanh", "the inverse hyperbolic tangent of each element, +-inf at +-1")
log2 = _functional("log2", "the base-2 logarithm of each element")
log10 = _functional("log10", "the base-10 logarithm of each element")
exp2 = _functional("exp2", "2 to the power of each element")
erfc = _functional("erfc", "1 - erf(x) of each element, exact where erf(x) is near 1")
erfinv = _functional("erfinv", "the inverse of erf at each element of [-1, 1]")
lgamma = _functional("lgamma", "log |Gamma(x)| of each element")
digamma = _functional("digamma", "Gamma'(x) / Gamma(x) of each element")
i0 = _functional("i0", "the modified Bessel function of order 0 of each element")
sgn = _functional("sgn", "the sign of each element (sign, for real tensors)")

NAMES = ["tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh", "asinh", "arcsinh", "acosh",
         "arccosh", "atanh", "arctanh", "atan2", "arctan2", "log2", "log10", "exp2", "erfc", "erfinv", "lgamma",
         "digamma", "polygamma", "mvlgamma", "i0", "sinc", "logit", "xlogy", "hypot", "fmod", "copysign",
         "heaviside", "logaddexp", "logaddexp2", "float_power", "fmax", "fmin", "frac", "deg2rad", "rad2deg", "sgn",
         "reciprocal", "nan_to_num", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "isreal",
         "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
         "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm", "ldexp", "frexp", "prod",
         "nansum", "nanmean", "aminmax", "std_mean", "var_mean", "mode", "quantile", "nanquantile", "diff"]
