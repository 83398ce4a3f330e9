"""One call of a compiled function run eagerly while its device records every kernel it
launches: the capture, which a plan replays.

Stage2 knows tensors, the device knows buffers and kernels. The device's trace (a backend's
``capture(inputs)``, stage3) records launches on buffers; the capture here says which
buffers are inputs (the arguments' and the state's, in slot order), which Python calls the
plan must make again at each replay instead of recording what they launch (``live``), and
where the tensors the step leaves behind go (``Sync``: a new ``.grad``, a new moment).

Live calls are the places where Python itself keeps state the kernels cannot: an
optimizer's step counts and learning rate (``Optimizer.step``), a scheduler's position
(``LRScheduler.step``) and a generator's state (every random draw). At replay each is
called again, after the tensors Python will read there (the gradients an optimizer reads)
are put in their slots.

What cannot be captured is a graph break: a value read into Python (``item``, ``tolist``,
printing, ``bool`` of a tensor deciding an ``if``), a kernel the device leaves to the python
device, memory the trace did not see made. The call then goes on eagerly, unrecorded, and
the compiled function runs eagerly for those inputs (PyTorch's dynamo would split the
function there and compile both sides); under ``fullgraph=True`` it raises ``GraphBreak``,
naming the line of the caller's code.
"""
import functools
import sys
import threading
import traceback
from pathlib import Path

from ..tensor import Storage, Tensor, _new_tensor

class _Active(threading.local):
    capture = None                  # the Capture this thread is recording, if any


_active = _Active()


def active():
    """The capture this thread is recording, or None (other threads' work is not part of it)."""
    return _active.capture
STAGE2 = Path(__file__).resolve().parents[1]


class GraphBreak(RuntimeError):
    """What a function compiled with ``fullgraph=True`` did that cannot be captured."""


def live(fn):
    """Mark a method whose effect is Python state (an optimizer's step, a scheduler's, a
    random draw): a capture records the call, not the kernels it launches, and a replay
    calls it again."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        capture = _active.capture
        if capture is None or capture.in_live:
            return fn(*args, **kwargs)
        return capture.live(fn, args, kwargs)
    return call


def graph_break(reason):
    """Called where something that cannot be captured happens during a capture."""
    capture = _active.capture
    if capture is not None and not capture.in_live:
        capture.graph_break(reason)


def note_backward():
    """A backward pass starts (the gradients of the captured step are part of it)."""
    if _active.capture is not None:
        _active.capture.backward_ran = True


def package_of(obj):
    """The folder of the top-level package that defines ``obj``'s class (the device's)."""
    return Path(sys.modules[type(obj).__module__.partition(".")[0]].__file__).resolve().parent


def caller_line(packages=(STAGE2,)):
    """file:line of the innermost frame outside ``packages`` (stage2 and the device's): the
    caller's code."""
    for frame in reversed(traceback.extract_stack()):
        path = Path(frame.filename).resolve()
        if not any(path.is_relative_to(p) for p in packages):
            return f"{frame.filename}:{frame.lineno} ({frame.line})"
    return "inside tracegrad"


class Sync:
    """Put in ``slot`` the tensor a replay made (value ``value`` with ``layout``), or None."""
    __slots__ = ("slot", "value", "layout")

    def __init__(self, slot, value, layout):
        self.slot, self.value, self.layout = slot, value, layout

    def apply(self, buffers, device, max_dims):
        if self.value is None:
            self.slot.set(None)
            return
        self.slot.set(output(buffers[self.value], device, max_dims, self.layout))


def layout(t):
    return (t.shape, t.strides, t.offset, t.dtype)


def output(buffer, device, max_dims, layout):
    shape, strides, offset, dtype = layout
    return _new_tensor(Storage(buffer, device, max_dims), shape, strides, offset, dtype)


class Capture:
    """Records one call through ``trace`` (the device's, given the buffers a replay reads
    afresh); ``slots`` are the places of the state."""

    def __init__(self, trace, slots, fullgraph):
        self.trace, self.slots, self.fullgraph = trace, slots, fullgraph
        self.held = [s.get() for s in slots]       # what each slot held at the last sync
        self.calls, self.syncs = [], []         # live calls, and the syncs before each
        self.broken, self.in_live, self.backward_ran = None, False, False

    def run(self, fn, args, kwargs):
        if _active.capture is not None:
            raise RuntimeError("tg.compile: a compiled function called while another one is being "
                               "captured; compile the outer one only")
        _active.capture = self
        try:
            with self.trace:
                return fn(*args, **kwargs)
        finally:
            _active.capture = None

    def graph_break(self, reason):
        where = caller_line((STAGE2, package_of(self.trace)))
        if self.fullgraph:
            raise GraphBreak(f"tg.compile(fullgraph=True): cannot capture {reason}, at {where}")
        if self.broken is None:
            self.broken = f"{reason}, at {where}"
            self.trace.stop()

    def live(self, fn, args, kwargs):
        self.syncs.append(self.changed())
        self.calls.append((fn, args, kwargs))
        self.trace.live(len(self.calls) - 1)
        self.in_live = True
        try:
            with self.trace.paused():
                result = fn(*args, **kwargs)
        finally:
            self.in_live = False
        self.trace.made(result.storage.buffer if isinstance(result, Tensor) else result)
        return result

    def changed(self):
        """The syncs that bring the slots from what they held at the last sync (or the
        start) to what they hold now."""
        syncs = []
        for i, slot in enumerate(self.slots):
            now = slot.get()
            if now is self.held[i]:
                continue
            self.held[i] = now
            syncs.append(Sync(slot, None, None) if now is None else
                         Sync(slot, self.trace.value(now.storage.buffer), layout(now)))
        return syncs
