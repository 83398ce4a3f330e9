"""``Beta(concentration1, concentration0)``: the first coordinate of a two-category Dirichlet."""
from ..concat import stack
from . import constraints
from .dirichlet import Dirichlet
from .distribution import Distribution
from .utils import broadcast_all


class Beta(Distribution):
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = False

    def __init__(self, concentration1, concentration0, validate_args=None):
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(stack([c1, c0], -1), validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, new._dirichlet.batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total ** 2 * (total + 1))

    def sample(self, sample_shape=()):
        return self._dirichlet.sample(sample_shape)[..., 0]

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()
