"""Device "cpu:lazy": device "cpu"'s kernels, run later (chapter 11, lazy execution and
kernel fusion).

Each compute method records a Node and returns a LazyBuffer instead of running anything;
reading values (to_flat, to_bytes, as_numpy: a tensor's tolist, item, numpy, printing)
realizes what they depend on first (realize.py). Autograd only ever calls backend methods,
so it records its backward pass the same way, unchanged.

The backend has exactly the methods device "cpu" has (``install`` makes them from the kernel
declarations, stage2_tensor/kernels/: a kernel whose role is "compute" is recorded, one
"in_place" runs in place), so a kernel "cpu" fuses stays one node here, and one "cpu" lacks
falls back to python as it does there. A node's outputs, their shapes and dtypes, are what
the declaration says the call returns.

In-place methods (write, sgd_update, adam_update) cannot simply wait: a pending node may
read the memory they change, and must see it as it was when the node was recorded. The
rule is the simplest correct one: run every pending node first, then write. One exception
keeps a backward pass in one graph: a ``write`` into a buffer that no pending node reads
(a slice's gradient written into a new tensor of zeros: stage2's Slice.backward) is
recorded as a node instead, which reads the buffer's old contents and the source and makes
the new contents; the buffer's LazyBuffer, which every tensor of that storage holds, moves
to the new node. Whether anything reads the buffer is asked of the last nodes made
(graph.py's ``unread``); when that cannot tell, or numpy shares the buffer's memory, the
write runs at once as before.

Each call's arguments are checked as device "cpu" checks them (the kernel's declaration), but
when the call is recorded: the error then comes from the operation that made it, and no
node that would fail (or read outside a buffer) is ever recorded.

Threads share the graph: the passes walk every pending node and an in-place write runs
them all, whichever thread recorded them, so recording, in-place methods and reads hold one
lock (``_lock``); a kernel another thread is running makes a recording thread wait.

Memory shared with numpy: ``as_numpy`` (``Tensor.numpy``) hands out the buffer's memory,
so it first runs the pending nodes that read the buffer too; a write through the array then
leaves their results alone, as on "cpu", where they ran already. Not covered: a node
recorded after the array was handed out, or one reading an array given to ``from_numpy``
(which keeps the array's memory), reads the memory when it runs, so a write through the
array before then reaches it (on "cpu" it would not).
"""
import threading

from stage2_tensor import kernels
from stage2_tensor.backend import Backend
from stage2_tensor.strides import numel

from ..cpu.backend import CpuBackend
from .buffers import on_cpu
from .graph import PENDING, LazyBuffer, Node, readers, unread
from .realize import realize, realize_all
from .steps import launched

_lock = threading.RLock()           # reentrant: a holder calling in again cannot deadlock

# The methods that compute a new buffer from views: recorded, run when needed
RECORDED = kernels.names("compute")
IN_PLACE = kernels.names("in_place")


