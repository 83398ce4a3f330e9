"""Eigenvalues and eigenvectors of symmetric matrices, by parallel cyclic Jacobi
(jacobi.py): rotations of row and column pairs zero the off-diagonal elements until they
are below rounding level; the rotations' product is the eigenvectors, the diagonal the
eigenvalues, sorted ascending as LAPACK's. Jacobi is accurate to rounding relative to the
matrix's norm (tests hold it to 1e-12 against numpy in float64); each sweep is n - 1 rounds
of O(n^2), a handful of sweeps in all.

Differentiated by PyTorch's formula: with K = skew(V^T gV) / (L_j - L_i) off the diagonal
and gL on it, dA = V K V^T (symmetric; repeated eigenvalues make it infinite, as PyTorch's).
Only one triangle is read (UPLO "L", the default, or "U"), as LAPACK's.
"""
from ..dtypes import finfo
from ..factories import eye
from ..products import diagonal_of
from .checks import square
from .factored import factored
from .lu import permutation
from .jacobi import MAX_SWEEPS, angle, converged, schedule


def symmetric(A, UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    if UPLO == "L":
        return A.tril() + A.tril(-1).mT
    return A.triu() + A.triu(1).mT


def decompose(A):
    """(eigenvalues ascending, eigenvectors as columns) of symmetric A, not recorded."""
    n = A.shape[-1]
    V = eye(n, dtype=A.dtype, device=A.device).expand(*A.shape).clone()
    if n > 1:
        eps = finfo(A.dtype).eps
        scale = (A * A).sum((-2, -1))
        rounds = schedule(n, A.device)
        last = False
        for _ in range(MAX_SWEEPS):
            for r in rounds:
                d = diagonal_of(A)
                off = diagonal_of(A.index_select(-2, r.p).index_select(-1, r.q))
                c, s = angle(d.index_select(-1, r.p), d.index_select(-1, r.q), off)
                cols, rows = (c.unsqueeze(-2), s.unsqueeze(-2)), (c.unsqueeze(-1), s.unsqueeze(-1))
                A = r.rotate(r.rotate(A, -1, *cols), -2, *rows)
                V = r.rotate(V, -1, *cols)
            if last:
                break
            d = diagonal_of(A)
            off = (A * A).sum((-2, -1)) - (d * d).sum(-1)
            last = converged((off <= (n * eps) ** 2 * scale).all())    # then one sweep more: quadratic
    values, order = diagonal_of(A).sort(-1)
    return values, V @ permutation(order, V.dtype).mT


def _gradient(inputs, outputs, grads):
    (L, V), (gL, gV) = outputs, grads
    K = V.mT @ gV
    K = 0.5 * (K - K.mT)
    n = L.shape[-1]
    identity = eye(n, dtype=L.dtype, device=L.device)
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + identity                # L_j - L_i, 1 on the diagonal
    K = K / E * (1 - identity) + gL.unsqueeze(-1) * identity
    return (V @ K @ V.mT,)


class EighResult(tuple):
    """eigh's (eigenvalues, eigenvectors), by name too, as PyTorch's named tuple."""

    def __new__(cls, eigenvalues, eigenvectors):
        return super().__new__(cls, (eigenvalues, eigenvectors))

    eigenvalues = property(lambda self: self[0])
    eigenvectors = property(lambda self: self[1])


def eigh(A, UPLO="L", *, out=None):
    """(L, V) with A = V diag(L) V^T: eigenvalues ascending, orthonormal eigenvectors as V's
    columns (each up to its sign), of each symmetric matrix of the batch."""
    square("linalg.eigh", A)
    return EighResult(*factored(lambda A: decompose(symmetric(A, UPLO)), _gradient, A))


def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues of symmetric matrices, ascending."""
    square("linalg.eigvalsh", A)
    return eigh(A, UPLO)[0]
