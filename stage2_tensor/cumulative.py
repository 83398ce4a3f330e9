"""Running scans along one dimension, as PyTorch's: cumsum, cumprod, cummax, cummin and
logcumsumexp, each one kernel that walks each row once (kernels/reductions.py).

One kernel (backend.py's ``cumsum``) walks each row along dim once, in order, adding as
it goes: out[..., j] = x[..., 0] + ... + x[..., j] costs one addition per element. And a
nan or an infinity at position i reaches the sums from i on, and no earlier one, as in
PyTorch: [1, inf, 2] gives [1, inf, inf], [1, nan, 2] gives [1, nan, nan], [1, -inf, inf]
gives [1, -inf, nan]. (Written as x times the triangular matrix of ones, a running sum
costs n^2 multiplications for n elements, and each x_i * 0 above the diagonal turns an
infinity into nan, in every sum of its row.)

Its gradient: out[j] is the sum of x[i] for every i <= j, so dL/dx[i] is the sum of the
upstream gradient g[j] over every j >= i: the running sum of g taken from the end, the
reversed cumsum (flip, cumsum, flip).

The other scans' gradients are PyTorch's, each a few passes of the scans themselves:
- cumprod: out[j] is the product of x[i] for i <= j, so dL/dx[i] = sum over j >= i of
  g[j] out[j] / x[i], the reversed cumsum of g * out over x, where no zero comes at or
  before i. After a row's first zero, at k, every product holds x[k]: an x[i] after it
  gets 0, and x[k] itself the reversed cumsum of g times the products with x[k] taken as 1.
- cummax, cummin: each output is one input, the one at its index: the gradient goes back
  there (a scatter-add, as sort's).
- logcumsumexp: dL/dx[i] = sum over j >= i of g[j] e^(x[i] - out[j]), the positive and the
  negative parts of g each summed as a reversed logcumsumexp of log|g| - out, so nothing
  overflows.
"""
from collections import namedtuple

from . import backend as backends
from . import dtypes, factories
from .elementwise import where
from .gathering import scatter_add
from .gradient_function import GradientFunction
from .reorder import flip
from .sorting import computed
from .strides import normalize_dim
from .tensor import Tensor

# PyTorch's torch.return_types.cummax / cummin: a tuple that also has .values and .indices
CummaxResult = namedtuple("cummax", "values indices")
CumminResult = namedtuple("cummin", "values indices")


class Cumsum(GradientFunction):
    def forward(self, x, dim):
        self.dim = dim
        return x.launch("cumsum", x.as_view(), dim, x.dtype, shape=x.shape, dtype=x.dtype)

    def backward(self, grad):
        return (flip(Cumsum.apply(flip(grad, self.dim), self.dim), self.dim),)


class Cumprod(GradientFunction):
    def forward(self, x, dim):
        self.dim = dim
        out = x.launch("cumprod", x.as_view(), dim, x.dtype, shape=x.shape, dtype=x.dtype)
        self.save_for_backward(x, out)
        return out

    def backward(self, grad):
        x, out = self.saved_tensors
        dim = self.dim
        zero = x == 0
        if not zero.sum().item():
            return (_reversed_cumsum(grad * out, dim) / x,)
        seen = cumsum(zero, dim)                        # zeros at or before each position
        before, first = seen == 0, seen * zero == 1     # first: the first zero of its row
        upto_zero = _reversed_cumsum(grad * out, dim) / where(before, x, 1.0)
        ones_at_zero = Cumprod.apply(where(first, 1.0, x), dim)
        at_zero = _reversed_cumsum(grad * ones_at_zero, dim)
        return (where(before, upto_zero, where(first, at_zero, 0.0)),)


class LogCumSumExp(GradientFunction):
    def forward(self, x, dim):
        self.dim = dim
        out = x.launch("logcumsumexp", x.as_view(), dim, x.dtype, shape=x.shape, dtype=x.dtype)
        self.save_for_backward(x, out)
        return out

    def backward(self, grad):
        x, out = self.saved_tensors
        lowest = dtypes.finfo(grad.dtype).min            # log of a zero part: e^(lowest - ...) is 0
        log_abs = grad.abs().log()
        parts = [where(grad > 0, log_abs, lowest), where(grad < 0, log_abs, lowest)]
        positive, negative = ((_reversed(LogCumSumExp.apply(_reversed(p - out, self.dim), self.dim), self.dim)
                               + x).exp() for p in parts)
        return (positive - negative,)


