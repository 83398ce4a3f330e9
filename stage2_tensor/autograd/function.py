"""``autograd.Function``: a differentiable operation written by the user, as in PyTorch.

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    y = Cube.apply(x)

``apply`` runs ``forward`` without recording (its operations are not the graph: the
Function is), then links the output to a node whose ``backward`` calls the user's. The
node is the ``ctx`` both receive: a GradientFunction, so saved tensors are checked against
in-place writes as every operation's are, and the pass (backward.py) treats it as any
other. ``backward`` returns one gradient per argument of forward (None for a non-tensor or
one needing none). One output takes gradients; more outputs are allowed where all but one
are marked non-differentiable (``ctx.mark_non_differentiable``) or are not floating-point,
since tracegrad's graph gives each function one output.
"""
import functools

from ..gradient_function import GradientFunction
from ..grad_mode import is_grad_enabled, no_grad
from ..tensor import Tensor


class FunctionCtx:
    """What ``ctx`` offers forward and backward beyond GradientFunction's saved tensors."""

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = self.non_differentiable + tuple(tensors)

    def mark_dirty(self, *tensors):
        """Accepted: forward wrote these inputs in place (tracegrad's in-place checks still apply)."""

    def set_materialize_grads(self, value):
        """Accepted: the gradients backward receives are always tensors here."""


class _Node(FunctionCtx, GradientFunction):
    """One call of a Function: its ctx, and its node in the graph."""
    non_differentiable = ()
    none_at = ()

    @property
    def name(self):
        return f"{self.function.__name__}Backward"

    def save_for_backward(self, *tensors):
        """As GradientFunction's, and None is allowed, as PyTorch's."""
        GradientFunction.save_for_backward(self, *(t for t in tensors if t is not None))
        self.none_at = tuple(i for i, t in enumerate(tensors) if t is None)

    @property
    def saved_tensors(self):
        saved = list(GradientFunction.saved_tensors.fget(self))   # checked against in-place writes
        for i in self.none_at:
            saved.insert(i, None)
        return tuple(saved)

    def backward(self, grad):
        grads = [grad if i == self.differentiable else zeros_like(out) for i, out in enumerate(self.outputs)]
        given = self.function.backward(self, *grads)
        given = given if isinstance(given, tuple) else (given,)
        if len(given) != len(self.arguments):
            raise RuntimeError(f"function {self.name} returned an incorrect number of gradients "
                               f"(expected {len(self.arguments)}, got {len(given)})")
        out = []
        for i, (arg, g) in enumerate(zip(self.arguments, given)):
            if not isinstance(arg, Tensor):
                continue
            if g is not None:
                g = _checked_gradient(self.name, i, arg, g)
            out.append(g)
        return out


class Function:
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call
    ``apply`` (the module docstring)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{cls.__name__}.apply takes its arguments by position, as PyTorch's")
        node = _Node()
        node.function, node.arguments = cls, args
        node.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            result = cls.forward(node, *args)
        outputs = result if isinstance(result, tuple) else (result,)
        inputs = tuple(a for a in args if isinstance(a, Tensor))
        # an input returned as it is: a new tensor of its storage, so that linking it leaves the input's own grad_fn
        outputs = tuple(o.detach() if any(o is a for a in inputs) else o for o in outputs)
        result = outputs if isinstance(result, tuple) else outputs[0]
        if not (is_grad_enabled() and any(node.needs_input_grad)):
            node._saved = ()
            return result
        differentiable = [i for i, o in enumerate(outputs) if isinstance(o, Tensor) and o.dtype.is_floating_point
                          and not any(o is n for n in node.non_differentiable)]
        if len(differentiable) > 1:
            raise NotImplementedError(f"{cls.__name__}: {len(differentiable)} differentiable outputs; tracegrad's "
                                      "graph gives a function one, so mark the others with "
                                      "ctx.mark_non_differentiable or return them from another Function")
        if differentiable:
            node.outputs, node.differentiable, node.inputs = outputs, differentiable[0], inputs
            out = outputs[differentiable[0]]
            out.requires_grad, out.grad_fn = True, node
        return result

    vjp = backward


def once_differentiable(backward):
    """A backward that is itself not differentiable: run without recording, as PyTorch's."""
    @functools.wraps(backward)
    def wrapped(ctx, *grads):
        with no_grad():
            return backward(ctx, *grads)
    return wrapped


def zeros_like(t):
    return t.detach().new_zeros(t.shape) if isinstance(t, Tensor) else None


def _checked_gradient(name, i, arg, g):
    if not isinstance(g, Tensor):
        raise TypeError(f"function {name} returned a gradient of type {type(g).__name__} at index {i}; "
                        "expected a Tensor or None")
    if g.shape != arg.shape:
        try:
            g = g.sum_to(arg.shape)
        except (RuntimeError, ValueError, IndexError):
            raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} - got {list(g.shape)} "
                               f"but expected shape compatible with {list(arg.shape)}") from None
    return g
