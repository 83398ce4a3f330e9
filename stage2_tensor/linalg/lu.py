"""Gaussian elimination with partial pivoting, A = P L U (LAPACK's getrf), and what it gives:
det, slogdet, logdet, inv, solve.

``factor`` eliminates one column per step for the whole batch at once: the row of the
column's largest |value| (argmax) swaps into the pivot position (a gather of rows), the
multipliers l = column / pivot are stored below the diagonal, and the rows below lose
l times the pivot row (a broadcast outer product): n steps of O(n^2) work. The answers
are differentiated by PyTorch's formulas, not through the steps:

    det:     dA = g det(A) A^-T          slogdet: dA = g_logabsdet A^-T
    inv:     dA = -X^T g X^T  (X = A^-1)
    solve:   X = A^-1 B: dB = A^-T g,  dA = -dB X^T

A zero pivot is a singular matrix: det is then 0 (slogdet (0, -inf)) and inv and solve raise
LinAlgError, with PyTorch's words, naming the diagonal element of U (from 1) and the batch
element. Its gradient formulas assume an invertible A (PyTorch's det falls back to an SVD
for a singular one; here its gradient is not finite).
"""
from .. import dtypes
from ..elementwise import where
from ..factories import arange, eye, ones
from ..products import diagonal_of
from ..tensor import Tensor
from .checks import LinAlgError, batch_message, floating_dtype, square
from .factored import factored
from .triangular import batched, substitute


def factor(A):
    """(LU, order, sign): L (unit lower, below the diagonal) and U (on and above it) packed in
    one matrix, ``order`` the rows of A in pivot order (A[order] = L U) and ``sign`` the
    permutation's determinant, +-1. Not recorded by autograd."""
    n = A.shape[-1]
    batch = A.shape[:-2]
    M = A.clone()
    rows = arange(n, device=A.device)
    order = rows.expand(*batch, n).clone()
    sign = ones(*batch, dtype=A.dtype, device=A.device)
    for k in range(n):
        # row p, the largest |value| in column k at or below the diagonal, trades places with
        # row k: each row is kept, or replaced by the other, by blending (one-hot masks)
        p = M[..., k:, k].abs().argmax(dim=-1, keepdim=True) + k          # (..., 1)
        at_p = rows == p                                                  # (..., n)
        at_k = (rows == k).to(dtype=dtypes.int64) - at_p.to(dtype=dtypes.int64)
        row_p = (M * at_p.unsqueeze(-1).to(dtype=A.dtype)).sum(-2, keepdim=True)
        M = M + at_k.unsqueeze(-1).to(dtype=A.dtype) * (row_p - M[..., k:k + 1, :])
        order_p = (order * at_p).sum(-1, keepdim=True)
        order = order + at_k * (order_p - order[..., k:k + 1])
        sign = sign * (1 - 2 * (p.squeeze(-1) != k).to(dtype=A.dtype))
        if k == n - 1:
            break
        pivot = M[..., k:k + 1, k:k + 1]
        safe = pivot + (pivot == 0).to(dtype=A.dtype)                      # a zero pivot eliminates nothing
        below = M[..., k + 1:, k:k + 1] / safe
        M[..., k + 1:, k:k + 1] = below
        M[..., k + 1:, k + 1:] = M[..., k + 1:, k + 1:] - below * M[..., k:k + 1, k + 1:]
    return M, order, sign


def permutation(order, dtype):
    """The matrix P with (P B)[i] = B[order[i]]: one-hot rows, so that the rows are picked by a
    matmul."""
    n = order.shape[-1]
    return (order.unsqueeze(-1) == arange(n, device=order.device)).to(dtype=dtype)


def lu_solve(M, order, B):
    """X with A X = B from A's factors (B (..., n, k) of the factors' batch)."""
    Bp = permutation(order, B.dtype) @ B
    return substitute(M, substitute(M, Bp, upper=False, unit=True), upper=True)


def singular(op, M, what):
    """Raise LinAlgError, naming the first matrix of the batch with a zero on U's diagonal."""
    zero = diagonal_of(M) == 0
    if not zero.any().item():
        return
    flat = zero.reshape(-1, M.shape[-1])
    found = flat.any(dim=-1).to(dtype=dtypes.int64).argmax().item()
    column = flat[found].to(dtype=dtypes.int64).argmax().item()
    raise LinAlgError(batch_message(op, found, M.ndim > 2, what.format(column + 1)))


