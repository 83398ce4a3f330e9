"""PyTorch's shape functions that are other spellings of views, cats and slices (chapter 1,
"Strides"): moving and swapping dimensions, rotating and flipping, tiling, the stacks and
splits numpy names (hstack, vsplit, ...), the grids (meshgrid, cartesian_prod, combinations,
the triangles' indices), and ``sum_to_size``. Every one is a composite of views, cat,
flip, masks and sums, so autograd differentiates it and every device runs it.
"""
import builtins

from . import concat, dtypes, factories
from .broadcast import sum_dims
from .strides import normalize_dim
from .tensor import Tensor


def _tensor(op, t, name="input"):
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(t).__name__}")
    return t


def _tensors(op, tensors):
    """f(a, b, c) and f([a, b, c]) both mean the three tensors."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        _tensor(op, t, "tensors")
    return tensors


def _dims(op, dims, ndim):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    out = tuple(normalize_dim(d, max(ndim, 1)) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{op}(): repeated dim in {dims}")
    return out


# ---- moving, swapping, rotating -----------------------------------------------------------------

def movedim(input, source, destination):  # noqa: A002  (PyTorch's argument names)
    """input with dimensions ``source`` moved to positions ``destination`` (ints or
    sequences of as many), the others keeping their order: a permuted view."""
    _tensor("movedim", input)
    src, dst = _dims("movedim", source, input.ndim), _dims("movedim", destination, input.ndim)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
                           f"contain the same number of dims as destination ({list(dst)} dims)")
    order = [None] * input.ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(input.ndim) if d not in src)
    return input.permute(*[d if d is not None else next(rest) for d in order]) if input.ndim else input


moveaxis = movedim


def swapaxes(input, axis0, axis1):  # noqa: A002
    """transpose, by numpy's name."""
    return _tensor("swapaxes", input).transpose(axis0, axis1)


swapdims = swapaxes


