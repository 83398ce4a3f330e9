"""The recording of a captured call: every C function the backend calls, with its
arguments, in order, on any native device (its part: device.py).

While a trace is active, the compiled library the backend calls is a stand-in that runs
each C function and records it: a ``Launch``. A buffer passed to C (the buffer, or a
pointer into it; also inside a list argument, as cat's array of buffers) becomes a value
(values.py), numbered once:

    input   a buffer of an input tensor (an argument's, the state's): read afresh at replay
    static  one the trace had not seen before: made inside the call and not kept (replays
            reuse it), or an outside constant the function reads (replays read it in place)
    fresh   made inside the call and kept after it (a gradient, a returned loss): a replay
            allocates a new one, so no output of one call is the memory of the next
    live    returned by a live call (a random draw): whatever the replay's call returns
    given   handed to a replay when it runs a segment (a backward's upstream gradient)

Every other argument (a number, a tuple of shape or strides, a table of constants, host
memory the device keeps as it is) is kept as it was. A C function's result is kept too,
and what it wrote into a host out-parameter (CUDA's bad entry): a replay that gets another
(an index out of range, a failed allocation) stops with an error.

What the trace cannot replay is a graph break (stage2_tensor/compiled/capture.py): a value
read back (``to_flat``, ``to_bytes``, ``as_numpy``, a copy to the host), memory shared with
numpy (``from_numpy``), a kernel run by the python device, a C function that returns a
float or a pointer, or a pointer into memory the trace never saw.
"""
import contextlib
import threading

from stage2_tensor.compiled import graph_break

from ..native_backend import own_methods
from .plan import Plan
from .steps import Launch, LivePoint
from .values import Values

BREAKS = {"to_flat": "a tensor's values read into Python (item, tolist, printing, bool)",
          "to_bytes": "a tensor's bytes read into Python",
          "as_numpy": "a tensor's memory handed to numpy",
          "from_numpy": "a tensor made on numpy's memory",
          "_on_python": "a kernel the device leaves to the python device",
          "_pair_on_python": "a kernel the device leaves to the python device",
          "mt19937_floats": "a random draw outside a generator",
          "mt19937_integers": "a random draw outside a generator"}
KEPT = "kept"                       # an argument a replay passes as it was


