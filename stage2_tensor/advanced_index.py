"""Indexing with tensors, lists and bool masks, read and written (chapter 1, "Strides";
PyTorch's "advanced indexing"): ``x[mask]``, ``x[[2, 0]]``, ``x[:, idx]``,
``x[range(n), y] = v``, ``x.index_put_(indices, values, accumulate=True)``.

PyTorch's rules, which these follow: ints (a Python int, a numpy integer, a 0-d integer
tensor), slices, None and ``...`` index as views do (views.basic_index). Every other index
is advanced: an integer tensor (a list, a range or a numpy array becomes one) picks along
its dimension, a bool mask over k dimensions stands for the k integer tensors of its true
positions (``nonzero``), and a bool (a 0-d mask) adds a dimension of size 1, kept or empty.
The advanced indices broadcast together to one shape S, which replaces the dimensions they
index: in their place when those are neighbours, else first (x[i, :, j] has S first).

One plan serves reading and writing: the basic index, which makes a view, and the
dimensions of that view the tensors index. The kernels (index_kernels.py) take the view
with those dimensions permuted first, no copy, and the tensors stacked as one (k, *S)
int64 tensor. One index tensor on the leading dimension (an embedding's lookup) reads with
index_select instead, whose gradient (index_add) is the faster scatter. An index out of
range raises IndexError naming it, its size and, as PyTorch, its dimension counted among
the indexed ones (x[:, [5]] on 3 columns: dimension 0).

Writing, ``x[index] = value``, is index_put in place: value broadcast to the shape x[index]
has, then written through the same view; of an element named twice one value lands (the
last, but on CUDA: PyTorch leaves it undefined). A bool mask and one value is masked_fill's
``where`` instead, which needs no positions.
"""
from . import backend, concat, dtypes, views
from .broadcast import broadcast_shapes
from .elementwise import where
from .factories import as_tensor, tensor, zeros
from .index_kernels import Index, IndexPut, arrange, put
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


# ---- the plan: an index as PyTorch reads it ---------------------------------------------------
def is_basic(index):
    """Whether index holds only ints, slices, None and ``...`` (views.basic_index's)."""
    items = index if type(index) is tuple else (index,)
    return all(i is None or i is Ellipsis or type(i) is int or type(i) is slice for i in items)


def _as_tuple(seq):
    """PyTorch's reading of a list as the whole index: a tuple of indices when it holds a
    tensor, a sequence, a slice, None or ``...`` (and fewer than 32 items), else one index."""
    return len(seq) < 32 and any(i is None or i is Ellipsis or isinstance(i, (Tensor, list, tuple, range, slice))
                                 or hasattr(i, "__array__") for i in seq)


def _item(i, device, ints_select):
    """One index as the plan takes it: an int, a slice, None, ``...``, a bool (a 0-d mask),
    or a tensor on ``device``, int64 or a bool mask of at least one dimension. A 0-d integer
    tensor is an int when ``ints_select`` (x[t], PyTorch's select), else an index tensor."""
    if isinstance(i, Tensor):
        if i.dtype is dtypes.bool_:
            return bool(i.item()) if i.ndim == 0 else i.to(device=device)
        if i.dtype not in (dtypes.int32, dtypes.int64):
            raise IndexError(f"tensors used as indices must be long, int or bool tensors, got {i.dtype}")
        if i.ndim == 0 and ints_select:
            return int(i.item())
        return i.to(device=device, dtype=dtypes.int64)
    if i is None or i is Ellipsis or isinstance(i, (int, slice)):   # a bool is an int too
        return i
    if isinstance(i, (list, tuple, range)):
        made = tensor(list(i), device=device) if len(i) else tensor([], dtype=dtypes.int64, device=device)
        return _item(made, device, ints_select)
    if hasattr(i, "__array__"):                       # a numpy array or number
        return _item(tensor(i, device=device), device, ints_select)
    if hasattr(i, "__index__"):
        return i.__index__()
    raise TypeError(f"unsupported index {i!r} ({type(i).__name__}): expected an int, a slice, None, ..., a bool, "
                    "a list, or an integer or bool tensor")


