"""Specialization (chapter 13, "13_inference_compiler": passes): the dtype each tensor is
stored in, and the layouts it could take.

dtype: with ``dtype="float16"`` every float weight and activation is stored in half
precision; the arithmetic is float32 (tracegrad's float16 computes in float32 and rounds on
store), so what half precision loses is storage range and the 11-bit significand. Range is
the real danger: float16 ends at 65504, and a network whose activations grow past it (the
ONNX "light" models, with generated weights, reach 1e21) would write inf, then NaN. So the
dtype is decided per tensor, when a plan is made: a node whose float16 result overflows
(inputs finite, an output not) is computed again with float32 inputs and stores float32;
the nodes after it read float32 and keep it (mixed dtypes are promoted to float32, the one
that holds both). The decision is the plan's first run's, a calibration: a later input of
much larger values could still overflow a tensor stored in float16.

layout: every 4-d activation could be stored NCHW or NHWC (channels last); the candidates
are recorded here and the kernels (kernels.py) declare the layouts they read and write. The
kernels this engine has all work on NCHW, so the selection has no NHWC edge to take yet.
"""
from dataclasses import dataclass, field

import numpy as np
import stage2_tensor as tg

from ..operators.host import HostTensor

SPATIAL_OPS = ("Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool", "Resize", "Upsample")


@dataclass
class Specialization:
    dtype: str                                      # the storage dtype of floats
    layouts: dict = field(default_factory=dict)     # value name -> layout candidates

    def summary(self):
        lines = [f"floats stored in {self.dtype}, computed in float32"
                 + ("; a node whose float16 result overflows stores float32" if self.dtype == "float16" else "")]
        if self.layouts:
            lines.append(f"{len(self.layouts)} spatial activations with layout candidates NCHW, NHWC")
        return lines


def specialize(graph, dtype="float32"):
    """The storage dtype and, for each activation a spatial op reads, its layout candidates."""
    if dtype not in ("float16", "bfloat16", "float32", "float64"):
        raise ValueError(f"specialize: dtype must be float16, bfloat16, float32 or float64, got {dtype!r}")
    layouts = {}
    for node in graph.nodes:
        if node.op_type in SPATIAL_OPS and node.inputs and node.inputs[0] not in graph.constants:
            layouts[node.inputs[0]] = ("NCHW", "NHWC")
            layouts[node.outputs[0]] = ("NCHW", "NHWC")
    return Specialization(dtype, layouts)


def _floats(values):
    return [v for v in values if isinstance(v, tg.Tensor) and v.dtype.is_floating_point]


def overflowed(inputs, outputs):
    """True when every float input is finite and some float output is not."""
    def finite(t):
        return bool(np.isfinite(t.numpy()).all())
    return all(finite(t) for t in _floats(inputs)) and not all(finite(t) for t in _floats(outputs))


def widen(inputs, always=False):
    """The inputs with their float16 tensors as float32, when ``always`` or when the floats
    mix float16 and float32 (tracegrad's matmul and cat want one dtype)."""
    kinds = {t.dtype for t in _floats(inputs)}
    if not always and len(kinds) < 2:
        return inputs
    return [v.to(dtype=tg.float32) if isinstance(v, tg.Tensor) and v.dtype is tg.float16 else v
            for v in inputs]


def stored_dtype(value):
    """A plan's value's dtype name, for the report."""
    return value.dtype if isinstance(value, HostTensor) else value.dtype.name