class LaunchTrace:
    """The recording of one call on ``device`` (a CaptureDevice: cpu.py, cuda.py), whose
    ``inputs`` are the buffers a replay reads afresh."""

    def __init__(self, device, inputs):
        self.device, self.be, self.ffi = device, device.be, device.ffi
        self._recording, self.stopped, self.thread = False, False, None
        self.values = Values(device)
        self.made_here, self.kept = set(), []   # ids of buffers backend methods returned
        self.scalars = {}                       # id of a live call's int -> its value
        self.empty = set()                      # values made empty, or refilled by a launch
        self.steps, self.bounds = [], [(0, 0)]
        self.inputs = [self.values.register(b, "input") for b in inputs]
        self._methods = _shadowed_methods(self.be, device)

    @property
    def recording(self):
        """Whether a call now is recorded: while the trace is active and not paused, and made
        by the capturing thread (another thread's kernels, through the same stand-ins, run
        unrecorded)."""
        return self._recording and threading.get_ident() == self.thread

    # ---- values --------------------------------------------------------------------------
    def known(self, buffers):
        """Buffers of tensors the function reaches but keeps nowhere a slot can see (a list of
        batches in a closure): read in place, as constants."""
        for b in buffers:
            self.values.register(b, "static")

    def value(self, buffer):
        """The value of a buffer that outlives the call: made here, it becomes fresh."""
        v = self.values.register(buffer, "static")
        if self.values.kinds[v] == "static" and id(buffer) in self.made_here:
            self.values.kinds[v] = "fresh"
        return v

    def allocated(self, buffer, empty=False):
        """A buffer the device's allocator just made (its stand-in calls this); ``empty``:
        made to be written (not holding values it was made with), so the memory plan may
        give it a block of its own (memory.py)."""
        if self.recording:
            v = self.values.register(buffer, "static")
            if empty:
                self.empty.add(v)

    def _ref(self, a):
        """How a cffi argument reaches a replay: (value, byte offset, pointer type or None to
        pass the buffer itself), KEPT (not memory, NULL, or host memory the device keeps),
        or None (memory the trace never saw)."""
        ffi = self.ffi
        ctype = ffi.typeof(a)
        if ctype.kind not in ("array", "pointer") or a == ffi.NULL or self.device.is_host(a):
            return KEPT
        found = self.values.locate(a)
        if found is None:
            return None
        v, offset = found
        if offset == 0 and ctype is ffi.typeof(self.values.objects[v]):
            return v, 0, None
        return v, offset, ctype if ctype.kind == "pointer" else ffi.getctype(ctype.item, "*")

    # ---- recording -----------------------------------------------------------------------
    def launch(self, name, fn, args):
        if not self.recording:
            return fn(*args)
        cdata = self.ffi.CData
        refs, items, reported = [], [], []
        for j, a in enumerate(args):
            if type(a) is int and id(a) in self.scalars:
                refs.append((j, self.scalars[id(a)], 0, None))
            elif isinstance(a, cdata):
                ref = self._ref(a)
                if ref is None:
                    return self._unseen(name, fn, args)
                if ref is not KEPT:
                    refs.append((j, *ref))
                elif self.device.is_host(a) and self.ffi.typeof(a).kind == "pointer":
                    reported.append(j)          # a scalar out-parameter: checked at replay
            elif type(a) in (list, tuple):
                for k, x in enumerate(a):
                    ref = self._ref(x) if isinstance(x, cdata) else KEPT
                    if ref is None:
                        return self._unseen(name, fn, args)
                    if ref is not KEPT:
                        items.append((j, k, *ref))
        result = fn(*args)
        if isinstance(result, (float, self.ffi.CData)):
            graph_break(f"a value {name} returns read into Python")
        elif self.recording:
            reports = [(j, args[j][0]) for j in reported]
            self.steps.append(Launch(name, fn, args, refs, result, items, reports))
        return result

    def _unseen(self, name, fn, args):
        graph_break(f"a pointer passed to {name} into memory the capture did not see made")
        return fn(*args)

    def again(self, name, fn, args):
        """Record a launch the call did not make but a replay must (contents Python put in
        buffer ``args[0]``, put there again at each replay)."""
        v = self.values.register(args[0], "static")
        self.empty.add(v)
        self.steps.append(Launch(name, fn, args, [(0, v, 0, None)], None))

    def live(self, k):
        self.steps.append(LivePoint(k))

    def made(self, result):
        """What the live call just made: a buffer, or an int (a kernel's random seed), which
        the launches after it take as an argument (the same object: followed by identity)."""
        if self.device.is_buffer(result):
            self.steps[-1].values = [self.values.register(result, "live")]
        elif type(result) is int:
            v = self.values.scalar(result)
            self.steps[-1].values = [v]
            self.scalars[id(result)] = v

    def unfollowed(self):
        """Why the plan would not replay the call, where a live call's int never reached a
        launch as itself (it was changed on the way: the replay would reuse the old one)."""
        used = {v for step in self.steps if isinstance(step, Launch) for v in step.buffer_values()}
        if any(v not in used for v in self.scalars.values()):
            return "a random seed drawn in Python that the capture could not follow into a kernel"
        return None

    def mark(self):
        """Start a new segment of the plan (a compiled forward's backward)."""
        self.bounds.append((len(self.steps), len(self.values.objects)))

    def given(self, buffer):
        """A buffer a replay is handed when it runs a segment (a backward's upstream
        gradient): its value, filled by the caller."""
        return self.values.register(buffer, "given")

    def saved(self):
        """Make fresh every value made in the first segment (the forward) that a later one
        reads: a replay's forward keeps them for its backward, as autograd saves tensors."""
        values = self.values
        end_value = self.bounds[1][1] if len(self.bounds) > 1 else len(values.objects)
        later = self.steps[self.bounds[1][0]:] if len(self.bounds) > 1 else []
        for step in later:
            for v in step.buffer_values() if isinstance(step, Launch) else ():
                if v < end_value and values.kinds[v] == "static" and id(values.objects[v]) in self.made_here:
                    values.kinds[v] = "fresh"

    def stop(self):
        self.stopped, self._recording = True, False

    @contextlib.contextmanager
    def paused(self):
        was, self._recording = self._recording, False
        try:
            yield
        finally:
            self._recording = was and not self.stopped

    def plan(self):
        self.device.fuse(self)
        return Plan(self)

    # ---- installing the stand-ins --------------------------------------------------------
    def __enter__(self):
        # every C function, and every buffer made, goes through the trace while it is active
        self.device.install(self)
        for name in self._methods:
            setattr(self.be, name, self._shadow(name, getattr(self.be, name)))
        self.thread = threading.get_ident()
        self._recording = True
        return self

    def __exit__(self, *exc):
        self._recording = False
        for name in self._methods:
            self.be.__dict__.pop(name, None)
        self.device.uninstall()
        return False

    def _shadow(self, name, method):
        if name in self.device.paused_methods:
            def unrecorded(*args, **kwargs):
                with self.paused():
                    return method(*args, **kwargs)
            return unrecorded

        def call(*args, **kwargs):
            if self.recording and name in BREAKS:
                graph_break(BREAKS[name])
            out = method(*args, **kwargs)
            if self.recording:
                for b in out if isinstance(out, tuple) else (out,):
                    if self.device.is_buffer(b):
                        self.made_here.add(id(b))
                        self.kept.append(b)         # alive until the plan: ids stay unique
                self.device.returned(self, name, out)
            return out
        return call


def _shadowed_methods(be, device):
    """The backend's methods a trace wraps: the public ones, the private ones that break,
    and those the device runs unrecorded."""
    return [name for name in own_methods(be, {*BREAKS, *device.paused_methods})
            if name not in ("capture", "has", "size")]
