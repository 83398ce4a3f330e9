"""Jacobi rotations, in parallel: the iteration behind eigh (two-sided: rotate rows and
columns until the matrix is diagonal) and svd (one-sided, Hestenes: rotate columns until
they are orthogonal).

One rotation acts on a pair of indices (p, q); pairs that share no index commute, so a
round rotates n/2 disjoint pairs at once, each by its own angle: the columns p and q are
gathered (index_select), mixed, and put back by one permutation, O(n^2) work (O(m n) for
columns of length m). The round-robin schedule (a chess tournament's: one player fixed, the
others turning) meets every pair once in n - 1 rounds, a sweep. Cyclic Jacobi converges
quadratically; a handful of sweeps reach rounding level, and the convergence test reads one
number per sweep. Jacobi's answers are accurate to rounding relative to the matrix's norm
(eigenvalues and singular values of a well-scaled matrix to a few ulps of its largest).
"""
from .. import dtypes
from ..concat import cat
from ..tensor import Tensor
from ..views import constant_tensor

MAX_SWEEPS = 40


def rounds(n):
    """The sweep's rounds: for each, the pairs' first and second indices (lists), disjoint."""
    players = list(range(n + n % 2))                 # an odd n gets a dummy player n: its partner rests
    out = []
    for _ in range(len(players) - 1):
        half = len(players) // 2
        pairs = [(players[i], players[-1 - i]) for i in range(half)]
        pairs = [(min(p, q), max(p, q)) for p, q in pairs if q < n and p < n]
        out.append(([p for p, _ in pairs], [q for _, q in pairs]))
        players = [players[0], players[-1]] + players[1:-1]
    return out


def _index(values, device):
    return constant_tensor(("jacobi", tuple(values)), device, list(values), dtypes.int64)


class Round:
    """One round's pairs on a device: where columns p and q are, and the permutation that puts
    [p columns, q columns, the rest] back in place."""

    def __init__(self, p, q, n, device):
        rest = [i for i in range(n) if i not in p and i not in q]
        order = p + q + rest
        back = [0] * n
        for position, i in enumerate(order):
            back[i] = position
        self.p, self.q = _index(p, device), _index(q, device)
        self.rest = _index(rest, device) if rest else None
        self.back = _index(back, device)

    def rotate(self, x, dim, c, s):
        """x with its slices p and q along ``dim`` (-1 or -2) replaced by c x_p - s x_q and
        s x_p + c x_q (c and s of the pairs, shaped to broadcast along ``dim``)."""
        xp, xq = x.index_select(dim, self.p), x.index_select(dim, self.q)
        pieces = [c * xp - s * xq, s * xp + c * xq]
        if self.rest is not None:
            pieces.append(x.index_select(dim, self.rest))
        return cat(pieces, dim=dim).index_select(dim, self.back)


def schedule(n, device):
    return [Round(p, q, n, device) for p, q in rounds(n)]


def angle(diagonal_p, diagonal_q, off):
    """(c, s) of the rotation that zeroes ``off`` in the symmetric 2x2 [[a_pp, off], [off, a_qq]]:
    t = sign(theta) / (|theta| + sqrt(theta^2 + 1)), theta = (a_qq - a_pp) / (2 off), the
    smaller angle (Rutishauser's), and t = 0 where off is 0."""
    zero = off == 0
    one = zero.to(dtype=off.dtype)
    theta = (diagonal_q - diagonal_p) / (2 * (off + one))
    sign = 1 - 2 * (theta < 0).to(dtype=off.dtype)
    big = theta.abs() > 1e150                        # theta^2 would overflow: t ~ 1 / (2 theta)
    safe = theta * (big == False)                    # noqa: E712
    t = sign / (theta.abs() + (safe * safe + 1).sqrt())
    t = t * (zero == False)                          # noqa: E712
    c = 1 / (t * t + 1).sqrt()
    return c, t * c


def converged(value):
    """A Python bool read from a 0-d bool tensor (one read per sweep)."""
    assert isinstance(value, Tensor)
    return bool(value.item())
