"""gather, scatter and scatter_add: elements picked or placed along one dimension by an
index tensor of the input's rank, as PyTorch's ``torch.gather`` / ``Tensor.scatter`` /
``Tensor.scatter_add_``; take and take_along_dim, the gathers PyTorch builds on them.
Composites: the index becomes flat positions into the tensor read as one row (integer
tensor arithmetic), then one ``index_select`` (gather), ``index_add`` (scatter_add) or
``index_put`` (scatter), whose gradients are gathers and scatters again.

For a 3-D input and dim=1 (PyTorch's definition):

    gather:       out[i][j][k] = input[i][index[i][j][k]][k]
    scatter:      out[i][index[i][j][k]][k] = src[i][j][k]      (out starts as input)
    scatter_add:  out[i][index[i][j][k]][k] += src[i][j][k]
"""
from . import dtypes, factories
from .broadcast import broadcast_shapes
from .data_checks import outside, raise_if_any
from .index_kernels import IndexPut
from .strides import make_strides, normalize_dim
from .tensor import Tensor
from .views import IndexAdd, IndexSelect, out_of_range


def _coordinates(shape, index_shape, dim, along, device):
    """Flat row-major positions into a tensor of ``shape`` of each element of an
    index_shape grid: its own coordinates, except ``along`` (a tensor of index_shape)
    at ``dim``."""
    strides = make_strides(shape)
    flat = along * strides[dim] if shape and strides[dim] != 1 else along
    for d, size in enumerate(index_shape):
        if d == dim:
            continue
        coord = factories.arange(size, dtype=dtypes.int64, device=device)
        flat = flat + coord.reshape(*[size if e == d else 1 for e in range(len(index_shape))]) * strides[d]
    return flat.reshape(-1)


