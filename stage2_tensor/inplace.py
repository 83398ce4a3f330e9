"""The ``inplace=True`` of PyTorch's activations and dropouts (``F.relu(x, inplace=True)``,
``nn.ReLU(inplace=True)``, ``nn.Dropout(p, inplace=True)``): the function's result
written into its input, which is returned.

As for ``x += y`` (methods.py), a tensor in the autograd graph is not written: other
operations may have recorded it as their input, and tracegrad's graph points at tensors,
so rewriting one would change what their gradients read. The result is then a new tensor
with the same values and gradient; the usual ``x = F.relu(x, inplace=True)`` and
``x = self.relu(x)`` read it. A leaf that requires grad is an error, as in PyTorch. Outside
the graph the write is a true in-place one: it bumps the storage's version, so an
operation that saved the tensor for its gradient refuses to run backward on it (as after
any in-place operation, gradient_function.py).
"""
from . import grad_mode


def into(x, out, op):
    """``out`` (op's result on x) written into x, x returned; ``out`` itself when x is in
    the autograd graph."""
    if out is x:                                      # the identity (dropout in eval mode)
        return x
    if grad_mode.is_grad_enabled() and x.requires_grad:
        if x.is_leaf:
            raise RuntimeError(f"{op}: a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        return out
    return x._write(op, out)
