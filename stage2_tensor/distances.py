"""Distances and similarities between vectors, PyTorch's F.cosine_similarity,
F.pairwise_distance and F.pdist: composites of differentiable tensor operations (products,
sums, roots), so every device runs them and autograd differentiates them.
"""
from . import dtypes
from .broadcast import broadcast_shapes
from .factories import arange
from .strides import normalize_dim
from .tensor import Tensor


def _tensors(fn, *tensors):
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: expected Tensors, got {type(t).__name__}")
        if not t.dtype.is_floating_point:
            raise TypeError(f"{fn}: expected floating-point tensors, got {t.dtype.name}")


def _number(value, name, fn):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__}")


def _broadcast(x1, x2, fn):
    try:
        shape = broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        raise RuntimeError(f"{fn}: the shapes {x1.shape} and {x2.shape} do not broadcast") from None
    return x1.broadcast_to(shape), x2.broadcast_to(shape)


def vector_norm(d, p, dim, keepdim=False):
    """The p-norm of d along dim (p > 0, or inf); p = 0 counts the non-zero entries."""
    if p == float("inf"):
        return d.abs().amax(dim, keepdim=keepdim)
    if p == 0:
        return (d != 0).to(dtype=d.dtype).sum(dim, keepdim=keepdim)
    if p == 2:
        return (d * d).sum(dim, keepdim=keepdim).sqrt()
    if p == 1:
        return d.abs().sum(dim, keepdim=keepdim)
    return (d.abs() ** p).sum(dim, keepdim=keepdim) ** (1.0 / p)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """x1 . x2 / (max(||x1||, eps) max(||x2||, eps)) along dim, the two broadcast first,
    as PyTorch: each vector is divided by its norm, held at least eps."""
    _tensors("cosine_similarity", x1, x2)
    _number(eps, "eps", "cosine_similarity")
    x1, x2 = _broadcast(x1, x2, "cosine_similarity")
    d = normalize_dim(dim, max(x1.ndim, 1))
    n1 = vector_norm(x1, 2, d, keepdim=True).maximum(eps)
    n2 = vector_norm(x2, 2, d, keepdim=True).maximum(eps)
    return ((x1 / n1) * (x2 / n2)).sum(d)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p along the last dimension, as PyTorch (the eps keeps the norm's
    gradient finite when x1 = x2)."""
    _tensors("pairwise_distance", x1, x2)
    _number(p, "p", "pairwise_distance")
    _number(eps, "eps", "pairwise_distance")
    if p < 0:
        raise RuntimeError(f"pairwise_distance only supports non-negative p values, got {p}")
    x1, x2 = _broadcast(x1, x2, "pairwise_distance")
    d = x1 - x2 + eps
    if d.ndim == 0:
        d = d.reshape(1)
        return vector_norm(d, p, 0, keepdim=False) if not keepdim else vector_norm(d, p, 0, True)
    return vector_norm(d, p, -1, keepdim)


def pdist(input, p=2):
    """The p-norm distance between every pair of rows i < j of an (N, M) input, in the
    order of the upper triangle row by row: N (N - 1) / 2 values, as PyTorch. Only the
    pairs are differenced (no row against itself, whose norm's gradient would be 0 / 0)."""
    _tensors("pdist", input)
    _number(p, "p", "pdist")
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    rows = arange(n, device=input.device)
    pairs = (rows.unsqueeze(1) < rows.unsqueeze(0)).nonzero()     # (N (N - 1) / 2, 2), row-major
    if pairs.shape[0] == 0:
        return input.sum(1)[:0]
    i, j = pairs[:, 0].to(dtype=dtypes.int64), pairs[:, 1].to(dtype=dtypes.int64)
    return vector_norm(input[i] - input[j], p, -1)
