"""torch.linalg, as ``import stage2_tensor.linalg`` or ``tg.linalg``: matrix functions
written with tensor operations over rows and columns, as LAPACK's algorithms (n steps of
O(n^2) work for an n x n matrix), for batches of matrices (leading dimensions) at once, in
float32 and float64. Each file one method:

    lu.py          Gaussian elimination, partial pivoting: det, slogdet, inv, solve
    triangular.py  substitution: solve_triangular
    cholesky.py    cholesky, cholesky_ex
    qr.py          Householder reflections: qr
    jacobi.py      parallel Jacobi rotations, behind eigh.py (eigh, eigvalsh) and svd.py (svd, svdvals)
    norms.py       vector_norm, matrix_norm, norm
    derived.py     pinv, matrix_rank, lstsq, matrix_exp, matrix_power, vecdot
    multi_dot.py   multi_dot (chain_matmul), in the cheapest order
    factored.py    how a factorization is differentiated by PyTorch's formula, not its steps

A matrix with no answer (singular for inv and solve, not positive-definite for cholesky)
raises LinAlgError, a RuntimeError, with PyTorch's words.
"""
from ..matmul import matmul
from ..products import cross as _cross
from . import deprecated  # noqa: F401  (torch.svd, torch.qr, ...: their older spellings)
from .checks import LinAlgError
from .cholesky import cholesky, cholesky_ex
from .derived import lstsq, matrix_exp, matrix_power, matrix_rank, pinv, vecdot
from .eigh import eigh, eigvalsh
from .lu import det, inv, slogdet, solve
from .multi_dot import multi_dot
from .norms import matrix_norm, norm, vector_norm
from .qr import qr
from .svd import svd, svdvals
from .triangular import solve_triangular


def cross(input, other, *, dim=-1, out=None):  # noqa: A002  (PyTorch's argument name)
    """The cross product of 3-vectors along ``dim`` (-1 by default), broadcast together."""
    return _cross(input, other, dim)


__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "eigh", "eigvalsh", "inv", "lstsq", "matmul", "matrix_exp",
           "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve",
           "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm"]
