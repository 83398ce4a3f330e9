"""``torch.distributions.transforms``: invertible maps y = T(x) with log |dy/dx|, which a
TransformedDistribution pushes a base distribution through. Each map here is element-wise
(event_dim 0, unless AffineTransform is told otherwise)."""
import math

from ..nn.functional import softplus
from . import constraints
from .utils import finfo

__all__ = ["AffineTransform", "ExpTransform", "SigmoidTransform", "TanhTransform", "Transform"]


class Transform:
    """y = self(x), x = self.inv(y), log_abs_det_jacobian(x, y) = log |dy/dx|."""
    bijective = True
    domain = constraints.real
    codomain = constraints.real
    sign = 1

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._inv = None

    @property
    def event_dim(self):
        return self.domain.event_dim

    @property
    def inv(self):
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    def __call__(self, x):
        return self._call(x)

    def _inv_call(self, y):
        return self._inverse(y)

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform):
        super().__init__()
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def __call__(self, x):
        return self._inv._inv_call(x)

    def _inv_call(self, y):
        return self._inv(y)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def __repr__(self):
        return f"_InverseTransform({self._inv!r})"


class ExpTransform(Transform):
    codomain = constraints.positive

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class AffineTransform(Transform):
    """y = loc + scale * x; event_dim rightmost dimensions form one event."""

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real,
                                                                                      self._event_dim)

    @property
    def codomain(self):
        return self.domain

    @property
    def sign(self):
        if isinstance(self.scale, (int, float)):
            return 1 if self.scale > 0 else -1 if self.scale < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        scale = self.scale
        if isinstance(scale, (int, float)):
            result = x * 0 + math.log(abs(scale))
        else:
            result = scale.abs().log()
            if tuple(result.shape) != tuple(x.shape):
                result = result + x * 0
        if self._event_dim:
            result = result.reshape(*result.shape[:result.dim() - self._event_dim], -1).sum(-1)
        return result


class SigmoidTransform(Transform):
    codomain = constraints.unit_interval

    def _call(self, x):
        eps = finfo(x)
        return x.sigmoid().clamp(min=eps.tiny, max=1 - eps.eps)

    def _inverse(self, y):
        eps = finfo(y)
        y = y.clamp(min=eps.tiny, max=1 - eps.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return 0.5 * (y.log1p() - (-y).log1p())

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2), computed without cancellation for large |x|
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))

