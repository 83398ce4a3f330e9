"""sort, argsort and topk along one dimension, as PyTorch's.

All three are one kernel (kernels/ordering.py's ``topk``): the first k elements of each row
along dim, in order, with their positions; sort and argsort ask for all of them, topk for
k, which the native kernels find in O(n log k) time without sorting the rest. The order is
PyTorch's stable sort: NaN larger than every number (last ascending, first descending),
equal values in the order of their positions, so ``stable`` changes nothing and topk's ties
go to the lower index. Finding the order is not differentiable; the values' gradient goes
back to the position each value came from (a scatter-add into zeros), and the indices are
int64 and carry no gradient.
"""
from collections import namedtuple

from . import backend as backends
from . import dtypes, factories
from .gathering import scatter_add
from .gradient_function import GradientFunction
from .strides import normalize_dim
from .tensor import Tensor

# PyTorch's torch.return_types.sort / topk: a tuple that also has .values and .indices
SortResult = namedtuple("sort", "values indices")
TopkResult = namedtuple("topk", "values indices")


def _check(op, input, dim):  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{op}(): argument 'dim' must be an int, not {type(dim).__name__}")
    return normalize_dim(dim, max(input.ndim, 1))     # a 0-d tensor takes dim 0 or -1, as PyTorch


class _Ordered(GradientFunction):
    """The link from x to the values the ordering kernel moved (the buffer ``values``, at
    ``indices`` along dim): each value's gradient goes back to its position."""

    def forward(self, x, dim, indices, values):
        self.dim, self.shape = dim, x.shape
        self.save_for_backward(indices)
        return Tensor.from_buffer(values, indices.shape, x.dtype, x.device)

    def backward(self, grad):
        (indices,) = self.saved_tensors
        zeros = factories.zeros(self.shape, dtype=grad.dtype, device=grad.device)
        return scatter_add(zeros, self.dim, indices, grad), None


def _first(input, k, dim, descending):  # noqa: A002
    """(values, indices): the first k elements of input along dim (normalized) in order, and
    where each came from. A half tensor is ordered as float32 (the same order: values are
    only compared and moved)."""
    if input.ndim == 0:                 # a 0-d tensor is its own order, at index 0
        return input.clone(), factories.zeros((), dtype=dtypes.int64, device=input.device)
    x = input.float() if input.dtype.is_half else input
    values, indices = backends.launch(x.device, "topk", x.as_view(), k, dim, descending, x.dtype, out_dtype=x.dtype)
    shape = input.shape[:dim] + (k,) + input.shape[dim + 1:]
    indices = Tensor.from_buffer(indices, shape, dtypes.int64, x.device)
    values = _Ordered.apply(x, dim, indices, values)
    return (values.to(dtype=input.dtype) if x is not input else values), indices


def sort(input, dim=-1, descending=False, stable=False):  # noqa: A002  (PyTorch's names)
    """(values, indices): input sorted along dim, ascending unless ``descending``, and
    where each value came from (input.gather(dim, indices) == values). Always stable, so
    ``stable`` changes nothing."""
    dim = _check("sort", input, dim)
    if not isinstance(descending, bool) or not isinstance(stable, bool):
        raise TypeError(f"sort(): descending and stable must be bools, got {descending!r}, {stable!r}")
    return SortResult(*_first(input, input.shape[dim] if input.ndim else 1, dim, descending))


def argsort(input, dim=-1, descending=False, stable=False):  # noqa: A002
    """The indices that sort input along dim: sort(...).indices."""
    dim = _check("argsort", input, dim)
    if not isinstance(descending, bool) or not isinstance(stable, bool):
        raise TypeError(f"argsort(): descending and stable must be bools, got {descending!r}, {stable!r}")
    return _first(input.detach(), input.shape[dim] if input.ndim else 1, dim, descending)[1]


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    """(values, indices) of the k largest (``largest=False``: smallest) elements along dim,
    in order, largest first (smallest first). PyTorch leaves the order unspecified when
    ``sorted=False``; here it is sorted either way. Ties go to the lower index."""
    dim = _check("topk", input, dim)
    size = input.shape[dim] if input.ndim else 1
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"topk(): argument 'k' must be an int, not {type(k).__name__}")
    if not 0 <= k <= size:
        raise RuntimeError(f"topk(): k ({k}) is out of range: expected 0 <= k <= {size}, the "
                           f"size of dimension {dim} of the input of shape {input.shape}")
    return TopkResult(*_first(input, k, dim, largest))
