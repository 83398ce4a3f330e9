"""``Gumbel(loc, scale)``: the maximum's distribution, loc - scale * log(-log u) for a
uniform u, made as PyTorch makes it: a Uniform(tiny, 1 - eps) through transforms."""
import math

from ..factories import full_like
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, finfo

_EULER_GAMMA = 0.57721566490153286060


class Gumbel(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc)
        base = Uniform(full_like(self.loc, info.tiny), full_like(self.loc, 1 - info.eps), validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-1), ExpTransform().inv,
                      AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(*batch_shape)
        new.scale = self.scale.expand(*batch_shape)
        new = super().expand(batch_shape, _instance=new)
        new.transforms = self.transforms[:3] + [AffineTransform(loc=new.loc, scale=-new.scale)]
        return new

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * _EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev ** 2

    def entropy(self):
        return self.scale.log() + (1 + _EULER_GAMMA)
