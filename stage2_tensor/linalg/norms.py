"""Norms: vector_norm (over any dimensions), matrix_norm (over two) and norm, which picks
one of them as PyTorch's linalg.norm does. Composites of abs, sums, maxima and powers
(statistics.norm for the p-norms, whose gradient at zero is 0 as PyTorch's); the spectral
and nuclear norms are the singular values' largest, smallest and sum (svd.py).

    vector ord:  2 (default), 1, inf, -inf, 0 (how many nonzero), any other p
    matrix ord:  "fro" (default), "nuc", inf, -inf (rows' |sums|), 1, -1 (columns'), 2, -2
"""
import math

from .. import statistics
from ..reduce import normalize_dims
from ..tensor import Tensor
from .checks import floating_dtype, matrices
from .svd import svdvals


def _input(op, x, dtype):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if dtype is not None:
        x = x.to(dtype=dtype)
    if not x.dtype.is_floating_point:
        floating_dtype(op, x)
    return x


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """(sum |x|^ord)^(1 / ord) over ``dim`` (None: every element, the tensor read as one vector)."""
    x = _input("linalg.vector_norm", x, dtype)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not {type(ord).__name__}")
    dims = normalize_dims(x, dim)
    if ord == 0:
        return (x != 0).to(dtype=x.dtype).sum(dim=dims, keepdim=keepdim)
    if ord == -math.inf:
        return x.abs().amin(dims, keepdim=keepdim)
    if ord < 0:
        return (x.abs() ** float(ord)).sum(dim=dims, keepdim=keepdim) ** (1.0 / ord)
    return statistics.norm(x, ord, dims, keepdim)


def _two_dims(op, A, dim):
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got {dim}")
    d0, d1 = (d % A.ndim if -A.ndim <= d < A.ndim else None for d in dim)
    if d0 is None or d1 is None:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-A.ndim}, {A.ndim - 1}], but got {dim})")
    if d0 == d1:
        raise RuntimeError(f"{op}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """The norm of each matrix over the two dimensions ``dim``."""
    op = "linalg.matrix_norm"
    if isinstance(A, Tensor):
        matrices(op, A)
    A = _input(op, A, dtype)
    d0, d1 = _two_dims(op, A, dim)
    if ord == "fro":
        return statistics.norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        moved = _to_end(A, d0, d1)
        s = svdvals(moved)
        out = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        return _keep(out, d0, d1) if keepdim else out
    if ord in (math.inf, -math.inf, 1, -1) and not isinstance(ord, bool):
        over, then = (d1, d0) if ord in (math.inf, -math.inf) else (d0, d1)
        sums = A.abs().sum(dim=over, keepdim=True)
        out = sums.amax(then, keepdim=True) if ord > 0 else sums.amin(then, keepdim=True)
        return out if keepdim else out.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def _to_end(A, d0, d1):
    rest = [d for d in range(A.ndim) if d not in (d0, d1)]
    return A.permute(*rest, d0, d1)


def _keep(out, d0, d1):
    for d in sorted((d0, d1)):
        out = out.unsqueeze(d)
    return out


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """linalg.norm: a vector norm over one dimension (or the whole tensor, ord None), a matrix
    norm over two; without dim, a 1-D input's vector norm and a 2-D input's matrix norm."""
    A = _input("linalg.norm", A, dtype)
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim)
    if dim is None and ord is not None:
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim)
        if A.ndim != 1:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                               f"{A.ndim}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: Order {ord} not supported for a vector norm.")
    if dim is not None and len(dim) != 1:
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim)