def plan(x, index, ints_select=True):
    """(basic, advanced) for x[index]: the tuple of ints, slices and None that makes the view
    the advanced indices index, and those as (dimension of that view, tensor) pairs, a bool
    mask standing for the dimensions it covers."""
    if isinstance(index, tuple):
        items = index
    else:
        items = index if isinstance(index, list) and _as_tuple(index) else (index,)
    items = [_item(i, x.device, ints_select) for i in items]
    if sum(i is Ellipsis for i in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(i.ndim if isinstance(i, Tensor) and i.dtype is dtypes.bool_ else 1 for i in items
               if not (i is None or i is Ellipsis or type(i) is bool))
    if used > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (shape {x.shape})")
    basic, advanced, dim, out = [], [], 0, 0          # dim: of x; out: of the view
    for i in items:
        if i is Ellipsis:
            n = x.ndim - used
            basic += [slice(None)] * n
            dim, out = dim + n, out + n
        elif i is None:
            basic.append(None)
            out += 1
        elif type(i) is bool:                         # a new dimension: its one position, or none
            basic.append(None)
            advanced.append((out, zeros(int(i), dtype=dtypes.int64, device=x.device)))
            out += 1
        elif isinstance(i, Tensor):
            k = i.ndim if i.dtype is dtypes.bool_ else 1
            if i.dtype is dtypes.bool_:
                _check_mask(i, x, dim)
            basic += [slice(None)] * k
            advanced.append((out, i))
            dim, out = dim + k, out + k
        else:                                         # an int (a select) or a slice
            basic.append(i)
            dim, out = dim + 1, out + (not isinstance(i, int))
    return tuple(basic), advanced


def _check_mask(mask, x, dim):
    for j, n in enumerate(mask.shape):
        if x.shape[dim + j] != n:
            raise IndexError(f"The shape of the mask {mask.shape} at index {j} does not match the shape of the "
                             f"indexed tensor {x.shape} at index {dim + j}")


def _changes(basic):
    return any(not (type(b) is slice and b == slice(None)) for b in basic)


def _tensors(advanced):
    """(dims, tensors, S): each mask replaced by the integer tensors of its true positions,
    and the shape the tensors broadcast to."""
    dims, tensors = [], []
    for d, t in advanced:
        if t.dtype is dtypes.bool_:
            found = nonzero(t)
            dims += range(d, d + t.ndim)
            tensors += [found[:, j] for j in range(t.ndim)]
        else:
            dims.append(d)
            tensors.append(t)
    try:
        shape = broadcast_shapes(*(t.shape for t in tensors))
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(t.shape)) for t in tensors)) from None
    return dims, tensors, shape


def _layout(ndim, dims):
    """(order, lead): the permutation of the view bringing dims first, and where S goes in
    the result: after the first ``lead`` other dimensions (dims's place, when they are
    neighbours), else first (lead 0)."""
    order = list(dims) + [d for d in range(ndim) if d not in dims]
    together = list(dims) == list(range(dims[0], dims[0] + len(dims)))
    return order, dims[0] if together else 0


def _s_back(n_s, lead, ndim):
    """The permutation of a (S..., others...) result that moves S behind the first ``lead``
    others."""
    return list(range(n_s, n_s + lead)) + list(range(n_s)) + list(range(n_s + lead, ndim))


def _stacked(tensors, shape):
    """The tensors broadcast to shape, stacked: the (k, *S) int64 tensor the kernels read."""
    if len(tensors) == 1:
        return tensors[0].broadcast_to(shape).reshape(1, *shape)
    return concat.stack([t.broadcast_to(shape) for t in tensors])


# ---- reading ----------------------------------------------------------------------------------
def getitem(x, index):
    """x[index]: a view for a basic index, else a gather (differentiable)."""
    if is_basic(index):
        return views.Slice.apply(x, index)
    basic, advanced = plan(x, index)
    view = views.Slice.apply(x, basic) if _changes(basic) else x
    if not advanced:
        return view
    dims, tensors, shape = _tensors(advanced)
    if dims == [0]:                                   # the leading dimension alone: index_select
        rows = views.IndexSelect.apply(view, 0, tensors[0].reshape(-1))
        return rows.reshape(*shape, *view.shape[1:])
    order, lead = _layout(view.ndim, dims)
    out = Index.apply(view.permute(*order), _stacked(tensors, shape))
    return out.permute(*_s_back(len(shape), lead, out.ndim)) if lead else out


# ---- writing ----------------------------------------------------------------------------------
def _values(value, shape, others, lead):
    """value as index_put reads it: broadcast to the shape x[index] has (leading 1s beyond
    it dropped, as PyTorch), then with S first."""
    result = tuple(others[:lead]) + tuple(shape) + tuple(others[lead:])
    v = value
    while v.ndim > len(result) and v.shape[0] == 1:
        v = v.reshape(v.shape[1:])
    try:
        v = v.broadcast_to(result)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {value.shape} cannot be broadcast to "
                           f"indexing result of shape {result}") from None
    if not lead:
        return v
    n_s = len(shape)
    return v.permute(*range(lead, lead + n_s), *range(lead), *range(lead + n_s, len(result)))


