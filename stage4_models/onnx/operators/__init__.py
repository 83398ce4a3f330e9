"""ONNX operators on tracegrad's ops (chapter 13, "13_inference_compiler": operators).

One function per ONNX operator, ``fn(ctx, node, inputs) -> list of outputs``: inputs are
device Tensors (stage2_tensor, on ``ctx.device``), HostTensors (shape arithmetic, computed
on the host while a plan is made: host.py) or None for an optional input left out. Each
reads its attributes as the node's opset defines them (older opsets kept attributes that
later became inputs: Pad's pads, Clip's bounds, Squeeze's axes...). The families live in
their own files: elementwise.py, conv.py, pooling.py, normalization.py, products.py,
layout.py (reshaping, concatenating), slicing.py (Slice, Gather, Pad), resize.py,
blocks.py (DepthToSpace), shape_ops.py (Shape, Cast, Constant...), compare.py (comparisons,
logic, Where), reduce.py (ReduceMean, ReduceSum...); inference_kernels.py holds the paths
to the device's inference kernels (conv_bands, max_pool_into, interpolate_into) that
conv.py, pooling.py and resize.py take.
"""
OPERATORS = {}


def register(*op_types):
    """Decorator: the function implements these ONNX operators."""
    def add(fn):
        for op_type in op_types:
            OPERATORS[op_type] = fn
        return fn
    return add


from . import (blocks, compare, conv, elementwise, layout, normalization, pooling, products,  # noqa: E402,F401
               reduce, resize, shape_ops, slicing)  # (imported for their registrations)
from .context import Context  # noqa: E402,F401