def _check(op, input, dim, index, others=()):  # noqa: A002  (PyTorch's argument name)
    """dim normalized; index checked (integer tensor of input's rank, on its device, each
    size at most input's outside dim, values in [0, size of dim), checked by a kernel:
    data_checks.py)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be a Tensor, not {type(index).__name__}")
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"{op}(): Expected dtype int64 for index, got {index.dtype}")
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{op}(): argument 'dim' must be an int, not {type(dim).__name__}")
    dim = normalize_dim(dim, max(input.ndim, 1))      # a 0-d tensor takes dim 0 or -1
    if max(index.ndim, 1) != max(input.ndim, 1):
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as "
                           f"input tensor: index has shape {index.shape}, input {input.shape}")
    if index.device != input.device:
        raise RuntimeError(f"{op}(): index is on device {index.device!r}, input on {input.device!r}")
    in_shape = input.shape or (1,)
    ix_shape = index.shape or (1,)
    for d, (size, limit) in enumerate(zip(ix_shape, in_shape)):
        if d != dim and size > limit:
            raise RuntimeError(f"{op}(): Size does not match at dimension {d}: expected index "
                               f"{index.shape} to be no larger than input {input.shape} apart "
                               f"from dimension {dim}")
        for name, other in others:
            if size > (other.shape or (1,))[d]:
                raise RuntimeError(f"{op}(): Size does not match at dimension {d}: expected index "
                                   f"{index.shape} to be no larger than {name} {other.shape}")
    size = in_shape[dim]

    def error():
        value = out_of_range(index, size)[1]
        return IndexError(f"{op}(): index {value} is out of bounds for dimension {dim} with "
                          f"size {size} (expected 0 to {size - 1})")
    if index.numel():
        raise_if_any(outside(index, size), error)
    return dim


def _positions(input, dim, index):  # noqa: A002
    return _coordinates(input.shape or (1,), index.shape or (1,), dim, index.reshape(index.shape or (1,)),
                        input.device)


def gather(input, dim, index):  # noqa: A002  (PyTorch's argument names)
    """The elements of input along dim at ``index`` (an int64 tensor of input's rank, no
    larger than input outside dim); the result has index's shape. Indices must lie in
    [0, size) (no negative ones, as PyTorch). Differentiable in input: the gradient
    scatter-adds back, so an element gathered twice gets both gradients."""
    dim = _check("gather", input, dim, index)
    if not index.numel():
        return factories.zeros(*index.shape, dtype=input.dtype, device=input.device)
    picked = IndexSelect.apply(input.reshape(-1), 0, _positions(input, dim, index))
    return picked.reshape(*index.shape)


def _sources(op, input, dim, index, src):  # noqa: A002
    """(positions into input, the src values for them as one row)."""
    if not isinstance(src, Tensor):
        if isinstance(src, bool) or not isinstance(src, (int, float)):
            raise TypeError(f"{op}(): argument 'src' must be a Tensor or a number, not {type(src).__name__}")
        src = factories.full(index.shape, src, dtype=input.dtype, device=input.device)
    elif src.device != input.device:
        raise RuntimeError(f"{op}(): src is on device {src.device!r}, input on {input.device!r}")
    elif max(src.ndim, 1) != max(input.ndim, 1):
        raise RuntimeError(f"{op}(): src must have the same number of dimensions as input: src "
                           f"has shape {src.shape}, input {input.shape}")
    dim = _check(op, input, dim, index, (("src", src),))
    positions = _positions(input, dim, index)
    if src.shape == index.shape:            # every element of src, in order
        return positions, src.reshape(-1).to(dtype=input.dtype)
    along = factories.arange(index.shape[dim] if index.shape else 1, dtype=dtypes.int64, device=input.device)
    along = along.reshape(*[-1 if d == dim else 1 for d in range(max(index.ndim, 1))])
    along = along.expand(*(index.shape or (1,)))
    values = IndexSelect.apply(src.reshape(-1), 0,
                               _coordinates(src.shape or (1,), index.shape or (1,), dim, along, input.device))
    return positions, values.to(dtype=input.dtype)


def scatter_add(input, dim, index, src):  # noqa: A002
    """A copy of input with src's elements added at ``index`` along dim (repeats add up);
    src's elements beyond index's shape are ignored. Differentiable in input and src."""
    positions, values = _sources("scatter_add", input, dim, index, src)
    if not positions.numel():
        return input.clone()
    return IndexAdd.apply(values, (input.numel(),), 0, positions, input.reshape(-1)).reshape(*input.shape)


def scatter(input, dim, index, src):  # noqa: A002
    """A copy of input with src's elements written at ``index`` along dim (out of place;
    src may be a number). Where several index entries name one element PyTorch leaves the
    winner unspecified (here the last in row-major order, but on CUDA). Differentiable in
    input (zero where written) and src (every entry's element gets its gradient, as
    PyTorch's)."""
    positions, values = _sources("scatter", input, dim, index, src)
    if not positions.numel():
        return input.clone()
    written = IndexPut.apply(input.reshape(-1), values, positions.reshape(1, -1), None, None, False)
    return written.reshape(*input.shape)


def _index_arg(op, index):
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be a Tensor, not {type(index).__name__}")
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"{op}(): Expected dtype int64 for index, got {index.dtype}")


def take(input, index):  # noqa: A002
    """input's elements, read as one row (row-major), at ``index``, in index's shape;
    negative indices count from the end (PyTorch's torch.take)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"take(): argument 'input' must be a Tensor, not {type(input).__name__}")
    _index_arg("take", index)
    if index.device != input.device:
        raise RuntimeError(f"take(): index is on device {index.device!r}, input on {input.device!r}")
    return IndexSelect.apply(input.reshape(-1), 0, index.reshape(-1)).reshape(*index.shape)


def take_along_dim(input, indices, dim=None):  # noqa: A002
    """gather with broadcasting (PyTorch's torch.take_along_dim): input and indices broadcast
    against each other in every dimension but dim, then indices pick along dim; without
    dim, along input read as one row, giving indices read as one row."""
    if not isinstance(input, Tensor):
        raise TypeError(f"take_along_dim(): argument 'input' must be a Tensor, not {type(input).__name__}")
    _index_arg("take_along_dim", indices)
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError(f"take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    dim = normalize_dim(dim, max(input.ndim, 1))
    if input.ndim:
        try:
            shape = list(broadcast_shapes(input.shape[:dim] + (1,) + input.shape[dim + 1:],
                                          indices.shape[:dim] + (1,) + indices.shape[dim + 1:]))
        except ValueError:
            raise RuntimeError(f"take_along_dim(): input {input.shape} and indices {indices.shape} do not "
                               f"broadcast outside dimension {dim}") from None
        input = input.expand(*shape[:dim], input.shape[dim], *shape[dim + 1:])
        indices = indices.expand(*shape[:dim], indices.shape[dim], *shape[dim + 1:])
    return gather(input, dim, indices)