def _written(x, basic, advanced, value, accumulate, op):
    """value put into x at the plan's places, in place (the caller checked that x may be
    written)."""
    view = arrange(x, basic, None) if _changes(basic) else x
    if not advanced:
        view._write(op, value)
        return x
    if not accumulate and len(advanced) == 1 and advanced[0][1].dtype is dtypes.bool_ and value.numel() == 1:
        d, mask = advanced[0]                         # masked_fill: no positions needed
        view._write(op, where(mask.reshape(*mask.shape, *[1] * (view.ndim - d - mask.ndim)),
                              value.reshape(()), view))
        return x
    dims, tensors, shape = _tensors(advanced)
    order, lead = _layout(view.ndim, dims)
    target = arrange(view, None, order)
    if any(stride == 0 and size > 1 for size, stride in zip(target.shape, target.strides)):
        raise RuntimeError(f"{op}: this view of shape {view.shape} has stride 0 (it was expanded), so several "
                           "of its elements are one memory location; write to a clone() instead")
    values = _values(value, shape, target.shape[len(dims):], lead)
    if values.storage is x.storage:                   # overlapping: read everything before writing
        values = views.copy(values)
    indices = _stacked(tensors, shape)
    if indices.storage is x.storage:
        indices = views.copy(indices)
    put(target, indices, values, accumulate)
    x.storage.version += 1
    return x


def setitem(x, index, value):
    """x[index] = value, in place, for any index (the caller checked that x may be written)."""
    if isinstance(value, Tensor):
        value = value.to(device=x.device, dtype=x.dtype)
    else:
        value = as_tensor(value, dtype=x.dtype, device=x.device)
    basic, advanced = plan(x, index)
    _written(x, basic, advanced, value, False, "__setitem__")


def _put_arguments(op, x, indices, values, accumulate):
    """PyTorch's checks of index_put's arguments; its plan."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(x).__name__}")
    if not isinstance(indices, (tuple, list)) or not all(isinstance(i, Tensor) for i in indices):
        raise TypeError(f"{op}(): argument 'indices' must be a tuple of Tensors, got {indices!r}")
    if not isinstance(values, Tensor):
        raise TypeError(f"{op}(): argument 'values' must be Tensor, not {type(values).__name__}")
    if type(accumulate) is not bool:
        raise TypeError(f"{op}(): argument 'accumulate' must be a bool, not {type(accumulate).__name__}")
    if values.dtype is not x.dtype:
        raise RuntimeError(f"{op}(): Index put requires the source and destination dtypes match, got "
                           f"{x.dtype} for the destination and {values.dtype} for the source")
    if values.device != x.device:
        raise RuntimeError(f"{op}(): values are on device {values.device!r}, the tensor on {x.device!r}")
    if not indices:
        raise IndexError(f"{op}(): expected at least one index tensor, got none")
    return plan(x, tuple(indices), ints_select=False)


def write(x, basic, advanced, values, accumulate, op, in_place):
    """x with values put at the plan's places (added, when accumulating): in place (the
    caller checked that x may be written), else into a copy, differentiable in x and values."""
    if in_place:
        return _written(x, basic, advanced, values, accumulate, op)
    view_shape = views.basic_index(x, basic)[0] if _changes(basic) else x.shape
    dims, tensors, shape = _tensors(advanced)
    order, lead = _layout(len(view_shape), dims)
    values = _values(values, shape, [view_shape[d] for d in order[len(dims):]], lead)
    return IndexPut.apply(x, values, _stacked(tensors, shape), basic if _changes(basic) else None, order,
                          accumulate)


def index_put_(x, indices, values, accumulate=False):
    """x[indices] = values in place, every index a tensor (a 0-d one indexes too), or with
    ``accumulate``, x[indices] += values where repeated indices add up (PyTorch's
    Tensor.index_put_)."""
    basic, advanced = _put_arguments("index_put_", x, indices, values, accumulate)
    return write(x, basic, advanced, values, accumulate, "index_put_", True)


def index_put(x, indices, values, accumulate=False):
    """index_put_ on a copy of x, differentiable in x and values (PyTorch's torch.index_put)."""
    basic, advanced = _put_arguments("index_put", x, indices, values, accumulate)
    return write(x, basic, advanced, values, accumulate, "index_put", False)
