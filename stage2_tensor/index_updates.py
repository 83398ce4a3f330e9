"""Slices along one dimension written by index, PyTorch's ``index_copy``, ``index_fill`` and
``index_add`` (and their in-place forms): for dim=1,

    index_copy:  out[:, index[i]] = source[:, i]
    index_fill:  out[:, index[i]] = value
    index_add:   out[:, index[i]] += alpha * source[:, i]      (repeats add up)

Each is advanced indexing's write with one index tensor at ``dim`` (advanced_index.write:
the index_put kernel, accumulating for index_add), so each is differentiable in the tensor
and in the source or value, and runs in place without copying the tensor. Indices may be
negative, counting from the end (PyTorch refuses them in index_copy and index_add).
"""
from . import dtypes
from .advanced_index import write
from .backend import BadIndex, bad_index
from .factories import full
from .strides import normalize_dim
from .tensor import Tensor


def _along(op, x, dim, index):
    """(basic, advanced) of advanced_index's plan: index (an int64 tensor of at most one
    dimension, on x's device) at dim. A 0-d x counts as one element along dim 0."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(x).__name__}")
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{op}(): argument 'dim' must be an int, not {type(dim).__name__}")
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be a Tensor, not {type(index).__name__}")
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got {index.dtype}")
    if index.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector, got shape {index.shape}")
    if index.device != x.device:
        raise RuntimeError(f"{op}(): index is on device {index.device!r}, the tensor on {x.device!r}")
    dim = normalize_dim(dim, max(x.ndim, 1))
    return (slice(None),) * max(x.ndim, 1), [(dim, index.reshape(-1))]


def _source(op, x, dim, index, source):
    """source, checked: a tensor of x's dtype and device, of x's shape but along dim, where
    it has one slice per index."""
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}(): argument 'source' must be a Tensor, not {type(source).__name__}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"{op}(): self and source expected to have the same dtype, but got (self) {x.dtype} "
                           f"and (source) {source.dtype}")
    if source.device != x.device:
        raise RuntimeError(f"{op}(): source is on device {source.device!r}, the tensor on {x.device!r}")
    d = normalize_dim(dim, max(x.ndim, 1))
    want = (x.shape or (1,))[:d] + (index.numel(),) + (x.shape or (1,))[d + 1:]
    if (source.shape or (1,)) != want:
        raise RuntimeError(f"{op}(): source of shape {source.shape} must be the tensor's shape {x.shape} with "
                           f"dimension {d} of the index's size {index.numel()}, {want}")
    return source.reshape(*want)


def _run(op, x, basic, advanced, values, accumulate, in_place):
    """advanced_index.write on x, a 0-d x as one element; a bad index named by dim."""
    flat = x.reshape(1) if x.ndim == 0 else x
    try:
        out = write(flat, basic, advanced, values, accumulate, op, in_place)
    except BadIndex as e:                             # the kernel counts the indexed dimensions
        raise bad_index(e.index, advanced[0][0], e.size) from None
    return x if in_place else out.reshape(*x.shape)


def index_copy(x, dim, index, source, in_place=False):
    """x with its slices along dim at ``index`` replaced by source's, in order (of a slice
    named twice, one of its sources lands)."""
    basic, advanced = _along("index_copy", x, dim, index)
    source = _source("index_copy", x, dim, index, source)
    return _run("index_copy_", x, basic, advanced, source, False, in_place)


def index_add(x, dim, index, source, alpha=1, in_place=False):
    """x with alpha times source's slices added to its slices along dim at ``index`` (a
    slice named twice gets both)."""
    basic, advanced = _along("index_add", x, dim, index)
    source = _source("index_add", x, dim, index, source)
    return _run("index_add_", x, basic, advanced, source if alpha == 1 else source * alpha, True, in_place)


def index_fill(x, dim, index, value, in_place=False):
    """x with its slices along dim at ``index`` set to value (a number, or a 0-d tensor,
    which then gets their gradients)."""
    basic, advanced = _along("index_fill", x, dim, index)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill_(): only supports a 0-dimensional value tensor, but got a tensor "
                               f"of shape {value.shape}")
        value = value.to(device=x.device, dtype=x.dtype)
    elif isinstance(value, (bool, int, float)):
        value = full((), value, dtype=x.dtype, device=x.device)
    else:
        raise TypeError(f"index_fill(): value must be a number or a 0-d tensor, not {type(value).__name__}")
    return _run("index_fill_", x, basic, advanced, value, False, in_place)
