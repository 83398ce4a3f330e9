"""sort, argsort and topk along one dimension, as PyTorch's.

Finding the order is not differentiable and is done in Python: each row along dim is read
out (``tolist``) and ordered with ``sorted`` over its positions, which is stable (equal
values keep their order, as PyTorch's ``stable=True``). NaN sorts as larger than every
number, as in PyTorch: last ascending, first descending. The values are then
``gather(input, dim, indices)``, so their gradient scatter-adds back to where each value
came from; the indices are int64 and carry no gradient.
"""
import math
from collections import namedtuple

from . import dtypes, factories
from .gathering import gather
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


def _key(value):
    return (1, 0.0) if isinstance(value, float) and math.isnan(value) else (0, value)


def _order(input, dim, descending):  # noqa: A002
    """The int64 indices that sort input along dim (dim normalized)."""
    if input.ndim == 0:
        return factories.zeros((), dtype=dtypes.int64, device=input.device)
    moved = input.detach().transpose(dim, -1)
    n = moved.shape[-1]
    rows = moved.reshape(-1, n).tolist() if moved.numel() else []
    flat = [i for row in rows
            for i in sorted(range(n), key=lambda i, row=row: _key(row[i]), reverse=descending)]
    order = factories.tensor(flat, dtype=dtypes.int64, device=input.device)
    return order.reshape(*moved.shape).transpose(dim, -1).contiguous()


def sort(input, dim=-1, descending=False, stable=False):  # noqa: A002  (PyTorch's names)
    """(values, indices): input sorted along dim, ascending unless ``descending``, and
    where each value came from (input.gather(dim, indices) == values). Always stable, so
    ``stable`` changes nothing."""
    dim = _check("sort", input, dim)
    if not isinstance(descending, bool) or not isinstance(stable, bool):
        raise TypeError(f"sort(): descending and stable must be bools, got {descending!r}, {stable!r}")
    indices = _order(input, dim, descending)
    return SortResult(gather(input, dim, indices), indices)


def argsort(input, dim=-1, descending=False, stable=False):  # noqa: A002
    """The indices that sort input along dim: sort(...).indices."""
    dim = _check("argsort", input, dim)
    if not isinstance(descending, bool) or not isinstance(stable, bool):
        raise TypeError(f"argsort(): descending and stable must be bools, got {descending!r}, {stable!r}")
    return _order(input, dim, descending)


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
    indices = _order(input, dim, largest)
    if input.ndim:
        indices = _first(indices, dim, k)
    return TopkResult(gather(input, dim, indices), indices)


def _first(t, dim, k):
    return t[(slice(None),) * dim + (slice(0, k),)].contiguous()
