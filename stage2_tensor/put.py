"""put: elements written at flat positions (PyTorch's torch.put / Tensor.put_): the
index_put kernel on the tensor read as one row, differentiable in input and source."""
from . import dtypes
from .index_kernels import IndexPut
from .tensor import Tensor


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
