"""``Bernoulli(probs=None, logits=None)``: 1 with probability probs, else 0."""
import math

from .. import dtypes
from ..elementwise import where
from ..factories import arange
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .distribution import Distribution, expanded
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits, uniform


def _probs_or_logits(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Bernoulli(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _probs_or_logits(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            param = self.logits
        self._param = param
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expanded(self, Bernoulli, batch_shape, ("probs", "logits"), _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(dtype=self.probs.dtype)
        return where(self.probs == 0.5, mode * math.nan, mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = self.probs.detach()
        return (uniform(shape, probs) < probs).to(dtype=probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = arange(2, dtype=dtypes.int64, device=self._param.device).to(dtype=self._param.dtype)
        values = values.reshape((2,) + (1,) * len(self.batch_shape))
        return values.expand(2, *self.batch_shape) if expand else values

