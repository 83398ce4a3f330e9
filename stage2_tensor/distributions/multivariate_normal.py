"""``MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None)``:
the Gaussian in n dimensions, reparameterized as loc + L z with L the lower Cholesky factor
of the covariance (torch.linalg's factor and triangular solve)."""
import math

from ..broadcast import broadcast_shapes
from ..einsum import einsum
from ..factories import eye
from ..tensor import Tensor
from . import constraints
from ..linalg import cholesky, solve_triangular
from .distribution import Distribution
from .utils import lazy_property, standard_normal


def _diagonal(m):
    return einsum("...ii->...i", m)


def _precision_to_scale_tril(precision):
    """The Cholesky factor of precision's inverse: with P = Lp Lp^T, P^-1 = Lp^-T Lp^-1."""
    n = precision.shape[-1]
    inverse_factor = solve_triangular(cholesky(precision), eye(n, dtype=precision.dtype, device=precision.device),
                                      upper=False)
    return cholesky(inverse_factor.transpose(-1, -2) @ inverse_factor)


def _mahalanobis(scale_tril, diff):
    """|L^-1 diff|^2 over the last dimension, batch dimensions broadcast."""
    return (solve_triangular(scale_tril, diff.unsqueeze(-1), upper=False).squeeze(-1) ** 2).sum(-1)


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if not isinstance(loc, Tensor) or loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        matrix = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        name = "scale_tril" if scale_tril is not None else \
            "covariance_matrix" if covariance_matrix is not None else "precision_matrix"
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions")
        n = loc.shape[-1]
        if tuple(matrix.shape[-2:]) != (n, n):
            raise ValueError(f"{name} must be {n} x {n} to match loc's last dimension, got shape "
                             f"{tuple(matrix.shape)}")
        batch_shape = tuple(broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        setattr(self, name, matrix.expand(*batch_shape, n, n))
        self.loc = loc.expand(*batch_shape, n)
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        n = self.event_shape[0]
        new.loc = self.loc.expand(*batch_shape, n)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*batch_shape, n, n))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self.batch_shape) + tuple(self.event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(*self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        factor = self._unbroadcasted_scale_tril
        return (factor @ factor.transpose(-1, -2)).expand(*self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        n = self.event_shape[0]
        inverse = solve_triangular(self._unbroadcasted_scale_tril, eye(n, dtype=self.loc.dtype, device=self.loc.device),
                                   upper=False)
        return (inverse.transpose(-1, -2) @ inverse).expand(*self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (self._unbroadcasted_scale_tril ** 2).sum(-1).expand(*self.batch_shape, *self.event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return _diagonal(self._unbroadcasted_scale_tril).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.event_shape[0]
        m = _mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (n * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        n = self.event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(*self.batch_shape) if len(self.batch_shape) else h
