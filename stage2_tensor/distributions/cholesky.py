"""A batched Cholesky factorization and a lower-triangular solve, composites of tensor ops
for MultivariateNormal: they stand in for torch.linalg.cholesky and
torch.linalg.solve_triangular until the package has them. Each works down the n columns
(rows) of an (..., n, n) matrix, one tensor step per column over the whole batch: n steps of
O(batch n^2), O(batch n^3) in all, as the factorization costs; autograd differentiates them
as written."""
from .. import dtypes
from ..concat import cat, stack
from ..elementwise import where
from ..factories import arange, zeros
from ..tensor import Tensor


def _square(name, a):
    if not isinstance(a, Tensor):
        raise TypeError(f"{name}: A must be a Tensor, got {type(a).__name__}")
    if a.dim() < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2] if a.dim() >= 2 else '?'} by {a.shape[-1] if a.dim() else '?'} matrices")
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point tensor as input. Got {a.dtype}")


def cholesky_ex(a):
    """(L, info): L lower triangular with L @ L.mT = a (the lower triangle of a is read),
    info (int64, a's batch shape) 0 where the factorization completed, else k, the order of
    the first leading minor that is not positive-definite (that matrix's L is not usable)."""
    _square("linalg.cholesky", a)
    n = a.shape[-1]
    rows = arange(n, device=a.device)
    info = zeros(a.shape[:-2], dtype=dtypes.int64, device=a.device)
    columns = []
    for j in range(n):
        v = a[..., :, j]
        for column in columns:
            v = v - column * column[..., j:j + 1]
        d = v[..., j]
        fails = (d > 0) == False  # noqa: E712  (also a NaN pivot)
        info = where((info == 0) * fails, info * 0 + (j + 1), info)     # the first failing minor
        d = where(fails, d * 0 + 1, d)
        column = v / d.sqrt().unsqueeze(-1)
        columns.append(where(rows >= j, column, column * 0))
    return stack(columns, -1), info


def cholesky(a, *, upper=False):
    """torch.linalg.cholesky: L with L @ L.mT = a, for a symmetric positive-definite a
    (L.mT when upper); RuntimeError naming the failing minor otherwise."""
    factor, info = cholesky_ex(a)
    if bool((info != 0).any().item()):
        flat = info.reshape(-1)
        batch = int((flat != 0).to(dtype=dtypes.int64).argmax().item())
        order = int(flat[batch].item())
        where_ = f"(Batch element {batch}): " if a.dim() > 2 else ""
        raise RuntimeError(f"linalg.cholesky: {where_}The factorization could not be completed because the input "
                           f"is not positive-definite (the leading minor of order {order} is not "
                           "positive-definite).")
    return factor.transpose(-1, -2) if upper else factor


def solve_lower(lower, b):
    """X with lower @ X = b, lower (..., n, n) lower triangular with a non-zero diagonal, b
    (..., n, k); batch dimensions broadcast. Forward substitution, one row at a time."""
    n = lower.shape[-1]
    if b.dim() < 2 or b.shape[-2] != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
                           f"({lower.shape[-2]}x{n} and {'x'.join(map(str, b.shape[-2:]))})")
    solved = []
    for i in range(n):
        r = b[..., i:i + 1, :]
        if solved:
            r = r - lower[..., i:i + 1, :i] @ cat(solved, -2)
        solved.append(r / lower[..., i:i + 1, i:i + 1])
    return cat(solved, -2)
