"""Running a plan's steps (chapter 11, lazy execution and kernel fusion): a node as one call
of device "cpu"'s method of the same name, a fused group as one generated kernel, compiled
once per spec (kernels.py builds the spec and runs the kernel). A kernel's error reaches
the read that ran it.

Each kernel run is counted in ``launched`` (per method name, or per kind of fused kernel),
which tests read to check how many kernels a graph costs.
"""
from collections import Counter

from .buffers import on_cpu
from .graph import FAILED, PENDING
from .kernels import NotFusable

launched = Counter()        # kernels run, by backend method name, since the last reset


def kernel_count(op=None):
    """How many kernels have run (of method ``op``, or all) since ``reset_kernel_count``."""
    return launched[op] if op is not None else sum(launched.values())


def reset_kernel_count():
    launched.clear()


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
