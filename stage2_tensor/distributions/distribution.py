"""``Distribution``, the base of every distribution: its batch and event shapes, argument
and value validation (on by default, PyTorch's messages), and what follows from a few
methods (sample from rsample, stddev from variance, perplexity from entropy)."""
from ..grad_mode import no_grad
from ..strides import Size
from ..tensor import Tensor
from . import constraints
from .utils import all_true, lazy_property, size


class Distribution:
    """batch_shape: independent, not identically distributed draws; event_shape: the shape
    of one draw. Subclasses set arg_constraints and support, and define what they can."""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument validation on or off for distributions made from now on."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = size(batch_shape)
        self._event_shape = size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue        # not made yet: made from a checked argument
                value = getattr(self, param)
                if not all_true(constraint.check(value)):
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                                     f"constraint {constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """Draws of shape sample_shape + batch_shape + event_shape, outside the graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """Draws through which gradients reach the parameters (the reparameterization)."""
        raise NotImplementedError

    def sample_n(self, n):
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()):
        return Size(tuple(size(sample_shape)) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        """Refuse a value whose shape cannot be scored, or that lies outside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: {Size(value.shape)} vs "
                             f"{self._event_shape}.")
        actual, expected = Size(value.shape), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual} vs "
                                 f"{expected}.")
        support = self.support
        if not all_true(support.check(value)):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                             f"to be within the support ({support!r}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                         for p in names)
        return f"{type(self).__name__}({args})"


def expanded(dist, cls, batch_shape, names, _instance=None):
    """A copy of dist whose parameters ``names`` are expanded to batch_shape (views, not
    copies), as PyTorch's expand: not validated again."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = size(batch_shape)
    for name in names:
        if name in dist.__dict__:
            value = dist.__dict__[name]
            extra = tuple(value.shape[value.dim() - (value.dim() - len(dist.batch_shape)):]) \
                if value.dim() > len(dist.batch_shape) else ()
            setattr(new, name, value.expand(*(tuple(batch_shape) + extra)))
    Distribution.__init__(new, batch_shape, dist.event_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new
