"""``Dirichlet(concentration)``: a point of the simplex, normalized standard gamma draws
(gamma.py says how they are drawn, and why this is not reparameterized)."""
from ..elementwise import where
from ..nn.functional import one_hot
from . import constraints
from .distribution import Distribution, expanded
from .gamma import standard_gamma
from ..math_api import digamma, lgamma, xlogy
from .utils import finfo


class Dirichlet(Distribution):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = False

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = concentration.size()
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expanded(self, Dirichlet, batch_shape, ("concentration",), _instance)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        gammas = standard_gamma(self.concentration.detach().expand(*shape))
        tiny, eps = finfo(gammas).tiny, finfo(gammas).eps
        return (gammas / gammas.sum(-1, keepdim=True)).clamp(min=tiny, max=1 - eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        c = self.concentration
        m1 = (c - 1).clamp(min=0)
        mode = m1 / m1.sum(-1, keepdim=True)
        corner = one_hot(c.argmax(-1), c.shape[-1]).to(dtype=c.dtype)
        return where((c < 1).all(-1).unsqueeze(-1), corner, mode)

    @property
    def variance(self):
        c = self.concentration
        total = c.sum(-1, keepdim=True)
        return c * (total - c) / (total ** 2 * (total + 1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return lgamma(c).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0) - ((c - 1.0) * digamma(c)).sum(-1)