class LazyBackend(Backend):
    name = "cpu:lazy"
    deferred = True                     # a kernel's error comes when its result is read

    def __init__(self, cpu):
        self.cpu = cpu                  # device "cpu"'s backend: runs the nodes, holds the data
        self.max_dims = cpu.max_dims

    @property
    def fused(self):                    # the fused kernels it records: device "cpu"'s
        return self.cpu.fused

    @property
    def matmul_variant(self):           # which matmul the nodes run: device "cpu"'s setting
        return self.cpu.matmul_variant

    @matmul_variant.setter
    def matmul_variant(self, variant):
        self.cpu.matmul_variant = variant

    # ---- data in: finished nodes holding device "cpu"'s buffers ------------------------------
    def from_flat(self, values, dtype):
        values = list(values)
        return _finished("from_flat", self.cpu.from_flat(values, dtype), len(values), dtype)

    def full(self, n, value, dtype):
        return _finished("full", self.cpu.full(n, value, dtype), n, dtype)

    def from_bytes(self, data, dtype):
        return _finished("from_bytes", self.cpu.from_bytes(data, dtype), len(data) // dtype.itemsize, dtype)

    def from_numpy(self, array, dtype):
        buffer = self.cpu.from_numpy(array, dtype)
        if buffer is None:
            return None
        made = _finished("from_numpy", buffer, array.size, dtype)
        made.node.shared = True         # the array's memory: a write must reach it at once
        return made

    def mt19937_floats(self, state, spare, n, distribution, a, b, dtype):
        out, state, spare = self.cpu.mt19937_floats(state, spare, n, distribution, a, b, dtype)
        return _finished("mt19937_floats", out, n, dtype), state, spare

    def mt19937_integers(self, state, n, low, width, dtype):
        out, state = self.cpu.mt19937_integers(state, n, low, width, dtype)
        return _finished("mt19937_integers", out, n, dtype), state

    # ---- data out: realize, then read through device "cpu" -------------------------------
    def to_flat(self, view):
        return self.cpu.to_flat(self._realized(view))

    def to_bytes(self, view):
        return self.cpu.to_bytes(self._realized(view))

    def as_numpy(self, view):
        on = self._realized(view, readers_too=True)
        view.buffer.node.shared = True  # numpy sees this memory now: writes to it run at once
        return self.cpu.as_numpy(on)

    def size(self, buffer, dtype):
        """How many elements of dtype the LazyBuffer's output will hold (its node knows)."""
        if not isinstance(buffer, LazyBuffer):
            raise TypeError(f"device 'cpu:lazy' cannot use a {type(buffer).__name__} as a "
                            "buffer; expected a LazyBuffer")
        shape, stored = buffer.node.outputs[buffer.index or 0]
        return numel(shape) * stored.itemsize // dtype.itemsize

    def _realized(self, view, readers_too=False):
        """The view on device "cpu", its values computed; with ``readers_too``, also the
        pending nodes that read its buffer (as_numpy, above)."""
        with _lock:
            also = readers(view.buffer) if readers_too else []
            realize([view.buffer.node] + also, self.cpu)
            return on_cpu(view)

    # ---- compute and in-place: generated below, one method per name ------------------------
    def record(self, op, args):
        """A new node for ``op(*args)``: its LazyBuffer, or a tuple of them (None where the
        method returns None)."""
        declared = kernels.KERNELS[op]
        shapes = declared.infer(*args)
        with _lock:
            node = Node(op, args, shapes)
        if not declared.multiple:
            return LazyBuffer(node)
        return tuple(None if s is None else LazyBuffer(node, i) for i, s in enumerate(shapes))

    def run_in_place(self, op, args):
        kernels.check(op, *args)
        with _lock:
            if op == "write" and _record_write(*args):
                return
            realize_all(self.cpu)
            getattr(self.cpu, op)(*[on_cpu(a) for a in args])
            launched[op] += 1


def _record_write(dst, src):
    """Record write(dst, src) as a node when no pending node reads dst's buffer (see the
    module's docstring); False when it must run now."""
    buffer = dst.buffer
    old = buffer.node
    if old.shared or (isinstance(src.buffer, LazyBuffer) and src.buffer.node is old) or not unread(buffer):
        return False
    before = LazyBuffer(old, buffer.index)          # the contents before the write
    node = Node("write", (dst._replace(buffer=before), src), [old.outputs[buffer.index or 0]])
    buffer.node, buffer.index = node, None
    return True


def _finished(op, buffer, n, dtype):
    """A node that has run already: data made by ``op``, n elements of dtype."""
    return LazyBuffer(Node(op, None, [((n,), dtype)], result=buffer))


def _method(op, how, doc):
    """A backend method ``op(*args)`` that calls ``self.<how>(op, args)``."""
    def method(self, *args):
        return getattr(self, how)(op, args)
    method.__name__, method.__doc__ = op, doc.format(op=op)
    return method


def install(cls, cpu_class):
    """Give ``cls`` a method per name in RECORDED and IN_PLACE that ``cpu_class`` has."""
    for names, how, doc in ((RECORDED, "record", "Record device \"cpu\"'s {op}: a node, run when its values are read."),
                            (IN_PLACE, "run_in_place", "Run every pending node, then device \"cpu\"'s {op} in place.")):
        for op in names:
            if callable(getattr(cpu_class, op, None)):
                setattr(cls, op, _method(op, how, doc))


install(LazyBackend, CpuBackend)


def pending_count():
    """How many recorded nodes have not run (and can still be reached)."""
    return len(PENDING)
