"""torch.special: PyTorch's special functions under their names there, each one of
tracegrad's functions (most of them aliases of torch.X, as in PyTorch)."""
from . import math_api
from . import math_functions as mf
from .elementwise import unary
from .softmax import log_softmax as _log_softmax
from .softmax import softmax as _softmax
from .torch_compat import _functional

erf = _functional("erf", "the error function of each element")
erfc = math_api.erfc
erfinv = math_api.erfinv
expit = _functional("sigmoid", "1 / (1 + e^-x) of each element")
logit = math_api.logit
xlogy = math_api.xlogy
xlog1py = mf.xlog1py
ndtr = mf.ndtr
ndtri = mf.ndtri
gammaln = math_api.lgamma
digamma = psi = math_api.digamma
polygamma = math_api.polygamma
multigammaln = math_api.mvlgamma
i0 = math_api.i0
sinc = math_api.sinc
entr = mf.entr
round = _functional("round", "the nearest integer to each element, halves to even")  # noqa: A001
log1p = _functional("log1p", "log(1 + x) of each element")
expm1 = _functional("expm1", "e^x - 1 of each element")
exp2 = math_api.exp2
logsumexp = _functional("logsumexp", "log(sum(exp(x))) over dim, without overflow")


def i1(input):  # noqa: A002  (PyTorch's argument name)
    """The modified Bessel function of the first kind, order 1, of each element."""
    mf.check_tensor("i1", input)
    return unary("i1", input)


def log_ndtr(input):  # noqa: A002
    """log of ndtr, as computed: -inf where ndtr underflows (below about -38 in float64,
    -13 in float32), where PyTorch's asymptotic form stays finite."""
    mf.check_tensor("log_ndtr", input)
    return unary("log", mf.ndtr(input))


def softmax(input, dim, *, dtype=None):  # noqa: A002
    return _softmax(input if dtype is None else input.to(dtype=dtype), dim)


def log_softmax(input, dim, *, dtype=None):  # noqa: A002
    return _log_softmax(input if dtype is None else input.to(dtype=dtype), dim)
