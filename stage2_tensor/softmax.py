"""Softmax and log-softmax along a dimension, numerically stable (chapter on language models).

softmax(x)_i = e^(x_i - m) / sum_j e^(x_j - m) with m = max_j x_j: subtracting the max does
not change the result but keeps every exponent <= 0, so nothing overflows. Both are built
from differentiable tensor operations, so their gradients come from autograd; the max is
detached because the result does not depend on it.
"""


def log_softmax(x, dim=-1):
    shifted = x - x.max(dim=dim, keepdim=True).values.detach()
    return shifted - shifted.exp().sum(dim=dim, keepdim=True).log()


def softmax(x, dim=-1):
    shifted = x - x.max(dim=dim, keepdim=True).values.detach()
    e = shifted.exp()
    return e / e.sum(dim=dim, keepdim=True)