def _det_of(A):
    if A.shape[-1] == 0:
        return ones(*A.shape[:-2], dtype=A.dtype, device=A.device)
    M, _, sign = factor(A)
    return sign * diagonal_of(M).cumprod(-1)[..., -1]


def _inverse_t(A):
    """A^-T, not recorded (the formulas' factor)."""
    return _inverse(A).mT


def _inverse(A, op="linalg.inv"):
    M, order, _ = factor(A)
    singular(op, M, "The diagonal element {} is zero, the inversion could not be completed because the input "
                    "matrix is singular.")
    identity = eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(*A.shape)
    return lu_solve(M, order, identity)


def det(A, *, out=None):
    """The determinant of each square matrix: the pivots' product times the permutation's sign."""
    square("linalg.det", A)
    return factored(lambda A: (_det_of(A),),
                    lambda i, o, g: ((g[0] * o[0]).unsqueeze(-1).unsqueeze(-1) * _inverse_t(i[0]),), A)[0]


def slogdet(A, *, out=None):
    """(sign, logabsdet): det = sign * exp(logabsdet), the log of a product as a sum of logs
    (no overflow for large matrices); a singular matrix gives (0, -inf)."""
    square("linalg.slogdet", A)

    def compute(A):
        if A.shape[-1] == 0:
            return ones(*A.shape[:-2], dtype=A.dtype, device=A.device), A.new_zeros(*A.shape[:-2])
        M, _, sign = factor(A)
        d = diagonal_of(M)
        return sign * d.sign().cumprod(-1)[..., -1], d.abs().log().sum(-1)

    def gradient(inputs, outputs, grads):
        return (grads[1].unsqueeze(-1).unsqueeze(-1) * _inverse_t(inputs[0]),)

    return SlogdetResult(*factored(compute, gradient, A))


class SlogdetResult(tuple):
    """slogdet's (sign, logabsdet), by name too, as PyTorch's named tuple."""

    def __new__(cls, sign, logabsdet):
        return super().__new__(cls, (sign, logabsdet))

    sign = property(lambda self: self[0])
    logabsdet = property(lambda self: self[1])


def logdet(A):
    """log det A: nan where det < 0, -inf where 0 (torch.logdet)."""
    square("logdet", A)
    sign, logabsdet = slogdet(A)
    return where(sign < 0, float("nan"), logabsdet)


def inv(A, *, out=None):
    """A^-1 of each square matrix (LinAlgError for a singular one)."""
    square("linalg.inv", A)
    return factored(lambda A: (_inverse(A),), lambda i, o, g: (-(o[0].mT @ g[0] @ o[0].mT),), A)[0]


def _is_vector(A, B):
    """PyTorch's rule: B is a (batch of) vector(s) when 1-D or when its shape is A's less the last."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])


def solve(A, B, *, left=True, out=None):
    """X with A X = B (left=False: X A = B), A square and invertible, B (..., n, k) or a
    vector (..., n); batches broadcast (LinAlgError for a singular A)."""
    square("linalg.solve", A)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve(): argument 'B' must be Tensor, not {type(B).__name__}")
    floating_dtype("linalg.solve", B)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{A.dtype} and B of type {B.dtype} instead")
    vector = _is_vector(A, B)
    if not left:
        if vector:
            raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for "
                               "left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)")
        return solve(A.mT, B.mT).mT
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {Bm.shape[-2]}x{Bm.shape[-1]})")
    try:
        A, Bm = batched(A, Bm)
    except ValueError as e:
        raise RuntimeError(f"linalg.solve: {e}") from None

    def compute(A, B):
        M, order, _ = factor(A)
        singular("torch.linalg.solve", M, "The solver failed because the input matrix is singular.")
        return (lu_solve(M, order, B),)

    def gradient(inputs, outputs, grads):
        A, (X,), (g,) = inputs[0], outputs, grads
        gB = lu_solve(*factor(A.mT)[:2], g)
        return -(gB @ X.mT), gB

    X = factored(compute, gradient, A, Bm)[0]
    return X.squeeze(-1) if vector else X
