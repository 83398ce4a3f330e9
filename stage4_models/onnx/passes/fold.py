"""Constant folding (chapter 13, "13_inference_compiler": passes), before canonicalization.

A node whose inputs are all constants computes the same value on every run: it is computed
once here, by its own operator on the session's device, and becomes a constant. Exporters leave
such nodes (the ONNX "light" models generate every weight with ConstantOfShape; a Constant
node is one), and the rewrites after need the values: a BatchNormalization folds into a
Conv only when the Conv's weight is a known array. A node that fails to compute is left
as it is, for the plan to report where it runs.
"""
import numpy as np

from ..operators import OPERATORS, Context
from ..operators.host import HostTensor, to_numpy
from .edit import copy_graph, protected


def fold_constants(graph, device="cpu"):
    """(graph with its all-constant nodes computed, [a line per folded node])."""
    graph = copy_graph(graph)
    ctx = Context(device)
    keep = protected(graph)
    kept, folded = [], 0
    for node in graph.nodes:
        names = [n for n in node.inputs if n]
        if any(n not in graph.constants for n in names) or any(n in keep for n in node.outputs):
            kept.append(node)
            continue
        arrays = _compute(ctx, node, [graph.constants[n] if n else None for n in node.inputs])
        if arrays is None:
            kept.append(node)
            continue
        graph.constants.update((n, a) for n, a in zip(node.outputs, arrays) if n)
        folded += 1
    graph.nodes = kept
    return graph, [f"computed {folded} node(s) whose inputs are all constants"] if folded else []


def _compute(ctx, node, arrays):
    """The node's outputs as numpy arrays, or None when it cannot be folded."""
    try:
        inputs = [None if a is None else ctx.constant(a) for a in arrays]
        while inputs and inputs[-1] is None:
            inputs.pop()
        outputs = OPERATORS[node.op_type](ctx, node, inputs)
    except (ValueError, TypeError, RuntimeError, IndexError, KeyError, NotImplementedError, MemoryError):
        return None
    if len(outputs) < len([n for n in node.outputs if n]):
        return None
    result = []
    for value in outputs:
        array = to_numpy(value) if isinstance(value, HostTensor) else value.numpy()
        if array.dtype.name == "float16":
            return None                 # constants are stored float32 (Context.constant)
        result.append(np.array(array, order="C"))      # (ascontiguousarray would make a scalar 1-d)
    return result
