"""PyTorch's older top-level spellings of the factorizations, as torch.cholesky, torch.qr,
torch.svd and torch.pinverse (and the Tensor methods of those names) still call them."""
from collections import namedtuple

from .cholesky import cholesky as _cholesky
from .derived import pinv
from .qr import qr as _qr
from .svd import svd as _svd


SVD = namedtuple("svd", ["U", "S", "V"])      # torch.return_types.svd


def cholesky(input, upper=False):  # noqa: A002  (PyTorch's argument names)
    """torch.cholesky: linalg.cholesky."""
    return _cholesky(input, upper=upper)


def qr(input, some=True):  # noqa: A002
    """torch.qr: some=True is mode "reduced", False "complete"."""
    return _qr(input, "reduced" if some else "complete")


def svd(input, some=True, compute_uv=True):  # noqa: A002
    """torch.svd: (U, S, V), V not transposed; some=False gives the full U and V; without
    compute_uv, U and V zero-filled (of the full shapes)."""
    U, S, Vh = _svd(input, full_matrices=not some)
    if not compute_uv:
        m, n = U.shape[-2], Vh.shape[-1]
        return SVD(U.new_zeros(*U.shape[:-2], m, m), S.detach(), Vh.new_zeros(*Vh.shape[:-2], n, n))
    return SVD(U, S, Vh.mT)


def pinverse(input, rcond=1e-15):  # noqa: A002
    """torch.pinverse: pinv with a relative tolerance."""
    return pinv(input, rtol=rcond)
