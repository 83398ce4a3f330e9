"""The graph compiler's pipeline (chapter 11, lazy execution and kernel fusion): from the
nodes a read needs to the steps that compute them.

    canonicalize.py   readers of copies read the copied views; copies left unread go
    dce.py            values nobody needs are not computed, values only a kernel reads
                      are not stored
    fusion.py         nodes grouped into kernels by the patterns kernels.py declares
    schedule.py       the steps in an order they can run in, and the bytes they move

``plan(nodes)`` runs them in that order and returns a Plan, which prints itself for the
chapter: one line per step with the ops it fuses and its traffic, then the totals against
running every node alone. A read plans a graph only the first time its structure is seen:
cache.py keeps what the passes decided, and a graph of the same structure reuses it.
"""

from . import dce, schedule
from .canonicalize import canonicalize
from .fusion import Group, fuse
from .graph import PENDING, needed
from .kernels import kinds
from .settings import FUSION
from .steps import compiled


class Plan:
    """What the passes made of a graph, kept for printing and drawing (draw.py):
    ``recorded``, the pending nodes in recorded order; ``bypassed``, the ids of copies
    canonicalization took the readers from; ``dead``, the ids of nodes dce.py dropped;
    ``steps``, the fused Groups and single nodes in schedule order (a Group's ``stored``:
    the ids of its nodes written to memory); ``unfused``, the bytes each recorded node
    would move run alone (None when planned by a read, which has no use for them)."""

    def __init__(self, recorded, bypassed, dead, steps, unfused):
        self.recorded, self.bypassed, self.dead = recorded, bypassed, dead
        self.steps, self.unfused = steps, unfused

    def code(self, step):
        """The generated C of a fused step (a Group of this plan), compiled if need be."""
        spec, _, _ = step.kind.build(step, step.stored)
        return compiled(step.kind, spec).body

    @property
    def kernels(self):
        return sum(1 for s in self.steps if not isinstance(s, Group) or s.stored)

    def bytes(self):
        """(read, written) by the whole plan."""
        totals = [schedule.traffic(s, getattr(s, "stored", None)) for s in self.steps]
        return sum(r for r, _ in totals), sum(w for _, w in totals)

    def __str__(self):
        lines = []
        for s in self.steps:
            read, written = schedule.traffic(s, getattr(s, "stored", None))
            if isinstance(s, Group):
                ops = ", ".join(_name(n) for n in s.nodes)
                kept = sum(1 for n in s.nodes if id(n) in s.stored)
                what = f"{s.kind.name} {s.shape}: {ops} ({kept} of {len(s.nodes)} stored)"
            else:
                what = _name(s)
            lines.append(f"{what}  [{_mb(read)} read, {_mb(written)} written]")
        read, written = self.bytes()
        lines.append(f"{self.kernels} kernels, {_mb(read + written)} moved; "
                     f"one kernel per node: {len(self.unfused)} kernels, {_mb(sum(self.unfused))} moved")
        return "\n".join(lines)


def _name(node):
    return f"{node.op} {node.args[0]}" if node.op in ("unary", "binary", "reduce") else node.op


def _mb(n):
    return f"{n / 1e6:.2f} MB" if n >= 1e4 else f"{n} B"


def plan(nodes, cpu, min_elements=None, count_bytes=True, rewritten=None):
    """The steps computing ``nodes`` (and what they need), after every pass; with
    ``count_bytes``, also what the nodes would move run one kernel each (for printing).
    ``rewritten``: canonicalize's list of the arguments it rewrote (cache.py)."""
    order = needed(nodes)
    roots = {id(n) for n in nodes}
    in_order = {id(n) for n in order}
    unfused = [sum(schedule.traffic(n)) for n in order] if count_bytes else None
    bypassed = canonicalize(order + [n for n in list(PENDING) if id(n) not in in_order], rewritten)
    copies = set(bypassed)
    uses = dce.Uses(bypassed)
    dead = {id(n) for n in order if dce.dead(n, roots, uses)}
    live = [n for n in order if id(n) not in dead]
    limit = FUSION["min_elements"] if min_elements is None else min_elements
    steps = schedule.order(fuse(live, kinds(cpu), limit))
    for s in steps:
        if isinstance(s, Group):
            s.stored = dce.stored(s, roots, uses)
    return Plan(order, copies, dead, steps, unfused)


__all__ = ["Plan", "plan"]