def rot90(input, k=1, dims=(0, 1)):  # noqa: A002
    """input rotated k quarter turns in the plane of dims, from the first toward the second."""
    _tensor("rot90", input)
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"rot90(): expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"rot90(): expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (normalize_dim(d, input.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"rot90(): expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0, d1)
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


def fliplr(input):  # noqa: A002
    """input reversed along its columns (dimension 1)."""
    if _tensor("fliplr", input).ndim < 2:
        raise RuntimeError("fliplr(): Input must be >= 2-d.")
    return input.flip(1)


def flipud(input):  # noqa: A002
    """input reversed along its rows (dimension 0)."""
    if _tensor("flipud", input).ndim < 1:
        raise RuntimeError("flipud(): Input must be >= 1-d.")
    return input.flip(0)


def tile(input, dims):  # noqa: A002
    """input repeated ``dims`` times along each dimension (dims shorter than input's
    dimensions counts from the last; longer adds leading ones)."""
    _tensor("tile", input)
    dims = tuple(dims)
    return input.repeat(*((1,) * (input.ndim - len(dims)) + dims))


def unflatten(input, dim, sizes):  # noqa: A002
    """input with dimension dim split into ``sizes`` (one of them may be -1)."""
    _tensor("unflatten", input)
    d = normalize_dim(dim, max(input.ndim, 1))
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    return input.reshape(*input.shape[:d], *sizes, *input.shape[d + 1:])


def sum_to_size(x, *size):
    """x summed over the dimensions it was broadcast along from ``size`` (a gradient
    brought back to its input's shape)."""
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    if not _expandable(size, x.shape):
        raise RuntimeError(f"size {list(size)} is not expandable to size {list(x.shape)}.")
    dims = sum_dims(size, x.shape)
    out = x.sum(dim=dims, keepdim=True) if dims else x
    return out.reshape(*size)


def _expandable(size, shape):
    return len(size) <= len(shape) and all(s in (1, n) for s, n in zip(reversed(size), reversed(shape)))


# ---- at least n dimensions, stacks ------------------------------------------------------------

def _at_least(op, n, tensors):
    tensors = _tensors(op, tensors)
    out = []
    for t in tensors:
        if t.ndim >= n:
            out.append(t)
        elif n == 3 and t.ndim == 2:
            out.append(t.unsqueeze(-1))
        elif n == 3 and t.ndim == 1:
            out.append(t.reshape(1, -1, 1))
        else:
            out.append(t.reshape(*(1,) * (n - builtins.max(t.ndim, 1)), *(t.shape or (1,))))
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*tensors):
    """Each tensor with at least one dimension (a 0-d one as (1,)); one tensor, or a tuple."""
    return _at_least("atleast_1d", 1, tensors)


def atleast_2d(*tensors):
    """Each tensor with at least two dimensions: (n,) as (1, n)."""
    return _at_least("atleast_2d", 2, tensors)


def atleast_3d(*tensors):
    """Each tensor with at least three: (n,) as (1, n, 1), (m, n) as (m, n, 1)."""
    return _at_least("atleast_3d", 3, tensors)


def _listed(op, tensors):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' must be tuple of Tensors, not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{op}(): expects a non-empty TensorList")
    return tensors


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def hstack(tensors):
    """Side by side: 1-D tensors joined end to end, others along dimension 1."""
    ts = _as_tuple(atleast_1d(*_listed("hstack", tensors)))
    return concat.cat(list(ts), 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    """One above the other, along dimension 0 (1-D tensors as rows)."""
    return concat.cat(list(_as_tuple(atleast_2d(*_listed("vstack", tensors)))), 0)


row_stack = vstack


def dstack(tensors):
    """Along the third dimension (each made at least 3-D first)."""
    return concat.cat(list(_as_tuple(atleast_3d(*_listed("dstack", tensors)))), 2)


def column_stack(tensors):
    """Columns side by side: 0-d and 1-D tensors as columns, others along dimension 1."""
    ts = [t.reshape(-1, 1) if t.ndim <= 1 else t for t in _listed("column_stack", tensors)]
    return concat.cat(ts, 1)


# ---- splits --------------------------------------------------------------------------------------

def tensor_split(input, indices_or_sections, dim=0):  # noqa: A002
    """Views of input along dim: ``n`` pieces as equal as can be (the first ``size % n`` one
    longer), or the pieces between the given indices."""
    _tensor("tensor_split", input)
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = normalize_dim(dim, input.ndim)
    size = input.shape[d]
    cuts = indices_or_sections
    if isinstance(cuts, Tensor):
        cuts = cuts.item() if cuts.ndim == 0 else cuts.tolist()
    if isinstance(cuts, int) and not isinstance(cuts, bool):
        if cuts <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {cuts}")
        base, extra = divmod(size, cuts)
        bounds, at = [], 0
        for i in range(cuts):
            bounds.append((at, at + base + (i < extra)))
            at = bounds[-1][1]
    else:
        points = [builtins.min(builtins.max(int(c), 0), size) for c in cuts]
        starts = [0] + points
        bounds = [(s, builtins.max(s, e)) for s, e in zip(starts, points + [size])]
    return tuple(input.narrow(d, s, e - s) for s, e in bounds)


def _split_evenly(op, input, sections, dim, need):  # noqa: A002
    _tensor(op, input)
    if input.ndim < need:
        raise RuntimeError(f"torch.{op} requires a tensor with at least {need} dimension, but got a tensor with "
                           f"{input.ndim} dimensions!")
    if isinstance(sections, int) and not isinstance(sections, bool):
        if sections <= 0 or input.shape[dim] % sections:
            raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {input.shape[dim]} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input, indices_or_sections):  # noqa: A002
    """tensor_split along dimension 1 (0 for a 1-D tensor); n sections must be equal."""
    return _split_evenly("hsplit", input, indices_or_sections, 1 if _tensor("hsplit", input).ndim > 1 else 0, 1)


def vsplit(input, indices_or_sections):  # noqa: A002
    """tensor_split along dimension 0 of a tensor of at least 2; n sections must be equal."""
    return _split_evenly("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):  # noqa: A002
    """tensor_split along dimension 2 of a tensor of at least 3; n sections must be equal."""
    return _split_evenly("dsplit", input, indices_or_sections, 2, 3)


def split_with_sizes(input, split_sizes, dim=0):  # noqa: A002
    """Views of input along dim of the given sizes, which must add up to its size."""
    _tensor("split_with_sizes", input)
    d = normalize_dim(dim, max(input.ndim, 1))
    sizes = [int(s) for s in split_sizes]
    if builtins.sum(sizes) != input.shape[d] or builtins.min(sizes, default=0) < 0:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {input.shape[d]} (input tensor's "
                           f"size at dimension {d}), but got split_sizes={sizes}")
    return tuple(concat.split(input, sizes, d))


# ---- grids ---------------------------------------------------------------------------------------

def meshgrid(*tensors, indexing="ij"):
    """One grid per 1-D tensor, each of shape (len of each tensor): tensor i varies along
    dimension i ("ij"), or with the first two dimensions swapped ("xy", numpy's default)."""
    tensors = _tensors("meshgrid", tensors)
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.shape}")
    if not tensors:
        raise RuntimeError("torch.meshgrid expects a non-empty TensorList")
    axes = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) > 1:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(tensors)
    for t, a in zip(tensors, axes):
        shape[a] = t.numel()
    return tuple(t.reshape(*[-1 if d == a else 1 for d in range(len(tensors))]).expand(*shape)
                 for t, a in zip(tensors, axes))


