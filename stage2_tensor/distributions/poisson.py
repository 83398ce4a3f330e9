"""``Poisson(rate)``: counts of events at a given rate.

Draws, on whole tensors: rates below 10 by inversion, each round moving every element whose
uniform still lies above the running distribution function up one count (rounds: the largest
count drawn, a few dozen at most for such rates); larger rates by Hörmann's transformed
rejection with squeeze ("The transformed rejection method for generating Poisson random
variables", 1993, PTRS), where every round accepts at least ~90%, so few rounds fill them all."""
from .. import dtypes
from ..elementwise import where
from ..factories import zeros
from . import constraints
from .distribution import Distribution, expanded
from ..math_api import lgamma, xlogy
from .utils import all_true, broadcast_all, either, uniform

_SMALL = 10.0
_ROUNDS = 1000


def _small(rate, generator=None):
    """Inversion: the count k whose distribution function first exceeds u. An element stops
    once the next term has underflowed to 0, where rounding may leave u above the sum."""
    u = uniform(rate.shape, rate, generator=generator)
    k = rate * 0
    term = (-rate).exp()
    cdf = term
    for _ in range(_ROUNDS):
        more = (u > cdf) * (term > 0)
        if not bool(more.any().item()):
            return k
        k = where(more, k + 1, k)
        term = where(more, term * rate / k.clamp(min=1), term)
        cdf = where(more, cdf + term, cdf)
    raise RuntimeError(f"Poisson: inversion did not finish in {_ROUNDS} rounds")


def _large(rate, generator=None):
    """PTRS: a candidate from a transformed uniform, accepted with Hörmann's test."""
    slam, loglam = rate.sqrt(), rate.log()
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    out = rate * 0
    done = zeros(tuple(rate.shape), dtype=dtypes.bool_, device=rate.device)
    for _ in range(_ROUNDS):
        u = uniform(rate.shape, rate, generator=generator) - 0.5
        v = uniform(rate.shape, rate, generator=generator)
        us = 0.5 - u.abs()
        k = ((2 * a / us + b) * u + rate + 0.43).floor()
        squeeze = (us >= 0.07) * (v <= v_r)
        safe_us = us.clamp(min=1e-12)
        safe_k = k.clamp(min=0)
        test = (v * inv_alpha / (a / (safe_us * safe_us) + b)).log() <= \
            -rate + safe_k * loglam - lgamma(safe_k + 1)
        reject = either(k < 0, (us < 0.013) * (v > us))
        accept = either(squeeze * (k >= 0), test * (reject == False))  # noqa: E712
        out = where(accept * (done == False), k, out)  # noqa: E712
        done = either(done, accept)
        if all_true(done):
            return out
    raise RuntimeError(f"Poisson: rejection sampling accepted no draw for some elements in {_ROUNDS} rounds")


def sample_poisson(rate, generator=None):
    """Poisson draws of rate's shape (outside the graph), from ``generator`` when given
    (torch.poisson's), else the package's generator."""
    rate = rate.detach()
    large = rate >= _SMALL
    small = _small(where(large, rate * 0, rate), generator)
    if not all_true(large == False):  # noqa: E712
        return where(large, _large(where(large, rate, rate * 0 + _SMALL), generator), small)
    return small


class Poisson(Distribution):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expanded(self, Poisson, batch_shape, ("rate",), _instance)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        return sample_poisson(self.rate.expand(*self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - lgamma(value + 1)

