"""cumsum: running sums along one dimension, as PyTorch's ``torch.cumsum(input, dim)``.

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
"""
from . import dtypes
from .gradient_function import GradientFunction
from .reorder import flip
from .strides import normalize_dim
from .tensor import Tensor


class Cumsum(GradientFunction):
    def forward(self, x, dim):
        self.dim = dim
        return x.launch("cumsum", x.as_view(), dim, x.dtype, shape=x.shape, dtype=x.dtype)

    def backward(self, grad):
        return (flip(Cumsum.apply(flip(grad, self.dim), self.dim), self.dim),)


def cumsum(input, dim, *, dtype=None):  # noqa: A002  (PyTorch's argument names)
    """Running sums along dim. Integer and bool inputs sum as int64 (as PyTorch), unless
    ``dtype`` says otherwise; a 0-d tensor is its own cumsum."""
    if not isinstance(input, Tensor):
        raise TypeError(f"cumsum(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"cumsum(): argument 'dim' must be an int, not {type(dim).__name__}")
    dim = normalize_dim(dim, max(input.ndim, 1))      # a 0-d tensor takes dim 0 or -1
    dtype = dtype or (input.dtype if input.dtype.is_floating_point else dtypes.int64)
    x = input.to(dtype=dtype)
    if x.ndim == 0:
        return x.clone()
    return Cumsum.apply(x, dim)
