"""The one place the engine asks for a value's shape (chapter 13, "13_inference_compiler").

Here every shape is concrete: a tuple of Python ints, read when a plan is made for the
shapes of the inputs fed. The symbolic shapes (each dim an expression of the input's dim
names) are inferred once at import, by ``inference/``, with the same formulas written on
expressions; evaluated at the fed sizes they are what this function returns (tested in
tests/test_stage4_onnx_shapes.py).
"""


def shape_of(value):
    """The shape of a device Tensor or a HostTensor, as a tuple of ints."""
    return tuple(value.shape)
