"""Device "cpu"'s recording of a captured call: every C function the backend calls, with
its arguments, in order.

While a trace is active, the compiled library that cpu/backend.py calls (its module global
``lib``, as the profiler swaps it, profile.py) is a stand-in that runs each C function and
records it: a ``Launch``. A buffer passed to C (a cffi array, or a pointer into one) becomes
a value, numbered once:

    input   a buffer of an input tensor (an argument's, the state's): read afresh at replay
    static  one the trace had not seen before: made inside the call and not kept (replays
            reuse it), or an outside constant the function reads (replays read it in place)
    fresh   made inside the call and kept after it (a gradient, a returned loss): a replay
            allocates a new one, so no output of one call is the memory of the next
    live    returned by a live call (a random draw): whatever the replay's call returns

Every other argument (a number, a tuple of shape or strides, a table of constants) is kept
as it was. A C function's result is kept too: a replay that gets another (an index out of
range, a failed allocation) stops with an error.

Contents Python puts in a buffer (``from_flat``, ``from_bytes``, ``zeros``) are recorded as
launches that put them there again, so a reused buffer starts each replay as it did. What
the trace cannot replay is a graph break (stage2_tensor/compiled/capture.py): a value read
back (``to_flat``, ``to_bytes``, ``as_numpy``), memory shared with numpy (``from_numpy``), a
kernel run by the python device, a C function that returns a float, or a pointer into
memory the trace never saw.
"""
import bisect
import contextlib

from stage2_tensor.compiled import graph_break

from ..cpu import backend as cpu
from .plan import Launch, LivePoint, Plan

ffi = cpu.ffi
BREAKS = {"to_flat": "a tensor's values read into Python (item, tolist, printing, bool)",
          "to_bytes": "a tensor's bytes read into Python",
          "as_numpy": "a tensor's memory handed to numpy",
          "from_numpy": "a tensor made on numpy's memory",
          "_on_python": "a kernel the device leaves to the python device",
          "_pair_on_python": "a kernel the device leaves to the python device",
          "mt19937_floats": "a random draw outside a generator",
          "mt19937_integers": "a random draw outside a generator"}


