"""What every distribution shares: parameters broadcast to one shape, probabilities and
logits converted one into the other, clamped away from 0 and 1, and the draws, which come
from the package's generator (``manual_seed``) as rand/randn tensors on the parameters'
device, never one number at a time."""
from .. import dtypes
from ..broadcast import broadcast_shapes
from ..factories import rand, randn, tensor
from ..factories import uniform as uniform_draws
from ..softmax import log_softmax
from ..strides import Size
from ..tensor import Tensor


def as_tensor_like(value, like):
    """value as a tensor of like's dtype and device (a number becomes one)."""
    if isinstance(value, Tensor):
        return value
    return tensor(value, dtype=like.dtype, device=like.device)


def broadcast_all(*values):
    """The values (tensors or numbers) as tensors of one broadcast shape; numbers take the
    first tensor's dtype and device (float32 when none is a tensor), as PyTorch's."""
    for v in values:
        if not isinstance(v, (Tensor, int, float)) or isinstance(v, bool):
            raise ValueError(f"Input arguments must all be instances of numbers.Number or torch.tensor, "
                             f"got {type(v).__name__}")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    if like is None:
        like = tensor(0.0, dtype=dtypes.float32)
    values = [as_tensor_like(v, like) for v in values]
    shape = broadcast_shapes(*[v.shape for v in values])
    return tuple(v if tuple(v.shape) == tuple(shape) else v.expand(*shape) for v in values)


def size(shape):
    """A shape (tuple, list, Size, int) as a Size."""
    if isinstance(shape, int):
        return Size((shape,))
    return Size(tuple(shape))


def uniform(shape, like, low=0.0, high=1.0, generator=None):
    """Uniform numbers in [low, high) of like's dtype and device, from ``generator`` (a
    Generator) when given, else the package's generator."""
    u = rand(tuple(shape), dtype=like.dtype, device=like.device) if generator is None else \
        uniform_draws(tuple(shape), dtype=like.dtype, device=like.device, generator=generator)
    return u if (low, high) == (0.0, 1.0) else u * (high - low) + low


def standard_normal(shape, like):
    return randn(tuple(shape), dtype=like.dtype, device=like.device)


def finfo(t):
    return dtypes.finfo(t.dtype)


def clamp_probs(probs):
    """probs kept in [eps, 1 - eps], so that their logs stay finite."""
    eps = finfo(probs).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def probs_to_logits(probs, is_binary=False):
    ps = clamp_probs(probs)
    return ps.log() - (-ps).log1p() if is_binary else ps.log()


def normalized_logits(logits):
    """logits minus their logsumexp along the last dimension: log-probabilities."""
    return log_softmax(logits, -1)


def both(a, b):
    """Element-wise and of two bool tensors."""
    return a * b


def either(a, b):
    """Element-wise or of two bool tensors."""
    return (a.to(dtype=dtypes.int64) + b.to(dtype=dtypes.int64)) > 0


def all_true(mask):
    return bool(mask.all().item())


class lazy_property:
    """A property computed on first use and then stored on the instance (PyTorch's
    lazy_property): a Categorical made from logits computes its probs only when asked."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
