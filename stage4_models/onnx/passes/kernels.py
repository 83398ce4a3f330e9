"""The kernels the selection may pick, each declaring the pattern it implements (chapter 13,
"13_inference_compiler": implementation selection).

A pattern is a chain of nodes, one entry per node: the op types it accepts ("*": any).
Node j of a chain reads node j-1's first output as its own first input, and nothing else
reads that output: it never has to reach memory. A kernel may also say which devices have
it, a ``fits`` test on the matched nodes (a fused GEMM epilogue wants one plain matmul),
and how many bytes it moves (default: the inputs it reads from outside the chain, plus the
outputs of its last node). The selection (select.py) knows no pattern itself: adding a
kernel here adds its edges to the supergraph, as stage3_native/lazy/kernels.py's kinds do
for the lazy device's fusion.
"""
import math
from dataclasses import dataclass

POOLS = ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool")
# ops whose output is a view of their input's buffer (tracegrad's reshape of a contiguous
# tensor): no kernel, no memory of their own (memory.py)
ALIAS_OPS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout")


@dataclass(frozen=True)
class Kernel:
    name: str
    pattern: tuple                  # per node: a tuple of op types, or "*"
    devices: tuple = ()             # () on every device
    fits: object = None             # (nodes, where) -> bool
    moves: object = None            # (nodes, where) -> bytes; default: inputs read + outputs written
    layouts: tuple = ("NCHW",)      # the layouts it reads and writes (specialize.py)
    doc: str = ""

    def label(self, nodes):
        return nodes[0].op_type.lower() if self.pattern == ("*",) else self.name


def bytes_moved(nodes, where):
    """The inputs the chain reads from outside it, plus what its last node writes."""
    inside = {name for n in nodes[:-1] for name in n.outputs}
    read = {name for n in nodes for name in n.inputs if name and name not in inside}
    return sum(where.nbytes(name) for name in read) + sum(where.nbytes(name) for name in nodes[-1].outputs)


def _one_gemm(nodes, where):
    """The lazy device's epilogue fuses bias and ReLU into the GEMM when the convolution is
    one plain 2-D matmul: batch 1, one group (stage2_tensor/convolution.py's conv)."""
    conv = nodes[0]
    shape = where.shape(conv.inputs[0])
    return shape is not None and shape[0] == 1 and conv.attr("group", 1) == 1


def _concat_in_place(nodes, where):
    """Each input can be written by its producer straight into its slice of the output: it
    is a device tensor a step computes (not a view, not the caller's), no graph output, and
    its slice is one contiguous block (every dim before the axis has extent 1: batch 1,
    channel concat), so its other readers read it there as they would anywhere."""
    node = nodes[0]
    shape = where.shape(node.outputs[0])
    if shape is None or len(set(node.inputs)) != len(node.inputs):
        return False
    axis = node.attr("axis", 1 if node.opset < 4 else None)
    if not isinstance(axis, int) or not -len(shape) <= axis < len(shape):
        return False
    axis %= len(shape)
    return math.prod(shape[:axis]) == 1 and all(
        name in where.info and name in where.producer and name not in where.outputs
        and where.producer[name].op_type not in ALIAS_OPS for name in node.inputs)


# conv_bands pays where its bands are wide: below this many output positions per image, or
# for a 1x1 convolution (whose input is its columns: the GEMM alone), the whole-column
# product and a separate ReLU are faster (measured on ResNet-50, against every Conv+Relu
# fused: benchmarks/RESULTS.md, ONNX inference). A Conv+Relu feeding a Concat is fused
# whatever its size: it then writes into the Concat's buffer (writes.py).
FUSE_MIN_POSITIONS = 1024


def _conv_bands_pays(nodes, where):
    """A convolution of a device tensor whose output planes are large, or that feeds a
    Concat (conv_bands computes float32 and float64; a plan storing float16 runs the two
    nodes: plan.py's compile)."""
    conv, last = nodes[0], nodes[-1]
    x, y = where.shape(conv.inputs[0]), where.shape(last.outputs[0])
    if x is None or y is None:
        return False
    if any(n.op_type == "Concat" for n in where.readers.get(last.outputs[0], [])):
        return True
    w = where.shape(conv.inputs[1]) if len(conv.inputs) > 1 else None
    one_by_one = w is not None and all(k == 1 for k in w[2:]) and tuple(x[2:]) == tuple(y[2:])
    return not one_by_one and math.prod(y[2:]) >= FUSE_MIN_POSITIONS


KERNELS = [
    Kernel("conv_bias_relu", (("Conv",), ("Relu",)), devices=("cpu:lazy",), fits=_one_gemm,
           doc="im2col GEMM with bias and ReLU in its epilogue (stage3_native/lazy/epilogue.py)"),
    Kernel("conv_bias_relu", (("Conv",), ("Relu",)), devices=("cpu",), fits=_conv_bands_pays,
           doc="conv_bands: im2col and GEMM a band of rows at a time, bias and ReLU as it stores "
               "(csrc/convolution_t.h), into a Concat's slice where passes/writes.py says"),
    Kernel("conv", (("Conv",),), doc="im2col and one GEMM, bias added after"),
    Kernel("pool", (POOLS,), doc="windowed max or mean"),
    Kernel("concat_in_place", (("Concat",),), fits=_concat_in_place, moves=lambda nodes, where: 0,
           doc="the producers write into slices of one buffer: the concat moves nothing"),
    Kernel("concat", (("Concat",),), doc="copies every input into the output"),
    Kernel("op", ("*",), doc="the operator's own implementation (operators/), for a step no "
                             "single-node kernel above covers: last"),
]
