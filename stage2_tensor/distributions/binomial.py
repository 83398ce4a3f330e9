"""``Binomial(total_count=1, probs=None, logits=None)``: successes in total_count Bernoulli
trials. A draw is the sum of total_count Bernoulli draws, made as one tensor of
max(total_count) uniforms per element: O(total_count) per draw, meant for modest counts
(PyTorch draws with a dedicated sampler whose cost does not grow with the count)."""
from .. import dtypes
from ..factories import arange
from ..nn.functional import softplus
from . import constraints
from .bernoulli import _probs_or_logits
from .distribution import Distribution, expanded
from ..math_api import lgamma
from .utils import all_true, broadcast_all, lazy_property, logits_to_probs, probs_to_logits, uniform


class Binomial(Distribution):
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _probs_or_logits(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(dtype=self.probs.dtype)
            self._param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(dtype=self.logits.dtype)
            self._param = self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expanded(self, Binomial, batch_shape, ("total_count", "probs", "logits"), _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

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
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        probs, counts = self.probs.detach(), self.total_count.detach()
        trials = int(counts.max().item()) if counts.numel() else 0
        if trials == 0:
            return probs.expand(*shape) * 0
        successes = uniform(shape + (trials,), probs) < probs.unsqueeze(-1)
        counted = arange(trials, device=probs.device).to(dtype=probs.dtype) < counts.unsqueeze(-1)
        return (successes * counted).to(dtype=probs.dtype).sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = lgamma(n + 1)
        log_factorial_k = lgamma(value + 1)
        log_factorial_nmk = lgamma(n - value + 1)
        # n * log(1 + exp(logits)), computed without overflow
        normalize = n * softplus(logits) - log_factorial_n
        return value * logits - log_factorial_k - log_factorial_nmk - normalize

    def entropy(self):
        counts = self.total_count
        if not all_true(counts == counts.max()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        n = int(self.total_count.max().item())
        if not all_true(self.total_count == n):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = arange(1 + n, dtype=dtypes.int64, device=self._param.device).to(dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand(1 + n, *self.batch_shape) if expand else values
