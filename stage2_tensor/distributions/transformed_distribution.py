"""``TransformedDistribution(base_distribution, transforms)``: the distribution of
T_n(...T_1(x)) for x from the base; log_prob by the change of variables,
log p(y) = log p_base(x) - sum log |dT/dx|."""
from . import constraints
from .distribution import Distribution
from .independent import sum_rightmost
from .transforms import Transform


class TransformedDistribution(Distribution):
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif not (isinstance(transforms, list) and all(isinstance(t, Transform) for t in transforms)):
            raise ValueError("transforms must be a Transform or a list of Transforms")
        self.base_dist = base_distribution
        self.transforms = transforms
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = max([len(base_distribution.event_shape)] + [t.event_dim for t in transforms])
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = tuple(batch_shape)
        base_shape = batch_shape + tuple(self.event_shape)
        base_event = len(self.base_dist.event_shape)
        new.base_dist = self.base_dist.expand(base_shape[:len(base_shape) - base_event])
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        return self.transforms[-1].codomain if self.transforms else self.base_dist.support

    def sample(self, sample_shape=()):
        x = self.base_dist.sample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            log_prob = log_prob - sum_rightmost(transform.log_abs_det_jacobian(x, y), event_dim - transform.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value
