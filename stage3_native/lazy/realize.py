"""Running recorded nodes (chapter 11): realization.

``realize(nodes)`` runs every node those depend on that has not run yet, inputs first, each
as one call of device "cpu"'s method of the same name (one eager kernel per node: no fusion
yet). The walk is an explicit stack, not recursion: a training loop's graph can be
thousands of nodes deep.

Each run is counted in ``launched`` (per method name), which tests read to check how many
kernels a graph costs.
"""
from collections import Counter

from stage2_tensor import backend
from stage2_tensor.backend import View

from .graph import PENDING, LazyBuffer

launched = Counter()        # kernels run, by backend method name, since the last reset


def kernel_count(op=None):
    """How many kernels have run (of method ``op``, or all) since ``reset_kernel_count``."""
    return launched[op] if op is not None else sum(launched.values())


def reset_kernel_count():
    launched.clear()


def schedule(nodes):
    """The not-yet-run nodes that ``nodes`` need, each after all of its inputs (a depth-first
    post-order, with a stack instead of recursion)."""
    order, seen = [], set()
    stack = [(n, False) for n in reversed(nodes) if not n.realized]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((i, False) for i in reversed(node.inputs()) if not i.realized and id(i) not in seen)
    return order


def realize(nodes, cpu=None):
    """Run what ``nodes`` depend on, and them, on backend ``cpu`` (default: device "cpu")."""
    cpu = cpu or backend.get("cpu")
    for node in schedule(nodes):
        run(node, cpu)


def realize_all(cpu=None):
    """Run every pending node (before an in-place write: see backend.py)."""
    realize(list(PENDING), cpu)


def run(node, cpu):
    """One node: its arguments with device "cpu"'s buffers in place of LazyBuffers, one call,
    then keep the result and forget the inputs (so their memory can go)."""
    try:
        result = getattr(cpu, node.op)(*[on_cpu(a) for a in node.args])
    except Exception:
        # A kernel's error (a bad index) reaches the read that ran it. The node leaves
        # PENDING, so in-place writes elsewhere do not raise it again; reading its value
        # again runs it again, and raises again.
        PENDING.discard(node)
        raise
    launched[node.op] += 1
    node.result = result
    node.args = None
    PENDING.discard(node)


def on_cpu(arg):
    """An argument as device "cpu" takes it: a View's LazyBuffer replaced by its buffer."""
    if isinstance(arg, View) and isinstance(arg.buffer, LazyBuffer):
        return arg._replace(buffer=arg.buffer.cpu_buffer())
    if isinstance(arg, list):
        return [on_cpu(a) for a in arg]
    return arg