def cartesian_prod(*tensors):
    """Every combination of one element of each 1-D tensor, in row-major order: (n, count)."""
    tensors = _tensors("cartesian_prod", tensors)
    if len(tensors) == 1:
        return tensors[0]
    return concat.stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):  # noqa: A002
    """The r-element combinations of a 1-D tensor's elements, in order, as rows (r, numel
    **r candidates masked, as PyTorch's)."""
    _tensor("combinations", input)
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if isinstance(r, bool) or not isinstance(r, int) or r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return factories.zeros(0, dtype=input.dtype, device=input.device)
    n = input.numel()
    grids = meshgrid(*[factories.arange(n, device=input.device)] * r, indexing="ij")
    keep = factories.ones(*grids[0].shape, dtype=dtypes.bool_, device=input.device)
    for a, b in zip(grids, grids[1:]):
        keep = keep * ((a <= b) if with_replacement else (a < b))
    picks = [g[keep] for g in grids]
    return concat.stack([input[p] for p in picks], 1)


def _triangle_indices(op, row, col, offset, dtype, device, below):
    for name, v in (("row", row), ("col", col), ("offset", offset)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{op}(): argument '{name}' must be int, not {type(v).__name__}")
    if row < 0 or col < 0:
        raise RuntimeError(f"{op}(): row must be non-negative, got {row}; col must be non-negative, got {col}")
    i = factories.arange(row, device=device).unsqueeze(1)
    j = factories.arange(col, device=device).unsqueeze(0)
    keep = (j - i <= offset) if below else (j - i >= offset)
    return keep.nonzero().t().to(dtype=dtype or dtypes.int64).contiguous()


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    """The (2, count) row and column indices of the lower triangle of a row x col matrix
    (j - i <= offset), row by row."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    """The indices of the upper triangle (j - i >= offset), row by row."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, False)


def unravel_index(indices, shape):
    """The coordinates in ``shape`` of each flat row-major index, one tensor per dimension
    (an index beyond the shape wraps, as PyTorch's)."""
    if not isinstance(indices, Tensor):
        indices = factories.tensor(indices)
    if indices.dtype.is_floating_point or indices.dtype is dtypes.bool_:
        raise TypeError(f"unravel_index: expected 'indices' to be an integer tensor, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in shape):
        raise RuntimeError(f"unravel_index: 'shape' must have only non-negative integers, got {shape}")
    rest, coords = indices.to(dtype=dtypes.int64), []
    for size in reversed(shape):
        coords.append(rest.remainder(size) if size else rest * 0)
        rest = rest.floor_divide(size) if size else rest
    return tuple(reversed(coords))
