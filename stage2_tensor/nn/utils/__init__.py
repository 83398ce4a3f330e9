"""PyTorch's ``torch.nn.utils``: gradient clipping here; parameters_to_vector and
vector_to_parameters (convert_parameters.py), weight_norm and spectral_norm (their
files), the parametrize module, and the rnn module (padded and packed sequences).

Gradient clipping, PyTorch's ``torch.nn.utils.clip_grad_norm_`` (used when training the
GPT, thesis "Training a GPT-like model"): one unlucky batch can produce a gradient many
times larger than usual, and a step along it can undo much of what was learned. Clipping
rescales all gradients together, so their direction is kept and only the length is capped.
"""
import functools
import types
import warnings

from ... import linalg
from ...concat import stack
from ...dtypes import promote
from ...factories import tensor
from ...grad_mode import no_grad
from ...tensor import Tensor


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients of ``parameters`` (a tensor or an iterable of them) in place by
    min(max_norm / (total_norm + 1e-6), 1), where total_norm is the ``norm_type``-norm of
    all of them read as one vector (the norm of their norms; ``inf``: the largest |g|).
    Return total_norm, before clipping, as a 0-d tensor on the first gradient's device,
    of their dtypes' promotion.

    No value is read back into Python, so a training step need not wait for its device:
    the scale is a tensor and every gradient is multiplied by it, 1 where nothing is
    clipped, as PyTorch does. ``error_if_nonfinite=True`` is the exception: raising a
    RuntimeError for a nan or infinite norm reads the norm. ``foreach`` is PyTorch's
    choice of kernels and gives the same values; it is accepted and not needed."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)       # a generator is read once, for the norm and the scaling
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type, max_norm = float(norm_type), float(max_norm)
    if not grads:
        return tensor(0.0)
    with no_grad():
        device, dtype = grads[0].device, functools.reduce(promote, (g.dtype for g in grads))
        norms = [linalg.vector_norm(g, norm_type).to(device=device, dtype=dtype) for g in grads]
        total_norm = linalg.vector_norm(stack(norms), norm_type)
        if error_if_nonfinite and (total_norm.isnan() | total_norm.isinf()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is "
                               "non-finite, so it cannot be clipped. To disable this error and scale the "
                               "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
        # multiplied even when the scale is 1: a test of it would read the norm back
        scale = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(scale.to(g.device))
    return total_norm


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of ``parameters`` (a tensor or an iterable of them) to
    [-clip_value, clip_value], in place; a negative clip_value sets them all to it, as
    clamp does when min > max. ``foreach`` is accepted as in clip_grad_norm_."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    with no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)


from . import parametrize, rnn  # noqa: E402
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: E402
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402
from .weight_norm import remove_weight_norm, weight_norm  # noqa: E402

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parametrize", "rnn", "parameters_to_vector", "vector_to_parameters",
           "spectral_norm", "remove_spectral_norm", "weight_norm", "remove_weight_norm"]
