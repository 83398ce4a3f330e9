"""PyTorch's ``torch.autograd``: the backward pass as functions (``grad``, ``backward``),
custom differentiable functions (``Function``, function.py), Jacobians and Hessians
(``functional``), and the older ``Variable``. The pass itself is ``backward.py``'s.

    dx, = autograd.grad(loss, [x])                     # the gradient, returned; .grad untouched
    g, = autograd.grad(y, x, create_graph=True)        # recorded: differentiable again
    d2, = autograd.grad(g.sum(), x)

Second derivatives (``create_graph=True``, ``functional.hessian``, ``hvp``, ``jvp``) run the
backward pass in grad mode, so each operation's gradient is recorded as it is computed. That
is exact where an operation's gradient is written with differentiable operations, as most of
stage2's are: the element-wise ops and their composites, the reductions, matmul, views,
where, softmax's python form, custom Functions whose backward is. An operation whose
gradient is a kernel of its own (the fused cross_entropy, softmax and layer_norm of the
native devices, convolution and pooling, the index kernels behind index_select, gather,
embedding) returns a gradient that is not differentiated further: its second-order terms are
missing. Check a second derivative that goes through one against finite differences.
"""
from ..grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from ..tensor import Tensor
from . import functional
from .differentiate import backward, grad
from .function import Function, FunctionCtx

__all__ = ["grad", "backward", "Function", "FunctionCtx", "Variable", "functional", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "set_detect_anomaly", "detect_anomaly"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj):          # every tensor is a Variable, as in PyTorch
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """PyTorch's older wrapper, now the tensor itself: ``Variable(t, requires_grad=True)`` is
    ``t`` with requires_grad set."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.requires_grad_(True) if requires_grad else data


class detect_anomaly:
    """PyTorch's anomaly detection (``with detect_anomaly():``, ``set_detect_anomaly(True)``):
    accepted and changes nothing; tracegrad's backward errors already name the operation."""

    def __init__(self, check_nan=True):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


set_detect_anomaly = detect_anomaly
