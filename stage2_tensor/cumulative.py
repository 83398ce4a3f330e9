"""cumsum: running sums along one dimension, as PyTorch's ``torch.cumsum(input, dim)``.

A composite: out[..., j] = sum over i <= j of x[..., i] is x (dim moved last) times the
upper-triangular ones matrix U (U[i, j] = 1 where i <= j). Its gradient is matmul's, the
upstream gradient times U^T: the running sum taken from the end (the reversed cumsum).
An n x n matrix for n elements along dim: fine at a learner's sizes, not for long rows.
"""
from . import dtypes, factories
from .strides import normalize_dim
from .tensor import Tensor


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
    n = x.shape[dim]
    i = factories.arange(n, dtype=dtypes.int64, device=x.device)
    upper = (i.reshape(n, 1) <= i.reshape(1, n)).to(dtype=dtype)
    return (x.transpose(dim, -1) @ upper).transpose(dim, -1)
