"""PyTorch's ``torch.utils.checkpoint``: trade compute for memory. ``checkpoint(fn, *args)``
runs ``fn`` without recording its graph, so none of its intermediate tensors are kept, and
runs it again in the backward pass, recording this time, to backpropagate through it.

The random numbers fn draws (dropout) are drawn again from the same generator state, so
the recomputation gives the forward's values (``preserve_rng_state``). The recomputed
graph's leaves, the parameters fn uses, get their gradients as in any backward pass, and
the tensor arguments theirs through the checkpoint's node. ``use_reentrant`` either way
gives this one behaviour. fn returns one tensor, or a tuple of which one is floating-point
and the rest need no gradient, since tracegrad's graph gives an operation one output.
"""
from .. import backward as engine
from .. import factories
from ..grad_mode import enable_grad, is_grad_enabled, no_grad
from ..gradient_function import GradientFunction
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]


class Checkpoint(GradientFunction):
    def forward(self, function, preserve_rng_state, kwargs, *args):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng_state = factories.generator().getstate() if preserve_rng_state else None
        self.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            out = function(*args, **kwargs)
        self.returned_tuple = isinstance(out, tuple)
        outs = out if self.returned_tuple else (out,)
        self.differentiable = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.dtype.is_floating_point]
        if len(self.differentiable) != 1:
            raise NotImplementedError(f"checkpoint: the function returned {len(self.differentiable)} floating-point "
                                      "tensors; tracegrad checkpoints a function of one differentiable output")
        self.outs = outs
        return outs[self.differentiable[0]]

    def backward(self, grad):
        saved = iter(self.saved_tensors)                  # checked: not overwritten since the forward
        inputs = [next(saved).detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                  for a in self.args]
        generator = factories.generator()
        after = generator.getstate()
        if self.rng_state is not None:
            generator.setstate(self.rng_state)
        try:
            with enable_grad():
                out = self.function(*inputs, **self.kwargs)
        finally:
            generator.setstate(after)
        out = (out if isinstance(out, tuple) else (out,))[self.differentiable[0]]
        if out.requires_grad:
            engine.run([out], [grad])
        return [x.grad if x.requires_grad else None for x in inputs if isinstance(x, Tensor)]


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), its graph recomputed in the backward pass instead of kept."""
    if not callable(function):
        raise TypeError(f"checkpoint: expected a function, got {type(function).__name__}")
    if not is_grad_enabled() or not any(isinstance(a, Tensor) and a.requires_grad for a in args) and \
            not _has_parameters(function):
        return function(*args, **kwargs)
    node = Checkpoint()
    out = node.forward(function, preserve_rng_state, kwargs, *args)
    inputs = tuple(a for a in args if isinstance(a, Tensor))
    node.inputs, node.needs_input_grad = inputs, tuple(a.requires_grad for a in inputs)
    out.requires_grad, out.grad_fn = True, node
    outs = list(node.outs)
    outs[node.differentiable[0]] = out
    return tuple(outs) if node.returned_tuple else out


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):  # noqa: A002
    """A Sequential (or list of modules) run in ``segments`` checkpointed pieces; the last runs
    as usual, as PyTorch's."""
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = max(1, len(functions) // segments)
    end = 0
    for start in range(0, len(functions) - size, size):
        end = start + size
        piece = functions[start:end]
        input = checkpoint(lambda x, piece=piece: _run(piece, x), input, **kwargs)
    return _run(functions[end:], input)


def _run(functions, x):
    for f in functions:
        x = f(x)
    return x


def _has_parameters(function):
    """Whether function is a Module with parameters that require grad (or a function of one)."""
    target = getattr(function, "__self__", function)
    parameters = getattr(target, "parameters", None)
    return callable(parameters) and any(p.requires_grad for p in parameters())
