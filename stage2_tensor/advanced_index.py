"""Indexing with tensors, lists and bool masks, read and written (chapter 1, "Strides";
PyTorch's "advanced indexing"): ``x[mask]``, ``x[[2, 0]]``, ``x[:, idx]``, ``x[mask] = 0``.

Everything is brought to one form that ``views.getitem`` gathers with one ``index_select``:
integer tensors on the leading dimensions. A list becomes a tensor; a bool mask over k
dimensions becomes the k integer tensors of its true positions (``nonzero``, as PyTorch
defines ``x[mask]``), so the result has one row per true element; full slices before the
indexed dimensions are moved behind them and back (a permute, no copy). Gradients flow as
index_select's: scatter-added back to the rows read.

Writing, ``x[index] = value``, gathers nothing: value is broadcast to the shape ``x[index]``
would have, scattered into zeros of x's shape at the rows indexed (index_add; a row named
twice keeps its last value, as PyTorch's CPU), then ``where`` the rows were hit it replaces
x's elements, in place.
"""
from . import backend, dtypes, views
from .elementwise import where
from .factories import arange, as_tensor, tensor
from .strides import numel
from .tensor import Tensor


def nonzero(x):
    """The positions of x's nonzero (true) elements, one row of x.ndim int64 coordinates
    each, in row-major order (PyTorch's torch.nonzero): shape (count, x.ndim). The count,
    which decides the shape, is read on the host first (a sum); one kernel then writes the
    rows (kernels/indexing.py's nonzero)."""
    count = int((x != 0).sum().item())
    x = x.float() if x.dtype.is_half else x
    rows = backend.launch(x.device, "nonzero", x.as_view(), count, x.dtype, out_dtype=dtypes.int64)
    return Tensor.from_buffer(rows, (count, x.ndim), dtypes.int64, x.device)


def _is_advanced(i):
    return isinstance(i, (Tensor, list))


def _tensors(x, items):
    """items with lists made tensors and each bool mask replaced by the integer tensors of
    its true positions (one per dimension it covers)."""
    out, d = [], 0
    for i in items:
        if isinstance(i, list):
            i = tensor(i, device=x.device) if i else tensor([], dtype=dtypes.int64, device=x.device)
        if isinstance(i, Tensor) and i.dtype is dtypes.bool_:
            covered = x.shape[d:d + i.ndim]
            if i.shape != covered:
                raise IndexError(f"the shape of the mask {i.shape} at index {d} does not match the "
                                 f"shape of the indexed tensor {x.shape}")
            positions = nonzero(i)
            out.extend(positions[:, k] for k in range(i.ndim))
            d += i.ndim
            continue
        out.append(i)
        d += 0 if i is None else 1
    return out


def normalize(x, index):
    """(items, lead): index as a list of items with the advanced ones integer tensors, and
    the number of full slices before them, or None when index is basic (no tensor, no list)."""
    items = list(index) if isinstance(index, tuple) else [index]
    if not any(_is_advanced(i) for i in items):
        return None
    if Ellipsis in items:                             # '...' stands for the full slices it covers
        at = items.index(Ellipsis)
        named = sum(1 for i in items if i is not None and i is not Ellipsis
                    and not (isinstance(i, Tensor) and i.dtype is dtypes.bool_))
        named += sum(i.ndim for i in items if isinstance(i, Tensor) and i.dtype is dtypes.bool_)
        items[at:at + 1] = [slice(None)] * max(0, x.ndim - named)
    items = _tensors(x, items)
    lead = 0
    while lead < len(items) and items[lead] == slice(None) and not isinstance(items[lead], Tensor):
        lead += 1
    rest = items[lead:]
    k = 0
    while k < len(rest) and isinstance(rest[k], Tensor):
        k += 1
    if k == 0 or any(not (i == slice(None)) or isinstance(i, Tensor) for i in rest[k:]):
        raise IndexError("indexing with tensors, lists or masks supports them as one group, "
                         "with only ':' (or '...') around them, e.g. x[mask], x[idx], x[:, idx], "
                         "x[i, j]; index in two steps otherwise")
    return rest[:k], lead


def getitem(x, index):
    """x[index] for any index: views.basic_index's views, else the gather above."""
    found = normalize(x, index)
    if found is None:
        return views.getitem(x, index)
    tensors, lead = found
    if lead + len(tensors) > x.ndim:
        raise IndexError(f"too many indices for a tensor of shape {x.shape}")
    if lead:                                          # the indexed dimensions first, then back
        order = list(range(lead, lead + len(tensors))) + list(range(lead)) + \
            list(range(lead + len(tensors), x.ndim))
        out = views.getitem(x.permute(*order), _one(tensors))
        b = out.ndim - (x.ndim - len(tensors))        # the index's dimensions
        back = list(range(b, b + lead)) + list(range(b)) + list(range(b + lead, out.ndim))
        return out.permute(*back)
    return views.getitem(x, _one(tensors))


def _one(tensors):
    """What views.getitem takes: one tensor alone (its fast path, one index_select), else
    the tuple."""
    return tensors[0] if len(tensors) == 1 else tuple(tensors)


def setitem(x, index, value):
    """x[index] = value in place, for the advanced indices getitem takes; False (nothing
    written) when index is basic, which the caller writes as a view."""
    found = normalize(x, index)
    if found is None:
        return False
    tensors, lead = found
    if lead:
        order = list(range(lead, lead + len(tensors))) + list(range(lead)) + \
            list(range(lead + len(tensors), x.ndim))
        target = x.permute(*order)                    # a view: the write lands in x
        inner = x.shape[:lead]
    else:
        target, inner = x, ()
    k = len(tensors)
    if k > target.ndim:
        raise IndexError(f"too many indices for a tensor of shape {x.shape}")
    lead_shape, rest = target.shape[:k], target.shape[k:]
    # which rows of target's leading dimensions (flattened) the index names, in its shape
    numbered = arange(numel(lead_shape), device=x.device).reshape(*lead_shape)
    positions = views.getitem(numbered, _one(tensors))
    index_shape = positions.shape
    # value broadcasts to the shape x[index] has: the full slices, index's shape, the rest
    shown = inner + index_shape + rest[lead:]
    src = as_tensor(value, dtype=x.dtype, device=x.device)
    try:
        src = src.broadcast_to(shown)
    except ValueError:
        raise ValueError(f"shape mismatch: value tensor of shape {src.shape} cannot be broadcast "
                         f"to indexing result of shape {shown}") from None
    if lead:                                          # in target's order: index, full slices, rest
        b = len(index_shape)
        src = src.permute(*(list(range(lead, lead + b)) + list(range(lead)) + list(range(lead + b, src.ndim))))
    flat = positions.reshape(-1).tolist()
    last = {p: j for j, p in enumerate(flat)}         # a row named twice: its last value
    src = src.reshape(len(flat), *rest)
    if len(last) < len(flat):
        src = src.index_select(0, tensor(list(last.values()), dtype=dtypes.int64, device=x.device))
    rows = tensor(list(last), dtype=dtypes.int64, device=x.device)
    scattered = views.IndexAdd.apply(src.contiguous(), (numel(lead_shape), *rest), 0, rows)
    hit = [False] * numel(lead_shape)
    for p in last:
        hit[p] = True
    hit = tensor(hit, dtype=dtypes.bool_, device=x.device).reshape(*lead_shape, *[1] * len(rest))
    target._write("__setitem__", where(hit, scattered.reshape(target.shape), target))
    return True
