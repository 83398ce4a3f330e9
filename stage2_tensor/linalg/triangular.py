"""Triangular systems: ``substitute`` solves T X = B by forward (lower T) or back (upper T)
substitution, one row of X per step, that row a matmul of the rows already found: n steps
of O(n k) work each. The LU, Cholesky and QR solvers end in it; ``solve_triangular`` is
PyTorch's linalg.solve_triangular, differentiated by its formula:

    X = A^-1 B:   dB = A^-T dX   (a triangular solve with A^T),   dA = -dB X^T   (its triangle)
"""
from ..broadcast import broadcast_shapes
from ..tensor import Tensor
from .checks import floating_dtype, square
from .factored import factored


def substitute(T, B, upper=False, unit=False):
    """X with T X = B, T (..., n, n) triangular (its other triangle is not read), B (..., n, k)
    of the same batch; ``unit``: T's diagonal is taken as ones. Not recorded by autograd."""
    n = T.shape[-1]
    X = B.clone()
    for i in (reversed(range(n)) if upper else range(n)):
        row = X[..., i:i + 1, :]
        if upper and i < n - 1:
            row = row - T[..., i:i + 1, i + 1:] @ X[..., i + 1:, :]
        elif not upper and i > 0:
            row = row - T[..., i:i + 1, :i] @ X[..., :i, :]
        if not unit:
            row = row / T[..., i:i + 1, i:i + 1]
        X[..., i:i + 1, :] = row
    return X


def batched(A, B):
    """A (..., n, n) and B (..., n, k) with their batch dimensions broadcast together."""
    batch = broadcast_shapes(A.shape[:-2], B.shape[:-2])
    return A.expand(*batch, *A.shape[-2:]), B.expand(*batch, *B.shape[-2:])


def _triangle(X, upper, unit):
    X = X.triu() if upper else X.tril()
    return X.triu(1) if unit and upper else X.tril(-1) if unit else X


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (left=True) or X A = B, A triangular (upper or lower; its other triangle
    is not read), batches broadcast."""
    if out is not None:
        raise TypeError("linalg.solve_triangular: out= is not supported")
    square("linalg.solve_triangular", A)
    if not isinstance(B, Tensor) or B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    floating_dtype("linalg.solve_triangular", B)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, but found A of type "
                           f"{A.dtype} and B of type {B.dtype} instead")
    if not left:
        return solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    if A.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    try:
        A, B = batched(A, B)
    except ValueError as e:
        raise RuntimeError(f"linalg.solve_triangular: {e}") from None

    def gradient(inputs, outputs, grads):
        (A, _), (X,), (g,) = inputs, outputs, grads
        gB = substitute(A.mT, g, not upper, unitriangular)
        return _triangle(-(gB @ X.mT), upper, unitriangular), gB

    return factored(lambda A, B: (substitute(A, B, upper, unitriangular),), gradient, A, B)[0]
