"""Gradient clipping, PyTorch's ``torch.nn.utils.clip_grad_norm_`` (used when training the
GPT, thesis "Training a GPT-like model"): one unlucky batch can produce a gradient many
times larger than usual, and a step along it can undo much of what was learned. Clipping
rescales all gradients together, so their direction is kept and only the length is capped.
"""
import math

from ..grad_mode import no_grad


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
