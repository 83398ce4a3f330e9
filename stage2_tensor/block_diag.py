"""block_diag: matrices along the diagonal of one matrix, zeros elsewhere (torch.block_diag).
A 0-d tensor is a 1 x 1 block, a 1-D one a row; the dtype is the blocks' promoted one. Each
block's row of the result is the block with zeros cat left and right of it; the rows are
cat together: differentiable, each block's gradient its own part."""
from . import dtypes
from .concat import cat
from .factories import zeros
from .tensor import Tensor


def block_diag(*tensors):
    for n, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"block_diag(): argument 'tensors' must be tuple of Tensors, not {type(t).__name__}")
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {n} has "
                               f"{t.ndim} dimensions")
    if not tensors:
        return zeros(1, 0)
    blocks = [t.reshape(1, 1) if t.ndim == 0 else t.reshape(1, -1) if t.ndim == 1 else t for t in tensors]
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = dtypes.promote(dtype, b.dtype)
    device = blocks[0].device
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        h, w = b.shape
        pieces = [zeros(h, left, dtype=dtype, device=device), b.to(dtype=dtype),
                  zeros(h, width - left - w, dtype=dtype, device=device)]
        rows.append(cat([p for p in pieces if p.shape[1]] or [b.to(dtype=dtype)], dim=1))
        left += w
    return cat(rows, dim=0)
