"""GradientFunction: one differentiable tensor operation (chapter 4, "Tensor-level autograd").

Its ``forward`` computes the output from its inputs (tensors and plain arguments) and saves
what the gradient will need; its ``backward`` receives the upstream gradient dL/dout and
returns one gradient per tensor input, the tensor form of upstream x local. ``apply`` runs
forward and, when grad mode is on and an input requires grad, links the output to this
function: that link (``out.grad_fn``) and the function's ``inputs`` are the graph.

Saved tensors carry the version of their storage at save time; if an in-place operation
changes it before backward, reading them raises instead of giving a silently wrong gradient.
"""
from .grad_mode import thread_state
from .tensor import Tensor


class GradientFunction:
    # Defaults as class attributes (no __init__ to run): one of these is made per operation.
    inputs = ()                       # the tensor inputs, in order
    needs_input_grad = ()             # which of them lead to a tensor that requires grad
    _saved = ()
    _freed = False
    retained = None                   # set by Tensor.retain_grad on this function's output
    hooks = ()                        # Tensor.register_hook's on this function's output (backward.py)

    @property
    def name(self):
        return type(self).__name__

    def forward(self, *args):
        raise NotImplementedError

    def backward(self, grad):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        inputs = ()                          # the tensor arguments, for link
        for a in args:
            if isinstance(a, Tensor):        # one device per operation: a kernel reads only its own buffers
                if inputs and a.storage.device != inputs[0].storage.device:
                    raise two_devices(cls.__name__, inputs[0], a)
                inputs += (a,)
        fn = cls()
        return fn.link(fn.forward(*args, **kwargs), inputs)

    def link(self, out, inputs):
        """Make this function ``out``'s grad_fn when grad mode is on and one of ``inputs``
        (the operation's tensor inputs, in order) requires grad; return ``out``. ``apply``
        ends here. An operation run for every small step whose tensor inputs need no search
        (one tensor, or two checked already) calls ``fn = cls(); fn.link(fn.forward(...),
        inputs)`` itself: apply's walk over the arguments and its call with ``*args``
        are then saved."""
        if thread_state.enabled:             # this thread's grad mode (grad_mode.py)
            if len(inputs) == 2:             # most operations have one or two tensor inputs:
                needs = (inputs[0].requires_grad, inputs[1].requires_grad)   # no loop for them
            elif len(inputs) == 1:
                needs = (inputs[0].requires_grad,)
            else:
                needs = tuple([t.requires_grad for t in inputs])
            if True in needs:
                self.inputs, self.needs_input_grad = inputs, needs
                out.requires_grad, out.grad_fn = True, self
                return out
        self._saved = ()                     # nothing will read them: let them go now
        return out

    def save_for_backward(self, *tensors):
        saved = ()
        for t in tensors:                    # a plain loop, as in link
            saved += ((t, t.storage.version),)
        self._saved = saved

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(
                f"Trying to backward through the graph a second time: {self.name}'s saved "
                "tensors were freed after the first backward. Call backward(retain_graph=True) "
                "the first time if you need to backpropagate twice.")
        for t, version in self._saved:
            if t.storage.version != version:
                raise RuntimeError(
                    f"a tensor of shape {t.shape} that {self.name} saved for its gradient was "
                    f"modified in place afterwards (version {version} when saved, "
                    f"{t.storage.version} now); use an out-of-place operation instead")
        return tuple([t for t, _ in self._saved])

    def release(self):
        """Free the saved tensors after backward (unless the graph is retained)."""
        self._saved = ()
        self._freed = True

    def __repr__(self):
        return f"<{self.name}>"


def two_devices(name, a, b):
    """The error for an operation ``name`` given tensors on two devices."""
    return RuntimeError(f"{name}: expected all tensors on one device, got {a.storage.device!r} "
                        f"and {b.storage.device!r}; move one with .to(device)")
