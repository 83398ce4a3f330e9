"""The Cholesky factor: A = L L^T, L lower triangular with a positive diagonal, for a
symmetric positive-definite A (its lower triangle is read). One column per step, for the
whole batch: L[k, k] = sqrt(A[k, k] - |L[k, :k]|^2), and the column below it from A's and
the rows already found (a matmul): n steps of O(n^2) work.

Differentiated by PyTorch's formula (Murray 2016): with phi = tril(L^T g) and its diagonal
halved, dA = L^-T sym(phi) L^-1, two triangular solves. A matrix that is not
positive-definite raises LinAlgError naming the leading minor that fails, as PyTorch.
"""
from ..products import diagonal_of
from .checks import LinAlgError, batch_message, square
from .factored import factored
from .triangular import substitute


def factor(A):
    """(L, failed): L's columns until one's pivot is not positive, then nan; ``failed`` (the
    batch's shape) whether each matrix had such a pivot. Not recorded by autograd."""
    n = A.shape[-1]
    L = A.tril()
    for k in range(n):
        row = L[..., k:k + 1, :k]                                   # (..., 1, k): L[k, :k]
        pivot = (L[..., k:k + 1, k:k + 1] - (row * row).sum(-1, keepdim=True)).sqrt()   # nan if not positive
        column = L[..., k + 1:, k:k + 1] - L[..., k + 1:, :k] @ row.mT if k else L[..., k + 1:, k:k + 1]
        L[..., k:k + 1, k:k + 1] = pivot
        L[..., k + 1:, k:k + 1] = column / pivot
    return L


def _failed(L):
    return (diagonal_of(L) > 0) == False                            # noqa: E712  (nan or 0: that minor failed)


def _check(op, L):
    bad = _failed(L)
    if not bad.any().item():
        return
    flat = bad.reshape(-1, L.shape[-1])
    found = flat.any(dim=-1).long().argmax().item()
    order = flat[found].long().argmax().item() + 1
    raise LinAlgError(batch_message(op, found, L.ndim > 2, "The factorization could not be completed because the "
                                    f"input is not positive-definite (the leading minor of order {order} is not "
                                    "positive-definite)."))


def _gradient(inputs, outputs, grads):
    (L,), (g,) = outputs, grads
    phi = (L.mT @ g).tril()
    phi = 0.5 * (phi + phi.tril(-1).mT)
    left = substitute(L.mT, phi, upper=True)                        # L^-T phi
    return (substitute(L.mT, left.mT, upper=True).mT,)              # (L^-T phi) L^-1


def cholesky(A, *, upper=False, out=None):
    """L with A = L L^T (upper=True: L^T, with A = U^T U), batches of symmetric
    positive-definite matrices."""
    square("linalg.cholesky", A)

    def compute(A):
        L = factor(A)
        _check("linalg.cholesky", L)
        return (L,)

    L = factored(compute, _gradient, A)[0]
    return L.mT if upper else L


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info) as cholesky, without the error: info (int32, the batch's shape) is 0 where
    the factorization completed, else the order of the first leading minor that is not
    positive-definite (that matrix's L is not usable). check_errors=True raises as cholesky."""
    square("linalg.cholesky_ex", A)
    L = factored(lambda A: (factor(A),), _gradient, A)[0]
    if check_errors:
        _check("linalg.cholesky_ex", L)
    failed = _failed(L).long()
    # the first failed pivot's order: every pivot after a failed one is nan too
    info = ((failed.sum(-1) > 0).long() * (L.shape[-1] + 1 - failed.sum(-1))).int()
    return CholeskyExResult(L.mT if upper else L, info)


class CholeskyExResult(tuple):
    """torch.return_types.linalg_cholesky_ex: (L, info), also by name."""

    def __new__(cls, L, info):
        return super().__new__(cls, (L, info))

    L = property(lambda self: self[0])
    info = property(lambda self: self[1])
