"""Running recorded nodes (chapter 11): realization.

``realize(nodes)`` runs every node those depend on that has not run yet. The nodes go
through the graph compiler's passes first (plan.py: canonicalize, dead-code elimination,
fusion, scheduling); then each step runs: a fused group as one generated kernel, any other
node as one call of device "cpu"'s method of the same name. A graph with the structure of
one planned before skips the passes and runs that plan again (cache.py, the plan cache).
With fusion off (``FUSION["enabled"]``), every node is its own eager kernel, in the
recorded order.

``needed`` walks the graph with an explicit stack, not recursion: a training loop's graph
can be thousands of nodes deep.

Each kernel run is counted in ``launched`` (per method name, or per kind of fused kernel),
which tests read to check how many kernels a graph costs.
"""
import os
from collections import Counter
from contextlib import contextmanager

from stage2_tensor import backend
from stage2_tensor.backend import View
from stage2_tensor.strides import numel

from .graph import FAILED, PENDING, LazyBuffer

# Fusion's settings: on unless TRACEGRAD_LAZY_FUSION=0; groups of fewer elements than
# min_elements run unfused (a kernel's first compile runs the C compiler; below a few thousand
# elements the memory traffic fusion saves is smaller than the Python work of planning).
FUSION = {"enabled": os.environ.get("TRACEGRAD_LAZY_FUSION", "1") != "0",
          "min_elements": int(os.environ.get("TRACEGRAD_FUSE_MIN", "4096"))}

launched = Counter()        # kernels run, by backend method name, since the last reset


def kernel_count(op=None):
    """How many kernels have run (of method ``op``, or all) since ``reset_kernel_count``."""
    return launched[op] if op is not None else sum(launched.values())


def reset_kernel_count():
    launched.clear()


@contextmanager
def fusion(enabled=True, min_elements=None, epilogue_min_bytes=None):
    """Fusion on or off, and its thresholds, inside a with block: ``with
    lazy.fusion(min_elements=0):`` fuses even tiny graphs (tests, the chapter);
    ``epilogue_min_bytes=0`` gives every product its element-wise epilogue
    (kernels.EPILOGUE_MIN_BYTES)."""
    from . import kernels           # (kernels imports this module)
    saved, saved_bytes = dict(FUSION), kernels.EPILOGUE_MIN_BYTES
    FUSION["enabled"] = enabled
    if min_elements is not None:
        FUSION["min_elements"] = min_elements
    if epilogue_min_bytes is not None:
        kernels.EPILOGUE_MIN_BYTES = epilogue_min_bytes
    try:
        yield
    finally:
        FUSION.update(saved)
        kernels.EPILOGUE_MIN_BYTES = saved_bytes


def needed(nodes):
    """The not-yet-run nodes that ``nodes`` need, each after all of its inputs (a depth-first
    post-order, with a stack instead of recursion)."""
    order, seen = [], set()
    stack = [(n, False) for n in reversed(nodes) if n.result is None]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for v in reversed(node.views):
            i = v.buffer.node
            if i.result is None and id(i) not in seen:
                stack.append((i, False))
    return order


def realize(nodes, cpu=None):
    """Run what ``nodes`` depend on, and them, on backend ``cpu`` (default: device "cpu")."""
    cpu = cpu or backend.get("cpu")
    if not FUSION["enabled"]:
        for node in needed(nodes):
            run(node, cpu)
        return
    order = needed(nodes)
    if order:
        _planned()(nodes, order, cpu)


_REALIZE_PLANNED = []


def _planned():
    """cache.realize_planned (cache.py imports this module: found on first use, then kept,
    as an import statement here would look it up on every read)."""
    if not _REALIZE_PLANNED:
        from .cache import realize_planned
        _REALIZE_PLANNED.append(realize_planned)
    return _REALIZE_PLANNED[0]


def realize_all(cpu=None):
    """Run every pending node (before an in-place write: see backend.py), in recorded order
    (a set's order would give the same graph a new plan cache key each time)."""
    realize(sorted(PENDING, key=_number), cpu)


def _number(node):
    return node.number


def run(node, cpu):
    """One node: its arguments with device "cpu"'s buffers in place of LazyBuffers, one call,
    then keep the result and forget the inputs (so their memory can go)."""
    try:
        args = [on_cpu(a) for a in node.args]
        result = getattr(cpu, node.op)(*args)
        if node.op == "write":          # a recorded write (backend.py): the buffer it wrote
            result = args[0].buffer
    except Exception:
        # A kernel's error (a bad index) reaches the read that ran it. The node leaves
        # PENDING, so in-place writes elsewhere do not raise it again; reading its value
        # again runs it again, and raises again.
        PENDING.discard(node)
        FAILED.add(node)
        raise
    launched[node.op] += 1
    node.finished(result)
    PENDING.discard(node)


_COMPILED = {}


def compiled(kind, spec):
    """The kernel for a spec: compiled (or loaded from the disk cache) once per process."""
    kernel = _COMPILED.get(spec)
    if kernel is None:
        kernel = _COMPILED[spec] = kind.compile(spec)
    return kernel


def run_group(group, cpu, noted=None):
    """One fused group: its spec built, compiled (once per spec) and run; the values it
    stores become its nodes' results. A group no generator can take runs node by node:
    they are returned (a list, empty when the group stores nothing). For the plan cache
    (cache.py), ``noted(kernel, operand views, output nodes)`` is called before the run."""
    from .kernels import NotFusable
    if not group.stored:
        return []
    try:
        spec, views, out_nodes = group.kind.build(group, group.stored)
        kernel = compiled(group.kind, spec)
    except (NotFusable, NotImplementedError, TypeError):
        alone = [node for node in group.nodes if not node.realized]
        for node in alone:
            run(node, cpu)
        return alone
    except Exception:
        for node in group.nodes:        # as in run(): the error reaches this read only
            PENDING.discard(node)
            FAILED.add(node)
        raise
    if noted is not None:
        noted(kernel, views, out_nodes)
    ins = [v.buffer.cpu_buffer() for v in views]
    finish(group.kind, group.kind.run(kernel, group, out_nodes, ins, cpu))
    return []


def finish(kind, results):
    """A fused kernel of ``kind`` has run: the (node, buffer) pairs it stored become the
    nodes' results, and the nodes let go of their inputs."""
    launched[kind.name] += 1
    for node, buffer in results:
        node.finished(buffer)
        PENDING.discard(node)


def allocate_for(node):
    """A new device "cpu" buffer for node's (single) output."""
    from ..cpu.backend import allocate
    shape, dtype = node.outputs[0]
    return allocate(numel(shape), dtype)


def on_cpu(arg):
    """An argument as device "cpu" takes it: a View's LazyBuffer replaced by its buffer."""
    if isinstance(arg, View) and isinstance(arg.buffer, LazyBuffer):
        # View(...) rather than _replace: this runs for every argument of every node
        return View(arg.buffer.cpu_buffer(), arg.shape, arg.strides, arg.offset, arg.dtype)
    if isinstance(arg, list):
        return [on_cpu(a) for a in arg]
    return arg
