"""sort, argsort, topk, msort, kthvalue, median and nanmedian along one dimension, as PyTorch's.

All three are one kernel (kernels/ordering.py's ``topk``): the first k elements of each row
along dim, in order, with their positions; sort and argsort ask for all of them, topk for
k, which the native kernels find in O(n log k) time without sorting the rest. The order is
PyTorch's stable sort: NaN larger than every number (last ascending, first descending),
equal values in the order of their positions, so ``stable`` changes nothing and topk's ties
go to the lower index. Finding the order is not differentiable; the values' gradient goes
back to the position each value came from (a scatter-add into zeros), and the indices are
int64 and carry no gradient.

kthvalue and median select one position of the same order (kernels/ordering.py's
``kthvalue``, O(n) expected, as PyTorch's quickselect): the k-th smallest, NaN largest. Of
equal values the index is the one at that position of the stable order (PyTorch's
quickselect leaves it to the partitions; the values agree). median is the lower of the two
middle values, and NaN where a row holds one (at the first NaN); nanmedian leaves NaN out
(the k of each row then differs: a sort of the rows, O(n log n), where NaN is present).
Gradients go to the selected index; median() and nanmedian() of all elements spread theirs
evenly over the elements equal to the result, as PyTorch's.
"""
from collections import namedtuple
import math

from . import backend as backends
from . import dtypes, factories
from .elementwise import where
from .gathering import scatter_add
from .gradient_function import GradientFunction
from .strides import normalize_dim
from .tensor import Tensor

# PyTorch's torch.return_types.sort / topk: a tuple that also has .values and .indices
SortResult = namedtuple("sort", "values indices")
TopkResult = namedtuple("topk", "values indices")
KthvalueResult = namedtuple("kthvalue", "values indices")
MedianResult = namedtuple("median", "values indices")
NanmedianResult = namedtuple("nanmedian", "values indices")


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


def computed(x):
    """x in its compute dtype: a half tensor as float32, a small integer one (uint8, int8,
    int16) as int64, which order the same (the ordering kernels only compare and move
    values); other tensors as they are."""
    return x if x.dtype.compute is x.dtype else x.to(dtype=x.dtype.compute)


def _first(input, k, dim, descending):  # noqa: A002
    """(values, indices): the first k elements of input along dim (normalized) in order, and
    where each came from, ordered in input's compute dtype (``computed``)."""
    if input.ndim == 0:                 # a 0-d tensor is its own order, at index 0
        return input.clone(), factories.zeros((), dtype=dtypes.int64, device=input.device)
    x = computed(input)
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


def msort(input):  # noqa: A002
    """input sorted along its first dimension: sort(input, dim=0).values."""
    if not isinstance(input, Tensor):
        raise TypeError(f"msort(): argument 'input' must be a Tensor, not {type(input).__name__}")
    return sort(input, 0).values


def _no_bool(op, input):  # noqa: A002
    if input.dtype is dtypes.bool_:
        raise NotImplementedError(f"{op}(): not implemented for bool tensors, as PyTorch's")


def _select(input, k, dim, keepdim):  # noqa: A002
    """(values, indices): the element at position k (from 0) of each row along dim in sort's
    ascending order, dim kept with size 1 when ``keepdim``."""
    if input.ndim == 0:
        return input.clone(), factories.zeros((), dtype=dtypes.int64, device=input.device)
    x = computed(input)
    values, indices = backends.launch(x.device, "kthvalue", x.as_view(), k, dim, x.dtype, out_dtype=x.dtype)
    kept = input.shape[:dim] + (1,) + input.shape[dim + 1:]
    indices = Tensor.from_buffer(indices, kept, dtypes.int64, x.device)
    values = _Ordered.apply(x, dim, indices, values)
    values = values.to(dtype=input.dtype) if x is not input else values
    return (values, indices) if keepdim else (values.squeeze(dim), indices.squeeze(dim))


def _check_keepdim(op, keepdim):
    if not isinstance(keepdim, bool):
        raise TypeError(f"{op}(): argument 'keepdim' must be a bool, not {type(keepdim).__name__}")


