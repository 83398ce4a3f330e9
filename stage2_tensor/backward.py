"""The backward pass over tensor operations (chapter 4, "Tensor-level autograd").

1. From the root's grad_fn, find every function reachable through inputs that require
   grad, and count how many reachable functions consume each one's output.
2. Process functions whose output gradient is complete (pending count 0), starting from
   the root with the given gradient. Each hands back one gradient per input; a gradient
   whose shape differs from its input's was broadcast in the forward pass and is summed
   back (``sum_to``). Leaves accumulate into ``.grad``; other inputs add into their
   function's pending gradient, which is complete once every consumer has reported.

Inputs that do not require grad get None from ``backward`` (their branch is never
computed), and functions behind them are never visited.
"""
from . import grad_mode
from .tensor import Tensor


def backward(root, gradient=None, retain_graph=False):
    if not root.requires_grad:
        raise RuntimeError("backward(): this tensor does not require grad and has no grad_fn; "
                           "create its inputs with requires_grad=True")
    if gradient is None:
        if root.numel() != 1:
            raise RuntimeError(
                f"backward() on a tensor of shape {root.shape} needs an explicit gradient: "
                f"pass backward(gradient) with a tensor of shape {root.shape} (only a "
                "single-element tensor has the implicit gradient 1)")
        gradient = root.ones_like()
    elif not isinstance(gradient, Tensor) or gradient.shape != root.shape:
        shape = getattr(gradient, "shape", type(gradient).__name__)
        raise RuntimeError(f"backward(gradient): the gradient has shape {shape} but the "
                           f"tensor has shape {root.shape}; they must match")
    with grad_mode.no_grad():
        if root.grad_fn is None:
            _accumulate(root, gradient)
            return
        pending = _count_consumers(root.grad_fn)
        grads = {root.grad_fn: gradient}
        ready = [root.grad_fn]
        while ready:
            fn = ready.pop()
            grad = grads.pop(fn)
            if fn.retained is not None:
                _accumulate(fn.retained, grad)
            input_grads = fn.backward(grad)
            if not retain_graph:
                fn.release()
            for x, g in zip(fn.inputs, input_grads):
                if g is None or not x.requires_grad:
                    continue
                if g.shape != x.shape:
                    g = g.sum_to(x.shape)
                if x.grad_fn is None:
                    _accumulate(x, g)
                    continue
                f = x.grad_fn
                grads[f] = grads[f] + g if f in grads else g
                pending[f] -= 1
                if pending[f] == 0:
                    ready.append(f)


def _count_consumers(root_fn):
    pending = {}                          # also the functions seen: each is pushed once
    stack = [root_fn]
    while stack:
        fn = stack.pop()
        for x in fn.inputs:
            f = x.grad_fn
            if f is None or not x.requires_grad:
                continue
            if f in pending:
                pending[f] += 1
            else:
                pending[f] = 1
                stack.append(f)
    return pending


def _accumulate(t, g):
    if g.requires_grad:                   # backward runs under no_grad: only a given gradient
        g = g.detach()
    if g.dtype is not t.dtype:
        g = g.to(dtype=t.dtype)
    # g has t's shape (summed back above) and now its dtype: the slot behind the checked
    # ``grad`` property is written directly
    t._grad = g if t._grad is None else t._grad + g

