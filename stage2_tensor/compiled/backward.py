"""The backward of a compiled forward (``model = tg.compile(model)`` in training): captured
with the forward, replayed when autograd reaches it (PyTorch's AOTAutograd).

A compiled module's call returns tensors that require grad, and the backward pass comes
later, from the caller's loss. So the capture records it at once: for each output that
requires grad, ``autograd.grad`` of that output with respect to the parameters, with a
placeholder upstream gradient, recorded as its own segment of the plan. A replayed forward
then gives each such output a ``CompiledBackward`` node: when the caller's backward pass
reaches it with the real upstream gradient, the node runs its segment on the buffers the
forward made (the values it reads are fresh at each forward, as saved tensors are) and
hands autograd one gradient per parameter, which accumulates them into ``.grad`` as it
would any operation's. The backward is linear in the upstream gradients, so a loss made
of several outputs runs each one's segment and autograd adds the results.
"""
from ..autograd.differentiate import grad as gradients
from ..gradient_function import GradientFunction
from .capture import layout, output


class BackwardPlan:
    """Output ``index``'s backward: the segment, the value its upstream gradient goes in
    (contiguous, of the output's ``shape`` and ``dtype``), and per parameter (a position in
    the replay's tensors) the value and layout of its gradient, or None."""

    def __init__(self, index, segment, given, shape, dtype, grads):
        self.index, self.segment, self.given, self.grads = index, segment, given, grads
        self.shape, self.dtype = shape, dtype


def capture_backward(capture, tensors, outputs, params):
    """Record each differentiable output's backward into ``capture``'s trace (called after
    the forward was captured); the BackwardPlans."""
    trace, plans = capture.trace, []
    leaves = [tensors[i] for i in params]
    differentiable = [j for j, o in enumerate(outputs) if getattr(o, "requires_grad", False)]
    upstream = {j: outputs[j].detach().ones_like() for j in differentiable}

    def record():
        for j in differentiable:
            trace.mark()
            given = trace.given(upstream[j].storage.buffer)
            found = gradients(outputs[j], leaves, grad_outputs=upstream[j], retain_graph=True, allow_unused=True)
            grads = [None if g is None else (trace.value(g.storage.buffer), layout(g)) for g in found]
            plans.append(BackwardPlan(j, len(trace.bounds) - 1, given, outputs[j].shape, outputs[j].dtype, grads))
    capture.run(record, (), {})
    trace.saved()
    return plans


class CompiledBackward(GradientFunction):
    """One output's backward, for one replayed forward (its ``buffers``)."""

    def __init__(self, replay, plan, buffers, params):
        self.replay, self.plan, self.buffers = replay, plan, buffers
        self.inputs, self.needs_input_grad = params, (True,) * len(params)

    @property
    def name(self):
        return "CompiledBackward"

    def backward(self, grad):
        if self.buffers is None:
            raise RuntimeError("Trying to backward through the graph a second time: a compiled module's "
                               "forward keeps its buffers for one backward; call backward(retain_graph=True) "
                               "the first time if you need to backpropagate twice.")
        grad = grad.to(dtype=self.plan.dtype).contiguous()
        if grad.offset or grad.shape != self.plan.shape:
            grad = grad.clone()
        buffers = self.buffers
        buffers[self.plan.given] = grad.storage.buffer
        with self.replay.lock:
            self.replay.plan.run(buffers, self.replay._live, self.plan.segment)
        device, max_dims = self.replay.device, self.replay.max_dims
        return [None if g is None else output(buffers[g[0]], device, max_dims, g[1]) for g in self.plan.grads]

    def release(self):
        self.buffers = None