class LaunchTrace:
    def __init__(self, be, inputs):
        self.be, self.recording, self.stopped = be, False, False
        self.objects, self.kinds = [], []       # per value: its buffer, its kind
        self.by_id, self.starts, self.ranges = {}, [], []
        self.made_here, self.kept = set(), []   # ids of buffers backend methods returned
        self.scalars = {}                       # id of a live call's int -> its value
        self.steps, self.bounds = [], [(0, 0)]
        self.inputs = [self._register(b, "input") for b in inputs]

    # ---- values --------------------------------------------------------------------------
    def _register(self, buffer, kind):
        v = self.by_id.get(id(buffer))
        if v is not None:
            return v
        v = len(self.objects)
        self.objects.append(buffer)
        self.kinds.append(kind)
        self.by_id[id(buffer)] = v
        start = int(ffi.cast("uintptr_t", buffer))
        i = bisect.bisect_right(self.starts, start)
        self.starts.insert(i, start)
        self.ranges.insert(i, (start + ffi.sizeof(buffer), v))
        return v

    def known(self, buffers):
        """Buffers of tensors the function reaches but keeps nowhere a slot can see (a list of
        batches in a closure): read in place, as constants."""
        for b in buffers:
            self._register(b, "static")

    def _locate(self, pointer, ctype):
        """(value, byte offset) of a buffer argument; None for memory never seen."""
        v = self.by_id.get(id(pointer))
        if v is not None:
            return v, 0
        address = int(ffi.cast("uintptr_t", pointer))
        i = bisect.bisect_right(self.starts, address) - 1
        if i >= 0 and address < self.ranges[i][0]:
            return self.ranges[i][1], address - self.starts[i]
        if ctype.kind == "array":
            return self._register(pointer, "static"), 0
        return None

    def value(self, buffer):
        """The value of a buffer that outlives the call: made here, it becomes fresh."""
        v = self._register(buffer, "static")
        if self.kinds[v] == "static" and id(buffer) in self.made_here:
            self.kinds[v] = "fresh"
        return v

    @staticmethod
    def is_buffer(x):
        return isinstance(x, ffi.CData) and ffi.typeof(x).kind == "array"

    # ---- recording -----------------------------------------------------------------------
    def launch(self, name, fn, args):
        if not self.recording:
            return fn(*args)
        refs = []
        for j, a in enumerate(args):
            if type(a) is int and id(a) in self.scalars:
                refs.append((j, self.scalars[id(a)], 0, None))
            elif isinstance(a, ffi.CData):
                ctype = ffi.typeof(a)
                if ctype.kind not in ("array", "pointer") or a == ffi.NULL:
                    continue
                found = self._locate(a, ctype)
                if found is None:
                    graph_break(f"a pointer passed to {name} into memory the capture did not see made")
                    return fn(*args)
                v, offset = found
                direct = offset == 0 and ctype.kind == "array"
                refs.append((j, v, offset, None if direct else
                             ctype if ctype.kind == "pointer" else ffi.getctype(ctype.item, "*")))
        result = fn(*args)
        if isinstance(result, (float, ffi.CData)):
            graph_break(f"a value {name} returns read into Python")
        elif self.recording:
            self.steps.append(Launch(name, fn, args, refs, result))
        return result

    def live(self, k):
        self.steps.append(LivePoint(k))

    def made(self, result):
        """What the live call just made: a buffer, or an int (a kernel's random seed), which
        the launches after it take as an argument (the same object: followed by identity)."""
        if self.is_buffer(result):
            self.steps[-1].values = [self._register(result, "live")]
        elif type(result) is int:
            self.steps[-1].values = [len(self.objects)]
            self.scalars[id(result)] = len(self.objects)
            self.objects.append(result)
            self.kinds.append("scalar")

    def unfollowed(self):
        """Why the plan would not replay the call, where a live call's int never reached a
        launch as itself (it was changed on the way: the replay would reuse the old one)."""
        used = {v for step in self.steps if isinstance(step, Launch) for _, v, _, _ in step.refs}
        if any(v not in used for v in self.scalars.values()):
            return "a random seed drawn in Python that the capture could not follow into a kernel"
        return None

    def mark(self):
        """Start a new segment of the plan (a compiled forward's backward)."""
        self.bounds.append((len(self.steps), len(self.objects)))

    def given(self, buffer):
        """A buffer a replay is handed when it runs a segment (a backward's upstream
        gradient): its value, filled by the caller."""
        return self._register(buffer, "given")

    def saved(self):
        """Make fresh every value made in the first segment (the forward) that a later one
        reads: a replay's forward keeps them for its backward, as autograd saves tensors."""
        end_value = self.bounds[1][1] if len(self.bounds) > 1 else len(self.objects)
        later = self.steps[self.bounds[1][0]:] if len(self.bounds) > 1 else []
        for step in later:
            for _, v, _, _ in getattr(step, "refs", ()):
                if v < end_value and self.kinds[v] == "static" and id(self.objects[v]) in self.made_here:
                    self.kinds[v] = "fresh"

    def stop(self):
        self.stopped, self.recording = True, False

    @contextlib.contextmanager
    def paused(self):
        was, self.recording = self.recording, False
        try:
            yield
        finally:
            self.recording = was and not self.stopped

    def plan(self):
        return Plan(self)

    # ---- installing the stand-ins --------------------------------------------------------
    def __enter__(self):
        if type(cpu.lib).__name__ in ("_RecordingLib", "_TimedLib"):
            raise RuntimeError("a capture cannot start while the library is swapped (a StepTimer, "
                               "another capture)")
        # every C function, and every buffer made, goes through the trace while it is active
        self._saved = {name: getattr(cpu, name) for name in ("lib", "ffi", "allocate", "zeros")}
        cpu.lib = _RecordingLib(self, self._saved["lib"])
        cpu.ffi = self.be.ffi = _AllocatingFfi(self, ffi)
        cpu.allocate = self.be.allocate = self._made(self._saved["allocate"])
        cpu.zeros = self._zeros_recorded
        cpu.look_up_kernels()
        for name in _public_methods(self.be):
            setattr(self.be, name, self._shadow(name, getattr(self.be, name)))
        self.recording = True
        return self

    def __exit__(self, *exc):
        self.recording = False
        for name in _public_methods(self.be) + ["ffi", "allocate"]:
            self.be.__dict__.pop(name, None)
        for name, saved in self._saved.items():
            setattr(cpu, name, saved)
        cpu.look_up_kernels()
        return False

    def _made(self, allocate):
        def made(*args):
            out = allocate(*args)
            if self.recording:
                self._register(out, "static")
            return out
        return made

    def _shadow(self, name, method):
        restores = name in ("from_flat", "from_bytes")

        def call(*args, **kwargs):
            if self.recording and name in BREAKS:
                graph_break(BREAKS[name])
            out = method(*args, **kwargs)
            if self.recording:
                for b in out if isinstance(out, tuple) else (out,):
                    if self.is_buffer(b):
                        self.made_here.add(id(b))
                        self.kept.append(b)         # alive until the plan: ids stay unique
                if restores:
                    self._restore(out)
            return out
        return call

    def _restore(self, buffer):
        """A launch that puts a Python-made buffer's contents back at each replay."""
        v = self._register(buffer, "static")
        size = ffi.sizeof(buffer)
        self.steps.append(Launch("memmove", ffi.memmove, (buffer, bytes(ffi.buffer(buffer)), size),
                                 [(0, v, 0, None)], None))

    def _zeros_recorded(self, n, dtype):
        out = self._saved["zeros"](n, dtype)
        if self.recording:
            v = self._register(out, "static")
            self.steps.append(Launch("tg_fill", self._saved["lib"].tg_fill, (out, cpu.CODE[dtype], n, 0.0, 0),
                                     [(0, v, 0, None)], None))
        return out


class _RecordingLib:
    """Stands in for the compiled library: each C function runs through ``trace.launch``."""

    def __init__(self, trace, lib):
        self._trace, self._lib = trace, lib

    def __getattr__(self, name):                # called once per name: setattr caches it
        fn, trace = getattr(self._lib, name), self._trace
        if not callable(fn):
            return fn

        def call(*args):
            return trace.launch(name, fn, args)
        setattr(self, name, call)
        return call


class _AllocatingFfi:
    """Stands in for cffi's ffi: ``new`` registers the buffer it makes with the trace."""

    def __init__(self, trace, ffi):
        self._trace, self._ffi = trace, ffi
        self.new = trace._made(ffi.new)

    def __getattr__(self, name):
        return getattr(self._ffi, name)


def _public_methods(be):
    return sorted({name for cls in type(be).__mro__ if cls.__module__.startswith("stage3_native")
                   for name, f in vars(cls).items() if callable(f) and not name.startswith("__")
                   and (not name.startswith("_") or name in BREAKS) and name not in ("capture", "has", "size")})
