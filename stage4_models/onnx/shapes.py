"""The one place the engine asks for a value's shape (chapter 13, "13_inference_compiler").

Today every shape is concrete: a tuple of Python ints, read when a plan is made for the
shapes of the inputs fed. Symbolic shapes (each dim an expression of the input's dim names)
will replace this function's body, and every operator that works with shapes reads them
through it.
"""


def shape_of(value):
    """The shape of a device Tensor or a HostTensor, as a tuple of ints."""
    return tuple(value.shape)
