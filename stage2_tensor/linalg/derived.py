"""What the factorizations give, as composites (autograd differentiates them through the
factorizations' formulas):

    pinv          V diag(1 / S) U^T over the singular values above the tolerance (hermitian: eigh's)
    matrix_rank   how many singular values are above it
    lstsq         min |A X - B|: R^-1 Q^T B for a tall A of full rank, pinv(A) B otherwise
    matrix_power  repeated squaring (of the inverse for n < 0)
    matrix_exp    Taylor's series of degree 18 on A / 2^s, |A / 2^s|_1 <= 1/2, squared s times
    vecdot        the sum of x * y over dim
"""
import math

from .. import dtypes
from ..dtypes import finfo
from ..elementwise import where
from ..factories import eye, zeros
from ..matmul import matmul
from ..tensor import Tensor
from .checks import floating_dtype, matrices, square
from .eigh import eigh, eigvalsh
from .lu import inv
from .qr import qr
from .svd import svd, svdvals
from .triangular import solve_triangular


def _tolerance(S, atol, rtol, shape):
    """max(atol, rtol * S_max) per matrix, PyTorch's rule: rtol defaults to eps * max(m, n)
    when neither is given, to 0 when only atol is."""
    if rtol is None:
        rtol = finfo(S.dtype).eps * max(shape) if atol is None or _is_zero(atol) else 0.0
    biggest = S.amax(-1, keepdim=True) if S.shape[-1] else S.new_zeros(*S.shape[:-1], 1)
    tol = biggest * rtol
    if atol is not None:
        tol = tol.maximum(atol if isinstance(atol, Tensor) else tol.new_zeros(*tol.shape) + atol)
    return tol


def _is_zero(x):
    return not isinstance(x, Tensor) and x == 0


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The Moore-Penrose pseudo-inverse, singular values at or below the tolerance taken as 0."""
    if isinstance(A, Tensor) and (A.ndim < 2 or not A.dtype.is_floating_point):
        raise RuntimeError(f"linalg.pinv({A.dtype}{list(A.shape)}): expected a tensor with 2 or more dimensions of "
                           "float, double, cfloat or cdouble types")
    matrices("linalg.pinv", A)
    floating_dtype("linalg.pinv", A)
    if hermitian:
        L, V = eigh(A)
        tol = _tolerance(L.abs(), atol, rtol, A.shape[-2:])
        keep = L.abs() > tol
        inverse = where(keep, 1 / where(keep, L, 1.0), 0.0)
        return (V * inverse.unsqueeze(-2)) @ V.mT
    U, S, Vh = svd(A, full_matrices=False)
    keep = S > _tolerance(S, atol, rtol, A.shape[-2:])
    inverse = where(keep, 1 / where(keep, S, 1.0), 0.0)
    return (Vh.mT * inverse.unsqueeze(-2)) @ U.mT


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    """How many singular values (|eigenvalues| with hermitian) are above the tolerance."""
    if isinstance(A, Tensor) and A.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    matrices("linalg.matrix_rank", A)
    floating_dtype("linalg.matrix_rank", A)
    if tol is not None:
        atol, rtol = tol, 0.0
    S = eigvalsh(A.detach()).abs() if hermitian else svdvals(A.detach())
    return (S > _tolerance(S, atol, rtol, A.shape[-2:])).to(dtype=dtypes.int64).sum(-1)


class LstsqResult(tuple):
    """lstsq's (solution, residuals, rank, singular_values), by name too."""

    def __new__(cls, solution, residuals, rank, singular_values):
        return super().__new__(cls, (solution, residuals, rank, singular_values))

    solution = property(lambda self: self[0])
    residuals = property(lambda self: self[1])
    rank = property(lambda self: self[2])
    singular_values = property(lambda self: self[3])


def lstsq(A, B, rcond=None, *, driver=None):
    """The X minimizing |A X - B| (B (..., m, k), or a vector (m,)): for a tall or square A of
    full rank, from A's QR; otherwise the least-norm solution, pinv(A) B. As PyTorch's CPU
    drivers: ``rank`` for "gelsy" (the default), "gelsd" and "gelss"; ``singular_values``
    for "gelsd" and "gelss"; ``residuals`` (|A X - B|^2 per column) where m > n, A has full
    rank and the driver is not "gelsy"; the rest empty."""
    matrices("linalg.lstsq", A)
    floating_dtype("linalg.lstsq", A)
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.lstsq(): argument 'B' must be Tensor, not {type(B).__name__}")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
                           f"input's dtype {A.dtype} and other's dtype {B.dtype}")
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.ndim < 2 or Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2:]
    S = svdvals(A.detach())
    if rcond is None:
        rcond = finfo(A.dtype).eps * max(m, n)
    rank = (S > S.amax(-1, keepdim=True) * rcond).to(dtype=dtypes.int64).sum(-1) if S.shape[-1] else \
        zeros(*S.shape[:-1], dtype=dtypes.int64, device=A.device)
    full = bool((rank == min(m, n)).all().item())
    if m >= n and full:
        Q, R = qr(A)
        X = solve_triangular(R, Q.mT @ Bm, upper=True)
    else:
        X = pinv(A, rtol=rcond) @ Bm
    empty = A.new_zeros(0)
    residuals = empty
    if m > n and full and driver != "gelsy":
        residuals = ((A @ X - Bm) ** 2).sum(-2)
        residuals = residuals.squeeze(-1) if vector else residuals
    return LstsqResult(X.squeeze(-1) if vector else X, residuals,
                       rank if driver != "gels" else zeros(0, dtype=dtypes.int64, device=A.device),
                       S if driver in ("gelsd", "gelss") else empty)


def matrix_exp(A):
    """e^A = sum A^k / k!, by scaling and squaring: the series on A / 2^s, its 1-norm at most
    1/2 (degree 18 leaves 2^-19 / 19!, below float64's rounding), then squared s times. s is
    the batch's largest (one number read). Differentiable through its matmuls."""
    square("linalg.matrix_exp", A)
    n = A.shape[-1]
    identity = eye(n, dtype=A.dtype, device=A.device)
    if n == 0:
        return A.clone()
    norm = A.detach().abs().sum(-2).amax(-1).amax().item() if A.numel() else 0.0
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 and math.isfinite(norm) else 0
    X = A / float(2 ** s) if s else A
    T = identity + X / 18.0
    for k in range(17, 0, -1):
        T = identity + (X @ T) / float(k)
    for _ in range(s):
        T = T @ T
    return T


def vecdot(x, y, *, dim=-1, out=None):
    """The dot product of vectors along ``dim``, the two broadcast together."""
    for name, t in (("x", x), ("y", y)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linalg.vecdot(): argument '{name}' must be Tensor, not {type(t).__name__}")
    return (x * y).sum(dim)


def matrix_power(A, n):
    """A @ A @ ... (n times), by repeated squaring: n = 0 the identity (each matrix of a
    batch), n < 0 the inverse's power."""
    square("linalg.matrix_power", A, floating=False)
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    if n == 0:
        return eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(*A.shape).clone()
    if n < 0:
        A, n = inv(A), -n
    result, power = None, A
    while True:
        if n & 1:
            result = power if result is None else matmul(result, power)
        n >>= 1
        if not n:
            return result
        power = matmul(power, power)