class _RunningExtreme(GradientFunction):
    """cummax's values (cummin's when ``smallest``): the gradient goes back to each value's
    index, which the kernel gives beside it (``self.indices``)."""

    def forward(self, x, dim, smallest):
        self.dim, self.shape = dim, x.shape
        values, indices = backends.launch(x.device, "cummax", x.as_view(), dim, smallest, x.dtype, out_dtype=x.dtype)
        self.indices = Tensor.from_buffer(indices, x.shape, dtypes.int64, x.device)
        self.save_for_backward(self.indices)
        return Tensor.from_buffer(values, x.shape, x.dtype, x.device)

    def backward(self, grad):
        (indices,) = self.saved_tensors
        zeros = factories.zeros(self.shape, dtype=grad.dtype, device=grad.device)
        return scatter_add(zeros, self.dim, indices, grad), None, None


def _reversed(t, dim):
    return flip(t, dim)


def _reversed_cumsum(t, dim):
    """The running sums of t taken from the end of each row along dim."""
    return flip(Cumsum.apply(flip(t, dim), dim), dim)


def _check(op, input, dim):  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{op}(): argument 'dim' must be an int, not {type(dim).__name__}")
    return normalize_dim(dim, max(input.ndim, 1))      # a 0-d tensor takes dim 0 or -1


def _running(op, cls, input, dim, dtype):  # noqa: A002
    """cumsum's and cumprod's shared front: integer and bool inputs run as int64 (as
    PyTorch), unless ``dtype`` says otherwise; a 0-d tensor is its own result."""
    dim = _check(op, input, dim)
    dtype = dtype or (input.dtype if input.dtype.is_floating_point else dtypes.int64)
    x = input.to(dtype=dtype)
    if x.ndim == 0:
        return x.clone()
    return cls.apply(x, dim)


def cumsum(input, dim, *, dtype=None):  # noqa: A002  (PyTorch's argument names)
    """Running sums along dim. Integer and bool inputs sum as int64 (as PyTorch), unless
    ``dtype`` says otherwise; a 0-d tensor is its own cumsum."""
    return _running("cumsum", Cumsum, input, dim, dtype)


def cumprod(input, dim, *, dtype=None):  # noqa: A002
    """Running products along dim, dtypes as cumsum's. Differentiable with zeros in the
    input (PyTorch's rule, the module's docstring)."""
    return _running("cumprod", Cumprod, input, dim, dtype)


def _extremes(op, input, dim, smallest):  # noqa: A002
    dim = _check(op, input, dim)
    result = CumminResult if smallest else CummaxResult
    if input.ndim == 0:                 # a 0-d tensor is its own extreme, at index 0
        return result(input.clone(), factories.zeros((), dtype=dtypes.int64, device=input.device))
    x = computed(input)                                         # a half as float32: the same order
    fn = _RunningExtreme()
    values = fn.link(fn.forward(x, dim, smallest), (x,))
    return result(values.to(dtype=input.dtype) if x is not input else values, fn.indices)


def cummax(input, dim):  # noqa: A002
    """(values, indices): the running maximum along dim and where each was found. Of equal
    values the last is taken, and a NaN takes the place of every number (the last NaN
    seen), as PyTorch's."""
    return _extremes("cummax", input, dim, False)


def cummin(input, dim):  # noqa: A002
    """(values, indices): the running minimum along dim, cummax's rules mirrored."""
    return _extremes("cummin", input, dim, True)


def logcumsumexp(input, dim):  # noqa: A002
    """log(cumsum(exp(input))) along dim, computed without overflow (kernels/reductions.py).
    Floating-point inputs only, as PyTorch's."""
    dim = _check("logcumsumexp", input, dim)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"logcumsumexp(): not implemented for {input.dtype.name}: it takes "
                                  "floating-point tensors, as PyTorch's")
    if input.ndim == 0:
        return input.clone()
    return LogCumSumExp.apply(input, dim)
