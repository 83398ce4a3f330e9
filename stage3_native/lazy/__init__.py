"""Lazy execution for device "cpu" (chapter 11, lazy execution and kernel fusion).

Device "cpu:lazy" runs device "cpu"'s kernels, but only when a value is read: until then
every operation, forward and backward, is recorded as a node of a graph.

The modules form a one-way pipeline, each importing only from the stages before it:
graph -> fused kernels -> steps -> plan -> cache -> realize -> backend.

    graph.py      the recorded node, the LazyBuffer a tensor holds, and what a read needs
    buffers.py    device "cpu"'s buffers behind the lazy ones
    expr.py       fused kernels as plain records: inputs, constants, ops (code generation)
    codegen.py    a fused element-wise or reduction kernel as C source
    jit.py        compiled once through cffi and cached on disk by the hash of its source
    rows.py       a row kernel: reductions with their element-wise producers and
                  consumers (softmax, LayerNorm), one pass per row
    epilogue.py   a matmul whose element-wise epilogue (GELU(x @ W + b)) runs in TinyBLAS,
                  on each block of the product once it is final
    kernels.py    the kinds of fused kernel: the patterns they admit, a group's spec, its run
    settings.py   fusion on or off, and its size thresholds (``lazy.fusion``)
    steps.py      runs a plan's steps: a node eagerly, a fused group as one kernel; counts them
    plan.py       the graph compiler's passes, in order:
      canonicalize.py   readers of copies read the copied views
      dce.py            what is never computed, and what is computed but not stored
      fusion.py         nodes grouped into kernels, by the patterns kernels.py declares
      schedule.py       the steps' order, and the bytes each moves
    cache.py      the plan cache: a read whose graph has the structure of one planned
                  before runs that plan again, its kernels compiled, the passes skipped
    realize.py    runs what a read needs: by its plan (cached, or made now), or eagerly
    backend.py    LazyBackend: records compute, realizes before reads and in-place writes
    show.py, draw.py  the pending graph printed one node a line; drawn at each pass

    >>> x = tg.tensor([[1.0, 2.0, 3.0]], device="cpu:lazy")
    >>> y = (x * 2).exp()                       # nothing runs
    >>> print(lazy.graph(y))
    %1 = buffer (1, 3) float32
    %2 = buffer (1,) float32
    %3 = binary mul(%1, %2<(1, 3):(0, 0)>) (1, 3) float32
    %4 = unary exp(%3) (1, 3) float32
    >>> y.tolist()          # two kernels (one fused, above lazy.FUSION["min_elements"])
"""
from . import cache as plan_cache
from .backend import LazyBackend, pending_count
from .graph import PENDING, LazyBuffer, Node, needed
from .plan import plan
from .realize import realize, realize_all
from .settings import FUSION, fusion
from .show import graph, pending
from .steps import kernel_count, launched, reset_kernel_count


def create(cpu):
    """Device "cpu:lazy"'s backend, over device "cpu"'s ``cpu``."""
    return LazyBackend(cpu)


__all__ = [
    "FUSION",
    "PENDING",
    "LazyBackend",
    "LazyBuffer",
    "Node",
    "create",
    "fusion",
    "graph",
    "kernel_count",
    "launched",
    "needed",
    "pending",
    "pending_count",
    "plan",
    "plan_cache",
    "realize",
    "realize_all",
    "reset_kernel_count",
]
