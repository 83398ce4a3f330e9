"""The inference compiler's passes (chapter 13, "13_inference_compiler": passes).

Each pass is a small module and a function; the session runs them in this order:

    fold.py           Graph -> Graph: nodes whose inputs are all constants computed once
    canonicalize.py   Graph -> Graph: fold BatchNormalization into the Conv before it, merge
                      consecutive Slices and Pads, drop Identity and inference-time Dropout
    dce.py            Graph -> Graph: drop the nodes and constants no output needs
    specialize.py     Graph -> annotation: the dtype each float tensor is stored in (float32 or
                      float16) and its layout candidates
    select.py         a plan's steps -> a schedule: kernels (kernels.py, each declaring the
                      pattern it implements) matched into a supergraph, its cheapest path by
                      bytes moved, or by a measured-cost table
    writes.py         a plan's steps and schedule -> which Concat inputs their producers
                      write into slices of its buffer, the others copied, and why
                      (select.relabel then names those Concats concat or concat_in_place)
    memory.py         a plan's steps and writes -> a memory plan: buffers reused by lifetime,
                      a Concat's producers writing into slices of its output

The first four need only the graph and run when the session is made (``optimize``); the
last three need every tensor's shape, so they run when a plan is made for the shapes fed,
and the plan's replay then runs what they chose (plan.py's compile).
stage3_native/lazy does the same on its lazy graph (canonicalize, dce, fusion by the patterns
kernels declare); its graph is of buffers and views, not ONNX nodes, so the ideas carry
over, not the code.
"""
from dataclasses import dataclass, field

from .canonicalize import canonicalize
from .dce import eliminate_dead_code
from .fold import fold_constants
from .specialize import specialize

GRAPH_PASSES = (("fold", fold_constants), ("canonicalize", canonicalize), ("dce", eliminate_dead_code))


@dataclass
class PassRecord:
    """What one pass did: the node count before and after, and a line per change."""
    name: str
    nodes_before: int
    nodes_after: int
    changes: list = field(default_factory=list)

    def as_dict(self):
        return {"pass": self.name, "nodes_before": self.nodes_before, "nodes_after": self.nodes_after,
                "changes": list(self.changes)}


def optimize(graph, dtype="float32", device="cpu"):
    """The graph passes in order: (graph, [PassRecord...], the specialization)."""
    records = []
    for name, run in GRAPH_PASSES:
        before = len(graph.nodes)
        graph, changes = run(graph, device) if run is fold_constants else run(graph)
        records.append(PassRecord(name, before, len(graph.nodes), changes))
    spec = specialize(graph, dtype)
    records.append(PassRecord("specialize", len(graph.nodes), len(graph.nodes), spec.summary()))
    return graph, records, spec


__all__ = ["PassRecord", "canonicalize", "eliminate_dead_code", "fold_constants", "optimize", "specialize"]
