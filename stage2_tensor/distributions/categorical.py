"""``Categorical(probs=None, logits=None)``: an index in 0..K-1 drawn with the weights of the
last dimension of probs (normalized to sum to 1) or logits (log-weights). Draws come from
tracegrad's multinomial kernel, all rows at once."""
import math

from .. import dtypes
from ..broadcast import broadcast_shapes
from ..factories import arange, multinomial
from ..strides import numel
from ..tensor import Tensor
from . import constraints
from .bernoulli import _probs_or_logits
from .distribution import Distribution, expanded
from .utils import lazy_property, logits_to_probs, normalized_logits, probs_to_logits, size


class Categorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _probs_or_logits(probs, logits)
        param = probs if probs is not None else logits
        name = "probs" if probs is not None else "logits"
        if not isinstance(param, Tensor):
            raise TypeError(f"{name} must be a Tensor, got {type(param).__name__}")
        if param.dim() < 1:
            raise ValueError("`probs` parameter must be at least one-dimensional." if probs is not None
                             else "`logits` parameter must be at least one-dimensional.")
        if probs is not None:
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            self.logits = normalized_logits(logits)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expanded(self, Categorical, batch_shape, ("probs", "logits"), _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return self.probs.sum(-1) * math.nan

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return self.probs.sum(-1) * math.nan

    def sample(self, sample_shape=()):
        sample_shape = size(sample_shape)
        rows = self.probs.detach().reshape(-1, self._num_events)
        draws = multinomial(rows, max(numel(sample_shape), 1), True).transpose(0, 1)
        return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.to(dtype=dtypes.int64).unsqueeze(-1)
        shape = tuple(value.shape[:-1])
        batch = tuple(self.logits.shape[:-1])
        common = tuple(broadcast_shapes(shape, batch))
        logits = self.logits.expand(*common, self._num_events)
        return logits.gather(-1, value.expand(*common, 1)).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=dtypes.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = arange(self._num_events, dtype=dtypes.int64, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand(self._num_events, *self.batch_shape) if expand else values

