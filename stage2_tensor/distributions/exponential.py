"""``Exponential(rate)``: waiting times, reparameterized as -log(1 - u) / rate."""
from . import constraints
from .distribution import Distribution, expanded
from .utils import broadcast_all, uniform


class Exponential(Distribution):
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expanded(self, Exponential, batch_shape, ("rate",), _instance)

    @property
    def mean(self):
        return 1 / self.rate

    @property
    def mode(self):
        return self.rate * 0

    @property
    def stddev(self):
        return 1 / self.rate

    @property
    def variance(self):
        return self.rate ** -2

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return -(-uniform(shape, self.rate)).log1p() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()
