"""Softmax and log-softmax along a dimension, numerically stable (chapter on language models).

softmax(x)_i = e^(x_i - m) / sum_j e^(x_j - m) with m = max_j x_j: subtracting the max does
not change the result but keeps every exponent <= 0, so nothing overflows. The forward pass
is one fused kernel of the device (``softmax`` in backend.py), and so is the backward
pass (``softmax_backward``), from the saved output y and the upstream gradient g:

    softmax:      dx = y * (g - sum_j g_j y_j)        (the Jacobian diag(y) - y y^T times g)
    log-softmax:  dx = g - e^y * sum_j g_j            (e^y is the softmax)

In tensor operations each is four kernel launches (a product, a sum, a difference, a
product), each with an intermediate tensor; fused, one pass over each row.
"""
from . import dtypes
from .gradient_function import GradientFunction
from .strides import normalize_dim


class Softmax(GradientFunction):
    def forward(self, x, dim, log):
        self.dim, self.log = dim, log
        dtype = x.dtype if x.dtype.is_floating_point else dtypes.float32
        out = x.launch("softmax", x.as_view(), dim, log, dtype, shape=x.shape, dtype=dtype)
        self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved_tensors
        return (out.launch("softmax_backward", grad.as_view(), out.as_view(), self.dim, self.log,
                           out.dtype, shape=out.shape, dtype=out.dtype),)


def _apply(x, dim, log):
    if x.ndim == 0:                                  # a scalar: one row of one element
        return Softmax.apply(x.reshape(1), 0, log).reshape(())
    return Softmax.apply(x, normalize_dim(dim, x.ndim), log)


def log_softmax(x, dim=-1):
    return _apply(x, dim, True)


def softmax(x, dim=-1):
    return _apply(x, dim, False)
