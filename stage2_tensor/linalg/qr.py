"""QR by Householder reflections, as LAPACK's geqrf: for each column j < min(m, n), the
reflection H = I - tau v v^T that maps R[j:, j] onto beta e_1, beta = -sign(R[j, j]) times
the column's norm (LAPACK's sign, so Q and R match PyTorch's and numpy's), applied to the
columns to its right: one O(m n) step per column. Q is the reflections applied in reverse
to the identity's first columns (mode "reduced") or to all of it ("complete").

Differentiated by PyTorch's formula (m >= n): dA = [gQ + Q copyltu(M)] R^-T with
M = triu(gR R^T - Q^T gQ), copyltu(M) = M + M^T with its diagonal halved; for m < n the
columns past the m-th are Q times theirs (A = [X | Y], R = [R_X | Q^T Y]), which adds
Y gR_Y^T to gQ first.
"""
from ..factories import eye, zeros
from ..products import diagonal_of
from .checks import floating_dtype, matrices
from .factored import factored
from .triangular import substitute


def reflections(A):
    """(R, vs, taus): R (m, n) upper triangular, and the reflections, v_j with v_j[0] = 1
    (as m - j rows) and tau_j. Not recorded by autograd."""
    m, n = A.shape[-2:]
    R = A.clone()
    vs, taus = [], []
    for j in range(min(m, n)):
        x = R[..., j:, j:j + 1]                                  # (..., m - j, 1)
        alpha = x[..., :1, :]
        rest = (x[..., 1:, :] * x[..., 1:, :]).sum(-2, keepdim=True)
        norm = (alpha * alpha + rest).sqrt()
        beta = norm * (1 - 2 * (alpha >= 0).to(dtype=A.dtype))  # -sign(alpha) |x|, sign(0) = +
        flat = rest == 0                                         # nothing below: H = I (tau 0)
        beta = flat * alpha + (flat == False) * beta            # noqa: E712
        denom = alpha - beta
        denom = denom + flat.to(dtype=A.dtype)
        v = x / denom
        v[..., :1, :] = 1.0
        tau = (flat == False) * (beta - alpha) / (beta + flat.to(dtype=A.dtype))   # noqa: E712
        block = R[..., j:, j:]
        R[..., j:, j:] = block - (tau * v) @ (v.mT @ block)
        vs.append(v)
        taus.append(tau)
    return R, vs, taus


def apply_q(vs, taus, C):
    """Q C for C (..., m, c): the reflections applied last to first."""
    C = C.clone()
    for j in reversed(range(len(vs))):
        v, tau = vs[j], taus[j]
        block = C[..., j:, :]
        C[..., j:, :] = block - (tau * v) @ (v.mT @ block)
    return C


def decompose(A, mode):
    """(Q, R) of A in ``mode``, not recorded by autograd."""
    m, n = A.shape[-2:]
    k = min(m, n)
    R, vs, taus = reflections(A)
    if mode == "r":
        return zeros(0, dtype=A.dtype, device=A.device), R[..., :k, :].triu()
    cols = m if mode == "complete" else k
    Q = apply_q(vs, taus, eye(m, cols, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], m, cols))
    return Q, R[..., :cols, :].triu()


def _square_case(Q, R, gQ, gR):
    """dA for m >= n (Q (m, n), R (n, n))."""
    M = (gR @ R.mT - Q.mT @ gQ).triu()
    M = M + M.mT
    M = M - 0.5 * diagonal_of(M).unsqueeze(-1) * eye(M.shape[-1], dtype=M.dtype, device=M.device)
    B = gQ + Q @ M
    return substitute(R, B.mT, upper=True).mT                   # B R^-T: solve R X^T = B^T


def _gradient(mode):
    def gradient(inputs, outputs, grads):
        (A,), (Q, R), (gQ, gR) = inputs, outputs, grads
        m, n = A.shape[-2:]
        if mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                               "linalg.qr.")
        if mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        if m >= n:
            return (_square_case(Q, R, gQ, gR),)
        X, Y = R[..., :m], R[..., m:]
        gX, gY = gR[..., :m], gR[..., m:]
        gA_X = _square_case(Q, X, gQ + (Q @ Y) @ gY.mT, gX)
        from ..concat import cat
        return (cat([gA_X, Q @ gY], dim=-1),)
    return gradient


class QRResult(tuple):
    """qr's (Q, R), by name too, as PyTorch's named tuple."""

    def __new__(cls, Q, R):
        return super().__new__(cls, (Q, R))

    Q = property(lambda self: self[0])
    R = property(lambda self: self[1])


def qr(A, mode="reduced", *, out=None):
    """A = Q R, Q with orthonormal columns, R upper triangular: ``mode`` "reduced" (Q (m, k),
    R (k, n), k = min(m, n)), "complete" (Q (m, m), R (m, n)) or "r" (R only, Q empty)."""
    matrices("linalg.qr", A)
    floating_dtype("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    return QRResult(*factored(lambda A: decompose(A, mode), _gradient(mode), A))
