"""Tensors put together from others' elements: ``block_diag`` (matrices along a diagonal,
each row of blocks one cat with zeros beside it, so the cost is the output's size) and
``put`` (elements written at flat positions: the index_put kernel on the tensor read as
one row), differentiable in every input."""
from . import concat, dtypes, factories
from .index_kernels import IndexPut
from .tensor import Tensor


def block_diag(*tensors):
    """The matrix with the given matrices (a 0-d tensor as 1 x 1, a 1-D one as a row)
    along its diagonal, zeros elsewhere, in their promoted dtype."""
    blocks = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"block_diag(): argument 'tensors' must be tuple of Tensors, not {type(t).__name__}")
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
        blocks.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not blocks:
        return factories.zeros(1, 0)
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = dtypes.promote(dtype, b.dtype)
    device = blocks[0].device
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        right = width - left - b.shape[1]
        parts = [factories.zeros(b.shape[0], left, dtype=dtype, device=device), b.to(dtype=dtype),
                 factories.zeros(b.shape[0], right, dtype=dtype, device=device)]
        rows.append(concat.cat(parts, 1))
        left += b.shape[1]
    return concat.cat(rows, 0)


def put(input, index, source, accumulate=False):  # noqa: A002  (PyTorch's argument names)
    """A copy of input with source's elements written (added, with accumulate) at the flat
    row-major positions ``index`` (negative ones count from the end)."""
    for name, t in (("input", input), ("index", index), ("source", source)):
        if not isinstance(t, Tensor):
            raise TypeError(f"put(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {index.dtype}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{input.dtype} and source.dtype = {source.dtype}")
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    if not index.numel():
        return input.clone()
    if not input.numel():
        raise IndexError("put_(): Tried to indexed an empty tensor")
    flat = input.reshape(-1)
    out = IndexPut.apply(flat, source.reshape(-1), index.reshape(1, -1), None, None, bool(accumulate))
    return out.reshape(*input.shape)
