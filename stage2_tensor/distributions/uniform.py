"""``Uniform(low, high)``: uniform on [low, high), reparameterized as low + (high - low) u."""
import math

from . import constraints
from .distribution import Distribution, expanded
from .utils import all_true, both, broadcast_all, uniform


class Uniform(Distribution):
    arg_constraints = {"low": constraints.dependent(is_discrete=False, event_dim=0),
                       "high": constraints.dependent(is_discrete=False, event_dim=0)}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.size(), validate_args=validate_args)
        if self._validate_args and not all_true(self.low < self.high):
            raise ValueError("Uniform is not defined when low>= high")

    def expand(self, batch_shape, _instance=None):
        return expanded(self, Uniform, batch_shape, ("low", "high"), _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * math.nan

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.low + uniform(shape, self.low) * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = both(self.low <= value, self.high > value).to(dtype=self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()

