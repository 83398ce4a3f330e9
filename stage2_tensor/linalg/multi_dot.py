"""multi_dot (and chain_matmul, its older spelling): the product of a chain of matrices in the order that costs the fewest
multiplications (the textbook dynamic program over the chain's shapes, Cormen et al.
15.2), as PyTorch's; the first may be a vector (a row) and the last a vector (a column)."""
from ..matmul import matmul
from ..tensor import Tensor


def _order(dims):
    """split[i][j]: where the cheapest product of matrices i..j splits, for shapes
    dims[i] x dims[i + 1]."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _product(ms, split, i, j):
    if i == j:
        return ms[i]
    k = split[i][j]
    return matmul(_product(ms, split, i, k), _product(ms, split, k + 1, j))


def multi_dot(tensors, *, out=None):
    """tensors[0] @ tensors[1] @ ..., at least two, the middle ones 2-D."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for n, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"multi_dot(): tensors[{n}] must be a Tensor, not {type(t).__name__}")
    first, last = tensors[0], tensors[-1]
    if first.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.ndim}D")
    if last.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.ndim}D")
    for n, t in enumerate(tensors[1:-1], 1):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {n} must be 2D but got {t.ndim}D")
    ms = [first.unsqueeze(0) if first.ndim == 1 else first] + tensors[1:-1] + \
        [last.unsqueeze(-1) if last.ndim == 1 else last]
    for n in range(len(ms) - 1):
        if ms[n].shape[1] != ms[n + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {n} and {n + 1} with shapes {tuple(ms[n].shape)} and "
                               f"{tuple(ms[n + 1].shape)} cannot be multiplied")
        if ms[n].dtype is not ms[n + 1].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{ms[0].dtype} and tensor {n + 1} {ms[n + 1].dtype}")
    dims = [m.shape[0] for m in ms] + [ms[-1].shape[1]]
    out = _product(ms, _order(dims), 0, len(ms) - 1)
    if first.ndim == 1:
        out = out.squeeze(0)
    if last.ndim == 1:
        out = out.squeeze(-1)
    return out


def chain_matmul(*matrices):
    """The product of the matrices in order (PyTorch's older multi_dot, its arguments
    spread): linalg.multi_dot picks the cheapest order."""
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for n, m in enumerate(matrices):
        if not isinstance(m, Tensor):
            raise TypeError(f"chain_matmul(): matrices[{n}] must be a Tensor, not {type(m).__name__}")
        if m.ndim != 2:
            raise RuntimeError(f"chain_matmul(): Tensor {n} must be 2D, but got {m.ndim}D")
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)
