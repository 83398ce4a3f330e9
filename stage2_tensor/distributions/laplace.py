"""``Laplace(loc, scale)``: the double exponential, reparameterized by inverting its
distribution function at a uniform u in (-1, 1)."""
import math

from . import constraints
from .distribution import Distribution, expanded
from .utils import broadcast_all, finfo, uniform


class Laplace(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expanded(self, Laplace, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale ** 2

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = uniform(shape, self.loc, finfo(self.loc).eps - 1, 1.0)    # (-1, 1): log1p(-|u|) stays finite
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
