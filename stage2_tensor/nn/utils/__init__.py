"""PyTorch's ``torch.nn.utils``: gradient clipping here; parameters_to_vector and
vector_to_parameters (convert_parameters.py), weight_norm and spectral_norm (their
files), and the parametrize module.

Gradient clipping, PyTorch's ``torch.nn.utils.clip_grad_norm_`` (used when training the
GPT, thesis "Training a GPT-like model"): one unlucky batch can produce a gradient many
times larger than usual, and a step along it can undo much of what was learned. Clipping
rescales all gradients together, so their direction is kept and only the length is capped.
"""
import math

from ...grad_mode import no_grad
from ...tensor import Tensor


def clip_grad_norm_(parameters, max_norm):
    """Scale the gradients of ``parameters`` in place so that their total L2 norm (all of
    them as one long vector) is at most ``max_norm``; return the norm before clipping."""
    grads = [p.grad for p in parameters if p.grad is not None]
    if max_norm <= 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm}")
    if not grads:
        return 0.0
    with no_grad():
        squares = [(g * g).sum() for g in grads]
        total = squares[0]
        for s in squares[1:]:                   # summed as tensors: one read back, not one per grad
            total = total + s.to(device=total.device)
        norm = math.sqrt(total.item())
        if norm > max_norm:
            scale = max_norm / (norm + 1e-6)
            for g in grads:
                g.mul_(scale)
    return norm


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of ``parameters`` to [-clip_value, clip_value], in place."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    with no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.copy_(p.grad.clamp(-clip_value, clip_value))


from . import parametrize  # noqa: E402
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: E402
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402
from .weight_norm import remove_weight_norm, weight_norm  # noqa: E402

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parametrize", "parameters_to_vector", "vector_to_parameters",
           "spectral_norm", "remove_spectral_norm", "weight_norm", "remove_weight_norm"]
