"""The singular value decomposition A = U diag(S) Vh, by one-sided Jacobi (Hestenes):
rotations of column pairs of W = A (of A^T when it is wide) orthogonalize the columns
(jacobi.py: n/2 pairs a round, O(m n) each); then S is the columns' norms, U the columns
normalized and V the rotations' product. Not via eigh of A^T A, whose small singular values
lose half their digits: Jacobi keeps them to rounding relative to the largest. S is sorted
descending. Where U needs columns A does not determine (a zero singular value,
full_matrices=True), they complete it to an orthonormal basis, from a Householder QR of U
(qr.py).

Differentiated by PyTorch's formula (svd_backward), with E_jk = S_k^2 - S_j^2:
    dA = U [(skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS)] Vh
         + (I - U U^T) gU S^-1 Vh + U S^-1 gV^T (I - V V^T)
the last two only for a non-square A. Gradients through U and V assume distinct nonzero
singular values (PyTorch's too); through S alone they need nothing.
"""
from ..dtypes import finfo
from ..factories import eye
from ..products import diagonal_of
from .checks import floating_dtype, matrices
from .factored import factored
from .lu import permutation
from .jacobi import MAX_SWEEPS, angle, converged, schedule
from .qr import reflections, apply_q


def _orthogonalize(W, rotations=True):
    """(W with orthogonal columns, V) with W_out = W V, V orthogonal (None without
    ``rotations``: the singular values need W only). Not recorded."""
    n = W.shape[-1]
    V = eye(n, dtype=W.dtype, device=W.device).expand(*W.shape[:-2], n, n).clone()
    if n < 2:
        return W, V
    eps = finfo(W.dtype).eps
    rounds = schedule(n, W.device)
    last = False
    for _ in range(MAX_SWEEPS):
        for r in rounds:
            wp, wq = W.index_select(-1, r.p), W.index_select(-1, r.q)
            alpha, beta, gamma = (wp * wp).sum(-2), (wq * wq).sum(-2), (wp * wq).sum(-2)
            c, s = angle(alpha, beta, gamma)
            c, s = c.unsqueeze(-2), s.unsqueeze(-2)
            W = r.rotate(W, -1, c, s)
            V = r.rotate(V, -1, c, s) if rotations else V
        if last:
            break
        G = W.mT @ W                                       # the columns' cosines: below n eps, done
        d = diagonal_of(G)
        cosines = G * G - (d.unsqueeze(-1) * d.unsqueeze(-2)) * (n * eps) ** 2
        last = converged(((cosines * (1 - eye(n, dtype=W.dtype, device=W.device))) <= 0).all())
    return W, V


def _complete(U, cols):
    """U's first k columns kept where they are unit vectors, the rest of an orthonormal basis
    of ``cols`` columns from a Householder QR of U: Q's column j is U's up to R_jj's sign."""
    m, k = U.shape[-2:]
    R, vs, taus = reflections(U)
    Q = apply_q(vs, taus, eye(m, cols, dtype=U.dtype, device=U.device).expand(*U.shape[:-2], m, cols))
    sign = 1 - 2 * (diagonal_of(R) < 0).to(dtype=U.dtype)
    if cols > k:
        sign = _cat_ones(sign, cols - k)
    return Q * sign.unsqueeze(-2)


def _cat_ones(x, n):
    from ..concat import cat
    return cat([x, x.new_ones(*x.shape[:-1], n)], dim=-1)


def decompose(A, full_matrices, compute_uv=True):
    """(U, S, Vh) of A, not recorded (U and Vh empty without compute_uv)."""
    m, n = A.shape[-2:]
    wide = m < n
    W, V = _orthogonalize(A.mT if wide else A, compute_uv)
    S = (W * W).sum(-2).sqrt()
    S, order = S.sort(-1, descending=True)
    if not compute_uv:
        return (S,)
    by_size = permutation(order, W.dtype).mT                   # columns in the order of S
    W, V = W @ by_size, V @ by_size
    zero = S == 0
    U = W / (S + zero.to(dtype=S.dtype)).unsqueeze(-2)
    rows, k = U.shape[-2], U.shape[-1]
    if (full_matrices and rows > k) or zero.any().item():
        U = _complete(U, rows if full_matrices else k)
    if full_matrices and V.shape[-1] < V.shape[-2]:
        V = _complete(V, V.shape[-2])
    return (V, S, U.mT) if wide else (U, S, V.mT)


def _gradient(full_matrices):
    def gradient(inputs, outputs, grads):
        (A,), (U, S, Vh), (gU, gS, gVh) = inputs, outputs, grads
        m, n = A.shape[-2:]
        k = S.shape[-1]
        if full_matrices:                                  # the completed columns carry no gradient
            U, gU, Vh, gVh = U[..., :k], gU[..., :k], Vh[..., :k, :], gVh[..., :k, :]
        V, gV = Vh.mT, gVh.mT
        identity = eye(k, dtype=S.dtype, device=S.device)
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + identity
        UhgU = U.mT @ gU
        VhgV = V.mT @ gV
        inner = ((UhgU - UhgU.mT) * S.unsqueeze(-2) + S.unsqueeze(-1) * (VhgV - VhgV.mT)) / E * (1 - identity)
        gA = U @ (inner + gS.unsqueeze(-1) * identity) @ Vh
        if m > k:
            gA = gA + ((gU - U @ UhgU) / S.unsqueeze(-2)) @ Vh
        if n > k:
            gA = gA + U @ ((gV - V @ VhgV) / S.unsqueeze(-2)).mT
        return (gA,)
    return gradient


class SVDResult(tuple):
    """svd's (U, S, Vh), by name too, as PyTorch's named tuple."""

    def __new__(cls, U, S, Vh):
        return super().__new__(cls, (U, S, Vh))

    U = property(lambda self: self[0])
    S = property(lambda self: self[1])
    Vh = property(lambda self: self[2])


def svd(A, full_matrices=True, *, driver=None, out=None):
    """A = U diag(S) Vh: S descending, U (m, m) and Vh (n, n) orthogonal (full_matrices=False:
    their first k = min(m, n) columns and rows), each pair of singular vectors up to sign."""
    matrices("linalg.svd", A)
    floating_dtype("linalg.svd", A)
    return SVDResult(*factored(lambda A: decompose(A, full_matrices), _gradient(full_matrices), A))


def svdvals(A, *, driver=None, out=None):
    """The singular values, descending; differentiable (dA = U diag(gS) Vh)."""
    matrices("linalg.svdvals", A)
    floating_dtype("linalg.svdvals", A)
    if not A.requires_grad:                                    # no vectors needed: W's rotations only
        return factored(lambda A: decompose(A, False, compute_uv=False), None, A)[0]
    return svd(A, full_matrices=False)[1]
