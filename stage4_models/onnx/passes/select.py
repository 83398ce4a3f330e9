"""Implementation selection (chapter 13, "13_inference_compiler": the supergraph).

The plan's steps, in topological order, are cut points 0..n: between step i and i+1. Every
kernel (kernels.py) that matches the chain of steps i..j-1 adds an edge i -> j to the
supergraph, weighed by the bytes it moves (its cost: read + written; the seed's heuristic,
memory traffic being what an inference step mostly pays for) or, where a measured-cost
table gives its kernel a factor, by bytes x factor. Every step has an edge of its own (a
kernel for its op, or else the "op" fallback: the operator as operators/ runs it), so a path
exists; its cheapest path, found by dynamic programming over the
cut points (every edge goes forward: Dijkstra on a DAG needs no heap), is the schedule.

A fused kernel's edge spans several steps and skips writing and reading the values between
them: conv+bias+relu on the lazy device costs the convolution's output once, not three
times. A Concat whose producers wrote into its buffer costs nothing.
"""
import math
from dataclasses import dataclass, field

from .kernels import KERNELS, bytes_moved


class Where:
    """What a kernel's test may ask about the plan's values: shapes, bytes, who reads them."""

    def __init__(self, steps, info, outputs):
        self.info = info                        # name -> (shape, itemsize) of device tensors
        self.outputs = set(outputs)
        self.producer = {name: n for n in steps for name in n.outputs if name}
        self.produced = set(self.producer)
        self.readers = {}
        for n in steps:
            for name in n.inputs:
                if name:
                    self.readers.setdefault(name, []).append(n)

    def shape(self, name):
        return self.info[name][0] if name in self.info else None

    def nbytes(self, name):
        if name not in self.info:
            return 0                            # host values, left-out inputs
        shape, itemsize = self.info[name]
        return math.prod(shape) * itemsize

    def private(self, name, node):
        """A device tensor a step writes and only ``node`` reads."""
        return name in self.info and name in self.produced and name not in self.outputs \
            and self.readers.get(name) == [node]


@dataclass
class Choice:
    kernel: str
    nodes: list             # the node names it runs
    bytes: int
    cost: float


@dataclass
class Schedule:
    choices: list
    edges: list = field(default_factory=list)     # the supergraph: (i, j, kernel, cost)

    @property
    def bytes_moved(self):
        return sum(c.bytes for c in self.choices)

    def kernels(self):
        return [c.kernel for c in self.choices]


def _matches(kernel, steps, i, where):
    """The chain of steps from i that the kernel's pattern matches, or None."""
    k = len(kernel.pattern)
    if i + k > len(steps):
        return None
    nodes = steps[i:i + k]
    for j, (node, ops) in enumerate(zip(nodes, kernel.pattern)):
        if ops != "*" and node.op_type not in ops:
            return None
        if j and (not node.inputs or node.inputs[0] != nodes[j - 1].outputs[0]
                  or not where.private(nodes[j - 1].outputs[0], node)):
            return None
    if kernel.fits is not None and not kernel.fits(nodes, where):
        return None
    return nodes


def select(steps, info, outputs, device, measured=None, kernels=KERNELS):
    """The cheapest schedule for ``steps`` (Nodes in order) on ``device``; ``measured``:
    kernel name -> cost factor per byte (a measured-cost table, measure.py's: seconds per
    byte), its entry "*" the factor of kernels it lacks (default 1: costs are bytes)."""
    if measured is not None and not isinstance(measured, dict):
        raise TypeError(f"measured costs must be a dict of kernel name -> cost per byte, got "
                        f"{type(measured).__name__}")
    measured = dict(measured or {})
    bad = [k for k, v in measured.items() if isinstance(v, bool) or not isinstance(v, (int, float))
           or not v >= 0 or v == float("inf")]
    if bad:
        raise ValueError(f"measured costs must be non-negative finite numbers per kernel name, got {bad}")
    measured.setdefault("*", 1.0)
    where = Where(steps, info, outputs)
    n = len(steps)
    best = [math.inf] * (n + 1)
    came = [None] * (n + 1)
    best[0] = 0.0
    edges = []
    for i in range(n):
        named = False           # a kernel of its own covers step i: the "*" fallback stays out
        for kernel in kernels:
            if kernel.devices and device not in kernel.devices or (kernel.pattern == ("*",) and named):
                continue
            nodes = _matches(kernel, steps, i, where)
            if nodes is None:
                continue
            named = named or len(nodes) == 1
            moved = (kernel.moves or bytes_moved)(nodes, where)
            label = kernel.label(nodes)
            cost = moved * measured.get(label, measured.get(kernel.name, measured["*"]))
            j = i + len(nodes)
            edges.append((i, j, label, cost))
            if best[i] + cost < best[j]:
                best[j], came[j] = best[i] + cost, (i, Choice(label, [x.name for x in nodes], moved, cost))
    choices, j = [], n
    while j > 0:
        i, choice = came[j]
        choices.append(choice)
        j = i
    return Schedule(_one_buffer_each(choices[::-1], steps, where, measured), edges)


def _one_buffer_each(choices, steps, where, measured):
    """A value can live in one Concat's buffer only: a later in-place Concat that reads a
    value an earlier one already holds copies instead (the edges are chosen one by one)."""
    by_name = {node.name: node for node in steps}
    held = set()
    for k, c in enumerate(choices):
        if c.kernel != "concat_in_place":
            continue
        node = by_name[c.nodes[0]]
        if held.isdisjoint(node.inputs):
            held.update(node.inputs)
        else:
            moved = bytes_moved([node], where)
            choices[k] = Choice("concat", c.nodes, moved, moved * measured.get("concat", measured["*"]))
    return choices


def relabel(schedule, writes, steps, info, outputs, measured=None):
    """The Concats' choices as writes.py decided them: concat_in_place (moving nothing)
    where every input is written into the buffer, else concat, moving the inputs copied
    (read and written). The supergraph's edges stay the selection's estimate."""
    measured = dict(measured or {})
    where = Where(steps, info, outputs)
    done = set(writes.in_place())
    for k, c in enumerate(schedule.choices):
        if c.nodes[0] not in writes.report:
            continue
        copied = [name for name, how in writes.report[c.nodes[0]] if how.startswith("copied")]
        kernel = "concat_in_place" if c.nodes[0] in done else "concat"
        moved = 2 * sum(where.nbytes(name) for name in copied)
        factor = measured.get(kernel, measured.get("*", 1.0))
        schedule.choices[k] = Choice(kernel, c.nodes, moved, moved * factor)
