"""A factorization's outputs as one differentiable operation: ``factored(compute, gradient,
*inputs)`` runs ``compute`` on the inputs cut from the graph (an iteration or an
elimination, whose steps autograd need not record), and differentiates its outputs by
``gradient(inputs, outputs, output_grads)``, PyTorch's formula for the factorization,
instead of through those steps.

A GradientFunction has one output; a factorization has several (Q and R, U, S and Vh). They
travel as one flat tensor, every output's elements in turn, and come back as views of it,
so a gradient reaching any of them reaches this function; an output the loss does not use
gets zeros, which each formula reads as no contribution.
"""
from ..concat import cat
from ..gradient_function import GradientFunction, two_devices
from ..grad_mode import no_grad


class Factored(GradientFunction):
    def forward(self, compute, gradient, *inputs):
        with no_grad():
            outputs = compute(*[x.detach() for x in inputs])
        self.gradient, self.count = gradient, len(inputs)
        self.shapes = [o.shape for o in outputs]
        self.save_for_backward(*inputs, *outputs)
        if len(outputs) == 1:
            return outputs[0]
        return cat([o.reshape(-1) for o in outputs])

    def backward(self, g):
        saved = self.saved_tensors
        inputs, outputs = saved[:self.count], saved[self.count:]
        return self.gradient(inputs, outputs, _pieces(g, self.shapes))


def _pieces(flat, shapes):
    if len(shapes) == 1:
        return [flat]
    out, start = [], 0
    for shape in shapes:
        n = 1
        for s in shape:
            n *= s
        out.append(flat[start:start + n].reshape(*shape))
        start += n
    return out


def factored(compute, gradient, *inputs):
    """The outputs of ``compute(*inputs)`` (a tuple), differentiated by ``gradient``."""
    for x in inputs[1:]:
        if x.storage.device != inputs[0].storage.device:
            raise two_devices("linalg", inputs[0], x)
    fn = Factored()
    packed = fn.link(fn.forward(compute, gradient, *inputs), inputs)
    return tuple(_pieces(packed, fn.shapes))
