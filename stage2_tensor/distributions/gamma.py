"""``Gamma(concentration, rate)``, and the standard gamma draw that Beta and Dirichlet share.

Draws: Marsaglia and Tsang's method ("A simple method for generating gamma variables",
2000) on whole tensors: every round draws a normal and a uniform for every element and keeps
the accepted ones not yet filled; at least 95% are accepted each round, so few rounds fill
them all (a bounded number is allowed; running past it means a broken generator).
Concentrations below 1 draw for concentration + 1 and multiply by u^(1 / concentration).

Not reparameterized (has_rsample is False, unlike PyTorch's): the implicit gradient of a
gamma draw needs the derivative of the incomplete gamma function in its shape, which this
package does not have."""
from .. import dtypes
from ..elementwise import where
from ..factories import zeros
from . import constraints
from .distribution import Distribution, expanded
from ..math_api import digamma, lgamma, xlogy
from .utils import all_true, broadcast_all, either, standard_normal, uniform

_ROUNDS = 64


def standard_gamma(concentration):
    """Gamma(concentration, 1) draws of concentration's shape (outside the graph)."""
    alpha = concentration.detach()
    boost = alpha < 1
    a = where(boost, alpha + 1, alpha)
    d = a - 1 / 3
    c = 1 / (9 * d).sqrt()
    out = a * 0
    done = zeros(tuple(a.shape), dtype=dtypes.bool_, device=a.device)
    for _ in range(_ROUNDS):
        z = standard_normal(a.shape, a)
        u = uniform(a.shape, a)
        v = (1 + c * z) ** 3
        positive = v > 0
        safe_v = where(positive, v, v * 0 + 1)
        accept = (u.log() < 0.5 * z * z + d - d * safe_v + d * safe_v.log()) * positive
        out = where(accept * (done == False), d * safe_v, out)  # noqa: E712
        done = either(done, accept)
        if all_true(done):
            break
    else:
        raise RuntimeError(f"Gamma: rejection sampling accepted no draw for some elements in {_ROUNDS} rounds")
    boosted = out * uniform(a.shape, a) ** (1 / alpha)
    return where(boost, boosted, out).clamp(min=dtypes.finfo(a.dtype).tiny)


class Gamma(Distribution):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = False

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expanded(self, Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate ** 2

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        draws = standard_gamma(self.concentration.detach().expand(*shape)) / self.rate.detach().expand(*shape)
        return draws.clamp(min=dtypes.finfo(draws.dtype).tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value) - self.rate * value
                - lgamma(self.concentration))

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + lgamma(c) + (1.0 - c) * digamma(c)
