"""Memory planning (chapter 13, "13_inference_compiler": the memory plan).

Every device tensor a step writes needs a buffer from the step that writes it to the last
step that reads it (the graph's outputs: to the end). Two tensors whose lifetimes do not
overlap may share memory, so the plan places each buffer at an offset in one arena: the
largest first, each at the lowest offset free of every buffer alive at the same time
(greedy by size, the usual heuristic; the exact problem is NP-hard). Its peak, the arena's
size, is reported beside the naive sum (every tensor its own buffer) and the lower bound no
placement can beat (the most bytes alive at one step).

Two kinds of value need no buffer of their own:
- a view (kernels.ALIAS_OPS: Reshape, Flatten...) lives in its input's buffer, which then
  lives as long as the view;
- the inputs of a Concat written in place (writes.py's decision; without one, those of a
  Concat the schedule runs as concat_in_place, select.py): each producer writes into its
  slice of the Concat's buffer, at the offset of the inputs before it along the axis (the
  slice's first element: along an axis after the first non-1 one the slices interleave).

The offsets are this plan's: tracegrad allocates each tensor itself, so the plan reports
what an arena would need (the number the chapter compares), it does not yet allocate one;
the Concat buffers it shares are real (plan.py's compile).
"""
import itertools
import math
from dataclasses import dataclass, field

from .kernels import ALIAS_OPS

ALIGN = 64          # bytes: a cache line, what vector loads like


@dataclass
class Buffer:
    name: str           # the value whose buffer it is (the root)
    size: int
    start: int          # first step that writes it
    end: int            # last step that reads it
    offset: int = 0
    members: list = field(default_factory=list)     # values living in it: (name, offset inside)


@dataclass
class MemoryPlan:
    buffers: list
    peak_bytes: int         # the arena: what the plan needs
    naive_bytes: int        # every tensor its own buffer, never freed
    live_peak_bytes: int    # the most bytes alive at one step: no placement does better
    in_place: list          # the Concats all of whose inputs are written into their buffer

    def summary(self):
        return {"peak_bytes": self.peak_bytes, "naive_bytes": self.naive_bytes,
                "live_peak_bytes": self.live_peak_bytes, "buffers": len(self.buffers),
                "concats_in_place": list(self.in_place)}


def _aligned(n):
    return -(-n // ALIGN) * ALIGN


def plan_memory(steps, info, outputs, schedule=None, writes=None):
    """The MemoryPlan of ``steps`` (Nodes in order): ``info`` name -> (shape, itemsize) of
    the device tensors, ``outputs`` the graph's output names, ``schedule`` select.py's,
    ``writes`` writes.py's (which inputs are written into a Concat's buffer)."""
    nbytes = {name: math.prod(shape) * itemsize for name, (shape, itemsize) in info.items()}
    start, end = {}, {}
    for i, node in enumerate(steps):
        for name in node.outputs:
            if name in nbytes:
                start.setdefault(name, i)
                end[name] = i
        for name in node.inputs:
            if name in start:
                end[name] = i
    for name in outputs:
        if name in start:
            end[name] = len(steps)
    # parent[name] = (the value whose buffer it lives in, its offset there)
    parent = {}
    for node in steps:
        if node.op_type in ALIAS_OPS and node.inputs and node.inputs[0] in start and node.outputs[0] in start:
            parent[node.outputs[0]] = (node.inputs[0], 0)
    views = set(parent)
    in_place = []
    by_name = {node.name: node for node in steps}
    if writes is not None:
        for name, (concat, axis, first, _) in writes.into.items():
            out = by_name[concat].outputs[0]
            shape, itemsize = info[out]
            parent[name] = (out, first * math.prod(shape[axis + 1:]) * itemsize)
        in_place = writes.in_place()
    for choice in ([] if writes is not None else schedule.choices if schedule else []):
        if choice.kernel == "concat_in_place":
            node = by_name[choice.nodes[0]]
            if any(name in parent or name not in start for name in node.inputs):
                continue        # a view, the caller's input, a value already in a buffer: copied
            offset = 0
            for name in node.inputs:
                parent[name] = (node.outputs[0], offset)
                offset += nbytes[name]
            in_place.append(node.name)

    roots = {}

    def root(name):
        """(the value whose buffer ``name`` lives in, the offset there): each chain of views
        is walked once, every value on it remembered."""
        path = []
        while name in parent and name not in roots:
            path.append(name)
            name = parent[name][0]
        top, offset = roots.get(name, (name, 0))
        for value in reversed(path):
            offset += parent[value][1]
            roots[value] = (top, offset)
        return roots[path[0]] if path else (top, offset)

    buffers = {}
    for name in start:
        r, offset = root(name)
        b = buffers.get(r)
        if b is None:
            b = buffers[r] = Buffer(r, _aligned(nbytes[r]), start[name], end[name])
        b.start, b.end = min(b.start, start[name]), max(b.end, end[name])
        b.members.append((name, offset))
    placed = _place(list(buffers.values()))
    peak = max((b.offset + b.size for b in placed), default=0)
    # the bytes alive at each step: +size where a buffer starts, -size after it ends, summed
    change = [0] * (len(steps) + 2)
    for b in placed:
        change[b.start] += b.size
        change[b.end + 1] -= b.size
    live = max(itertools.accumulate(change[:-1]))
    naive = sum(_aligned(nbytes[name]) for name in start if name not in views)
    ordered = sorted(placed, key=lambda b: (b.start, b.name))
    return MemoryPlan(ordered, peak, naive, live, in_place)


def _place(buffers):
    """Each buffer's offset, the largest first, at the lowest offset free of the buffers
    placed before it that are alive at a step it is (returned in that order). Those are
    found in the buffers sorted by first step, as a balanced tree (each range's middle its
    root) where each subtree knows its latest last step: a subtree all dead before the buffer
    starts, or all born after it ends, is skipped. So a plan costs n log n plus the pairs of
    buffers alive together (a long chain has few), not n squared."""
    by_start = sorted(buffers, key=lambda b: b.start)
    latest = [0] * len(by_start)             # at each subtree's middle: its latest last step

    def build(lo, hi):
        if lo == hi:
            return -1
        mid = (lo + hi) // 2
        latest[mid] = max(by_start[mid].end, build(lo, mid), build(mid + 1, hi))
        return latest[mid]

    def alive_with(b, lo, hi, found):
        """The placed buffers of by_start[lo:hi] alive at a step of b's, into ``found``."""
        if lo == hi:
            return
        mid = (lo + hi) // 2
        if latest[mid] < b.start:
            return
        alive_with(b, lo, mid, found)
        other = by_start[mid]
        if other.start > b.end:
            return                          # it and all after it are born after b ends
        if other.offset is not None and other.end >= b.start:
            found.append((other.offset, other.offset + other.size))
        alive_with(b, mid + 1, hi, found)

    build(0, len(by_start))
    for b in buffers:
        b.offset = None                     # not placed yet
    order = sorted(buffers, key=lambda b: (-b.size, b.start))
    for b in order:
        busy = []
        alive_with(b, 0, len(by_start), busy)
        offset = 0
        for lo, hi in sorted(busy):
            if offset + b.size <= lo:
                break
            offset = max(offset, hi)
        b.offset = offset
    return order