def kthvalue(input, k, dim=-1, keepdim=False):  # noqa: A002
    """(values, indices): the k-th smallest element (k from 1) of each row along dim and
    its index, NaN larger than every number."""
    dim = _check("kthvalue", input, dim)
    _check_keepdim("kthvalue", keepdim)
    _no_bool("kthvalue", input)
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"kthvalue(): argument 'k' must be an int, not {type(k).__name__}")
    size = input.shape[dim] if input.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}: k is {k}, "
                           f"the dimension has {size} elements")
    return KthvalueResult(*_select(input, k - 1, dim, keepdim))


def _nan(x):
    """Where x is NaN (never, for an integer tensor). Asked whether any is by the sum of
    these bools: one reduction, where .any() compares with 0 and converts first."""
    return x != x


def _median_along(op, input, dim, keepdim, skip_nan):  # noqa: A002
    dim = _check(op, input, dim)
    _check_keepdim(op, keepdim)
    _no_bool(op, input)
    size = input.shape[dim] if input.ndim else 1
    if size == 0:
        raise IndexError(f"{op}(): Expected reduction dim {dim} to have non-zero size.")
    if input.ndim == 0 or not input.dtype.is_floating_point or not _nan(input).sum().item():
        return _select(input, (size - 1) // 2, dim, keepdim)
    x = input.detach()
    nan = _nan(x)
    if skip_nan:            # each row's k counts its numbers only: read from the sorted rows
        k = (size - 1 - nan.sum(dim, keepdim=True)).clamp(min=0) // 2
        indices = sort(x, dim).indices.gather(dim, k)
    else:                   # a row holding NaN has its first NaN as median
        first_nan = nan.argmax(dim, keepdim=True)
        middle = _select(x, (size - 1) // 2, dim, True)[1]
        indices = where(nan.sum(dim, keepdim=True) > 0, first_nan, middle)
    values = input.gather(dim, indices)
    return (values, indices) if keepdim else (values.squeeze(dim), indices.squeeze(dim))


class _EvenlySpread(GradientFunction):
    """median() and nanmedian() of all elements: the gradient shared evenly by the elements
    equal to the result (the NaN ones when it is NaN), as PyTorch's."""

    def backward(self, grad):
        x, value = self.saved_tensors
        mask = _nan(x) if value.item() != value.item() else x == value
        mask = mask.to(dtype=grad.dtype)
        return (mask * (grad / mask.sum()),)


def _spread_evenly(input, value):  # noqa: A002
    """value, a new 0-d tensor computed from input, linked to input by _EvenlySpread."""
    fn = _EvenlySpread()
    fn.save_for_backward(input, value)
    return fn.link(value, (input,))


def _median_of_all(op, input, skip_nan):  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    _no_bool(op, input)
    x = input.detach().reshape(-1)
    nans = int(_nan(x).sum().item()) if x.dtype.is_floating_point else 0
    count = x.shape[0] - (nans if skip_nan else 0)
    if count == 0 or (nans and not skip_nan):          # nothing to take the middle of, or a NaN
        value = factories.full((), math.nan, dtype=input.dtype, device=input.device)
    else:
        value = _select(x, (count - 1) // 2, 0, False)[0]
    return _spread_evenly(input, value.detach())


def median(input, dim=None, keepdim=False):  # noqa: A002
    """The lower of the two middle values of input's elements (a 0-d tensor; NaN when one
    is NaN or there are none), or along dim, (values, indices): each row's, NaN and the
    first NaN's index in a row holding NaN."""
    if dim is None:
        return _median_of_all("median", input, False)
    return MedianResult(*_median_along("median", input, dim, keepdim, False))


def nanmedian(input, dim=None, keepdim=False):  # noqa: A002
    """median with NaN left out: the lower middle of the numbers (NaN only where there are
    none)."""
    if dim is None:
        return _median_of_all("nanmedian", input, True)
    return NanmedianResult(*_median_along("nanmedian", input, dim, keepdim, True))
