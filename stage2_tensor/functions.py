"""PyTorch's functional forms of Tensor's methods: ``torch.exp(x)`` is ``x.exp()``,
``torch.sum(x, dim=1)`` is ``x.sum(dim=1)``. Each checks that its first argument is a
tensor (a plain number gets an error naming the function, not an AttributeError from
inside it) and calls the method, so an operation is written once, in methods.py's table."""
from .tensor import Tensor

def _functional(name, what):
    def function(input, *args, **kwargs):  # noqa: A002  (PyTorch's argument name)
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be a Tensor, not "
                            f"{type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"{what.capitalize()}: input.{name}(...) (PyTorch's torch.{name})."
    return function


# the noqa: PyTorch's names, which shadow Python's builtins in this module (it uses none of them after)
exp = _functional("exp", "e to the power of each element")
log = _functional("log", "the natural logarithm of each element")
sqrt = _functional("sqrt", "the square root of each element")
tanh = _functional("tanh", "the hyperbolic tangent of each element")
sigmoid = _functional("sigmoid", "1 / (1 + exp(-x)) of each element")
abs = _functional("abs", "the absolute value of each element")  # noqa: A001
argmax = _functional("argmax", "the index of the largest element (along dim)")
argmin = _functional("argmin", "the index of the smallest element (along dim)")
max = _functional("max", "the largest element; along dim, (values, indices); with a tensor, maximum")  # noqa: A001
min = _functional("min", "the smallest element; along dim, (values, indices); with a tensor, minimum")  # noqa: A001
sum = _functional("sum", "the sum of the elements (along dim)")  # noqa: A001
mean = _functional("mean", "the mean of the elements (along dim)")
var = _functional("var", "the variance (along dim): the squared deviations' sum over n - correction")
std = _functional("std", "the standard deviation (along dim), the square root of var")
flatten = _functional("flatten", "the dimensions start_dim to end_dim as one")
squeeze = _functional("squeeze", "without dimensions of size 1 (or only dim, if it has size 1)")
unsqueeze = _functional("unsqueeze", "with a dimension of size 1 inserted at dim")
maximum = _functional("maximum", "the element-wise larger of two tensors")
minimum = _functional("minimum", "the element-wise smaller of two tensors")
masked_fill = _functional("masked_fill", "value where the bool mask is true, the input elsewhere")
clamp = _functional("clamp", "each element limited to [min, max]")
tril = _functional("tril", "zeros above the diagonal")
triu = _functional("triu", "zeros below the diagonal")
chunk = _functional("chunk", "at most `chunks` views along dim")
pow = _functional("pow", "each element to the power `exponent` (a number or a tensor)")  # noqa: A001
neg = _functional("neg", "minus each element")
relu = _functional("relu", "max(x, 0) of each element")
erf = _functional("erf", "the error function of each element")
log1p = _functional("log1p", "log(1 + x) of each element, exact where x is tiny")
expm1 = _functional("expm1", "e^x - 1 of each element, exact where x is tiny")
sin = _functional("sin", "the sine of each element (radians)")
cos = _functional("cos", "the cosine of each element (radians)")
floor = _functional("floor", "the largest integer not above each element")
ceil = _functional("ceil", "the smallest integer not below each element")
trunc = _functional("trunc", "each element rounded toward zero")
round = _functional("round", "the nearest integer to each element, halves to even")  # noqa: A001
square = _functional("square", "each element times itself")
rsqrt = _functional("rsqrt", "1 / sqrt(x) of each element")
amax = _functional("amax", "the largest element over dim (all by default), values only")
amin = _functional("amin", "the smallest element over dim (all by default), values only")
logsumexp = _functional("logsumexp", "log(sum(exp(x))) over dim, without overflow")
unbind = _functional("unbind", "the slices along dim, each without it")
flip = _functional("flip", "reversed along dims")
roll = _functional("roll", "rotated by shifts along dims")
sign = _functional("sign", "-1, 0 or 1: the sign of each element")
diag = _functional("diag", "a vector on a matrix's diagonal, or a matrix's diagonal as a vector")
lerp = _functional("lerp", "input + weight * (end - input)")
addcmul = _functional("addcmul", "input + value * tensor1 * tensor2")
addcdiv = _functional("addcdiv", "input + value * tensor1 / tensor2")
