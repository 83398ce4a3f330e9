"""Running recorded nodes (chapter 11): realization.

``realize(nodes)`` runs every node those depend on that has not run yet. The nodes go
through the graph compiler's passes first (plan.py: canonicalize, dead-code elimination,
fusion, scheduling); then each step runs (steps.py): a fused group as one generated kernel,
any other node as one call of device "cpu"'s method of the same name. A graph with the
structure of one planned before skips the passes and runs that plan again (cache.py, the
plan cache). With fusion off (``FUSION["enabled"]``, settings.py), every node is its own
eager kernel, in the recorded order.
"""
from stage2_tensor import backend

from .cache import realize_planned
from .graph import PENDING, needed
from .settings import FUSION
from .steps import run


def realize(nodes, cpu=None):
    """Run what ``nodes`` depend on, and them, on backend ``cpu`` (default: device "cpu")."""
    cpu = cpu or backend.get("cpu")
    if not FUSION["enabled"]:
        for node in needed(nodes):
            run(node, cpu)
        return
    order = needed(nodes)
    if order:
        realize_planned(nodes, order, cpu)


def realize_all(cpu=None):
    """Run every pending node (before an in-place write: see backend.py), in recorded order
    (a set's order would give the same graph a new plan cache key each time)."""
    realize(sorted(PENDING, key=_number), cpu)


def _number(node):
    return node.number
