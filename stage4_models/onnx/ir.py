"""The engine's own graph of an ONNX model (chapter 13, "13_inference_compiler": the IR).

Three small types: a ``Value`` is a named tensor with a shape (ints, or dim names as strings
where the model leaves a dimension free) and a dtype (numpy's name: "float32", "int64"); a
``Node`` is one operation, reading values and writing values by name; a ``Graph`` holds its
inputs, outputs, constants (the initializers, as numpy arrays) and its nodes in topological
order, every value produced before it is read. The order is an invariant the importer
checks, so a pass (a function Graph -> Graph: folding, fusing, dead-code elimination) can
walk ``nodes`` once, front to back, and know every input is already known.
"""
from dataclasses import dataclass, field


@dataclass
class Value:
    """A tensor the graph names: inputs and outputs carry their declared shape and dtype."""
    name: str
    shape: tuple | None = None      # ints and dim names (str); None when the model does not say
    dtype: str | None = None        # numpy's dtype name
    sym_shape: tuple | None = None  # symbolic expressions of the input dims (inference/), set at import


@dataclass
class Node:
    """One operation: ``op_type`` in ``domain`` at ``opset`` (the version the model imports
    for that domain, which decides the operator's semantics: attributes became inputs,
    defaults changed). An empty input name is an optional input left out."""
    op_type: str
    inputs: list
    outputs: list
    attributes: dict = field(default_factory=dict)
    name: str = ""
    domain: str = ""
    opset: int = 1

    def attr(self, key, default=None):
        return self.attributes.get(key, default)

    def describe(self):
        """How errors name a node: its type, opset and name."""
        label = f" {self.name!r}" if self.name else ""
        return f"{self.op_type} (opset {self.opset}) node{label}"


@dataclass
class Graph:
    inputs: list                    # Values the caller feeds
    outputs: list                   # Values run() returns
    nodes: list                     # Nodes, topologically ordered
    constants: dict = field(default_factory=dict)   # name -> numpy array (initializers, Constant)
    opsets: dict = field(default_factory=dict)      # domain ("" for ONNX) -> version
    symbolic: object = None     # inference.Inference: every value's symbolic shape (set at import)

    def consumers(self):
        """name -> the nodes that read it (what a fusing pass asks)."""
        readers = {}
        for node in self.nodes:
            for name in node.inputs:
                if name:
                    readers.setdefault(name, []).append(node)
        return readers

    def __str__(self):
        lines = [f"graph({', '.join(v.name for v in self.inputs)}) -> {', '.join(v.name for v in self.outputs)}"]
        lines += [f"  {', '.join(n.outputs)} = {n.op_type}({', '.join(n.inputs)})" for n in self.nodes]
        return "\n".join(lines)
